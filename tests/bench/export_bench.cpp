// Chrome JSON export speed on synthetic traces (target: >= 2M events/s on the
// 10M-kernel trace). "Events" are traceEvents entries: every kernel, copy,
// API call, range, sync and counter, their ac2g flow halves and metadata.
//   build/bench/bench_export --benchmark_filter=ToMemory/10000000
// The file variants write to $TMPDIR (default /tmp) and delete the file.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "export/chrome_trace.h"
#include "export/sqlite_export.h"
#include "import/synthetic.h"

namespace {

// One trace per size, made once (generating 10M kernels takes seconds).
const gpuscope::Trace& trace(std::int64_t kernels) {
  static std::map<std::int64_t, std::unique_ptr<gpuscope::Trace>> cache;
  auto& t = cache[kernels];
  if (!t) {
    gpuscope::SyntheticOptions o;
    o.kernels = static_cast<std::uint64_t>(kernels);
    o.gpus = 4;
    t = std::make_unique<gpuscope::Trace>(gpuscope::make_synthetic_trace(o));
  }
  return *t;
}

void report(benchmark::State& state, const gpuscope::ChromeExportStats& s) {
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.events));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(s.json_bytes));
  state.counters["events"] = static_cast<double>(s.events);
  state.counters["json_MB"] = static_cast<double>(s.json_bytes) / 1e6;
  state.counters["file_MB"] = static_cast<double>(s.file_bytes) / 1e6;
}

// The encoder alone: JSON text to a sink that only counts bytes.
void BM_ExportToMemory(benchmark::State& state) {
  const gpuscope::Trace& t = trace(state.range(0));
  gpuscope::ChromeExportStats s;
  std::uint64_t sink_bytes = 0;
  for (auto _ : state) s = gpuscope::write_chrome_trace(t, [&](std::string_view piece) { sink_bytes += piece.size(); });
  benchmark::DoNotOptimize(sink_bytes);
  report(state, s);
}
BENCHMARK(BM_ExportToMemory)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Whole files, as `gpuscope export` writes them (fdatasync included).
void BM_ExportFile(benchmark::State& state) {
  const gpuscope::Trace& t = trace(state.range(0));
  gpuscope::ChromeExportOptions o;
  o.gzip = state.range(1) != 0;
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("gpuscope-bench-" + std::to_string(::getpid()) + (o.gzip ? ".json.gz" : ".json"));
  gpuscope::ChromeExportStats s;
  for (auto _ : state) s = gpuscope::write_chrome_trace_file(t, path.string(), o);
  std::filesystem::remove(path);
  report(state, s);
}
BENCHMARK(BM_ExportFile)->Args({1'000'000, 0})->Args({1'000'000, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

// SQLite (Nsight Systems-like schema); rows = every inserted row.
void BM_ExportSqlite(benchmark::State& state) {
  const gpuscope::Trace& t = trace(state.range(0));
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gpuscope-bench-" + std::to_string(::getpid()) + ".sqlite");
  gpuscope::SqliteExportStats s;
  for (auto _ : state) s = gpuscope::write_sqlite_trace(t, path.string());
  std::filesystem::remove(path);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.rows));
  state.counters["rows"] = static_cast<double>(s.rows);
  state.counters["file_MB"] = static_cast<double>(s.file_bytes) / 1e6;
}
BENCHMARK(BM_ExportSqlite)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
