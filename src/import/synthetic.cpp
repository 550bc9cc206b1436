// Synthetic data-parallel CNN training traces (see synthetic.h for the shape).
//
// [SECTION] Random numbers
// [SECTION] Kernel names and launch shapes
// [SECTION] The step program
// [SECTION] Framework ops (SyntheticOptions::framework_ops)
// [SECTION] Validation and sizing
// [SECTION] Simulation
// [SECTION] Hardware series
// [SECTION] Public entry points
//
// One step is a fixed "program" (synthetic_program.h): the ops one CPU thread
// issues, in order, with the stream each runs on and what it waits for. The
// TensorFlow-like network's program is built here, the bundled workload's in
// synthetic_workload.cpp. Every GPU runs the same program once per step.
// Simulating a step takes three phases because NCCL couples the GPUs: (A) per
// GPU, the host timeline up to the first call that needs the all-reduce's
// outcome and the GPU timeline of everything that does not wait for it (a sync
// or a blocking copy puts what came before it on the GPU timeline first);
// (B) across GPUs, each bucket's all-reduce, in the order they were issued,
// which ends everywhere when the last GPU has joined it; (C) per GPU, what
// waits for the all-reduce (the optimizer), the host's calls after it and the
// end-of-step sync. Rows go straight into one TraceBuilder; nothing is
// allocated per event.
#include "import/synthetic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/synthetic_program.h"
#include "trace/builder.h"
#include "trace/fresh_memory.h"
#include "trace/kernel_category.h"

namespace gpuscope {

namespace {

using namespace detail::synth;

// [SECTION] Random numbers ----------------------------------------------------------------------

// SplitMix64: tiny, fast, and its stream depends only on its seed, so each
// GPU's noise is reproducible whatever order the generator visits GPUs in.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  double symmetric() { return static_cast<double>(next() >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

 private:
  std::uint64_t s_;
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) { return Rng(a ^ (b * 0xd1342543de82ef95ull)).next(); }

// [SECTION] Kernel names and launch shapes ------------------------------------------------------

// Names follow what cuDNN, Eigen (TensorFlow), cuBLAS, PyTorch and NCCL really
// emit, so kernel_category.cpp classifies them as it would a real trace.
namespace kname {
using namespace detail::synth::kname;  // cuDNN's convolutions, cuBLAS, NCCL
constexpr const char* kBnForward =
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, "
    "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, "
    "float)";
constexpr const char* kBnBackward =
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, "
    "cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, "
    "float*, float*, float const*, float const*, float)";
constexpr const char* kRelu =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorCwiseUnaryOp<Eigen::internal::"
    "scalar_max_op<float const, float const, 0>, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, "
    "Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::"
    "TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 1, 1, int>, 16, Eigen::MakePointer>, Eigen::"
    "TensorCwiseUnaryOp<Eigen::internal::scalar_max_op<float const, float const, 0>, Eigen::TensorMap<Eigen::"
    "Tensor<float const, 1, 1, int>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, int)";
constexpr const char* kReluGrad =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorSelectOp<Eigen::TensorCwiseBinaryOp<Eigen::"
    "internal::scalar_cmp_op<float const, float const, (Eigen::internal::ComparisonName)5>, Eigen::TensorMap<"
    "Eigen::Tensor<float const, 1, 1, int>, 16, Eigen::MakePointer> const, Eigen::TensorCwiseNullaryOp<Eigen::"
    "internal::scalar_constant_op<float const>, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, "
    "Eigen::MakePointer> const> const> const, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, "
    "Eigen::MakePointer> const, Eigen::TensorCwiseNullaryOp<Eigen::internal::scalar_constant_op<float const>, "
    "Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, Eigen::MakePointer> const> const> const> const, "
    "Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, "
    "1, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorSelectOp<Eigen::TensorCwiseBinaryOp<Eigen::internal::"
    "scalar_cmp_op<float const, float const, (Eigen::internal::ComparisonName)5> > > >, Eigen::GpuDevice>, int)";
constexpr const char* kResidualAdd =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::internal::"
    "scalar_sum_op<float const, float const>, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, Eigen::"
    "MakePointer> const, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, Eigen::MakePointer> const> "
    "const> const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::internal::"
    "scalar_sum_op<float const, float const> > > const, Eigen::GpuDevice>, int)";
constexpr const char* kScale =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 1, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorCwiseUnaryOp<Eigen::internal::"
    "bind2nd_op<Eigen::internal::scalar_product_op<float const, float const> >, Eigen::TensorMap<Eigen::"
    "Tensor<float const, 1, 1, int>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, int>("
    "Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 1, 1, int>, 16, Eigen::"
    "MakePointer> > const, Eigen::GpuDevice>, int)";
constexpr const char* kPadForward =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<"
    "int>, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> "
    "const> const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<"
    "int>, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> "
    "const> const, Eigen::GpuDevice>, int)";
constexpr const char* kPadBackward =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<"
    "long>, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const> "
    "const> const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<"
    "long>, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const> "
    "const> const, Eigen::GpuDevice>, long)";
constexpr const char* kBroadcast =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::internal::"
    "scalar_sum_op<float const, float const>, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::"
    "MakePointer> const, Eigen::TensorBroadcastingOp<Eigen::array<int, 4ul> const, Eigen::TensorReshapingOp<"
    "Eigen::array<int, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, Eigen::"
    "MakePointer> const> const> const> const> const, Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::"
    "TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::"
    "TensorCwiseBinaryOp<Eigen::internal::scalar_sum_op<float const, float const> > > const, Eigen::GpuDevice>, "
    "int)";
constexpr const char* kToNhwc =
    "void tensorflow::functor::SwapDimension1And2InTensor3UsingTiles<float, 1024, 1024, 2, 32, false>(float "
    "const*, tensorflow::functor::Dimension<3>, float*)";
constexpr const char* kToNchw =
    "void tensorflow::functor::ShuffleInTensor3Simple<float, 2, 1, 0, false>(int, float const*, "
    "tensorflow::functor::Dimension<3>, float*)";
constexpr const char* kPoolForward =
    "void cudnn::pooling_fw_4d_kernel<float, float, cudnn::averpooling_func<float>, (cudnnPoolingMode_t)2, "
    "false>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, cudnnPoolingStruct, float, float, int, "
    "cudnn::reduced_divisor, cudnn::reduced_divisor)";
constexpr const char* kPoolBackward =
    "void cudnn::pooling_bw_kernel_avg<float, float, cudnn::averpooling_func<float>, false>(cudnnTensorStruct, "
    "float const*, cudnnTensorStruct, float*, cudnnPoolingStruct, float, float, cudnn::reduced_divisor)";
constexpr const char* kSoftmaxForward =
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, true, false>(float*, float const*, "
    "int, int, int, bool const*, int, bool)";
constexpr const char* kSoftmaxBackward =
    "void (anonymous namespace)::softmax_warp_backward<float, float, float, 4, true, false>(float*, float const*, "
    "float const*, int, int, int, bool const*)";
constexpr const char* kSgd =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
    "TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 3>, double, float*, "
    "float const*, bool, bool, bool, float const*, float const*>(at::native::(anonymous namespace)::"
    "TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 3>, double, float*, "
    "float const*, bool, bool, bool, float const*, float const*)";
}  // namespace kname

constexpr LaunchShape kEigenShape{{264, 1, 1}, {1024, 1, 1}, 32, 0, 0};
constexpr LaunchShape kBnShape{{1, 64, 1}, {512, 1, 1}, 64, 8192, 0};
constexpr LaunchShape kTransposeShape{{2048, 1, 1}, {256, 1, 1}, 30, 4224, 0};
constexpr LaunchShape kPoolShape{{128, 1, 1}, {256, 1, 1}, 28, 0, 0};
constexpr LaunchShape kSoftmaxShape{{32, 1, 1}, {128, 1, 1}, 24, 0, 0};
constexpr LaunchShape kSgdShape{{320, 1, 1}, {512, 1, 1}, 40, 0, 0};

constexpr std::uint32_t kPid = 4242;
constexpr std::uint32_t kFirstTid = 4250;  // the thread driving GPU i is kFirstTid + i

// Simulated constants (ns, bytes).
constexpr TimeNs kStreamGapNs = 1'000;                           // between back-to-back ops on one stream
constexpr TimeNs kLaunchLatencyNs = 2'000;                       // launch call end -> earliest GPU start
constexpr TimeNs kSyncReturnNs = 2'000;                          // a sync returns this long after the GPU finished
constexpr std::uint64_t kInputBytes = 128ull * 3 * 32 * 32 * 4;  // one CIFAR batch of 128, fp32
constexpr double kInputBytesPerNs = 12.0;                        // pinned H2D: 12 GB/s
constexpr double kPageableBytesPerNs = 6.0;                      // pageable H2D (staged by the driver): 6 GB/s
constexpr std::uint64_t kGradientBytes = 11'200'000ull * 4;      // ~11.2M fp32 parameters
constexpr double kMemsetBytesPerNs = 1'500.0;
constexpr double kRingBytesPerNs = 150.0;  // NCCL bus bandwidth

// [SECTION] The step program --------------------------------------------------------------------

// One step's program, phase by phase, in the order the host issues it.
class ProgramBuilder {
 public:
  ProgramBuilder(const SyntheticOptions& o, std::uint32_t layers) : o_(o), layers_(layers) {
    p_.layers = layers;
    cs_ = o.compute_streams;
    p_.compute_streams = cs_;
    p_.copy_stream = cs_;
    p_.comm_stream = cs_ + 1;
    p_.streams = cs_ + 2;
    for (std::uint32_t s = 0; s < cs_; ++s) {
      p_.stream_ids.push_back(kComputeStreamId0 + s);
      p_.stream_what.push_back(s == 0 ? "compute" : "compute, weight gradients");
    }
    p_.stream_ids.insert(p_.stream_ids.end(), {kCopyStreamId, kCommStreamId});
    p_.stream_what.insert(p_.stream_what.end(), {"H2D copies", "NCCL"});
    p_.buckets = o.gpus > 1 ? std::min(o.allreduce_buckets, layers) : 0;
    pad_ = o.padding_share > 0;
    bcast_ = o.broadcast_share > 0;
    transp_ = o.transpose_share > 0;
  }

