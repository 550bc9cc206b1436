// Synthetic traces: a deterministic, made-up data-parallel CNN training job of
// any size, for tests and benchmarks (10M+ kernels in seconds). It is NOT a
// sample of real behaviour: the trace says so (meta.source = synthetic, device
// names "Synthetic GPU …"), and every output shows it.
//
// Two networks. By default a TensorFlow-like CIFAR ResNet (Eigen, cuDNN and
// cuBLAS kernel names); with workload_shape the bundled workload's network
// and kernels (resnet-train: its kernel names and NVTX ranges, launched as
// its switches say; docs/synthetic.md, "The workload's shape"). What one
// training step of the first looks like, per GPU (one CPU thread drives each GPU):
//   NVTX "step N" ⊃ "forward", "backward", "all-reduce", "optimizer" (push/pop on the CPU thread)
//   H2D copy of the input batch (cudaMemcpyAsync, copy stream), a memset of the gradient buffers,
//   forward:  per layer [pad] conv [broadcast bias] [transpose] BN [transpose] ReLU, residual adds,
//             average pool, classifier GEMM, softmax
//   backward: softmax, GEMMs, pool, per layer (reverse) ReLU' [transpose] BN' [transpose] dgrad [pad]
//             and wgrad (on a second compute stream when there is one)
//   all-reduce: NCCL kernels on a communication stream, one per gradient bucket, either during
//             backward (bucketed, overlapped) or after it
//   optimizer: one SGD-momentum kernel per layer, after its bucket's all-reduce (overlapped weight
//             update) or after all of them
//   cudaStreamSynchronize at the end of the step (host-side sync row)
//   with framework_ops: a cpu_op range with recorded input shapes around each launch
// Kernel names are cuDNN / Eigen / cuBLAS / NCCL / PyTorch-like, so the
// category table classifies them. Every GPU op has a launching API call with a
// unique correlation id. Durations are nanoseconds of simulated time: streams
// run in order, cross-stream dependencies are honoured, the host runs ahead of
// the GPU until it synchronizes, and an all-reduce ends on every GPU when the
// last GPU has joined it (a straggler makes the others wait inside NCCL).
//
// Planted problems: the *_share options make a category take that share of
// total kernel time (sum of kernel durations, NCCL included) on every GPU.
// Each step tops the running total up to the share, estimating the step's
// all-reduce time from the previous step, so the share over the trace is
// exact to the ns when jitter = 0 and there is no straggler, and off by at
// most one step's estimation error otherwise (well under 0.1 point beyond a
// few dozen steps).
#pragma once

#include <cstdint>
#include <string>

#include "trace/trace.h"

namespace gpuscope {

struct SyntheticOptions {
  // Size and identity.
  std::uint64_t kernels = 100'000;  // kernels in the whole trace, over all GPUs: exactly this many
  std::uint32_t gpus = 4;           // 1..64; with 1 GPU there is no all-reduce
  std::uint64_t seed = 1;           // same options + seed -> identical trace

  // Shape of one step.
  std::uint32_t layers = 18;            // conv layers of the network (1..4096)
  std::uint32_t kernels_per_step = 0;   // 0: what `layers` gives; else exactly this many per GPU per step
                                        // (the layer count is chosen to fit, elementwise kernels fill up)
  std::uint32_t compute_streams = 2;    // 1..8; 1 = every kernel but NCCL on one stream
  std::uint32_t allreduce_buckets = 4;  // gradient buckets (1..layers): NCCL kernels per step
  bool overlap_communication = true;    // all-reduce a bucket as soon as its gradients exist
  bool overlap_weight_update = true;    // update a layer as soon as its bucket is reduced
  bool prefetch_input = true;           // copy the next batch during this step's forward
  bool sync_every_step = true;          // host waits for the GPU at the end of each step
  // The batch is copied from pageable memory with cudaMemcpy on compute
  // stream 0: the host waits for the copy, the compute stream too (no prefetch).
  bool pageable_input = false;
  // A PyTorch cpu_op range around every launch (aten::conv2d, aten::addmm,
  // aten::convolution_backward, …) with its input shapes, types and scalar
  // inputs recorded, as record_shapes=True gives them: an op table with FLOPs.
  bool framework_ops = false;
  // The bundled workload's network (resnet-train: stem, 4 stages of 2 basic
  // blocks, 16-128 filters on 32x32 images, 62 parameter tensors), its kernel
  // names and NVTX ranges (step > data, forward, backward, all-reduce,
  // optimizer, a range per layer and per tensor), launched as resnet-train's
  // switches would: explicit padding and broadcast kernels when their share is
  // planted; without overlap_communication one all-reduce per tensor on
  // compute stream 0 after a cudaDeviceSynchronize, else one per stage on the
  // NCCL stream during backward; without overlap_weight_update one SGD kernel
  // per tensor on stream 0 after the all-reduce, else one per stage on its own
  // stream as soon as its all-reduce ends (the next forward waits for it only
  // at that stage). `layers`, `kernels_per_step`, `allreduce_buckets`,
  // `compute_streams` and framework_ops do not apply.
  bool workload_shape = false;

