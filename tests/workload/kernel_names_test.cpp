// The workload's kernel names against gpuscope's category table: the seed
// profile is only diagnosable if padding kernels classify as padding,
// broadcasts as broadcast, and so on. The demangled names are the ones the
// CUDA 13 toolchain gives these kernels (listed in docs/workload.md); the
// test also checks that the list and the __global__ functions of kernels/ agree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "trace/kernel_category.h"

namespace gpuscope {
namespace {

struct NamedKernel {
  const char* demangled;
  KernelCategory category;
};

// Parameter lists abbreviated where they cannot change the category.
constexpr NamedKernel kKernels[] = {
    {"void gpuscope::kernels::pad_nchw_kernel<float>(float const*, float*, gpuscope::kernels::Shape, "
     "gpuscope::kernels::Padding2d)",
     KernelCategory::padding},
    {"void gpuscope::kernels::pad_nhwc_kernel<__nv_bfloat16>(__nv_bfloat16 const*, __nv_bfloat16*, "
     "gpuscope::kernels::Shape, gpuscope::kernels::Padding2d)",
     KernelCategory::padding},
    {"void gpuscope::kernels::pad_nchw_backward_kernel<float>(float const*, float*, gpuscope::kernels::Shape, "
     "gpuscope::kernels::Padding2d, bool)",
     KernelCategory::padding},
    {"void gpuscope::kernels::pad_nhwc_backward_kernel<float>(float const*, float*, gpuscope::kernels::Shape, "
     "gpuscope::kernels::Padding2d, bool)",
     KernelCategory::padding},
    {"void gpuscope::kernels::broadcast_channel_kernel<float>(float const*, float*, gpuscope::kernels::Shape, "
     "gpuscope::kernels::Layout)",
     KernelCategory::broadcast},
    {"gpuscope::kernels::broadcast_bias_kernel(float const*, float*, int, int)", KernelCategory::broadcast},
    {"void gpuscope::kernels::elementwise_mul_kernel<float>(float const*, float const*, float*, long)",
     KernelCategory::elementwise},
    {"void gpuscope::kernels::elementwise_add_kernel<__nv_bfloat16>(__nv_bfloat16 const*, __nv_bfloat16 const*, "
     "__nv_bfloat16*, long)",
     KernelCategory::elementwise},
    {"void gpuscope::kernels::relu_forward_kernel<float>(float const*, float*, long)", KernelCategory::elementwise},
    {"void gpuscope::kernels::relu_backward_kernel<float>(float const*, float const*, float*, long)",
     KernelCategory::elementwise},
    {"void gpuscope::kernels::residual_add_kernel<float>(float const*, float const*, float*, long)",
     KernelCategory::elementwise},
    {"void gpuscope::kernels::transpose_nchw_to_nhwc_kernel<float>(float const*, float*, int, int)",
     KernelCategory::transpose},
    {"void gpuscope::kernels::transpose_nhwc_to_nchw_kernel<float>(float const*, float*, int, int)",
     KernelCategory::transpose},
    {"void gpuscope::kernels::bn_forward_naive_stats_kernel<float>(float const*, gpuscope::kernels::Shape, "
     "gpuscope::kernels::Layout, double*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_forward_stats_nchw_kernel<float>(float const*, gpuscope::kernels::Shape, double*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_forward_stats_nhwc_kernel<__nv_bfloat16>(__nv_bfloat16 const*, "
     "gpuscope::kernels::Shape, double*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_forward_finalize_kernel<float>(double const*, int, float const*, "
     "gpuscope::kernels::Shape, gpuscope::kernels::Layout, float const*, float const*, float*, float*, float*, "
     "float*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_forward_apply_kernel<float>(float const*, float const*, float const*, float "
     "const*, bool, float*, gpuscope::kernels::Shape, gpuscope::kernels::Layout)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_backward_naive_reduce_kernel<float>(float const*, float const*, float const*, "
     "float const*, gpuscope::kernels::Shape, gpuscope::kernels::Layout, double*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_backward_reduce_nchw_kernel<float>(float const*, float const*, float const*, "
     "float const*, gpuscope::kernels::Shape, double*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_backward_reduce_nhwc_kernel<float>(float const*, float const*, float const*, "
     "float const*, gpuscope::kernels::Shape, double*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_backward_finalize_kernel<float>(double const*, int, gpuscope::kernels::Shape, "
     "float const*, float const*, float const*, float*, float*, float*, float*, float*)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::bn_backward_apply_kernel<float>(float const*, float const*, float const*, float "
     "const*, float const*, float const*, float*, float*, gpuscope::kernels::Shape, gpuscope::kernels::Layout)",
     KernelCategory::normalization},
    {"void gpuscope::kernels::avgpool_forward_kernel<float>(float const*, float*, gpuscope::kernels::Shape, "
     "gpuscope::kernels::Layout)",
     KernelCategory::pooling},
    {"void gpuscope::kernels::avgpool_backward_kernel<float>(float const*, float*, gpuscope::kernels::Shape, "
     "gpuscope::kernels::Layout)",
     KernelCategory::pooling},
    {"void gpuscope::kernels::softmax_xent_kernel<float>(float const*, float const*, int const*, int, int, float*, "
     "float*, int*)",
     KernelCategory::softmax_loss},
    {"void gpuscope::kernels::fc_bias_grad_reduce_kernel<float>(float const*, int, int, float*)",
     KernelCategory::reduction},
    {"void gpuscope::kernels::sgd_momentum_kernel<float>(float*, float*, float const*, __nv_bfloat16*, long, "
     "gpuscope::kernels::SgdHyper)",
     KernelCategory::optimizer},
    {"void gpuscope::kernels::sgd_momentum_flat_kernel<__nv_bfloat16>(float*, float*, __nv_bfloat16 const*, "
     "__nv_bfloat16*, long, gpuscope::kernels::SgdHyper)",
     KernelCategory::optimizer},
    {"gpuscope::kernels::cast_f32_to_bf16_kernel(float const*, __nv_bfloat16*, long)", KernelCategory::elementwise},
    {"gpuscope::kernels::synthetic_dataset_kernel(unsigned char*, unsigned int, unsigned int, long)",
     KernelCategory::other},
    {"void gpuscope::kernels::augment_crop_flip_kernel<float>(unsigned char const*, unsigned int, unsigned int, "
     "unsigned int, unsigned int, float*, int*, gpuscope::kernels::Shape, gpuscope::kernels::Layout)",
     KernelCategory::elementwise},
};

// Every CUDA source and header of kernels/ (a new file is read too).
std::string kernel_sources() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(GPUSCOPE_SOURCE_DIR) / "kernels";
  std::string all;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cu" && ext != ".cuh" && ext != ".h") continue;
    std::ifstream in(e.path());
    EXPECT_TRUE(in) << e.path();
    std::stringstream ss;
    ss << in.rdbuf();
    all += ss.str();
    ++files;
  }
  EXPECT_GT(files, 5) << "too few sources in " << dir;
  return all;
}

