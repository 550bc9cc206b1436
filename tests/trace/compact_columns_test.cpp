// Compact columns (trace/tables.h): a frozen table's track kept as where each
// track's rows begin, an API call's callback id as one value per call name
// where it is a function of the name. Every reader sees the rows' values.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "support/api_call_row.h"
#include "trace/builder.h"

namespace gpuscope {
namespace {

// The rows' values a GroupedColumn gives back equal the rows it compacted,
// for groups of every size: empty ones, one row, many per block, spanning blocks.
TEST(GroupedColumn, GivesBackEveryRowsValue) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    const std::uint32_t groups = 1 + rng() % 3000;
    std::vector<std::uint32_t> count(groups);
    for (auto& c : count) c = rng() % 4 == 0 ? 0 : (rng() % 2 ? rng() % 5 : rng() % 5000);
    detail::GroupedColumn<TrackId> col;
    std::vector<std::uint32_t> begin{0};
    for (std::uint32_t g = 0; g < groups; ++g) {
      for (std::uint32_t i = 0; i < count[g]; ++i) col.push_back(g);
      begin.push_back(static_cast<std::uint32_t>(col.size()));
    }
    const std::vector<TrackId> rows(col.begin(), col.end());
    col.compact(begin);
    if (rows.empty()) continue;
    ASSERT_TRUE(col.compacted());
    EXPECT_TRUE(col.empty());
    for (std::size_t i = 0; i < rows.size(); ++i)
      ASSERT_EQ(col.value(i), rows[i]) << "row " << i << ", round " << round;
    std::vector<TrackId> expanded;
    KernelTable unused;
    detail::expand_rows(unused, col, 0, rows.size(), expanded);
    EXPECT_EQ(expanded, rows);
  }
}

ApiCallRow call(TrackId track, TimeNs start, StringId name, std::uint32_t cbid) {
  return testing::api_call_row(track, start, name, cbid);
}

TEST(CompactColumns, FrozenTableKeepsNoTrackColumnAndEveryRowKeepsItsTrack) {
  TraceBuilder b;
  std::mt19937 rng(3);
  std::vector<TrackId> gpu, cpu;
  for (std::uint32_t s = 0; s < 40; ++s) gpu.push_back(b.gpu_track(s % 3, 40 - s));
  for (std::uint32_t s = 0; s < 40; ++s) cpu.push_back(b.cpu_track(1, 40 - s));
  const StringId name = b.intern("k");
  // Each row's start identifies it: start = row number.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> kernel_where, call_where;  // (device, stream), (pid, tid)
  for (TimeNs i = 0; i < 5000; ++i) {
    const TrackId g = gpu[rng() % (rng() % 2 ? gpu.size() : 2)];
    KernelRow k;
    k.track = g;
    k.start = i;
    k.end = i + 1;
    k.name = name;
    b.add_kernel(k);
    kernel_where.push_back({b.tracks()[g].device, b.tracks()[g].stream});
    const TrackId c = cpu[rng() % cpu.size()];
    b.add_api_call(call(c, i, name, 0));
    call_where.push_back({b.tracks()[c].pid, b.tracks()[c].tid});
  }
  const Trace t = b.freeze();
  EXPECT_TRUE(t.kernels().track.empty());
  EXPECT_TRUE(t.kernels().track.compacted());
  EXPECT_TRUE(t.api_calls().track.empty());
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const Track& tr = t.tracks()[t.kernels().track_at(i)];
    ASSERT_EQ(std::make_pair(tr.device, tr.stream), kernel_where[t.kernels().start[i]]) << "kernel " << i;
    const Track& ct = t.tracks()[t.api_calls().track_at(i)];
    ASSERT_EQ(std::make_pair(ct.pid, ct.tid), call_where[t.api_calls().start[i]]) << "call " << i;
  }
  // Each track's rows (the index) name that track.
  for (TrackId track = 0; track < t.tracks().size(); ++track)
    for (const TableId table : {TableId::kernels, TableId::api_calls}) {
      const RowRange r = t.rows_of(table, track);
      for (RowIndex i = r.begin; i < r.end; ++i)
        ASSERT_EQ(table == TableId::kernels ? t.kernels().track_at(i) : t.api_calls().track_at(i), track);
    }
}

TEST(CompactColumns, CallbackIdsKeptPerNameWhenAFunctionOfTheName) {
  TraceBuilder b;
  const TrackId c = b.cpu_track(1, 1);
  const StringId launch = b.intern("cudaLaunchKernel"), copy = b.intern("cudaMemcpyAsync"), none = b.intern("x");
  for (TimeNs i = 0; i < 300; ++i) {
    b.add_api_call(call(c, 3 * i, launch, 211));
    b.add_api_call(call(c, 3 * i + 1, copy, 41));
    b.add_api_call(call(c, 3 * i + 2, none, 0));
  }
  const Trace t = b.freeze();
  const ApiCallTable& a = t.api_calls();
  EXPECT_TRUE(a.cbid.empty());
  EXPECT_TRUE(a.cbid.compacted());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::uint32_t want = a.name[i] == launch ? 211 : a.name[i] == copy ? 41 : 0;
    ASSERT_EQ(a.cbid_at(i), want) << "call " << i;
  }
}

TEST(CompactColumns, CallbackIdsKeptPerRowWhenNotAFunctionOfTheName) {
  TraceBuilder b;
  const TrackId c = b.cpu_track(1, 1);
  const StringId launch = b.intern("cudaLaunchKernel");
  for (TimeNs i = 0; i < 300; ++i) b.add_api_call(call(c, i, launch, i == 150 ? 7 : 211));
  const Trace t = b.freeze();
  const ApiCallTable& a = t.api_calls();
  EXPECT_FALSE(a.cbid.compacted());
  ASSERT_EQ(a.cbid.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.cbid_at(i), i == 150 ? 7u : 211u);
}

}  // namespace
}  // namespace gpuscope