  Program build(std::uint32_t fillers) {
    range(OpKind::push);  // "step N"
    input();
    forward(fillers);
    backward();
    all_reduce();
    optimizer();
    p_.sync_index = p_.ops.size();
    if (o_.sync_every_step) {
      Op s;
      s.kind = OpKind::sync;
      p_.ops.push_back(s);
    }
    range(OpKind::pop);  // step
    p_.host_split = p_.sync_index;
    p_.finish();
    return std::move(p_);
  }

 private:
  // The batch: copied at the start of the step (from pageable memory on the
  // compute stream, blocking the host, with pageable_input), or (prefetching)
  // the next step's batch copied while this one computes; then the gradient
  // buffers are zeroed.
  void input() {
    Op c;
    c.kind = o_.prefetch_input ? OpKind::prefetch_copy : OpKind::input_copy;
    c.blocking = o_.pageable_input;
    c.stream = static_cast<std::uint8_t>(o_.pageable_input ? 0 : p_.copy_stream);
    c.aten = aten("aten::copy_", list({t4(kBatch, 3, 32, 32), t4(kBatch, 3, 32, 32), "[]"}),
                  "[\"float\", \"float\", \"Bool\"]", "[\"\", \"\", \"True\"]");
    p_.ops.push_back(c);
    Op m;
    m.kind = OpKind::memset;
    m.aten = aten("aten::zero_", list({dims({static_cast<std::int64_t>(kGradientBytes / 4)})}), "[\"float\"]");
    p_.ops.push_back(m);
  }

  void forward(std::uint32_t fillers) {
    const double bn = o_.normalization_slowdown;
    range(OpKind::push, "forward");
    for (std::uint32_t l = 0; l < layers_; ++l) {
      const std::uint32_t s = stage(l);
      const Layer y = layer(l);
      if (padded(l))
        kernel(kname::kPadForward, kEigenShape, us(18 * mem(l)), 0, kPadding).aten =
            aten("aten::constant_pad_nd", list({y.input, "[]"}), kFloatList, "[\"\", \"[1, 1, 1, 1]\"]");
      kernel(l == 0 ? kname::kConvFirst : kname::kFprop[s], kConvShape, us(l == 0 ? 60 : 110), 0, kNotPlanted,
             l == 0 ? Wait::input : Wait::nothing)
          .aten = aten("aten::conv2d", list({y.input, y.weight, "[]", "[]", "[]", "[]", "[]"}),
                       "[\"float\", \"float\", \"\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Int\"]",
                       y.conv_concrete);
      if (bcast_)
        kernel(kname::kBroadcast, kEigenShape, us(20 * mem(l)), 0, kBroadcast).aten =
            aten("aten::add", list({y.output, dims({y.k, 1, 1}), "[]"}), "[\"float\", \"float\", \"Scalar\"]",
                 "[\"\", \"\", \"1\"]");
      if (transp_) kernel(kname::kToNhwc, kTransposeShape, us(20 * mem(l)), 0, kTranspose).aten = transpose(y);
      kernel(kname::kBnForward, kBnShape, us(40 * mem(l) * bn)).aten =
          aten("aten::batch_norm", list({y.output, y.channels, y.channels, y.channels, y.channels}),
               "[\"float\", \"float\", \"float\", \"float\", \"float\"]");
      if (transp_) kernel(kname::kToNchw, kTransposeShape, us(20 * mem(l)), 0, kTranspose).aten = transpose(y);
      kernel(kname::kRelu, kEigenShape, us(22 * mem(l))).aten = aten("aten::relu_", list({y.output}), kFloatList);
      if (l % 2 == 1)
        kernel(kname::kResidualAdd, kEigenShape, us(24 * mem(l))).aten =
            aten("aten::add_", list({y.output, y.output, "[]"}), "[\"float\", \"float\", \"Scalar\"]",
                 "[\"\", \"\", \"1\"]");
    }
    const std::string features = dims({kBatch, kFeatures});
    for (std::uint32_t i = 0; i < fillers; ++i)
      kernel(kname::kScale, kEigenShape, us(10)).aten =
          aten("aten::mul_", list({t4(kBatch, kFeatures, 8, 8), "[]"}), "[\"float\", \"Scalar\"]", "[\"\", \"0.5\"]");
    kernel(kname::kPoolForward, kPoolShape, us(8)).aten =
        aten("aten::adaptive_avg_pool2d", list({t4(kBatch, kFeatures, 8, 8), "[]"}), "[\"float\", \"ScalarList\"]",
             "[\"\", \"[1, 1]\"]");
    kernel(kname::kGemmForward, kGemmShape, us(6)).aten =
        aten("aten::addmm", list({dims({kClasses}), features, dims({kFeatures, kClasses}), "[]", "[]"}),
             "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]", "[\"\", \"\", \"\", \"1\", \"1\"]");
    kernel(kname::kSoftmaxForward, kSoftmaxShape, us(4)).aten =
        aten("aten::_log_softmax", list({logits(), "[]", "[]"}), "[\"float\", \"Int\", \"Bool\"]",
             "[\"\", \"1\", \"False\"]");
    range(OpKind::pop);
  }

  // Weight gradients run on the other compute streams when there are some,
  // each waiting for the output gradient it needs from stream 0.
  void backward() {
    const double bn = o_.normalization_slowdown;
    range(OpKind::push, "backward");
    const std::string features = dims({kBatch, kFeatures});
    const std::string classes = dims({kClasses, kBatch});
    kernel(kname::kSoftmaxBackward, kSoftmaxShape, us(4)).aten =
        aten("aten::_log_softmax_backward_data", list({logits(), logits(), "[]", "[]"}),
             "[\"float\", \"float\", \"Int\", \"Int\"]", "[\"\", \"\", \"1\", \"6\"]");
    kernel(kname::kGemmBackwardData, kGemmShape, us(7)).aten =
        aten("aten::mm", list({logits(), dims({kClasses, kFeatures})}), "[\"float\", \"float\"]");
    Op& classifier_grad = kernel(kname::kGemmBackwardWeight, kGemmShape, us(7));
    classifier_grad.feeds_bucket = 0;
    classifier_grad.aten = aten("aten::mm", list({classes, features}), "[\"float\", \"float\"]");
    kernel(kname::kPoolBackward, kPoolShape, us(10)).aten =
        aten("aten::adaptive_avg_pool2d_backward", list({t4(kBatch, kFeatures, 1, 1), t4(kBatch, kFeatures, 8, 8)}),
             "[\"float\", \"float\"]");
    for (std::uint32_t l = layers_; l-- > 0;) {
      const std::uint32_t s = stage(l);
      const Layer y = layer(l);
      kernel(kname::kReluGrad, kEigenShape, us(26 * mem(l))).aten =
          aten("aten::threshold_backward", list({y.output, y.output, "[]"}), "[\"float\", \"float\", \"Scalar\"]",
               "[\"\", \"\", \"0\"]");
      if (transp_) kernel(kname::kToNhwc, kTransposeShape, us(20 * mem(l)), 0, kTranspose).aten = transpose(y);
      kernel(kname::kBnBackward, kBnShape, us(70 * mem(l) * bn)).aten =
          aten("aten::native_batch_norm_backward",
               list({y.output, y.output, y.channels, y.channels, y.channels, y.channels, y.channels}),
               "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"float\"]");
      if (transp_) kernel(kname::kToNchw, kTransposeShape, us(20 * mem(l)), 0, kTranspose).aten = transpose(y);
      const auto wstream = static_cast<std::uint8_t>(cs_ == 1 ? 0 : 1 + l % (cs_ - 1));
      Op& wgrad = kernel(kname::kWgrad[s], kConvShape, us(140), wstream, kNotPlanted,
                         wstream ? Wait::main_stream : Wait::nothing);
      wgrad.feeds_bucket = bucket_of(l);
      wgrad.aten = conv_backward(y, "[False, True, False]");
      if (l > 0)  // the input image needs no gradient
        kernel(kname::kDgrad[s], kConvShape, us(120)).aten = conv_backward(y, "[True, False, False]");
      if (padded(l))
        kernel(kname::kPadBackward, kEigenShape, us(18 * mem(l)), 0, kPadding).aten =
            aten("aten::slice_backward", list({y.input}), kFloatList);
      // A bucket is complete once its lowest layer has its weight gradient; the
      // last bucket (layer 0) is reduced in the "all-reduce" range below.
      const bool closes = p_.buckets && l > 0 && bucket_of(l - 1) != bucket_of(l);
      if (closes && o_.overlap_communication) comm(static_cast<std::uint32_t>(bucket_of(l)), Wait::bucket);
    }
    range(OpKind::pop);
  }

  void all_reduce() {
    if (!p_.buckets) return;
    range(OpKind::push, "all-reduce");
    for (std::uint32_t b = o_.overlap_communication ? p_.buckets - 1 : 0; b < p_.buckets; ++b)
      comm(b, o_.overlap_communication ? Wait::bucket : Wait::all_compute);
    range(OpKind::pop);
  }

