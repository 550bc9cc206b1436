// Profile: what gpuscope concludes from a Trace — numbers and findings.
//
// [SECTION] Building blocks
// [SECTION] Per device
// [SECTION] Categories and hotspots
// [SECTION] Steps
// [SECTION] Idle time, launches, communication
// [SECTION] Synchronization and copies
// [SECTION] HTA-compatible temporal breakdown
// [SECTION] Framework ops
// [SECTION] Findings
// [SECTION] What would help?
// [SECTION] Critical path and simulated fixes
// [SECTION] Trace quality
// [SECTION] What the traced program is
// [SECTION] Profile
//
// analysis/ fills it (analyze.h); report, JSON, diff and the viewer read it.
// Field names are stable once landed (the viewer and the JSON schema use
// them); new fields are added, never renamed.
// It never refers back into the Trace by row index, so a Profile can outlive
// its Trace and be compared with another (diff). Definitions and formulas of
// every number: docs/metrics.md. Its JSON form: docs/report-schema.md.
//
// Conventions: times are int64 ns; shares and ratios are fractions in [0, 1];
// a ratio whose denominator is 0 is reported as 0 and flagged by the field's
// documentation, never NaN.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/damage.h"
#include "trace/types.h"

namespace gpuscope {

// [SECTION] Building blocks ------------------------------------------------------------------

struct TimeRange {
  TimeNs start = 0, end = 0;
  TimeNs duration() const { return end - start; }
  friend bool operator==(const TimeRange&, const TimeRange&) = default;
};

// Summary statistics of a set of durations.
struct DurationStats {
  std::uint64_t count = 0;
  TimeNs total = 0, min = 0, max = 0, mean = 0, median = 0;
};

// [SECTION] Per device --------------------------------------------------------------------------

// What a GPU's hardware measured while the trace ran: the counter series
// "hw.*" (CUPTI PM sampling) and "nvml.*" (NVML) of the device, over its
// window (docs/metrics.md, "Hardware metrics"). Measured, not derived from
// when kernels ran; empty when the trace has no such series.
struct HwMetric {
  std::string name;  // the series, "hw.sm_active"
  std::string unit;  // as the series gives it ("%", "B/s", "MHz", …)
  std::uint64_t samples = 0;
  double mean = 0, min = 0, max = 0;
};

// The samples of hw.sm_active, hw.tensor_active, hw.sm_issue and DRAM
// throughput taken while kernels of one category ran (each sample goes to the
// longest kernel in flight at its time): a statistical estimate, with its count.
struct HwCategory {
  KernelCategory category = KernelCategory::other;
  std::uint64_t samples = 0;                                 // hw.sm_active samples that fell in its kernels
  std::optional<double> sm_active, tensor_active, sm_issue;  // fractions of peak; null: no samples
  std::optional<double> dram_bytes_per_s;                    // read + write; null: no samples (or in % without a peak)
  // DRAM read + write as a fraction of the device's peak bandwidth: measured
  // so (Nsight Systems' "[Throughput %]"), or B/s over the device's peak;
  // null where neither is known.
  std::optional<double> dram_share;
  std::uint64_t issue_samples = 0, dram_samples = 0;  // hw.sm_issue samples; DRAM sample times
};

struct DeviceHw {
  std::vector<HwMetric> metrics;        // one per series, by name
  std::vector<HwCategory> by_category;  // categories with samples, most samples first
  // Busy but not working: hw.sm_active samples taken while a kernel ran, and
  // those of them below the threshold (FindingThresholds::hw_low_sm_active),
  // with the kernels most often in flight during those.
  std::uint64_t busy_samples = 0, low_busy_samples = 0;
  std::optional<double> busy_sm_active;  // mean over busy_samples
  std::vector<std::string> low_kernels;  // most low samples first (at most 5)
  // Clocks: steps with a thermal or power throttle reason in one of their
  // nvml.throttle_reasons samples, and how long they took against the others.
  std::uint64_t throttle_samples = 0;  // samples with a thermal or power reason
  std::uint64_t throttle_mask = 0;     // every reason seen in those (NVML's bits)
  std::uint32_t throttled_steps = 0, other_steps = 0;
  TimeNs throttled_step_mean_ns = 0, other_step_mean_ns = 0;
  std::optional<double> sm_clock_max_mhz, throttled_sm_clock_mhz;  // most seen; mean in throttled samples
};

// Host ranges (framework ops, Python functions, annotations) of one name in
// some stretch of host time.
struct HostRange {
  std::string name;
  TimeNs ns = 0;            // Σ of their durations
  std::uint64_t count = 0;  // ranges of that name
};

// Theoretical occupancy of a GPU's kernels, weighted by their time
// (analysis/ops/occupancy.h; docs/metrics.md, "Occupancy").
struct DeviceOccupancy {
  std::string limits = "unknown";     // where the per-SM limits came from: "trace", "table cc 9.0", …, "unknown"
  std::uint64_t known_kernels = 0;    // kernels with a known occupancy
  std::uint64_t unknown_kernels = 0;  // … without (no block size or registers in the trace, or no limits)
  TimeNs known_ns = 0;                // Σ durations of the known ones
  double known_share = 0;             // known_ns / DeviceSummary::kernel_time_ns
  std::optional<double> theoretical;  // Σ duration × occupancy / known_ns; null when no kernel's is known
  // Kernel time (of the known ones) by what limits the resident blocks per SM.
  TimeNs block_size_ns = 0, blocks_per_sm_ns = 0, registers_ns = 0, shared_memory_ns = 0;
  // Σ duration × min(blocks, SMs × blocks per SM) × threads per block / (SMs × threads per SM) / known_ns:
  // the share of the GPU's resident-thread slots the kernels take; null when unknown (no SM count).
  std::optional<double> gpu_fill;
  // Work that could run beside the compute kernels: communication kernels
  // and copies (memcpys), and the part of it on streams that also run compute
  // kernels (0 with side work: it already has streams of its own).
  TimeNs side_work_ns = 0, side_work_shared_ns = 0;
  // Compute kernels whose grid has fewer blocks than half the GPU's SMs
  // (Nsight Compute's "grid too small to fill the device"): their count,
  // Σ durations, Σ duration × blocks / SMs (their time were each block's
  // work spread over every SM: the rest is what more blocks could save, at
  // most), and the one with the most time, with its blocks. Measured only
  // where the GPU fill is under a quarter; 0 and empty otherwise.
  std::uint64_t small_grid_kernels = 0;
  TimeNs small_grid_ns = 0, small_grid_spread_ns = 0;
  std::string small_grid_top;
  std::uint64_t small_grid_top_blocks = 0;
  // Of small_grid_ns, the kernels whose launching op recorded its input
  // shapes, and of those the ones whose inputs are all tiny (every tensor
  // at most 4,096 elements with at most one dimension above 1: scalars,
  // vectors, [1, n] rows); the ops with the most of the latter, up to three
  // (aten::add_ [[1],[1],[]]: 2.4 ms, 680 kernels).
  TimeNs small_grid_shaped_ns = 0, small_grid_tiny_ns = 0;
  std::vector<HostRange> small_grid_tiny_ops;  // name: the op and its shapes; count: its kernels
};

struct DeviceSummary {
  std::uint32_t id = 0;
  std::string name;
  std::int32_t compute_major = 0, compute_minor = 0;  // 0 when the source did not say
  std::uint32_t sm_count = 0;
  std::int32_t rank = -1;                    // distributed rank of the process that drove it, -1 unknown
  TimeRange window;                          // first GPU op start .. last GPU op end on this device
  TimeNs span_ns = 0;                        // window.duration()
  TimeNs busy_ns = 0;                        // |union of all GPU ops (kernels, memcpys, memsets)|
  double utilization = 0;                    // busy_ns / span_ns
  TimeNs kernel_busy_ns = 0;                 // |union of kernels|
  double kernel_concurrency = 0;             // time with >= 2 kernels in flight / kernel_busy_ns
  double mean_kernels_in_flight = 0;         // sum of kernel durations / kernel_busy_ns
  TimeNs memcpy_ns = 0;                      // |union of memcpys|
  double memcpy_compute_overlap = 0;         // |memcpy ∩ kernels| / memcpy_ns
  TimeNs communication_ns = 0;               // |union of communication kernels|
  double communication_compute_overlap = 0;  // |comm ∩ non-comm kernels| / communication_ns
  TimeNs idle_ns = 0;                        // span_ns - busy_ns
  TimeNs compute_ns = 0;                     // |union of non-communication kernels|
  TimeNs exposed_communication_ns = 0;       // |communication \ compute|: communication nothing hides
  TimeNs memcpy_exposed_ns = 0;              // |memcpys \ kernels|
  TimeNs kernel_time_ns = 0;                 // sum of kernel durations (not a union)
  // The device's idle gaps (between ops of the union) by the cause of the op
  // that ends each gap: HTA's rules applied to the device instead of a stream.
  TimeNs idle_host_wait_ns = 0, idle_kernel_wait_ns = 0, idle_other_ns = 0;
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0;
  std::uint32_t streams = 0;       // streams with at least one GPU op
  double sm_efficiency = 0;        // duration-weighted min(blocks / SMs, 1); 0 if SM count unknown
  double sm_efficiency_known = 0;  // the share of kernel time whose grid is recorded (sm_efficiency is over it)
  // Σ FLOPs of the ops with a known cost / Σ their GPU time; null when no op's FLOPs are known
  std::optional<double> achieved_tflops;
  std::string peaks_source;  // where the roofline's peaks came from (a datasheet), empty when unknown
  // Memory (docs/metrics.md, "Memory"); nullopt where the trace does not say.
  std::optional<std::uint64_t> memory_bytes;          // the GPU's memory
  std::optional<std::uint64_t> peak_allocated_bytes;  // most bytes in live allocations at once
  std::optional<std::uint64_t> peak_reserved_bytes;   // most bytes the allocator held from the GPU
  DeviceHw hw;                                        // what its hardware measured; empty without such series
  DeviceOccupancy occupancy;                          // theoretical occupancy and GPU fill of its kernels
};

// [SECTION] Categories and hotspots ----------------------------------------------------------

// Kernel time per category. Copies and fills done by the copy engines
// (memcpy/memset rows) are not kernels: Profile::memcpys describes them;
// category `memory` holds copy kernels (concatenation, dtype casts).
struct CategoryTime {
  KernelCategory category = KernelCategory::other;
  TimeNs time_ns = 0;  // sum of kernel durations in this category
  double share = 0;    // time_ns / Profile::kernel_time_ns
  std::uint64_t count = 0;
  DurationStats stats;  // of the kernel durations (stats.total == time_ns)
};

struct Hotspot {
  std::string name;  // demangled kernel name
  KernelCategory category = KernelCategory::other;
  DurationStats stats;
  double share = 0;                  // stats.total / Profile::kernel_time_ns
  std::uint32_t device = kNoDevice;  // kNoDevice when aggregated over devices
  bool tensor_cores = false;         // the name marks a tensor-core kernel (hmma, 16816, wgmma, …)
  std::string category_rule;         // what placed it in its category ("name: gemm", category_rule_text())
  // The Python line that launched most of its time, on a trace with
  // PyTorch's Python tracer (with_stack): the innermost Python frame around
  // the launching call outside torch's own modules, and that frame's share
  // of the time of the launches looked at; empty and 0 where the trace has
  // no Python frames (docs/metrics.md, "Python frames").
  std::string python_frame;
  double python_frame_share = 0;
};

// [SECTION] Steps ---------------------------------------------------------------------------------

// Where the steps came from: none found, NVTX/annotation step ranges,
// PyTorch's ProfilerStep#N, the repeating kernel pattern, or bursts of GPU
// work separated by host gaps (docs/metrics.md, "Steps").
enum class StepSource : std::uint8_t { none, nvtx, profiler_step, pattern, bursts };

// What the GPU's hardware measured during one step: the means of its
// samples inside the step (null where the series is absent or has none).
struct StepHw {
  std::optional<double> sm_active, sm_occupancy, tensor_active;  // fractions of peak
  std::optional<double> dram_bytes_per_s;                        // read + write
  std::optional<double> sm_clock_mhz, power_w, temperature_c;
  bool throttled = false;  // a thermal or power throttle reason in one of its samples
};

struct Step {
  std::int32_t index = 0;
  std::string name;  // "ProfilerStep#12", NVTX "step 3", or "step 3" (pattern)
  TimeRange range;
  // Breakdown of the step's wall time on its device, priority-ordered so the
  // parts add up to the step time: compute (non-communication kernels), then
  // communication, then memcpy/memset, then idle.
  TimeNs compute_ns = 0, communication_ns = 0, memcpy_ns = 0, idle_ns = 0;
  std::uint32_t device = kNoDevice;
  std::int32_t rank = -1;
  // Part of idle_ns during which the host was loading input (data-loader
  // ranges on the CPU), and part of the rest ended by a host-wait.
  TimeNs input_wait_ns = 0;
  TimeNs host_wait_ns = 0;
  // CPU time of the step after the last GPU op it launched had ended: the
  // step's CPU range outlasting its GPU work (logging, metrics, the next
  // batch's preparation inside the step). Part of the step's time, stated
  // apart from its GPU breakdown; 0 for steps found from the kernel pattern.
  TimeNs host_tail_ns = 0;
  // GPU idle from the step's start to its first GPU op, for steps from
  // ranges (0 for steps found on the GPU): a loop fetches its batch before it
  // launches the step's work, so a wait for input falls here, if anywhere.
  TimeNs lead_idle_ns = 0;
  // Most bytes in live allocations on its device during the step; nullopt
  // where the trace does not say. The least during the step (min_…) tells
  // what stays allocated across steps (weights, optimizer state).
  std::optional<std::uint64_t> peak_allocated_bytes, min_allocated_bytes;
  StepHw hw;  // what the hardware measured during it (docs/metrics.md, "Hardware metrics")
};

// One of the loop thread's outermost ops in a slow step, by name: its host
// time in that step against its median over the steps of that GPU (0 in a
// step without it).
struct OpGrowth {
  std::string name;
  TimeNs ns = 0, median_ns = 0;
};

// A step from ranges that took a fifth longer than the median step of its
// GPU, or more (of four steps or more): what grew, against the median of
// each part over those steps.
struct SlowStep {
  std::string name;
  std::int32_t rank = -1;
  std::uint32_t device = kNoDevice;
  TimeNs ns = 0, median_ns = 0;                  // its time, the median step's
  TimeNs idle_ns = 0, median_idle_ns = 0;        // the GPU's idle time in it
  TimeNs compute_ns = 0, median_compute_ns = 0;  // compute kernels' time in it
  // How long it ran before its GPU's first recorded op: what the GPU did
  // then (idle, or work queued before the recording) is unknown, so its
  // idle is not compared; 0 for a step that began after it.
  TimeNs before_gpu_ns = 0;
  // The loop thread's ops that took the most host time beyond their median
  // (up to 3, most first; only those that grew).
  std::vector<OpGrowth> ops;
};

struct StepSummary {
  StepSource source = StepSource::none;
  std::vector<Step> steps;
  DurationStats step_time;  // over steps
  // Sums over all steps, so shares can be quoted for the whole run.
  TimeNs total_ns = 0, compute_ns = 0, communication_ns = 0, memcpy_ns = 0, idle_ns = 0, input_wait_ns = 0;
  TimeNs host_tail_ns = 0, lead_idle_ns = 0;
  // Why a repeating kernel pattern was not taken for steps (it repeats inside
  // one call: a model's layers in one forward pass); empty otherwise.
  std::string not_steps;
  // Where no step was found: the host's step ranges (ProfilerStep#N, NVTX
  // step ranges) none of which holds GPU work (a trace of another device, or
  // of the host only); 0 otherwise.
  std::uint64_t unused_step_ranges = 0;
  // Step time outside its GPU's work (before the GPU's first op, after its
  // last): host time the GPU-span metrics cannot see. before_gpu_ns is the
  // part before the first op. outside_ranges: the longest host ranges wholly
  // inside that time, most first (up to 5 names).
  TimeNs outside_gpu_ns = 0, before_gpu_ns = 0;
  // Ops of a GPU's first step that started before the step did on the GPU:
  // beside the work queued ahead of it (a GPU behind its host at the
  // trace's start), on another stream. The step starts when that backlog is
  // done, so they are in no step's time; Σ GPUs.
  std::uint64_t early_ops = 0;
  TimeNs early_ops_ns = 0;  // Σ their durations
  // The work queued ahead of the GPUs' first steps from ranges (launched
  // before the trace began, or before the step) that ran before the step
  // started on the GPU: in no step's time; Σ GPUs.
  std::uint64_t backlog_ops = 0;
  TimeNs backlog_ns = 0;  // Σ their durations
  // The backlog's kernels by category (time_ns and count; share and stats
  // unset): the findings that weigh shares of kernel time leave them out,
  // to measure the steps' own work.
  std::vector<CategoryTime> backlog_categories;
  // Host time blocked in synchronizations (device, stream and event syncs)
  // inside the steps, Σ steps: the host waited for the GPU then, and issued
  // nothing.
  TimeNs sync_blocked_ns = 0;
  std::vector<HostRange> outside_ranges;
  // How steps found on the GPU (pattern, bursts) were found: the kernel that
  // begins each iteration and its period, or the bursts and the host gaps
  // between them. Empty for steps from ranges.
  std::string source_evidence;
  // Data-loading host ranges (merged where they overlap) that begin inside a
  // step: about one per step in a training loop; several per step where one
  // recorded step holds several iterations of the loop.
  std::uint64_t input_fetches = 0;
  // Of lead_idle_ns (the GPU idle before each step's first op), the host
  // time the step's thread spent in recorded host ranges (framework ops,
  // Python functions, annotations) or runtime calls that begin or end inside
  // the step (not the step's own range, nor ranges around the whole step);
  // the part of it in ranges whose names are data loading (a data loader,
  // torch.utils.data, a dataset, collate, fetch, tokenizing, file reads; on
  // any thread); and the outermost of those ranges by name, most first (up to 5).
  TimeNs lead_recorded_ns = 0, lead_input_ns = 0;
  std::vector<HostRange> lead_ranges;
  // Σ over the steps from ranges of the host's time issuing the step's GPU
  // work: from the first to the end of the last launching call (made in the
  // step) of the ops the step ran on its GPU, less the time that thread was
  // blocked in synchronizations meanwhile; 0 where no step has one. The
  // steps cannot end sooner than that, whatever the GPU saves.
  TimeNs host_issue_ns = 0;
  // The steps a fifth slower than their GPU's median step, or more (steps
  // from ranges, four or more on the GPU), slowest first, up to 3 per GPU.
  std::vector<SlowStep> slow_steps;
};

// How much GPU-side fixes can shorten the steps before they wait for the
// host's launches: step time beyond the host's time issuing them
// (StepSummary::host_issue_ns); -1 where that is not measured.
inline TimeNs launch_margin_ns(const StepSummary& s) {
  return s.host_issue_ns > 0 && s.total_ns > 0 ? std::max<TimeNs>(0, s.total_ns - s.host_issue_ns) : -1;
}

// The rules whose fix makes the GPU's kernels shorter or fewer and leaves the
// host's launches as they are (docs/findings.md, "Capped by the host"):
// their savings stop at launch_margin_ns unless the fix removes launches too.
inline bool shortens_kernels(std::string_view id) {
  for (std::string_view r :
       {"padding-hotspot", "broadcast-hotspot", "layout-transpose", "slow-normalization", "no-tensor-cores",
        "memory-bound-aux", "eager-attention", "small-grid", "memory-bound-kernels", "op-below-roofline"})
    if (id == r) return true;
  return false;
}

// [SECTION] Idle time, launches, communication -----------------------------------------

// HTA's idle-time causes, per stream: each gap between consecutive ops of a
// stream is host_wait if the next op's launching API call started after the
// previous op ended (the CPU had not even asked yet), else kernel_wait if it
// is shorter than AnalysisOptions::consecutive_kernel_delay_ns, else other.
struct IdleByCause {
  std::int32_t rank = -1;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  TimeNs host_wait_ns = 0;    // the next op's launch call started after the previous op ended
  TimeNs kernel_wait_ns = 0;  // short gaps between back-to-back ops (< consecutive_kernel_delay)
  TimeNs other_ns = 0;
};

struct LaunchStats {
  std::uint64_t launches = 0;  // API calls linked to a GPU op, graph launches and synchronous copies aside
  // GPU ops replayed by a graph launch (cudaGraphLaunch): one call starts
  // them all, so they are left out of the figures below.
  std::uint64_t graph_ops = 0;
  // Copies made by a synchronous copy call (cudaMemcpy, hipMemcpyWithStream):
  // the host waited in the call for the copy, so they are not asynchronous
  // launches and are left out of the figures below (Copies counts them).
  std::uint64_t synchronous_copies = 0;
  // GPU ops with no launch in the trace that ran before their stream's first
  // launched op: a stream runs its work in launch order, so they were
  // launched before that op, before the recording began, and were queued
  // (a first step's backlog), not launched late. Σ streams.
  std::uint64_t backlog_ops = 0;
  DurationStats cpu_launch;                 // duration of the launching API calls
  DurationStats gpu_duration;               // duration of the ops they launched
  DurationStats launch_delay;               // op start - launching call end
  std::uint64_t short_kernels = 0;          // GPU time < CPU launch time
  double short_kernel_share = 0;            // short_kernels / launches
  std::uint32_t max_queue_depth = 0;        // most ops launched and not yet started, on any stream
  std::uint64_t runtime_outliers = 0;       // launching calls longer than 50 µs (HTA's outlier rule)
  std::uint64_t launch_delay_outliers = 0;  // launch delays longer than 100 µs (HTA's outlier rule)
  // GPU idle in gaps shorter than the idle-gap threshold that ended with an
  // op launched after the gap began (the GPU waited for a launch), Σ devices.
  TimeNs late_launch_idle_ns = 0;
  // How long after its launch call returned a trace's first GPU op started,
  // where that is 1 ms or more (kClockDisagreeNs) with no GPU work recorded
  // before it: the host's and the GPU's clocks disagree, or the GPU ran
  // work the trace does not hold (0: not so). In a job, the first such rank.
  TimeNs first_op_delay_ns = 0;
  std::int32_t first_op_delay_rank = -1;
  // Where first_op_delay_ns is set: the least time from a launch call's
  // start to its op's start in that trace (a graph's kernels included),
  // where it is under first_op_delay_ns: the clocks cannot disagree by
  // more, since no op starts before its launch call begins (0: no bound
  // below the delay).
  TimeNs clock_offset_bound_ns = 0;
  // Of the host's time over the steps (or, without steps, the recorded
  // window), what it spent issuing no launches: inside CUDA graph captures up
  // to each graph's first run (GraphSetup), or blocked in host
  // synchronizations or blocking copies, or in kernel launch calls that took
  // launch_setup_ns or more (loading the kernel's module on its first
  // launch, or a launch into a full queue). Σ ranks.
  TimeNs host_not_launching_ns = 0;
  // The part of it in those long launch calls (Σ ranks).
  TimeNs long_launch_ns = 0;
};

// One collective call site (docs/metrics.md, "Collective sites"): the
// collectives of one kind and message size at the same place in their steps
// (the k-th of that kind and size in each step) on one GPU, compared across
// the steps. A collective's kind comes from the framework's annotation around
// its launch (nccl:all_reduce, record_param_comms, ncclAllReduce) before its
// kernel's name: DDP's all-reduce may run as SendRecv kernels. The fastest
// instance approximates the transfer; the time of the others beyond it is
// waiting (for another rank to arrive).
struct CollectiveSite {
  std::int32_t rank = -1;
  std::uint32_t device = kNoDevice;
  std::string kind;      // all_reduce, all_gather, reduce_scatter, broadcast, reduce, send_recv, all_to_all, collective
  std::string named_by;  // the annotation that named the kind ("nccl:all_reduce"); "kernel name" where none did
  std::uint64_t bytes = 0;    // message bytes; 0: the trace does not say
  std::int32_t ordinal = -1;  // its place among its step's collectives of its kind and size; -1: outside steps
  std::string kernel;         // the kernel of its first instance
  DurationStats durations;    // of its instances' kernels (one per step it ran in)
  TimeNs wait_ns = 0;         // Σ (instance − fastest instance): time beyond the transfer
  TimeNs exposed_ns = 0;      // Σ of its instances' time with no compute kernel alongside on their GPU
  // The optimizer's step its first instance was launched inside
  // ("Optimizer.step#Shampoo.step": a sharded optimizer's own exchange); empty: none.
  std::string optimizer;
};

// The collective sites together: the same site (kind, size, place in the
// step) of every GPU and rank pooled, its fastest instance anywhere taken as
// the transfer; by kind, and over all.
struct CollectiveKind {
  std::string kind;                 // as CollectiveSite::kind
  std::uint64_t sites = 0;          // pooled sites of this kind
  TimeNs time_ns = 0;               // Σ their instances' durations
  TimeNs exposed_ns = 0;            // Σ their exposed time
  TimeNs repeated_ns = 0;           // Σ durations of those seen more than once (steps, ranks) with a place or size
  TimeNs wait_ns = 0;               // … of which beyond each one's fastest instance: waiting
  TimeNs optimizer_exposed_ns = 0;  // Σ exposed time of its sites launched inside an optimizer's step
  std::string optimizer;            // the first of those steps' names; empty: none
};
struct CollectiveSummary {
  std::vector<CollectiveKind> kinds;  // most exposed time first
  std::uint64_t sites = 0, repeated_sites = 0;
  TimeNs time_ns = 0, exposed_ns = 0, repeated_ns = 0, wait_ns = 0;  // Σ over kinds
  // The pooled site with the most wait (rank -1, device kNoDevice when
  // pooled over several; its median is then the median of the one with the
  // most instances); durations.count 0 when no site repeats.
  CollectiveSite widest;
  std::uint64_t renamed_sites = 0;  // sites whose annotation names another kind than their kernel's name
  // Waiting the message sizes prove, whatever the link: Σ over sites of a
  // known size whose traffic is at most twice their message (all_reduce,
  // all_to_all, broadcast, reduce, send_recv) of what their fastest instance
  // took beyond twice their bytes at 100 MB/s plus 2 ms, times their
  // instances; and the site with the most of it (durations.count 0: none).
  TimeNs size_wait_ns = 0;
  CollectiveSite size_widest;
};

// One row per rank (per file) of a multi-file job; per device when one
// process drove several GPUs (then rank is the process's rank and `device`
// tells them apart).
struct RankSummary {
  std::int32_t rank = -1;
  std::string source_file;
  TimeNs clock_offset_ns = 0;  // added to this rank's times to align it with rank 0
  TimeNs step_time_mean = 0;
  TimeNs communication_ns = 0;
  double utilization = 0;
  std::uint32_t device = kNoDevice;
  TimeNs compute_ns = 0;  // |union of non-communication kernels|
  TimeNs exposed_communication_ns = 0;
  TimeNs compute_per_step_ns = 0;  // compute_ns / steps (0 without steps)
  // Across ranks (jobs whose collectives could be matched; else 0).
  TimeNs clock_residual_ns = 0;     // median |shift of one collective − clock_offset_ns|
  TimeNs waited_ns = 0;             // Σ over collectives of (last arrival − this rank's arrival)
  TimeNs wait_caused_ns = 0;        // Σ of the others' wait at the collectives it arrived at last
  std::uint64_t last_arrivals = 0;  // collectives it arrived at last
};

// One collective instance of a job: its parts on every rank, matched by call
// site (step, kind, size, place in the step) or in order (docs/scale.md).
// Times on the job clock.
struct CollectiveInstance {
  std::uint32_t index = 0;      // its place in the reference rank's sequence of collectives
  std::string kind;             // all_reduce, all_gather, … (the framework's annotation's, else the kernel name's)
  std::int32_t step = -1;       // the reference rank's step it lies in; -1: none
  TimeRange range;              // first arrival .. last end over the ranks
  TimeNs first_arrival_ns = 0;  // = range.start
  TimeNs last_arrival_ns = 0;   // when the last rank started its part
  std::int32_t last_rank = -1;  // the last rank to arrive
  TimeNs wait_ns = 0;           // Σ over the other ranks of (last arrival − their arrival)
  std::uint64_t bytes = 0;      // 0: the traces do not say
};

// A rank of a job by the wait it caused (Profile::stragglers, most first).
struct Straggler {
  std::int32_t rank = -1;
  std::string source_file;
  TimeNs wait_caused_ns = 0;         // Σ of the others' wait at the collectives it arrived at last
  std::uint64_t last_arrivals = 0;   // collectives it arrived at last
  std::uint64_t critical_steps = 0;  // steps in which it caused the most wait
  TimeNs waited_ns = 0;              // its own wait for the others
};

// Per step of a job (the reference rank's steps): who made the others wait most.
struct JobStep {
  std::int32_t index = 0;           // the step's index
  std::int32_t critical_rank = -1;  // the rank that caused the most wait in it; -1: no wait
  TimeNs wait_ns = 0;               // the others' wait in its collectives
};

// A file of a job that was not analysed, and why.
struct LeftOut {
  std::string file;
  std::string problem;
};

// How far devices/ranks are from each other (0 = identical). Spreads are
// (max - min) / mean over devices with GPU work.
struct Skew {
  std::uint32_t participants = 0;  // devices (or ranks) compared
  double busy_spread = 0;          // of busy_ns
  double compute_spread = 0;       // of compute_ns
  double step_time_spread = 0;     // of mean step time
  std::int32_t slowest_rank = -1;  // most compute (the one others wait for)
  std::uint32_t slowest_device = kNoDevice;
};

// [SECTION] Synchronization and copies -------------------------------------------------

// One place where the steps synchronize with the GPU between their launches
// (SyncStats::mid_step).
struct SyncSite {
  // The innermost Python function outside torch's modules around it, else
  // the innermost named range (record_function, NVTX) that is no step, else
  // `op`, else the synchronizing call's name.
  std::string where;
  std::string op;    // the outermost framework ops around them ("aten::item, aten::to"); empty: none
  std::string part;  // the named range directly under the step it lies in (StepPart); empty: none
  std::uint64_t count = 0;
  TimeNs blocked_ns = 0;  // host time blocked in them
};

// A named range directly under the steps, by name, over the steps.
struct StepPart {
  std::string name;
  std::uint64_t launches = 0;  // GPU ops launched inside it (from any thread), on the steps' GPU
  std::uint64_t syncs = 0;     // synchronizations inside it (as SyncStats::mid_step, its first launch's on)
};

struct SyncStats {
  std::uint64_t count = 0;  // host-side synchronizations (device/stream/event syncs)
  TimeNs total_ns = 0;      // time hosts spent blocked in them
  std::uint64_t device_syncs = 0, stream_syncs = 0, event_syncs = 0;
  // GPU idle right after syncs: from each sync's end to the next op on its
  // device, when that device was idle then (the queue had drained). Blocking
  // copies (below) count as syncs here.
  TimeNs gpu_idle_after_ns = 0;
  // Copies that block the host until the GPU's queue drains, charged as
  // synchronizations: blocking copy calls, copies to or from pageable host
  // memory, device-to-host copies of .item() (MemcpyStats::synchronous).
  std::uint64_t copies = 0;
  TimeNs copy_ns = 0;                   // time hosts spent blocked in their calls
  TimeNs gpu_idle_after_copies_ns = 0;  // the part of gpu_idle_after_ns that follows them
  // Gaps after a read-back of results (device to host, 1 MiB or more) in
  // which the host then worked longer than the copy held it: that work most
  // likely uses the results, so the gap is charged to it (a late launch),
  // not to the copy. Σ devices.
  std::uint64_t readback_gaps = 0;
  // Synchronizations of the one-time set-up of CUDA graphs (a capture up to
  // the graph's first run, torch's cudagraph trees recording one): in none
  // of the figures above; the GPU idle after them is warm-up, no sync's.
  std::uint64_t setup_syncs = 0;
  TimeNs setup_ns = 0;       // time hosts spent blocked in them
  TimeNs setup_idle_ns = 0;  // GPU idle after them (as gpu_idle_after_ns)
  // Of the synchronizations and blocking copies above, those between a
  // step's first and last launch on its GPU (without steps: the recording's
  // first and last launch), which a CUDA graph capture of the step cannot
  // hold; a copy and a synchronization inside one framework op (.item()'s
  // aten::_local_scalar_dense) count as one. For the steps of one GPU per
  // trace (the one with the most steps).
  std::uint64_t mid_step = 0;
  TimeNs mid_step_ns = 0;                // host time blocked in them
  std::uint64_t mid_step_steps = 0;      // the steps looked in (0: no steps, the recording)
  std::vector<SyncSite> mid_step_sites;  // by place, most synchronizations first (at most 8 a rank)
  // The named ranges directly under those steps (record_function, NVTX;
  // none without steps from ranges), by name: what could be captured apart.
  std::vector<StepPart> step_parts;  // most launches first (at most 8 a rank)
  std::uint64_t step_launches = 0;   // GPU ops launched inside those steps, on their GPU
};

// The copies of one kind: direction × the stream they ran on × host memory.
struct CopyGroup {
  std::string direction;    // "HtoD", "DtoH", "DtoD", "peer", "other"
  bool own_stream = false;  // on a stream that runs no kernels; false: on a compute stream
  std::string memory;       // the host side: "pinned", "pageable"; "device" (no host side), "unknown"
  std::uint64_t count = 0, bytes = 0;
  TimeNs time_ns = 0;          // Σ copy durations
  std::uint64_t blocking = 0;  // … of which blocked the host (as MemcpyStats::synchronous)
  TimeNs blocking_ns = 0;      // … their launching calls' durations: the host time they blocked
  // … of which launched inside a compiled region (torch.compile's "Torch-Compiled
  // Region", CompiledFunction): the compiler made them, not the model's code.
  std::uint64_t compiled = 0;
  // … of which launched inside autograd's AccumulateGrad (its hooks
  // included: DDP copies each gradient into its all-reduce bucket there) or
  // DDP's copy of the all-reduced buckets back (copy_bucket_to_grad).
  std::uint64_t gradient = 0;
  std::uint64_t gradient_bytes = 0;  // … their bytes
  // The copies' time with no kernel running on their GPU (Σ copies), and
  // that of the ones launched inside AccumulateGrad.
  TimeNs exposed_ns = 0;
  TimeNs gradient_exposed_ns = 0;
  // … of which device-to-device copies launched by an op directly under a
  // DistributedDataParallel.forward that holds a broadcast collective
  // (nccl:broadcast, c10d::broadcast_, _broadcast_coalesced): DDP's
  // broadcast of the module's buffers (broadcast_buffers), and their time
  // with no kernel running.
  std::uint64_t buffers = 0;
  TimeNs buffers_exposed_ns = 0;
  // … and those launched by an op directly under a
  // DistributedDataParallel.forward that holds no broadcast: not DDP's
  // buffer sync, which the trace would show. Their bytes, and the op that
  // launched the most of them, with how many.
  std::uint64_t ddp_forward = 0;
  std::uint64_t ddp_forward_bytes = 0;
  std::string ddp_forward_op;
  std::uint64_t ddp_forward_op_count = 0;
  // … of which no launching call is in the trace (queued before it began).
  std::uint64_t unlaunched = 0;

