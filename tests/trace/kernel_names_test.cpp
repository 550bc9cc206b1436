// The kernel category table (src/trace/kernel_category.cpp) on the names the
// diagnosis depends on: the bundled workload's own kernels, Eigen's
// evaluators, cuDNN/cuBLAS/CUTLASS/Hopper, NCCL. Every name of the shared real
// traces is checked in golden_test.cpp against tests/analysis/data/kernel_categories.tsv.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "trace/kernel_category.h"

namespace gpuscope {
inline void PrintTo(KernelCategory c, std::ostream* os) { *os << to_string(c); }
namespace {

using K = KernelCategory;

struct Case {
  const char* name;
  K expected;
};

void check(std::initializer_list<Case> cases) {
  for (const Case& c : cases) EXPECT_EQ(classify_kernel(c.name), c.expected) << c.name;
}

// kernels/*.cuh (the workload's padding, broadcast, layout, batch-norm and optimizer variants).
const std::initializer_list<Case> kWorkloadKernels = {
    {"augment_crop_flip_kernel", K::elementwise},
    {"avgpool_backward_kernel", K::pooling},
    {"avgpool_forward_kernel", K::pooling},
    {"bn_backward_apply_kernel", K::normalization},
    {"bn_backward_finalize_kernel", K::normalization},
    {"bn_backward_naive_reduce_kernel", K::normalization},
    {"bn_backward_reduce_nchw_kernel", K::normalization},
    {"bn_backward_reduce_nhwc_kernel", K::normalization},
    {"bn_forward_apply_kernel", K::normalization},
    {"bn_forward_finalize_kernel", K::normalization},
    {"bn_forward_naive_stats_kernel", K::normalization},
    {"bn_forward_stats_nchw_kernel", K::normalization},
    {"bn_forward_stats_nhwc_kernel", K::normalization},
    {"bn_naive_forward_kernel", K::normalization},
    {"broadcast_bias_kernel", K::broadcast},
    {"broadcast_channel_kernel", K::broadcast},
    {"cast_f32_to_bf16_kernel", K::elementwise},
    {"elementwise_add_kernel", K::elementwise},
    {"elementwise_mul_kernel", K::elementwise},
    {"fc_bias_grad_reduce_kernel", K::reduction},
    {"pad_nchw_backward_kernel", K::padding},
    {"pad_nchw_kernel", K::padding},
    {"pad_nhwc_backward_kernel", K::padding},
    {"pad_nhwc_kernel", K::padding},
    {"relu_backward_kernel", K::elementwise},
    {"relu_forward_kernel", K::elementwise},
    {"residual_add_kernel", K::elementwise},
    {"sgd_momentum_flat_kernel", K::optimizer},
    {"sgd_momentum_kernel(float*, float*, float const*, float, float, int)", K::optimizer},
    {"softmax_xent_kernel", K::softmax_loss},
    {"synthetic_dataset_kernel", K::other},
    {"transpose_nchw_to_nhwc_kernel", K::transpose},
    {"transpose_nhwc_to_nchw_kernel", K::transpose}};

TEST(KernelNames, TheBundledWorkloadsKernels) { check(kWorkloadKernels); }

// Every __global__ function in kernels/ is in the list above, so a new
// workload kernel cannot land unreviewed (and uncategorised).
TEST(KernelNames, EveryWorkloadKernelIsReviewed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(GPUSCOPE_SOURCE_DIR) / "kernels";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no " << dir;
  std::set<std::string> reviewed;
  for (const Case& c : kWorkloadKernels) {
    std::string n = c.name;
    reviewed.insert(n.substr(0, n.find('(')));
  }
  const std::regex global(R"(__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+([A-Za-z_][A-Za-z_0-9]*)\s*\()");
  int found = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cu" && ext != ".cuh" && ext != ".h") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    for (std::sregex_iterator it(text.begin(), text.end(), global), end; it != end; ++it) {
      ++found;
      EXPECT_TRUE(reviewed.count((*it)[1].str()))
          << e.path().filename() << ": kernel " << (*it)[1] << " is not in kWorkloadKernels (add it with its category)";
    }
  }
  EXPECT_GT(found, 20) << "the pattern found too few kernels in " << dir;
}

TEST(KernelNames, LibrariesAndFrameworks) {
  check({
      // Eigen (TensorFlow): only the template arguments tell the op.
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
       "Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, "
       "4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> "
       "const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<"
       "float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, 4ul> "
       "const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> const, "
       "Eigen::GpuDevice>, int)",
       K::padding},
      {"void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
       "Tensor<float, 2, 1, int>, 16>, Eigen::TensorBroadcastingOp<Eigen::array<int, 2ul> const, Eigen::TensorMap<"
       "Eigen::Tensor<float const, 2, 1, int>, 16> const> const> const, Eigen::GpuDevice>, int>(Eigen::"
       "TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 2, 1, int>, 16>, Eigen::"
       "TensorBroadcastingOp<Eigen::array<int, 2ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 2, 1, int>, "
       "16> const> const> const, Eigen::GpuDevice>, int)",
       K::broadcast},
      {"void tensorflow::functor::PadInputCustomKernelNHWC<float, 4>(int, float const*, tensorflow::functor::"
       "Dimension<4>, float*, tensorflow::functor::Dimension<4>, tensorflow::functor::Dimension<2>, float)",
       K::padding},
      {"void tensorflow::functor::SwapDimension1And2InTensor3UsingTiles<unsigned int, 256, 32, 32, false>(unsigned "
       "int const*, tensorflow::functor::Dimension<3>, unsigned int*)",
       K::transpose},
      // cuDNN, cuBLAS, CUTLASS, Hopper.
      {"volta_scudnn_128x64_relu_interior_nn_v1", K::convolution},
      {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float "
       "const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, "
       "int)",
       K::convolution},
      {"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_"
       "execute_segment_k_off_kernel__5x_cudnn",
       K::convolution},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       K::gemm},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>(cutlass_80_tensorop_s1688gemm_"
       "128x64_32x6_nt_align1::Params)",
       K::gemm},
      {"ampere_sgemm_128x64_nn", K::gemm},
      {"nvjet_tst_128x64_64x8_1x1_v_bz_coopB_NNT", K::gemm},
      // A parameter type must not decide: this is cuBLAS's scal, not a transpose.
      {"void scal_kernel<float, float, 1, false, 6, 5, 5, 3>(cublasTransposeParams<float>, float const*, float*, "
       "float const*)",
       K::elementwise},
      // NCCL, old and new names.
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", K::communication},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", K::communication},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", K::communication},
      // PyTorch ATen.
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
       "std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
       "namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)",
       K::optimizer},
      {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, "
       "float*, float*)",
       K::normalization},
  });
}

TEST(KernelNames, ParameterListsAreIgnoredButAnonymousNamespacesKept) {
  EXPECT_EQ(classify_kernel("f(conv_params)"), K::other);
  EXPECT_EQ(classify_kernel("my_conv_kernel(int)"), K::convolution);
  EXPECT_EQ(classify_kernel("(anonymous namespace)::max_pool_forward(int)"), K::pooling);
  EXPECT_EQ(classify_kernel(""), K::other);
  EXPECT_EQ(classify_kernel(")))((("), K::other);
}

}  // namespace
}  // namespace gpuscope