  // Bucket by bucket: each layer waits for its own bucket (overlapped weight
  // update) or for the whole all-reduce.
  void optimizer() {
    range(OpKind::push, "optimizer");
    p_.first_deferred = p_.ops.size();
    for (std::uint32_t b = 0; b < std::max<std::uint32_t>(p_.buckets, 1); ++b)
      for (std::uint32_t l = layers_; l-- > 0;) {
        if (bucket_of(l) != static_cast<std::int16_t>(b)) continue;
        const Wait w = (o_.overlap_weight_update || !p_.buckets) ? Wait::bucket : Wait::all_buckets;
        Op& sgd = kernel(kname::kSgd, kSgdShape, us(3 + 2 * stage(l)), 0, kNotPlanted, w);
        sgd.bucket = static_cast<std::int16_t>(b);
        sgd.aten = aten("aten::add_", list({layer(l).weight, layer(l).weight, "[]"}),
                        "[\"float\", \"float\", \"Scalar\"]", "[\"\", \"\", \"-0.1\"]");
      }
    range(OpKind::pop);
  }

  void range(OpKind kind, const char* name = nullptr) {
    Op op;
    op.kind = kind;
    op.name = name;
    p_.ops.push_back(op);
  }
  Op& kernel(const char* name, const LaunchShape& shape, TimeNs ns, std::uint8_t stream = 0,
             Planted planted = kNotPlanted, Wait wait = Wait::nothing) {
    return p_.ops.emplace_back(kernel_op(name, shape, ns, stream, planted, wait));
  }
  void comm(std::uint32_t bucket, Wait wait) {
    Op c;
    c.kind = OpKind::comm;
    c.stream = static_cast<std::uint8_t>(p_.comm_stream);
    c.bucket = static_cast<std::int16_t>(bucket);
    c.wait = wait;
    c.name = kname::kAllReduce;
    c.shape = &kNcclShape;
    const auto elements = static_cast<std::int64_t>(kGradientBytes / 4 / std::max<std::uint32_t>(p_.buckets, 1));
    c.aten = aten("nccl:all_reduce", list({dims({elements})}), kFloatList);
    p_.ops.push_back(c);
  }

  // [SECTION] Framework ops (SyntheticOptions::framework_ops)

  static constexpr std::int64_t kBatch = 128, kFeatures = 64, kClasses = 10;
  static constexpr const char* kFloatList = "[\"float\"]";

  // One conv layer's tensors as shape texts: CIFAR ResNet stages of 16, 32, 64
  // channels at 32x32, 16x16, 8x8; a layer that starts a stage has stride 2.
  struct Layer {
    std::int64_t k = 0;
    std::string input, weight, output, channels;
    std::string conv_concrete;      // conv2d's scalar inputs: stride, padding, dilation, groups
    std::string backward_concrete;  // convolution_backward's, up to the output mask
  };
  Layer layer(std::uint32_t l) const {
    const std::uint32_t s = stage(l), before = l == 0 ? 0 : stage(l - 1);
    const std::int64_t c = l == 0 ? 3 : 16 << before, h = 32 >> before, k = 16 << s, ho = 32 >> s;
    Layer y;
    y.k = k;
    y.input = t4(kBatch, c, h, h);
    y.weight = t4(k, c, 3, 3);
    y.output = t4(kBatch, k, ho, ho);
    y.channels = dims({k});
    const std::string stride = l > 0 && before != s ? "[2, 2]" : "[1, 1]";
    y.conv_concrete = "[\"\", \"\", \"\", \"";
    y.conv_concrete += stride;
    y.conv_concrete += "\", \"[1, 1]\", \"[1, 1]\", \"1\"]";
    y.backward_concrete = "[\"\", \"\", \"\", \"[0]\", \"";
    y.backward_concrete += stride;
    y.backward_concrete += "\", \"[1, 1]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\", \"";
    return y;
  }
  // "[a, b, …]": a shape.
  static std::string dims(std::initializer_list<std::int64_t> v) {
    std::string s = "[";
    for (const std::int64_t x : v) {
      if (s.size() > 1) s += ", ";
      s += std::to_string(x);
    }
    s += ']';
    return s;
  }
  static std::string t4(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) { return dims({a, b, c, d}); }
  static std::string list(std::initializer_list<std::string> items) {
    std::string s = "[";
    for (const std::string& i : items) {
      if (s.size() > 1) s += ", ";
      s += i;
    }
    s += ']';
    return s;
  }
  static std::string logits() { return dims({kBatch, kClasses}); }
  std::int32_t transpose(const Layer& y) {
    return aten("aten::contiguous", list({y.output, "[]"}), "[\"float\", \"\"]");
  }
  // convolution_backward(grad_output, input, weight, bias_sizes, stride,
  // padding, dilation, transposed, output_padding, groups, output_mask).
  std::int32_t conv_backward(const Layer& y, const char* mask) {
    return aten("aten::convolution_backward",
                list({y.output, y.input, y.weight, "[]", "[]", "[]", "[]", "[]", "[]", "[]", "[]"}),
                "[\"float\", \"float\", \"float\", \"SymIntList\", \"ScalarList\", \"ScalarList\", "
                "\"ScalarList\", \"Bool\", \"ScalarList\", \"Int\", \"BoolList\"]",
                y.backward_concrete + mask + "\"]");
  }
  // The op's index in Program::aten, or -1 without framework ops.
  std::int32_t aten(const char* name, std::string dims, std::string types, std::string concrete = {}) {
    if (!o_.framework_ops) return -1;
    p_.aten.push_back(AtenOp{name, std::move(dims), std::move(types), std::move(concrete)});
    return static_cast<std::int32_t>(p_.aten.size() - 1);
  }
  // CIFAR ResNets have three stages (16, 32, 64 filters at 32x32, 16x16, 8x8):
  // convolutions cost about the same in each, memory-bound kernels halve.
  std::uint32_t stage(std::uint32_t l) const { return std::min<std::uint32_t>(2, l * 3 / layers_); }
  double mem(std::uint32_t l) const { return 1.0 / static_cast<double>(1u << stage(l)); }
  // Buckets fill from the last layer backwards, as DDP's do.
  std::int16_t bucket_of(std::uint32_t l) const {
    return p_.buckets ? static_cast<std::int16_t>(std::uint64_t{layers_ - 1 - l} * p_.buckets / layers_)
                      : std::int16_t{0};
  }
  bool padded(std::uint32_t l) const { return pad_ && l % 3 == 0; }  // the down-sampling convolutions

  const SyntheticOptions& o_;
  std::uint32_t layers_ = 0, cs_ = 0;
  bool pad_ = false, bcast_ = false, transp_ = false;
  Program p_;
};

}  // namespace

void detail::synth::Program::finish() {
  kernels = 0;
  comm_op.assign(buckets, 0);
  comm_order.clear();
  updates = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::kernel || ops[i].kind == OpKind::comm) ++kernels;
    const std::int16_t group = ops[i].wait == Wait::updated ? ops[i].bucket : ops[i].updates;
    updates = std::max<std::uint32_t>(updates, static_cast<std::uint32_t>(group + 1));
    if (ops[i].kind != OpKind::comm) continue;
    comm_op[static_cast<std::size_t>(ops[i].bucket)] = i;
    comm_order.push_back(static_cast<std::uint32_t>(ops[i].bucket));
  }
}

namespace {

Program build_program(const SyntheticOptions& o, std::uint32_t layers, std::uint32_t fillers) {
  return ProgramBuilder(o, layers).build(fillers);
}

// [SECTION] Validation and sizing ---------------------------------------------------------------

constexpr std::uint64_t kMaxKernels = 1'000'000'000ull;
constexpr std::uint32_t kMaxLayers = 4096;

void check(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("synthetic trace: " + what);
}

void validate(const SyntheticOptions& o) {
  check(o.kernels <= kMaxKernels, "kernels must be at most " + std::to_string(kMaxKernels));
  check(o.gpus >= 1 && o.gpus <= 64, "gpus must be 1..64");
  check(o.layers >= 1 && o.layers <= kMaxLayers, "layers must be 1.." + std::to_string(kMaxLayers));
  check(o.compute_streams >= 1 && o.compute_streams <= 8, "compute streams must be 1..8");
  check(o.allreduce_buckets >= 1 && o.allreduce_buckets <= kMaxLayers, "all-reduce buckets must be 1..4096");
  auto share_ok = [](double s) { return std::isfinite(s) && s >= 0 && s < 0.9; };
  check(share_ok(o.padding_share), "padding share must be in [0, 0.9)");
  check(share_ok(o.broadcast_share), "broadcast share must be in [0, 0.9)");
  check(share_ok(o.transpose_share), "transpose share must be in [0, 0.9)");
  check(o.padding_share + o.broadcast_share + o.transpose_share < 0.9, "planted shares must add up to less than 0.9");
  check(std::isfinite(o.normalization_slowdown) && o.normalization_slowdown >= 1 && o.normalization_slowdown <= 100,
        "normalization slowdown must be in [1, 100]");
  check(o.straggler_gpu >= -1 && o.straggler_gpu < static_cast<std::int64_t>(o.gpus),
        "straggler gpu must be -1 or below the number of GPUs");
  check(std::isfinite(o.straggler_slowdown) && o.straggler_slowdown >= 1 && o.straggler_slowdown <= 100,
        "straggler slowdown must be in [1, 100]");
  check(std::isfinite(o.jitter) && o.jitter >= 0 && o.jitter <= 0.5, "jitter must be in [0, 0.5]");
  constexpr std::int64_t kMaxHostNs = 10'000'000'000;  // 10 s keeps simulated time far from overflow
  check(o.launch_ns >= 0 && o.launch_ns <= kMaxHostNs, "launch time must be in [0, 10 s]");
  check(o.host_overhead_ns >= 0 && o.host_overhead_ns <= kMaxHostNs, "host overhead must be in [0, 10 s]");
  check(o.input_wait_ns >= 0 && o.input_wait_ns <= kMaxHostNs, "input wait must be in [0, 10 s]");
  check(o.loop_host_ns >= 0 && o.loop_host_ns <= kMaxHostNs, "host time between steps must be in [0, 10 s]");
  check(!(o.pageable_input && o.prefetch_input), "pageable input is copied when it is needed: it cannot be prefetched");
  check(!o.workload_shape || o.kernels_per_step == 0,
        "kernels per step are the workload's own with its shape: they cannot be set");
  check(!o.workload_shape || !o.framework_ops,
        "framework ops are for the TensorFlow-like network; the workload's shape has NVTX layer ranges");
  check(o.start_time_ns >= 0 && o.start_time_ns <= (std::int64_t{1} << 62), "start time must be in [0, 2^62]");
  check(o.hw_interval_ns >= 1'000 && o.hw_interval_ns <= 1'000'000'000,
        "hardware sample interval must be in [1 µs, 1 s]");
  check(std::isfinite(o.throttle_share) && o.throttle_share >= 0 && o.throttle_share <= 1,
        "throttle share must be in [0, 1]");
}

struct Sizing {
  std::uint32_t layers = 0, fillers = 0;
};

Sizing size_step(const SyntheticOptions& o) {
  validate(o);
  if (o.kernels_per_step == 0 || o.workload_shape) return {o.layers, 0};
  // Kernels per step grow with the layer count: take the most layers that fit
  // and fill up with elementwise kernels.
  const std::uint32_t minimum = build_program(o, 1, 0).kernels;
  check(o.kernels_per_step >= minimum,
        "kernels per step must be at least " + std::to_string(minimum) + " with these options");
  std::uint32_t lo = 1, hi = kMaxLayers;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (build_program(o, mid, 0).kernels <= o.kernels_per_step)
      lo = mid;
    else
      hi = mid - 1;
  }
  return {lo, o.kernels_per_step - build_program(o, lo, 0).kernels};
}

