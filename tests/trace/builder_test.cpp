#include "trace/builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "trace/budget.h"

namespace gpuscope {
namespace {

KernelRow kernel(TrackId track, TimeNs start, TimeNs end, std::uint32_t corr = 0, StringId name = 0) {
  KernelRow k;
  k.track = track;
  k.start = start;
  k.end = end;
  k.correlation = corr;
  k.name = name;
  return k;
}

ApiCallRow api(TrackId track, TimeNs start, TimeNs end, std::uint32_t corr, StringId name = 0) {
  ApiCallRow a;
  a.track = track;
  a.start = start;
  a.end = end;
  a.correlation = corr;
  a.name = name;
  return a;
}

TEST(TraceBuilder, SortsByTrackThenStartAndRenumbersTracks) {
  TraceBuilder b;
  const TrackId cpu = b.cpu_track(100, 1);
  const TrackId s2 = b.gpu_track(0, 2);
  const TrackId s1 = b.gpu_track(0, 1);
  const TrackId d1 = b.gpu_track(1, 7);
  b.add_kernel(kernel(s2, 30, 40));
  b.add_kernel(kernel(s1, 20, 25));
  b.add_kernel(kernel(d1, 5, 6));
  b.add_kernel(kernel(s1, 10, 15));
  b.add_kernel(kernel(s2, 0, 1));
  b.add_api_call(api(cpu, 1, 2, 0));
  Trace t = b.freeze();

  ASSERT_EQ(t.tracks().size(), 4u);
  // Display order: GPU (device, stream), then CPU.
  EXPECT_EQ(t.tracks()[0].stream, 1u);
  EXPECT_EQ(t.tracks()[1].stream, 2u);
  EXPECT_EQ(t.tracks()[2].device, 1u);
  EXPECT_EQ(t.tracks()[3].kind, TrackKind::cpu);

  const auto& k = t.kernels();
  ASSERT_EQ(k.size(), 5u);
  const std::vector<TimeNs> starts(k.start.begin(), k.start.end());
  EXPECT_EQ(starts, (std::vector<TimeNs>{10, 20, 0, 30, 5}));
  std::vector<TrackId> tracks;
  for (std::size_t i = 0; i < k.size(); ++i) tracks.push_back(k.track_at(i));
  EXPECT_EQ(tracks, (std::vector<TrackId>{0, 0, 1, 1, 2}));
  EXPECT_EQ(t.rows_of(TableId::kernels, 0).size(), 2u);
  EXPECT_EQ(t.rows_of(TableId::kernels, 1).begin, 2u);
  EXPECT_EQ(t.rows_of(TableId::kernels, 3).size(), 0u);
  EXPECT_EQ(t.rows_of(TableId::api_calls, 3).size(), 1u);
  EXPECT_EQ(t.gpu_begin_time(), 0);
  EXPECT_EQ(t.gpu_end_time(), 40);
}

TEST(TraceBuilder, LinksCorrelationBothWaysIncludingGraphLaunches) {
  TraceBuilder b;
  const TrackId cpu = b.cpu_track(1, 1);
  const TrackId g0 = b.gpu_track(0, 7), g1 = b.gpu_track(0, 8);
  b.add_api_call(api(cpu, 0, 5, 11, b.intern("cudaLaunchKernel")));
  b.add_api_call(api(cpu, 6, 9, 12, b.intern("cudaGraphLaunch")));
  b.add_api_call(api(cpu, 10, 11, 13, b.intern("cudaMemcpyAsync")));
  b.add_api_call(api(cpu, 12, 13, 0, b.intern("cudaGetDevice")));
  b.add_kernel(kernel(g0, 20, 30, 11));
  b.add_kernel(kernel(g1, 45, 50, 12));  // graph launch: three ops on two streams
  b.add_kernel(kernel(g0, 40, 44, 12));
  b.add_kernel(kernel(g0, 60, 61, 999));  // launching call not recorded
  MemcpyRow m;
  m.track = g1;
  m.start = 70;
  m.end = 80;
  m.correlation = 13;
  b.add_memcpy(m);
  MemsetRow ms;
  ms.track = g1;
  ms.start = 41;
  ms.end = 42;
  ms.correlation = 12;
  b.add_memset(ms);
  Trace t = b.freeze();

  const auto& k = t.kernels();
  ASSERT_EQ(k.size(), 4u);
  for (RowIndex i = 0; i < k.size(); ++i) {
    const RowIndex a = t.launching_api({OpTable::kernel, i});
    if (k.correlation[i] == 999) {
      EXPECT_EQ(a, kNoRow);
    } else {
      ASSERT_NE(a, kNoRow);
      EXPECT_EQ(t.api_calls().correlation[a], k.correlation[i]);
    }
  }
  EXPECT_EQ(t.api_calls().correlation[t.launching_api({OpTable::memcpy, 0})], 13u);

  // The graph launch (row 1 after sorting by start) launched three ops; the
  // first one reported is the earliest (the memset at 41? no: kernel at 40).
  RowIndex graph = kNoRow;
  for (RowIndex i = 0; i < t.api_calls().size(); ++i)
    if (t.api_calls().correlation[i] == 12) graph = i;
  ASSERT_NE(graph, kNoRow);
  std::vector<TimeNs> op_starts;
  t.for_each_op_of(graph, [&](OpRef op) {
    switch (op.table) {
      case OpTable::kernel: op_starts.push_back(t.kernels().start[op.row]); break;
      case OpTable::memset: op_starts.push_back(t.memsets().start[op.row]); break;
      default: ADD_FAILURE() << "unexpected op table";
    }
  });
  ASSERT_EQ(op_starts.size(), 3u);
  EXPECT_EQ(op_starts[0], 40);
  std::sort(op_starts.begin(), op_starts.end());
  EXPECT_EQ(op_starts, (std::vector<TimeNs>{40, 41, 45}));

  int with_ops = 0;
  for (RowIndex i = 0; i < t.api_calls().size(); ++i) {
    int n = 0;
    t.for_each_op_of(i, [&](OpRef) { ++n; });
    with_ops += n > 0;
  }
  EXPECT_EQ(with_ops, 3);  // cudaGetDevice launched nothing
}

// A call's launching op is kept only when some call has one: without an
// op around any call the column stays empty (4 bytes a call saved) and
// every launching op reads as none; with one, each call gets its own.
TEST(TraceBuilder, LaunchingOpsKeptOnlyWhenSomeCallHasOne) {
  for (const bool with_op : {false, true}) {
    SCOPED_TRACE(with_op ? "an op around the second call" : "no op");
    TraceBuilder b;
    const TrackId cpu = b.cpu_track(1, 1);
    const TrackId g = b.gpu_track(0, 7);
    b.add_api_call(api(cpu, 0, 5, 11, b.intern("cudaLaunchKernel")));
    b.add_api_call(api(cpu, 20, 25, 12, b.intern("cudaLaunchKernel")));
    b.add_kernel(kernel(g, 30, 40, 11));
    b.add_kernel(kernel(g, 50, 60, 12));
    RangeRow r;
    r.track = cpu;
    r.start = with_op ? 15 : 100;  // an NVTX range around the second call, or after both
    r.end = with_op ? 30 : 110;
    r.kind = RangeKind::push_pop;
    b.add_range(r);
    const Trace t = b.freeze();
    EXPECT_EQ(t.api_calls().op_range.empty(), !with_op);
    EXPECT_EQ(t.launching_op({OpTable::kernel, 0}), kNoRow);
    EXPECT_EQ(t.launching_op({OpTable::kernel, 1}), with_op ? RowIndex{0} : kNoRow);
    EXPECT_EQ(t.api_calls().op_range_at(1), with_op ? RowIndex{0} : kNoRow);
  }
}

TEST(TraceBuilder, RangesGetNestingDepth) {
  TraceBuilder b;
  const TrackId cpu = b.cpu_track(1, 1);
  auto range = [&](TimeNs s, TimeNs e) {
    RangeRow r;
    r.track = cpu;
    r.start = s;
    r.end = e;
    r.kind = s == e ? RangeKind::mark : RangeKind::push_pop;
    b.add_range(r);
  };
  range(10, 20);    // child of step
  range(0, 100);    // step
  range(12, 15);    // grandchild
  range(20, 30);    // second child, starts when the first ends
  range(50, 50);    // mark inside step
  range(100, 110);  // next step
  Trace t = b.freeze();
  const auto& r = t.ranges();
  ASSERT_EQ(r.size(), 6u);
  std::vector<std::pair<TimeNs, int>> got;
  for (std::size_t i = 0; i < r.size(); ++i) got.emplace_back(r.start[i], r.depth[i]);
  EXPECT_EQ(got, (std::vector<std::pair<TimeNs, int>>{{0, 0}, {10, 1}, {12, 2}, {20, 1}, {50, 1}, {100, 0}}));
}

// Depth is the lowest lane free at a range's start (first fit), also when
// ranges overlap by the hundred (the builder then keeps its lanes in heaps
// instead of scanning them: untrusted input must not make freeze() quadratic)
// and when a track goes from few lanes to many and back.
TEST(TraceBuilder, NestingDepthIsFirstFitAtAnyOverlap) {
  for (int round = 0; round < 6; ++round) {
    std::mt19937_64 rng(40 + round);
    TraceBuilder b;
    const TrackId cpu = b.cpu_track(1, 1), other = b.cpu_track(1, 2);
    const int n = round < 3 ? 4'000 : 30'000;
    const TimeNs spread = round % 3 == 0 ? 1'000'000 : round % 3 == 1 ? 20'000 : 2'000;  // light to heavy overlap
    for (int i = 0; i < n; ++i) {
      RangeRow r;
      r.track = i % 7 == 0 ? other : cpu;
      r.start = static_cast<TimeNs>(rng() % static_cast<std::uint64_t>(spread * 10));
      r.end = r.start + static_cast<TimeNs>(rng() % static_cast<std::uint64_t>(spread));
      r.kind = RangeKind::push_pop;
      b.add_range(r);
    }
    const Trace t = b.freeze();
    const auto& r = t.ranges();
    std::size_t most = 0;
    for (TrackId tr : {TrackId{0}, TrackId{1}}) {
      const RowRange rows = t.rows_of(TableId::ranges, tr);
      std::vector<TimeNs> lane_end;  // brute force: scan every lane
      for (RowIndex i = rows.begin; i < rows.end; ++i) {
        std::size_t lane = 0;
        while (lane < lane_end.size() && lane_end[lane] > r.start[i]) ++lane;
        if (lane == lane_end.size())
          lane_end.push_back(r.end[i]);
        else
          lane_end[lane] = r.end[i];
        ASSERT_EQ(r.depth[i], std::min<std::size_t>(lane, 0xffff)) << "round " << round << " row " << i;
      }
      most = std::max(most, lane_end.size());
    }
    if (round % 3 == 2) {
      EXPECT_GT(most, 100u) << "round " << round;  // the heaps were used
    }
  }
}

TEST(TraceBuilder, SyncsFindTheirThreadThroughCorrelation) {
  TraceBuilder b;
  const TrackId cpu = b.cpu_track(5, 9);
  b.add_api_call(api(cpu, 0, 10, 42, b.intern("cudaStreamSynchronize")));
  SyncRow s;
  s.start = 1;
  s.end = 9;
  s.correlation = 42;
  s.type = SyncType::stream;
  s.track = TraceBuilder::kResolveThroughCorrelation;
  b.add_sync(s);
  s.correlation = 43;  // no API call: goes to the "unknown thread" track
  b.add_sync(s);
  Trace t = b.freeze();
  ASSERT_EQ(t.syncs().size(), 2u);
  std::vector<std::uint32_t> tids;
  for (std::size_t i = 0; i < t.syncs().size(); ++i) tids.push_back(t.tracks()[t.syncs().track_at(i)].tid);
  std::sort(tids.begin(), tids.end());
  EXPECT_EQ(tids, (std::vector<std::uint32_t>{0, 9}));
}

TEST(TraceBuilder, SparseColumnsStayEmptyUntilUsed) {
  TraceBuilder b;
  const TrackId g = b.gpu_track(0, 1);
  b.add_kernel(kernel(g, 0, 1));
  b.add_kernel(kernel(g, 2, 3));
  EXPECT_TRUE(b.tables().kernels.graph_id.empty());
  KernelRow k = kernel(g, 4, 5);
  k.graph_id = 3;
  k.graph_node_id = 77;
  b.add_kernel(k);
  Trace t = b.freeze();
  ASSERT_EQ(t.kernels().graph_id.size(), 3u);
  EXPECT_EQ(t.kernels().graph_id_at(0), 0u);
  EXPECT_EQ(t.kernels().graph_id_at(2), 3u);
  EXPECT_EQ(t.kernels().graph_node_id_at(2), 77u);
  EXPECT_TRUE(t.kernels().mangled.empty());
}

// The Row, the Table and the append all come from one column list: a Row
// fills exactly the non-derived columns, in list order, each value stored as
// its column says (an enumeration as its byte, a u32 in 16 bits clamped).
TEST(TraceBuilder, RowsFillTheirTablesNonDerivedColumnsAsTheColumnListSays) {
  TraceTables tables;
  tables.for_each_table([](TableId id, auto& table) {
    std::vector<const void*> listed, filled;
    table.for_each_column([&](ColumnInfo info, const auto& col) {
      if (!(info.flags & kDerived)) listed.push_back(&col);
      EXPECT_EQ(!(info.flags & kDerived), (info.flags & kStored) != 0) << to_string(id) << " " << info.name;
    });
    auto fill = [&](const auto& row) {
      table.for_each_row_column(row, [&](auto, const auto& col, auto) { filled.push_back(&col); });
    };
    using T = std::remove_cvref_t<decltype(table)>;
    if constexpr (std::is_same_v<T, KernelTable>) fill(KernelRow{});
    if constexpr (std::is_same_v<T, MemcpyTable>) fill(MemcpyRow{});
    if constexpr (std::is_same_v<T, MemsetTable>) fill(MemsetRow{});
    if constexpr (std::is_same_v<T, ApiCallTable>) fill(ApiCallRow{});
    if constexpr (std::is_same_v<T, RangeTable>) fill(RangeRow{});
    if constexpr (std::is_same_v<T, SyncTable>) fill(SyncRow{});
    if constexpr (std::is_same_v<T, CounterTable>) fill(CounterRow{});
    if constexpr (std::is_same_v<T, MemoryEventTable>) fill(MemoryEventRow{});
    if constexpr (std::is_same_v<T, OsCallTable>) fill(OsCallRow{});
    if constexpr (std::is_same_v<T, OverheadTable>) fill(OverheadRow{});
    ASSERT_FALSE(filled.empty()) << to_string(id);
    EXPECT_EQ(filled, listed) << to_string(id);
  });

  TraceBuilder b;
  const TrackId g = b.gpu_track(0, 1);
  const StringId name = b.intern("k");
  KernelRow k = kernel(g, 0, 1, 0, name);
  k.mangled = name;  // the same as the name: not kept
  k.grid_y = 70000;  // past CUDA's limit: clamped
  k.block_x = 1024;
  b.add_kernel(k);
  MemcpyRow m;
  m.track = g;
  m.kind = CopyKind::dtoh;
  b.add_memcpy(m);
  SyncRow s;
  s.track = b.cpu_track(1, 2);
  b.add_sync(s);
  const Trace t = b.freeze();
  EXPECT_TRUE(t.kernels().mangled.empty());
  EXPECT_EQ(t.kernels().grid_y[0], 65535u);
  EXPECT_EQ(t.kernels().grid_y_at(0), 65535u);
  EXPECT_EQ(t.kernels().block_x_at(0), 1024u);
  EXPECT_EQ(t.memcpys().kind[0], static_cast<std::uint8_t>(CopyKind::dtoh));
  EXPECT_EQ(t.memcpys().kind_at(0), CopyKind::dtoh);
  EXPECT_EQ(t.syncs().device_at(0), kNoDevice);  // a Row's default, not 0
  EXPECT_EQ(t.syncs().stream_at(0), kNoId);
  EXPECT_EQ(t.api_calls().op_range_at(0), kNoRow);  // no calls: sparse and empty, its default
}

TEST(TraceBuilder, EveryStringColumnIsChecked) {
  // The sparse string columns of a range (a framework op's inputs) too.
  TraceBuilder b;
  RangeRow r;
  r.track = b.cpu_track(1, 2);
  r.input_types = 999;
  b.add_range(r);
  try {
    b.freeze();
    FAIL() << "accepted a string id past the table";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), "ranges row 0: input_types string id out of range");
  }
}

