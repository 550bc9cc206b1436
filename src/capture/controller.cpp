// [SECTION] Process-wide state
// [SECTION] Recording control (delay, duration, capture ranges)
// [SECTION] Reports and summaries
// [SECTION] Start and stop
// [SECTION] Exit, fork, signals
// [SECTION] Public API (gpuscope/capture.h) and injected mode
// [SECTION] NVTX static injection
#include "capture/controller.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "capture/buffer_pool.h"
#include "capture/collector.h"
#include "capture/cupti_tracer.h"
#include "capture/device_sampling.h"
#include "capture/driver_probe.h"
#include "capture/nvml_source.h"
#include "capture/options.h"
#include "capture/process_report.h"
#include "capture/recording_policy.h"

#ifndef GPUSCOPE_VERSION_STRING
#define GPUSCOPE_VERSION_STRING "0"
#endif

namespace gpuscope::capture {

namespace {

using Clock = std::chrono::steady_clock;

// [SECTION] Process-wide state -------------------------------------------------------------------

struct Controller {
  std::mutex mutex;  // start / stop / status

  // Set up by the first start() and kept for the life of the process: CUPTI
  // may hold pool buffers, and its callbacks may run at any time.
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<Collector> collector;  // the running session's
  // Device sampling (NVML, PM sampling): opened, drained and stopped on the
  // consumer thread only.
  std::unique_ptr<SamplerClock> sampling_clock = system_sampler_clock();
  std::unique_ptr<DeviceSampling> sampling;
  bool sampling_opened = false, sampling_final = false;
  bool active = false;
  bool injected = false;
  bool exit_hooks_installed = false;
  Options options;
  CaptureRange range;
  std::string report_dir;
  std::string warnings;
  Summary last;  // of the last session, after stop()
  std::atomic<pid_t> owner{0};
  std::atomic<bool> inert{false};  // a forked child

