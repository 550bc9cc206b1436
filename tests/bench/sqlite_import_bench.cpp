// Import speed of SQLite in Nsight Systems' schema (target: >= 5M kernels/s
// on the 10M-kernel trace; docs/PERFORMANCE.md, "Import: Nsight Systems
// SQLite"). The trace is gpuscope synth's default job exported with
// gpuscope's own SQLite writer (10M kernels, ~10.2M API calls, ~1.1 GB), read
// back end to end: open, schema, every table, freeze.
//   build/bench/bench_sqlite_import --benchmark_filter=Direct/10000000 --benchmark_repetitions=5
//   (repetitions: on the VMs we measure on, memory the guest has not touched
//   for a while costs ~10x more to fault in, which makes single runs vary 3x;
//   BM_FreshMemory/1200 shows that cost alone for the ~1.2 GB an import of
//   10M kernels fills)
//   (…/Sqlite/…: SQLite's row API only, no direct page reading, for comparison; slow)
// The file is written once per size to $TMPDIR (default /tmp) and deleted at exit.
// GPUSCOPE_BENCH_SQLITE=FILE adds BM_ImportFile: that export read the same way
// (a real Nsight Systems export, or one kept for profiling the reader alone).
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "export/sqlite_export.h"
#include "import/nsys/nsys_sqlite.h"
#include "import/synthetic.h"

namespace {

namespace fs = std::filesystem;

struct Files {
  std::map<std::int64_t, std::string> by_size;
  ~Files() {
    for (const auto& [n, p] : by_size) fs::remove(p);
  }
};

const std::string& exported(std::int64_t kernels) {
  static const std::string given = std::getenv("GPUSCOPE_BENCH_SQLITE") ? std::getenv("GPUSCOPE_BENCH_SQLITE") : "";
  if (kernels == 0) return given;
  static Files files;
  auto& p = files.by_size[kernels];
  if (p.empty()) {
    gpuscope::SyntheticOptions o;
    o.kernels = static_cast<std::uint64_t>(kernels);
    p = (fs::temp_directory_path() /
         ("gpuscope-bench-" + std::to_string(::getpid()) + "-" + std::to_string(kernels) + ".sqlite"))
            .string();
    gpuscope::write_sqlite_trace(gpuscope::make_synthetic_trace(o), p, gpuscope::SqliteExportOptions{.sync = false});
  }
  return p;
}

void import(benchmark::State& state, bool direct) {
  const std::string& file = exported(state.range(0));
  gpuscope::NsysImportOptions o;
  o.direct_read = direct;
  std::size_t kernels = 0, rows = 0;
  for (auto _ : state) {
    const gpuscope::Trace t = gpuscope::import_nsys_sqlite(file, o);
    kernels = t.kernels().size();
    rows = 0;
    for (int i = 0; i < gpuscope::kTableCount; ++i) rows += t.tables().rows(static_cast<gpuscope::TableId>(i));
    benchmark::DoNotOptimize(t.kernels().size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kernels));
  state.counters["kernels"] = static_cast<double>(kernels);
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["file_MB"] = static_cast<double>(fs::file_size(file)) / 1e6;
}

void BM_ImportDirect(benchmark::State& state) { import(state, true); }

// Fresh anonymous memory, range(0) MiB, mapped and written a page at a time
// (advised for huge pages as the import's columns are): what filling that
// much memory costs this machine before any data is decoded.
void BM_FreshMemory(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
  for (auto _ : state) {
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      state.SkipWithError("mmap failed");
      return;
    }
    ::madvise(m, bytes, MADV_HUGEPAGE);
    auto* p = static_cast<volatile char*>(m);
    for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    ::munmap(m, bytes);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}
void BM_ImportSqlite(benchmark::State& state) { import(state, false); }

BENCHMARK(BM_ImportDirect)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FreshMemory)->Arg(1200)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_ImportSqlite)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
// Arg 0: the file GPUSCOPE_BENCH_SQLITE names.
const bool file_given = [] {
  if (std::getenv("GPUSCOPE_BENCH_SQLITE"))
    benchmark::RegisterBenchmark("BM_ImportFile", BM_ImportDirect)
        ->Arg(0)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  return true;
}();

}  // namespace
BENCHMARK_MAIN();
