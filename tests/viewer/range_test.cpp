// Range selection as a user makes it, through ImGui: a drag on the ruler (or
// Shift+drag on the tracks) selects a range, its length is written on the
// ruler, the Range tab shows its statistics — window_stats() over it, the
// report's numbers — Z zooms to it, a click on the ruler or Esc clears it.
#include <gtest/gtest.h>

#include "analysis/window_stats.h"
#include "viewer/view_fixture.h"
#include "words/format.h"

namespace gpuscope::viewer {
namespace {

class RangeTest : public ViewTest {
 protected:
  // x on screen of time t in the last frame.
  static float x_of(const View& v, TimeNs t) {
    const FrameStats& st = v.stats();
    return st.timeline_x0 +
           static_cast<float>(static_cast<double>(t - v.view_start()) /
                              static_cast<double>(v.view_end() - v.view_start()) * st.timeline_width_px);
  }
  void wait_for_stats(View& v) {
    for (int i = 0; i < 400 && v.busy(); ++i) {
      frame(v);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    frames(v, 2);
  }
};

TEST_F(RangeTest, DragOnTheRulerSelectsARangeAndTheRangeTabShowsItsStatistics) {
  testing::TrainingTraceOptions o;
  o.kernels = 20'000;
  View v;
  v.set_document(doc(o));
  frames(v, 3);
  const FrameStats& st = v.stats();
  const float xa = st.timeline_x0 + 300, xb = st.timeline_x0 + 700;
  const TimeNs view_before = v.view_start();
  drag(v, xa, st.ruler_y, xb, st.ruler_y);
  ASSERT_TRUE(v.range().has_value());
  EXPECT_EQ(v.view_start(), view_before) << "a drag on the ruler selects, it does not pan";
  EXPECT_NEAR(x_of(v, v.range()->start), xa, 1.5);
  EXPECT_NEAR(x_of(v, v.range()->end), xb, 1.5);
  EXPECT_EQ(v.panel(), Panel::range);
  wait_for_stats(v);
  EXPECT_TRUE(has_panel(v, "range"));
  EXPECT_EQ(v.stats().range_length, format::duration(v.range()->duration()));
  EXPECT_NEAR(v.stats().range_band.first, xa, 1.5);
  EXPECT_NEAR(v.stats().range_band.second, xb, 1.5);
  EXPECT_EQ(v.stats().range_status, "done");
  // The tab's numbers are window_stats() over the range, as written by the report's formatter.
  const WindowStats want = window_stats(v.document()->trace(), *v.range());
  ASSERT_EQ(v.stats().range_device_rows.size(), want.devices.size());
  for (std::size_t i = 0; i < want.devices.size(); ++i) {
    const auto& row = v.stats().range_device_rows[i];
    EXPECT_EQ(row[1], format::duration(want.devices[i].busy_ns));
    EXPECT_EQ(row[3], format::percent1(want.devices[i].utilization));
    EXPECT_EQ(row[4], format::percent1(want.devices[i].kernel_concurrency));
  }
  ASSERT_FALSE(v.stats().range_kernel_rows.empty());
  EXPECT_EQ(v.stats().range_kernel_rows[0][1], format::count(want.kernel_names[0].count));
  EXPECT_EQ(v.stats().range_kernel_rows[0][2], format::duration(want.kernel_names[0].total_ns));

  // Z: the view shows the range, with a little air.
  key(v, 'Z');
  EXPECT_LE(v.view_start(), v.range()->start);
  EXPECT_GE(v.view_end(), v.range()->end);
  EXPECT_LT(v.view_end() - v.view_start(), v.range()->duration() * 12 / 10);
  // A click on the ruler clears it.
  frames(v, 1);
  click(v, v.stats().timeline_x0 + 50, v.stats().ruler_y);
  EXPECT_FALSE(v.range().has_value());
}

TEST_F(RangeTest, ShiftDragOnTheTracksSelectsARangeAndEscClearsIt) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  frames(v, 3);
  const FrameStats& st = v.stats();
  ASSERT_FALSE(st.tracks.empty());
  const float y = st.tracks.front().y + 5;
  const TimeNs view_before = v.view_start();
  drag(v, st.timeline_x0 + 100, y, st.timeline_x0 + 400, y, /*shift=*/true);
  ASSERT_TRUE(v.range().has_value());
  EXPECT_EQ(v.view_start(), view_before) << "Shift+drag selects, it does not pan";
  EXPECT_NEAR(x_of(v, v.range()->start), st.timeline_x0 + 100, 1.5);
  // Without Shift the same drag pans, and leaves the range.
  const TimeRange r = *v.range();
  drag(v, st.timeline_x0 + 400, y, st.timeline_x0 + 300, y);
  EXPECT_NE(v.view_start(), view_before);
  EXPECT_EQ(*v.range(), r);
  constexpr int kEscape = 301;  // any free slot of io.KeysDown, mapped like a backend would
  ImGui::GetIO().KeyMap[ImGuiKey_Escape] = kEscape;
  key(v, kEscape);
  EXPECT_FALSE(v.range().has_value());
}

}  // namespace
}  // namespace gpuscope::viewer
