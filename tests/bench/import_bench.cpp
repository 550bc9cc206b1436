// Import speed (docs/PERFORMANCE.md, "Import"): bytes of JSON text per second,
// end to end (read or inflate, split, parse, build, freeze), on the real
// traces and on a large generated Kineto-like trace, plain and gzip.
//
//   build/bench/bench_import --benchmark_filter=Large   # the large trace only
//   (…OneThread: parse_threads = 1, the calling thread parses alone, for comparison)
//   GPUSCOPE_BENCH_JSON_MB=1024 build/bench/bench_import   # size of the generated trace
//
// The generated trace is tests/support/kineto_like.h's.
#include <benchmark/benchmark.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "import/chrome_json.h"
#include "support/kineto_like.h"

namespace {

namespace fs = std::filesystem;

// parse_threads: 0 = the importer's choice (two on a multi-core machine), 1 = the calling thread only.
void import_file(benchmark::State& state, const std::string& path, int parse_threads = 0) {
  std::uint64_t json_bytes = 0, kernels = 0;
  gpuscope::ChromeImportOptions options;
  options.parse_threads = parse_threads;
  for (auto _ : state) {
    const gpuscope::Trace t = gpuscope::import_chrome_json(path, options);
    json_bytes = t.meta().stat("import.json_bytes");
    kernels = t.kernels().size();
    benchmark::DoNotOptimize(t.kernels().size());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(json_bytes * state.iterations()));
  state.counters["kernels"] = static_cast<double>(kernels);
  state.counters["json_MB"] = static_cast<double>(json_bytes) / 1e6;
  state.counters["file_MB"] = static_cast<double>(fs::file_size(path)) / 1e6;
}

// [SECTION] The real traces ------------------------------------------------------------------------

void register_real_traces() {
  const fs::path dir(GPUSCOPE_TRACES_DIR);
  if (!fs::exists(dir)) return;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().size() > 8 && e.path().string().substr(e.path().string().size() - 8) == ".json.gz")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files)
    benchmark::RegisterBenchmark(("Real/" + fs::path(f).filename().string()).c_str(),
                                 [f](benchmark::State& s) { import_file(s, f); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

// [SECTION] A large generated Kineto-like trace ------------------------------------------------------

// gzip of a file in 64 MiB members (libdeflate is whole-buffer; several members
// make one valid gzip stream, as `cat a.gz b.gz` would).
void gzip_file(const std::string& in, const std::string& out) {
  std::ifstream src(in, std::ios::binary);
  std::ofstream dst(out, std::ios::binary);
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::vector<char> buf(64u << 20), z;
  while (src) {
    src.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::size_t n = static_cast<std::size_t>(src.gcount());
    if (n == 0) break;
    z.resize(libdeflate_gzip_compress_bound(c, n));
    const std::size_t m = libdeflate_gzip_compress(c, buf.data(), n, z.data(), z.size());
    dst.write(z.data(), static_cast<std::streamsize>(m));
  }
  libdeflate_free_compressor(c);
}

struct LargeTrace {
  std::string json, gz;
  LargeTrace() {
    const char* mb_env = std::getenv("GPUSCOPE_BENCH_JSON_MB");
    const std::uint64_t mb = mb_env ? std::strtoull(mb_env, nullptr, 10) : 512;
    const fs::path dir = fs::temp_directory_path() / ("gpuscope_import_bench_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    json = (dir / "large.json").string();
    gz = json + ".gz";
    gpuscope::testing::write_kineto_like(json, mb << 20);
    gzip_file(json, gz);
  }
  ~LargeTrace() { fs::remove_all(fs::path(json).parent_path()); }
};

LargeTrace& large() {
  static LargeTrace t;
  return t;
}

void BM_LargeKinetoLikeJson(benchmark::State& state) { import_file(state, large().json); }
void BM_LargeKinetoLikeJsonGz(benchmark::State& state) { import_file(state, large().gz); }
void BM_LargeKinetoLikeJsonOneThread(benchmark::State& state) { import_file(state, large().json, 1); }
void BM_LargeKinetoLikeJsonGzOneThread(benchmark::State& state) { import_file(state, large().gz, 1); }
BENCHMARK(BM_LargeKinetoLikeJson)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_LargeKinetoLikeJsonGz)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_LargeKinetoLikeJsonOneThread)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_LargeKinetoLikeJsonGzOneThread)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  register_real_traces();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
