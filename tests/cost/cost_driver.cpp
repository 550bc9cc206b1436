// gpuscope_cost: the cost guard's workloads (DEVELOPERS.md, "The cost guard").
//
//   gpuscope_cost WORKLOAD           build the workload's input, then run its measured part once
//   gpuscope_cost --list             the workloads, one name a line
//   gpuscope_cost --build            the build the figures belong to (compiler, build type, flags)
//   gpuscope_cost --write-kineto FILE MB   a Kineto-like JSON file of about MB MiB (tests/support/kineto_like.h)
//
// Each workload first builds its input (a synthetic trace, a file in a
// temporary folder) and then runs the part it measures exactly once, between
// callgrind's start and stop of instrumentation: under
// `valgrind --tool=callgrind --instr-atstart=no` the instructions counted are
// that part's alone, the threads it starts included. It prints the most heap
// bytes live at once during that part (heap_count.h) as
// `peak_heap_bytes N`. Inputs are fixed (sizes and seeds below) and the work
// does not depend on how threads interleave: the importer parses on one
// thread, the simulation runs one trace at a time, and the threads of the
// importer's reading and the viewer's index run one after another
// (serial_threads.h). Two runs count the same.
#include <unistd.h>
#include <valgrind/callgrind.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/graph/savings.h"
#include "cost/heap_count.h"
#include "cost/serial_threads.h"
#include "export/chrome_trace.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "import/chrome_json.h"
#include "import/chrome_json_stream.h"
#include "import/synthetic.h"
#include "import/synthetic_job.h"
#include "store/gscope.h"
#include "support/kineto_like.h"
#ifdef GPUSCOPE_COST_VIEWER
#include "viewer/timeline_index.h"
#endif

