// The Compare view through ImGui: B's tracks drawn under A's on A's time
// axis (B moved so its first step starts where A's does, or its start where
// A's does), and the Compare tab's kernel, op, finding and answer tables
// holding what `gpuscope diff` computes (diff_profiles), sortable by any column.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "analysis/diff.h"
#include "viewer/view_fixture.h"
#include "words/format.h"

namespace gpuscope::viewer {
namespace {

class CompareView : public ViewTest {
 protected:
  // A: two GPUs from 1 ms; B: one GPU, other kernels, from 50 ms.
  void open_both(View& v) {
    testing::TrainingTraceOptions a;
    a.kernels = 3'000;
    v.set_document(doc(a));
    v.open_compare_with("b.gscope", [](const LoadProgress&) {
      testing::TrainingTraceOptions b;
      b.kernels = 2'000;
      b.gpus = 1;
      b.seed = 7;
      b.start = 50'000'000;
      return testing::training_trace(b);
    });
    wait_idle(v);
    frames(v, 4);  // fixed-fit columns take their widths over the first frames
    ASSERT_NE(v.compare_document(), nullptr);
    ASSERT_NE(v.compare_document()->profile(), nullptr);
  }
  static TimeNs first_step(const Profile& p) {
    TimeNs t = std::numeric_limits<TimeNs>::max();
    for (const Step& s : p.steps.steps) t = std::min(t, s.range.start);
    return t;
  }
  // A click on each of A's GPU headers (one at a time: each moves those below).
  void collapse_as_gpus(View& v) {
    for (bool more = true; more;) {
      more = false;
      for (const GroupStats& g : v.stats().groups)
        if (g.label.starts_with("GPU ") && !g.collapsed) {
          click(v, 30, g.y + 5);
          frame(v);
          more = true;
          break;
        }
    }
  }
  // GPU ops of B drawn one by one or folded on B's visible tracks.
  static std::uint64_t b_gpu_ops(const View& v) {
    std::uint64_t n = 0;
    for (const TrackStats& ts : v.stats().tracks)
      if (ts.compared && ts.visible) n += ts.gpu_ops[0] + ts.gpu_ops[1] + ts.gpu_ops[2];
    return n;
  }
  // B's GPU ops on B's visible GPU tracks that overlap [start, end) of B's own clock.
  static std::uint64_t b_gpu_ops_in(const View& v, TimeNs start, TimeNs end) {
    const Trace& t = v.compare_document()->trace();
    std::uint64_t n = 0;
    for (const TrackStats& ts : v.stats().tracks) {
      if (!ts.compared || !ts.visible || t.tracks()[ts.track].kind != TrackKind::gpu) continue;
      for (TableId table : {TableId::kernels, TableId::memcpys, TableId::memsets})
        n += t.rows_overlapping(table, ts.track, start, end).size();
    }
    return n;
  }
};

TEST_F(CompareView, BsTracksAreDrawnUnderAsAlignedOnTheFirstStep) {
  View v;
  open_both(v);
  const Profile& pa = *v.document()->profile();
  const Profile& pb = *v.compare_document()->profile();
  ASSERT_FALSE(pa.steps.steps.empty());
  ASSERT_FALSE(pb.steps.steps.empty());
  EXPECT_TRUE(v.stats().compare_timeline);
  EXPECT_EQ(v.stats().compare_align, "aligned on the first step");
  EXPECT_EQ(v.stats().compare_offset, first_step(pa) - first_step(pb));
  EXPECT_LT(v.stats().compare_offset, 0);  // B ran ~49 ms later

  // A's GPU groups, then B's, then A's hosts, then B's.
  std::vector<std::string> groups;
  for (const GroupStats& g : v.stats().groups) groups.push_back(g.label);
  auto at = [&](std::string_view prefix) {
    return std::find_if(groups.begin(), groups.end(), [&](const std::string& g) { return g.starts_with(prefix); }) -
           groups.begin();
  };
  const auto a_gpu0 = at("GPU 0"), a_gpu1 = at("GPU 1"), b_gpu0 = at("B · GPU 0");
  ASSERT_LT(b_gpu0, static_cast<std::ptrdiff_t>(groups.size())) << ::testing::PrintToString(groups);
  EXPECT_LT(a_gpu0, b_gpu0);
  EXPECT_LT(a_gpu1, b_gpu0);
  EXPECT_EQ(at("B · GPU 1"), static_cast<std::ptrdiff_t>(groups.size()));  // B has one GPU
  for (std::size_t i = static_cast<std::size_t>(b_gpu0) + 1; i < groups.size(); ++i)
    if (!groups[i].starts_with("B · ")) {
      EXPECT_GT(std::find_if(groups.begin() + static_cast<std::ptrdiff_t>(i), groups.end(),
                             [](const std::string& g) { return g.starts_with("B · "); }),
                groups.begin() + static_cast<std::ptrdiff_t>(i))
          << "B's hosts follow A's";
      break;
    }

  // What B draws is what lies under A's view moved back by the offset: B's
  // own clock, not A's. Collapsing A's GPUs brings B's into the window.
  collapse_as_gpus(v);
  const TimeNs off = v.stats().compare_offset;
  const std::uint64_t drawn = b_gpu_ops(v);
  ASSERT_GT(drawn, 0u);
  EXPECT_EQ(drawn, b_gpu_ops_in(v, v.view_start() - off, v.view_end() - off));
  EXPECT_NE(drawn, b_gpu_ops_in(v, v.view_start(), v.view_end()));  // A's clock would show none of B's

  // Aligned on the start instead: B's start on A's.
  v.set_compare_align_by_step(false);
  frames(v, 2);
  EXPECT_EQ(v.stats().compare_align, "aligned on the start");
  EXPECT_EQ(v.stats().compare_offset, v.document()->trace().begin_time() - v.compare_document()->trace().begin_time());
  EXPECT_EQ(b_gpu_ops(v),
            b_gpu_ops_in(v, v.view_start() - v.stats().compare_offset, v.view_end() - v.stats().compare_offset));

  // Off: A's tracks alone.
  v.set_compare_timeline(false);
  frame(v);
  EXPECT_FALSE(v.stats().compare_timeline);
  for (const TrackStats& ts : v.stats().tracks) EXPECT_FALSE(ts.compared);
}

TEST_F(CompareView, NothingOfBIsHoveredOrSelected) {
  View v;
  open_both(v);
  collapse_as_gpus(v);
  const TrackStats* b = nullptr;
  for (const TrackStats& ts : v.stats().tracks)
    if (ts.compared && ts.visible && ts.drawn > 0) b = &ts;
  ASSERT_NE(b, nullptr);
  const float y = b->y + 4;
  v.zoom_to(v.view_start(), v.view_start() + (v.view_end() - v.view_start()) / 50);  // events one by one
  for (float x = v.stats().timeline_x0 + 2; x < v.stats().timeline_x0 + v.stats().timeline_width_px; x += 40) {
    click(v, x, y);
    EXPECT_FALSE(v.selection().valid()) << "a click on B's track at x " << x;
    EXPECT_TRUE(v.stats().tooltip.empty());
  }
}

TEST_F(CompareView, KernelOpAndFindingTablesAreTheDiffsAndSort) {
  View v;
  open_both(v);
  v.show(Panel::compare);
  frames(v, 3);
  EXPECT_EQ(v.stats().compare_table, "categories");
  EXPECT_GT(v.stats().compare_rows, 0u);
  const ProfileDiff d = diff_profiles(*v.document()->profile(), *v.compare_document()->profile(), 50);
  ASSERT_TRUE(d.per_step);

  const ClickTarget* kernels = find_target(v.stats().compare_tabs, "Kernels");
  ASSERT_NE(kernels, nullptr);
  click(v, *kernels);
  frames(v, 3);
  ASSERT_EQ(v.stats().compare_table, "kernels");
  const auto rows = v.stats().compare_list;
  ASSERT_EQ(rows.size(), d.kernels.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {  // the diff's order: largest change first
    EXPECT_EQ(rows[i][0], d.kernels[i].name);
    EXPECT_EQ(rows[i][2], format::duration(d.kernels[i].before_ns));
    EXPECT_EQ(rows[i][3], format::duration(d.kernels[i].after_ns));
    EXPECT_EQ(rows[i][4], format::signed_duration(d.kernels[i].after_ns - d.kernels[i].before_ns));
    EXPECT_EQ(rows[i][5], format::count(d.kernels[i].before_count));
  }
  // A header sorts by its column, largest first, then smallest first.
  const ClickTarget* header = find_target(v.stats().compare_headers, "B count");
  ASSERT_NE(header, nullptr);
  const ClickTarget h = *header;
  auto b_counts = [&] {
    std::vector<std::uint64_t> out;
    for (const auto& r : v.stats().compare_list)
      for (const KernelDelta& k : d.kernels)
        if (k.name == r[0]) out.push_back(k.after_count);
    return out;
  };
  click(v, h);
  frame(v);
  std::vector<std::uint64_t> col = b_counts();
  ASSERT_EQ(col.size(), d.kernels.size());
  EXPECT_TRUE(std::is_sorted(col.rbegin(), col.rend())) << "descending";
  EXPECT_NE(col.front(), col.back());
  click(v, h);
  frame(v);
  col = b_counts();
  EXPECT_TRUE(std::is_sorted(col.begin(), col.end())) << "ascending";

  click(v, *find_target(v.stats().compare_tabs, "Findings"));
  frames(v, 2);
  ASSERT_EQ(v.stats().compare_table, "findings");
  ASSERT_EQ(v.stats().compare_list.size(), d.findings.size());
  for (std::size_t i = 0; i < d.findings.size(); ++i) {
    EXPECT_EQ(v.stats().compare_list[i][0], d.findings[i].id);
    EXPECT_EQ(v.stats().compare_list[i][1], to_string(d.findings[i].change));
  }

  click(v, *find_target(v.stats().compare_tabs, "Answers"));
  frames(v, 2);
  ASSERT_EQ(v.stats().compare_table, "answers");
  ASSERT_FALSE(d.helps.empty());  // one answer changes between these two traces
  ASSERT_EQ(v.stats().compare_list.size(), d.helps.size());
  for (std::size_t i = 0; i < d.helps.size(); ++i) {
    EXPECT_EQ(v.stats().compare_list[i][0], d.helps[i].question);
    if (d.helps[i].in_after) {
      EXPECT_EQ(v.stats().compare_list[i][3], d.helps[i].after_reason);
    }
  }

  click(v, *find_target(v.stats().compare_tabs, "Ops"));
  frames(v, 2);
  ASSERT_EQ(v.stats().compare_table, "ops");
  EXPECT_EQ(v.stats().compare_list.size(), d.ops.size());
}

// B whose analysis failed: the tab says so (not "analysing..." for ever),
// and B's tracks are still drawn, aligned on the start.
TEST_F(CompareView, BWhoseAnalysisFailedIsNamedAndStillDrawn) {
  testing::TrainingTraceOptions o;
  o.kernels = 2'000;
  View v;
  v.set_document(doc(o));
  auto b = doc(o, /*with_profile=*/false);
  b->set_analysis_error("no memory");
  v.set_compare_document(b);
  v.show(Panel::compare);
  frames(v, 3);
  EXPECT_EQ(v.stats().compare_message, "The analysis of B failed (no memory): nothing to compare");
  EXPECT_EQ(v.stats().compare_table, "");
  EXPECT_TRUE(v.stats().compare_timeline);
  EXPECT_EQ(v.stats().compare_align, "aligned on the start (no analysis, no steps)");
  EXPECT_EQ(v.stats().compare_offset, 0);
}

TEST_F(CompareView, ClosingBLeavesATimelineOfItsOwn) {
  View v;
  open_both(v);
  v.close_compare();
  frames(v, 2);
  EXPECT_EQ(v.compare_document(), nullptr);
  EXPECT_FALSE(v.stats().compare_timeline);
  for (const GroupStats& g : v.stats().groups) EXPECT_FALSE(g.label.starts_with("B · ")) << g.label;
}

}  // namespace
}  // namespace gpuscope::viewer