TEST(TraceBuilder, RejectsBrokenRowsWithAMessage) {
  {
    TraceBuilder b;
    b.add_kernel(kernel(5, 0, 1));  // no such track
    EXPECT_THROW(b.freeze(), TraceError);
  }
  {
    TraceBuilder b;
    const TrackId g = b.gpu_track(0, 1);
    b.add_kernel(kernel(g, 10, 5));  // ends before it starts
    try {
      b.freeze();
      FAIL();
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("ends before it starts"), std::string::npos) << e.what();
    }
  }
  {
    TraceBuilder b;
    const TrackId g = b.gpu_track(0, 1);
    // Times outside the plausible window (±2^62 ns, budget.h): the row is
    // dropped and counted before anything could subtract them.
    b.add_kernel(kernel(g, std::numeric_limits<TimeNs>::min() + 2, std::numeric_limits<TimeNs>::max() - 2));
    const Trace t = b.freeze();
    EXPECT_EQ(t.kernels().size(), 0u);
    EXPECT_EQ(t.meta().stat("trace.out_of_window.kernels"), 1u);
  }
  {
    TraceBuilder b;
    const TrackId g = b.gpu_track(0, 1);
    b.add_api_call(api(g, 0, 1, 0));  // API call on a GPU track
    EXPECT_THROW(b.freeze(), TraceError);
  }
  {
    TraceBuilder b;
    const TrackId g = b.gpu_track(0, 1);
    b.add_kernel(kernel(g, 0, 1, 0, 12345));  // bad string id
    EXPECT_THROW(b.freeze(), TraceError);
  }
  {
    TraceBuilder b;
    const TrackId g = b.gpu_track(0, 1);
    b.add_kernel(kernel(g, 0, 1));
    b.tables().kernels.grid_y.pop_back();  // a reader filled columns unevenly
    EXPECT_THROW(b.freeze(), TraceError);
  }
}

