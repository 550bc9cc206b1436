// Host samples in the viewer: the index's per-thread sample arrays (the
// marks of kHostSampleDomain, split into frames once), the samples row and
// its flame chart, the tooltip and details of a sample, and where the host
// was during each idle cause in the Findings tab. On a real Nsight Systems
// export (CloverLeaf on an A100: 1,531 samples on thread "cuda-cloverleaf").
#include <gtest/gtest.h>

#include <string>

#include "export/report_text.h"
#include "import/open_trace.h"
#include "support/real_traces.h"
#include "viewer/timeline_index.h"
#include "viewer/view_fixture.h"

namespace gpuscope::viewer {
namespace {

const Trace& cloverleaf() {
  static const Trace t = open_trace(testing::real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite"));
  return t;
}

std::string joined(const TimelineIndex& ix, const ThreadSamples& s, std::size_t i) {
  std::string out;
  for (std::uint32_t f : s.stack(i)) out += (out.empty() ? "" : ";") + ix.frame_names()[f];
  return out;
}

TEST(Samples, TheIndexHoldsEachThreadsSamplesSplitIntoFrames) {
  const Trace& t = cloverleaf();
  const TimelineIndex ix = TimelineIndex::build(t);
  // A samples row on each thread with samples: the most on "cuda-cloverleaf".
  ASSERT_GE(ix.samples().size(), 1u);
  const TrackInfo* info = nullptr;
  std::size_t total = 0;
  for (const TrackInfo& ti : ix.tracks()) {
    if (ti.samples < 0) continue;
    const std::size_t n = ix.samples()[static_cast<std::size_t>(ti.samples)].size();
    total += n;
    if (!info || n > ix.samples()[static_cast<std::size_t>(info->samples)].size()) info = &ti;
  }
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(total, 1531u);
  EXPECT_NE(info->label.find("cuda-cloverleaf"), std::string::npos) << info->label;
  EXPECT_EQ(info->rows.back().kind, RowKind::samples);
  const ThreadSamples& s = ix.samples()[static_cast<std::size_t>(info->samples)];
  EXPECT_GT(s.max_depth, 1u);
  EXPECT_GT(s.cap, 0);
  // Every sample mark of the trace is there, once, with its time and stack;
  // none is left on the thread's range rows.
  const StringId domain = t.strings().find(kHostSampleDomain);
  const RangeTable& r = t.ranges();
  std::size_t marks = 0;
  for (std::size_t row = 0; row < r.size(); ++row) {
    if (r.domain[row] != domain || r.kind_at(row) != RangeKind::mark) continue;
    ++marks;
    const ThreadSamples* of = nullptr;
    std::size_t i = 0;
    ASSERT_TRUE(ix.sample_of(t, static_cast<RowIndex>(row), &of, &i)) << row;
    EXPECT_EQ(of->time[i], r.start[row]);
    std::string name(t.str(r.name[row]));
    // Empty frames are skipped when split.
    std::string expect;
    for (std::size_t at = 0; at <= name.size();) {
      std::size_t semi = std::min(name.find(';', at), name.size());
      if (semi > at) expect += (expect.empty() ? "" : ";") + name.substr(at, semi - at);
      at = semi + 1;
    }
    EXPECT_EQ(joined(ix, *of, i), expect.empty() ? "?" : expect);
  }
  EXPECT_EQ(marks, 1531u);
  for (std::size_t i = 1; i < s.size(); ++i) ASSERT_LE(s.time[i - 1], s.time[i]);
  for (const TrackRow& row : info->rows)
    for (const LaneSegment& seg : row.segments)
      for (RowIndex p = seg.begin; p < seg.stop; ++p)
        if (seg.table == TableId::ranges) {
          ASSERT_NE(r.domain[seg.row(p)], domain);
        }
}

class SampleView : public ViewTest {
 protected:
  void SetUp() override {
    ViewTest::SetUp();
    ImGui::GetIO().DisplaySize = ImVec2(1280, 2400);  // every track on screen
    auto d = std::make_shared<Document>("cloverleaf.sqlite",
                                        open_trace(testing::real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite")));
    d->set_profile(std::make_shared<const Profile>(compute_profile(d->trace())));
    doc_ = d;
    view_.set_document(d);
    frames(view_, 3);
  }
  // The thread with the most samples ("cuda-cloverleaf"), as drawn.
  const TrackStats* sample_track() const {
    const TrackStats* best = nullptr;
    for (const TrackStats& ts : view_.stats().tracks)
      if (ts.samples > 0 && (!best || ts.samples > best->samples)) best = &ts;
    return best;
  }
  const ThreadSamples& samples() const {
    const TrackStats* ts = sample_track();
    return doc_->index().samples()[static_cast<std::size_t>(doc_->index().track_info(ts->track)->samples)];
  }
  std::shared_ptr<Document> doc_;
  View view_;
};

TEST_F(SampleView, TheSamplesRowShowsEverySampleAndZoomedInTheirFrames) {
  const TrackStats* ts = sample_track();
  ASSERT_NE(ts, nullptr);
  std::uint64_t total = 0;
  for (const TrackStats& t : view_.stats().tracks) total += t.samples;
  EXPECT_EQ(total, 1531u);
  EXPECT_NE(ts->label.find("cuda-cloverleaf"), std::string::npos) << ts->label;
  EXPECT_GT(ts->samples_drawn, 0u);
  EXPECT_LE(ts->samples_drawn, ts->samples);
  EXPECT_EQ(ts->flame_rows, 0u);  // zoomed out: ticks only
  const ThreadSamples& s = samples();
  const std::size_t mid = s.size() / 2;
  view_.zoom_to(s.time[mid] - 5 * s.cap, s.time[mid] + 5 * s.cap);
  frames(view_, 2);
  ts = sample_track();
  ASSERT_NE(ts, nullptr);
  EXPECT_GT(ts->flame_rows, 0u);
  EXPECT_GT(ts->flame_boxes, 0u);
  EXPECT_LT(ts->samples_drawn, 40u);
}

TEST_F(SampleView, HoveringASampleShowsItsStackAndSelectingItTheWholeStack) {
  ASSERT_NE(sample_track(), nullptr);
  const ThreadSamples& s = samples();
  const std::size_t mid = s.size() / 2;
  view_.zoom_to(s.time[mid] - 5 * s.cap, s.time[mid] + 5 * s.cap);
  frames(view_, 2);
  const TrackStats* ts = sample_track();
  ASSERT_NE(ts, nullptr);
  const FrameStats& st = view_.stats();
  const float x = st.timeline_x0 +
                  static_cast<float>(static_cast<double>(s.time[mid] - st.view_start) * st.timeline_width_px /
                                     static_cast<double>(st.view_end - st.view_start)) +
                  1;
  const float y = ts->y + static_cast<float>(ts->rows - 1) * 18 + 8;
  click(view_, x, y);
  const auto stack = s.stack(mid);
  const std::string& leaf = doc_->index().frame_names()[stack.back()];
  EXPECT_NE(view_.stats().tooltip.find("host sample at +"), std::string::npos) << view_.stats().tooltip;
  // Innermost first: the leaf is the first frame line.
  EXPECT_NE(view_.stats().tooltip.find("\n" + leaf), std::string::npos) << view_.stats().tooltip;
  EXPECT_EQ(view_.selection().table, TableId::ranges);
  EXPECT_EQ(view_.selection().row, s.rows[mid]);
  frames(view_, 2);
  std::vector<std::string> frames_shown;
  for (const auto& [k, v] : view_.stats().details)
    if (k == "innermost" || k == "outermost" || k == "frame") frames_shown.push_back(v);
  ASSERT_EQ(frames_shown.size(), stack.size());
  for (std::size_t k = 0; k < stack.size(); ++k)
    EXPECT_EQ(frames_shown[k], doc_->index().frame_names()[stack[stack.size() - 1 - k]]);
}

TEST_F(SampleView, TheFindingsTabSaysWhereTheHostWasDuringEachIdleCause) {
  auto p = std::make_shared<Profile>(*doc_->profile());
  if (p->idle_charges.empty()) p->idle_charges.push_back(IdleCharge{});
  p->idle_charges.front().cause = "host-sync";
  p->idle_charges.front().ns = 2'000'000;
  HostWhere w;
  w.cause = "host-sync";
  w.samples = 40;
  w.threads = 1;
  w.thread = "cuda-cloverleaf";
  w.path = {"main", "MPI_Waitall"};
  w.path_samples = 30;
  w.path_depth = 2;
  p->host_while_idle.push_back(w);
  doc_->set_profile(p);
  view_.show(Panel::findings);
  frames(view_, 3);
  const auto& lines = view_.stats().host_idle_lines;
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(std::find(lines.begin(), lines.end(), host_where_line(w)), lines.end());
  EXPECT_EQ(lines.size(), p->host_while_idle.size());
  EXPECT_EQ(view_.stats().idle_rows.size(), p->idle_charges.size());
}

}  // namespace
}  // namespace gpuscope::viewer
