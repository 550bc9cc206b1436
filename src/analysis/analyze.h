// analyze(): from a Trace to a Profile — every metric and every finding.
//
// Definitions and formulas: docs/metrics.md. Rules and thresholds:
// docs/findings.md. The thresholds below are the documented defaults; each
// names the anchor it starts from.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/profile.h"
#include "trace/trace.h"

namespace gpuscope {

// Thresholds of the findings (docs/findings.md says where each comes from).
// Shares are fractions in [0, 1].
// FindingThresholds::launch_setup_ns' default: a launch call this long did setup work.
inline constexpr TimeNs kLaunchSetupNs = 1'000'000;

struct FindingThresholds {
  double padding_share = 0.05;  // of GPU time; critical at 3x
  double broadcast_share = 0.05;
  double transpose_share = 0.05;
  double normalization_share = 0.15;             // or >= half the convolution time with >= 5% share
  double low_utilization = 0.50;                 // TensorBoard: GPU util < 50%; critical below 0.30
  double low_concurrency = 0.05;                 // nvvp "Low Kernel Concurrency"
  double low_memcpy_overlap = 0.50;              // of memcpy time overlapped with kernels
  double memcpy_min_share = 0.01;                // ... only when copies take >= 1% of the span
  TimeNs idle_gap_ns = 1'000'000;                // nsys gpu_gaps uses 500 ms; training steps are ms-scale
  double idle_gaps_share = 0.05;                 // of the span in such gaps
  double launch_short_kernel_share = 0.50;       // HTA: GPU time < CPU launch time
  double launch_host_wait_share = 0.05;          // small host-wait gaps, of the span (xprof: 3 % moderate)
  double host_sync_share = 0.02;                 // GPU idle after syncs, of the span
  double pageable_min_share = 0.001;             // pageable copy time, of the span
  TimeNs sync_memcpy_htod_exempt_bytes = 65536;  // nsys cuda_memcpy_sync: H2D <= 64 KB excluded
  double sync_memcpy_share = 0.001;
  double step_host_share = 0.20;  // step time outside the GPU's work (before its first op, after its last)
  double input_moderate = 0.05;   // xprof: input >= 5% of step "moderately", >= 20% "highly"
  double input_high = 0.20;
  double exposed_comm_moderate = 0.03;  // xprof collectives: >= 3% moderate, >= 15% high
  double exposed_comm_high = 0.15;
  double straggler_spread = 0.10;            // slowest compute vs median, relative
  double straggler_wait_share = 0.02;        // wait a rank caused, of the others' time (jobs with matched collectives)
  double straggler_wait_critical = 0.10;     // … critical from this share
  double weight_update_share = 0.03;         // optimizer time, of GPU time
  double weight_update_overlap = 0.10;       // optimizer time overlapped with other kernels
  double tensor_core_eligible_share = 0.10;  // conv + GEMM + attention share of GPU time
  double tensor_core_min_share = 0.05;       // tensor-core share of conv + GEMM + attention time
  double aux_min_share = 0.20;               // memory-bound-aux: elementwise/copy/reduction/layout time, of GPU time,
                                             // when above the math …
  double aux_category_share = 0.25;          // … or one such category above this share of GPU time,
  double aux_min_span_share = 0.05;          // … and that time at least this share of the GPUs' span
  std::uint64_t aux_min_kernels = 20;        // … in at least this many launches (something to fuse)
  double eager_attention_share = 0.05;       // GEMM → softmax → GEMM chains, of GPU time …
  std::uint64_t eager_attention_min_chains = 2;  // … in at least this many chains
  double op_min_share = 0.02;                    // an op (per shape) worth a finding: its GPU time / kernel time
  double roofline_min_fraction = 0.3;            // ops reaching less of their roofline than this
  double launch_overhead_min_share = 0.01;       // launch time beyond the op's GPU time, of kernel time
  std::uint64_t launch_overhead_min_calls = 3;   // … for ops called at least this often (a pattern, not a first call)
  TimeNs launch_setup_ns = kLaunchSetupNs;       // a mean launch call this long does setup work, not launching
  double memory_headroom_share = 0.50;           // peak allocated below this share of GPU memory: room for more
  double memory_usable_share = 0.90;             // … of which a larger batch may fill this share (fragmentation)
  double memory_pressure_share = 0.90;           // peak reserved (or allocated) at this share: close to capacity
  double reserved_over_allocated = 1.5;          // churn: peak reserved at least this times peak allocated …
  double allocator_calls_per_step = 1.0;         // … or direct cudaMalloc/cudaFree calls per step (100 without steps)
  // Hardware metrics (docs/metrics.md, "Hardware metrics"): no claim from fewer samples than this.
  std::uint64_t hw_min_samples = 20;
  double hw_low_sm_active = 0.40;      // a busy sample with fewer SMs active than this is "not working"
  double hw_busy_utilization = 0.50;   // busy-not-working: the GPU busy at least this share of its window …
  double hw_not_working_share = 0.50;  // … and at least this share of its busy samples low
  double hw_tensor_idle = 0.05;        // tensor pipes active less than this during convolutions and GEMMs
  double throttle_slowdown = 0.03;     // throttled steps this much slower than the others (relative)
  // memory-bound-kernels: a category's samples at this share of the peak DRAM bandwidth or more …
  double hw_memory_bound_dram = 0.60;
  double hw_memory_bound_issue = 0.30;   // … with instruction issue at most this share of peak: memory-bound
  double hw_compute_bound_issue = 0.50;  // issue at least this share of peak: compute-bound
  double hw_memory_bound_share = 0.10;   // memory-bound categories' share of kernel time worth a finding