TEST(TraceBuilder, MemoryEventsAreSortedBySeriesThenTime) {
  TraceBuilder b;
  const std::uint32_t s0 = b.counter_series(series_name::kMemoryAllocated, 0, "B");
  const std::uint32_t s1 = b.counter_series(series_name::kMemoryAllocated, 1, "B");
  b.add_memory_event(MemoryEventRow{300, s1, 64, 0xa0});
  b.add_memory_event(MemoryEventRow{200, s0, 32, 0});
  b.add_memory_event(MemoryEventRow{100, s1, -16, 0xb0});
  b.add_memory_event(MemoryEventRow{100, s0, 8, 0});
  const Trace t = b.freeze();
  const MemoryEventTable& m = t.memory_events();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m.time, (std::vector<TimeNs>{100, 200, 100, 300}));
  EXPECT_EQ(m.bytes, (std::vector<std::int64_t>{8, 32, -16, 64}));
  EXPECT_EQ(m.address_at(2), 0xb0u);
  EXPECT_EQ(m.address_at(0), 0u);
  EXPECT_EQ(t.rows_of(TableId::memory_events, s1).begin, 2u);
  EXPECT_EQ(t.rows_of(TableId::memory_events, s1).end, 4u);
  EXPECT_EQ(t.find_counter_series(series_name::kMemoryAllocated, 1), s1);
  EXPECT_EQ(t.find_counter_series(series_name::kMemoryReserved, 1), kNoSeries);
  EXPECT_EQ(t.begin_time(), 100);
  EXPECT_EQ(t.end_time(), 300);

  TraceBuilder bad;
  bad.add_memory_event(MemoryEventRow{1, 7, 1, 0});  // no such series
  EXPECT_THROW(bad.freeze(), TraceError);
}

