// The Findings tab through ImGui: a click on a finding shows its first time
// range (zoomed to, its band edged) and highlights its kernels; ] / [ and
// the next / previous buttons step through its ranges one at a time; a
// finding over thousands of kernels leaves the streams readable (close
// matches outlined as one cluster with their count).
#include <gtest/gtest.h>

#include "store/gscope.h"
#include "viewer/colors.h"
#include "viewer/view_fixture.h"

namespace gpuscope::viewer {
namespace {

class FindingsTab : public ViewTest {
 protected:
  static std::shared_ptr<Document> sample() {
    const std::string file = std::string(GPUSCOPE_SOURCE_DIR) + "/assets/sample-report-job.gscope";
    auto d = std::make_shared<Document>(file, read_gscope(file));
    d->set_profile(std::make_shared<const Profile>(compute_profile(d->trace(), file)));
    return d;
  }
  static const Finding* finding(const View& v, std::string_view id) {
    for (const Finding& f : v.document()->profile()->findings)
      if (f.id == id) return &f;
    return nullptr;
  }
  static bool shows(const View& v, TimeRange r) { return v.view_start() <= r.start && v.view_end() >= r.end; }
  // The list scrolled (the wheel over it) until `where()` is on screen; where it is then.
  template <class Where>
  ClickTarget on_screen(View& v, Where where) {
    const float bottom = ImGui::GetIO().DisplaySize.y - 30;
    ClickTarget t = where();
    for (int i = 0; i < 40 && t.y > bottom; ++i) {
      ImGui::GetIO().MousePos = ImVec2(t.x, bottom - 40);
      ImGui::GetIO().MouseWheel = -1;
      frames(v, 2);
      t = where();
    }
    EXPECT_LE(t.y, bottom) << t.label;
    return t;
  }
  void press(View& v, int key_code) {  // a key with no ImGuiKey_ of its own: GLFW's code is its index
    key(v, key_code);
  }
};

TEST_F(FindingsTab, AClickShowsTheFirstRangeAndTheKeysAndButtonsStepThroughThem) {
  View v;
  v.set_document(sample());
  v.show(Panel::findings);
  frames(v, 3);
  const Finding* f = finding(v, "padding-hotspot");
  ASSERT_NE(f, nullptr);
  ASSERT_GE(f->ranges.size(), 3u);
  const ClickTarget* t = find_target(v.stats().finding_targets, "padding-hotspot");
  ASSERT_NE(t, nullptr);
  const ClickTarget title = on_screen(v, [&] { return *find_target(v.stats().finding_targets, "padding-hotspot"); });
  click(v, title);
  frames(v, 2);
  EXPECT_EQ(v.selected_finding(), "padding-hotspot");
  EXPECT_EQ(v.evidence_index(), 0u);
  EXPECT_TRUE(shows(v, f->ranges[0]));
  EXPECT_LT(v.view_end() - v.view_start(), 4 * std::max<TimeNs>(f->ranges[0].duration(), 4'000));
  EXPECT_EQ(v.matches_label(), "finding: padding-hotspot");
  EXPECT_EQ(v.stats().evidence_rows.size(), f->ranges.size());
  EXPECT_EQ(v.stats().evidence_step, "range 1 of " + std::to_string(f->ranges.size()));
  EXPECT_GE(v.stats().evidence_bands, 1u);

  press(v, 93);  // ]
  EXPECT_EQ(v.evidence_index(), 1u);
  EXPECT_TRUE(shows(v, f->ranges[1]));
  frames(v, 1);
  click(v, on_screen(v, [&] { return v.stats().evidence_next; }));
  EXPECT_EQ(v.evidence_index(), 2u);
  EXPECT_TRUE(shows(v, f->ranges[2]));
  press(v, 91);  // [
  press(v, 91);
  EXPECT_EQ(v.evidence_index(), 0u);
  press(v, 91);  // wraps to the last
  EXPECT_EQ(v.evidence_index(), f->ranges.size() - 1);
  EXPECT_TRUE(shows(v, f->ranges.back()));
}

// Zoomed out, the padding finding's kernels (a fifth of every stream) are
// too many to outline: a tick under each and their count per row, where an
// outline every 3 px painted the rows yellow. Zoomed in, each is outlined.
TEST_F(FindingsTab, HighlightingThousandsOfKernelsLeavesTheStreamsReadable) {
  View v;
  v.set_document(sample());
  ImGui::GetIO().DisplaySize = ImVec2(1280, 1400);  // every track on screen
  ASSERT_TRUE(v.select_finding("padding-hotspot"));
  ASSERT_GT(v.matches().size(), 500u);
  v.zoom_to_all();
  frames(v, 2);
  frame(v);
  const FrameStats& st = v.stats();
  EXPECT_EQ(st.matches_in_view, v.matches().size());  // all of them are in the whole trace's view
  // Too many per row to outline: no outline over the events, a tick under
  // each (cluster of) match, and each row's count written at its end.
  const Trace& t = v.document()->trace();
  std::uint64_t rows = 0;
  for (const TrackStats& ts : st.tracks)
    rows += ts.visible && t.tracks()[ts.track].kind == TrackKind::gpu && ts.gpu_ops[0] > 0;
  ASSERT_GT(rows, 0u);
  EXPECT_EQ(st.match_markers + st.match_clusters, 0u);
  EXPECT_GT(st.match_ticks, 0u);
  ASSERT_FALSE(st.match_count_labels.empty());  // the compute streams (the others have no padding kernel)
  EXPECT_LE(st.match_count_labels.size(), rows);
  EXPECT_TRUE(st.match_count_labels[0].starts_with("\xC3\x97")) << st.match_count_labels[0];  // ×N
  // Zoomed into one range, they are few: each outlined.
  v.step_evidence(true);
  frames(v, 2);
  EXPECT_GT(v.stats().match_markers + v.stats().match_clusters, 0u);
  EXPECT_EQ(v.stats().match_ticks, 0u);
  EXPECT_LE(v.stats().matches_in_view, 64u * rows);
}

}  // namespace
}  // namespace gpuscope::viewer
