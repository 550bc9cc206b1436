// Synthetic jobs of many ranks: one trace per rank, each on its own clock,
// for tests and benchmarks of job analysis (docs/scale.md). NOT a sample of
// real behaviour: every trace says it is synthetic.
//
// Each step of every rank: per gradient bucket, a run of compute kernels
// (convolution, GEMM, batch norm, elementwise) on stream 7, then an NCCL
// all-reduce on stream 13. A rank's part of a collective starts when its
// compute for the bucket ends (its arrival) and ends, on every rank within
// a microsecond, when the last rank has arrived plus the transfer time; the
// next bucket's compute starts after it. Durations carry noise; a slow rank
// computes `slowdown` times longer. Every rank's clock reads true time plus
// its own offset (up to `max_clock_offset_ns` either way). With
// `framework_ops`, each compute kernel has a launch call inside a framework
// op with recorded shapes, and each step is a ProfilerStep range around them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace gpuscope {

struct SyntheticJobOptions {
  std::uint32_t ranks = 8;                     // 2 .. 1,000,000
  std::uint64_t kernels = 20'000;              // per rank, collectives included (whole steps: rounded down, >= 1 step)
  std::uint32_t kernels_per_step = 50;         // per rank, collectives included (buckets + 1 .. 100,000)
  std::uint32_t buckets = 4;                   // all-reduces per step
  std::int32_t slow_rank = -1;                 // this rank computes slower …
  double slowdown = 1.3;                       // … by this factor (>= 1)
  double jitter = 0.05;                        // ± relative noise on compute durations (0 .. 0.5)
  TimeNs max_clock_offset_ns = 2'000'000'000;  // each rank's clock is off by up to this, either way
  std::uint64_t seed = 1;
  std::string command_line;  // recorded in every rank's trace (the same: one run)
  // A launch call and a PyTorch cpu_op range with recorded input shapes
  // around every compute kernel (aten::conv2d, aten::mm, aten::cudnn_batch_norm,
  // aten::add), and the GPU's peak rates: an op table with FLOPs and roofline
  // figures on every rank.
  bool framework_ops = false;
};

class SyntheticJob {
 public:
  // Throws std::invalid_argument naming the bad option.
  explicit SyntheticJob(const SyntheticJobOptions& options);
  std::uint32_t ranks() const { return o_.ranks; }
  std::uint64_t steps() const { return steps_; }
  // What rank r's clock reads minus true time.
  TimeNs clock_offset(std::uint32_t rank) const;
  // Rank r's trace, on its own clock.
  Trace rank_trace(std::uint32_t rank) const;

 private:
  TimeNs compute_ns(std::uint32_t rank, std::uint64_t kernel) const;  // the kernel-th compute kernel of the rank
  SyntheticJobOptions o_;
  std::uint64_t steps_ = 0;
  std::vector<std::uint32_t> first_;  // per bucket: its first compute kernel's place in the step; [buckets] = all
  // The k-th compute kernel of a collective's bucket, counted over the rank's whole trace.
  std::uint64_t kernel_of(std::uint64_t collective, std::uint32_t k) const;
  // Per collective (step * buckets + bucket): when it ends (true time), and
  // when its bucket's compute starts.
  std::vector<TimeNs> end_, begin_;
};

}  // namespace gpuscope