TEST(TraceBuilder, FreezeLeavesTheBuilderReusable) {
  TraceBuilder b;
  b.add_kernel(kernel(b.gpu_track(0, 1), 0, 1, 0, b.intern("a")));
  Trace first = b.freeze();
  EXPECT_EQ(b.row_count(), 0u);
  EXPECT_TRUE(b.tracks().empty());
  b.add_kernel(kernel(b.gpu_track(0, 1), 0, 1));
  Trace second = b.freeze();
  EXPECT_EQ(first.kernels().size(), 1u);
  EXPECT_EQ(second.kernels().size(), 1u);
  EXPECT_EQ(first.str(first.kernels().name[0]), "a");
}

// Random tracks for the search tests: track 0 of up to `rows` disjoint
// kernels one after the other, track 1 of as many ranges starting anywhere
// in [0, starts), nested or not, one in `long_one_in` of them `long_ns` long
// at most (20 ns the others).
Trace random_tracks(std::mt19937_64& rng, int rows, TimeNs starts, std::uint64_t long_one_in, TimeNs long_ns) {
  TraceBuilder b;
  const TrackId g = b.gpu_track(0, 1);
  const TrackId c = b.cpu_track(1, 1);
  TimeNs at = 0;
  const int n = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(rows));
  for (int i = 0; i < n; ++i) {
    at += static_cast<TimeNs>(rng() % 20);
    b.add_kernel(kernel(g, at, at + static_cast<TimeNs>(rng() % 15)));
    RangeRow r;
    r.track = c;
    r.start = static_cast<TimeNs>(rng() % static_cast<std::uint64_t>(starts));
    r.end = r.start + static_cast<TimeNs>(rng() % static_cast<std::uint64_t>(rng() % long_one_in == 0 ? long_ns : 20));
    b.add_range(r);
  }
  return b.freeze();
}

