// .gscope benchmarks on the official synthetic trace (make_synthetic_trace,
// what `gpuscope synth` writes): write speed, file size, read speed, memory
// after load. Targets, per kernel event of a 10M-kernel trace:
// file <= 12 bytes, read >= 15M/s, write >= 10M/s, memory after load <= 90 bytes.
//
//   build/bench/bench_store                       # 10M kernels, files in /tmp
//   GPUSCOPE_BENCH_KERNELS=1000000 build/bench/bench_store --benchmark_filter=Read
//
// Run Read alone (--benchmark_filter=Read) for a clean RSS number: the writer
// benchmark keeps the source trace in memory.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "import/synthetic.h"
#include "store/gscope.h"

namespace {

using namespace gpuscope;

std::uint64_t bench_kernels() {
  const char* e = std::getenv("GPUSCOPE_BENCH_KERNELS");
  return e ? std::strtoull(e, nullptr, 10) : 10'000'000ull;
}

std::string bench_path() {
  const char* d = std::getenv("GPUSCOPE_BENCH_DIR");
  // "-z1": written with the writer's defaults since 2026-11-30 (zstd level 1,
  // raw literals); an older file under the old name is not reused.
  return std::string(d ? d : "/tmp") + "/gpuscope-store-bench-" + std::to_string(bench_kernels()) + "-z1.gscope";
}

std::unique_ptr<Trace>& source_slot() {
  static std::unique_ptr<Trace> t;
  return t;
}

const Trace& source_trace() {
  auto& t = source_slot();
  if (!t) {
    SyntheticOptions o;  // `gpuscope synth` defaults
    o.kernels = bench_kernels();
    t = std::make_unique<Trace>(make_synthetic_trace(o));
  }
  return *t;
}

// The file Read benchmarks load; written once (and the source trace freed).
const std::string& bench_file() {
  static const std::string path = [] {
    const std::string p = bench_path();
    if (!std::filesystem::exists(p)) {
      write_gscope(source_trace(), p);
      source_slot().reset();
      malloc_trim(0);
    }
    return p;
  }();
  return path;
}

std::uint64_t rss_bytes() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

void BM_Write(benchmark::State& state) {
  const Trace& t = source_trace();
  GscopeWriteOptions o;
  o.sync = state.range(0) != 0;
  o.zstd_level = static_cast<int>(state.range(1));
  o.huffman_literals = state.range(2) != 0;
  const std::string path = bench_path() + ".write";
  for (auto _ : state) write_gscope(t, path, o);
  const double kernels = static_cast<double>(t.kernels().size());
  const auto bytes = static_cast<double>(std::filesystem::file_size(path));
  state.counters["kernels/s"] = benchmark::Counter(kernels, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/kernel"] = bytes / kernels;
  state.counters["file_MB"] = bytes / 1e6;
  std::filesystem::remove(path);
}
BENCHMARK(BM_Write)
    ->ArgNames({"sync", "zstd", "huffman"})
    ->Args({0, 1, 0})  // the defaults
    ->Args({1, 1, 0})
    ->Args({0, 3, 1})  // the defaults before 2026-11-30
    ->Args({0, 3, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Read(benchmark::State& state) {
  const std::string& path = bench_file();
  malloc_trim(0);
  const std::uint64_t rss_before = rss_bytes();
  double kernels = 0, memory = 0, rss_delta = 0;
  for (auto _ : state) {
    Trace t = read_gscope(path);
    kernels = static_cast<double>(t.kernels().size());
    memory = static_cast<double>(t.memory_bytes());
    rss_delta = std::max(rss_delta, static_cast<double>(rss_bytes() - rss_before));
  }
  state.counters["kernels/s"] = benchmark::Counter(kernels, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["mem_bytes/kernel"] = memory / kernels;
  state.counters["rss_bytes/kernel"] = rss_delta / kernels;
  state.counters["bytes/kernel"] = static_cast<double>(std::filesystem::file_size(path)) / kernels;
}
BENCHMARK(BM_Read)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
