// write_gscope -> read_gscope gives back the same trace: every table and
// column, meta, strings, tracks, devices, processes, counter series.
#include <fcntl.h>
#include <gtest/gtest.h>

#include "store/detail/column_codec.h"
#include "store/detail/format.h"
#include "store/detail/reader.h"
#include "store/detail/section_writer.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "store/trace_equal.h"
#include "support/autograd_links.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TempDir;

Trace round_trip(const Trace& t, const std::string& path, const GscopeWriteOptions& o = {},
                 GscopeReadReport* report = nullptr) {
  write_gscope(t, path, o);
  return read_gscope(path, report);
}

TEST(GscopeRoundTrip, RandomTracesManySeeds) {
  TempDir dir;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::RandomTraceOptions o;
    o.sparse_columns = seed % 5 != 0;
    o.extreme_values = seed % 3 != 0;
    const Trace t = testing::random_trace(seed, o);
    GscopeWriteOptions w;
    w.rows_per_chunk = static_cast<std::uint32_t>(1 + seed % 97);  // many chunks, odd sizes
    w.compress = seed % 4 != 0;
    w.sync = false;
    GscopeReadReport report;
    const Trace back = round_trip(t, dir.file("t.gscope"), w, &report);
    EXPECT_TRUE(report.complete);
    EXPECT_TRUE(report.problems.empty()) << report.problems.front();
    EXPECT_EQ(report.format_version, store_detail::kFormatVersion);
    EXPECT_EQ(report.writer.rfind("gpuscope ", 0), 0u);
    testing::expect_traces_equal(t, back);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(GscopeRoundTrip, EmptyTrace) {
  TempDir dir;
  TraceBuilder b;
  const Trace t = b.freeze();
  GscopeReadReport report;
  const Trace back = round_trip(t, dir.file("empty.gscope"), {}, &report);
  EXPECT_TRUE(report.complete);
  testing::expect_traces_equal(t, back);
  EXPECT_EQ(back.kernels().size(), 0u);
}

TEST(GscopeRoundTrip, SparseColumnsPresentInSomeChunksOnly) {
  TempDir dir;
  TraceBuilder b;
  const TrackId g = b.gpu_track(0, 7);
  const StringId name = b.intern("k");
  for (int i = 0; i < 1000; ++i) {
    KernelRow k;
    k.start = i * 10;
    k.end = i * 10 + 5;
    k.track = g;
    k.name = name;
    k.graph_id = i == 777 ? 5 : 0;  // one non-zero value in one chunk
    b.add_kernel(k);
  }
  const Trace t = b.freeze();
  ASSERT_FALSE(t.kernels().graph_id.empty());
  GscopeWriteOptions w;
  w.rows_per_chunk = 100;
  const Trace back = round_trip(t, dir.file("sparse.gscope"), w);
  ASSERT_EQ(back.kernels().graph_id.size(), 1000u);
  EXPECT_EQ(back.kernels().graph_id_at(777), 5u);
  EXPECT_EQ(back.kernels().graph_id_at(776), 0u);
  EXPECT_TRUE(back.kernels().graph_node_id.empty());
  testing::expect_traces_equal(t, back);
}

TEST(GscopeRoundTrip, TrainingLikeTraceMultiChunkAndCompact) {
  TempDir dir;
  testing::TrainingTraceOptions o;
  o.kernels = 200'000;
  o.gpus = 2;
  o.kernels_per_step = 400;
  o.start = 1'700'000'000'000'000'000;  // epoch nanoseconds, as captures write them
  const Trace t = testing::training_trace(o);
  GscopeWriteOptions w;
  w.sync = false;
  const std::string path = dir.file("train.gscope");
  const Trace back = round_trip(t, path, w);
  testing::expect_traces_equal(t, back);
  // A regression guard for the encoding (the target is <= 12 bytes per kernel
  // on the benchmark's 10M-kernel trace; see docs/PERFORMANCE.md).
  const auto bytes = std::filesystem::file_size(path);
  EXPECT_LT(static_cast<double>(bytes) / static_cast<double>(t.kernels().size()), 12.0);
}

// The reader reserves every derived column at the final row count (huge
// pages); one that stays empty (no kernel was recategorised by its launching
// op) gives its room back, so a loaded trace takes what the built one takes.
TEST(GscopeRoundTrip, ALoadedTraceHoldsNoRoomForColumnsLeftEmpty) {
  TempDir dir;
  testing::TrainingTraceOptions o;
  o.kernels = 50'000;
  const Trace t = testing::training_trace(o);
  const Trace back = round_trip(t, dir.file("t.gscope"));
  ASSERT_TRUE(back.kernels().category_rule.empty());
  back.tables().for_each_table([](TableId id, const auto& table) {
    table.for_each_column([&](ColumnInfo info, const auto& col) {
      if (col.empty()) {
        EXPECT_EQ(col.capacity(), 0u) << static_cast<int>(id) << " " << info.name;
      }
    });
  });
  EXPECT_LE(back.memory_bytes(), t.memory_bytes());
}

TEST(GscopeRoundTrip, ReadsFromMemoryLikeFromAFile) {
  TempDir dir;
  const Trace t = testing::random_trace(7);
  const std::string path = dir.file("m.gscope");
  write_gscope(t, path);
  const auto bytes = testing::read_bytes(path);
  GscopeReadReport report;
  const Trace back = store_detail::read_gscope_bytes(bytes, path, &report, {});
  EXPECT_TRUE(report.complete);
  testing::expect_traces_equal(t, back);
}

TEST(GscopeRoundTrip, IsGscopeFile) {
  TempDir dir;
  const std::string path = dir.file("a.gscope");
  write_gscope(testing::random_trace(3), path);
  EXPECT_TRUE(is_gscope_file(path));
  testing::write_bytes(dir.file("b.json"), {'{', '}'});
  EXPECT_FALSE(is_gscope_file(dir.file("b.json")));
  EXPECT_FALSE(is_gscope_file(dir.file("missing")));
  EXPECT_FALSE(is_gscope_file(dir.path().string()));
}

TEST(GscopeRoundTrip, ProgressAndCancel) {
  TempDir dir;
  const std::string path = dir.file("p.gscope");
  GscopeWriteOptions w;
  w.rows_per_chunk = 10;
  write_gscope(testing::random_trace(11), path, w);
  std::uint64_t last = 0, total = 0;
  int calls = 0;
  LoadProgress progress;
  progress.on_progress = [&](std::uint64_t done, std::uint64_t all) {
    EXPECT_GE(done, last);
    last = done;
    total = all;
    ++calls;
  };
  read_gscope(path, nullptr, progress);
  EXPECT_GT(calls, 2);
  EXPECT_EQ(last, total);
  EXPECT_EQ(total, std::filesystem::file_size(path));

  std::atomic<bool> cancel{true};
  LoadProgress cancelled;
  cancelled.cancel = &cancel;
  try {
    read_gscope(path, nullptr, cancelled);
    FAIL() << "expected cancellation";
  } catch (const InputError& e) {
    EXPECT_EQ(e.reason(), "cancelled");
  }
}

TEST(GscopeRoundTrip, RewritingALoadedTraceKeepsDuplicateCorrelationStat) {
  // freeze() counts duplicate API correlations into meta; a reload must not double it.
  TempDir dir;
  TraceBuilder b;
  const TrackId cpu = b.cpu_track(1, 1);
  b.add_api_call(ApiCallRow{0, 1, cpu, 5, 0, ApiDomain::runtime, 0, 0});
  b.add_api_call(ApiCallRow{2, 3, cpu, 5, 0, ApiDomain::runtime, 0, 0});
  const Trace t = b.freeze();
  ASSERT_EQ(t.meta().stat("trace.duplicate_api_correlations"), 1u);
  const Trace back = round_trip(t, dir.file("d.gscope"));
  EXPECT_EQ(back.meta().stat("trace.duplicate_api_correlations"), 1u);
  testing::expect_traces_equal(t, back);
}

}  // namespace
}  // namespace gpuscope

