// Short kernel names for people: lists whose kernels shorten to the same text
// must still tell them apart.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/format.h"

namespace gpuscope::format {
namespace {

using Names = std::vector<std::string>;

TEST(ShortKernelNames, EigenEvaluatorsBecomeTheirOp) {
  EXPECT_EQ(short_kernel_name("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<"
                              "Eigen::TensorMap<Eigen::Tensor<float, 4, 1, int>, 16>, Eigen::TensorPaddingOp<"
                              "Eigen::array<Eigen::IndexPair<int>, 4> const> const> const, Eigen::GpuDevice>, int>"
                              "(Eigen::TensorEvaluator<…>, int)"),
            "Eigen TensorPaddingOp");
  EXPECT_EQ(short_kernel_name("void gpuscope::kernels::pad_nchw_kernel<float>(float const*, float*, int)"),
            "gpuscope::kernels::pad_nchw_kernel");
}

TEST(ShortKernelNames, DifferentKernelsWithTheSameShortNameAreNumbered) {
  const std::string pad4 = "void Eigen::internal::EigenMetaKernel<Eigen::TensorPaddingOp<float, 4>>(int)";
  const std::string pad5 = "void Eigen::internal::EigenMetaKernel<Eigen::TensorPaddingOp<float, 5>>(int)";
  const std::string relu = "void relu_forward_kernel<float>(float*, int)";
  const std::vector<std::string_view> names = {pad4, relu, pad5, pad4};
  EXPECT_EQ(short_kernel_names(names), (Names{"Eigen TensorPaddingOp #1", "relu_forward_kernel",
                                              "Eigen TensorPaddingOp #2", "Eigen TensorPaddingOp #1"}));
}

TEST(ShortKernelNames, NamesCutAtTheWidthAreNumberedToo) {
  const std::string a = "sm90_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x32_a";
  const std::string b = "sm90_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x32_b";
  const std::vector<std::string_view> names = {a, b};
  const Names shown = short_kernel_names(names, 40);
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_NE(shown[0], shown[1]);
  EXPECT_TRUE(shown[0].ends_with("... #1")) << shown[0];
  EXPECT_TRUE(shown[1].ends_with("... #2")) << shown[1];
}

TEST(ShortKernelNames, DistinctNamesAndRepeatsOfOneKernelStayUnnumbered) {
  const std::string k = "void k1<float>(float*)";
  const std::vector<std::string_view> names = {k, "k2", k};
  EXPECT_EQ(short_kernel_names(names), (Names{"k1", "k2", "k1"}));
  EXPECT_TRUE(short_kernel_names({}).empty());
}

}  // namespace
}  // namespace gpuscope::format