  // Adds another group's counts and times (its direction, stream and memory aside).
  void add(const CopyGroup& o) {
    count += o.count, bytes += o.bytes, time_ns += o.time_ns, blocking += o.blocking, blocking_ns += o.blocking_ns;
    compiled += o.compiled, gradient += o.gradient, gradient_bytes += o.gradient_bytes;
    exposed_ns += o.exposed_ns, gradient_exposed_ns += o.gradient_exposed_ns;
    buffers += o.buffers, buffers_exposed_ns += o.buffers_exposed_ns, unlaunched += o.unlaunched;
    ddp_forward += o.ddp_forward, ddp_forward_bytes += o.ddp_forward_bytes;
    if (o.ddp_forward_op == ddp_forward_op)
      ddp_forward_op_count += o.ddp_forward_op_count;
    else if (o.ddp_forward_op_count > ddp_forward_op_count)
      ddp_forward_op = o.ddp_forward_op, ddp_forward_op_count = o.ddp_forward_op_count;
  }
};

struct MemcpyStats {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  TimeNs time_ns = 0;                                     // sum of copy durations
  std::uint64_t htod = 0, dtoh = 0, dtod = 0, other = 0;  // counts by direction
  std::uint64_t pageable = 0;                             // copies with a pageable host side
  TimeNs pageable_ns = 0;
  std::uint64_t pageable_bytes = 0;
  // Copies that block the host: launched by a blocking call (cudaMemcpy, not
  // …Async; small HtoD exempt), with a pageable host side, or the DtoH copy
  // of .item() (aten::_local_scalar_dense).
  std::uint64_t synchronous = 0;
  TimeNs synchronous_ns = 0;  // duration of their launching calls
  std::uint64_t memsets = 0;  // fills (memset rows)
  TimeNs memset_ns = 0;
  std::vector<CopyGroup> groups;  // by direction × stream × host memory, most time first
};

// [SECTION] HTA-compatible temporal breakdown ------------------------------------------

// Computed exactly as Holistic Trace Analysis does (its event selection and its
// µs rounding), so users who know HTA see the same numbers.
// One entry per rank — per (rank, device) when a trace holds several GPUs
// (HTA's traces hold one GPU per rank, gpuscope's may hold several).
struct TemporalBreakdown {
  std::int32_t rank = 0;
  std::uint32_t device = kNoDevice;  // kNoDevice: every device of the rank
  TimeNs span_ns = 0, idle_ns = 0, compute_ns = 0, non_compute_ns = 0;
  double idle_share = 0, compute_share = 0, non_compute_share = 0;
  // HTA rounds times to whole µs: a group of ops shorter than its rounding
  // can end before it starts, and HTA's sum then counts more compute than
  // busy time. Its negative non-compute is then shown as 0, and this says
  // what HTA's own figure was; empty otherwise.
  std::string non_compute_note;
};

// [SECTION] Framework ops -----------------------------------------------------------------------

// A kernel under an op (launched by it or by an op inside it).
struct OpKernel {
  std::string name;
  KernelCategory category = KernelCategory::other;
  std::uint64_t count = 0;
  TimeNs time_ns = 0;
  std::uint64_t blocks = 0;  // in the grid of its first launch under the op; 0 when the trace does not say
};

// One row of the op table: the calls of one framework op (PyTorch cpu_op,
// user annotation, NVTX range), per name or per name × recorded input shapes
// and types. "(no op)" holds the GPU work launched outside every op.
struct OpRow {
  std::string name;
  std::string shapes;  // recorded input shapes as JSON text ("[[2048,768],[768,768]]"); empty: not recorded
  std::string dtypes;  // recorded input types as JSON text; empty: not recorded
  std::string path;    // the enclosing ops of its first call, outermost first, " > " between
  std::uint64_t calls = 0;
  TimeNs cpu_self_ns = 0, cpu_total_ns = 0;  // range time without / with the ops inside it
  TimeNs gpu_self_ns = 0, gpu_total_ns = 0;  // GPU ops it launched itself / with the ops inside it
  std::uint64_t kernels = 0;                 // GPU ops it launched itself
  std::uint64_t kernels_total = 0;           // … with the ops inside it
  TimeNs launch_ns =
      0;  // Σ its own launch calls' durations, less a blocking copy's wait (the call until its copy ended)
  TimeNs copy_call_ns = 0;      // … of which calls that launched copies or fills (they may wait: not launch overhead)
  TimeNs starved_ns = 0;        // GPU idle in gaps under 1 ms its own late launches ended
  TimeNs starved_total_ns = 0;  // … with the ops inside it
  std::string family;           // "gemm", "convolution", …; empty: no cost formula
  std::optional<double> flops, bytes;  // Σ over calls; null when unknown
  std::optional<double> achieved_tflops, achieved_tbps, intensity, roofline_fraction;
  std::string bound;                  // "compute" | "memory"; empty when unknown
  std::string math;                   // the precision the roofline used: fp32, bf16, …
  std::string dims;                   // the formula's dimensions of its first call ("M=… N=… K=…")
  bool aligned8 = true;               // GEMMs: M, N, K all multiples of 8; convolutions: their channels
  std::vector<OpKernel> top_kernels;  // its kernels with the ops inside it, most time first (top rows only)
  // Calls that launched GPU work, themselves or through the ops inside them
  // (every call that holds GPU time): a row without recorded shapes mixes
  // calls that did with calls that did not, and its per-call figures are
  // per such call (docs/ops.md).
  std::uint64_t gpu_calls = 0;
  // Calls made inside a call of the same op (an op that calls itself under
  // its name): part of the outer call, so not in `calls`, and their time is
  // counted once, in the outer call's totals (their self times are theirs).
  std::uint64_t nested_calls = 0;
};

struct OpSummary {
  std::uint64_t op_calls = 0;      // op ranges
  std::uint64_t gpu_ops = 0;       // kernels, memcpys, memsets
  std::uint64_t attributed = 0;    // … with a launching op
  std::uint64_t unattributed = 0;  // … without: "(no op)"
  TimeNs unattributed_ns = 0;
  std::uint64_t no_correlation = 0;         // … of which carry no correlation id
  std::uint64_t unmatched_correlation = 0;  // … of which name a correlation id no launch call has
  std::uint64_t with_shapes = 0;            // op calls with recorded input shapes
  std::uint64_t malformed_shapes = 0;       // … whose shapes could not be read (no cost is given for them)
  std::uint64_t above_peak = 0;   // … whose cost, in the time they took, exceeds the GPU's peak (no cost given)
  std::uint64_t overlapping = 0;  // op ranges overlapping another without nesting
  bool shapes_recorded = false;   // any op had input shapes (PyTorch: record_shapes=True)
};

// Forward and backward GPU time per nn.Module (docs/ops.md, "Forward and
// backward per module"): a backward op (an op naming a forward thread:
// autograd's "evaluate_function: XBackward0" with the ops under it) is linked
// to the forward op that created its autograd node by PyTorch's sequence
// number, and through it to the innermost nn.Module range around that op.
// Never guessed by name: without sequence numbers the split is unknown.
struct ModuleTime {
  std::string name;                // the module ("model.layer1.0.conv1", "nn.Module: " dropped); "(no module)"
  TimeNs forward_gpu_ns = 0;       // GPU ops launched inside its calls (innermost module), outside backward ops
  TimeNs backward_gpu_ns = 0;      // GPU ops launched by the backward ops linked to its forward ops
  std::uint64_t backward_ops = 0;  // backward ops linked to its forward ops
  friend bool operator==(const ModuleTime&, const ModuleTime&) = default;
};

struct ModuleSplit {
  bool known = false;              // the trace has sequence numbers; false: no split (the rest stays 0)
  std::uint64_t backward_ops = 0;  // outermost backward ops
  std::uint64_t linked = 0;        // … linked to a forward op
  // … not linked: no forward op of their number in the process (it ran
  // before the trace began), or forward ops of it on several threads
  std::uint64_t unlinked = 0;
  TimeNs backward_gpu_ns = 0;       // GPU ops launched inside backward ops
  TimeNs unlinked_gpu_ns = 0;       // … inside unlinked ones
  std::vector<ModuleTime> modules;  // forward + backward GPU time, most first
  // Of backward_gpu_ns, what forward ops run inside backward ops launched:
  // the forward pass recomputed for the gradients (activation checkpointing,
  // torch.utils.checkpoint), counted in the backward time of the module of
  // the backward op it runs in.
  TimeNs recomputed_gpu_ns = 0;
  std::uint64_t recomputed_ops = 0;  // … those forward ops (outermost ones)
  friend bool operator==(const ModuleSplit&, const ModuleSplit&) = default;
};

// [SECTION] Findings ----------------------------------------------------------------------------

enum class Severity : std::uint8_t { info = 0, warning = 1, critical = 2 };

// How a finding's saving was estimated: the rule's rule of thumb
// (docs/findings.md), or by replaying the trace's dependency graph with the
// fix applied (docs/whatif.md).
enum class SavingSource : std::uint8_t { rule_of_thumb = 0, simulated = 1 };

// What matters: a finding is numbered, a change answered yes and a
// prediction shown when its time is at least this share of the run (of the
// step, for a replayed prediction).
inline constexpr double kMaterialShare = 0.01;
// Whether a predicted median step is at least kMaterialShare shorter than
// the replayed one.
inline bool materially_shorter(TimeNs replayed, TimeNs predicted) {
  return predicted > 0 && static_cast<double>(predicted) <= (1 - kMaterialShare) * static_cast<double>(replayed);
}

struct Finding {
  std::string id;  // stable rule id: "padding-hotspot", "low-concurrency", …
  Severity severity = Severity::info;
  std::string title;           // one line with the numbers
  std::string evidence;        // which kernels / metric vs threshold, in words
  std::string recommendation;  // what to change
  TimeNs saving_ns = 0;        // estimated time a fix would save over the trace
  double metric = 0;           // the measured value the rule tested …
  double threshold = 0;        // … and the threshold it crossed
  std::uint32_t device = kNoDevice;
  std::vector<TimeRange> ranges;     // where to look (the viewer zooms here)
  std::vector<std::string> kernels;  // kernel names involved, most expensive first
  SavingSource saving_source = SavingSource::rule_of_thumb;
  std::string fix;               // the fix as a `gpuscope whatif` change ("--remove padding"); empty: none
  TimeNs predicted_step_ns = 0;  // median step after the fix, simulated (0: not simulated)
  // The replay's own saving where saving_ns is capped below it (a host-side
  // fix is credited only with the GPU idle its late launches ended); 0 otherwise.
  TimeNs replay_saving_ns = 0;
  // Why the saving is not the plain one: the fix was not simulated (its
  // changed graph has a cycle), or it was and saves nothing. Empty otherwise.
  std::string saving_note;
  // A simulated fix that saves nothing alone may save once the fixes that do
  // save time are made (the host stops deciding the step): those fixes
  // (`gpuscope whatif` changes), the median step with them, and with them and
  // this one. Empty and 0 unless that makes the step at least 1 % shorter.
  std::string after_fixes;
  TimeNs after_from_ns = 0;
  TimeNs after_to_ns = 0;
  // Which case of its rule fired, for tools and the answers to "What would
  // help?" ("too-small-grid", "preprocessing", "setup"); empty when the rule
  // has one case. docs/findings.md lists each rule's cases.
  std::string variant;
  // Its time as a share of the run (of kernel time for the rules that
  // measure kernel time: padding, tensor cores, …), where the rule measures
  // one (gpu-idle-gaps: the part of its gaps a fix of the program may remove,
  // warm-up aside); 0 otherwise. A finding is numbered when this share or its saving
  // is at least 1 % of the run (an info finding with a saving: that saving,
  // of the GPUs' span); else it is a minor observation.
  double share = 0;
  // The id of another finding whose fix removes this one's saving too (a
  // CUDA graph capture of the step removes the per-parameter optimizer's
  // host time with every other op's): the saving is part of that one's, not
  // in addition to it. Empty otherwise.
  std::string saving_within;
};

// [SECTION] What would help? ----------------------------------------------------------------

// The answer to one of the changes users ask about ("more streams?"), from
// the trace: yes (with the findings that show it), no (with what in the trace
// says so), unknown (the trace cannot tell, and why), or not applicable.
// `later`: not now (the replay of its fix alone gains nothing: something
// else decides the step), but yes after the changes that save time now (the
// replay with them predicts a step shorter by 1 % or more).
enum class Verdict : std::uint8_t { yes = 0, no = 1, unknown = 2, not_applicable = 3, later = 4 };
struct HelpAnswer {
  std::string id;        // stable: "input-workers", "overlap-communication", … (docs/findings.md)
  std::string question;  // "more data-loader workers?"
  Verdict verdict = Verdict::unknown;
  std::string reason;                 // what in the trace decides it, with the numbers
  std::vector<std::string> findings;  // ids of the numbered findings behind it
  std::string fix;                    // the `gpuscope whatif` change simulated for it; empty: none
  TimeNs predicted_step_ns = 0;       // median step with that fix, simulated, when shorter; 0: none
};

// One part of the GPUs' idle time, by what it waited for, and the one finding
// that charges it (docs/findings.md, "Where the idle time went"). The parts
// are disjoint; with the rest they add up to the GPUs' idle time.
struct IdleCharge {
  // Stable: "input-wait", "host-sync", "blocking-copy", "pageable-staging"
  // (before a host-to-device copy from pageable memory, from its call's start
  // to the copy's: the driver staging its bytes), "late-launch" (gaps
  // under the idle-gap threshold), "late-launch-gap", "queued-gap",
  // "comm-gap" (held work launched in a host range named for communication
  // with no communication kernel recorded for it: probably communication
  // the trace did not record),
  // "unlaunched-gap" (ended by ops with no launch in the trace: late launch
  // or held work, unknown), "unrecorded-gap" (held until a stream's first
  // op in the trace: the stream may have run work queued before the
  // recording began, so whether the GPU idled is unknown; no finding charges
  // it), "warm-up" (gaps of the threshold or more), "other" (the rest: short gaps
  // ended by queued work or dependencies, and what no part explains);
  // "input-before-start": input loading before a GPU's first op, outside its
  // span and so not part of its idle time (listed last).
  std::string cause;
  TimeNs ns = 0;        // summed over the GPUs
  std::string finding;  // the rule id that charges it (numbered or minor); empty: none does
  std::string note;     // why none does, or how it charges it; empty otherwise
  // Of `ns` ("late-launch-gap" only), the time the launching thread was
  // inside recorded host work (a framework op, a range, a runtime call) with
  // no data-loading range around it: the host's own work, no wait for input.
  TimeNs host_recorded_ns = 0;
};

// Where the host was during one part of the GPUs' idle time (an IdleCharge's
// cause), from the host samples of the threads the GPUs waited for: the
// thread whose launch ended the gap, else the thread that launched most of
// the GPU's work. Only for traces with host samples (gpuscope's Python
// sampler, Nsight Systems' CPU sampling).
struct HostFrame {
  std::string frame;          // as the sampler wrote it: "train.py(57): main", "MPI_Waitall"
  std::uint64_t samples = 0;  // samples with it as the innermost frame
};
// Fewer samples than this say nothing of where the host was (HostWhere::note).
inline constexpr std::uint64_t kHostWhereMinSamples = 10;
struct HostWhere {
  std::string cause;          // the IdleCharge cause
  std::uint64_t samples = 0;  // host samples of those threads inside that idle time
  std::uint32_t threads = 0;  // threads they were taken on
  std::string thread;         // the one with most of them: "python (pid 4505, tid 4505)"
  // The frames most samples share, outermost first: from the root down while
  // one frame holds more than half of the samples (its innermost few); where
  // the stacks share no root (an unwinder that stopped early), from the
  // innermost frame up (its innermost few).
  std::vector<std::string> path;
  std::uint64_t path_samples = 0;  // samples under the path's last frame
  std::uint32_t path_depth = 0;    // frames on the whole path (path keeps a few)
  bool path_from_root = false;     // the path starts at the stacks' root
  std::vector<HostFrame> leaves;   // innermost frames with most samples, most first
  // Samples with a frame of a data-loading library (PyTorch's
  // torch/utils/data, tf.data) anywhere on their stack.
  std::uint64_t input_samples = 0;
  std::uint64_t python_samples = 0;  // samples with a Python frame ("file.py(line): function")
  std::string note;                  // what the samples cannot tell (too few; none on those threads)
};

// [SECTION] Critical path and simulated fixes ----------------------------------------------

// The critical path of the steps (docs/whatif.md): what decided their length,
// summed over the steps simulated, split by kind and by kernel category.
struct PathCategory {
  KernelCategory category = KernelCategory::other;
  TimeNs ns = 0;
};
struct PathOp {
  std::string name;
  KernelCategory category = KernelCategory::other;
  TimeNs ns = 0;            // its time on the paths
  std::uint64_t count = 0;  // ops of that name on them
};
struct CriticalPath {
  std::uint64_t steps = 0;  // steps whose paths are summed (0: one path over the whole trace)
  TimeNs length_ns = 0;     // Σ of the paths' lengths
  TimeNs gpu_compute_ns = 0, communication_ns = 0, copy_ns = 0, cpu_launch_ns = 0, cpu_other_ns = 0, input_wait_ns = 0,
         sync_wait_ns = 0, gpu_wait_ns = 0, gpu_gap_ns = 0;
  // Of the host's time on the paths (launch calls and the CPU time between
  // calls), what lies inside the optimizer's steps (Optimizer.step#…): the
  // weight update's host time the next work waited for.
  TimeNs optimizer_host_ns = 0;
  std::vector<PathCategory> categories;  // GPU time on the paths by category, largest first
  std::vector<PathOp> ops;               // GPU ops with the most time on the paths, most first
};

// A fix's predicted step time.
struct Prediction {
  std::string change;  // the `gpuscope whatif` change(s): "--remove padding"
  TimeNs step_ns = 0;  // median step predicted (the span without steps)
  double speedup = 0;  // replayed / predicted step
  // Wall-clock saving over the replayed steps, per trace (as a finding's
  // simulated saving_ns is); 0 where the replay is not shorter.
  TimeNs saving_ns = 0;
  // Where the change is not among the fixes that save time (`together`):
  // the median step with those fixes and this change (0: not predicted).
  TimeNs after_step_ns = 0;
};

// What the replay of the dependency graph covered and predicted.
struct Simulation {
  std::string status;                   // empty: not run; "simulated"; otherwise why it was not
  std::string scope;                    // what was replayed ("all 6 steps", "32 steps in the middle of 61352", …)
  std::uint64_t steps = 0;              // steps simulated (0: the whole trace, without steps)
  TimeNs replayed_step_ns = 0;          // median step replayed
  double replay_error = 0;              // median per-step relative error (span error without steps)
  double replay_error_worst = 0;        // worst step
  std::vector<Prediction> predictions;  // each fix of a finding alone (and the answers' own changes)
  Prediction together;                  // the fixes that save time, together
  std::string together_note;            // why `together` is empty though some fix saves time
};

// [SECTION] Trace quality -------------------------------------------------------------------

// What one analysed file lost in storage (cut short or damaged: its
// TraceMeta::damage) and which of its GPUs have data, kept apart from the
// records the recorder dropped. docs/metrics.md, "Trace quality".
struct FileQuality {
  std::string file;  // the analysed file ("" when analysed from memory)
  FileDamage damage;
  DeviceCoverage devices;
  std::uint64_t dropped_records = 0;  // recording drops (capture.dropped_records): never reached the file
};

struct TraceQuality {
  std::vector<FileQuality> files;  // one per analysed trace, in order
  bool complete() const;           // no file lost anything in storage
};

// [SECTION] What the traced program is ------------------------------------------------------

// What the analysis recognised the traced program to be, each with the
// evidence (analysis/passes/workload.cpp): the findings ask only the questions that
// apply to it, and the report says what it recognised.
struct WorkloadKind {
  std::string phase = "unknown";  // "training", "inference" or "unknown" (too little to tell)
  std::string phase_evidence;
  std::string execution = "eager";  // "eager", "compiled" (Triton, torch.compile) or "cuda graphs" (replays)
  std::string execution_evidence;
  std::uint64_t graph_kernels = 0;  // kernels replayed from CUDA graphs
  std::uint32_t ranks = 1;          // processes of the job (world size, or the job's files)
  // One rank's trace of an MPI job (calls that talk to other ranks, and no
  // world size): said so, with the calls; empty otherwise.
  std::string mpi_evidence;
  std::int32_t world_size = 0;  // as the trace's distributed info says it (0: not said)
  std::int32_t rank = -1;       // the trace's own rank, as its distributed info says it (-1: not said, or a job)
  // One rank's trace of a distributed job whose size it does not give (no
  // world size, but a rank, a process-group backend or DDP's ops): what
  // shows it; empty otherwise (and in a job, whose files hold its ranks).
  std::string rank_evidence;
  bool bundled = false;  // a trace of gpuscope's bundled workload (resnet-train)
  // The framework that ran it, for the words of every fix: "pytorch",
  // "tensorflow", "jax" or "unknown".
  std::string framework = "unknown";
  std::string framework_evidence;
  // The LLM serving engine that ran it, where its own ops or kernels say so:
  // "vllm", "sglang", else empty. Its own switches are the fix's words (CUDA
  // graphs are the engine's to capture, not the user's).
  std::string engine;
  std::string engine_evidence;
  // Data parallelism the program already does: "ddp" (DDP's own ops:
  // DistributedDataParallel.forward or its reducer's; gradients all-reduced
  // in buckets during the backward pass), "all-reduce" (an all-reduce op
  // inside the backward pass without DDP's ops: not DDP's reducer), else
  // empty.
  std::string data_parallel;
  std::string data_parallel_evidence;
  // The weight update's kind: "per-parameter" (a few kernels per parameter
  // each step), "foreach" (multi-tensor kernels), "fused" (PyTorch's or
  // apex's fused optimizer), "unknown" (an optimizer the trace cannot type);
  // empty where no optimizer ran.
  std::string optimizer;
  std::string optimizer_evidence;
  std::uint64_t graph_launches = 0;  // cudaGraphLaunch / cuGraphLaunch calls
  // CUDA graph captures (cudaStreamBeginCapture to EndCapture, on one
  // thread), the launches and async copies recorded inside them (they run
  // where the graph is launched, not there), and the time they cover.
  std::uint64_t graph_captures = 0;
  std::uint64_t captured_launches = 0;
  TimeNs capture_ns = 0;
  // The replays of graphs captured in the trace: graph launches after a
  // capture's end on its thread, the kernels they ran, their summed time, and
  // the kernel category with the most of it ("gemm 61%"): what a later call
  // that replays the graph costs the GPU.
  std::uint64_t replay_launches = 0;
  std::uint64_t replay_kernels = 0;
  TimeNs replay_kernel_ns = 0;
  std::string replay_top;
  std::uint64_t compiled_copies = 0;   // copies launched inside compiled regions (CopyGroup::compiled)
  std::uint64_t pinning_calls = 0;     // cudaHostAlloc / cudaMallocHost / cudaHostRegister (and cuMemHost…)
  TimeNs pinning_ns = 0;               // their time on the host
  bool data_loading_recorded = false;  // the trace has data-loading ranges: input wait can be measured
  // Where the data loading's host time goes: the data-loading ranges' time
  // (their union per thread) and the path down the host ranges nested in
  // them, outermost first, each the heaviest inside the one before while it
  // holds more than half of that time (up to 16). In a job: the rank that
  // loads longest.
  TimeNs data_loading_ns = 0;
  std::vector<HostRange> input_work;
  // Python function ranges recorded: PyTorch's Python tracer (with_stack=True)
  // records one per Python call, and slows the host's Python as it does.
  std::uint64_t python_ranges = 0;
  // How much of the recording is work on the GPU to diagnose
  // (docs/findings.md, "What the program is"): "no-kernels" (nothing on the
  // GPU to diagnose), "gpu-unrecorded" (no GPU op, though the program used
  // GPUs: listed GPUs, GPU runtime calls, host ops that launch GPU work or
  // a GPU process-group backend; its GPU side was not recorded), "tiny-span" (its GPU ops span, or take in all, less
  // than 100 µs and under 1 % of the recording: any figure over them is
  // noise), "sampled" (its GPU ops are a sample: their correlation ids
  // span a thousand times as many calls or more, so most of the GPU's work
  // between them is missing), "graph-capture" (CUDA graph captures and the
  // runs before them, at least 90 % of the kernel time ending before the
  // last capture does, and no graph replayed: set-up only, the steady state
  // replays the graphs), "one-shot" (a whole program whose setup
  // before the first kernel and teardown after the last take at least a
  // third of the recording); empty: none of these. None of the first five
  // has numbered findings or "What would help?" answers; a one-shot run's
  // findings about its setup or teardown are minor.
  std::string run;
  std::string run_evidence;  // what shows it, with the numbers, and what to profile instead
  // A run whose findings are not numbered and whose questions are not
  // answered: nothing on the GPU to diagnose, microseconds of it, a sample,
  // or set-up only.
  bool nothing_to_number() const {
    return run == "no-kernels" || run == "gpu-unrecorded" || run == "tiny-span" || run == "sampled" ||
           run == "graph-capture";
  }
  // Non-empty where the trace keeps only the API calls that launched GPU
  // work (a filtered trace: 100 calls or more, every one a launch): what the
  // host did between launches, syncs and event waits included, is not in it,
  // so host syncs and the host's side of the critical path are unknown.
  std::string host_filtered;
  TimeRange kernel_window;  // the first kernel's start to the last one's end (the trace's clock; empty in a job)
  TimeNs setup_ns = 0, teardown_ns = 0;  // recorded time before the first kernel / after the last
};

// [SECTION] Profile ---------------------------------------------------------------------------

struct Profile {
  static constexpr const char* kSchema = "gpuscope.report/1";

