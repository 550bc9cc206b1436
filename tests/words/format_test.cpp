// The one formatter (src/words/format.h): numbers, times and sizes as the
// report, diff, the exports and the viewer write them, and the one kernel-name
// shortener in both of its forms (tables; Nsight Systems' shortName).
//
// [SECTION] Durations
// [SECTION] Shares, counts, sizes, bandwidth
// [SECTION] Short kernel names
// [SECTION] Nsight Systems' shortName
#include "words/format.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace gpuscope::format {
namespace {

using Names = std::vector<std::string>;

// [SECTION] Durations ------------------------------------------------------------------------

TEST(Duration, PicksAUnitWithTheReportsPrecision) {
  EXPECT_EQ(duration(0), "0 ns");
  EXPECT_EQ(duration(850), "850 ns");
  EXPECT_EQ(duration(12'300), "12.3 µs");
  EXPECT_EQ(duration(830'000), "830.0 µs");
  EXPECT_EQ(duration(45'600'000), "45.6 ms");
  EXPECT_EQ(duration(1'234'000'000), "1.23 s");
  EXPECT_EQ(duration(125'000'000'000), "125.00 s");
  EXPECT_EQ(duration(-2'000'000), "-2.0 ms");
  EXPECT_EQ(duration(std::numeric_limits<TimeNs>::min()).front(), '-');
}

TEST(Duration, RoundingNeverWritesAThousandOfAUnit) {
  EXPECT_EQ(duration(999), "999 ns");
  EXPECT_EQ(duration(999'949), "999.9 µs");
  EXPECT_EQ(duration(999'999), "1.0 ms");
  EXPECT_EQ(duration(999'960'000), "1.00 s");
}

TEST(Duration, SignedChanges) {
  EXPECT_EQ(signed_duration(12'600), "+12.6 µs");
  EXPECT_EQ(signed_duration(-3'300'000), "-3.3 ms");
  EXPECT_EQ(signed_duration(0), "0 ns");
}

// [SECTION] Shares, counts, sizes, bandwidth -------------------------------------------------

TEST(Percent, ShortAndOneDecimalForms) {
  EXPECT_EQ(percent(0.2144), "21%");
  EXPECT_EQ(percent(0.0123), "1.2%");
  EXPECT_EQ(percent(0), "0%");
  EXPECT_EQ(percent1(0.214), "21.4%");
  EXPECT_EQ(signed_percent1(0.3), "+30.0%");
  EXPECT_EQ(signed_percent1(-0.595), "-59.5%");
  EXPECT_EQ(points(0.3), "+30.0 pts");
  EXPECT_EQ(points(-0.214), "-21.4 pts");
}

TEST(Count, HasThousandsSeparators) {
  EXPECT_EQ(count(0), "0");
  EXPECT_EQ(count(999), "999");
  EXPECT_EQ(count(3'780), "3,780");
  EXPECT_EQ(count(1'234'567), "1,234,567");
}

TEST(Bytes, Are1024BasedWithIecNames) {
  EXPECT_EQ(bytes(512), "512 B");
  EXPECT_EQ(bytes(1536), "1.5 KiB");
  EXPECT_EQ(bytes(4ull << 20), "4.0 MiB");
  EXPECT_EQ(bytes(120ull * 1024 * 1024), "120.0 MiB");
  EXPECT_EQ(bytes(2ull << 30), "2.00 GiB");
  EXPECT_EQ(bytes((1ull << 20) - 1), "1.0 MiB");  // never "1024.0 KiB"
}

TEST(Bandwidth, IsDecimalWithThreeSignificantDigits) {
  EXPECT_EQ(bandwidth(850), "850 B/s");
  EXPECT_EQ(bandwidth(12.3e9), "12.3 GB/s");
  EXPECT_EQ(bandwidth(1.234e12), "1.23 TB/s");
  EXPECT_EQ(bandwidth(999.7e6), "1.00 GB/s");
  EXPECT_EQ(bandwidth(0), "n/a");
  EXPECT_EQ(bandwidth(std::numeric_limits<double>::infinity()), "n/a");
}

// [SECTION] Short kernel names ---------------------------------------------------------------

TEST(ShortKernelName, EigenEvaluatorsBecomeTheirOp) {
  EXPECT_EQ(short_kernel_name("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<"
                              "Eigen::TensorMap<Eigen::Tensor<float, 4, 1, int>, 16>, Eigen::TensorPaddingOp<"
                              "Eigen::array<Eigen::IndexPair<int>, 4> const> const> const, Eigen::GpuDevice>, int>"
                              "(Eigen::TensorEvaluator<…>, int)"),
            "Eigen TensorPaddingOp");
  EXPECT_EQ(short_kernel_name("void Eigen::internal::EigenMetaKernel<Eigen::TensorBroadcastingOp<float>>(int)"),
            "Eigen TensorBroadcastingOp");
  EXPECT_EQ(short_kernel_name("void gpuscope::kernels::pad_nchw_kernel<float>(float const*, float*, int)"),
            "gpuscope::kernels::pad_nchw_kernel");
}

TEST(ShortKernelName, DropsReturnTypeTemplateArgumentsAndParameters) {
  EXPECT_EQ(short_kernel_name("void at::native::foo<float, 4>(int, float*)"), "at::native::foo");
  EXPECT_EQ(short_kernel_name("volta_sgemm_128x64_nn"), "volta_sgemm_128x64_nn");
  EXPECT_EQ(short_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
            "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::kernel<int>(int)"),
            "at::native::(anonymous namespace)::kernel");
  EXPECT_EQ(short_kernel_name("void at::native::reduce_operator<float>(float*)"), "at::native::reduce_operator");
  EXPECT_EQ(short_kernel_name("void at::native::elementwise_kernel<128, 4, "
                              "at::native::gpu_kernel_impl<at::native::AbsFunctor<float>>(at::TensorIteratorBase&, "
                              "at::native::AbsFunctor<float> const&)::{lambda(int)#1}>(int, {lambda(int)#1})"),
            "at::native::elementwise_kernel");
  EXPECT_EQ(short_kernel_name("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD");
  EXPECT_EQ(short_kernel_name(""), "");
  EXPECT_EQ(short_kernel_name("<lambda>"), "<lambda>");  // nothing left: the full name
}

TEST(ShortKernelName, IsCutAtTheWidth) {
  const std::string name(100, 'k');
  EXPECT_EQ(short_kernel_name(name, 10), "kkkkkkk...");
  EXPECT_EQ(short_kernel_name("Eigen TensorPaddingOp", 80), "Eigen TensorPaddingOp");
  // Never inside a UTF-8 sequence: "µ" is two bytes.
  EXPECT_EQ(short_kernel_name("kernel_µµµµµµ", 11), "kernel_...");
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

// [SECTION] Nsight Systems' shortName --------------------------------------------------------

TEST(NsysShortName, IsTheUnqualifiedFunctionName) {
  EXPECT_EQ(nsys_short_name("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, int>(cudnnTensorStruct, float*)"),
            "bn_fw_tr_1C11_kernel_NCHW");
  EXPECT_EQ(nsys_short_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(nsys_short_name("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<X>(Y)"),
            "multi_tensor_apply_kernel");
  EXPECT_EQ(nsys_short_name("void (anonymous namespace)::softmax_warp_forward<float>(float*)"), "softmax_warp_forward");
  EXPECT_EQ(nsys_short_name("sm90_xmma_gemm_f32f32_cublas"), "sm90_xmma_gemm_f32f32_cublas");
  EXPECT_EQ(nsys_short_name("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<A>, int>(B, int)"),
            "EigenMetaKernel");
  EXPECT_EQ(nsys_short_name(""), "");
  EXPECT_EQ(nsys_short_name("<weird>"), "<weird>");
}

TEST(NsysShortName, IsTheLastPartOfTheTableForm) {
  // One parser, two forms: wherever the table form is a qualified name, the
  // nsys form is its last component.
  for (const char* name : {"void cudnn::detail::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512>(float*)",
                           "void at::native::(anonymous namespace)::kernel<int>(int)", "volta_sgemm_128x64_nn"}) {
    const std::string table = short_kernel_name(name, 1000);
    const std::size_t colons = table.rfind("::");
    EXPECT_EQ(nsys_short_name(name), colons == std::string::npos ? table : table.substr(colons + 2)) << name;
  }
}

}  // namespace
}  // namespace gpuscope::format
