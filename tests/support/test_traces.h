// Traces built in code for the tests and benchmarks (library gpuscope_test_support).
//
//  TraceFactory: hand-written traces, a few lines per event — kernels with
//    their launching API calls (correlation set), copies, fills, CPU ranges
//    and syncs. Times in ns.
//  every_table_trace(): one of everything (every table, sparse columns,
//    awkward strings, NaN counters), for the exporters.
//  random_trace(seed, options): every table and stored column with random
//    values, the extremes of each type, sparse columns present or absent,
//    unicode strings — for property-style round trips.
//  training_trace(options): a data-parallel training job in miniature —
//    kernels of several categories on a few streams per GPU, each launched by
//    a cudaLaunchKernel on one CPU thread per GPU, step ranges with forward /
//    backward halves, a host sync at the end of every step, H2D copies.
//
// Every generator is deterministic for its arguments.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "trace/builder.h"

namespace gpuscope::testing {

// [SECTION] Hand-written traces -----------------------------------------------------------

class TraceFactory {
 public:
  static constexpr std::uint32_t kPid = 100;
  static constexpr TimeNs kAuto = INT64_MIN;          // the launch starts 10 µs before the op
  static constexpr TimeNs kNoLaunch = INT64_MIN + 1;  // no launching call

  explicit TraceFactory(std::int32_t rank = -1);

