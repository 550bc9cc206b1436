// gpuscope capture [-o OUT] [--trace LIST] [--capture-range R] [--delay S] [--duration S]
//                  [--gpu-metrics LIST] [--gpu-metrics-hz N] [--framework LIST] [--host-sampling HZ]
//                  -- CMD ARGS…
// gpuscope capture --check-setup
//
// Runs CMD with libgpuscope_inject.so injected (CUDA_INJECTION64_PATH, and
// NVTX_INJECTION64_PATH for NVTX) and the Python startup hook on its
// PYTHONPATH, passes on the signals gpuscope receives, returns CMD's exit
// status (128 + N if a signal killed it, 127 if it could not be run), adds
// each Python process's host side to its trace, and prints on stderr what
// each process captured, read from the reports the injected library and the
// hook leave in a private temporary directory. The injection library is found
// relative to the executable and loaded once before the program runs, so a
// missing CUPTI is an error, not an empty run (capture/inject_library.h);
// --check-setup prints what was found.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"

#if GPUSCOPE_HAVE_CAPTURE
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "capture/driver_probe.h"
#include "capture/host_merge.h"
#include "capture/inject_library.h"
#include "capture/launcher.h"
#include "capture/metric_list.h"
#include "capture/options.h"
#include "capture/process_report.h"
#include "capture/python_hook.h"
#include "words/format.h"
#endif