Program make_program(const SyntheticOptions& o, Sizing s) {
  return o.workload_shape ? build_workload_program(o) : build_program(o, s.layers, s.fillers);
}

// [SECTION] Simulation --------------------------------------------------------------------------

struct Gpu {
  std::uint32_t index = 0;
  Rng rng;
  TrackId cpu_track = 0;
  std::vector<TrackId> stream_track;
  std::vector<std::uint32_t> stream_id;
  std::uint32_t power_series = 0;
  std::uint64_t steps = 0, kernels_left = 0;
  TimeNs cpu = 0;                       // the host thread's clock
  std::vector<TimeNs> stream_free;      // end of the last op on each stream
  TimeNs input_ready = 0;               // this step's batch is on the GPU
  TimeNs next_input_ready = 0;          // the prefetched batch of the next step
  TimeNs step_end_history[2] = {0, 0};  // GPU end of the last two steps (bounded run-ahead)
  // This step, per op (sized to the program once).
  std::vector<std::uint8_t> active;  // issued in this step (API call + GPU op)
  std::vector<TimeNs> dur, api_start, api_end, gpu_start, gpu_end;
  std::vector<TimeNs> bucket_ready, bucket_done;
  std::vector<TimeNs> update_done;    // per bucket: the latest update of its weights ends (kept across steps)
  std::size_t scheduled = 0;          // ops before this one are on the GPU timeline (or deferred: see `placed`)
  std::vector<std::uint8_t> placed;   // this step, per op: on the GPU timeline
  std::vector<RowIndex> open_ranges;  // rows of the open ranges (kNoRow: left out, opened after the cutoff)
  std::size_t cutoff = 0;             // ops from here on are not issued (the trace's last kernel came before)
  TimeNs step_start = 0, step_kernel_ns = 0;
  // Planting: kernel time so far outside / inside planted kernels, and each
  // bucket's last all-reduce time.
  TimeNs other_kernel_ns = 0;
  std::array<TimeNs, kPlantedKinds> planted_ns{};
  // SyntheticOptions::throttle_share: steps from this one on run throttled,
  // from the host time their first step began.
  std::uint64_t first_throttled_step = UINT64_MAX;
  TimeNs throttled_from = INT64_MAX;
};

// The SM clock, unthrottled and held down (a thermal slowdown): kernels take
// longer by their ratio.
constexpr double kClockMhz = 1980, kThrottledClockMhz = 1410;
constexpr std::uint64_t kSwThermalSlowdown = 0x20;  // nvmlClocksEventReasonSwThermalSlowdown
constexpr std::uint64_t kClocksIdle = 0x1;          // nvmlClocksEventReasonGpuIdle

class Simulator {
 public:
  Simulator(const SyntheticOptions& o, Sizing sizing)
      : o_(o), p_(make_program(o, sizing)), comm_rng_(mix(o.seed, 0xa11'4ed0ce)), host_rng_(mix(o.seed, 0x9'7400)) {}

  Trace run();

 private:
  void set_up();
  void set_meta();
  void intern_names();
  void set_up_gpu(Gpu& g, std::uint32_t i, std::uint64_t kernels);
  std::size_t issue_plan(Gpu& g, std::uint64_t step, std::vector<std::uint8_t>& active) const;
  void place_rows();
  void plan_step(Gpu& g, std::uint64_t step);
  void host(Gpu& g, std::size_t from, std::size_t to, bool all);
  void schedule(Gpu& g, std::size_t to, bool all);
  void place(Gpu& g, std::size_t i);
  bool deferred(const Op& op) const {
    return op.kind != OpKind::comm && ((op.wait == Wait::bucket && p_.buckets) || op.wait == Wait::all_buckets);
  }
  void all_reduce(std::uint64_t step);
  void finish_step(Gpu& g, std::uint64_t step);
  struct AtenIds;
  void emit(Gpu& g, StringId step_name);
  std::uint32_t api_row(Gpu& g, std::size_t i, StringId name, std::uint32_t cbid);
  void emit_push(Gpu& g, std::size_t i, StringId name);
  void emit_sync(Gpu& g, std::size_t i, const Op& op);
  void emit_framework_op(Gpu& g, std::size_t i, const AtenIds& a);
  template <class Table>
  RowIndex gpu_op_row(Table& table, std::vector<RowIndex>& next, const Gpu& g, std::size_t i, TrackId track,
                      std::uint32_t corr);
  void emit_kernel(Gpu& g, std::size_t i, const Op& op);
  void emit_memset(Gpu& g, std::size_t i, const Op& op);
  void emit_memcpy(Gpu& g, std::size_t i, const Op& op);
  void emit_power_sample(Gpu& g);
  void add_hardware_series();
  TimeNs noisy(Rng& r, TimeNs ns) const {
    if (o_.jitter == 0 || ns == 0) return ns;
    return std::max<TimeNs>(1, std::llround(static_cast<double>(ns) * (1.0 + o_.jitter * r.symmetric())));
  }
  TimeNs dependency(const Gpu& g, const Op& op) const;

  const SyntheticOptions& o_;
  const Program p_;
  TraceBuilder b_;
  std::vector<Gpu> gpus_;
  Rng comm_rng_;
  std::vector<TimeNs> comm_dur_;  // this step's all-reduce time per bucket (the same on every GPU)
  // Host work (OpKind::host, loop_host_ns) is the training loop's, one for all
  // GPUs: this step's, the same on every GPU.
  Rng host_rng_;
  std::vector<TimeNs> host_dur_;  // per op
  TimeNs loop_ns_ = 0;
  std::uint32_t next_correlation_ = 1;
  StringId launch_name_ = 0, memcpy_name_ = 0, memset_name_ = 0, sync_name_ = 0;
  StringId blocking_memcpy_name_ = 0, device_sync_name_ = 0;
  std::vector<StringId> op_name_;  // interned name of each op that has one
  struct AtenIds {
    StringId name = 0, dims = 0, types = 0, concrete = 0;
  };
  std::vector<AtenIds> aten_;  // Program::aten interned
  StringId cpu_op_ = 0;
  // Where the next row of each track goes. Rows are written straight into
  // their final, sorted place (freeze() then finds every table in order and
  // copies nothing): tracks are created in display order and each track's
  // rows are produced in time order.
  struct Cursors {
    std::vector<RowIndex> kernel, memcpy, memset, api, range, sync, counter;
  } next_;
};

void Simulator::set_up() {
  set_meta();
  b_.add_process(Process{kPid, "synthetic-cnn-train (synthetic)", -1});
  intern_names();
  const std::uint64_t per_gpu = o_.kernels / o_.gpus, extra = o_.kernels % o_.gpus;
  gpus_.resize(o_.gpus);
  for (std::uint32_t i = 0; i < o_.gpus; ++i) set_up_gpu(gpus_[i], i, per_gpu + (i < extra ? 1 : 0));
  // CPU tracks after every GPU track: the display order, so freeze() keeps ids.
  for (Gpu& g : gpus_) {
    g.cpu_track = b_.cpu_track(kPid, kFirstTid + g.index);
    b_.set_track_name(g.cpu_track, "host thread of GPU " + std::to_string(g.index));
  }
  comm_dur_.assign(p_.buckets, 0);
  host_dur_.assign(p_.ops.size(), 0);
  place_rows();
}