  // Planted problems. Shares are of total kernel time; their sum must stay below 0.9.
  double padding_share = 0;           // explicit padding kernels (Eigen TensorPaddingOp), fwd and bwd
  double broadcast_share = 0;         // bias broadcast kernels (Eigen TensorBroadcastingOp)
  double transpose_share = 0;         // NCHW<->NHWC transposes around every batch norm
  double normalization_slowdown = 1;  // batch-norm kernels take this many times longer (>= 1)
  // Host time loading each step's batch: before the step's range (unrecorded),
  // or with workload_shape inside the step's "data" range, before its copy.
  std::int64_t input_wait_ns = 0;
  std::int64_t loop_host_ns = 0;    // host time between steps, in no range (Python in the training loop)
  std::int32_t straggler_gpu = -1;  // this GPU computes slower …
  double straggler_slowdown = 1;    // … by this factor (>= 1); the others wait in NCCL

  // Hardware counters (docs/synthetic.md, "Hardware series"): per GPU, the
  // hw.* series CUPTI PM sampling gives (SMs active, occupancy, issue, tensor
  // pipes, DRAM read and write) every hw_interval_ns and NVML's (SM clock,
  // power, temperature, throttle reasons) every ten of those, their values
  // following the kernel running at each sample (the longest in flight).
  bool hardware_metrics = false;
  std::int64_t hw_interval_ns = 100'000;  // 10 kHz, as `gpuscope capture` samples by default
  bool tensor_cores = false;              // convolutions and GEMMs keep the tensor pipes busy
  // The last share of the steps (0..1) runs with the SM clock held down by a
  // thermal slowdown: kernels take longer by the clock ratio, and (with
  // hardware_metrics) the clock drops and NVML's throttle reasons say why.
  double throttle_share = 0;

  // Host timing.
  std::int64_t launch_ns = 5'000;         // CPU duration of one launch call
  std::int64_t host_overhead_ns = 3'000;  // framework time between launches
  double jitter = 0.05;                   // +- relative noise on durations (0..0.5); 0 = exact repeats

  std::int64_t start_time_ns = 1'700'000'000'000'000'000;  // wall clock of the first event
  std::string command_line;                                // stored in meta (the CLI passes its own)

  // The 2016 report's kernel pathologies on the TensorFlow-like network:
  // 21.4% padding, 20% broadcast, one compute stream, all-reduce after
  // backward, weight update after all of it, no prefetch. The GPUs stay busy.
  static SyntheticOptions report_pathologies();
  // The report's job as a whole (`gpuscope synth --preset report`, the
  // demo's sample): the workload's network with those pathologies, and the
  // host as the report found it: Python between steps, each batch prepared
  // in the step and copied from pageable memory, the weight update after the
  // whole all-reduce, a host sync per step; ~35% utilization over the run,
  // ~50% inside the steps (docs/synthetic.md, "The report's job").
  static SyntheticOptions report_job();
  // The same job tuned (`--preset tuned`): no padding or broadcast kernels,
  // the all-reduce and the update per stage, overlapped, the input prepared
  // by workers and prefetched from pinned memory on a copy stream.
  static SyntheticOptions tuned_job();
};

// Kernels one GPU runs per step with these options. Throws std::invalid_argument
// on options make_synthetic_trace would refuse.
std::uint32_t synthetic_kernels_per_step(const SyntheticOptions& options);

// Builds the trace. Throws std::invalid_argument naming the bad option.
Trace make_synthetic_trace(const SyntheticOptions& options);

}  // namespace gpuscope