namespace gpuscope::cli {
namespace {

struct CaptureArgs {
  std::string output = "gpuscope-%p.gscope";
  std::string trace = "kernel,memcpy,api,nvtx,sync";
  std::string range;
  double delay_s = 0, duration_s = 0;
  std::size_t buffer_kb = 4096, pool_mb = 256;
  std::string gpu_metrics = "default";
  unsigned gpu_metrics_hz = 10000;
  std::string framework = "ops,shapes,modules";  // capture::kDefaultFramework
  std::string host_sampling = "1000";
  std::vector<std::string> command;
  bool check_setup = false;
};

// The rates PM sampling may run at (capture/options.h checks them again).
constexpr unsigned kMinGpuMetricsHz = 10, kMaxGpuMetricsHz = 200000;

#if GPUSCOPE_HAVE_CAPTURE

static_assert(kMinGpuMetricsHz == capture::kMinGpuMetricsHz && kMaxGpuMetricsHz == capture::kMaxGpuMetricsHz);
static_assert(capture::kDefaultFramework == "ops,shapes,modules");

namespace fs = std::filesystem;

// The injection library, loaded once here as CUDA will load it in the
// program, so that a missing CUPTI is said before the program runs.
std::string usable_inject_library() {
  const capture::InjectLibrary lib = capture::find_inject_library();
  if (lib.path.empty()) throw Error("capture: " + lib.error);
  const capture::InjectLoad load = capture::load_inject_library(lib.path);
  if (!load.ok) throw Error("capture: " + capture::describe_load_failure(lib.path, load));
  return lib.path;
}

// `gpuscope capture --check-setup`: what a capture would use here, one line each.
int check_setup() {
  const capture::InjectLibrary lib = capture::find_inject_library();
  std::printf("injection library  %s\n",
              lib.path.empty() ? ("not found: " + lib.error).c_str() : (lib.path + " (" + lib.where + ")").c_str());
  capture::InjectLoad load;
  if (!lib.path.empty()) {
    load = capture::load_inject_library(lib.path);
    std::printf("CUPTI              %s\n",
                load.ok ? (load.cupti.empty() ? "loaded" : load.cupti.c_str()) : ("not loaded: " + load.error).c_str());
  }
  const capture::DriverProbe probe = capture::probe_cuda_driver();
  std::printf("CUDA driver        %s\n", capture::describe(probe).c_str());
  std::fflush(stdout);
  if (lib.path.empty()) throw Error("capture: " + lib.error);
  if (!load.ok) throw Error("capture: " + capture::describe_load_failure(lib.path, load));
  if (probe.result != capture::DriverProbe::Result::devices) throw Error("capture: " + capture::describe(probe));
  return 0;
}

// A private directory the injected processes report into.
class ReportDir {
 public:
  ReportDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuscope-capture-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw Error("capture: cannot create a temporary directory in " + pattern);
    path_ = pattern;
  }
  ~ReportDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ReportDir(const ReportDir&) = delete;
  ReportDir& operator=(const ReportDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void print_report(const capture::ProcessReport& r) {
  const capture::Summary& s = r.summary;
  std::string who = "pid " + std::to_string(r.pid);
  if (!r.command.empty()) who += " (" + (r.command.size() > 60 ? r.command.substr(0, 57) + "..." : r.command) + ")";
  if (r.state == "failed") {
    std::fprintf(stderr, "gpuscope:   %s: nothing captured: %s\n", who.c_str(), s.message.c_str());
    return;
  }
  std::error_code ec;
  const auto size = fs::file_size(s.output, ec);
  std::fprintf(stderr, "gpuscope:   %s -> %s (%s)%s\n", who.c_str(), s.output.c_str(),
               ec ? "missing" : format::bytes(size).c_str(),
               r.state == "finished" ? "" : "  [process ended before finishing: the file holds what was flushed]");
  std::fprintf(stderr, "gpuscope:     kernels %s, memcpys %s, memsets %s, API calls %s, NVTX ranges %s, syncs %s\n",
               format::count(s.kernels).c_str(), format::count(s.memcpys).c_str(), format::count(s.memsets).c_str(),
               format::count(s.api_calls).c_str(), format::count(s.ranges).c_str(), format::count(s.syncs).c_str());
  std::fprintf(stderr,
               "gpuscope:     dropped records %s, invalid timestamps %s, profiler overhead %.3f ms, "
               "buffer memory peak %s\n",
               format::count(s.dropped_records).c_str(), format::count(s.invalid_timestamps).c_str(),
               static_cast<double>(s.overhead_ns) / 1e6, format::bytes(s.pool_peak_bytes).c_str());
  if (r.state == "waiting" || (r.state == "finished" && s.message.find("never began") != std::string::npos))
    std::fprintf(stderr, "gpuscope:     %s\n", s.message.c_str());
  if (!s.ok && !s.message.empty() && r.state != "waiting")
    std::fprintf(stderr, "gpuscope:     %s\n", s.message.c_str());
}

void print_host_merge(const capture::HostMerge& m) {
  std::string who = "pid " + std::to_string(m.owner);
  if (m.pids.size() > 1) {
    who += " (+ forked";
    for (std::size_t i = 0; i < m.pids.size(); ++i)
      if (m.pids[i] != m.owner) who += " " + std::to_string(m.pids[i]);
    who += ")";
  }
  if (!m.error.empty()) {
    std::fprintf(stderr, "gpuscope:   %s: host side not saved: %s\n", who.c_str(), m.error.c_str());
    return;
  }
  std::error_code ec;
  const auto size = fs::file_size(m.output, ec);
  std::fprintf(stderr, "gpuscope:   %s -> %s (%s)%s\n", who.c_str(), m.output.c_str(),
               ec ? "missing" : format::bytes(size).c_str(), m.host_only ? "  [host side only]" : "");
  std::fprintf(stderr, "gpuscope:     framework ops %s, module calls %s, Python frames %s, host samples %s\n",
               format::count(m.ops).c_str(), format::count(m.module_calls).c_str(),
               format::count(m.python_frames).c_str(), format::count(m.samples).c_str());
  if (m.framework.empty())
    std::fprintf(stderr, "gpuscope:     framework view: none (the program did not import torch)\n");
  else if (m.framework.starts_with("unavailable: ") || m.framework.starts_with("stopped: "))
    std::fprintf(stderr, "gpuscope:     framework view %s\n", m.framework.c_str());
  else
    std::fprintf(stderr, "gpuscope:     framework view: %s\n", m.framework.c_str());
  std::fprintf(stderr, "gpuscope:     steps: %s\n", m.steps.c_str());
  for (const std::string& p : m.problems) std::fprintf(stderr, "gpuscope:     skipped: %s\n", p.c_str());
}

// Whether the program is a Python interpreter (python, python3.11, torchrun):
// then the hook not running is worth saying.
bool looks_like_python(const std::string& program) {
  const std::string name = fs::path(program).filename().string();
  return name.starts_with("python") || name == "torchrun";
}

struct HostArgs {
  std::string framework;
  double sampling_hz = 0;
  std::string hook_dir;  // empty: the host side is not captured
};

HostArgs host_args(const CaptureArgs& a) {
  HostArgs h;
  std::string error;
  const auto framework = capture::parse_framework_list(a.framework, &error);
  if (!framework) throw Error("capture: --framework: " + error);
  const auto hz = capture::parse_host_sampling(a.host_sampling, &error);
  if (!hz) throw Error("capture: --host-sampling: " + error);
  h.framework = *framework;
  h.sampling_hz = *hz;
  if (h.framework.empty() && h.sampling_hz == 0) return h;
  h.hook_dir = capture::find_python_hook_dir();
  if (h.hook_dir.empty())
    std::fprintf(stderr,
                 "gpuscope: note: the Python startup hook (share/gpuscope/pyhook) was not found next to gpuscope "
                 "nor in %s; no framework ops or host samples\n",
                 std::getenv(capture::kEnvPythonHook) ? capture::kEnvPythonHook : "the build tree");
  return h;
}

int run_capture(const CaptureArgs& a) {
  capture::Options o;
  o.output = a.output;
  std::string error;
  const auto trace = capture::parse_trace_list(a.trace, &error);
  if (!trace) throw Error("capture: --trace: " + error);
  o.trace = *trace;
  o.capture_range = a.range;
  o.delay_s = a.delay_s;
  o.duration_s = a.duration_s;
  o.buffer_kb = a.buffer_kb;
  o.pool_mb = a.pool_mb;
  if (!capture::parse_metric_list(a.gpu_metrics, &error)) throw Error("capture: --gpu-metrics: " + error);
  o.gpu_metrics = a.gpu_metrics;
  o.gpu_metrics_hz = a.gpu_metrics_hz;
  if (const std::string problem = capture::validate(o); !problem.empty()) throw Error("capture: " + problem);
  const HostArgs host = host_args(a);
  if (a.command.empty()) throw Error("capture: no command given (gpuscope capture [options] -- CMD ARGS...)");
  // The program may change directory: a relative output is relative to here.
  if (o.output.front() != '/') o.output = (fs::current_path() / o.output).string();
  const std::string inject = usable_inject_library();

  ReportDir reports;
  auto env = capture::to_environment(o);
  env[capture::kEnvReportDir] = reports.path();
  if (const char* prev = std::getenv("CUDA_INJECTION64_PATH"); prev && *prev && inject != prev)
    std::fprintf(stderr, "gpuscope: note: replacing CUDA_INJECTION64_PATH=%s for this run\n", prev);
  env["CUDA_INJECTION64_PATH"] = inject;
  const auto range = capture::parse_capture_range(o.capture_range, &error);
  if ((o.trace & capture::kNvtx) || (range && range->kind == capture::CaptureRange::Kind::nvtx))
    env["NVTX_INJECTION64_PATH"] = inject;
  if (!host.hook_dir.empty())
    env.merge(capture::python_hook_environment(host.hook_dir, reports.path(), host.framework, host.sampling_hz,
                                               (o.trace & capture::kNvtx) != 0));

  const capture::LaunchResult run = capture::run_program(a.command, env);
  if (!run.started) {
    std::fprintf(stderr, "gpuscope: error: %s: %s\n", a.command[0].c_str(), run.error.c_str());
    return run.shell_status();
  }
  if (run.signaled)
    std::fprintf(stderr, "gpuscope: %s was killed by signal %d (%s)\n", a.command[0].c_str(), run.exit_code,
                 strsignal(run.exit_code));
  else
    std::fprintf(stderr, "gpuscope: %s exited with status %d\n", a.command[0].c_str(), run.exit_code);

  const auto all = capture::read_process_reports(reports.path());
  // The host side joins the CUDA files before they are described.
  const auto hosts = capture::merge_host_files(reports.path(), all, o.output);
  const char* host_kept = hosts.empty() ? "nothing was captured" : "the host side was captured";
  if (all.empty()) {
    // No process initialized CUDA with our library loaded. Say why if we can.
    const capture::DriverProbe probe = capture::probe_cuda_driver();
    if (probe.result != capture::DriverProbe::Result::devices)
      std::fprintf(stderr, "gpuscope: %s; %s\n", capture::describe(probe).c_str(),
                   hosts.empty() ? "nothing was captured" : "no GPU work was captured; the host side was");
    else
      std::fprintf(stderr, "gpuscope: no process of %s initialized CUDA; %s\n", a.command[0].c_str(), host_kept);
  } else {
    std::fprintf(stderr, "gpuscope: %zu CUDA process%s:\n", all.size(), all.size() == 1 ? "" : "es");
    std::uint64_t events = 0;
    for (const auto& r : all) {
      print_report(r);
      const capture::Summary& s = r.summary;
      events += s.kernels + s.memcpys + s.memsets + s.api_calls + s.ranges + s.syncs;
    }
    if (events == 0) {
      // CUDA initialized but nothing ran on a GPU: say why when the driver knows
      // (CUDA_VISIBLE_DEVICES="" and the like).
      const capture::DriverProbe probe = capture::probe_cuda_driver();
      if (probe.result != capture::DriverProbe::Result::devices)
        std::fprintf(stderr, "gpuscope: %s; no GPU work was captured\n", capture::describe(probe).c_str());
    }
  }
  if (!hosts.empty()) {
    std::fprintf(stderr, "gpuscope: host side of %zu Python process%s:\n", hosts.size(), hosts.size() == 1 ? "" : "es");
    for (const auto& m : hosts) print_host_merge(m);
  } else if (!host.hook_dir.empty() && looks_like_python(a.command[0])) {
    std::fprintf(stderr,
                 "gpuscope: no Python process ran the startup hook (not Python, or python -I/-E); no framework ops "
                 "or host samples\n");
  }
  return run.shell_status();
}

#endif  // GPUSCOPE_HAVE_CAPTURE

void add_capture(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<CaptureArgs>();
  CLI::App* cmd = app.add_subcommand(
      "capture", "Run a CUDA program and record what its GPUs do (CUPTI) into one .gscope file per process");
  cmd->add_option("-o,--output", args->output,
                  "Output file; %p pid, %h host, %r rank (OMPI_COMM_WORLD_RANK/RANK/SLURM_PROCID), "
                  "%n first unused number, %% a percent sign (a file: standard output is the program's)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& s) {
            return s.empty() || s == "-" ? std::string(
                                               "capture writes a file per process while the program runs: "
                                               "name a file (standard output is the program's)")
                                         : std::string();
          },
          "FILE"));
  cmd->add_option("--trace", args->trace, "What to record, comma-separated: kernel,memcpy,api,nvtx,sync")
      ->capture_default_str();
  cmd->add_option("--capture-range", args->range,
                  "Record only between cudaProfilerStart/Stop (cuda-profiler-api) or inside NVTX ranges named NAME "
                  "(nvtx:NAME)");
  cmd->add_option("--delay", args->delay_s, "Seconds after CUDA starts before recording begins")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--duration", args->duration_s, "Seconds of recording, then stop (0: until the program ends)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--buffer-kb", args->buffer_kb, "Size of one CUPTI activity buffer in KiB")->capture_default_str();
  cmd->add_option("--pool-mb", args->pool_mb, "Most memory all activity buffers may use, in MiB (per process)")
      ->capture_default_str();
  cmd->add_option("--gpu-metrics", args->gpu_metrics,
                  "Hardware counters sampled on each GPU (CUPTI PM sampling): default (SM active, occupancy, issue, "
                  "tensor pipe, DRAM, PCIe, NVLink), none, or metric names and 'default', comma-separated")
      ->capture_default_str();
  cmd->add_option("--gpu-metrics-hz", args->gpu_metrics_hz, "Hardware counter samples per second and GPU")
      ->check(CLI::Range(kMinGpuMetricsHz, kMaxGpuMetricsHz))
      ->capture_default_str();
  cmd->add_flag("--check-setup", args->check_setup,
                "Print what a capture would use here (the injection library, CUPTI, the CUDA driver) and exit: 0 "
                "when capture can run, 2 when not, saying why");
  cmd->add_option("--framework", args->framework,
                  "What a Python program's PyTorch records, comma-separated: ops (with shapes: their input shapes, "
                  "stacks: the Python frames around them), modules (nn.Module calls by path), or none")
      ->capture_default_str();
  cmd->add_option("--host-sampling", args->host_sampling,
                  "Samples per second of every Python thread's stack (1 to 10000), or off")
      ->capture_default_str();
  cmd->add_option("command", args->command, "The program to run and its arguments (after --)");
  cmd->positionals_at_end();  // everything from the program name on belongs to the program
  add_examples(
      *cmd,
      {"gpuscope capture -o run.gscope -- python train.py --epochs 1",
       "gpuscope capture --capture-range nvtx:train -o run-%p.gscope -- ./train",
       "mpirun -n 4 gpuscope capture -o rank-%r.gscope -- python train.py"},
      "Returns the program's exit status (128+N if signal N killed it, 127 if it could not be run) and prints\n"
      "what each process captured on stderr. Signals sent to gpuscope are passed on to the program.\n"
      "Child processes that use CUDA each write their own file; a Python process's framework ops and host\n"
      "samples join its file (without CUDA: a file of their own). See docs/capture.md.");
  cmd->callback([args, &ctx] {
#if GPUSCOPE_HAVE_CAPTURE
    ctx.exit_code = args->check_setup ? check_setup() : run_capture(*args);
#else
    (void)ctx;
    throw Error(
        "capture: this gpuscope was built without CUDA support (configure on a machine with the CUDA toolkit, "
        "-DGPUSCOPE_CUDA=ON)");
#endif
  });
}

const CommandRegistration registration(10, &add_capture);  // first: where traces come from

}  // namespace
}  // namespace gpuscope::cli