// rows_overlapping must return every row that overlaps the window (and only
// rows that start before its end), on tracks of disjoint kernels and of
// nested ranges alike. Checked against brute force over many random cases.
TEST(TraceBuilder, RowsOverlappingMatchesBruteForce) {
  std::mt19937_64 rng(1234);
  for (int round = 0; round < 200; ++round) {
    Trace t = random_tracks(rng, 60, 500, 4, 400);
    for (int q = 0; q < 30; ++q) {
      const TimeNs t0 = static_cast<TimeNs>(rng() % 600) - 50;
      const TimeNs t1 = t0 + static_cast<TimeNs>(rng() % 100);
      auto check = [&](TableId table, TrackId track, const std::vector<TimeNs>& s, const std::vector<TimeNs>& e) {
        const RowRange all = t.rows_of(table, track);
        const RowRange got = t.rows_overlapping(table, track, t0, t1);
        for (RowIndex i = all.begin; i < all.end; ++i) {
          const bool overlaps = s[i] <= t1 && e[i] >= t0;
          if (overlaps) {
            EXPECT_TRUE(i >= got.begin && i < got.end)
                << "missed row " << i << " [" << s[i] << "," << e[i] << "] window [" << t0 << "," << t1 << "]";
          }
          if (i >= got.begin && i < got.end) {
            EXPECT_LE(s[i], t1);
          }
        }
      };
      check(TableId::kernels, 0, t.kernels().start, t.kernels().end);
      check(TableId::ranges, 1, t.ranges().start, t.ranges().end);
    }
  }
}