// [SECTION] Forward compatibility: what a later writer may add is skipped and counted.

namespace gpuscope {
namespace {

TEST(GscopeForwardCompatibility, UnknownSectionsAndColumnsAreSkippedAndCounted) {
  using namespace store_detail;
  testing::TempDir dir;
  const std::string path = dir.file("future.gscope");
  const Trace t = testing::random_trace(31);
  ASSERT_GT(t.kernels().size(), 0u);
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    GscopeWriteOptions o;
    SectionWriter w(fd, path, o);
    w.write_header();
    ByteWriter unknown;
    unknown.str("a section kind from the future");
    w.write_section(0x40, 1, unknown);
    WrittenState state;
    const TraceParts parts{t.strings(),        t.tracks(), t.devices(),  t.processes(),
                           t.counter_series(), t.meta(),   TraceTables{}};
    write_trace_parts(w, state, parts, 1000);
    // A kernels chunk with one more column than this reader knows.
    ByteWriter rows;
    ColumnScratch scratch;
    encode_rows(t.tables(), TableId::kernels, 0, t.kernels().size(), rows, scratch);
    ByteCursor c(rows.data(), rows.size());
    c.varint();
    const std::size_t count_at = rows.size() - c.remaining();
    rows.data()[count_at] += 1;
    const std::vector<std::uint32_t> extra(t.kernels().size(), 7);
    encode_column<std::uint32_t>("future_column", extra.data(), extra.size(), nullptr, false, rows, scratch.values);
    w.write_section(kTagRowsBase + static_cast<int>(TableId::kernels), static_cast<std::uint32_t>(t.kernels().size()),
                    rows);
    w.footer().table_rows[0] = t.kernels().size();
    w.write_footer();
    w.close();
  }
  GscopeReadReport rep;
  const Trace back = read_gscope(path, &rep);
  EXPECT_TRUE(rep.complete);
  EXPECT_EQ(back.meta().stat("store.unknown_sections"), 1u);
  EXPECT_EQ(back.meta().stat("store.unknown_columns"), 1u);
  ASSERT_EQ(back.kernels().size(), t.kernels().size());
  EXPECT_EQ(back.kernels().start, t.kernels().start);
  EXPECT_EQ(back.kernels().name, t.kernels().name);
}

}  // namespace
}  // namespace gpuscope