  // Idle time reported once, and the optimizer's ops.
  double low_utilization_rest_share = 0.05;  // idle time no other finding counts, of the span
  double optimizer_kernels_per_step = 100;   // kernels the optimizer's ops launch per step (per-parameter) …
  double optimizer_fused_share = 0.5;        // … with less than this share of them multi-tensor / fused
};

inline constexpr TimeNs kConsecutiveKernelDelayNs = 30'000;  // AnalysisOptions::consecutive_kernel_delay_ns' default

struct AnalysisOptions {
  // Analyse only this device (CUDA ordinal); kNoDevice = all.
  std::uint32_t device = kNoDevice;
  // HTA's consecutive_kernel_delay: gaps shorter than this between ops of a
  // stream (not caused by the host) count as kernel_wait. HTA's default of 30
  // is in the trace's unit, µs for Kineto traces, hence 30 µs. Also how
  // long after a late launch returned its op may start and still count as
  // waiting for that launch (every measured GPU starts work within it).
  TimeNs consecutive_kernel_delay_ns = kConsecutiveKernelDelayNs;
  // Most time ranges attached to one finding (the viewer jumps to them).
  std::size_t max_ranges_per_finding = 10;
  // Most hotspots kept (per kernel name); 0 = all.
  std::size_t max_hotspots = 0;
  FindingThresholds thresholds;
};

Profile analyze(const Trace& trace, const AnalysisOptions& options = {});

// A multi-file job: one trace per rank (or process).
struct JobInput {
  const Trace* trace = nullptr;
  std::string file;  // shown in the report
};

// Analyses the traces as one job: per-rank rows, cross-rank skew and
// stragglers, ranks aligned on one clock (Profile::clock_alignment says how).
// A single input gives the same Profile as analyze().
Profile analyze_job(std::span<const JobInput> inputs, const AnalysisOptions& options = {});

// What one trace's file lost in storage and which GPUs have data (the
// Profile's trace_quality entry for it), without analysing anything else.
FileQuality file_quality(const Trace& trace, const std::string& file);

// How the trace's GPU ops attribute to framework ops (the report's
// op_summary for this trace alone): op calls, GPU ops with and without a
// launching op (no correlation id, a correlation id no launch call has, a
// launch outside every op), shapes recorded and unreadable, op ranges
// overlapping without nesting. `gpuscope info` shows it.
OpSummary op_summary(const Trace& trace);

// A finding rule as docs/findings.md lists it. finding_rules() gives every
// rule in the order the rules run (and the doc lists them).
struct FindingRule {
  std::string_view id;        // the Finding::id it produces
  std::string_view summary;   // what it tests, in a few words
  std::string_view severity;  // when it is critical, warning or info (for the default thresholds)
  // The fix as `gpuscope whatif` changes (docs/whatif.md), whose simulated
  // saving replaces the rule of thumb; empty where the graph cannot express it.
  std::string_view fix;
};
std::span<const FindingRule> finding_rules();

// Puts the findings in order and the answers to "What would help?" in
// Profile::helps: findings largest saving first (a simulated saving first at
// equal savings); those under 1 % of the run (their saving and their share,
// Finding::share) to Profile::minor_findings. analyze() calls it, and the
// replay again once it has simulated the fixes (analysis/graph/savings.h).
void settle_findings(Profile* p);

// The share of the replayed critical path that is host time (launch calls,
// other CPU time, input and sync waits); 0 without a path.
double critical_path_host_share(const CriticalPath& c);
// A GPU-bound run (every GPU busy 90 % of its span or more, steps that do
// not wait outside it, a critical path mostly on the GPU) whose heaviest
// kernels (up to 3, each 10 % of kernel time or more, communication aside)
// have no roofline and no hardware counters: whether they could run faster
// the trace cannot tell. Empty unless they hold half the kernel time or more.
struct UnmeasuredKernels {
  double utilization = 0;           // the least busy GPU's
  std::vector<const Hotspot*> hot;  // into Profile::hotspots
  double share = 0;                 // Σ their share of kernel time
  bool shapes = false;              // the trace records ops' input shapes
};
UnmeasuredKernels unmeasured_kernels(const Profile& p);
// Whether an op row with roofline figures lists `kernel` among its top kernels.
bool roofline_measures(const Profile& p, std::string_view kernel);

// Whether settle_findings() capped this finding's rule-of-thumb saving at the
// GPU compute on the critical path (a faster kernel would not shorten a step
// the host decides).
bool capped_by_critical_path(const Profile& p, const Finding& f);

// A finding of the GPU waiting for the host's launches in a trace of a
// one-time graph capture (its capture and the program's first calls): not
// numbered, since whether later calls, which replay the graph, wait the
// trace cannot tell.
bool launch_wait_in_capture(const Profile& p, const Finding& f);

// True if a kernel name marks tensor-core math (HMMA/IMMA/GMMA, cuDNN/cuBLAS
// tile names such as h884, s1688, 16816, CUTLASS's tensorop (not as the end
// of another word: MIOpen's SubTensorOpWithScalar1d is elementwise), Hopper
// sm90 xmma and nvjet GEMMs, Blackwell tcgen05). For a convolution, GEMM or attention
// kernel (`category`), an FP8 or FP4 element type in its name (e4m3, e5m2,
// e2m1, MX formats) marks it too: such products run only on tensor cores (a
// quantize kernel naming the same types is elementwise, and not marked).
bool is_tensor_core_kernel(std::string_view name, KernelCategory category = KernelCategory::other);

// True if a kernel name marks AMD matrix-core (MFMA, WMMA) math: "mfma"
// (paged_attention_ll4mi_QKV_mfma16_kernel), a Tensile/hipBLASLt tile with
// its matrix instruction (Cijk_…_MT64x16x256_MI16x16x1_…), Composable
// Kernel's XDL GEMMs (DeviceGemmXdl, gridwise_gemm_xdl), MIOpen's xdlops
// implicit-GEMM convolutions (igemm_fwd_gtcx2_nhwc_bf16_…), "wmma". A kernel
// without one may use them too: the mark tells yes, its absence nothing.
bool is_amd_matrix_core_kernel(std::string_view name);

}  // namespace gpuscope
