// duration_histogram(): counts, bounds and order checked by brute force on
// hand-made durations; the Histogram tab through ImGui: a click on a bar
// highlights its instances and selects the first, a second click the next.
#include "viewer/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "viewer/view_fixture.h"
#include "words/format.h"

namespace gpuscope::viewer {
namespace {

using testing::TraceFactory;

// "k" kernels with durations 1 µs (×50), 10 µs (×30), 100 µs (×19) and one of 5 ms; "other" between them.
Trace bimodal_trace() {
  TraceFactory f;
  f.device(0);
  TimeNs t = 0;
  auto add = [&](TimeNs d, int n) {
    for (int i = 0; i < n; ++i) {
      f.kernel(0, 7, "k", t, t + d, TraceFactory::kNoLaunch);
      f.kernel(0, 7, "other", t + d + 100, t + d + 600, TraceFactory::kNoLaunch);
      t += d + 1'000;
    }
  };
  add(1'000, 50);
  add(10'000, 30);
  add(100'000, 19);
  add(5'000'000, 1);
  f.range("step", 0, t, 1);
  return f.build();
}

TEST(DurationHistogram, CountsEveryInstanceInTheBinOfItsDuration) {
  const Trace t = bimodal_trace();
  const StringId k = t.strings().find("k");
  const DurationHistogram h = duration_histogram(t, TableId::kernels, k, 32);
  EXPECT_EQ(h.count, 100u);
  EXPECT_EQ(h.min, 1'000);
  EXPECT_EQ(h.max, 5'000'000);
  EXPECT_EQ(h.median, 1'000);  // the 50th of 100 (the lower middle): the last 1 µs one
  EXPECT_EQ(h.p99, 100'000);   // rank 99 of 100
  EXPECT_EQ(h.total, 50 * 1'000 + 30 * 10'000 + 19 * 100'000 + 5'000'000);
  ASSERT_GE(h.bins(), 4u);
  ASSERT_LE(h.bins(), 32u);
  EXPECT_EQ(h.edges.front(), 1'000);
  EXPECT_EQ(h.edges.back(), 5'000'001);
  for (std::size_t i = 1; i < h.edges.size(); ++i) EXPECT_LT(h.edges[i - 1], h.edges[i]);
  // Log-scaled: the bins grow by about the same ratio.
  const double r0 = static_cast<double>(h.edges[1]) / static_cast<double>(h.edges[0]);
  const double r1 = static_cast<double>(h.edges[h.bins()]) / static_cast<double>(h.edges[h.bins() - 1]);
  EXPECT_NEAR(r0, r1, 0.05 * r0);
  std::uint64_t sum = 0;
  std::set<RowIndex> seen;
  for (std::size_t b = 0; b < h.bins(); ++b) {
    sum += h.counts[b];
    const std::vector<RowIndex> rows = h.bin_rows(b);
    EXPECT_EQ(rows.size(), h.counts[b]);
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
    for (RowIndex r : rows) {
      EXPECT_EQ(t.kernels().name[r], k);
      const TimeNs d = t.kernels().end[r] - t.kernels().start[r];
      EXPECT_GE(d, h.edges[b]);
      EXPECT_LT(d, h.edges[b + 1]);
      seen.insert(r);
    }
  }
  EXPECT_EQ(sum, 100u);
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(h.counts[h.bin_of(1'000)], 50u);
  EXPECT_EQ(h.counts[h.bin_of(5'000'000)], 1u);
}

TEST(DurationHistogram, EqualDurationsRangesAndNothing) {
  const Trace t = bimodal_trace();
  const DurationHistogram other = duration_histogram(t, TableId::kernels, t.strings().find("other"));
  EXPECT_EQ(other.count, 100u);
  ASSERT_EQ(other.bins(), 1u);  // every one 500 ns
  EXPECT_EQ(other.counts[0], 100u);
  EXPECT_EQ(other.median, 500);
  const DurationHistogram step = duration_histogram(t, TableId::ranges, t.strings().find("step"));
  EXPECT_EQ(step.count, 1u);
  EXPECT_EQ(step.table, TableId::ranges);
  EXPECT_EQ(duration_histogram(t, TableId::kernels, t.strings().find("step")).count, 0u);
}

class HistogramTab : public ViewTest {};

TEST_F(HistogramTab, AClickOnABarSelectsItsInstancesOneAfterAnother) {
  auto d = std::make_shared<Document>("bimodal.gscope", bimodal_trace());
  View v;
  v.set_document(d);
  frames(v, 2);
  ASSERT_FALSE(v.show_histogram_of("no such name"));
  ASSERT_TRUE(v.show_histogram_of("k"));
  frames(v, 2);
  EXPECT_EQ(v.panel(), Panel::histogram);
  const HistogramStats& hs = v.stats().histogram;
  ASSERT_TRUE(hs.shown);
  EXPECT_EQ(hs.summary, "100 instances · min 1.0 µs · median 1.0 µs · p99 100.0 µs · max 5.0 ms · total 7.2 ms");
  const DurationHistogram& h = *v.histogram();
  const std::size_t b = h.bin_of(10'000);
  ASSERT_LT(b, hs.bins.size());
  EXPECT_EQ(hs.bins[b].count, 30u);
  const HistogramBin bin = hs.bins[b];
  click(v, bin.x, bin.y);
  EXPECT_EQ(v.matches().size(), 30u);
  ASSERT_TRUE(v.selection().valid());
  const Trace& t = v.document()->trace();
  const RowIndex first = v.selection().row;
  EXPECT_EQ(t.kernels().end[first] - t.kernels().start[first], 10'000);
  frames(v, 1);
  EXPECT_EQ(v.stats().histogram.selected_bin, static_cast<std::int64_t>(b));
  const std::string step1 = v.stats().histogram.step;
  click(v, bin.x, bin.y);  // again: the next instance of the bin
  const RowIndex second = v.selection().row;
  EXPECT_NE(second, first);
  EXPECT_GT(t.kernels().start[second], t.kernels().start[first]);
  EXPECT_EQ(t.kernels().end[second] - t.kernels().start[second], 10'000);
  frames(v, 1);
  EXPECT_NE(v.stats().histogram.step, step1);
  // The selected instance is on screen: the view followed it.
  EXPECT_LE(v.view_start(), t.kernels().start[second]);
  EXPECT_GE(v.view_end(), t.kernels().end[second]);
}

// Hotspots > a row's "histogram": the Histogram tab opens on that kernel
// (the tab is drawn before Hotspots: it is selected the next frame).
TEST_F(HistogramTab, TheHotspotRowsButtonOpensTheTab) {
  testing::TrainingTraceOptions o;
  o.kernels = 2'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::hotspots);
  frames(v, 3);
  ASSERT_FALSE(v.stats().hotspot_histogram_targets.empty());
  const ClickTarget t = v.stats().hotspot_histogram_targets[0];
  click(v, t);
  frames(v, 2);
  ASSERT_NE(v.histogram(), nullptr);
  EXPECT_EQ(v.document()->trace().str(v.histogram()->name), t.label);
  EXPECT_EQ(v.panel(), Panel::histogram);
  EXPECT_TRUE(has_panel(v, "histogram"));
  EXPECT_TRUE(v.matches_label().empty()) << "the button does not highlight the row's kernel";
}

}  // namespace
}  // namespace gpuscope::viewer
