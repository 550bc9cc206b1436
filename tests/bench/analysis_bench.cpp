// Analysis speed: analyze() on synthetic data-parallel jobs of 1M and 10M
// kernels (all metrics and findings, one core). Target (issue 3): 10M kernels
// in <= 0.5 s, memory <= 2x the loaded trace. Numbers: docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <sys/resource.h>

#include "analysis/analyze.h"
#include "import/synthetic.h"

namespace {

using namespace gpuscope;

// One trace per size, built once (building 10M kernels takes seconds).
const Trace& trace_of(std::int64_t kernels, bool report) {
  static std::map<std::pair<std::int64_t, bool>, std::unique_ptr<Trace>> cache;
  auto& slot = cache[{kernels, report}];
  if (!slot) {
    SyntheticOptions o = report ? SyntheticOptions::report_pathologies() : SyntheticOptions{};
    o.kernels = static_cast<std::uint64_t>(kernels);
    slot = std::make_unique<Trace>(make_synthetic_trace(o));
  }
  return *slot;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

void BM_Analyze(benchmark::State& state) {
  const Trace& t = trace_of(state.range(0), state.range(1) != 0);
  const long rss_before = peak_rss_kb();
  std::size_t findings = 0;
  for (auto _ : state) {
    Profile p = analyze(t);
    findings = p.findings.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["kernels"] = static_cast<double>(t.kernels().size());
  state.counters["trace_MB"] = static_cast<double>(t.memory_bytes()) / 1e6;
  // Peak RSS growth during analysis (the trace was loaded before): the extra
  // memory analysis needed at most, in MB.
  state.counters["analysis_peak_MB"] = static_cast<double>(peak_rss_kb() - rss_before) / 1e3;
  state.counters["findings"] = static_cast<double>(findings);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(t.kernels().size()));
}
// {kernels, report pathologies}. Peak-RSS growth is only meaningful for the
// first benchmark that touches a size: run one size per process for memory.
BENCHMARK(BM_Analyze)->Args({1'000'000, 0})->Args({1'000'000, 1})->Args({10'000'000, 0})->Args({10'000'000, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