// The trace's meta: what made it, and every option, as properties.
void Simulator::set_meta() {
  TraceMeta& m = b_.meta();
  m.source = TraceSource::synthetic;
  m.producer = "gpuscope synth (synthetic data-parallel CNN training, not a measurement)";
  m.host = "synthetic";
  m.command_line = o_.command_line;
  m.start_time_ns = o_.start_time_ns;
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  m.set_property("synthetic.model", o_.workload_shape
                                        ? "resnet-train's network (stem, 4 stages of 2 basic blocks, "
                                          "16-128 filters), data-parallel, one host thread per GPU"
                                        : "CIFAR ResNet-like CNN, data-parallel, one host thread per GPU");
  m.set_property("synthetic.seed", std::to_string(o_.seed));
  m.set_property("synthetic.kernels", std::to_string(o_.kernels));
  m.set_property("synthetic.gpus", std::to_string(o_.gpus));
  m.set_property("synthetic.layers", std::to_string(p_.layers));
  m.set_property("synthetic.kernels_per_step", std::to_string(p_.kernels));
  m.set_property("synthetic.compute_streams", std::to_string(o_.compute_streams));
  m.set_property("synthetic.allreduce_buckets", std::to_string(p_.buckets));
  m.set_property("synthetic.overlap_communication", flag(o_.overlap_communication));
  m.set_property("synthetic.overlap_weight_update", flag(o_.overlap_weight_update));
  m.set_property("synthetic.prefetch_input", flag(o_.prefetch_input));
  m.set_property("synthetic.sync_every_step", flag(o_.sync_every_step));
  m.set_property("synthetic.padding_share", num(o_.padding_share));
  m.set_property("synthetic.broadcast_share", num(o_.broadcast_share));
  m.set_property("synthetic.transpose_share", num(o_.transpose_share));
  m.set_property("synthetic.normalization_slowdown", num(o_.normalization_slowdown));
  m.set_property("synthetic.input_wait_ns", std::to_string(o_.input_wait_ns));
  m.set_property("synthetic.straggler_gpu", std::to_string(o_.straggler_gpu));
  m.set_property("synthetic.straggler_slowdown", num(o_.straggler_slowdown));
  m.set_property("synthetic.launch_ns", std::to_string(o_.launch_ns));
  m.set_property("synthetic.host_overhead_ns", std::to_string(o_.host_overhead_ns));
  m.set_property("synthetic.jitter", num(o_.jitter));
  if (o_.hardware_metrics) {
    m.set_property("synthetic.hardware_metrics", "true");
    m.set_property("synthetic.hw_interval_ns", std::to_string(o_.hw_interval_ns));
    m.set_property("synthetic.tensor_cores", flag(o_.tensor_cores));
  }
  if (o_.throttle_share > 0) m.set_property("synthetic.throttle_share", num(o_.throttle_share));
  if (o_.workload_shape) m.set_property("synthetic.workload_shape", "true");
  if (o_.pageable_input) m.set_property("synthetic.pageable_input", "true");
  if (o_.loop_host_ns) m.set_property("synthetic.loop_host_ns", std::to_string(o_.loop_host_ns));
}

// The names every step uses, interned once (in this order: string ids follow it).
void Simulator::intern_names() {
  launch_name_ = b_.intern("cudaLaunchKernel");
  memcpy_name_ = b_.intern("cudaMemcpyAsync");
  memset_name_ = b_.intern("cudaMemsetAsync");
  sync_name_ = b_.intern("cudaStreamSynchronize");
  for (const Op& op : p_.ops) {
    if (op.blocking && !blocking_memcpy_name_) blocking_memcpy_name_ = b_.intern("cudaMemcpy");
    if (op.device_wide && !device_sync_name_) device_sync_name_ = b_.intern("cudaDeviceSynchronize");
  }
  op_name_.assign(p_.ops.size(), 0);
  for (std::size_t i = 0; i < p_.ops.size(); ++i)
    if (p_.ops[i].name) op_name_[i] = b_.intern(p_.ops[i].name);
  if (o_.framework_ops) {
    b_.meta().set_property("synthetic.framework_ops", "true");
    cpu_op_ = b_.intern("cpu_op");
    for (const AtenOp& a : p_.aten)
      aten_.push_back({b_.intern(a.name), b_.intern(a.dims), b_.intern(a.types),
                       a.concrete.empty() ? StringId{0} : b_.intern(a.concrete)});
  }
}

// H100-class numbers, under a name nobody takes for a real device.
Device synthetic_device(std::uint32_t i) {
  Device d;
  d.id = i;
  d.name = "Synthetic GPU (H100-class)";
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-5e17e71c-0000-4000-8000-%012x", i);
  d.uuid = uuid;
  d.compute_major = 9;
  d.compute_minor = 0;
  d.sm_count = 132;
  d.memory_bytes = 80ull << 30;
  d.core_clock_khz = 1'980'000;
  d.memory_clock_khz = 2'619'000;
  d.memory_bus_width_bits = 5120;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_threads_per_block = 1024;
  d.registers_per_sm = 65536;
  d.shared_memory_per_sm = 233472;
  d.warp_size = 32;
  d.peak_fp32_flops = 67e12;
  d.peak_tensor_flops = 494e12;
  d.peak_memory_bandwidth = 3.35e12;
  return d;
}

// GPU i: its share of the kernels, steps, streams (tracks), per-op state, device and power series.
void Simulator::set_up_gpu(Gpu& g, std::uint32_t i, std::uint64_t kernels) {
  g.index = i;
  g.rng = Rng(mix(o_.seed, i + 1));
  g.kernels_left = kernels;
  g.steps = (g.kernels_left + p_.kernels - 1) / p_.kernels;
  if (o_.throttle_share > 0) {
    const auto throttled = static_cast<std::uint64_t>(std::llround(static_cast<double>(g.steps) * o_.throttle_share));
    if (throttled) g.first_throttled_step = g.steps - throttled;
  }
  g.cpu = o_.start_time_ns;
  g.stream_id.resize(p_.streams);
  g.stream_track.resize(p_.streams);
  for (std::uint32_t s = 0; s < p_.streams; ++s) {
    g.stream_id[s] = p_.stream_ids[s];
    g.stream_track[s] = b_.gpu_track(i, g.stream_id[s]);
    b_.set_track_name(g.stream_track[s], "stream " + std::to_string(g.stream_id[s]) + " (" + p_.stream_what[s] + ")");
  }
  g.stream_free.assign(p_.streams, g.cpu);
  const std::size_t n = p_.ops.size();
  g.active.assign(n, 0);
  for (auto* v : {&g.dur, &g.api_start, &g.api_end, &g.gpu_start, &g.gpu_end}) v->assign(n, 0);
  g.bucket_ready.assign(std::max<std::uint32_t>(p_.buckets, 1), 0);
  g.bucket_done.assign(std::max<std::uint32_t>(p_.buckets, 1), 0);
  g.update_done.assign(std::max<std::uint32_t>(p_.updates, 1), 0);
  g.placed.assign(n, 0);
  b_.add_device(synthetic_device(i));
  g.power_series = b_.counter_series("power", i, "W");
}

// Which ops of `step` this GPU issues: all of them, except that the trace's
// last kernel may end the last step early and the last step prefetches no
// batch. Returns the cutoff (ops from there on are not issued; pops and the
// sync still happen). Pure: the row-counting pass and the simulation share it.
std::size_t Simulator::issue_plan(Gpu& g, std::uint64_t step, std::vector<std::uint8_t>& active) const {
  const std::vector<Op>& ops = p_.ops;
  const std::uint64_t kernels_here = std::min<std::uint64_t>(g.kernels_left, p_.kernels);
  g.kernels_left -= kernels_here;
  std::size_t cutoff = ops.size();
  if (kernels_here < p_.kernels) {
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if ((ops[i].kind == OpKind::kernel || ops[i].kind == OpKind::comm) && ++seen == kernels_here) {
        cutoff = i + 1;
        break;
      }
  }
  const bool has_next_step = step + 1 < g.steps;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpKind k = ops[i].kind;
    active[i] = i < cutoff && k != OpKind::push && k != OpKind::pop && k != OpKind::sync && k != OpKind::host &&
                (k != OpKind::prefetch_copy || has_next_step);
  }
  return cutoff;
}

// Counts every track's rows (a dry run of issue_plan), sizes the columns and
// sets each track's first row.
void Simulator::place_rows() {
  const std::size_t ntracks = b_.tracks().size();
  std::vector<RowIndex> kernels(ntracks), memcpys(ntracks), memsets(ntracks), api(ntracks), ranges(ntracks),
      syncs(ntracks), counters(gpus_.size());
  std::vector<std::uint8_t> active(p_.ops.size());
  for (Gpu& g : gpus_) {
    const std::uint64_t kernels_left = g.kernels_left;
    for (std::uint64_t step = 0; step < g.steps; ++step) {
      const std::size_t cutoff = issue_plan(g, step, active);
      for (std::size_t i = 0; i < p_.ops.size(); ++i) {
        const Op& op = p_.ops[i];
        if (op.kind == OpKind::push) ranges[g.cpu_track] += i < cutoff;
        if (op.kind == OpKind::sync && (i < cutoff || i >= p_.sync_index)) ++syncs[g.cpu_track], ++api[g.cpu_track];
        if (!active[i]) continue;
        ++api[g.cpu_track];
        ranges[g.cpu_track] += op.aten >= 0;
        const TrackId t = g.stream_track[op.stream];
        switch (op.kind) {
          case OpKind::kernel:
          case OpKind::comm: ++kernels[t]; break;
          case OpKind::memset: ++memsets[t]; break;
          default: ++memcpys[t]; break;
        }
      }
      ++counters[g.index];
    }
    g.kernels_left = kernels_left;
  }
  // Column sizes and each track's first row.
  auto starts = [](const std::vector<RowIndex>& counts, std::vector<RowIndex>& first) {
    first.assign(counts.size(), 0);
    std::uint64_t sum = 0;
    for (std::size_t t = 0; t < counts.size(); ++t) {
      first[t] = static_cast<RowIndex>(sum);
      sum += counts[t];
    }
    check(sum < kNoRow, "too many rows for one table");
    return static_cast<std::size_t>(sum);
  };
  TraceTables& tb = b_.tables();
  // Columns on huge pages, as a loaded trace's are (analysis of a trace on
  // 4 KiB pages is ~30% slower: TLB misses), mapped before they are filled.
  auto size_table = [](auto& table, std::size_t n) {
    table.for_each_column([&](ColumnInfo info, auto& col) {
      if (info.flags & (kSparse | kDerived)) return;
      detail::prepare_column(col, n);
      col.resize(n);
    });
  };
  size_table(tb.kernels, starts(kernels, next_.kernel));
  size_table(tb.memcpys, starts(memcpys, next_.memcpy));
  size_table(tb.memsets, starts(memsets, next_.memset));
  const std::size_t napi = starts(api, next_.api);
  size_table(tb.api_calls, napi);
  tb.api_calls.cbid.resize(napi);  // sparse, but every call has one here
  const std::size_t nranges = starts(ranges, next_.range);
  size_table(tb.ranges, nranges);
  if (o_.framework_ops)
    for (auto* col : {&tb.ranges.input_dims, &tb.ranges.input_types, &tb.ranges.concrete_inputs})
      col->assign(nranges, 0);
  size_table(tb.syncs, starts(syncs, next_.sync));
  size_table(tb.counters, starts(counters, next_.counter));
}

