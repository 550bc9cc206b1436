// The fuzz target's seed corpus: small valid files of each shape. With
// GPUSCOPE_WRITE_FUZZ_SEEDS=1 this test (re)writes them; it always checks that
// the committed seeds read back, so a format change that breaks them fails here.
#include <gtest/gtest.h>

#include <cstdlib>

#include "store/detail/reader.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "support/hostile_files.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

void write_seeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  testing::RandomTraceOptions small;
  small.max_rows = 6;
  GscopeWriteOptions raw;
  raw.compress = false;
  raw.rows_per_chunk = 3;
  raw.sync = false;
  GscopeWriteOptions zstd;
  zstd.sync = false;
  write_gscope(testing::random_trace(21, small), dir + "/random-zstd.gscope", zstd);
  write_gscope(testing::random_trace(22, small), dir + "/random-raw.gscope", raw);
  write_gscope(testing::random_trace(23, small), dir + "/random-raw-2.gscope", raw);
  TraceBuilder empty;
  write_gscope(empty.freeze(), dir + "/empty.gscope", raw);
  testing::TrainingTraceOptions t;
  t.kernels = 150;
  t.kernels_per_step = 50;
  t.gpus = 1;
  t.start = 1'700'000'000'000'000'000;
  write_gscope(testing::training_trace(t), dir + "/training-zstd.gscope", zstd);
  {
    // A live capture that never finished: no footer, unsorted rows, a sync to resolve.
    auto app = GscopeAppender::open(dir + "/appender-unfinished.gscope", raw);
    TraceBuilder b;
    const TrackId g = b.gpu_track(0, 7), c = b.cpu_track(1, 2);
    b.add_api_call(ApiCallRow{100, 110, c, 1, b.intern("cudaLaunchKernel"), ApiDomain::runtime, 211, 0});
    KernelRow k;
    k.start = 200;
    k.end = 300;
    k.track = g;
    k.correlation = 1;
    k.name = b.intern("relu");
    b.add_kernel(k);
    app->append(b);
    b.add_sync(SyncRow{150, 310, TraceBuilder::kResolveThroughCorrelation, 1, SyncType::stream, 0, 7, kNoId});
    k.start = 120;
    k.end = 130;
    b.add_kernel(k);
    app->append(b);
  }
  // A bomb: 1M identical kernels (~100 MB loaded) in a few KiB, which the
  // fuzz target's 64 MiB budget refuses by the footer's claim.
  testing::write_identical_kernels_gscope(dir + "/bomb-1m-kernels.gscope", 1'000'000);
}

TEST(FuzzSeeds, CommittedSeedsReadBack) {
  const std::string dir = GPUSCOPE_FUZZ_CORPUS_DIR;
  if (const char* w = std::getenv("GPUSCOPE_WRITE_FUZZ_SEEDS"); w && std::string(w) == "1") write_seeds(dir);
  int seeds = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    SCOPED_TRACE(e.path().string());
    EXPECT_LE(std::filesystem::file_size(e.path()), 8192u) << "keep seeds small";
    ++seeds;
    if (e.path().filename().string().starts_with("bomb-")) {
      // Refused under the fuzz target's budget, read within a larger one.
      const std::vector<std::uint8_t> bytes = testing::read_bytes(e.path().string());
      store_detail::ReadOptions o;
      o.memory_budget = 64u << 20;
      EXPECT_THROW(store_detail::read_gscope_bytes(bytes, "bomb", nullptr, o), InputError);
      continue;
    }
    GscopeReadReport rep;
    EXPECT_NO_THROW(read_gscope(e.path().string(), &rep));
    const bool unfinished = e.path().filename().string().find("unfinished") != std::string::npos;
    EXPECT_EQ(rep.complete, !unfinished);
  }
  EXPECT_GE(seeds, 5);
}

}  // namespace
}  // namespace gpuscope
