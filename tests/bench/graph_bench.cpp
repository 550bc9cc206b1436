// Dependency graph speed: building the graph of a synthetic data-parallel job
// and replaying it (one core). Target: replaying a 10M-kernel trace in <= 2 s.
// Numbers: docs/PERFORMANCE.md ("What-if").
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "analysis/graph/changes.h"
#include "analysis/graph/graph.h"
#include "analysis/graph/replay.h"
#include "import/synthetic.h"

namespace {

using namespace gpuscope;

const Trace& trace_of(std::int64_t kernels) {
  static std::map<std::int64_t, std::unique_ptr<Trace>> cache;
  auto& slot = cache[kernels];
  if (!slot) {
    SyntheticOptions o;
    o.kernels = static_cast<std::uint64_t>(kernels);
    slot = std::make_unique<Trace>(make_synthetic_trace(o));
  }
  return *slot;
}

const graph::Graph& graph_of(std::int64_t kernels) {
  static std::map<std::int64_t, std::unique_ptr<graph::Graph>> cache;
  auto& slot = cache[kernels];
  if (!slot) slot = std::make_unique<graph::Graph>(graph::build_graph(trace_of(kernels)));
  return *slot;
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

BENCHMARK(BM_BuildGraph)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Replay)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_PredictRemove)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
