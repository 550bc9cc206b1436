// Builds small traces for the analysis tests: kernels with their launching
// API calls (correlation set), copies, fills, CPU ranges and syncs, in a few
// lines per event. Every time is in ns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/builder.h"

namespace gpuscope::testing {

class TraceFactory {
 public:
  static constexpr std::uint32_t kPid = 100;

  explicit TraceFactory(std::int32_t rank = -1) {
    b_.meta().source = TraceSource::synthetic;
    b_.meta().producer = "tests/analysis";
    b_.meta().rank = rank;
    b_.add_process({kPid, "train.py", rank});
    device(0);
  }

  void device(std::uint32_t id, std::uint32_t sms = 80, std::int32_t major = 8, std::string name = "Test GPU") {
    Device d;
    d.id = id;
    d.name = std::move(name);
    d.sm_count = sms;
    d.compute_major = major;
    d.compute_minor = 0;
    b_.add_device(d);
  }

  // A kernel [start, end) on (device, stream), launched by a cudaLaunchKernel
  // call [api_start, api_start + api_dur) on thread `tid` (no call when api_start < 0 … use kNoLaunch).
  static constexpr TimeNs kAuto = INT64_MIN;
  static constexpr TimeNs kNoLaunch = INT64_MIN + 1;
  void kernel(std::uint32_t device, std::uint32_t stream, std::string_view name, TimeNs start, TimeNs end,
              TimeNs api_start = kAuto, TimeNs api_dur = 5'000, std::uint32_t blocks = 1000, std::uint32_t tid = 1) {
    KernelRow k;
    k.start = start;
    k.end = end;
    k.track = b_.gpu_track(device, stream);
    k.name = b_.intern(name);
    k.grid_x = blocks;
    k.grid_y = k.grid_z = 1;
    k.block_x = 256;
    k.block_y = k.block_z = 1;
    k.correlation = launch("cudaLaunchKernel", start, api_start, api_dur, tid);
    b_.add_kernel(k);
  }

  void memcpy(std::uint32_t device, std::uint32_t stream, CopyKind kind, MemoryKind src, MemoryKind dst,
              std::uint64_t bytes, TimeNs start, TimeNs end, std::string_view api = "cudaMemcpyAsync",
              TimeNs api_start = kAuto, TimeNs api_dur = 5'000, std::uint32_t tid = 1) {
    MemcpyRow m;
    m.start = start;
    m.end = end;
    m.track = b_.gpu_track(device, stream);
    m.kind = kind;
    m.src_kind = src;
    m.dst_kind = dst;
    m.bytes = bytes;
    m.correlation = launch(api, start, api_start, api_dur, tid);
    b_.add_memcpy(m);
  }

  void memset(std::uint32_t device, std::uint32_t stream, TimeNs start, TimeNs end, TimeNs api_start = kAuto) {
    MemsetRow m;
    m.start = start;
    m.end = end;
    m.track = b_.gpu_track(device, stream);
    m.bytes = 1024;
    m.mem_kind = MemoryKind::device;
    m.correlation = launch("cudaMemsetAsync", start, api_start, 5'000, 1);
    b_.add_memset(m);
  }

  void range(std::string_view name, TimeNs start, TimeNs end, std::uint32_t tid = 1,
             RangeKind kind = RangeKind::push_pop, std::string_view domain = "nvtx") {
    RangeRow r;
    r.start = start;
    r.end = end;
    r.track = b_.cpu_track(kPid, tid);
    r.name = b_.intern(name);
    r.domain = b_.intern(domain);
    r.kind = kind;
    b_.add_range(r);
  }

  // A host synchronization: the API call and its sync record.
  void sync(SyncType type, std::uint32_t device, std::uint32_t stream, TimeNs start, TimeNs end,
            std::uint32_t tid = 1) {
    const char* name = type == SyncType::context  ? "cudaDeviceSynchronize"
                       : type == SyncType::stream ? "cudaStreamSynchronize"
                                                  : "cudaEventSynchronize";
    const std::uint32_t c = api(name, start, end, tid);
    SyncRow s;
    s.start = start;
    s.end = end;
    s.track = b_.cpu_track(kPid, tid);
    s.correlation = c;
    s.type = type;
    s.device = device;
    s.stream = stream;
    b_.add_sync(s);
  }

  std::uint32_t api(std::string_view name, TimeNs start, TimeNs end, std::uint32_t tid = 1) {
    ApiCallRow a;
    a.start = start;
    a.end = end;
    a.track = b_.cpu_track(kPid, tid);
    a.correlation = next_++;
    a.name = b_.intern(name);
    b_.add_api_call(a);
    return a.correlation;
  }

  TraceMeta& meta() { return b_.meta(); }
  TraceBuilder& builder() { return b_; }
  Trace build() { return b_.freeze(); }

 private:
  std::uint32_t launch(std::string_view name, TimeNs op_start, TimeNs api_start, TimeNs api_dur, std::uint32_t tid) {
    if (api_start == kNoLaunch) return 0;
    if (api_start == kAuto) api_start = op_start - 10'000;
    return api(name, api_start, api_start + api_dur, tid);
  }

  TraceBuilder b_;
  std::uint32_t next_ = 1;
};

// Kernel names as real libraries write them.
namespace names {
inline constexpr const char* kPad =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, "
    "4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> const, "
    "Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 4, 1, "
    "int>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, 4ul> const, "
    "Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> const, "
    "Eigen::GpuDevice>, int)";
inline constexpr const char* kBroadcast =
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, int>, 16, Eigen::MakePointer>, Eigen::TensorBroadcastingOp<Eigen::array<int, 4ul> const, "
    "Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> const, "
    "Eigen::GpuDevice>, int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 4, 1, "
    "int>, 16, Eigen::MakePointer>, Eigen::TensorBroadcastingOp<Eigen::array<int, 4ul> const, Eigen::TensorMap<"
    "Eigen::Tensor<float const, 4, 1, int>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, int)";
inline constexpr const char* kConvTensorCore =
    "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel";
inline constexpr const char* kConvFp32 = "volta_scudnn_128x64_relu_interior_nn_v1";
inline constexpr const char* kRelu =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
    "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
    "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
    "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1}, at::detail::Array<char*, 2>)";
inline constexpr const char* kBatchNorm =
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct, float const*, "
    "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, "
    "float)";
inline constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
inline constexpr const char* kSgd = "sgd_momentum_kernel(float*, float*, float const*, float, float, int)";
inline constexpr const char* kGemmTensorCore = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel";
}  // namespace names

}  // namespace gpuscope::testing