TEST(WorkloadKernelNames, ClassifyIntoTheirCategories) {
  for (const NamedKernel& k : kKernels)
    EXPECT_EQ(to_string(classify_kernel(k.demangled)), to_string(k.category)) << k.demangled;
}

std::string base_name(const char* demangled) {
  std::string name = demangled;
  name = name.substr(name.find("gpuscope::kernels::") + 19);
  return name.substr(0, name.find_first_of("<("));
}

TEST(WorkloadKernelNames, ListAndSourcesAgree) {
  const std::string src = kernel_sources();
  // Every __global__ function, with or without __launch_bounds__.
  const std::regex global(R"(__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+([A-Za-z_][A-Za-z_0-9]*)\s*\()");
  std::set<std::string> defined;
  for (std::sregex_iterator it(src.begin(), src.end(), global), end; it != end; ++it) defined.insert((*it)[1].str());
  EXPECT_GT(defined.size(), 20u) << "the pattern found too few kernels in kernels/";
  for (const NamedKernel& k : kKernels)
    EXPECT_TRUE(defined.count(base_name(k.demangled))) << base_name(k.demangled) << " is not defined in kernels/";
  // And every kernel in the sources is in the list (so a new one gets a category check).
  for (const std::string& name : defined) {
    bool listed = false;
    for (const NamedKernel& k : kKernels) listed = listed || base_name(k.demangled) == name;
    EXPECT_TRUE(listed) << name << " has no entry in kKernels (add it with its category)";
  }
}

}  // namespace
}  // namespace gpuscope