  void device(std::uint32_t id, std::uint32_t sms = 80, std::int32_t major = 8, std::string name = "Test GPU");
  // A kernel [start, end) on (device, stream), launched by a cudaLaunchKernel
  // call [api_start, api_start + api_dur) on thread `tid`.
  void kernel(std::uint32_t device, std::uint32_t stream, std::string_view name, TimeNs start, TimeNs end,
              TimeNs api_start = kAuto, TimeNs api_dur = 5'000, std::uint32_t blocks = 1000, std::uint32_t tid = 1);
  void memcpy(std::uint32_t device, std::uint32_t stream, CopyKind kind, MemoryKind src, MemoryKind dst,
              std::uint64_t bytes, TimeNs start, TimeNs end, std::string_view api = "cudaMemcpyAsync",
              TimeNs api_start = kAuto, TimeNs api_dur = 5'000, std::uint32_t tid = 1);
  void memset(std::uint32_t device, std::uint32_t stream, TimeNs start, TimeNs end, TimeNs api_start = kAuto);
  void range(std::string_view name, TimeNs start, TimeNs end, std::uint32_t tid = 1,
             RangeKind kind = RangeKind::push_pop, std::string_view domain = "nvtx");
  // A PyTorch op (a cpu_op range) with its recorded input shapes and types,
  // as record_shapes=True gives them.
  // `concrete`: its recorded scalar arguments (Kineto's "Concrete Inputs").
  void cpu_op(std::string_view name, TimeNs start, TimeNs end, std::string_view dims, std::string_view types,
              std::uint32_t tid = 1, std::string_view concrete = {});
  // A framework op around a collective (nccl:all_reduce, record_param_comms, …),
  // with its recorded inputs (empty: none) and Kineto's collective arguments
  // as the importer keeps them (RangeRow::collective, a compact JSON object;
  // empty: none).
  void comm_op(std::string_view name, TimeNs start, TimeNs end, std::string_view dims = {}, std::string_view types = {},
               std::string_view collective = {}, std::uint32_t tid = 1);
  // A PyTorch op with its autograd link (Kineto's "Sequence number" and
  // "Fwd thread id": a forward op has fwd_thread 0, a backward op names its
  // forward op's thread by PyTorch's number).
  void autograd_op(std::string_view name, TimeNs start, TimeNs end, std::int64_t sequence, std::uint32_t fwd_thread,
                   std::uint32_t tid = 1);
  // A host synchronization: the API call and its sync record.
  void sync(SyncType type, std::uint32_t device, std::uint32_t stream, TimeNs start, TimeNs end, std::uint32_t tid = 1);
  // A runtime API call; returns its correlation id.
  std::uint32_t api(std::string_view name, TimeNs start, TimeNs end, std::uint32_t tid = 1);

  TraceMeta& meta() { return b_.meta(); }
  TraceBuilder& builder() { return b_; }
  Trace build() { return b_.freeze(); }

 private:
  std::uint32_t launch(std::string_view name, TimeNs op_start, TimeNs api_start, TimeNs api_dur, std::uint32_t tid);
  void op(std::string_view name, std::string_view domain, TimeNs start, TimeNs end, std::string_view dims,
          std::string_view types, std::string_view collective, std::uint32_t tid, std::string_view concrete = {});

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
inline constexpr const char* kSendRecv =
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";
inline constexpr const char* kSgd = "sgd_momentum_kernel(float*, float*, float const*, float, float, int)";
inline constexpr const char* kGemmTensorCore = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel";
}  // namespace names

// [SECTION] One of everything -------------------------------------------------------------

inline constexpr TimeNs kT0 = 1'700'000'000'123'456'789;  // an epoch time with sub-µs digits

// Every table, with awkward strings; its earliest event is at kT0 - 1'500.
Trace every_table_trace();

// Hardware-metric series as capture writes them (hw.* and nvml.*, units set)
// on two GPUs, beside a series of no device that is not one: fractional,
// integral, large (B/s) and zero values, and a NaN. Its samples start at kT0.
Trace hardware_metrics_trace();

// 20 kernels 3 ms apart on one GPU, no steps; each after the first ended a
// 2 ms gap by a late launch (20 µs before it starts), the host in `call`
// for most of the gap (none where `call` is empty). With `ops`, each launch
// inside a framework op (aten::conv2d): the host side recorded too.
Trace late_launches_after(std::string_view call, bool ops = false);

// [SECTION] Random traces -----------------------------------------------------------------

struct RandomTraceOptions {
  std::size_t max_rows = 300;  // per table
  bool sparse_columns = true;  // false: every sparse column stays empty
  bool extreme_values = true;  // include min/max values of each column type
};

Trace random_trace(std::uint64_t seed, const RandomTraceOptions& o = {});

// The random numbers behind random_trace, for tests that build their own.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  std::uint64_t u64() { return gen_(); }
  std::uint64_t below(std::uint64_t n) { return n ? gen_() % n : 0; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(gen_) < p; }
  template <class T>
  T any() {  // mostly small, sometimes extreme
    const auto r = below(10);
    if (r == 0) return std::numeric_limits<T>::max();
    if (r == 1) return std::numeric_limits<T>::min();
    if (r < 5) return static_cast<T>(below(16));
    return static_cast<T>(u64());
  }

 private:
  std::mt19937_64 gen_;
};

// [SECTION] A training job ----------------------------------------------------------------

struct TrainingTraceOptions {
  std::uint64_t kernels = 10'000;  // total over all GPUs
  std::uint32_t gpus = 2;
  std::uint32_t streams = 3;  // per GPU: 7, 8, …
  std::uint32_t kernels_per_step = 100;
  bool ranges = true;  // step ranges (payload = step index) with forward / backward halves
  std::uint64_t seed = 1;
  TraceSource source = TraceSource::synthetic;
  TimeNs start = 1'000'000;  // the first launch (an epoch time tests the store's large timestamps)
};

// The kernel names the job's kernels take (each one occurs in any job of a few
// hundred kernels); "volta_sgemm_128x64_nn" also carries a mangled name and
// dynamic shared memory.
const std::vector<std::string>& training_kernel_names();

// Fills `b` (so a test can stream it through an appender too).
void add_training_trace(TraceBuilder& b, const TrainingTraceOptions& o);
Trace training_trace(const TrainingTraceOptions& o);

}  // namespace gpuscope::testing
