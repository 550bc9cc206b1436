#include "trace/kernel_category.h"

#include <gtest/gtest.h>

#include <ostream>

#include "trace/demangle.h"

namespace gpuscope {
// Readable category names in failure messages.
inline void PrintTo(KernelCategory c, std::ostream* os) { *os << to_string(c); }
namespace {

struct Case {
  const char* name;
  KernelCategory expected;
};

// A first set of names; tests/analysis checks every kernel name of the real
// traces in ../shared/traces against the table.
TEST(KernelCategory, ClassifiesTheReportsKernels) {
  const Case cases[] = {
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
       "Eigen::Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::"
       "IndexPair<int>, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, "
       "Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<>, int)",
       KernelCategory::padding},
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
       "Eigen::Tensor<float, 2, 1, int>, 16>, Eigen::TensorBroadcastingOp<Eigen::array<int, 2ul> const, "
       "Eigen::TensorMap<Eigen::Tensor<float const, 2, 1, int>, 16> const> const> const, Eigen::GpuDevice>, int>",
       KernelCategory::broadcast},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelCategory::communication},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", KernelCategory::communication},
      {"volta_scudnn_128x64_relu_interior_nn_v1", KernelCategory::convolution},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64",
       KernelCategory::convolution},
      {"volta_sgemm_128x64_nn", KernelCategory::gemm},
      {"nvjet_tst_128x64_64x8_1x1_v_bz_coopB_NNT", KernelCategory::gemm},
      {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct)",
       KernelCategory::normalization},
      {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
       KernelCategory::pooling},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
       "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::"
       "ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, "
       "at::detail::Array<char*, 2> >(int, {lambda(float)#1}, at::detail::Array<char*, 2>)",
       KernelCategory::elementwise},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, "
       "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, "
       "float, 4>)",
       KernelCategory::reduction},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
       "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float*, int)",
       KernelCategory::softmax_loss},
      {"void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int)",
       KernelCategory::transpose},
      {"Memcpy HtoD (Pageable -> Device)", KernelCategory::memory},
      {"triton_poi_fused_add_0", KernelCategory::elementwise},
      {"mystery_kernel", KernelCategory::other},
  };
  for (const Case& c : cases) EXPECT_EQ(classify_kernel(c.name), c.expected) << c.name;
}

TEST(KernelCategory, EveryCategoryHasANameThatParsesBack) {
  for (int i = 0; i < kKernelCategoryCount; ++i) {
    const auto c = static_cast<KernelCategory>(i);
    KernelCategory back{};
    ASSERT_TRUE(parse_category(to_string(c), &back)) << to_string(c);
    EXPECT_EQ(back, c);
  }
  KernelCategory x{};
  EXPECT_FALSE(parse_category("nonsense", &x));
}

TEST(Demangle, DemanglesItaniumNamesAndPassesOthersThrough) {
  EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Zgarbage!!"), "_Zgarbage!!");
  EXPECT_EQ(demangle(""), "");
}

}  // namespace
}  // namespace gpuscope
