// Speed of make_synthetic_trace: kernels generated per second, freeze included.
//   build/bench/bench_synth --benchmark_filter=Synth/10000000
#include <benchmark/benchmark.h>

#include "import/synthetic.h"

namespace {

void BM_Synth(benchmark::State& state) {
  gpuscope::SyntheticOptions o;
  o.kernels = static_cast<std::uint64_t>(state.range(0));
  o.gpus = 4;
  std::size_t bytes = 0;
  for (auto _ : state) {
    gpuscope::Trace t = gpuscope::make_synthetic_trace(o);
    bytes = t.memory_bytes();
    benchmark::DoNotOptimize(t.kernels().size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["trace_bytes_per_kernel"] = static_cast<double>(bytes) / static_cast<double>(o.kernels);
}
BENCHMARK(BM_Synth)->Arg(100'000)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
