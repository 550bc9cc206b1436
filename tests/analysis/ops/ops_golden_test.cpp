// The op view on the real traces: attribution, categories by launching op,
// the op table's top rows and the GEMM FLOPs. The expected figures were
// computed independently from the JSON (each kernel's launch call found by
// correlation, the innermost cpu_op around it on its thread; GPU time of the
// kernels, copies and fills; FLOPs as 2·M·N·K from "Input Dims"); docs/ops.md
// records them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/analyze.h"
#include "import/chrome_json.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

using testing::real_trace;

std::uint64_t kernels_without_op(const Trace& t) {
  std::uint64_t n = 0;
  for (RowIndex i = 0; i < t.kernels().size(); ++i) n += t.launching_op({OpTable::kernel, i}) == kNoRow;
  return n;
}

const OpRow* op_named(const std::vector<OpRow>& rows, std::string_view name) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const OpRow& r) { return r.name == name; });
  return it == rows.end() ? nullptr : &*it;
}

const OpRow* top_by_self(const Profile& p) {
  const OpRow* top = nullptr;
  for (const OpRow& r : p.op_names)
    if (!top || r.gpu_self_ns > top->gpu_self_ns) top = &r;
  return top;
}

// cuDNN runs most of this ResNet's convolutions with cuBLAS-named kernels
// (volta_sgemm_*): 117.25 ms of them, of which 116.91 ms are launched by
// aten::cudnn_convolution and aten::convolution_backward. Those are
// convolution; the rest (the classifier's GEMMs) stay gemm.
TEST(OpsGolden, NsResolutionSgemmUnderConvolutionIsConvolution) {
  const Trace t = import_chrome_json(real_trace("hta-ns-resolution-v100.json.gz"));
  EXPECT_EQ(kernels_without_op(t), 0u);
  TimeNs as_conv = 0, as_gemm = 0;
  const KernelTable& k = t.kernels();
  for (RowIndex i = 0; i < k.size(); ++i) {
    if (t.str(k.name[i]).find("volta_sgemm") == std::string_view::npos) continue;
    if (k.category_at(i) == KernelCategory::convolution) {
      as_conv += k.end[i] - k.start[i];
      EXPECT_EQ(k.category_rule_at(i), CategoryRuleKind::launching_op);
    } else {
      EXPECT_EQ(k.category_at(i), KernelCategory::gemm);
      as_gemm += k.end[i] - k.start[i];
    }
  }
  EXPECT_NEAR(static_cast<double>(as_conv), 116'911'400.0, 50'000.0);
  EXPECT_NEAR(static_cast<double>(as_gemm), 340'900.0, 50'000.0);
  const Profile p = analyze(t);
  const OpRow* top = top_by_self(p);
  ASSERT_TRUE(top);
  EXPECT_EQ(top->name, "aten::convolution_backward");
  EXPECT_NEAR(static_cast<double>(top->gpu_self_ns), 211'579'100.0, 50'000.0);
  EXPECT_FALSE(p.op_summary.shapes_recorded);  // recorded without record_shapes
  for (const DeviceSummary& d : p.devices) EXPECT_FALSE(d.achieved_tflops);
}

TEST(OpsGolden, BertEveryKernelHasAnOpAndGemmFlops) {
  const Trace t = import_chrome_json(real_trace("tracelens-bert-small-h100.json.gz"));
  EXPECT_EQ(kernels_without_op(t), 0u);
  const Profile p = analyze(t);
  const OpRow* top = top_by_self(p);
  ASSERT_TRUE(top);
  EXPECT_EQ(top->name, "aten::addmm");
  const OpRow* addmm = op_named(p.op_names, "aten::addmm");
  const OpRow* linear = op_named(p.op_names, "aten::linear");
  const OpRow* sdpa = op_named(p.op_names, "aten::scaled_dot_product_attention");
  ASSERT_TRUE(addmm && linear && sdpa);
  EXPECT_EQ(addmm->calls, 26u);
  ASSERT_TRUE(addmm->flops && linear->flops && sdpa->flops);
  EXPECT_DOUBLE_EQ(*addmm->flops, 8'029'194'240.0);
  EXPECT_DOUBLE_EQ(*linear->flops, 8'029'194'240.0);
  EXPECT_DOUBLE_EQ(*sdpa->flops, 162'865'152.0);
  ASSERT_TRUE(addmm->achieved_tflops);
  EXPECT_GT(*addmm->achieved_tflops, 0);
  // Per shape: the roofline (H100 SXM, bf16); every addmm shape below its peak.
  std::size_t shapes = 0;
  for (const OpRow& r : p.ops) {
    if (r.name != "aten::addmm") continue;
    ++shapes;
    ASSERT_TRUE(r.roofline_fraction && r.intensity) << r.shapes;
    EXPECT_GT(*r.roofline_fraction, 0);
    EXPECT_LT(*r.roofline_fraction, 1);
    EXPECT_EQ(r.math, "bf16");
  }
  EXPECT_GE(shapes, 3u);
  EXPECT_TRUE(p.op_summary.shapes_recorded);
  EXPECT_EQ(p.op_summary.malformed_shapes, 0u);
  ASSERT_FALSE(p.devices.empty());
  EXPECT_TRUE(p.devices[0].achieved_tflops);
  EXPECT_NE(p.devices[0].peaks_source.find("H100"), std::string::npos);
}

TEST(OpsGolden, TimesformerEveryKernelHasAnOpAndGemmFlops) {
  const Trace t = import_chrome_json(real_trace("tracelens-timesformer-h100.json.gz"));
  EXPECT_EQ(kernels_without_op(t), 0u);
  const Profile p = analyze(t);
  const OpRow* top = top_by_self(p);
  ASSERT_TRUE(top);
  EXPECT_EQ(top->name, "aten::_softmax");
  EXPECT_NEAR(static_cast<double>(top->gpu_self_ns), 68'781'300.0, 50'000.0);
  const OpRow* addmm = op_named(p.op_names, "aten::addmm");
  const OpRow* bmm = op_named(p.op_names, "aten::bmm");
  ASSERT_TRUE(addmm && bmm && addmm->flops && bmm->flops);
  EXPECT_EQ(addmm->calls, 85u);
  EXPECT_EQ(bmm->calls, 48u);
  EXPECT_DOUBLE_EQ(*addmm->flops, 6'037'948'686'336.0);
  EXPECT_DOUBLE_EQ(*bmm->flops, 2'909'559'619'584.0);
  EXPECT_NEAR(static_cast<double>(bmm->gpu_self_ns), 44'998'400.0, 50'000.0);
}

// The 2021 Kineto schema ("Operator", string thread ids, no cpu_op category)
// attributes the same way; its shapes have no concrete inputs, so a forward
// convolution's output size (and FLOPs) stays unknown.
TEST(OpsGolden, ResNet2021SchemaAttributes) {
  const Trace t = import_chrome_json(real_trace("kineto-resnet50-v100-workers0.json.gz"));
  EXPECT_EQ(kernels_without_op(t), 0u);
  const Profile p = analyze(t);
  const OpRow* top = top_by_self(p);
  ASSERT_TRUE(top);
  EXPECT_EQ(top->name, "aten::cudnn_convolution_backward_weight");
  EXPECT_NEAR(static_cast<double>(top->gpu_self_ns), 142'461'000.0, 50'000.0);
  EXPECT_TRUE(p.op_summary.shapes_recorded);
  const OpRow* conv = op_named(p.op_names, "aten::cudnn_convolution");
  ASSERT_TRUE(conv);
  EXPECT_FALSE(conv->flops);
  TimeNs sgemm_conv = 0;
  const KernelTable& k = t.kernels();
  for (RowIndex i = 0; i < k.size(); ++i)
    if (t.str(k.name[i]).find("volta_sgemm") != std::string_view::npos &&
        k.category_at(i) == KernelCategory::convolution)
      sgemm_conv += k.end[i] - k.start[i];
  EXPECT_NEAR(static_cast<double>(sgemm_conv), 44'047'000.0, 50'000.0);
}

}  // namespace
}  // namespace gpuscope