  // Recording control. Taken on application threads (capture-range hooks,
  // inside CUPTI callbacks) and on the consumer thread (timers).
  std::mutex record_mutex;
  RecordingPolicy policy;
  Clock::time_point last_flush{};
};

Controller& ctl() {
  static Controller* c = new Controller;  // never destroyed: atexit and signal handlers use it
  return *c;
}

// The collector a fatal-signal handler finishes (injected mode only).
std::atomic<Collector*> g_signal_collector{nullptr};

std::int64_t realtime_ns() {
  // CUPTI's clock on Linux; clock_gettime is async-signal-safe.
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t end_timestamp() {
  const std::int64_t t = cupti::timestamp();
  return t != 0 ? t : realtime_ns();
}

// [SECTION] Recording control (delay, duration, capture ranges) ----------------------------------

// Does what the policy decided. Called with record_mutex held.
void apply_locked(Controller& c, RecordingPolicy::Action action) {
  if (action == RecordingPolicy::Action::end) {
    cupti::disable();
    return;
  }
  if (action != RecordingPolicy::Action::begin) return;
  std::string warnings, error;
  if (!cupti::enable(c.options.trace, &warnings, &error)) {
    // Say it once and record nothing more (no retry at every poll).
    if (!c.warnings.empty()) c.warnings += "; ";
    c.warnings += error;
    c.policy.begin_failed();
    return;
  }
  if (!warnings.empty()) {
    if (!c.warnings.empty()) c.warnings += "; ";
    c.warnings += warnings;
  }
  c.policy.begun(Clock::now());
}

void range_begin() {
  Controller& c = ctl();
  std::lock_guard lock(c.record_mutex);
  apply_locked(c, c.policy.on_range_begin(Clock::now()));
}

void range_end() {
  Controller& c = ctl();
  std::lock_guard lock(c.record_mutex);
  apply_locked(c, c.policy.on_range_end(Clock::now()));
}

// Runs on the consumer thread at every poll.
void tick() {
  Controller& c = ctl();
  const auto now = Clock::now();
  bool flush_now = false;
  {
    std::lock_guard lock(c.record_mutex);
    const RecordingPolicy::Action action = c.policy.on_tick(now);
    apply_locked(c, action);
    flush_now = action == RecordingPolicy::Action::end;  // hand over what the last moments recorded
    if (now - c.last_flush >= std::chrono::milliseconds(c.options.flush_ms)) {
      c.last_flush = now;
      flush_now = flush_now || c.policy.ever_recorded();
    }
  }
  // Complete buffers only: a periodic flush must not cut records short.
  // Never under record_mutex: CUPTI may call back into range hooks.
  if (flush_now) cupti::flush(false);
}

// [SECTION] Reports and summaries ----------------------------------------------------------------

Summary summary_of(const CollectorStats& st, const std::string& path) {
  Summary s;
  s.ok = !st.write_failed;
  s.output = path;
  s.kernels = st.counts.kernels;
  s.memcpys = st.counts.memcpys;
  s.memsets = st.counts.memsets;
  s.api_calls = st.counts.api_calls;
  s.ranges = st.counts.ranges;
  s.syncs = st.counts.syncs;
  s.overheads = st.counts.overheads;
  s.dropped_records = st.dropped_records;
  s.invalid_timestamps = st.counts.invalid_timestamps;
  s.overhead_ns = st.counts.overhead_ns;
  s.bytes_written = st.bytes_written;
  s.pool_peak_bytes = st.pool_peak_bytes;
  if (st.write_failed) s.message = path + ": writing failed (" + st.write_error + "); the file keeps what came before";
  return s;
}

void report(const Controller& c, const std::string& state, const Summary& s) {
  if (c.report_dir.empty()) return;
  ProcessReport r;
  r.pid = static_cast<std::uint32_t>(::getpid());
  r.command = own_command_line();
  r.state = state;
  r.summary = s;
  write_process_report(c.report_dir, r);
}

// "gpuscope:" lines on stderr, for injected processes run without `gpuscope capture`.
void say(const Controller& c, const std::string& line) {
  if (!c.injected || !c.report_dir.empty()) return;
  std::fprintf(stderr, "gpuscope: pid %d: %s\n", static_cast<int>(::getpid()), line.c_str());
}

std::string counts_line(const Summary& s) {
  return std::to_string(s.kernels) + " kernels, " + std::to_string(s.memcpys) + " memcpys, " +
         std::to_string(s.memsets) + " memsets, " + std::to_string(s.api_calls) + " API calls, " +
         std::to_string(s.ranges) + " NVTX ranges, " + std::to_string(s.syncs) + " syncs; " +
         std::to_string(s.dropped_records) + " dropped records";
}

Summary failure(Controller& c, std::string message) {
  Summary s;
  s.ok = false;
  s.message = std::move(message);
  report(c, "failed", s);
  say(c, s.message);
  return s;
}

// [SECTION] Start and stop -----------------------------------------------------------------------

void setup_trace(TraceBuilder& b, const Controller& c) {
  TraceMeta& m = b.meta();
  m.source = TraceSource::cupti;
  m.producer = std::string("gpuscope ") + GPUSCOPE_VERSION_STRING + " capture (" + cupti::version() + ")";
  m.host = host_name();
  m.command_line = own_command_line();
  m.start_time_ns = end_timestamp();
  m.rank = rank_from_environment();
  for (const char* name : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"})
    if (const char* v = std::getenv(name); v && *v) {
      m.world_size = std::atoi(v);
      break;
    }
  m.set_property("capture.mode", c.injected ? "injected" : "in-process");
  m.set_property("capture.trace", trace_list(c.options.trace));
  m.set_property("capture.range", c.options.capture_range.empty() ? "whole run" : c.options.capture_range);
  if (c.options.delay_s > 0) m.set_property("capture.delay_s", std::to_string(c.options.delay_s));
  if (c.options.duration_s > 0) m.set_property("capture.duration_s", std::to_string(c.options.duration_s));
  m.set_property("capture.cupti", cupti::version());
  Process p;
  p.pid = static_cast<std::uint32_t>(::getpid());
  p.name = m.command_line;
  p.rank = m.rank;
  b.add_process(p);
}

// On the consumer thread after each drain. Injected, the library is loaded
// inside cuInit: sampling opens once the first device record shows CUDA is
// up; in-process it opens at once. A capture that ends before then says so.
void add_device_samples(Controller& c, TraceBuilder& b) {
  if (!c.sampling_opened && (!c.injected || !b.devices().empty())) {
    c.sampling_opened = true;
    const DriverProbe probe = probe_cuda_driver();
    c.sampling = open_device_sampling(c.options, static_cast<std::size_t>(probe.device_count), *c.sampling_clock,
                                      kNvmlLibrary, describe(probe));
    c.sampling->start();
  }
  if (c.sampling) {
    c.sampling->drain(b);
  } else if (c.sampling_final) {
    b.meta().set_property(kMetaNvml, "off: no CUDA device was used while capturing");
    b.meta().set_property(kMetaGpuMetrics, "off: no CUDA device was used while capturing");
  }
}

std::string waiting_for(const Controller& c) {
  switch (c.range.kind) {
    case CaptureRange::Kind::cuda_profiler_api: return "cudaProfilerStart()";
    case CaptureRange::Kind::nvtx: return "an NVTX range named '" + c.range.nvtx_name + "'";
    case CaptureRange::Kind::whole_run: break;
  }
  return std::to_string(c.options.delay_s) + " s of delay";
}

void install_exit_hooks(Controller& c);

Summary start_locked(Controller& c, const Options& o) {
  if (c.inert.load() || (c.owner.load() != 0 && c.owner.load() != ::getpid()))
    return failure(c, "this process was forked from a captured one without exec: capture is off in it");
  if (c.active) return failure(c, "a capture is already running (writing " + c.collector->path() + ")");
  if (const std::string problem = validate(o); !problem.empty()) return failure(c, "invalid options: " + problem);
  std::string error;
  c.options = o;
  c.range = *parse_capture_range(o.capture_range, &error);
  c.warnings.clear();
  c.owner.store(::getpid());

  if (!c.pool) {
    const std::size_t buffer_bytes = o.buffer_kb * 1024;
    c.pool = std::make_unique<BufferPool>(buffer_bytes, o.pool_mb * 1024 / o.buffer_kb);
    cupti::set_buffer_pool(c.pool.get());
  }
  for (BufferPool::Completed late; c.pool->pop_completed(&late);) c.pool->recycle(late.data);  // an earlier session's
  // Buffers must be free before the first kind is enabled: CUPTI asks at once.
  c.pool->reserve(CollectorOptions{}.free_buffers_target);

  if (!cupti::subscribe(c.range, cupti::RangeHooks{&range_begin, &range_end}, &error)) {
    // In-process, CUPTI's "unknown error" usually means no driver or no GPU:
    // ask the driver. (Injected, the driver loaded us, so it exists; and we
    // run inside cuInit, where asking it again is not safe.)
    if (!c.injected) {
      const DriverProbe probe = probe_cuda_driver();
      if (probe.result != DriverProbe::Result::devices) error = describe(probe) + " (" + error + ")";
    }
    return failure(c, error + "; nothing was captured");
  }

  const std::string claims = c.report_dir.empty() ? "" : c.report_dir + "/claims";
  const std::string path = claim_output_file(o.output, static_cast<std::uint32_t>(::getpid()), claims, &error);
  if (path.empty()) {
    cupti::unsubscribe();
    return failure(c, error + "; nothing was captured");
  }
  auto sink = open_gscope_sink(path, &error);
  if (!sink) {
    cupti::unsubscribe();
    std::remove(path.c_str());
    return failure(c, error + "; nothing was captured");
  }

  CollectorOptions co;
  co.flush_interval = std::chrono::milliseconds(o.flush_ms);
  co.decoder.pid = static_cast<std::uint32_t>(::getpid());
  co.decoder.thread_names_from_proc = true;
  c.collector = std::make_unique<Collector>(
      *c.pool, std::move(sink), [&c](TraceBuilder& b) { setup_trace(b, c); }, co);
  c.collector->set_tick(&tick);
  c.sampling.reset();
  c.sampling_opened = c.sampling_final = false;
  c.collector->set_before_finish([&c] {
    cupti::flush(true);
    c.sampling_final = true;
    if (c.sampling) c.sampling->stop();  // the final drain takes what they read
  });
  c.collector->set_add_rows([&c](TraceBuilder& b) { add_device_samples(c, b); });
  c.collector->set_on_chunk([&c, path](const CollectorStats& st) { report(c, "recording", summary_of(st, path)); });
  {
    std::lock_guard lock(c.record_mutex);
    const auto now = Clock::now();
    c.policy = RecordingPolicy(c.range.kind, o.delay_s, o.duration_s, now);
    c.last_flush = now;
    // Begin now, not at the first poll: CUDA work may start right away.
    apply_locked(c, c.policy.on_tick(now));
    if (c.range.kind == CaptureRange::Kind::whole_run && o.delay_s == 0) {
      if (!c.policy.recording()) {
        const std::string why = c.warnings;
        cupti::unsubscribe();
        c.collector.reset();
        std::remove(path.c_str());
        return failure(c, why + "; nothing was captured");
      }
    }
  }
  c.collector->start();
  c.active = true;
  install_exit_hooks(c);
  if (c.injected) g_signal_collector.store(c.collector.get());

  Summary s;
  s.ok = true;
  s.output = path;
  const bool waiting = !c.policy.recording();
  s.message = waiting ? "waiting for " + waiting_for(c) + ", then recording to " + path : "recording to " + path;
  if (!c.warnings.empty()) s.message += " (" + c.warnings + ")";
  report(c, waiting ? "waiting" : "recording", s);
  return s;
}

// at_exit: bounded waits, no CUPTI teardown (the process is going away).
Summary stop_locked(Controller& c, bool at_exit) {
  if (!c.active) {
    Summary s = c.last;
    s.ok = false;
    s.message = "no capture is running";
    return s;
  }
  {
    std::lock_guard lock(c.record_mutex);
    apply_locked(c, c.policy.stop());
  }
  Collector& col = *c.collector;
  col.request_finish(end_timestamp());
  const bool done = col.wait_finished(at_exit ? std::chrono::milliseconds(10'000) : std::chrono::hours(1));
  g_signal_collector.store(nullptr);
  const CollectorStats st = col.stats();
  Summary s = summary_of(st, col.path());
  if (!done) {
    s.message = col.path() + ": gave up waiting for the last records at exit; the file keeps what was written";
  } else if (s.ok) {
    s.message = "wrote " + col.path() + ": " + counts_line(s);
    if (!c.policy.ever_recorded()) s.message += " (recording never began: no " + waiting_for(c) + ")";
    if (!c.warnings.empty()) s.message += " (" + c.warnings + ")";
  }
  if (!at_exit) {
    cupti::unsubscribe();
    c.collector.reset();  // joined; the C callbacks never touch it
    c.sampling.reset();
    c.pool->trim();
  } else {
    (void)c.collector.release();  // another thread may still run in it; the process is ending anyway
  }
  c.active = false;
  c.last = s;
  report(c, "finished", s);
  say(c, s.message);
  return s;
}

// [SECTION] Exit, fork, signals ------------------------------------------------------------------

void at_exit_handler() {
  Controller& c = ctl();
  if (c.inert.load() || c.owner.load() != ::getpid()) return;  // a forked child: not ours to finish
  try {
    std::lock_guard lock(c.mutex);
    stop_locked(c, /*at_exit=*/true);
  } catch (...) {
  }
}

void on_fork_child() {
  Controller& c = ctl();
  c.inert.store(true);
  cupti::make_inert();
  g_signal_collector.store(nullptr);
}

constexpr int kFinishSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT};
struct sigaction g_previous[NSIG];

void on_fatal_signal(int sig) {
  // Async-signal-safe only: atomics, clock_gettime, nanosleep, sigaction, raise.
  Controller& c = ctl();
  Collector* col = g_signal_collector.exchange(nullptr);
  if (col && !c.inert.load() && c.owner.load() == ::getpid()) {
    col->request_finish(realtime_ns());
    // The consumer thread flushes CUPTI, writes the last chunk and the
    // footer. Wait for it, but never forever: a program that dies must die.
    for (int i = 0; i < 600 && !col->finished(); ++i) {
      timespec five_ms{0, 5'000'000};
      nanosleep(&five_ms, nullptr);
    }
  }
  sigaction(sig, &g_previous[sig], nullptr);
  raise(sig);
}

void install_signal_handlers() {
  for (int sig : kFinishSignals) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;
    // Only where the program kept the default (it dies anyway); a program
    // that handles the signal itself (Python's SIGINT) keeps its handler.
    if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL) continue;
    struct sigaction ours {};
    ours.sa_handler = &on_fatal_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    g_previous[sig] = current;
    sigaction(sig, &ours, nullptr);
  }
}

void install_exit_hooks(Controller& c) {
  if (c.exit_hooks_installed) return;
  c.exit_hooks_installed = true;
  std::atexit(&at_exit_handler);
  pthread_atfork(nullptr, nullptr, &on_fork_child);
  if (c.injected) install_signal_handlers();
}

// What start() and stop() answer when they fail: not ok, and why.
Summary failure(std::string message) {
  Summary s;
  s.message = std::move(message);
  return s;
}

// f(c) with the controller's lock held; if anything throws, on_error(what
// the exception says, or null when it is no std::exception) instead.
template <class F, class OnError>
auto locked(F&& f, OnError&& on_error) noexcept -> decltype(f(std::declval<Controller&>())) {
  try {
    Controller& c = ctl();
    std::lock_guard lock(c.mutex);
    return f(c);
  } catch (const std::exception& e) {
    return on_error(e.what());
  } catch (...) {
    return on_error(nullptr);
  }
}

}  // namespace

// [SECTION] Public API (gpuscope/capture.h) and injected mode ------------------------------------

Summary start(const Options& options) noexcept {
  return locked([&](Controller& c) { return start_locked(c, options); },
                [](const char* why) {
                  return failure(why ? std::string("capture could not start: ") + why : "capture could not start");
                });
}

Summary stop() noexcept {
  return locked([](Controller& c) { return stop_locked(c, /*at_exit=*/false); },
                [](const char*) { return failure("capture could not stop cleanly"); });
}

Summary status() noexcept {
  return locked(
      [](Controller& c) {
        if (!c.active) return c.last;
        Summary s = summary_of(c.collector->stats(), c.collector->path());
        bool recording = false;
        {
          std::lock_guard record_lock(c.record_mutex);
          recording = c.policy.recording();
        }
        s.message = (recording ? "recording to " : "waiting, writing to ") + c.collector->path();
        return s;
      },
      [](const char*) { return Summary{}; });
}

bool running() noexcept {
  return locked([](Controller& c) { return c.active; }, [](const char*) { return false; });
}

void start_injected() noexcept {
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return;  // CUDA may call InitializeInjection more than once
  locked(
      [](Controller& c) {
        c.injected = true;
        if (const char* dir = std::getenv(kEnvReportDir); dir && *dir) c.report_dir = dir;
        std::string warnings;
        const Options o = from_environment(&warnings);
        Summary s = start_locked(c, o);
        if (!warnings.empty()) {
          say(c, warnings);
          if (!c.warnings.empty()) c.warnings += "; ";
          c.warnings += warnings;
        }
        if (s.ok) say(c, s.message);
      },
      [](const char*) {});  // never let anything escape into cuInit
}

}  // namespace gpuscope::capture

// [SECTION] NVTX static injection ----------------------------------------------------------------
// NVTX (nvtxInit.h, load sequence v2) calls the function this pointer holds
// when a program that links gpuscope_capture makes its first NVTX call and no
// NVTX_INJECTION64_PATH is set: NVTX then reports to CUPTI, so in-process
// captures see NVTX ranges without any environment variable.

extern "C" {
int cuptiNvtxInitialize2(const void* get_export_table);  // exported by libcupti; not in its headers

static int gpuscope_nvtx_initialize(const void* get_export_table) { return cuptiNvtxInitialize2(get_export_table); }

__attribute__((visibility("default"))) int (*InitializeInjectionNvtx2_fnptr)(const void*) = &gpuscope_nvtx_initialize;
}
