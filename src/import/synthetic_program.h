// One step of a synthetic training job as a "program": the ops one host
// thread issues, in order, with the stream each runs on and what it waits
// for. synthetic.cpp simulates a program on every GPU, step after step; this
// header is what its two program builders share: the TensorFlow-like CNN
// (synthetic.cpp) and the bundled workload's network (synthetic_workload.cpp).
// Internal to import/: nothing outside the synthetic generator includes it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "import/synthetic.h"

namespace gpuscope::detail::synth {

struct LaunchShape {
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint16_t registers;
  std::uint32_t static_smem, dynamic_smem;
};

//  push/pop      an NVTX range on the host thread (name nullptr: the step's own)
//  kernel, comm  a launch (cudaLaunchKernel) and its kernel; comm: an NCCL all-reduce
//  input_copy    this step's batch, host to device (pinned cudaMemcpyAsync, or with
//                Op::blocking a pageable cudaMemcpy that holds the host until it is done)
//  prefetch_copy the next step's batch (pinned cudaMemcpyAsync)
//  memset        the gradient buffers (cudaMemsetAsync)
//  sync          the host waits for the GPU: compute stream 0 (cudaStreamSynchronize),
//                or with Op::device_wide every stream (cudaDeviceSynchronize)
//  host          host work that launches nothing (Python, preparing a batch): base_ns long
enum class OpKind : std::uint8_t { push, pop, kernel, comm, input_copy, prefetch_copy, memset, sync, host };
enum Planted : std::uint8_t { kNotPlanted = 0, kPadding, kBroadcast, kTranspose, kPlantedKinds };

// What an op waits for besides the previous op on its stream.
enum class Wait : std::uint8_t {
  nothing,
  input,        // this step's batch (its H2D copy)
  main_stream,  // the latest op issued on compute stream 0 (an event recorded there)
  all_compute,  // every compute stream (an all-reduce issued after backward)
  bucket,       // the op's gradient bucket: reduced, or without all-reduce, computed
  all_buckets,  // every bucket reduced (weight update after the whole all-reduce)
  updated,      // the previous step's update of the op's bucket (Op::bucket) is done
};

struct Op {
  OpKind kind = OpKind::kernel;
  Planted planted = kNotPlanted;
  Wait wait = Wait::nothing;
  std::uint8_t stream = 0;         // index into Program::stream_ids
  std::int16_t bucket = -1;        // comm: the bucket it reduces; Wait::bucket/updated: the bucket waited for
  std::int16_t feeds_bucket = -1;  // a weight-gradient kernel: the bucket its output belongs to
  std::int16_t updates = -1;       // an optimizer kernel that completes the update of this bucket
  const char* name = nullptr;      // kernel or range name (nullptr: the step's range)
  const LaunchShape* shape = nullptr;
  TimeNs base_ns = 0;        // duration before noise, slowdowns and planting (comm: 0 = the job's transfer model)
  bool compute = false;      // a compute kernel: slowed down on the straggler
  bool blocking = false;     // input_copy: pageable, the call returns when the copy is done
  bool device_wide = false;  // sync: every stream of the device
  std::int32_t aten = -1;    // SyntheticOptions::framework_ops: the op around its launch (Program::aten), -1: none
};

// A compute kernel `ns` long before noise, slowdowns and planting.
inline Op kernel_op(const char* name, const LaunchShape& shape, TimeNs ns, std::uint8_t stream, Planted planted,
                    Wait wait) {
  Op op;
  op.planted = planted;
  op.wait = wait;
  op.stream = stream;
  op.name = name;
  op.shape = &shape;
  op.base_ns = ns;
  op.compute = true;
  return op;
}

// A PyTorch op as the profiler records it with record_shapes=True: the cpu_op
// range around one launch, with its inputs' shapes, types and scalar values
// as JSON texts.
struct AtenOp {
  std::string name, dims, types, concrete;
};

struct Program {
  std::vector<Op> ops;
  std::uint32_t kernels = 0;  // kernels (NCCL included) per step
  std::uint32_t layers = 0;
  std::uint32_t buckets = 0;  // all-reduce kernels per step; 0 when there is no all-reduce (one GPU)
  std::uint32_t updates = 0;  // weight-update groups (Op::updates, Wait::updated), whatever the buckets
  std::uint32_t compute_streams = 0, copy_stream = 0, comm_stream = 0, streams = 0;
  std::vector<std::uint32_t> stream_ids;  // CUDA stream id of each stream index
  std::vector<const char*> stream_what;   // what each stream runs, for its track name
  std::vector<AtenOp> aten;               // the framework ops (empty without SyntheticOptions::framework_ops)
  std::vector<std::size_t> comm_op;       // op index of each bucket's all-reduce
  std::vector<std::uint32_t> comm_order;  // the buckets in the order the host issues their all-reduces
  std::size_t first_deferred = 0;         // first op scheduled in phase C (the optimizer)
  std::size_t host_split = 0;             // first op the host issues in phase C (after the all-reduce is known)
  std::size_t sync_index = 0;             // the step's last sync op (or where it would be)
  bool numbered_steps = true;             // the step's range is "step N" (else "step", as resnet-train names it)
  std::deque<std::string> names;          // range names made for this program (Op::name points here)

  const char* keep(std::string name) { return names.emplace_back(std::move(name)).c_str(); }
  // Counts the kernels, finds each bucket's all-reduce and the sync; call once the ops are in.
  void finish();
};

constexpr TimeNs us(double v) { return static_cast<TimeNs>(v * 1000.0); }

constexpr std::uint32_t kComputeStreamId0 = 7;  // compute stream i has CUDA stream id 7 + i
constexpr std::uint32_t kCopyStreamId = 21;
constexpr std::uint32_t kCommStreamId = 22;

// cuDNN, cuBLAS and NCCL kernels as a capture on an H100 names them (both
// networks run them).
namespace kname {
inline constexpr const char* kConvFirst =
    "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, "
    "float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, "
    "float const*, float const*, bool, int, int)";
inline constexpr const char* kFprop[3] = {
    "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x32_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x64x32_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage3_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel"};
inline constexpr const char* kDgrad[3] = {
    "sm90_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x32_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm90_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x64x32_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm90_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage3_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel"};
inline constexpr const char* kWgrad[3] = {
    "sm90_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x32_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm90_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x64x32_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm90_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage3_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel"};
inline constexpr const char* kGemmForward =
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
    "cublas";
inline constexpr const char* kGemmBackwardData =
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x64x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
    "cublas";
inline constexpr const char* kGemmBackwardWeight =
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize64x32x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
    "cublas";
inline constexpr const char* kAllReduce =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
}  // namespace kname

inline constexpr LaunchShape kConvShape{{64, 2, 1}, {128, 1, 1}, 168, 0, 82944};
inline constexpr LaunchShape kGemmShape{{4, 2, 1}, {128, 1, 1}, 90, 0, 49152};
inline constexpr LaunchShape kNcclShape{{8, 1, 1}, {512, 1, 1}, 96, 4096, 0};

// The bundled workload's network (resnet-train, docs/workload.md), launched
// as its switches say: SyntheticOptions::workload_shape.
Program build_workload_program(const SyntheticOptions& o);

}  // namespace gpuscope::detail::synth