// On tracks of nested ranges longer than a block of the index (64 rows),
// several such tracks, the range starts at the first row that overlaps the
// window: a long range that ended before it (a step's, a phase's) does not
// send the search back to its start. Against brute force.
TEST(TraceBuilder, RowsOverlappingStartsAtTheFirstOverlappingRange) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 40; ++round) {
    TraceBuilder b;
    const TrackId c0 = b.cpu_track(1, 1), c1 = b.cpu_track(1, 2);
    for (TrackId c : {c0, c1}) {
      const int n = 1 + static_cast<int>(rng() % 400);
      for (int i = 0; i < n; ++i) {
        RangeRow r;
        r.track = c;
        r.start = static_cast<TimeNs>(rng() % 5000);
        r.end = r.start + static_cast<TimeNs>(rng() % (rng() % 50 == 0 ? 2000 : 20));
        b.add_range(r);
      }
    }
    const Trace t = b.freeze();
    const RangeTable& g = t.ranges();
    for (int q = 0; q < 50; ++q) {
      const TimeNs t0 = static_cast<TimeNs>(rng() % 5200) - 100;
      const TimeNs t1 = t0 + static_cast<TimeNs>(rng() % 200);
      for (TrackId track = 0; track < t.tracks().size(); ++track) {
        const RowRange all = t.rows_of(TableId::ranges, track);
        const RowRange got = t.rows_overlapping(TableId::ranges, track, t0, t1);
        RowIndex first = kNoRow;
        for (RowIndex i = all.begin; i < all.end; ++i) {
          const bool overlaps = g.start[i] <= t1 && g.end[i] >= t0;
          if (overlaps && first == kNoRow) first = i;
          if (overlaps) {
            EXPECT_TRUE(i >= got.begin && i < got.end) << "missed row " << i;
          }
          if (i >= got.begin && i < got.end) {
            EXPECT_LE(g.start[i], t1);
          }
        }
        if (first != kNoRow) {
          EXPECT_EQ(got.begin, first) << "window [" << t0 << "," << t1 << "]";
        }
      }
    }
  }
}