TimeNs Simulator::dependency(const Gpu& g, const Op& op) const {
  switch (op.wait) {
    case Wait::nothing: return 0;
    case Wait::input: return g.input_ready;
    case Wait::main_stream: return g.stream_free[0];
    case Wait::all_compute: {
      TimeNs t = 0;
      for (std::uint32_t s = 0; s < p_.compute_streams; ++s) t = std::max(t, g.stream_free[s]);
      return t;
    }
    case Wait::bucket:
      if (op.kind == OpKind::comm || !p_.buckets) return g.bucket_ready[op.bucket];
      return g.bucket_done[op.bucket];
    case Wait::all_buckets: return *std::max_element(g.bucket_done.begin(), g.bucket_done.end());
    case Wait::updated: return g.update_done[op.bucket];
  }
  return 0;
}

// Phase A: noise, planting, the host timeline up to the sync, and the GPU
// timeline up to the optimizer (all-reduce kernels only get their ready time).
void Simulator::plan_step(Gpu& g, std::uint64_t step) {
  const std::vector<Op>& ops = p_.ops;
  g.cutoff = issue_plan(g, step, g.active);

  // Durations. Planted kernels get their category's share of the kernel time
  // so far: with O the time of all other kernels up to and including this
  // step and S the sum of the shares, category c has O * s_c / (1 - S) by the
  // end of the step, split evenly over its kernels in the step. All-reduce
  // kernels count with their transfer time only; the time they wait for the
  // other GPUs is known once the step has run, and the running totals add it
  // next step, so the share over the whole trace stays exact (to the ns
  // without noise, within ~0.1% with noise and stragglers). Counting last
  // step's waits in the estimate as well would correct each wait twice: a gain
  // above 1 between GPUs that wait for each other, and step times that swing
  // by 10x.
  const bool straggler = static_cast<std::int32_t>(g.index) == o_.straggler_gpu;
  const bool throttled = step >= g.first_throttled_step;
  TimeNs others = 0;
  std::array<TimeNs, kPlantedKinds> count{};
  for (std::size_t i = 0; i < g.cutoff; ++i) {
    const Op& op = ops[i];
    TimeNs d = 0;
    switch (op.kind) {
      case OpKind::kernel:
        d = noisy(g.rng, op.base_ns);
        if (straggler && op.compute) d = std::llround(static_cast<double>(d) * o_.straggler_slowdown);
        if (throttled) d = std::llround(static_cast<double>(d) * (kClockMhz / kThrottledClockMhz));
        break;
      case OpKind::comm: d = comm_dur_[op.bucket]; break;
      case OpKind::input_copy:
      case OpKind::prefetch_copy:
        d = noisy(g.rng, std::llround(kInputBytes / (op.blocking ? kPageableBytesPerNs : kInputBytesPerNs)));
        break;
      case OpKind::host: d = host_dur_[i]; break;
      case OpKind::memset: d = noisy(g.rng, std::llround(kGradientBytes / kMemsetBytesPerNs)); break;
      default: break;
    }
    g.dur[i] = d;
    if (op.kind == OpKind::kernel && op.planted)
      ++count[op.planted];
    else if (op.kind == OpKind::kernel)
      others += d;
    else if (op.kind == OpKind::comm)
      others += d;
  }
  const double share[kPlantedKinds] = {0, o_.padding_share, o_.broadcast_share, o_.transpose_share};
  const double rest = 1.0 - share[kPadding] - share[kBroadcast] - share[kTranspose];
  std::array<TimeNs, kPlantedKinds> each{}, remainder{};
  for (int c = 1; c < kPlantedKinds; ++c) {
    if (!count[c]) continue;
    const TimeNs target = std::llround(static_cast<double>(g.other_kernel_ns + others) * share[c] / rest);
    const TimeNs total = std::max<TimeNs>(0, target - g.planted_ns[c]);
    each[c] = total / count[c];
    remainder[c] = total % count[c];
    g.planted_ns[c] += total;
  }
  for (std::size_t i = 0; i < g.cutoff; ++i) {
    const Planted c = ops[i].planted;
    if (c == kNotPlanted) continue;
    g.dur[i] = each[c] + (remainder[c] > 0 ? 1 : 0);
    if (remainder[c] > 0) --remainder[c];
  }

  // Host timeline. Without a sync per step the host still cannot run more than
  // one step ahead of the GPU (a full launch queue or the caching allocator
  // would make it wait).
  if (!o_.sync_every_step) g.cpu = std::max(g.cpu, g.step_end_history[step % 2]);
  // Between steps: loading the batch (the TensorFlow-like shape: as PyTorch's
  // DataLoader does it; the workload's shape loads it in its "data" range),
  // and Python in the training loop.
  if (!o_.workload_shape) g.cpu += o_.input_wait_ns;
  g.cpu += loop_ns_;
  g.step_start = g.cpu;
  if (throttled) g.throttled_from = std::min(g.throttled_from, g.step_start);
  g.step_kernel_ns = 0;
  std::fill(g.bucket_ready.begin(), g.bucket_ready.end(), 0);
  std::fill(g.bucket_done.begin(), g.bucket_done.end(), 0);
  std::fill(g.placed.begin(), g.placed.end(), 0);
  g.scheduled = 0;
  g.input_ready = o_.prefetch_input ? (step == 0 ? 0 : g.next_input_ready) : 0;
  host(g, 0, p_.host_split, false);
  schedule(g, p_.host_split, false);
}

// The host thread issues ops [from, to): a launch takes launch_ns and is
// followed by host_overhead_ns of framework time, host work its duration; a
// sync or a blocking copy waits for the GPU, so the ops before it go on the
// GPU timeline first.
void Simulator::host(Gpu& g, std::size_t from, std::size_t to, bool all) {
  for (std::size_t i = from; i < to; ++i) {
    const Op& op = p_.ops[i];
    g.api_start[i] = g.cpu;  // pushes and pops: the time they happen
    if (op.kind == OpKind::host) {
      if (i < g.cutoff) g.cpu += g.dur[i];
      g.api_end[i] = g.cpu;
      continue;
    }
    if (op.kind == OpKind::sync) {
      if (i >= g.cutoff && i < p_.sync_index) continue;  // a sync inside the part of a last step left out
      schedule(g, i, all);
      TimeNs done = g.stream_free[0];
      if (op.device_wide)
        for (const TimeNs f : g.stream_free) done = std::max(done, f);
      g.api_end[i] = std::max(g.cpu + noisy(g.rng, o_.launch_ns), done + kSyncReturnNs);
      g.cpu = g.api_end[i] + noisy(g.rng, o_.host_overhead_ns);
      continue;
    }
    if (!g.active[i]) continue;
    g.api_end[i] = g.cpu + noisy(g.rng, o_.launch_ns);
    if (op.blocking) {  // the call returns once the copy is done
      schedule(g, i + 1, all);
      g.api_end[i] = std::max(g.api_end[i], g.gpu_end[i] + kSyncReturnNs);
    }
    g.cpu = g.api_end[i] + noisy(g.rng, o_.host_overhead_ns);
  }
}

// Puts the issued ops before `to` on the GPU timeline, in program order. In
// phase A (`all` false) it stops where ops wait for the all-reduce and leaves
// out those that do (deferred: phase C places them).
void Simulator::schedule(Gpu& g, std::size_t to, bool all) {
  if (!all) to = std::min(to, std::min(p_.first_deferred, p_.host_split));
  for (; g.scheduled < to; ++g.scheduled)
    if (g.active[g.scheduled] && (all || !deferred(p_.ops[g.scheduled]))) place(g, g.scheduled);
}

// One op on the GPU timeline. An all-reduce kernel only gets its ready time
// here (all_reduce() places it).
void Simulator::place(Gpu& g, std::size_t i) {
  const Op& op = p_.ops[i];
  g.placed[i] = 1;
  const TimeNs ready = std::max(g.api_end[i] + kLaunchLatencyNs, dependency(g, op));
  if (op.kind == OpKind::comm) {
    g.gpu_start[i] = ready;
    return;
  }
  const TimeNs start = std::max(ready, g.stream_free[op.stream] + kStreamGapNs);
  g.gpu_start[i] = start;
  g.gpu_end[i] = start + g.dur[i];
  g.stream_free[op.stream] = g.gpu_end[i];
  switch (op.kind) {
    case OpKind::kernel:
      g.step_kernel_ns += g.dur[i];
      if (!op.planted) g.other_kernel_ns += g.dur[i];
      if (op.feeds_bucket >= 0)
        g.bucket_ready[op.feeds_bucket] = std::max(g.bucket_ready[op.feeds_bucket], g.gpu_end[i]);
      if (op.updates >= 0) g.update_done[op.updates] = g.gpu_end[i];
      break;
    case OpKind::input_copy: g.input_ready = g.gpu_end[i]; break;
    case OpKind::prefetch_copy: g.next_input_ready = g.gpu_end[i]; break;
    default: break;
  }
}

