// The layout a user sizes: the label column's edge and the bottom panel's
// splitter dragged through ImGui; names cut with "…" and whole in a
// tooltip; the sizes and the tables' columns kept in ImGui's ini text and
// read back by a new viewer.
#include <gtest/gtest.h>

#include "viewer/view_fixture.h"

namespace gpuscope::viewer {
namespace {

class LayoutTest : public ViewTest {
 protected:
  static std::shared_ptr<Document> long_names_doc() {
    testing::TraceFactory f;
    f.device(0);
    TraceBuilder& b = f.builder();
    f.kernel(0, 7, "k", 0, 1'000'000);
    // A thread with a long name: its track label does not fit a narrow column.
    b.set_track_name(b.cpu_track(testing::TraceFactory::kPid, 1), "DataLoaderWorkerWithAVeryLongThreadNameIndeed");
    auto d = std::make_shared<Document>("names.gscope", f.build());
    d->set_profile(std::make_shared<const Profile>(compute_profile(d->trace())));
    return d;
  }
};

TEST_F(LayoutTest, TheLabelColumnIsDraggedWiderAndNarrowerAndLabelsEndInAnEllipsis) {
  View v;
  v.set_document(long_names_doc());
  frames(v, 2);
  const float x0 = v.stats().timeline_x0, w0 = v.stats().label_width;
  const ClickTarget edge = v.stats().label_splitter;
  drag(v, edge.x, edge.y, edge.x + 120, edge.y);
  frames(v, 1);
  EXPECT_NEAR(v.stats().label_width, w0 + 120, 2);
  EXPECT_NEAR(v.stats().timeline_x0, x0 + 120, 2);
  EXPECT_NEAR(v.layout().label_width, w0 + 120, 2);
  // Narrow: the thread's label is cut with "…", whole in the tooltip.
  const ClickTarget edge2 = v.stats().label_splitter;
  drag(v, edge2.x, edge2.y, edge2.x - 220, edge2.y);
  frames(v, 1);
  EXPECT_NEAR(v.stats().label_width, w0 - 100, 2);
  const TrackStats* thread = nullptr;
  for (const TrackStats& t : v.stats().tracks)
    if (t.label.find("VeryLong") != std::string::npos) thread = &t;
  ASSERT_NE(thread, nullptr);
  EXPECT_TRUE(thread->label_shown.ends_with("\xE2\x80\xA6")) << thread->label_shown;
  EXPECT_LT(ImGui::CalcTextSize(thread->label_shown.c_str()).x, v.stats().label_width);
}

TEST_F(LayoutTest, TheBottomPanelSplitterSetsItsHeight) {
  View v;
  v.set_document(long_names_doc());
  v.show(Panel::hotspots);
  frames(v, 2);
  const float h0 = v.stats().bottom_height;
  const ClickTarget bar = v.stats().bottom_splitter;
  drag(v, bar.x, bar.y, bar.x, bar.y + 150);
  frames(v, 1);
  EXPECT_NEAR(v.stats().bottom_height, h0 - 150, 3);
}

TEST_F(LayoutTest, TheLayoutAndTheTablesColumnsAreRememberedInTheIniText) {
  std::string ini;
  float width = 0, height = 0;
  {
    View v;
    v.register_layout_settings();
    v.set_document(long_names_doc());
    v.show(Panel::hotspots);
    frames(v, 2);
    const ClickTarget edge = v.stats().label_splitter;
    drag(v, edge.x, edge.y, edge.x + 80, edge.y);
    const ClickTarget bar = v.stats().bottom_splitter;
    drag(v, bar.x, bar.y, bar.x, bar.y + 100);
    frames(v, 2);
    width = v.layout().label_width;
    height = v.layout().panel_fraction;
    ini = ImGui::SaveIniSettingsToMemory();
  }
  EXPECT_NE(ini.find("[GpuscopeView][Layout]"), std::string::npos) << ini;
  EXPECT_NE(ini.find("[Table]["), std::string::npos) << "the tables' columns are saved too";
  // A new viewer (a new ImGui context) reads it back.
  ImGui::DestroyContext();
  SetUp();
  View v2;
  v2.register_layout_settings();
  ImGui::LoadIniSettingsFromMemory(ini.c_str(), ini.size());
  EXPECT_NEAR(v2.layout().label_width, width, 1);
  EXPECT_NEAR(v2.layout().panel_fraction, height, 0.002);
  v2.set_document(long_names_doc());
  frames(v2, 2);
  EXPECT_NEAR(v2.stats().label_width, width, 1);
}

}  // namespace
}  // namespace gpuscope::viewer
