// When a session records: delay, duration and capture ranges, on a fake clock.
#include "capture/recording_policy.h"

#include <gtest/gtest.h>

namespace gpuscope::capture {
namespace {

using Action = RecordingPolicy::Action;
using Clock = RecordingPolicy::Clock;
using std::chrono::milliseconds;
const Clock::time_point t0{};

// Applies an action the way the controller does when CUPTI accepts it.
Action apply(RecordingPolicy& p, Action a, Clock::time_point now) {
  if (a == Action::begin) p.begun(now);
  return a;
}

TEST(RecordingPolicy, WholeRunBeginsAtOnceAndStopsAtStop) {
  RecordingPolicy p(CaptureRange::Kind::whole_run, 0, 0, t0);
  EXPECT_EQ(apply(p, p.on_tick(t0), t0), Action::begin);
  EXPECT_TRUE(p.recording());
  EXPECT_EQ(p.on_tick(t0 + milliseconds(5000)), Action::none);  // no duration: runs on
  EXPECT_EQ(p.stop(), Action::end);
  EXPECT_FALSE(p.recording());
  EXPECT_EQ(p.on_tick(t0 + milliseconds(6000)), Action::none);  // stopped for good
  EXPECT_EQ(p.stop(), Action::none);
}

TEST(RecordingPolicy, DelayThenDuration) {
  RecordingPolicy p(CaptureRange::Kind::whole_run, 1.5, 2.0, t0);
  EXPECT_EQ(p.on_tick(t0), Action::none);
  EXPECT_EQ(p.on_tick(t0 + milliseconds(1499)), Action::none);
  const auto begin = t0 + milliseconds(1500);
  EXPECT_EQ(apply(p, p.on_tick(begin), begin), Action::begin);
  EXPECT_EQ(p.on_tick(begin + milliseconds(1999)), Action::none);
  EXPECT_EQ(p.on_tick(begin + milliseconds(2000)), Action::end);
  EXPECT_FALSE(p.recording());
  EXPECT_TRUE(p.expired());
  EXPECT_TRUE(p.ever_recorded());
  EXPECT_EQ(p.on_tick(begin + milliseconds(9000)), Action::none);  // never again
  EXPECT_EQ(p.stop(), Action::none);
}

TEST(RecordingPolicy, ProfilerApiRangesRecordOnlyInside) {
  RecordingPolicy p(CaptureRange::Kind::cuda_profiler_api, 0, 0, t0);
  EXPECT_EQ(p.on_tick(t0), Action::none);       // waits for cudaProfilerStart
  EXPECT_EQ(p.on_range_end(t0), Action::none);  // a stop without a start changes nothing
  EXPECT_EQ(apply(p, p.on_range_begin(t0 + milliseconds(10)), t0 + milliseconds(10)), Action::begin);
  EXPECT_EQ(p.on_tick(t0 + milliseconds(20)), Action::none);
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(30)), Action::end);
  EXPECT_FALSE(p.recording());
  // A second pair records again.
  EXPECT_EQ(apply(p, p.on_range_begin(t0 + milliseconds(40)), t0 + milliseconds(40)), Action::begin);
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(50)), Action::end);
  EXPECT_FALSE(p.expired());
}

TEST(RecordingPolicy, NestedOrConcurrentRangesEndWithTheLast) {
  RecordingPolicy p(CaptureRange::Kind::nvtx, 0, 0, t0);
  EXPECT_EQ(apply(p, p.on_range_begin(t0), t0), Action::begin);
  EXPECT_EQ(p.on_range_begin(t0 + milliseconds(1)), Action::none);  // another thread's "step"
  EXPECT_EQ(p.open_ranges(), 2);
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(2)), Action::none);
  EXPECT_TRUE(p.recording());
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(3)), Action::end);
}

TEST(RecordingPolicy, ARangeOpenedDuringTheDelayBeginsWhenTheDelayEnds) {
  RecordingPolicy p(CaptureRange::Kind::nvtx, 1.0, 0, t0);
  EXPECT_EQ(p.on_range_begin(t0 + milliseconds(100)), Action::none);
  EXPECT_EQ(p.on_tick(t0 + milliseconds(900)), Action::none);
  EXPECT_EQ(apply(p, p.on_tick(t0 + milliseconds(1000)), t0 + milliseconds(1000)), Action::begin);
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(1500)), Action::end);
  // A range that opens and closes inside the delay records nothing.
  RecordingPolicy q(CaptureRange::Kind::nvtx, 1.0, 0, t0);
  EXPECT_EQ(q.on_range_begin(t0 + milliseconds(100)), Action::none);
  EXPECT_EQ(q.on_range_end(t0 + milliseconds(200)), Action::none);
  EXPECT_EQ(q.on_tick(t0 + milliseconds(1100)), Action::none);
  EXPECT_FALSE(q.ever_recorded());
}

TEST(RecordingPolicy, DurationCountsFromTheFirstBeginAcrossRanges) {
  RecordingPolicy p(CaptureRange::Kind::cuda_profiler_api, 0, 1.0, t0);
  EXPECT_EQ(apply(p, p.on_range_begin(t0), t0), Action::begin);
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(400)), Action::end);
  EXPECT_EQ(apply(p, p.on_range_begin(t0 + milliseconds(600)), t0 + milliseconds(600)), Action::begin);
  EXPECT_EQ(p.on_tick(t0 + milliseconds(1000)), Action::end);  // 1 s after the first begin
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(1100)), Action::none);
  EXPECT_EQ(p.on_range_begin(t0 + milliseconds(1200)), Action::none);  // expired
}

TEST(RecordingPolicy, ADurationThatEndsBetweenRangesEndsRecordingForGood) {
  RecordingPolicy p(CaptureRange::Kind::nvtx, 0, 1.0, t0);
  EXPECT_EQ(apply(p, p.on_range_begin(t0), t0), Action::begin);
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(300)), Action::end);
  // The duration runs out while no range is open, before any poll sees it.
  EXPECT_EQ(p.on_range_begin(t0 + milliseconds(1200)), Action::none);
  EXPECT_FALSE(p.recording());
  EXPECT_TRUE(p.expired());
  EXPECT_EQ(p.on_range_end(t0 + milliseconds(1300)), Action::none);
  EXPECT_EQ(p.on_tick(t0 + milliseconds(1400)), Action::none);
  // A poll after the duration, with no range open, ends it for good too.
  RecordingPolicy q(CaptureRange::Kind::cuda_profiler_api, 0, 0.5, t0);
  EXPECT_EQ(apply(q, q.on_range_begin(t0), t0), Action::begin);
  EXPECT_EQ(q.on_range_end(t0 + milliseconds(100)), Action::end);
  EXPECT_EQ(q.on_tick(t0 + milliseconds(600)), Action::none);
  EXPECT_TRUE(q.expired());
}

TEST(RecordingPolicy, AFailedBeginIsNotRetried) {
  RecordingPolicy p(CaptureRange::Kind::whole_run, 0, 0, t0);
  EXPECT_EQ(p.on_tick(t0), Action::begin);
  p.begin_failed();
  EXPECT_EQ(p.on_tick(t0 + milliseconds(20)), Action::none);
  EXPECT_EQ(p.on_tick(t0 + milliseconds(40)), Action::none);
  EXPECT_FALSE(p.ever_recorded());
}

}  // namespace
}  // namespace gpuscope::capture