// Phase B: a bucket's all-reduce runs on every GPU from the moment that GPU
// joins until the last one has joined plus the transfer time: early GPUs wait
// inside the NCCL kernel, as they do for real.
void Simulator::all_reduce(std::uint64_t step) {
  for (const std::uint32_t b : p_.comm_order) {  // a stream runs them in the order they were issued
    const std::size_t i = p_.comm_op[b];
    TimeNs last_join = 0;
    bool any = false;
    for (Gpu& g : gpus_) {
      if (step >= g.steps || !g.active[i]) continue;
      g.gpu_start[i] = std::max(g.gpu_start[i], g.stream_free[p_.ops[i].stream] + kStreamGapNs);
      last_join = any ? std::max(last_join, g.gpu_start[i]) : g.gpu_start[i];
      any = true;
    }
    const TimeNs end = last_join + comm_dur_[b];
    for (Gpu& g : gpus_) {
      if (step >= g.steps || !g.active[i]) continue;
      g.gpu_end[i] = end;
      g.stream_free[p_.ops[i].stream] = end;
      g.bucket_done[b] = end;
      g.step_kernel_ns += end - g.gpu_start[i];
      g.other_kernel_ns += end - g.gpu_start[i];
    }
  }
}

// Phase C: what waits for the all-reduce (the optimizer), the host's calls
// after it and the end-of-step sync.
void Simulator::finish_step(Gpu& g, std::uint64_t step) {
  for (std::size_t i = 0; i < g.scheduled; ++i)  // left out in phase A: they wait for their bucket
    if (g.active[i] && !g.placed[i]) place(g, i);
  host(g, p_.host_split, p_.ops.size(), true);
  schedule(g, p_.ops.size(), true);
  g.step_end_history[step % 2] = g.stream_free[0];
}

// Writes this step's rows in place. Correlation ids are handed out in issue
// order; ranges take their row when they open, so a track's ranges stay
// sorted by start with parents before children.
void Simulator::emit(Gpu& g, StringId step_name) {
  const std::vector<Op>& ops = p_.ops;
  g.open_ranges.clear();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    switch (op.kind) {
      case OpKind::push: emit_push(g, i, op.name ? op_name_[i] : step_name); continue;
      case OpKind::pop: {
        const RowIndex r = g.open_ranges.back();
        g.open_ranges.pop_back();
        if (r != kNoRow) b_.tables().ranges.end[r] = g.api_start[i];
        continue;
      }
      case OpKind::sync:
        if (i >= g.cutoff && i < p_.sync_index) continue;
        emit_sync(g, i, op);
        continue;
      default: break;
    }
    if (!g.active[i]) continue;
    if (op.aten >= 0) emit_framework_op(g, i, aten_[static_cast<std::size_t>(op.aten)]);
    if (op.kind == OpKind::kernel || op.kind == OpKind::comm)
      emit_kernel(g, i, op);
    else if (op.kind == OpKind::memset)
      emit_memset(g, i, op);
    else
      emit_memcpy(g, i, op);
  }
  emit_power_sample(g);
}

// The API call that issued op i: its row on the host thread, and its correlation id.
std::uint32_t Simulator::api_row(Gpu& g, std::size_t i, StringId name, std::uint32_t cbid) {
  ApiCallTable& a = b_.tables().api_calls;
  const RowIndex r = next_.api[g.cpu_track]++;
  const std::uint32_t corr = next_correlation_++;
  a.start[r] = g.api_start[i];
  a.end[r] = g.api_end[i];
  a.track[r] = g.cpu_track;
  a.correlation[r] = corr;
  a.name[r] = name;
  a.domain[r] = static_cast<std::uint8_t>(ApiDomain::runtime);
  a.cbid[r] = cbid;
  return corr;
}

// A range opens (its end comes with its pop); one opened after the cutoff is left out.
void Simulator::emit_push(Gpu& g, std::size_t i, StringId name) {
  const bool emitted = i < g.cutoff;
  const RowIndex r = emitted ? next_.range[g.cpu_track]++ : kNoRow;
  if (emitted) {
    RangeTable& rt = b_.tables().ranges;
    rt.start[r] = g.api_start[i];
    rt.track[r] = g.cpu_track;
    rt.name[r] = name;
    rt.domain[r] = kEmptyString;
    rt.kind[r] = static_cast<std::uint8_t>(RangeKind::push_pop);
  }
  g.open_ranges.push_back(r);
}

void Simulator::emit_sync(Gpu& g, std::size_t i, const Op& op) {
  const std::uint32_t corr = op.device_wide ? api_row(g, i, device_sync_name_, 165) : api_row(g, i, sync_name_, 131);
  SyncTable& st = b_.tables().syncs;
  const RowIndex r = next_.sync[g.cpu_track]++;
  st.start[r] = g.api_start[i];
  st.end[r] = g.api_end[i];
  st.track[r] = g.cpu_track;
  st.correlation[r] = corr;
  st.type[r] = static_cast<std::uint8_t>(op.device_wide ? SyncType::context : SyncType::stream);
  st.device[r] = g.index;
  st.stream[r] = op.device_wide ? kNoId : g.stream_id[0];
  st.event[r] = kNoId;
}

// The framework op around the launch call of op i.
void Simulator::emit_framework_op(Gpu& g, std::size_t i, const AtenIds& a) {
  RangeTable& rt = b_.tables().ranges;
  const RowIndex r = next_.range[g.cpu_track]++;
  rt.start[r] = g.api_start[i];
  rt.end[r] = g.api_end[i];
  rt.track[r] = g.cpu_track;
  rt.name[r] = a.name;
  rt.domain[r] = cpu_op_;
  rt.kind[r] = static_cast<std::uint8_t>(RangeKind::annotation);
  rt.input_dims[r] = a.dims;
  rt.input_types[r] = a.types;
  rt.concrete_inputs[r] = a.concrete;
}

// Op i's row in `table` (the next on its track): its GPU time, track and
// correlation id; the caller writes the rest.
template <class Table>
RowIndex Simulator::gpu_op_row(Table& table, std::vector<RowIndex>& next, const Gpu& g, std::size_t i, TrackId track,
                               std::uint32_t corr) {
  const RowIndex r = next[track]++;
  table.start[r] = g.gpu_start[i];
  table.end[r] = g.gpu_end[i];
  table.track[r] = track;
  table.correlation[r] = corr;
  return r;
}

void Simulator::emit_kernel(Gpu& g, std::size_t i, const Op& op) {
  const TrackId track = g.stream_track[op.stream];
  const std::uint32_t corr = api_row(g, i, launch_name_, 211);
  const LaunchShape& sh = *op.shape;
  KernelTable& k = b_.tables().kernels;
  const RowIndex r = gpu_op_row(k, next_.kernel, g, i, track, corr);
  k.name[r] = op_name_[i];
  k.grid_x[r] = sh.grid[0];
  k.grid_y[r] = static_cast<std::uint16_t>(sh.grid[1]);
  k.grid_z[r] = static_cast<std::uint16_t>(sh.grid[2]);
  k.block_x[r] = static_cast<std::uint16_t>(sh.block[0]);
  k.block_y[r] = static_cast<std::uint16_t>(sh.block[1]);
  k.block_z[r] = static_cast<std::uint16_t>(sh.block[2]);
  k.registers[r] = sh.registers;
  k.static_smem[r] = sh.static_smem;
  k.dynamic_smem[r] = sh.dynamic_smem;
}

void Simulator::emit_memset(Gpu& g, std::size_t i, const Op& op) {
  const TrackId track = g.stream_track[op.stream];
  const std::uint32_t corr = api_row(g, i, memset_name_, 51);
  MemsetTable& m = b_.tables().memsets;
  const RowIndex r = gpu_op_row(m, next_.memset, g, i, track, corr);
  m.bytes[r] = kGradientBytes;
  m.mem_kind[r] = static_cast<std::uint8_t>(MemoryKind::device);
}

void Simulator::emit_memcpy(Gpu& g, std::size_t i, const Op& op) {
  const TrackId track = g.stream_track[op.stream];
  const std::uint32_t corr = op.blocking ? api_row(g, i, blocking_memcpy_name_, 31) : api_row(g, i, memcpy_name_, 41);
  MemcpyTable& m = b_.tables().memcpys;
  const RowIndex r = gpu_op_row(m, next_.memcpy, g, i, track, corr);
  m.bytes[r] = kInputBytes;
  m.kind[r] = static_cast<std::uint8_t>(CopyKind::htod);
  m.src_kind[r] = static_cast<std::uint8_t>(op.blocking ? MemoryKind::pageable : MemoryKind::pinned);
  m.dst_kind[r] = static_cast<std::uint8_t>(MemoryKind::device);
}

// A power sample per step: more kernel time per wall time, more watts.
void Simulator::emit_power_sample(Gpu& g) {
  CounterTable& c = b_.tables().counters;
  const TimeNs wall = std::max<TimeNs>(1, g.stream_free[0] - g.step_start);
  const double busy = std::min(1.0, static_cast<double>(g.step_kernel_ns) / static_cast<double>(wall));
  const RowIndex r = next_.counter[g.power_series]++;
  c.time[r] = g.stream_free[0];
  c.series[r] = g.power_series;
  c.value[r] = std::round((150.0 + 550.0 * busy) * 10.0) / 10.0;
}