  TraceSource source = TraceSource::unknown;
  std::string producer;
  std::vector<std::string> files;  // the analysed files (one per rank for jobs)
  WorkloadKind workload;
  std::string clock_alignment;  // how ranks were put on one clock (jobs), else empty
  TimeRange window;             // whole trace
  std::vector<DeviceSummary> devices;
  std::vector<CategoryTime> categories;  // every category with time > 0, largest first
  std::vector<Hotspot> hotspots;         // per kernel name, largest total first
  std::vector<OpRow> op_names;           // framework ops per name, largest gpu_total_ns first
  std::vector<OpRow> ops;                // per name × input shapes and types, largest gpu_total_ns first
  OpSummary op_summary;
  ModuleSplit module_split;  // forward and backward GPU time per nn.Module
  StepSummary steps;
  std::vector<IdleByCause> idle;
  LaunchStats launches;
  // Collective call sites compared across steps, most time first (every
  // rank's in a job).
  std::vector<CollectiveSite> collective_sites;
  CollectiveSummary collective_summary;               // the sites pooled across GPUs and ranks
  std::vector<TemporalBreakdown> temporal_breakdown;  // one per rank
  std::vector<RankSummary> ranks;                     // per rank (and device); one row for a one-GPU trace
  Skew skew;
  // Jobs (several files): collective instances matched across ranks, the
  // ranks by the wait they caused, the critical rank of each step, and the
  // files left out of the analysis (empty for one file).
  std::vector<CollectiveInstance> collectives;
  std::vector<Straggler> stragglers;
  std::vector<JobStep> job_steps;
  std::vector<LeftOut> left_out;
  SyncStats syncs;
  MemcpyStats memcpys;
  TimeNs kernel_time_ns = 0;               // sum of all kernel durations (the share denominator)
  std::vector<Finding> findings;           // the material ones (≥ 1 % of the run), largest saving first
  std::vector<Finding> minor_findings;     // true but under 1 % of the run: listed, not numbered
  std::vector<HelpAnswer> helps;           // "What would help?": the usual changes, answered from the trace
  std::vector<IdleCharge> idle_charges;    // the GPUs' idle time by cause, each part charged to one finding
  std::vector<HostWhere> host_while_idle;  // where the host was during those parts (traces with host samples)
  std::vector<std::pair<std::string, std::uint64_t>> trace_stats;  // copied from TraceMeta::stats
  TraceQuality trace_quality;  // storage damage per file, said first by every output
  // Filled by the dependency graph's pass (analysis/graph/savings.h), not by analyze().
  CriticalPath critical_path;
  Simulation simulation;
};

std::string_view to_string(Severity s);
std::string_view to_string(StepSource s);
std::string_view to_string(SavingSource s);
std::string_view to_string(Verdict v);
// Inverse of to_string; false if unknown.
bool parse_severity(std::string_view s, Severity* out);
bool parse_step_source(std::string_view s, StepSource* out);

}  // namespace gpuscope
