// Planted problems in synthetic data-parallel jobs (make_synthetic_trace):
// the report's pathologies give exactly the padding and broadcast findings
// with the planted shares; the default (healthy) job gives none; a slow GPU
// is named as the straggler.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analysis/analyze.h"
#include "import/synthetic.h"
#include "support/findings.h"

namespace gpuscope {
namespace {

TEST(SyntheticJobs, TheReportsJobHasExactlyItsPaddingAndBroadcastFindings) {
  SyntheticOptions o = SyntheticOptions::report_pathologies();
  o.kernels = 100'000;
  o.jitter = 0;  // shares exact to the ns
  const Trace t = make_synthetic_trace(o);
  const Profile p = analyze(t);
  EXPECT_EQ(testing::finding_ids(p), (std::set<std::string>{"padding-hotspot", "broadcast-hotspot"}))
      << testing::describe_findings(p);
  const Finding* pad = testing::find_finding(p, "padding-hotspot");
  const Finding* bc = testing::find_finding(p, "broadcast-hotspot");
  ASSERT_TRUE(pad && bc);
  EXPECT_NEAR(pad->metric, o.padding_share, 1e-6);
  EXPECT_NEAR(bc->metric, o.broadcast_share, 1e-6);
  EXPECT_NE(pad->title.find("21.4% of kernel time"), std::string::npos) << pad->title;
  EXPECT_NE(bc->title.find("20.0% of kernel time"), std::string::npos) << bc->title;
  // One compute stream: kernels never overlap, but they fill the GPU, so more
  // streams would not help and no concurrency finding is made.
  for (const DeviceSummary& d : p.devices) EXPECT_EQ(d.kernel_concurrency, 0.0);
}

// `gpuscope synth --preset report` as users run it (5% noise, 1,000+ steps):
// steps stay the same length (planting per GPU once made them diverge), the
// planted shares hold, and the findings are the planted problems plus the
// all-reduce the preset runs after backward.
TEST(SyntheticJobs, TheReportsJobWithNoiseStaysInStep) {
  SyntheticOptions o = SyntheticOptions::report_pathologies();
  o.kernels = 200'000;
  const Trace t = make_synthetic_trace(o);
  const Profile p = analyze(t);
  ASSERT_GT(p.steps.steps.size(), 1000u);
  EXPECT_LT(p.steps.step_time.max, p.steps.step_time.median * 12 / 10) << p.steps.step_time.max;
  const std::set<std::string> allowed{"padding-hotspot", "broadcast-hotspot", "exposed-communication"};
  for (const Finding& f : p.findings) EXPECT_TRUE(allowed.count(f.id)) << testing::describe_findings(p);
  const Finding* pad = testing::find_finding(p, "padding-hotspot");
  const Finding* bc = testing::find_finding(p, "broadcast-hotspot");
  ASSERT_TRUE(pad && bc) << testing::describe_findings(p);
  EXPECT_NEAR(pad->metric, o.padding_share, 0.002);
  EXPECT_NEAR(bc->metric, o.broadcast_share, 0.002);
  EXPECT_EQ(p.findings[0].id, "padding-hotspot");
  const Finding* comm = testing::find_finding(p, "exposed-communication");
  if (comm) {
    EXPECT_LT(comm->metric, 0.06);
  }
}

TEST(SyntheticJobs, TheDefaultJobIsClean) {
  SyntheticOptions o;
  o.kernels = 100'000;
  const Trace t = make_synthetic_trace(o);
  const Profile p = analyze(t);
  EXPECT_TRUE(p.findings.empty()) << testing::describe_findings(p);
  EXPECT_EQ(p.devices.size(), 4u);
  EXPECT_EQ(p.steps.source, StepSource::nvtx);
  EXPECT_FALSE(p.steps.steps.empty());
}

TEST(SyntheticJobs, ASlowGpuIsTheStraggler) {
  SyntheticOptions o;
  o.kernels = 100'000;
  o.jitter = 0;
  o.straggler_gpu = 2;
  o.straggler_slowdown = 1.3;
  const Trace t = make_synthetic_trace(o);
  const Profile p = analyze(t);
  const Finding* s = testing::find_finding(p, "straggler");
  ASSERT_TRUE(s) << testing::describe_findings(p);
  EXPECT_EQ(s->device, 2u);
  EXPECT_NE(s->title.find("GPU 2 is a straggler"), std::string::npos) << s->title;
  EXPECT_GT(s->metric, 0.2);
  EXPECT_LT(s->metric, 0.35);
  EXPECT_EQ(p.skew.slowest_device, 2u);
  EXPECT_TRUE(testing::find_finding(p, "exposed-communication"))
      << testing::describe_findings(p);  // the others wait inside NCCL
}

TEST(SyntheticJobs, PaddingShareIsExactPerGpuFilter) {
  SyntheticOptions o = SyntheticOptions::report_pathologies();
  o.kernels = 40'000;
  o.jitter = 0;
  const Trace t = make_synthetic_trace(o);
  AnalysisOptions a;
  a.device = 1;
  const Profile p = analyze(t, a);
  ASSERT_EQ(p.devices.size(), 1u);
  for (const CategoryTime& c : p.categories) {
    if (c.category == KernelCategory::padding) {
      EXPECT_NEAR(c.share, o.padding_share, 1e-6);
    }
  }
}

}  // namespace
}  // namespace gpuscope