Trace Simulator::run() {
  set_up();
  std::uint64_t steps = 0;
  for (const Gpu& g : gpus_) steps = std::max(steps, g.steps);
  const TimeNs comm_total =
      p_.buckets ? std::llround(2.0 * (o_.gpus - 1) / o_.gpus * kGradientBytes / kRingBytesPerNs) : 0;
  std::string step_label;
  for (std::uint64_t s = 0; s < steps; ++s) {
    for (std::uint32_t b = 0; b < p_.buckets; ++b) {
      const TimeNs own = p_.ops[p_.comm_op[b]].base_ns;  // the program's transfer time for this bucket, if any
      comm_dur_[b] = noisy(comm_rng_, own ? own : comm_total / p_.buckets);
    }
    loop_ns_ = noisy(host_rng_, o_.loop_host_ns);
    for (std::size_t i = 0; i < p_.ops.size(); ++i)
      if (p_.ops[i].kind == OpKind::host) host_dur_[i] = noisy(host_rng_, p_.ops[i].base_ns);
    for (Gpu& g : gpus_)
      if (s < g.steps) plan_step(g, s);
    all_reduce(s);
    step_label = "step";
    if (p_.numbered_steps) {
      step_label += ' ';
      step_label += std::to_string(s);
    }
    const StringId step_name = b_.intern(step_label);
    for (Gpu& g : gpus_)
      if (s < g.steps) {
        finish_step(g, s);
        emit(g, step_name);
      }
  }
  if (o_.hardware_metrics) add_hardware_series();
  return b_.freeze();
}

// [SECTION] Hardware series ---------------------------------------------------------------------

// What the counters read while a kernel of a category runs, as fractions of
// peak: large convolutions and GEMMs fill the SMs and issue at a high rate
// (the tensor pipes busy only with tensor cores on, and then fewer
// instructions issued), elementwise-like kernels stream DRAM and issue
// little (memory-bound), the planted padding and broadcast kernels are too
// small to fill the GPU, NCCL's ring kernels use a few SMs.
struct Load {
  double sm_active, occupancy, issue, tensor, dram;
};
Load load_of(KernelCategory c, bool tensor_cores) {
  switch (c) {
    case KernelCategory::convolution:
    case KernelCategory::gemm:
      return tensor_cores ? Load{0.93, 0.45, 0.35, 0.70, 0.30} : Load{0.93, 0.45, 0.70, 0.01, 0.30};
    case KernelCategory::padding:
    case KernelCategory::broadcast: return {0.20, 0.10, 0.05, 0, 0.10};
    case KernelCategory::communication: return {0.12, 0.05, 0.04, 0, 0.15};
    case KernelCategory::transpose:
    case KernelCategory::normalization:
    case KernelCategory::elementwise:
    case KernelCategory::reduction:
    case KernelCategory::pooling:
    case KernelCategory::softmax_loss:
    case KernelCategory::optimizer:
    case KernelCategory::memory: return {0.88, 0.70, 0.15, 0, 0.80};
    default: return {0.60, 0.40, 0.30, 0, 0.30};
  }
}

// Samples each GPU's hw.* series every hw_interval_ns from its first kernel
// to its last, from the longest kernel in flight (as the analysis attributes
// them), with a little noise; nvml.* every tenth sample. Appended series by
// series in time order, so the counter table stays sorted.
void Simulator::add_hardware_series() {
  const KernelTable& k = b_.tables().kernels;
  std::vector<std::uint32_t> gpu_of_track(b_.tracks().size(), UINT32_MAX);
  for (const Gpu& g : gpus_)
    for (TrackId t : g.stream_track) gpu_of_track[t] = g.index;
  std::vector<std::vector<RowIndex>> rows(gpus_.size());
  for (RowIndex i = 0; i < k.size(); ++i)
    if (gpu_of_track[k.track_at(i)] != UINT32_MAX) rows[gpu_of_track[k.track_at(i)]].push_back(i);
  std::unordered_map<StringId, KernelCategory> category;
  auto category_of = [&](StringId name) {
    auto it = category.find(name);
    if (it == category.end()) it = category.emplace(name, classify_kernel(b_.strings().get(name))).first;
    return it->second;
  };
  const TimeNs step = o_.hw_interval_ns;
  constexpr int kNvmlEvery = 10;
  for (const Gpu& g : gpus_) {
    std::vector<RowIndex>& mine = rows[g.index];
    if (mine.empty()) continue;
    std::sort(mine.begin(), mine.end(), [&](RowIndex a, RowIndex b) { return k.start[a] < k.start[b]; });
    std::vector<TimeNs> max_end(mine.size());
    TimeNs m = INT64_MIN;
    for (std::size_t j = 0; j < mine.size(); ++j) max_end[j] = m = std::max(m, k.end[mine[j]]);
    const double peak = b_.devices()[g.index].peak_memory_bandwidth;
    enum { kSm, kOcc, kIssue, kTensor, kRead, kWrite, kClock, kPower, kTemp, kReasons, kSeries };
    static constexpr std::pair<const char*, const char*> kNames[kSeries] = {
        {"hw.sm_active", "%"},      {"hw.sm_occupancy", "%"},     {"hw.sm_issue", "%"},     {"hw.tensor_active", "%"},
        {"hw.dram_read", "B/s"},    {"hw.dram_write", "B/s"},     {"nvml.sm_clock", "MHz"}, {"nvml.power", "W"},
        {"nvml.temperature", "°C"}, {"nvml.throttle_reasons", ""}};
    std::array<std::vector<CounterRow>, kSeries> out;
    std::array<std::uint32_t, kSeries> id{};
    for (int s = 0; s < kSeries; ++s) id[s] = b_.counter_series(kNames[s].first, g.index, kNames[s].second);
    Rng rng(mix(o_.seed, 0x4a4d'0000u + g.index));
    auto noisy = [&](double v) { return v <= 0 ? 0.0 : std::clamp(v + 0.03 * rng.symmetric(), 0.0, 1.0); };
    auto pct = [](double f) { return std::round(f * 10000.0) / 100.0; };
    const TimeNs first = k.start[mine.front()], last = max_end.back();
    double busy_sum = 0;
    int n = 0;
    for (TimeNs at = first - first % step + step; at <= last + step; at += step, ++n) {
      // The longest kernel in flight at `at`.
      std::size_t j = static_cast<std::size_t>(
          std::upper_bound(mine.begin(), mine.end(), at, [&](TimeNs t, RowIndex r) { return t < k.start[r]; }) -
          mine.begin());
      RowIndex best = kNoRow;
      TimeNs best_len = -1;
      while (j > 0 && max_end[j - 1] > at) {
        const RowIndex r = mine[--j];
        if (k.end[r] > at && k.end[r] - k.start[r] > best_len) best = r, best_len = k.end[r] - k.start[r];
      }
      const Load l = best == kNoRow ? Load{0, 0, 0, 0, 0.01} : load_of(category_of(k.name[best]), o_.tensor_cores);
      const double sm = noisy(l.sm_active), dram = noisy(l.dram);
      out[kSm].push_back({at, id[kSm], pct(sm)});
      out[kOcc].push_back({at, id[kOcc], pct(noisy(l.occupancy))});
      out[kIssue].push_back({at, id[kIssue], pct(noisy(l.issue))});
      out[kTensor].push_back({at, id[kTensor], pct(noisy(l.tensor))});
      out[kRead].push_back({at, id[kRead], std::round(dram * 0.6 * peak)});
      out[kWrite].push_back({at, id[kWrite], std::round(dram * 0.4 * peak)});
      busy_sum += sm;
      if ((n + 1) % kNvmlEvery) continue;
      // NVML: the clock, and power and temperature from how busy the SMs were since the last NVML sample.
      const double busy = busy_sum / kNvmlEvery;
      busy_sum = 0;
      const bool hot = at >= g.throttled_from;
      out[kClock].push_back({at, id[kClock], hot ? kThrottledClockMhz : kClockMhz});
      out[kPower].push_back({at, id[kPower], std::round((90.0 + 560.0 * busy * (hot ? 0.8 : 1.0)) * 10.0) / 10.0});
      out[kTemp].push_back({at, id[kTemp], hot ? 88.0 : std::round(55.0 + 15.0 * busy)});
      out[kReasons].push_back({at, id[kReasons],
                               static_cast<double>(hot         ? kSwThermalSlowdown
                                                   : busy == 0 ? kClocksIdle
                                                               : 0)});
    }
    for (const std::vector<CounterRow>& series : out)
      for (const CounterRow& r : series) b_.add_counter(r);
  }
}

}  // namespace

// [SECTION] Public entry points -----------------------------------------------------------------

SyntheticOptions SyntheticOptions::report_pathologies() {
  SyntheticOptions o;
  o.padding_share = 0.214;
  o.broadcast_share = 0.20;
  o.compute_streams = 1;
  o.overlap_communication = false;
  o.overlap_weight_update = false;
  o.prefetch_input = false;
  return o;
}

// Host times chosen so that the GPUs are busy ~35% of the run and ~50% of
// the steps (docs/synthetic.md, "The report's job").
SyntheticOptions SyntheticOptions::report_job() {
  SyntheticOptions o = report_pathologies();
  o.workload_shape = true;
  o.pageable_input = true;
  o.sync_every_step = false;
  o.input_wait_ns = 15'500'000;  // the batch prepared in Python, in the step
  o.loop_host_ns = 20'000'000;   // Python between steps
  return o;
}

SyntheticOptions SyntheticOptions::tuned_job() {
  SyntheticOptions o;
  o.workload_shape = true;
  o.sync_every_step = false;
  o.loop_host_ns = 300'000;  // what Python is left in the loop without the input pipeline
  return o;
}

std::uint32_t synthetic_kernels_per_step(const SyntheticOptions& options) {
  return make_program(options, size_step(options)).kernels;
}

Trace make_synthetic_trace(const SyntheticOptions& options) {
  const Sizing s = size_step(options);
  Simulator sim(options, s);
  return sim.run();
}

}  // namespace gpuscope
