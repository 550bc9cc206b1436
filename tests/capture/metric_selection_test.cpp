// Hardware metric selection for PM sampling, through CUPTI's profiler host
// API, which works without a GPU: for every chip it lists, the default set
// resolves to metric names the chip has and fits one pass, or each metric
// left out is named with the reason.
#include "capture/metric_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace gpuscope::capture {
namespace {

bool mentions(const std::vector<std::string>& messages, const std::string& word) {
  return std::any_of(messages.begin(), messages.end(),
                     [&](const std::string& m) { return m.find(word) != std::string::npos; });
}

const ChosenMetric* find_id(const MetricSelection& s, const std::string& id) {
  for (const ChosenMetric& m : s.metrics)
    if (m.id == id) return &m;
  return nullptr;
}

TEST(MetricSelection, TheHostApiListsChips) {
  std::string error;
  const auto chips = pm_sampling_chips(&error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_GE(chips.size(), 20u);
  for (const char* known : {"GA100", "GH100", "AD102", "GB100"})
    EXPECT_NE(std::find(chips.begin(), chips.end(), known), chips.end()) << known;
}

TEST(MetricSelection, DefaultSetOnEveryListedChip) {
  const auto chips = pm_sampling_chips();
  ASSERT_FALSE(chips.empty());
  std::size_t supported = 0;
  for (const std::string& chip : chips) {
    SCOPED_TRACE(chip);
    const MetricSelection s = select_metrics(chip, MetricRequest{});
    EXPECT_EQ(s.chip, chip);
    if (!s.supported) {
      // Volta has no PM sampling: the reason names the chip, nothing is chosen.
      EXPECT_NE(s.error.find(chip), std::string::npos) << s.error;
      EXPECT_TRUE(s.metrics.empty());
      EXPECT_TRUE(s.config_image.empty());
      continue;
    }
    ++supported;
    // Every default metric is either chosen (under a name the chip has) or dropped with a message naming it.
    for (const DefaultMetric& d : default_metrics()) {
      const ChosenMetric* m = find_id(s, std::string(d.id));
      const bool dropped = mentions(s.dropped, std::string(d.id) + ":");
      EXPECT_NE(m != nullptr, dropped) << d.id;
      if (!m) continue;
      EXPECT_TRUE(metric_exists(chip, m->name)) << m->name;
      EXPECT_NE(std::find(d.candidates.begin(), d.candidates.end(), m->name), d.candidates.end()) << m->name;
      EXPECT_EQ(m->unit, d.unit);
    }
    EXPECT_EQ(s.metrics.size() + s.dropped.size(), default_metrics().size());
    // The set chosen fits the passes PM sampling allows, and the image says so.
    ASSERT_FALSE(s.metrics.empty()) << s.error;
    EXPECT_FALSE(s.config_image.empty());
    EXPECT_GE(s.passes, 1u);
    EXPECT_LE(s.passes, kPmSamplingMaxPasses);
    // The SM metrics come first and fit on every chip that samples at all.
    EXPECT_NE(find_id(s, "sm_active"), nullptr);
  }
  EXPECT_GE(supported, chips.size() - 2);  // all but GV100 and GV11B
}

TEST(MetricSelection, HopperGetsTheWholeComputeAndMemorySet) {
  // GH100 is the H100/H200's chip.
  const MetricSelection s = select_metrics("GH100", MetricRequest{});
  ASSERT_TRUE(s.supported) << s.error;
  for (const DefaultMetric& d : default_metrics()) EXPECT_NE(find_id(s, std::string(d.id)), nullptr) << d.id;
  EXPECT_TRUE(s.dropped.empty());
  EXPECT_EQ(s.passes, 1u);
}

TEST(MetricSelection, FromAmpereOnAllFourSmMetricsFit) {
  for (const char* chip : {"GA100", "GA102", "AD102", "GB100", "GB202", "GA10B"}) {
    SCOPED_TRACE(chip);
    const MetricSelection s = select_metrics(chip, MetricRequest{});
    for (const char* id : {"sm_active", "tensor_active", "sm_occupancy", "sm_issue"})
      EXPECT_NE(find_id(s, id), nullptr) << id;
  }
}

TEST(MetricSelection, ChipsWithoutDramCountersNameWhatIsMissing) {
  // GA10B (Orin) shares system memory: no DRAM, PCIe or NVLink counters.
  const MetricSelection s = select_metrics("GA10B", MetricRequest{});
  ASSERT_TRUE(s.supported) << s.error;
  EXPECT_EQ(find_id(s, "dram_read"), nullptr);
  EXPECT_TRUE(mentions(s.dropped, "dram_read: GA10B has no such counter"));
  EXPECT_TRUE(mentions(s.dropped, "nvlink_tx:"));
}

TEST(MetricSelection, RequestedNamesAreCheckedOnTheChip) {
  std::string error;
  const auto request = parse_metric_list("sm__cycles_active.avg, no__such_metric.sum", &error);
  ASSERT_TRUE(request) << error;
  EXPECT_FALSE(request->use_default);
  const MetricSelection s = select_metrics("GH100", *request);
  ASSERT_EQ(s.metrics.size(), 1u);
  EXPECT_EQ(s.metrics[0].name, "sm__cycles_active.avg");
  EXPECT_EQ(s.metrics[0].id, "sm__cycles_active.avg");
  ASSERT_EQ(s.dropped.size(), 1u);
  EXPECT_NE(s.dropped[0].find("no__such_metric.sum: no such metric on GH100"), std::string::npos) << s.dropped[0];
  EXPECT_EQ(s.passes, 1u);
}

TEST(MetricSelection, NothingChosenSaysSo) {
  std::string error;
  const MetricSelection s = select_metrics("GH100", *parse_metric_list("not__a_metric", &error));
  EXPECT_TRUE(s.metrics.empty());
  EXPECT_TRUE(s.config_image.empty());
  EXPECT_NE(s.error.find("no hardware metric"), std::string::npos);
  const MetricSelection unknown = select_metrics("XY999", MetricRequest{});
  EXPECT_FALSE(unknown.supported);
  EXPECT_NE(unknown.error.find("XY999"), std::string::npos);
}

TEST(MetricSelection, ParsesMetricLists) {
  std::string error;
  auto d = parse_metric_list("default", &error);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->use_default);
  EXPECT_TRUE(d->names.empty());
  auto none = parse_metric_list("none", &error);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->none());
  auto mixed = parse_metric_list("default,dram__bytes.sum.per_second,dram__bytes.sum.per_second", &error);
  ASSERT_TRUE(mixed);
  EXPECT_TRUE(mixed->use_default);
  EXPECT_EQ(mixed->names, std::vector<std::string>{"dram__bytes.sum.per_second"});
  EXPECT_FALSE(parse_metric_list("sm__x,,sm__y", &error));
  EXPECT_NE(error.find("empty item"), std::string::npos);
  EXPECT_FALSE(parse_metric_list("sm__x;rm -rf", &error));
  EXPECT_NE(error.find("'sm__x;rm -rf'"), std::string::npos) << error;
  EXPECT_FALSE(parse_metric_list("default,none", &error));
}

TEST(MetricSelection, DefaultIdsAreUnique) {
  std::set<std::string_view> ids;
  for (const DefaultMetric& d : default_metrics()) {
    EXPECT_TRUE(ids.insert(d.id).second) << d.id;
    EXPECT_FALSE(d.candidates.empty()) << d.id;
  }
}

}  // namespace
}  // namespace gpuscope::capture