namespace gpuscope::cost {
namespace {

namespace fs = std::filesystem;

// The measured part of a workload.
using Measured = std::function<void()>;

// A temporary folder for a workload's files, removed at exit.
class Scratch {
 public:
  Scratch() {
    std::string templ = (fs::temp_directory_path() / "gpuscope-cost.XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error("cannot create a folder under " + templ);
    dir_ = templ;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string path(std::string_view name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// Keeps a result alive in the compiler's eyes.
void keep(std::size_t value) { asm volatile("" : : "r"(value) : "memory"); }

// [SECTION] Inputs ---------------------------------------------------------------------------------

// The single-trace input: 200k kernels on 4 GPUs with framework ops (op table,
// FLOPs) and hardware series (PM sampling and NVML), so that every pass has
// work.
SyntheticOptions synthetic_input() {
  SyntheticOptions o;
  o.kernels = 200'000;
  o.framework_ops = true;
  o.hardware_metrics = true;
  o.tensor_cores = true;
  return o;
}

// [SECTION] Workloads ------------------------------------------------------------------------------

// Import of a 12 MiB Kineto-like JSON file on one parsing thread. The
// stream's reading thread runs first, whole (serial_threads.h): 12 MiB are
// three or four batches, and its pool holds six: it never waits for the parser.
// The splitter's portable path, whatever the CPU: the count must not depend
// on whether the machine that checks it has AVX2.
Measured import_json(const Scratch& dir) {
  const std::string path = dir.path("trace.json");
  testing::write_kineto_like(path, std::uint64_t{12} << 20);
  return [path] {
    ChromeImportOptions o;
    o.parse_threads = 1;
    set_serial_threads(true);
    detail::allow_splitter_avx2(false);
    keep(import_chrome_json(path, o).kernels().size());
    detail::allow_splitter_avx2(true);
    set_serial_threads(false);
  };
}

// Read of a .gscope file of the single-trace input.
Measured read_gscope_file(const Scratch& dir) {
  const std::string path = dir.path("trace.gscope");
  write_gscope(make_synthetic_trace(synthetic_input()), path);
  return [path] { keep(read_gscope(path).kernels().size()); };
}

// analyze() of the single-trace input.
Measured analyze_trace(const Scratch&) {
  auto t = std::make_shared<const Trace>(make_synthetic_trace(synthetic_input()));
  return [t] { keep(analyze(*t).findings.size()); };
}

// The report's simulation pass (graph, replay, every finding's fix) after
// analyze_job(), on the report preset's job: every fix has work.
Measured simulate(const Scratch&) {
  SyntheticOptions o = SyntheticOptions::report_pathologies();
  o.kernels = 200'000;
  auto t = std::make_shared<const Trace>(make_synthetic_trace(o));
  auto p = std::make_shared<const Profile>(analyze(*t));
  return [t, p] {
    const JobInput in{t.get(), "synthetic"};
    Profile q = *p;
    graph::simulate_findings(std::span<const JobInput>(&in, 1), &q);
    keep(q.simulation.predictions.size());
  };
}

// A job of 64 ranks of 5,000 kernels (one slow): the report's analysis and
// simulation of all of them, as `gpuscope report DIR` runs them.
Measured job_64_ranks(const Scratch&) {
  SyntheticJobOptions o;
  o.ranks = 64;
  o.kernels = 5'000;
  o.slow_rank = 21;
  const SyntheticJob job(o);
  auto traces = std::make_shared<std::vector<Trace>>();
  for (std::uint32_t r = 0; r < o.ranks; ++r) traces->push_back(job.rank_trace(r));
  return [traces] {
    std::vector<JobInput> inputs;
    for (const Trace& t : *traces) inputs.push_back({&t, "rank-" + std::to_string(inputs.size()) + ".gscope"});
    keep(graph::analyze_and_simulate(inputs, {}).findings.size());
  };
}

// The text and JSON reports of the single-trace input's Profile.
Measured report_output(const Scratch&) {
  const Trace t = make_synthetic_trace(synthetic_input());
  auto p = std::make_shared<const Profile>(analyze(t));
  return [p] {
    std::size_t bytes = report_text(*p).size();
    for (const std::string& part : report_json_parts(*p)) bytes += part.size();
    keep(bytes);
  };
}

// The Chrome trace export of a quarter of the single-trace input (50k
// kernels and what goes with them: ops, API calls, counter samples; flows
// included), into a sink that only counts the bytes: the JSON writer's
// strings and numbers at the rate of a large export.
Measured chrome_export(const Scratch&) {
  SyntheticOptions o = synthetic_input();
  o.kernels = 50'000;
  auto t = std::make_shared<const Trace>(make_synthetic_trace(o));
  return [t] {
    std::size_t bytes = 0;
    write_chrome_trace(*t, [&bytes](std::string_view part) { bytes += part.size(); });
    keep(bytes);
  };
}

#ifdef GPUSCOPE_COST_VIEWER
// The viewer's timeline index of the single-trace input (what it builds
// before the first frame), its threads one after another.
Measured viewer_index(const Scratch&) {
  auto t = std::make_shared<const Trace>(make_synthetic_trace(synthetic_input()));
  return [t] {
    set_serial_threads(true);
    keep(viewer::TimelineIndex::build(*t).memory_bytes());
    set_serial_threads(false);
  };
}
#endif

struct Workload {
  std::string_view name;
  Measured (*setup)(const Scratch&);  // nullptr: not in this build
};

const Workload kWorkloads[] = {
    {"import_json", import_json},       // src/import/
    {"read_gscope", read_gscope_file},  // src/store/
    {"analyze", analyze_trace},         // src/analysis/
    {"simulate", simulate},             // src/analysis/graph/
    {"job_64_ranks", job_64_ranks},     // src/analysis/ (job) and graph/
    {"report_output", report_output},   // src/export/
    {"chrome_export", chrome_export},   // src/export/
#ifdef GPUSCOPE_COST_VIEWER
    {"viewer_index", viewer_index},  // viewer/
#else
    {"viewer_index", nullptr},
#endif
};

// [SECTION] Main -----------------------------------------------------------------------------------

// Exit status of a workload this build lacks: ctest shows the test as skipped.
constexpr int kNotBuilt = 77;

int run_workload(std::string_view name) {
  for (const Workload& w : kWorkloads) {
    if (w.name != name) continue;
    if (!w.setup) {
      std::fprintf(stderr, "gpuscope_cost: %s: not in this build (the viewer is not built)\n", name.data());
      return kNotBuilt;
    }
    const Scratch dir;
    const Measured measured = w.setup(dir);
    start_heap_stretch();
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
    measured();
    CALLGRIND_STOP_INSTRUMENTATION;
    std::printf("peak_heap_bytes %lld\n", static_cast<long long>(heap_stretch_peak()));
    return 0;
  }
  std::fprintf(stderr, "gpuscope_cost: unknown workload '%s' (--list lists them)\n", name.data());
  return 2;
}

}  // namespace
}  // namespace gpuscope::cost

int main(int argc, char** argv) {
  using namespace gpuscope::cost;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  try {
    if (args.size() == 1 && args[0] == "--list") {
      for (const Workload& w : kWorkloads) std::printf("%s\n", w.name.data());
      return 0;
    }
    if (args.size() == 1 && args[0] == "--build") {
      std::printf("%s\n", GPUSCOPE_COST_BUILD);
      return 0;
    }
    if (args.size() == 3 && args[0] == "--write-kineto") {
      const std::uint64_t mb = std::strtoull(argv[3], nullptr, 10);
      const std::uint64_t bytes = gpuscope::testing::write_kineto_like(argv[2], mb << 20);
      std::printf("%s: %llu bytes\n", argv[2], static_cast<unsigned long long>(bytes));
      return 0;
    }
    if (args.size() == 1 && !args[0].starts_with("-")) return run_workload(args[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuscope_cost: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: gpuscope_cost WORKLOAD | --list | --build | --write-kineto FILE MB\n"
               "  (instructions: valgrind --tool=callgrind --instr-atstart=no gpuscope_cost WORKLOAD)\n");
  return 2;
}