// The search from a hint returns the same rows as the one without, whatever
// the hint and wherever the windows go (forward, as a pass over steps moves,
// and back), on tracks of disjoint kernels and of nested ranges longer than
// a block of the index.
TEST(TraceBuilder, RowsOverlappingFromAHintIsTheSame) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    const Trace t = random_tracks(rng, 400, 5000, 50, 2000);
    for (TableId table : {TableId::kernels, TableId::ranges}) {
      const TrackId track = table == TableId::kernels ? 0 : 1;
      RowIndex hint = static_cast<RowIndex>(rng() % 500);
      TimeNs t0 = -100;
      for (int q = 0; q < 60; ++q) {
        t0 = rng() % 4 == 0 ? static_cast<TimeNs>(rng() % 5200) - 100 : t0 + static_cast<TimeNs>(rng() % 200);
        const TimeNs t1 = t0 + static_cast<TimeNs>(rng() % 200) - 10;
        const RowRange want = t.rows_overlapping(table, track, t0, t1);
        const RowRange got = t.rows_overlapping(table, track, t0, t1, &hint);
        EXPECT_EQ(got.begin, want.begin) << "window [" << t0 << "," << t1 << "]";
        EXPECT_EQ(got.end, want.end) << "window [" << t0 << "," << t1 << "]";
        EXPECT_EQ(hint, got.begin);
      }
    }
  }
}

// A window starting near the earliest time on a track of nested ranges: the
// search start (window start minus the longest range) saturates instead of
// wrapping around to the latest time, so every row is still found.
TEST(TraceBuilder, RowsOverlappingAtTheEarliestTimes) {
  constexpr TimeNs kMin = -kMaxPlausibleTime;  // the earliest time a trace holds
  TraceBuilder b;
  const TrackId c = b.cpu_track(1, 1);
  for (const auto& [s, e] : {std::pair<TimeNs, TimeNs>{kMin + 10, kMin + 1000}, {kMin + 20, kMin + 30}}) {
    RangeRow r;
    r.track = c;
    r.start = s;
    r.end = e;
    b.add_range(r);
  }
  const Trace t = b.freeze();
  const RowRange got = t.rows_overlapping(TableId::ranges, 0, kMin + 5, std::numeric_limits<TimeNs>::max());
  EXPECT_EQ(got.begin, 0u);
  EXPECT_EQ(got.end, 2u);
}

TEST(TraceMeta, StatsAndProperties) {
  TraceMeta m;
  EXPECT_EQ(m.stat("x"), 0u);
  m.add_stat("x", 2);
  m.add_stat("x", 3);
  EXPECT_EQ(m.stat("x"), 5u);
  m.set_stat("x", 1);
  EXPECT_EQ(m.stat("x"), 1u);
  m.set_property("host", "a");
  m.set_property("host", "b");
  EXPECT_EQ(m.property("host"), "b");
  EXPECT_EQ(m.properties.size(), 1u);
}

}  // namespace
}  // namespace gpuscope