// [SECTION] Backward compatibility: files written before a table existed.

namespace gpuscope {
namespace {

// The fuzz seeds were written before the memory_events table existed (their
// footers list 8 tables): they read complete, with no memory events and
// nothing counted as unknown.
TEST(GscopeBackwardCompatibility, FilesWithoutMemoryEventsReadComplete) {
  const std::string seed = std::string(GPUSCOPE_FUZZ_CORPUS_DIR) + "/training-zstd.gscope";
  GscopeReadReport rep;
  const Trace t = read_gscope(seed, &rep);
  EXPECT_TRUE(rep.complete);
  EXPECT_TRUE(rep.problems.empty());
  EXPECT_GT(t.kernels().size(), 0u);
  EXPECT_EQ(t.memory_events().size(), 0u);
  EXPECT_EQ(t.meta().stat("store.unknown_sections"), 0u);
}

// Memory events keep their series, signed sizes and sparse addresses, in
// chunks where some have addresses and some none.
TEST(GscopeRoundTrip, MemoryEventsAndTheirSeries) {
  testing::TempDir dir;
  TraceBuilder b;
  const std::uint32_t gpu = b.counter_series(series_name::kMemoryAllocated, 0, "B");
  const std::uint32_t host = b.counter_series(series_name::kMemoryAllocated, kNoDevice, "B");
  std::int64_t level = 0;
  for (int i = 0; i < 40; ++i) {
    const std::int64_t bytes = i % 3 == 2 ? -(std::int64_t{1} << 20) : std::int64_t{1} << 21;
    level += bytes;
    const std::uint64_t address = i < 10 ? 0 : 0x7f0000000000ull + static_cast<std::uint64_t>(i) * 4096;
    b.add_memory_event(MemoryEventRow{1000 + i * 10, i % 5 ? gpu : host, bytes, address});
    b.add_counter(CounterRow{1000 + i * 10, gpu, static_cast<double>(level)});
  }
  const Trace t = b.freeze();
  GscopeWriteOptions w;
  w.rows_per_chunk = 7;
  w.sync = false;
  const Trace back = round_trip(t, dir.file("m.gscope"), w);
  testing::expect_traces_equal(t, back);
  ASSERT_EQ(back.memory_events().size(), 40u);
  EXPECT_EQ(back.rows_of(TableId::memory_events, gpu).size(), 32u);
  EXPECT_EQ(back.rows_of(TableId::memory_events, host).size(), 8u);
  EXPECT_EQ(back.memory_events().address_at(back.rows_of(TableId::memory_events, gpu).begin), 0u);
  EXPECT_EQ(back.find_counter_series(series_name::kMemoryAllocated, kNoDevice), host);
}

// Hardware-metric series (hw.*, nvml.*): names, units, devices and every
// sample (the NaN too) come back as written, over several chunks.
TEST(GscopeRoundTrip, HardwareMetricSeries) {
  testing::TempDir dir;
  const Trace t = testing::hardware_metrics_trace();
  GscopeWriteOptions w;
  w.rows_per_chunk = 7;
  w.sync = false;
  const Trace back = round_trip(t, dir.file("hw.gscope"), w);
  testing::expect_traces_equal(t, back);
  ASSERT_EQ(back.counter_series(), t.counter_series());
  const std::uint32_t s = back.find_counter_series("hw.dram_read", 1);
  ASSERT_NE(s, kNoSeries);
  EXPECT_EQ(back.counter_series()[s].unit, "B/s");
  EXPECT_EQ(back.rows_of(TableId::counters, s).size(), 5u);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// PyTorch's autograd link survives the file: sequence 0 is a number (stored
// as 1), ranges without one read back as none; a trace without any stores
// neither column (an old file reads the same way).
TEST(GscopeRoundTrip, SequenceNumbersAndForwardThreads) {
  TempDir dir;
  testing::TraceFactory f;
  f.autograd_op("aten::addmm", 1'000, 2'000, 0, 0);
  f.autograd_op("AddmmBackward0", 3'000, 4'000, 0, 7, 2);
  f.cpu_op("aten::add", 5'000, 6'000, "", "");
  const Trace back = round_trip(f.build(), dir.file("seq.gscope"));
  const auto link = testing::autograd_links(back);
  EXPECT_EQ(link.at("aten::addmm"), (testing::AutogradLink{0, 0}));
  EXPECT_EQ(link.at("AddmmBackward0"), (testing::AutogradLink{0, 7}));
  EXPECT_EQ(link.at("aten::add"), (testing::AutogradLink{-1, 0}));

  testing::TraceFactory g;
  g.cpu_op("aten::add", 5'000, 6'000, "", "");
  const Trace plain = round_trip(g.build(), dir.file("plain.gscope"));
  EXPECT_TRUE(plain.ranges().sequence.empty());
  EXPECT_TRUE(plain.ranges().fwd_thread.empty());
}

}  // namespace
}  // namespace gpuscope
