#include "viewer/timeline_index.h"

#include <gtest/gtest.h>

#include "support/test_traces.h"

namespace gpuscope::viewer {
namespace {

TEST(TimelineIndex, OneGroupPerGpuThenPerProcessWithActivityLanes) {
  testing::TrainingTraceOptions o;
  o.kernels = 3000;
  o.gpus = 2;
  o.streams = 3;
  const Trace t = testing::training_trace(o);
  const TimelineIndex ix = TimelineIndex::build(t);
  ASSERT_EQ(ix.groups().size(), 4u);
  EXPECT_EQ(ix.groups()[0].kind, TrackKind::gpu);
  EXPECT_EQ(ix.groups()[1].kind, TrackKind::gpu);
  EXPECT_EQ(ix.groups()[2].kind, TrackKind::cpu);
  EXPECT_EQ(ix.groups()[0].label, "GPU 0 · Test GPU 0");
  EXPECT_EQ(ix.groups()[2].label, "Process 1000 · train.py (rank 0)");
  EXPECT_EQ(ix.groups()[0].tracks.size(), 3u);
  EXPECT_EQ(ix.groups()[0].activity, 0);
  EXPECT_EQ(ix.groups()[1].activity, 1);
  EXPECT_EQ(ix.groups()[2].activity, -1);
  ASSERT_EQ(ix.activity().size(), 2u);
  EXPECT_EQ(ix.activity()[1].device(), 1u);
  // Every GPU op and CPU event is in exactly one lane.
  std::uint64_t events = 0;
  for (const TrackInfo& info : ix.tracks()) events += info.events;
  EXPECT_EQ(events,
            t.kernels().size() + t.memcpys().size() + t.api_calls().size() + t.ranges().size() + t.syncs().size());
}

TEST(TimelineIndex, LanesAreSortedAndRangeLanesFollowNestingDepth) {
  testing::TrainingTraceOptions o;
  o.kernels = 2000;
  o.gpus = 1;
  const Trace t = testing::training_trace(o);
  const TimelineIndex ix = TimelineIndex::build(t);
  bool saw_ranges = false, saw_api = false;
  for (const TrackInfo& info : ix.tracks())
    for (const TrackRow& row : info.rows)
      for (const LaneSegment& seg : row.segments) {
        for (RowIndex p = seg.begin; p + 1 < seg.stop; ++p) {
          ASSERT_LE(seg.start[p], seg.start[p + 1]);
          if (seg.ends_sorted) {
            ASSERT_LE(seg.end[p], seg.end[p + 1]);
          }
        }
        if (row.kind == RowKind::ranges) {
          saw_ranges = true;
          for (RowIndex p = seg.begin; p < seg.stop; ++p) ASSERT_EQ(t.ranges().depth[seg.row(p)], row.depth);
          EXPECT_TRUE(seg.ends_sorted);  // one depth never overlaps itself
        }
        if (row.kind == RowKind::api_calls) {
          saw_api = true;
          EXPECT_TRUE(seg.ends_sorted);
        }
      }
  EXPECT_TRUE(saw_ranges);
  EXPECT_TRUE(saw_api);
}

TEST(TimelineIndex, VisibleFindsExactlyTheOverlappingEvents) {
  testing::TrainingTraceOptions o;
  o.kernels = 5000;
  o.gpus = 1;
  o.streams = 2;
  const Trace t = testing::training_trace(o);
  const TimelineIndex ix = TimelineIndex::build(t);
  const LaneSegment& seg = ix.tracks()[0].rows.back().segments[0];
  ASSERT_EQ(seg.table, TableId::kernels);
  const TimeNs t0 = t.kernels().start[seg.begin + 100] + 7, t1 = t0 + 200'000;
  RowIndex lo, hi;
  seg.visible(t0, t1, &lo, &hi);
  for (RowIndex p = seg.begin; p < seg.stop; ++p) {
    const bool overlaps = seg.end[p] >= t0 && seg.start[p] <= t1;
    ASSERT_EQ(overlaps, p >= lo && p < hi) << p;
  }
}

}  // namespace
}  // namespace gpuscope::viewer
