// Dependency graph speed: building the graph of a synthetic data-parallel job
// and replaying it (one core); every finding's fix simulated on the whole
// graph; the report's simulation pass. Target: replaying a 10M-kernel trace
// in <= 2 s. Numbers: docs/PERFORMANCE.md ("What-if").
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "analysis/analyze.h"
#include "analysis/graph/changes.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"
#include "analysis/graph/savings.h"
#include "import/synthetic.h"

namespace {

using namespace gpuscope;

// One trace (and graph) at a time: a 10M-kernel trace and its graph take
// gigabytes. `report`: the 2016 report's job (padding, broadcast, all-reduce
// after backward, weight update after it, no prefetch), where every finding
// with a fix has something to change; else the clean job.
struct Cached {
  std::int64_t kernels = -1;
  bool report = false;
  std::unique_ptr<Trace> trace;
  std::unique_ptr<graph::Graph> graph;
};

Cached& cached(std::int64_t kernels, bool report) {
  static Cached c;
  if (c.kernels != kernels || c.report != report) {
    c.graph.reset();
    c.trace.reset();
    SyntheticOptions o = report ? SyntheticOptions::report_pathologies() : SyntheticOptions{};
    o.kernels = static_cast<std::uint64_t>(kernels);
    c.trace = std::make_unique<Trace>(make_synthetic_trace(o));
    c.kernels = kernels;
    c.report = report;
  }
  return c;
}

const Trace& trace_of(std::int64_t kernels, bool report = false) { return *cached(kernels, report).trace; }

const graph::Graph& graph_of(std::int64_t kernels, bool report = false) {
  Cached& c = cached(kernels, report);
  if (!c.graph) c.graph = std::make_unique<graph::Graph>(graph::build_graph(*c.trace));
  return *c.graph;
}

void BM_BuildGraph(benchmark::State& state) {
  const Trace& t = trace_of(state.range(0));
  std::size_t nodes = 0;
  for (auto _ : state) {
    graph::Graph g = graph::build_graph(t);
    nodes = g.size();
    benchmark::DoNotOptimize(g);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["kernels/s"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Replay(benchmark::State& state) {
  const graph::Graph& g = graph_of(state.range(0));
  for (auto _ : state) {
    graph::Timeline tl = graph::replay(g);
    benchmark::DoNotOptimize(tl);
  }
  state.counters["nodes"] = static_cast<double>(g.size());
  state.counters["kernels/s"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// A change, applied to a copy of the graph, then replayed: what one prediction costs.
void BM_PredictRemove(benchmark::State& state) {
  const Trace& t = trace_of(state.range(0));
  const graph::Graph& g = graph_of(state.range(0));
  const std::vector<graph::Change> changes{graph::parse_scale("normalization=0.5")};
  for (auto _ : state) {
    const graph::Graph c = graph::apply_changes(g, t, changes, nullptr);
    graph::Timeline tl = graph::replay(c);
    benchmark::DoNotOptimize(tl);
  }
}

// Every registered finding's fix (the report's "each fix alone"), applied to
// a copy of the whole graph and replayed, one after the other: what
// predicting all of them costs without the report's window of steps.
void BM_EveryFixWholeTrace(benchmark::State& state) {
  const Trace& t = trace_of(state.range(0), true);
  const graph::Graph& g = graph_of(state.range(0), true);
  std::vector<std::vector<graph::Change>> fixes;
  for (const FindingRule& r : finding_rules())
    if (!r.fix.empty()) fixes.push_back(graph::parse_changes(r.fix));
  std::size_t applied = 0;
  for (auto _ : state) {
    applied = 0;
    for (const auto& changes : fixes) {
      try {
        const graph::Graph c = graph::apply_changes(g, t, changes, nullptr);
        graph::Timeline tl = graph::replay(c);
        benchmark::DoNotOptimize(tl);
        ++applied;
      } catch (const graph::ChangeError&) {
        // nothing to change in this job (no straggler, say)
      }
    }
  }
  state.counters["fixes"] = static_cast<double>(applied);
  state.counters["nodes"] = static_cast<double>(g.size());
}

// `gpuscope report`'s simulation pass (after the analysis): the graph of the
// steps in the middle, its replay, each finding's fix and all of them together.
void BM_ReportSimulation(benchmark::State& state) {
  const Trace& t = trace_of(state.range(0), true);
  const JobInput in{&t, "synthetic"};
  const Profile analysed = analyze_job(std::span<const JobInput>(&in, 1));
  std::size_t simulated = 0;
  for (auto _ : state) {
    Profile p = analysed;
    graph::simulate_findings(std::span<const JobInput>(&in, 1), &p);
    simulated = p.simulation.predictions.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["fixes"] = static_cast<double>(simulated);
}

BENCHMARK(BM_BuildGraph)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Replay)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PredictRemove)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_EveryFixWholeTrace)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ReportSimulation)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
