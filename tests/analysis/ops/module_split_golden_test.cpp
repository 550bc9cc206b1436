// The forward/backward split on real Kineto traces with sequence numbers.
// The expected figures come from the JSON alone
// (tests/analysis/ops/module_split_reference.py: the same definitions,
// computed over the events with exact decimals); on hta_ns_resolution_v100
// Kineto's own forward-backward flows ("fwdbwd", 905) agree with the links,
// and its other 805 backward ops are AccumulateGrad's, which have no forward op.
#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "import/chrome_json.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

using testing::real_trace;

struct Expected {
  const char* file;
  std::uint64_t backward_ops, linked, unlinked;
  TimeNs backward_gpu_ns, unlinked_gpu_ns, forward_gpu_ns;
};

void expect_split(const Expected& x) {
  SCOPED_TRACE(x.file);
  const ModuleSplit s = analyze(import_chrome_json(real_trace(x.file))).module_split;
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.backward_ops, x.backward_ops);
  EXPECT_EQ(s.linked, x.linked);
  EXPECT_EQ(s.unlinked, x.unlinked);
  EXPECT_EQ(s.backward_gpu_ns, x.backward_gpu_ns);
  EXPECT_EQ(s.unlinked_gpu_ns, x.unlinked_gpu_ns);
  // These traces have no nn.Module ranges: everything is "(no module)".
  TimeNs forward = 0, backward = 0;
  std::uint64_t ops = 0;
  for (const ModuleTime& m : s.modules) {
    EXPECT_EQ(m.name, "(no module)");
    forward += m.forward_gpu_ns, backward += m.backward_gpu_ns, ops += m.backward_ops;
  }
  EXPECT_EQ(forward, x.forward_gpu_ns);
  EXPECT_EQ(backward, x.backward_gpu_ns - x.unlinked_gpu_ns);
  EXPECT_EQ(ops, x.linked);
}

TEST(ModuleSplitGolden, NsResolutionEveryBackwardOpWithAForwardOpLinksAsKinetosFlowsSay) {
  expect_split({"hta-ns-resolution-v100.json.gz", 1710, 905, 805, 313'693'168, 2'525'781, 158'761'273});
}

TEST(ModuleSplitGolden, Resnet50ForwardOnTheMainThreadBackwardOnAutogradsThread) {
  expect_split({"kineto-resnet50-v100-workers0.json.gz", 1068, 1068, 0, 367'832'000, 0, 235'726'000});
}

// A sampled trace lost most forward ops: their backward ops stay unlinked.
TEST(ModuleSplitGolden, SampledTraceLeavesBackwardOpsWithoutTheirForwardOpsUnlinked) {
  expect_split({"hta-sampled-rank0.json.gz", 314, 94, 220, 245'906'000, 142'844'000, 361'938'000});
}

// Sequence numbers but no backward pass (inference): known, nothing backward.
TEST(ModuleSplitGolden, InferenceTraceHasNoBackwardOps) {
  expect_split({"hta-alexnet.json.gz", 0, 0, 0, 0, 0, 66'203'000});
}

// A trace without sequence numbers: the split is unknown.
TEST(ModuleSplitGolden, TraceWithoutSequenceNumbersIsUnknown) {
  const ModuleSplit s = analyze(import_chrome_json(real_trace("hta-triton.json.gz"))).module_split;
  EXPECT_FALSE(s.known);
  EXPECT_TRUE(s.modules.empty());
}

}  // namespace
}  // namespace gpuscope
