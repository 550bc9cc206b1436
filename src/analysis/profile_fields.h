// The fields of each Profile record, listed once: for every member, the key
// the report (gpuscope.report/1) writes it under, its unit and its meaning.
// Two forms walk these lists:
//  * the JSON report, its reader and docs/report-schema.md's key tables
//    (export/detail/report_fields.h turns each row into a key: export adds
//    only what is the JSON's alone: each record's heading, the enums'
//    spellings, the checks after reading);
//  * the rank digest (analysis/job/digest_codec.cpp), which writes and reads
//    every member row, in the order listed.
// Each list names every member of its record, once: the digest's walk
// checks the count against the struct's (analysis/util/member_count.h), so a
// member added to a struct and not to its list fails to compile. A member
// the report has in another form (or not at all) is still listed, as
// elsewhere<…> or digest_only<…>.
//
// [SECTION] Rows
// [SECTION] Values computed for the report
// [SECTION] Time ranges and duration statistics
// [SECTION] Per device
// [SECTION] Categories and hotspots
// [SECTION] Framework ops
// [SECTION] Steps
// [SECTION] Idle time, launches, ranks
// [SECTION] Synchronization and copies
// [SECTION] Findings
// [SECTION] Critical path and simulated fixes
// [SECTION] Trace quality
// [SECTION] The top level
// [SECTION] Counting the members
//
// A new number: add the member to its struct (profile.h) and its row here,
// in the place its key takes in the report: key (the member's name, `_ns`
// for times), unit, meaning (the formula lives in docs/metrics.md). Keys are
// only ever added within /1 (`added<…>` rows: reports of an earlier gpuscope
// lack them); renaming or removing one means /2. The digest's bytes follow
// the list: a change to a list raises kDigestFormatVersion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/profile.h"

namespace gpuscope::record {

// [SECTION] Rows ----------------------------------------------------------------------------

// What a row is beyond a member written under its key (a template argument
// of the visitor's member<Flags, Path...>(), so that each form picks its
// code at compile time).
enum Flag : unsigned {
  kPlain = 0,
  kGpu = 1u << 0,      // a GPU ordinal: kNoDevice is written null
  kMaybe = 1u << 1,    // a count that may be unknown: null, and a missing key reads as unknown
  kAdded = 1u << 2,    // a key added within /1: read only when present
  kLenient = 1u << 3,  // an enum whose missing or unknown value reads as its first ("unknown")
  kInline = 1u << 4,   // a record whose keys are written into this object (no key of its own)
  kTop = 1u << 5,      // a list the report cuts at `--top`
  kSteps = 1u << 6,    // a list the report cuts at `--steps`
  kCustom = 1u << 7,   // written and read by the report's own code for this key (Record<T>::custom)
  // In the digest, not in this record's JSON object: rows of paths write it
  // (FileQuality's damage), or another record does (the steps' list).
  kElsewhere = 1u << 8,
  kDigestOnly = 1u << 9,  // in the digest only: the report has it in another form
};

struct Row {
  const char* key;  // nullptr: kInline, or a row of kElsewhere
  const char* unit;
  const char* meaning;
  unsigned flags = kPlain;
};

// The list of record T: rows(visitor, Of<T>{}) calls, for each row, in order,
//   visitor.template member<Flags, Path...>(row)  for a member, or a path of
//                                                  member pointers into one
//                                                  (the digest takes the
//                                                  rows of one member only);
//   visitor.template computed<Compute>(row)       for a key the report
//                                                  computes from the others.
template <class T>
struct Of {};

// The kinds of row (the report's, docs/report-schema.md, says what each is).
template <auto... Path, class V>
constexpr void field(V& v, const char* key, const char* unit, const char* meaning) {
  v.template member<kPlain, Path...>(Row{key, unit, meaning, kPlain});
}
template <auto... Path, class V>
constexpr void gpu(V& v, const char* key, const char* meaning) {
  v.template member<kGpu, Path...>(Row{key, "", meaning, kGpu});
}
template <auto... Path, class V>
constexpr void maybe(V& v, const char* key, const char* unit, const char* meaning) {
  v.template member<kMaybe, Path...>(Row{key, unit, meaning, kMaybe});
}
template <auto... Path, class V>
constexpr void added(V& v, const char* key, const char* unit, const char* meaning) {
  v.template member<kAdded, Path...>(Row{key, unit, meaning, kAdded});
}
template <auto... Path, class V>
constexpr void lenient(V& v, const char* key, const char* meaning) {
  v.template member<kLenient, Path...>(Row{key, "", meaning, kLenient});
}
template <auto... Path, class V>
constexpr void inlined(V& v) {
  v.template member<kInline, Path...>(Row{nullptr, "", "", kInline});
}
template <unsigned Limit, auto... Path, class V>
constexpr void limited(V& v, const char* key, const char* meaning) {
  static_assert(Limit == kTop || Limit == kSteps);
  v.template member<Limit, Path...>(Row{key, "", meaning, Limit});
}
template <auto... Path, class V>
constexpr void custom(V& v, const char* key, const char* unit, const char* meaning) {
  v.template member<kCustom, Path...>(Row{key, unit, meaning, kCustom});
}
template <auto Compute, class V>
constexpr void derived(V& v, const char* key, const char* unit, const char* meaning) {
  v.template computed<Compute>(Row{key, unit, meaning, kPlain});
}
template <auto Member, class V>
constexpr void elsewhere(V& v, const char* where) {
  v.template member<kElsewhere, Member>(Row{nullptr, "", where, kElsewhere});
}
template <auto Member, class V>
constexpr void digest_only(V& v, const char* why) {
  v.template member<kDigestOnly, Member>(Row{nullptr, "", why, kDigestOnly});
}

// How many values each enum of the records has (0 .. n-1): what the report's
// reader and the digest's accept, what fill() in the tests takes. An enum a
// record holds and this lacks fails to compile where it is read.
template <class E>
inline constexpr int kEnumValues = 0;
template <>
inline constexpr int kEnumValues<KernelCategory> = kKernelCategoryCount;
template <>
inline constexpr int kEnumValues<Severity> = static_cast<int>(Severity::critical) + 1;
template <>
inline constexpr int kEnumValues<StepSource> = static_cast<int>(StepSource::bursts) + 1;
template <>
inline constexpr int kEnumValues<TraceSource> = static_cast<int>(TraceSource::nsys_sqlite) + 1;
template <>
inline constexpr int kEnumValues<LossCount> = static_cast<int>(LossCount::estimate) + 1;
template <>
inline constexpr int kEnumValues<SavingSource> = static_cast<int>(SavingSource::simulated) + 1;
template <>
inline constexpr int kEnumValues<Verdict> = static_cast<int>(Verdict::later) + 1;

// [SECTION] Values computed for the report ------------------------------------------------

inline TimeNs step_duration(const Step& s) { return s.range.duration(); }
inline std::size_t step_count(const StepSummary& s) { return s.steps.size(); }
inline bool file_complete(const FileQuality& q) { return !q.damage.any(); }
// The file's damage in one sentence: words, so defined by the report
// (export/report_fields.cpp), which alone writes it.
std::string file_headline(const FileQuality& q);
inline bool quality_complete(const TraceQuality& q) { return q.complete(); }
inline bool quality_truncated(const TraceQuality& q) {
  for (const FileQuality& f : q.files)
    if (f.damage.truncated) return true;
  return false;
}
inline std::uint64_t quality_bytes_lost(const TraceQuality& q) {
  std::uint64_t n = 0;
  for (const FileQuality& f : q.files) n += f.damage.bytes_lost;
  return n;
}
inline std::uint64_t quality_rows_lost(const TraceQuality& q) {
  std::uint64_t n = 0;
  for (const FileQuality& f : q.files) n += f.damage.rows_lost();
  return n;
}

// [SECTION] Time ranges and duration statistics ----------------------------------------------

template <class V>
constexpr void rows(V& v, Of<TimeRange>) {
  using T = TimeRange;
  field<&T::start>(v, "start_ns", "ns", "start, on the trace's clock");
  field<&T::end>(v, "end_ns", "ns", "end (not before `start_ns`)");
}

template <class V>
constexpr void rows(V& v, Of<DurationStats>) {
  using T = DurationStats;
  field<&T::count>(v, "count", "", "durations");
  field<&T::total>(v, "total_ns", "ns", "their sum");
  field<&T::min>(v, "min_ns", "ns", "the shortest");
  field<&T::max>(v, "max_ns", "ns", "the longest");
  field<&T::mean>(v, "mean_ns", "ns", "the mean");
  field<&T::median>(v, "median_ns", "ns", "the median");
}

// [SECTION] Per device -----------------------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<HwMetric>) {
  using M = HwMetric;
  field<&M::name>(v, "name", "", "the series: `hw.*` from CUPTI PM sampling, `nvml.*` from NVML");
  field<&M::unit>(v, "unit", "", "as the series gives it (`%`, `B/s`, `MHz`, `W`, …)");
  field<&M::samples>(v, "samples", "", "samples in the GPU's window");
  field<&M::mean>(v, "mean", "unit", "their mean");
  field<&M::min>(v, "min", "unit", "the least");
  field<&M::max>(v, "max", "unit", "the most");
}

template <class V>
constexpr void rows(V& v, Of<HwCategory>) {
  using C = HwCategory;
  field<&C::category>(v, "category", "", "the kernel category");
  field<&C::samples>(v, "samples", "", "hw.sm_active samples in its kernels");
  field<&C::sm_active>(v, "sm_active", "fraction", "mean SMs active; null: no samples");
  field<&C::tensor_active>(v, "tensor_active", "fraction", "mean tensor pipes active; null: no samples");
  field<&C::sm_issue>(v, "sm_issue", "fraction", "mean instruction issue against peak; null: no samples");
  field<&C::dram_bytes_per_s>(v, "dram_bytes_per_s", "B/s",
                              "mean DRAM read + write; null: no samples, or samples in % on a GPU of unknown peak");
  field<&C::dram_share>(v, "dram_share", "fraction",
                        "mean DRAM read + write against the GPU's peak bandwidth; null: no samples, or samples in "
                        "B/s on a GPU of unknown peak");
  field<&C::issue_samples>(v, "issue_samples", "", "hw.sm_issue samples in its kernels");
  field<&C::dram_samples>(v, "dram_samples", "", "DRAM sample times in its kernels");
}

template <class V>
constexpr void rows(V& v, Of<DeviceHw>) {
  using H = DeviceHw;
  field<&H::metrics>(v, "metrics", "", "one per series, by name");
  field<&H::by_category>(v, "by_category", "", "samples by the category of the kernel running, most samples first");
  field<&H::busy_samples>(v, "busy_samples", "", "hw.sm_active samples taken while a kernel ran");
  field<&H::low_busy_samples>(v, "low_busy_samples", "", "… of which below the low-SM-activity threshold");
  field<&H::busy_sm_active>(v, "busy_sm_active", "fraction", "mean SMs active over busy_samples; null: none");
  field<&H::low_kernels>(v, "low_kernels", "", "the kernels most often running during the low samples");
  field<&H::throttle_samples>(v, "throttle_samples", "",
                              "nvml.throttle_reasons samples with a thermal or power reason");
  field<&H::throttle_mask>(v, "throttle_mask", "", "every such reason seen (NVML's clock event reason bits)");
  field<&H::throttled_steps>(v, "throttled_steps", "", "steps with such a sample");
  field<&H::other_steps>(v, "other_steps", "", "steps without");
  field<&H::throttled_step_mean_ns>(v, "throttled_step_mean_ns", "ns", "their mean duration; 0: none");
  field<&H::other_step_mean_ns>(v, "other_step_mean_ns", "ns", "the others' mean duration; 0: none");
  field<&H::sm_clock_max_mhz>(v, "sm_clock_max_mhz", "MHz", "the highest SM clock sampled; null: no clock series");
  field<&H::throttled_sm_clock_mhz>(v, "throttled_sm_clock_mhz", "MHz",
                                    "mean SM clock at the throttled samples; null: none");
}

template <class V>
constexpr void rows(V& v, Of<DeviceOccupancy>) {
  using O = DeviceOccupancy;
  field<&O::limits>(v, "limits", "",
                    "where the per-SM limits came from: `trace`, `table cc 9.0` (by compute capability), "
                    "`trace + table cc 9.0`, `unknown` (then no kernel's occupancy is known)");
  field<&O::known_kernels>(v, "known_kernels", "", "kernels whose occupancy is known");
  field<&O::unknown_kernels>(v, "unknown_kernels", "",
                             "kernels without block size, grid or registers in the trace, or with no limits");
  field<&O::known_ns>(v, "known_ns", "ns", "Σ durations of the kernels whose occupancy is known");
  field<&O::known_share>(v, "known_share", "fraction", "known_ns / the device's kernel_time_ns");
  field<&O::theoretical>(v, "theoretical", "fraction",
                         "Σ duration × theoretical occupancy / known_ns; null when no kernel's is known");
  field<&O::block_size_ns>(v, "block_size_ns", "ns",
                           "kernel time whose resident blocks per SM the warp slots limit (the block size)");
  field<&O::blocks_per_sm_ns>(v, "blocks_per_sm_ns", "ns", "… the most resident blocks per SM");
  field<&O::registers_ns>(v, "registers_ns", "ns", "… the registers");
  field<&O::shared_memory_ns>(v, "shared_memory_ns", "ns", "… the shared memory");
  field<&O::gpu_fill>(v, "gpu_fill", "fraction",
                      "Σ duration × min(blocks, SMs × blocks per SM) × threads per block / (SMs × threads per "
                      "SM) / known_ns; null when unknown (no SM count)");
  field<&O::side_work_ns>(v, "side_work_ns", "ns",
                          "Σ durations of communication kernels and copies (work that could run beside compute)");
  field<&O::side_work_shared_ns>(v, "side_work_shared_ns", "ns",
                                 "… of those on streams that also run compute kernels (0: on streams of their own)");
  added<&O::small_grid_kernels>(v, "small_grid_kernels", "",
                                "compute kernels whose grid has fewer blocks than half the SMs (measured where the "
                                "GPU fill is under a quarter)");
  added<&O::small_grid_ns>(v, "small_grid_ns", "ns", "their Σ durations");
  added<&O::small_grid_spread_ns>(v, "small_grid_spread_ns", "ns",
                                  "Σ duration × blocks / SMs: their time were their work spread over every SM");
  added<&O::small_grid_top>(v, "small_grid_top", "", "the one with the most time");
  added<&O::small_grid_top_blocks>(v, "small_grid_top_blocks", "", "its blocks");
  added<&O::small_grid_shaped_ns>(v, "small_grid_shaped_ns", "ns",
                                  "of their time, the kernels whose launching op recorded its input shapes");
  added<&O::small_grid_tiny_ns>(v, "small_grid_tiny_ns", "ns",
                                "of that, the kernels whose launching op's inputs are all tiny (every tensor at "
                                "most 4,096 elements, at most one dimension above 1)");
  added<&O::small_grid_tiny_ops>(v, "small_grid_tiny_ops", "",
                                 "the ops with the most of that time, up to three: name, the op and its input "
                                 "shapes; ns, their kernels' time; count, their kernels");
}

template <class V>
constexpr void rows(V& v, Of<DeviceSummary>) {
  using D = DeviceSummary;
  field<&D::id>(v, "id", "", "CUDA ordinal");
  field<&D::name>(v, "name", "",
                  "device name; where the trace leaves it empty or generic, the model its properties alone identify, "
                  "\"(inferred: …)\"; else empty");
  field<&D::rank>(v, "rank", "", "distributed rank of the process that drove it; -1: unknown");
  field<&D::compute_major>(v, "compute_major", "", "compute capability, major; 0 when unknown");
  field<&D::compute_minor>(v, "compute_minor", "", "compute capability, minor; 0 when unknown");
  field<&D::sm_count>(v, "sm_count", "", "streaming multiprocessors; 0 when unknown");
  field<&D::window>(v, "window", "", "first GPU op start to last GPU op end on this GPU");
  field<&D::span_ns>(v, "span_ns", "ns", "length of `window`");
  field<&D::busy_ns>(v, "busy_ns", "ns", "|union of all GPU ops (kernels, memcpys, memsets)|");
  field<&D::utilization>(v, "utilization", "fraction", "busy_ns / span_ns");
  field<&D::kernel_busy_ns>(v, "kernel_busy_ns", "ns", "|union of kernels|");
  field<&D::kernel_concurrency>(v, "kernel_concurrency", "fraction",
                                "time with ≥ 2 kernels in flight / kernel_busy_ns");
  field<&D::mean_kernels_in_flight>(v, "mean_kernels_in_flight", "kernels",
                                    "Σ kernel durations / kernel_busy_ns (≥ 0; 1 = one at a time)");
  field<&D::memcpy_ns>(v, "memcpy_ns", "ns", "|union of memcpys|");
  field<&D::memcpy_compute_overlap>(v, "memcpy_compute_overlap", "fraction", "|memcpys ∩ kernels| / memcpy_ns");
  field<&D::communication_ns>(v, "communication_ns", "ns", "|union of communication kernels|");
  field<&D::communication_compute_overlap>(v, "communication_compute_overlap", "fraction",
                                           "|communication ∩ other kernels| / communication_ns");
  field<&D::compute_ns>(v, "compute_ns", "ns", "|union of non-communication kernels|");
  field<&D::exposed_communication_ns>(v, "exposed_communication_ns", "ns",
                                      "|communication \\ compute|: communication nothing hides");
  field<&D::memcpy_exposed_ns>(v, "memcpy_exposed_ns", "ns", "|memcpys \\ kernels|");
  field<&D::kernel_time_ns>(v, "kernel_time_ns", "ns", "Σ kernel durations (not a union)");
  field<&D::idle_ns>(v, "idle_ns", "ns", "span_ns − busy_ns");
  field<&D::idle_host_wait_ns>(
      v, "idle_host_wait_ns", "ns",
      "idle gaps ended by an op launched after the gap began, until 30 µs after its launch returned");
  field<&D::idle_kernel_wait_ns>(v, "idle_kernel_wait_ns", "ns",
                                 "other idle gaps shorter than the consecutive-kernel delay (30 µs)");
  field<&D::idle_other_ns>(v, "idle_other_ns", "ns", "the remaining idle gaps; the three add up to idle_ns");
  field<&D::kernels>(v, "kernels", "", "kernels run");
  field<&D::memcpys>(v, "memcpys", "", "copies run");
  field<&D::memsets>(v, "memsets", "", "fills run");
  field<&D::streams>(v, "streams", "", "streams with at least one GPU op");
  field<&D::sm_efficiency>(v, "sm_efficiency", "fraction",
                           "duration-weighted min(blocks / SMs, 1) over the kernels whose grid is recorded; 0 when "
                           "the SM count is unknown");
  added<&D::sm_efficiency_known>(v, "sm_efficiency_known", "fraction",
                                 "the share of kernel time whose grid is recorded: `sm_efficiency` is over it (a "
                                 "graph replay's kernels may carry none)");
  field<&D::achieved_tflops>(v, "achieved_tflops", "TFLOP/s",
                             "Σ FLOPs of the matrix, convolution and attention ops whose shapes were recorded / "
                             "Σ their GPU time; null when unknown (docs/ops.md)");
  field<&D::peaks_source>(v, "peaks_source", "",
                          "where the roofline's peak rates came from; empty when the GPU model is unknown");
  maybe<&D::memory_bytes>(v, "memory_bytes", "bytes", "the GPU's memory; null: the trace does not say");
  maybe<&D::peak_allocated_bytes>(v, "peak_allocated_bytes", "bytes",
                                  "most bytes in live allocations at once; null: the trace does not say");
  maybe<&D::peak_reserved_bytes>(v, "peak_reserved_bytes", "bytes",
                                 "most bytes the allocator held from the GPU; null: the trace does not say");
  field<&D::hw>(v, "hw", "", "what its hardware measured (docs/metrics.md, \"Hardware metrics\")");
  added<&D::occupancy>(v, "occupancy", "", "theoretical occupancy and GPU fill of its kernels");
}

// [SECTION] Categories and hotspots ----------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<CategoryTime>) {
  using C = CategoryTime;
  field<&C::category>(v, "name", "", "the category");
  field<&C::time_ns>(v, "time_ns", "ns", "Σ durations of its kernels");
  field<&C::share>(v, "share", "fraction", "time_ns / the top level's kernel_time_ns");
  field<&C::count>(v, "count", "", "its kernels");
  field<&C::stats>(v, "stats", "", "of its kernels' durations (`total_ns` = time_ns)");
}

template <class V>
constexpr void rows(V& v, Of<Hotspot>) {
  using H = Hotspot;
  field<&H::name>(v, "name", "", "demangled kernel name");
  field<&H::category>(v, "category", "", "its kernel category");
  field<&H::share>(v, "share", "fraction", "stats.total_ns / the top level's kernel_time_ns");
  gpu<&H::device>(v, "device", "the GPU; null: aggregated over all GPUs");
  field<&H::tensor_cores>(v, "tensor_cores", "", "the name marks a tensor-core kernel (hmma, 16816, wgmma, …)");
  added<&H::category_rule>(v, "category_rule", "",
                           "what placed it in its category: \"name: <pattern>\", \"template arguments: …\", "
                           "\"launching op: …\"");
  added<&H::python_frame>(v, "python_frame", "",
                          "the Python line that launched most of its time (innermost Python frame around the launch "
                          "outside torch's modules); empty without Python frames");
  added<&H::python_frame_share>(v, "python_frame_share", "fraction", "python_frame's share of its launches' time");
  field<&H::stats>(v, "stats", "", "of the kernels' durations");
}

// [SECTION] Framework ops --------------------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<OpKernel>) {
  using K = OpKernel;
  field<&K::name>(v, "name", "", "demangled kernel name");
  field<&K::category>(v, "category", "", "its kernel category");
  field<&K::count>(v, "count", "", "kernels");
  field<&K::time_ns>(v, "time_ns", "ns", "Σ their durations");
  field<&K::blocks>(v, "blocks", "",
                    "blocks in the grid of its first launch under the op; 0 when the trace does not say");
}

template <class V>
constexpr void rows(V& v, Of<OpRow>) {
  using O = OpRow;
  field<&O::name>(v, "name", "", "op name (`aten::addmm`, an NVTX range); `(no op)`: GPU work launched outside ops");
  field<&O::shapes>(v, "shapes", "", "recorded input shapes, JSON text; empty: not recorded, or the per-name row");
  field<&O::dtypes>(v, "dtype", "", "recorded input types, JSON text; empty: not recorded");
  field<&O::path>(v, "path", "", "the ops around its first call, outermost first, ` > ` between");
  field<&O::calls>(v, "calls", "", "calls (a call inside a call of the same op is part of it: see nested_calls)");
  field<&O::cpu_self_ns>(v, "cpu_self_ns", "ns", "Σ call durations minus the ops inside them");
  field<&O::cpu_total_ns>(v, "cpu_total_ns", "ns", "Σ call durations");
  field<&O::gpu_self_ns>(v, "gpu_self_ns", "ns", "Σ durations of the GPU ops it launched itself");
  field<&O::gpu_total_ns>(v, "gpu_total_ns", "ns", "… with those of the ops inside it");
  field<&O::kernels>(v, "kernels", "", "GPU ops (kernels, copies, fills) it launched itself");
  field<&O::kernels_total>(v, "kernels_total", "", "… with those of the ops inside it");
  field<&O::launch_ns>(v, "launch_ns", "ns",
                       "Σ durations of its own launch calls, less the part of a call before a copy it launched "
                       "ended, where the call returned after that (a blocking copy's wait)");
  added<&O::copy_call_ns>(v, "copy_call_ns", "ns",
                          "… of which calls that launched copies or fills (they may wait for the GPU: not "
                          "launch overhead)");
  added<&O::starved_ns>(v, "starved_ns", "ns",
                        "GPU idle that its own late launches ended: the GPU waited for this op's launch");
  added<&O::starved_total_ns>(v, "starved_total_ns", "ns", "… with the ops inside it");
  field<&O::family>(v, "family", "", "cost formula used (gemm, convolution, attention, …); empty: none");
  field<&O::flops>(v, "flops", "FLOP", "Σ over calls, from the shapes; null when unknown");
  field<&O::bytes>(v, "bytes", "B", "Σ bytes read and written, from the shapes and types; null when unknown");
  field<&O::achieved_tflops>(v, "achieved_tflops", "TFLOP/s", "flops / gpu_total_ns; null when unknown");
  field<&O::achieved_tbps>(v, "achieved_tbps", "TB/s", "bytes / gpu_total_ns; null when unknown");
  field<&O::intensity>(v, "intensity", "FLOP/B", "flops / bytes; null when unknown");
  field<&O::roofline_fraction>(v, "roofline_fraction", "fraction",
                               "achieved / min(peak FLOP/s, intensity × bandwidth) (memory-bound ops "
                               "without FLOPs: achieved_tbps / bandwidth; a job's rows: the ranks' fractions "
                               "weighted by their GPU time); null when unknown");
  field<&O::bound>(v, "bound", "", "`compute` or `memory` by the roofline; empty when unknown");
  field<&O::math>(v, "math", "", "the precision whose peak the roofline used (fp32, bf16, …)");
  field<&O::dims>(v, "dims", "", "the formula's dimensions (`M=… N=… K=… batch=…`)");
  field<&O::aligned8>(v, "aligned8", "",
                      "GEMMs: M, N and K all multiples of 8; convolutions: input channels per group (an "
                      "image's 3 or 4 aside) and output channels multiples of 8");
  field<&O::top_kernels>(v, "top_kernels", "", "its kernels, most time first (the heaviest rows only)");
  field<&O::gpu_calls>(v, "gpu_calls", "",
                       "calls that launched GPU work, themselves or through the ops inside them (the calls "
                       "that hold GPU time): per-call figures are per such call");
  field<&O::nested_calls>(v, "nested_calls", "",
                          "calls made inside a call of the same op (an op calling itself under its name): "
                          "counted in the outer call, their time once");
}

template <class V>
constexpr void rows(V& v, Of<OpSummary>) {
  using S = OpSummary;
  field<&S::op_calls>(v, "op_calls", "", "op ranges (calls)");
  field<&S::gpu_ops>(v, "gpu_ops", "", "kernels, copies and fills");
  field<&S::attributed>(v, "attributed", "", "… with a launching op");
  field<&S::unattributed>(v, "unattributed", "", "… without one (the `(no op)` row)");
  field<&S::unattributed_ns>(v, "unattributed_ns", "ns", "Σ their durations");
  field<&S::no_correlation>(v, "no_correlation", "", "… of which carry no correlation id");
  field<&S::unmatched_correlation>(v, "unmatched_correlation", "",
                                   "… of which name a correlation id that no launch call has");
  field<&S::with_shapes>(v, "with_shapes", "", "op calls with recorded input shapes");
  field<&S::malformed_shapes>(v, "malformed_shapes", "", "… whose shapes could not be read (no cost given)");
  field<&S::above_peak>(v, "above_peak", "",
                        "… whose cost, in the time they took, exceeds the GPU's peak: the formula overcounts (a "
                        "broadcast or repeated input the shapes do not show); no cost or roofline given");
  field<&S::overlapping>(v, "overlapping", "", "op ranges overlapping another without nesting");
  field<&S::shapes_recorded>(v, "shapes_recorded", "",
                             "any op had input shapes; false: record with record_shapes=True for FLOPs");
}

template <class V>
constexpr void rows(V& v, Of<ModuleTime>) {
  using M = ModuleTime;
  field<&M::name>(v, "name", "",
                  "the module (`model.layer1.0.conv1`: the range's name without `nn.Module: `); `(no module)`: "
                  "launched outside every module range");
  field<&M::forward_gpu_ns>(v, "forward_gpu_ns", "ns",
                            "Σ GPU ops launched inside its calls (innermost module) outside backward ops");
  field<&M::backward_gpu_ns>(v, "backward_gpu_ns", "ns",
                             "Σ GPU ops launched by the backward ops linked to its forward ops");
  field<&M::backward_ops>(v, "backward_ops", "", "backward ops linked to its forward ops");
}

template <class V>
constexpr void rows(V& v, Of<ModuleSplit>) {
  using S = ModuleSplit;
  field<&S::known>(v, "known", "",
                   "the trace has sequence numbers; false: the split is unknown (never guessed from names) and the "
                   "rest is 0");
  field<&S::backward_ops>(v, "backward_ops", "",
                          "outermost backward ops (ops naming a forward thread, or autograd's evaluate_function "
                          "ranges: AccumulateGrad and the hooks it runs have no forward op)");
  field<&S::linked>(v, "linked", "", "… linked to a forward op");
  field<&S::unlinked>(v, "unlinked", "",
                      "… not: no forward op of their number in the process, or such ops on several threads");
  field<&S::backward_gpu_ns>(v, "backward_gpu_ns", "ns", "Σ GPU ops launched inside backward ops");
  field<&S::unlinked_gpu_ns>(v, "unlinked_gpu_ns", "ns", "… inside unlinked ones");
  field<&S::modules>(v, "modules", "", "per module, most forward + backward GPU time first");
  added<&S::recomputed_gpu_ns>(v, "recomputed_gpu_ns", "ns",
                               "of backward_gpu_ns, launched by forward ops run inside backward ops: the forward pass "
                               "recomputed for the gradients (activation checkpointing)");
  added<&S::recomputed_ops>(v, "recomputed_ops", "", "those forward ops (the outermost inside each backward op)");
}

template <class V>
constexpr void rows(V& v, Of<WorkloadKind>) {
  using W = WorkloadKind;
  field<&W::phase>(v, "phase", "", "`training`, `inference` or `unknown` (too little to tell)");
  field<&W::phase_evidence>(v, "phase_evidence", "", "the ops and kernels that told");
  field<&W::execution>(v, "execution", "", "`eager`, `compiled` (Triton, torch.compile) or `cuda graphs` (replays)");
  field<&W::execution_evidence>(v, "execution_evidence", "", "graph ids, graph launches, Triton kernels, regions");
  field<&W::graph_kernels>(v, "graph_kernels", "", "kernels replayed from CUDA graphs");
  field<&W::ranks>(v, "ranks", "", "processes of the job (world size, or the job's files)");
  added<&W::mpi_evidence>(v, "mpi_evidence", "",
                          "one rank's trace of an MPI job (calls to other ranks, no world size): the calls; empty "
                          "otherwise");
  added<&W::world_size>(v, "world_size", "", "the world size the trace's distributed info gives; 0: not given");
  added<&W::rank>(v, "rank", "", "the trace's own rank, as its distributed info gives it; -1: not given, or a job");
  added<&W::rank_evidence>(v, "rank_evidence", "",
                           "one rank's trace of a job whose size it does not give (no world size, but a rank, a "
                           "process-group backend or DDP's ops): what shows it; empty otherwise");
  field<&W::bundled>(v, "bundled", "",
                     "a trace of gpuscope's bundled workload (resnet-train): only then do fixes name its switches");
  added<&W::framework>(v, "framework", "",
                       "`pytorch`, `tensorflow`, `jax` or `unknown`: the framework the fixes are worded for");
  added<&W::framework_evidence>(v, "framework_evidence", "", "the ops and kernels that told");
  added<&W::engine>(v, "engine", "",
                    "`vllm` or `sglang`: the LLM serving engine whose own ops or kernels ran (its switches are the "
                    "fixes' words); empty otherwise");
  added<&W::engine_evidence>(v, "engine_evidence", "", "the ops and kernels that told");
  added<&W::data_parallel>(v, "data_parallel", "",
                           "`ddp` when DDP's own ops show it (DistributedDataParallel.forward, its reducer's "
                           "ops); `all-reduce` when an all-reduce op runs inside the backward pass without them "
                           "(not DDP's reducer); empty otherwise");
  added<&W::data_parallel_evidence>(v, "data_parallel_evidence", "", "the ops that told");
  added<&W::optimizer>(v, "optimizer", "",
                       "the weight update: `per-parameter`, `foreach` (multi-tensor), `fused`, `unknown` (the trace "
                       "cannot tell); empty where no optimizer ran");
  added<&W::optimizer_evidence>(v, "optimizer_evidence", "", "the kernels inside the optimizer's steps that told");
  added<&W::graph_launches>(v, "graph_launches", "", "cudaGraphLaunch / cuGraphLaunch calls");
  added<&W::graph_captures>(v, "graph_captures", "",
                            "CUDA graph captures: cudaStreamBeginCapture to EndCapture on one thread");
  added<&W::captured_launches>(v, "captured_launches", "",
                               "launches and async copies recorded inside the captures (they run where the graph "
                               "is launched)");
  added<&W::capture_ns>(v, "capture_ns", "ns", "the time the captures cover (their union)");
  added<&W::replay_launches>(v, "replay_launches", "",
                             "graph launches after a capture's end on its thread: replays of a graph the trace "
                             "captured");
  added<&W::replay_kernels>(v, "replay_kernels", "", "the kernels those replays ran");
  added<&W::replay_kernel_ns>(v, "replay_kernel_ns", "ns", "their summed time: a later call's GPU work");
  added<&W::replay_top>(v, "replay_top", "", "the kernel category with the most of that time, and its share");
  added<&W::compiled_copies>(v, "compiled_copies", "",
                             "copies launched inside compiled regions (torch.compile): made by the compiler");
  added<&W::pinning_calls>(
      v, "pinning_calls", "",
      "calls that pin host memory (cudaHostAlloc, cudaMallocHost, cudaHostRegister, cuMemHostAlloc, "
      "cuMemAllocHost, cuMemHostRegister): the program already pins some");
  added<&W::pinning_ns>(v, "pinning_ns", "ns", "their time on the host");
  added<&W::data_loading_recorded>(v, "data_loading_recorded", "",
                                   "the trace has data-loading ranges, so input wait can be measured");
  added<&W::data_loading_ns>(v, "data_loading_ns", "ns",
                             "the data-loading ranges' time on the host (their union on each thread); in a job, "
                             "the rank's that loads longest");
  added<&W::input_work>(v, "input_work", "",
                        "where that time goes: the path down the host ranges nested in the data-loading ranges "
                        "(merged by name as a flame graph), outermost first, each the heaviest function inside "
                        "the one before (its calls summed over every path and Python line it was recorded at) "
                        "while it holds more than half of data_loading_ns (up to 16)");
  added<&W::python_ranges>(v, "python_ranges", "",
                           "Python function ranges recorded (PyTorch's Python tracer, with_stack=True, records one "
                           "per Python call and slows the host as it does)");
  field<&W::run>(
      v, "run", "",
      "`no-kernels` (nothing on the GPU to diagnose), `gpu-unrecorded` (no GPU op, though the program used GPUs: "
      "listed GPUs, GPU runtime calls, host ops that launch GPU work or a GPU process-group backend; its GPU side "
      "was not recorded, or its events lie on processes named as devices, as TensorFlow's and JAX's profilers "
      "write them, which gpuscope does not read as GPU ops; no finding is numbered), `tiny-span` (GPU ops spanning, or "
      "taking in all, under 100 µs "
      "and 1 % "
      "of the recording: no finding is numbered), `sampled` (GPU ops whose correlation ids span a thousand times "
      "as many calls or more: a sample, most of the GPU's work missing; no finding is numbered), `graph-capture` "
      "(CUDA graph captures and the runs before them, no graph replayed: set-up only; no finding is numbered), "
      "`one-shot` (a whole "
      "program whose setup and teardown take at "
      "least a third of the recording: findings about them are minor); empty: none of these");
  field<&W::run_evidence>(v, "run_evidence", "", "what shows it, with the numbers, and what to profile instead");
  added<&W::host_filtered>(v, "host_filtered", "",
                           "non-empty where the trace keeps only the API calls that launched GPU work (100 or "
                           "more, every one a launch): why, and that host syncs and the host's side of the critical "
                           "path are unknown");
  field<&W::kernel_window>(v, "kernel_window", "",
                           "the first kernel's start to the last one's end, in the trace's clock (empty in a job)");
  field<&W::setup_ns>(v, "setup_ns", "ns", "recorded time before the first kernel");
  field<&W::teardown_ns>(v, "teardown_ns", "ns", "recorded time after the last kernel");
}

// [SECTION] Steps ----------------------------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<StepHw>) {
  using H = StepHw;
  field<&H::sm_active>(v, "sm_active", "fraction", "SM cycles with a warp resident (hw.sm_active)");
  field<&H::sm_occupancy>(v, "sm_occupancy", "fraction", "warps resident against the most (hw.sm_occupancy)");
  field<&H::tensor_active>(v, "tensor_active", "fraction", "tensor pipes busy (hw.tensor_active)");
  field<&H::dram_bytes_per_s>(v, "dram_bytes_per_s", "B/s", "DRAM read + write (hw.dram_read, hw.dram_write)");
  field<&H::sm_clock_mhz>(v, "sm_clock_mhz", "MHz", "SM clock (nvml.sm_clock)");
  field<&H::power_w>(v, "power_w", "W", "power draw (nvml.power)");
  field<&H::temperature_c>(v, "temperature_c", "°C", "GPU temperature (nvml.temperature)");
  field<&H::throttled>(v, "throttled", "",
                       "a thermal or power throttle reason in one of its nvml.throttle_reasons samples");
}

template <class V>
constexpr void rows(V& v, Of<Step>) {
  using S = Step;
  field<&S::index>(v, "index", "", "step number");
  field<&S::name>(v, "name", "", "\"ProfilerStep#12\", NVTX \"step 3\", or \"step 3\" (found from the pattern)");
  gpu<&S::device>(v, "device", "the GPU it ran on; null: not known");
  field<&S::rank>(v, "rank", "", "distributed rank; -1: unknown");
  inlined<&S::range>(v);
  derived<&step_duration>(v, "duration_ns", "ns", "end_ns − start_ns");
  field<&S::compute_ns>(v, "compute_ns", "ns", "non-communication kernels running");
  field<&S::communication_ns>(v, "communication_ns", "ns", "else communication kernels running");
  field<&S::memcpy_ns>(v, "memcpy_ns", "ns", "else copies or fills running");
  field<&S::idle_ns>(v, "idle_ns", "ns", "else idle");
  field<&S::input_wait_ns>(v, "input_wait_ns", "ns", "part of idle_ns while the host loaded input");
  field<&S::host_wait_ns>(v, "host_wait_ns", "ns", "part of the rest of idle_ns ended by a host wait");
  field<&S::host_tail_ns>(v, "host_tail_ns", "ns",
                          "CPU time in the step after the last GPU op it launched ended (apart from the GPU "
                          "breakdown; 0 for pattern steps)");
  field<&S::lead_idle_ns>(v, "lead_idle_ns", "ns",
                          "GPU idle from the step's start to its first GPU op, where a wait for the step's input "
                          "falls (steps from ranges; 0 for steps found on the GPU)");
  maybe<&S::peak_allocated_bytes>(v, "peak_allocated_bytes", "bytes",
                                  "most bytes in live allocations on its GPU during the step; null: not known");
  maybe<&S::min_allocated_bytes>(v, "min_allocated_bytes", "bytes",
                                 "the least during the step (what stays allocated across steps); null: not known");
  field<&S::hw>(v, "hw", "", "what the GPU's hardware measured during it");
}

template <class V>
constexpr void rows(V& v, Of<HostRange>) {
  using T = HostRange;
  field<&T::name>(v, "name", "", "the range's name");
  field<&T::ns>(v, "ns", "ns", "Σ of their durations");
  field<&T::count>(v, "count", "", "ranges of that name");
}

template <class V>
constexpr void rows(V& v, Of<OpGrowth>) {
  using T = OpGrowth;
  field<&T::name>(v, "name", "", "the op's name");
  field<&T::ns>(v, "ns", "ns", "its host time in the step (outermost ops of that name on the step's thread)");
  field<&T::median_ns>(v, "median_ns", "ns", "the median of that over the steps of its GPU (0 in a step without it)");
}

template <class V>
constexpr void rows(V& v, Of<SlowStep>) {
  using T = SlowStep;
  field<&T::name>(v, "name", "", "the step's name");
  field<&T::rank>(v, "rank", "", "distributed rank; -1: unknown");
  field<&T::device>(v, "device", "", "CUDA ordinal");
  field<&T::ns>(v, "ns", "ns", "its duration");
  field<&T::median_ns>(v, "median_ns", "ns", "the median step's duration on its GPU");
  field<&T::idle_ns>(v, "idle_ns", "ns", "the GPU's idle time in it");
  field<&T::median_idle_ns>(v, "median_idle_ns", "ns", "the median of that over the steps of its GPU");
  field<&T::compute_ns>(v, "compute_ns", "ns", "compute kernels' time in it");
  field<&T::median_compute_ns>(v, "median_compute_ns", "ns", "the median of that over the steps of its GPU");
  added<&T::before_gpu_ns>(v, "before_gpu_ns", "ns",
                           "how long it ran before its GPU's first recorded op (what the GPU did then is unknown); 0 "
                           "for a step that began after it");
  field<&T::ops>(v, "ops", "",
                 "the step thread's ops whose host time grew most beyond their median (up to 3, most first)");
}

template <class V>
constexpr void rows(V& v, Of<StepSummary>) {
  using S = StepSummary;
  field<&S::source>(v, "source", "",
                    "where the steps came from: ranges (`profiler_step`, `nvtx`), the repeating kernel pattern "
                    "(`pattern`), bursts of GPU work between host gaps (`bursts`); `none`");
  derived<&step_count>(v, "count", "", "steps (all of them, also when `--steps` lists fewer)");
  elsewhere<&S::steps>(v, "the top level's `steps`");
  field<&S::step_time>(v, "step_time", "", "of the step durations");
  field<&S::total_ns>(v, "total_ns", "ns", "Σ step durations");
  field<&S::compute_ns>(v, "compute_ns", "ns", "Σ compute_ns");
  field<&S::communication_ns>(v, "communication_ns", "ns", "Σ communication_ns");
  field<&S::memcpy_ns>(v, "memcpy_ns", "ns", "Σ memcpy_ns");
  field<&S::idle_ns>(v, "idle_ns", "ns", "Σ idle_ns");
  field<&S::input_wait_ns>(v, "input_wait_ns", "ns", "Σ input_wait_ns");
  field<&S::host_tail_ns>(v, "host_tail_ns", "ns", "Σ host_tail_ns");
  field<&S::lead_idle_ns>(v, "lead_idle_ns", "ns", "Σ lead_idle_ns");
  field<&S::not_steps>(v, "not_steps", "",
                       "why a repeating kernel pattern was not taken for steps (it repeats inside one call: "
                       "a model's layers); empty otherwise");
  added<&S::unused_step_ranges>(v, "unused_step_ranges", "",
                                "where no step was found: the host's step ranges (ProfilerStep#N, NVTX step "
                                "ranges), none of which holds GPU work; 0 otherwise");
  field<&S::outside_gpu_ns>(v, "outside_gpu_ns", "ns",
                            "step time before its GPU's first op or after its last (host time the GPU's span "
                            "does not see)");
  field<&S::before_gpu_ns>(v, "before_gpu_ns", "ns", "the part of outside_gpu_ns before the GPU's first op");
  field<&S::early_ops>(v, "early_ops", "",
                       "ops of a GPU's first step that started before it did, beside the work queued ahead of it "
                       "(in no step's time), Σ GPUs");
  field<&S::early_ops_ns>(v, "early_ops_ns", "ns", "Σ early_ops' durations");
  added<&S::backlog_ops>(v, "backlog_ops", "",
                         "ops queued ahead of a GPU's first step (before the trace began, or before the step) that "
                         "ran before it started on the GPU (in no step's time), Σ GPUs");
  added<&S::backlog_ns>(v, "backlog_ns", "ns", "Σ backlog_ops' durations");
  added<&S::backlog_categories>(v, "backlog_categories", "",
                                "backlog_ops' kernels by category (time_ns, count): left out of the findings' "
                                "shares of kernel time");
  added<&S::sync_blocked_ns>(v, "sync_blocked_ns", "ns",
                             "host time blocked in synchronizations (device, stream, event) inside the steps, Σ steps");
  field<&S::outside_ranges>(v, "outside_ranges", "",
                            "the longest host ranges wholly inside that time, most first (up to 5 names)");
  field<&S::source_evidence>(v, "source_evidence", "",
                             "how steps found on the GPU were found: the kernel that begins each iteration and "
                             "its period (`pattern`), or the bursts and the host gaps between them (`bursts`); "
                             "empty for steps from ranges");
  added<&S::input_fetches>(v, "input_fetches", "",
                           "data-loading host ranges (merged where they overlap) that begin inside a step: about "
                           "one per step in a training loop, several where a recorded step holds several "
                           "iterations");
  added<&S::lead_recorded_ns>(v, "lead_recorded_ns", "ns",
                              "of lead_idle_ns, the host time the step's thread spent in recorded host ranges or "
                              "runtime calls that begin or end inside the step (not the step's own range, nor "
                              "ranges around the whole step)");
  added<&S::lead_input_ns>(v, "lead_input_ns", "ns",
                           "of lead_idle_ns, the time in host ranges whose names are data loading (a data "
                           "loader, torch.utils.data, a dataset, collate, fetch, tokenizing, file reads; any thread)");
  added<&S::lead_ranges>(
      v, "lead_ranges", "",
      "the host ranges in lead_idle_ns by name, most first (up to 5 names): the outermost, or below a "
      "wrapper (a range one of whose direct children covers 90% of it or more) that child, down "
      "the chain");
  added<&S::host_issue_ns>(v, "host_issue_ns", "ns",
                           "Σ over steps from ranges of the host's time issuing the step's GPU work: first to the "
                           "end of the last launching call made in the step, less that thread's time blocked in "
                           "synchronizations meanwhile; 0 where no step has one");
  added<&S::slow_steps>(v, "slow_steps", "",
                        "steps from ranges a fifth slower than their GPU's median step or more (four steps or "
                        "more on the GPU), slowest first, up to 3 per GPU: what grew");
}

// [SECTION] Idle time, launches, ranks -------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<IdleByCause>) {
  using I = IdleByCause;
  field<&I::rank>(v, "rank", "", "distributed rank; -1: unknown");
  field<&I::device>(v, "device", "", "CUDA ordinal");
  field<&I::stream>(v, "stream", "", "stream id");
  field<&I::host_wait_ns>(v, "host_wait_ns", "ns", "the next op's launch call started after the previous op ended");
  field<&I::kernel_wait_ns>(v, "kernel_wait_ns", "ns", "else gaps shorter than the consecutive-kernel delay");
  field<&I::other_ns>(v, "other_ns", "ns", "the rest");
}

template <class V>
constexpr void rows(V& v, Of<LaunchStats>) {
  using L = LaunchStats;
  field<&L::launches>(v, "launches", "", "API calls linked to a GPU op, graph launches and synchronous copies aside");
  field<&L::graph_ops>(v, "graph_ops", "",
                       "GPU ops replayed by a graph launch (cudaGraphLaunch), left out of the figures below");
  field<&L::cpu_launch>(v, "cpu_launch", "", "of the launching calls' durations");
  field<&L::gpu_duration>(v, "gpu_duration", "", "of the launched ops' durations");
  field<&L::launch_delay>(v, "launch_delay", "", "of op start − launching call end (may be negative)");
  field<&L::short_kernels>(v, "short_kernels", "", "ops shorter on the GPU than their launch call on the CPU");
  field<&L::short_kernel_share>(v, "short_kernel_share", "fraction", "short_kernels / launches");
  field<&L::max_queue_depth>(v, "max_queue_depth", "", "most ops launched and not yet started, on any stream");
  field<&L::runtime_outliers>(v, "runtime_outliers", "", "launching calls longer than 50 µs (HTA's outlier rule)");
  field<&L::launch_delay_outliers>(v, "launch_delay_outliers", "",
                                   "launch delays longer than 100 µs (HTA's outlier rule)");
  added<&L::late_launch_idle_ns>(v, "late_launch_idle_ns", "ns",
                                 "GPU idle in gaps under the idle-gap threshold that an op launched after the "
                                 "gap began ended (the GPU waited for a launch), Σ GPUs");
  added<&L::first_op_delay_ns>(v, "first_op_delay_ns", "ns",
                               "how long after its launch returned a trace's first GPU op started, where that is "
                               "1 ms or more with no GPU work recorded before it: the host's and GPU's clocks "
                               "disagree or the GPU ran unrecorded work, so launch delays, queue depths and the "
                               "critical path's host/GPU split are unreliable; 0 otherwise");
  added<&L::first_op_delay_rank>(v, "first_op_delay_rank", "", "the rank it was seen on, in a job; -1 otherwise");
  added<&L::clock_offset_bound_ns>(v, "clock_offset_bound_ns", "ns",
                                   "where first_op_delay_ns is set: the least time from a launch call's start to its "
                                   "op's start in that trace (graph kernels included), where under the delay: the "
                                   "most the clocks can disagree; 0 otherwise");
  added<&L::backlog_ops>(v, "backlog_ops", "",
                         "GPU ops with no launch in the trace that ran before their stream's first launched op: "
                         "launched before the recording began, so queued, not launched late");
  added<&L::synchronous_copies>(v, "synchronous_copies", "",
                                "copies made by a synchronous copy call (cudaMemcpy): the host waited in the call, so "
                                "they are left out of the launch figures");
  added<&L::host_not_launching_ns>(
      v, "host_not_launching_ns", "ns",
      "of the host's time over the steps (without steps, the recorded window), what it "
      "spent issuing no launches: inside CUDA graph captures up to each graph's first "
      "run, blocked in host synchronizations or blocking copies, or in kernel launch calls "
      "of 1 ms or more (loading the kernel's module, a launch into a full queue)");
  added<&L::long_launch_ns>(v, "long_launch_ns", "ns",
                            "the part of host_not_launching_ns in kernel launch calls of 1 ms or more (loading the "
                            "kernel's module on its first launch, a launch into a full queue)");
}

template <class V>
constexpr void rows(V& v, Of<CollectiveSite>) {
  using C = CollectiveSite;
  field<&C::rank>(v, "rank", "", "distributed rank; -1: unknown, or pooled over several");
  gpu<&C::device>(v, "device", "the GPU; null: pooled over several (`collective_summary.widest`)");
  field<&C::kind>(v, "kind", "",
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce, send_recv, all_to_all or "
                  "collective: the framework's annotation's, else the kernel name's");
  field<&C::named_by>(v, "named_by", "",
                      "the annotation that named the kind (\"nccl:all_reduce\"), or \"kernel name\"");
  field<&C::bytes>(v, "bytes", "bytes", "message bytes; 0: the trace does not say");
  field<&C::ordinal>(v, "ordinal", "",
                     "its place among its step's collectives of its kind and size; -1: outside steps");
  field<&C::kernel>(v, "kernel", "", "the kernel of its first instance");
  field<&C::durations>(v, "durations", "", "of its instances (one per step it ran in)");
  field<&C::wait_ns>(v, "wait_ns", "ns",
                     "Σ (instance − fastest instance): time beyond the transfer; 0 for a site with neither a place in "
                     "a step nor a size (calls of any size, not comparable)");
  field<&C::exposed_ns>(v, "exposed_ns", "ns", "Σ of its instances' time with no compute kernel alongside");
  added<&C::optimizer>(v, "optimizer", "",
                       "the optimizer's step its first instance was launched inside (\"Optimizer.step#Shampoo.step\": "
                       "a sharded optimizer's own exchange); empty: none");
}

template <class V>
constexpr void rows(V& v, Of<CollectiveKind>) {
  using K = CollectiveKind;
  field<&K::kind>(v, "kind", "", "as a site's `kind`");
  field<&K::sites>(v, "sites", "", "pooled sites (kind, size, place in the step) of this kind");
  field<&K::time_ns>(v, "time_ns", "ns", "Σ their instances' durations");
  field<&K::exposed_ns>(v, "exposed_ns", "ns", "Σ their time with no compute kernel alongside");
  field<&K::repeated_ns>(v, "repeated_ns", "ns",
                         "Σ durations of the sites seen more than once (steps or ranks), with a place in the step or a "
                         "known size");
  field<&K::wait_ns>(v, "wait_ns", "ns", "… of which beyond each site's fastest instance: waiting");
  added<&K::optimizer_exposed_ns>(v, "optimizer_exposed_ns", "ns",
                                  "Σ exposed time of its sites launched inside an optimizer's step");
  added<&K::optimizer>(v, "optimizer", "", "the first of those steps' names; empty: none");
}

template <class V>
constexpr void rows(V& v, Of<CollectiveSummary>) {
  using S = CollectiveSummary;
  field<&S::kinds>(v, "kinds", "", "by kind, most exposed time first");
  field<&S::sites>(v, "sites", "", "pooled sites");
  field<&S::repeated_sites>(v, "repeated_sites", "", "… seen more than once, with a place in the step or a known size");
  field<&S::time_ns>(v, "time_ns", "ns", "Σ over kinds");
  field<&S::exposed_ns>(v, "exposed_ns", "ns", "Σ over kinds");
  field<&S::repeated_ns>(v, "repeated_ns", "ns", "Σ over kinds");
  field<&S::wait_ns>(v, "wait_ns", "ns", "Σ over kinds");
  added<&S::widest>(
      v, "widest", "",
      "the pooled site with the most wait (rank -1 and device null when pooled over several; "
      "its median then that of the one with the most instances); `durations.count` 0 when no site repeats");
  field<&S::renamed_sites>(v, "renamed_sites", "",
                           "sites whose annotation names another kind than their kernel's name");
  added<&S::size_wait_ns>(v, "size_wait_ns", "ns",
                          "waiting the message sizes prove whatever the link: Σ over sites of a known size whose "
                          "traffic is at most twice their message (all_reduce, all_to_all, broadcast, reduce, "
                          "send_recv) of their fastest instance's time beyond twice their bytes at 100 MB/s plus 2 ms, "
                          "times their instances");
  added<&S::size_widest>(v, "size_widest", "",
                         "the pooled site with the most of size_wait_ns; `durations.count` 0 when none");
}

template <class V>
constexpr void rows(V& v, Of<TemporalBreakdown>) {
  using B = TemporalBreakdown;
  field<&B::rank>(v, "rank", "", "distributed rank");
  gpu<&B::device>(v, "device", "the GPU; null: all GPUs of the rank");
  field<&B::span_ns>(v, "span_ns", "ns", "HTA's span");
  field<&B::idle_ns>(v, "idle_ns", "ns", "HTA's idle time");
  field<&B::compute_ns>(v, "compute_ns", "ns", "HTA's compute time");
  field<&B::non_compute_ns>(v, "non_compute_ns", "ns", "HTA's non-compute time");
  field<&B::idle_share>(v, "idle_share", "fraction", "idle_ns / span_ns");
  field<&B::compute_share>(v, "compute_share", "fraction", "compute_ns / span_ns");
  field<&B::non_compute_share>(v, "non_compute_share", "fraction", "non_compute_ns / span_ns");
  added<&B::non_compute_note>(v, "non_compute_note", "",
                              "when HTA's own non-compute figure is negative (its µs rounding), what it was: "
                              "the two numbers above are then 0; empty otherwise");
}

template <class V>
constexpr void rows(V& v, Of<RankSummary>) {
  using R = RankSummary;
  field<&R::rank>(v, "rank", "", "distributed rank");
  gpu<&R::device>(v, "device", "the GPU; null: all GPUs of the rank");
  field<&R::source_file>(v, "source_file", "", "the trace file");
  field<&R::clock_offset_ns>(v, "clock_offset_ns", "ns", "added to this rank's times to align it with rank 0");
  field<&R::step_time_mean>(v, "step_time_mean_ns", "ns", "mean step time");
  field<&R::communication_ns>(v, "communication_ns", "ns", "|union of communication kernels|");
  field<&R::utilization>(v, "utilization", "fraction", "busy / span");
  field<&R::compute_ns>(v, "compute_ns", "ns", "|union of non-communication kernels|");
  field<&R::exposed_communication_ns>(v, "exposed_communication_ns", "ns", "communication nothing hides");
  field<&R::compute_per_step_ns>(v, "compute_per_step_ns", "ns", "compute_ns / steps; 0 without steps");
  added<&R::clock_residual_ns>(v, "clock_residual_ns", "ns",
                               "median distance of one collective's shift from `clock_offset_ns`");
  added<&R::waited_ns>(v, "waited_ns", "ns", "Σ over the matched collectives of (last arrival − its arrival)");
  added<&R::wait_caused_ns>(v, "wait_caused_ns", "ns", "Σ of the others' wait at the collectives it arrived at last");
  added<&R::last_arrivals>(v, "last_arrivals", "", "matched collectives it arrived at last");
}

template <class V>
constexpr void rows(V& v, Of<CollectiveInstance>) {
  using C = CollectiveInstance;
  field<&C::index>(v, "index", "", "its place in the reference rank's sequence of collectives");
  field<&C::kind>(v, "kind", "",
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce, send_recv, "
                  "all_to_all or collective (the framework's annotation's, else the kernel name's)");
  field<&C::step>(v, "step", "", "the reference rank's step it lies in; -1: none");
  field<&C::range>(v, "range", "", "first arrival .. last end over the ranks");
  digest_only<&C::first_arrival_ns>(v, "the report has it as `range.start_ns`");
  field<&C::last_arrival_ns>(v, "last_arrival_ns", "ns", "when the last rank started its part");
  field<&C::last_rank>(v, "last_rank", "", "the last rank to arrive");
  field<&C::wait_ns>(v, "wait_ns", "ns", "Σ over the other ranks of (last arrival − their arrival)");
  field<&C::bytes>(v, "bytes", "bytes", "0: the traces do not say");
}

template <class V>
constexpr void rows(V& v, Of<Straggler>) {
  using S = Straggler;
  field<&S::rank>(v, "rank", "", "the rank");
  field<&S::source_file>(v, "source_file", "", "its trace file");
  field<&S::wait_caused_ns>(v, "wait_caused_ns", "ns", "Σ of the others' wait at the collectives it arrived at last");
  field<&S::last_arrivals>(v, "last_arrivals", "", "collectives it arrived at last");
  field<&S::critical_steps>(v, "critical_steps", "", "steps in which it caused the most wait");
  field<&S::waited_ns>(v, "waited_ns", "ns", "its own wait for the others");
}

template <class V>
constexpr void rows(V& v, Of<JobStep>) {
  using J = JobStep;
  field<&J::index>(v, "index", "", "the step's index");
  field<&J::critical_rank>(v, "critical_rank", "", "the rank that caused the most wait in it; -1: no wait");
  field<&J::wait_ns>(v, "wait_ns", "ns", "the others' wait in its collectives");
}

template <class V>
constexpr void rows(V& v, Of<LeftOut>) {
  using L = LeftOut;
  field<&L::file>(v, "file", "", "the file; empty: ranks of the job with no file");
  field<&L::problem>(v, "problem", "", "what is wrong");
}

template <class V>
constexpr void rows(V& v, Of<Skew>) {
  using K = Skew;
  field<&K::participants>(v, "participants", "", "GPUs (or ranks) compared");
  field<&K::busy_spread>(v, "busy_spread", "ratio", "of busy time");
  field<&K::compute_spread>(v, "compute_spread", "ratio", "of compute time");
  field<&K::step_time_spread>(v, "step_time_spread", "ratio", "of mean step time");
  field<&K::slowest_rank>(v, "slowest_rank", "", "the rank with the most compute (the others wait for it); -1: none");
  gpu<&K::slowest_device>(v, "slowest_device", "its GPU; null: none");
}

// [SECTION] Synchronization and copies -------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<SyncStats>) {
  using Y = SyncStats;
  field<&Y::count>(v, "count", "", "synchronizations");
  field<&Y::total_ns>(v, "total_ns", "ns", "time hosts spent blocked in them");
  field<&Y::device_syncs>(v, "device_syncs", "", "device synchronizations");
  field<&Y::stream_syncs>(v, "stream_syncs", "", "stream synchronizations");
  field<&Y::event_syncs>(v, "event_syncs", "", "event synchronizations");
  field<&Y::gpu_idle_after_ns>(v, "gpu_idle_after_ns", "ns",
                               "GPU idle from a sync's (or blocking copy's) end to its GPU's next op, when the "
                               "queue had drained, at most how long the call held the host");
  added<&Y::copies>(v, "copies", "", "copies that block the host (`memcpys.synchronous`), charged as synchronizations");
  added<&Y::copy_ns>(v, "copy_ns", "ns", "time hosts spent blocked in their calls");
  added<&Y::gpu_idle_after_copies_ns>(v, "gpu_idle_after_copies_ns", "ns",
                                      "the part of `gpu_idle_after_ns` that follows them");
  added<&Y::readback_gaps>(v, "readback_gaps", "",
                           "GPU idle gaps after a read-back of results (device to host, 1 MiB or more) in which the "
                           "host then worked longer than the copy held it: charged to that work (a late launch), "
                           "which most likely uses the results, not to the copy");
  added<&Y::setup_syncs>(v, "setup_syncs", "",
                         "synchronizations of CUDA graphs' one-time set-up (from a capture to the graph's first "
                         "run, or inside torch's cudagraph trees recording one), in none of the figures above");
  added<&Y::setup_ns>(v, "setup_ns", "ns", "time hosts spent blocked in them");
  added<&Y::setup_idle_ns>(v, "setup_idle_ns", "ns", "GPU idle after them, charged as warm-up");
  added<&Y::mid_step>(v, "mid_step", "",
                      "of the synchronizations and blocking copies, those between a step's first and last launch "
                      "(without steps, the recording's), which a CUDA graph capture of the step cannot hold; a copy "
                      "and a synchronization inside one framework op count once");
  added<&Y::mid_step_ns>(v, "mid_step_ns", "ns", "host time blocked in them");
  added<&Y::mid_step_steps>(v, "mid_step_steps", "", "the steps they were looked for in (0: the recording)");
  added<&Y::mid_step_sites>(v, "mid_step_sites", "", "where they are, by place, most first (at most 8 a rank)");
  added<&Y::step_parts>(v, "step_parts", "",
                        "the named ranges directly under those steps, by name, most launches first (at most 8 a "
                        "rank)");
  added<&Y::step_launches>(v, "step_launches", "", "GPU ops launched inside those steps");
}

template <class V>
constexpr void rows(V& v, Of<SyncSite>) {
  using S = SyncSite;
  field<&S::where>(v, "where", "",
                   "the innermost Python function outside torch's modules around it, else the innermost named "
                   "range that is no step, else `op`, else the synchronizing call");
  field<&S::op>(v, "op", "", "the outermost framework ops around them, comma-separated; empty: none");
  field<&S::part>(v, "part", "", "the named range directly under the step it lies in; empty: none");
  field<&S::count>(v, "count", "", "synchronizations there");
  field<&S::blocked_ns>(v, "blocked_ns", "ns", "host time blocked in them");
}

template <class V>
constexpr void rows(V& v, Of<StepPart>) {
  using P = StepPart;
  field<&P::name>(v, "name", "", "the range's name");
  field<&P::launches>(v, "launches", "", "GPU ops launched inside it (from any thread)");
  field<&P::syncs>(v, "syncs", "",
                   "synchronizations inside it (a copy and a synchronization in one framework op count once)");
}

template <class V>
constexpr void rows(V& v, Of<CopyGroup>) {
  using G = CopyGroup;
  field<&G::direction>(v, "direction", "", "`HtoD`, `DtoH`, `DtoD`, `peer` or `other`");
  field<&G::own_stream>(v, "own_stream", "",
                        "true: on a stream that runs no kernels (a copy stream); false: on a compute stream");
  field<&G::memory>(v, "memory", "", "the host side: `pinned`, `pageable`; `device` for copies with none; `unknown`");
  field<&G::count>(v, "count", "", "copies");
  field<&G::bytes>(v, "bytes", "bytes", "bytes copied");
  field<&G::time_ns>(v, "time_ns", "ns", "Σ copy durations");
  field<&G::blocking>(v, "blocking", "", "of them, copies that block the host");
  added<&G::blocking_ns>(v, "blocking_ns", "ns", "the host time those blocked (their launching calls' durations)");
  added<&G::compiled>(v, "compiled", "",
                      "of them, copies launched inside a compiled region (torch.compile's \"Torch-Compiled "
                      "Region\", CompiledFunction): made by the compiler");
  added<&G::gradient>(v, "gradient", "",
                      "of them, copies launched inside autograd's AccumulateGrad (its hooks included: DDP's copy "
                      "of each gradient into its bucket) or DDP's copy_bucket_to_grad");
  added<&G::gradient_bytes>(v, "gradient_bytes", "bytes", "their bytes");
  added<&G::exposed_ns>(v, "exposed_ns", "ns", "the copies' time with no kernel running on their GPU");
  added<&G::gradient_exposed_ns>(v, "gradient_exposed_ns", "ns",
                                 "of it, that of the copies launched inside AccumulateGrad");
  added<&G::buffers>(v, "buffers", "",
                     "of them, device-to-device copies launched by an op directly under a "
                     "DistributedDataParallel.forward that holds a broadcast collective: DDP's broadcast of the "
                     "module's buffers");
  added<&G::buffers_exposed_ns>(v, "buffers_exposed_ns", "ns", "their time with no kernel running on their GPU");
  added<&G::ddp_forward>(v, "ddp_forward", "",
                         "of them, device-to-device copies launched by an op directly under a "
                         "DistributedDataParallel.forward that holds no broadcast: not DDP's buffer sync");
  added<&G::ddp_forward_bytes>(v, "ddp_forward_bytes", "bytes", "their bytes");
  added<&G::ddp_forward_op>(v, "ddp_forward_op", "", "the op that launched the most of them");
  added<&G::ddp_forward_op_count>(v, "ddp_forward_op_count", "", "how many of them it launched");
  added<&G::unlaunched>(v, "unlaunched", "", "of them, copies with no launching call in the trace");
}

template <class V>
constexpr void rows(V& v, Of<MemcpyStats>) {
  using M = MemcpyStats;
  field<&M::count>(v, "count", "", "copies");
  field<&M::bytes>(v, "bytes", "bytes", "bytes copied");
  field<&M::time_ns>(v, "time_ns", "ns", "Σ copy durations");
  field<&M::htod>(v, "htod", "", "host-to-device copies");
  field<&M::dtoh>(v, "dtoh", "", "device-to-host copies");
  field<&M::dtod>(v, "dtod", "", "device-to-device copies");
  field<&M::other>(v, "other", "", "other copies (peer, array, unknown)");
  field<&M::pageable>(v, "pageable", "", "copies with a pageable host side");
  field<&M::pageable_ns>(v, "pageable_ns", "ns", "their time");
  field<&M::pageable_bytes>(v, "pageable_bytes", "bytes", "their bytes");
  field<&M::synchronous>(v, "synchronous", "",
                         "copies that block the host: launched by a blocking call (cudaMemcpy, not …Async), "
                         "with a pageable host side, or the device-to-host copy of .item(); host-to-device "
                         "copies ≤ 64 KB exempt");
  field<&M::synchronous_ns>(v, "synchronous_ns", "ns", "duration of their launching calls");
  field<&M::memsets>(v, "memsets", "", "fills");
  field<&M::memset_ns>(v, "memset_ns", "ns", "Σ fill durations");
  added<&M::groups>(v, "groups", "", "copies by direction × stream × host memory, most time first");
}

// [SECTION] Findings -------------------------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<Finding>) {
  using F = Finding;
  field<&F::id>(v, "id", "", "the rule id (docs/findings.md)");
  field<&F::severity>(v, "severity", "", "how much it matters");
  field<&F::title>(v, "title", "", "one line with the numbers");
  field<&F::evidence>(v, "evidence", "", "which kernels, the metric against its threshold, in words");
  field<&F::recommendation>(v, "recommendation", "", "what to change");
  field<&F::saving_ns>(v, "saving_ns", "ns", "estimated wall-clock time a fix would save over the trace");
  field<&F::metric>(v, "metric", "", "the value the rule tested …");
  field<&F::threshold>(v, "threshold", "", "… and the threshold it crossed");
  gpu<&F::device>(v, "device", "the GPU it is about; null: all GPUs");
  field<&F::ranges>(v, "ranges", "", "where to look (the viewer zooms there), longest first");
  field<&F::kernels>(v, "kernels", "", "kernels involved, most expensive first");
  added<&F::saving_source>(v, "saving_source", "",
                           "how `saving_ns` was estimated: by replaying the dependency graph with the fix "
                           "applied (docs/whatif.md), or by the rule's rule of thumb (docs/findings.md)");
  added<&F::fix>(v, "fix", "", "the fix as `gpuscope whatif` changes; empty where the graph cannot express it");
  added<&F::predicted_step_ns>(v, "predicted_step_ns", "ns",
                               "median step after the fix, simulated; 0 when not simulated");
  added<&F::replay_saving_ns>(v, "replay_saving_ns", "ns",
                              "the replay's own saving where `saving_ns` is capped below it (a host-side fix is "
                              "credited only with the GPU idle its late launches ended; the replay also removes host "
                              "time other findings count); 0 otherwise");
  added<&F::saving_note>(v, "saving_note", "",
                         "why the saving is not the plain estimate: the fix's changed graph has a dependency "
                         "cycle (not simulated, the rule of thumb stays), or the simulated fix saves nothing "
                         "(`saving_ns` 0); empty otherwise");
  added<&F::after_fixes>(v, "after_fixes", "",
                         "a simulated fix that saves nothing alone, replayed after the fixes that do save time: "
                         "those fixes; empty unless it then makes the median step at least 1 % shorter");
  added<&F::after_from_ns>(v, "after_from_ns", "ns", "the median step with `after_fixes`");
  added<&F::after_to_ns>(v, "after_to_ns", "ns", "the median step with `after_fixes` and this finding's fix");
  added<&F::variant>(v, "variant", "",
                     "which case of its rule fired (docs/findings.md lists each rule's cases); empty when the "
                     "rule has one");
  added<&F::share>(v, "share", "",
                   "its time as a share of the run (of kernel time for rules that measure kernel time) where "
                   "the rule measures one; with `saving_ns`, what decides whether it is numbered (≥ 1 %)");
  added<&F::saving_within>(v, "saving_within", "",
                           "the id of another finding whose fix removes this one's saving too (CUDA graphs "
                           "remove a per-parameter optimizer's host time with every other op's): its saving is "
                           "part of that one's, not in addition; empty otherwise");
}

template <class V>
constexpr void rows(V& v, Of<HelpAnswer>) {
  using H = HelpAnswer;
  field<&H::id>(v, "id", "", "the question's stable id (docs/findings.md, \"What would help?\")");
  field<&H::question>(v, "question", "", "the question, as the report asks it");
  field<&H::verdict>(v, "verdict", "",
                     "the answer; `unknown` where the trace cannot tell; `later`: no gain now, but a gain after the "
                     "changes that save time now (the replay with them says so)");
  field<&H::reason>(v, "reason", "", "what in the trace decides it, with the numbers");
  field<&H::findings>(v, "findings", "", "ids of the numbered findings behind the answer");
  added<&H::fix>(v, "fix", "", "the `gpuscope whatif` change the replay simulated for it; empty: none");
  added<&H::predicted_step_ns>(v, "predicted_step_ns", "ns",
                               "median step with that fix, simulated, when shorter than now; 0: none");
}

template <class V>
constexpr void rows(V& v, Of<IdleCharge>) {
  using C = IdleCharge;
  field<&C::cause>(
      v, "cause", "",
      "`input-wait`, `host-sync`, `blocking-copy`, `late-launch` (gaps under the idle-gap threshold), "
      "`late-launch-gap`, `queued-gap`, `comm-gap` (held at a host range named for communication with no "
      "communication kernel recorded for it: probably communication the trace did not record), `unlaunched-gap`, "
      "`unrecorded-gap` (before a stream's first recorded "
      "op: whether the GPU idled is unknown), `warm-up` (gaps at or over it), `other`; and "
      "`input-before-start` (input loading before a GPU's first op: not in its idle time)");
  field<&C::ns>(v, "ns", "ns", "its time, summed over the GPUs");
  field<&C::finding>(v, "finding", "", "the rule id of the finding (numbered or minor) that charges it; empty: none");
  added<&C::note>(v, "note", "", "why no finding charges it, or how the finding does");
  added<&C::host_recorded_ns>(v, "host_recorded_ns", "ns",
                              "of `ns` (`late-launch-gap` only), the time the launching thread was inside recorded "
                              "host work (a framework op, a range, a runtime call) with no data-loading range around "
                              "it: the host's own work, no wait for input");
}

template <class V>
constexpr void rows(V& v, Of<HostFrame>) {
  using T = HostFrame;
  field<&T::frame>(v, "frame", "", "the frame as the sampler wrote it (`train.py(57): main`, a symbol)");
  field<&T::samples>(v, "samples", "", "samples with it as the innermost frame");
}

template <class V>
constexpr void rows(V& v, Of<HostWhere>) {
  using W = HostWhere;
  field<&W::cause>(v, "cause", "", "the `idle_charges` cause");
  field<&W::samples>(v, "samples", "", "host samples in that idle time on those threads");
  field<&W::threads>(v, "threads", "", "threads they were taken on");
  field<&W::thread>(v, "thread", "", "the thread with most of them");
  field<&W::path>(v, "path", "",
                  "the innermost frames (up to 3) of the path most samples share, outermost first: from the root "
                  "down while one frame holds more than half of the samples, or, where the stacks share no root, "
                  "from the innermost frame up; empty: no frame holds more than half");
  field<&W::path_samples>(v, "path_samples", "", "samples under the path's last frame");
  field<&W::path_depth>(v, "path_depth", "", "frames on the whole path (`path` keeps its innermost)");
  field<&W::path_from_root>(v, "path_from_root", "", "the path starts at the stacks' root (false: at their leaves)");
  field<&W::leaves>(v, "leaves", "", "the innermost frames with most samples (up to 3), most first");
  field<&W::input_samples>(v, "input_samples", "",
                           "samples with a frame of a data-loading library (torch/utils/data, tf.data) on their "
                           "stack");
  field<&W::python_samples>(v, "python_samples", "",
                            "samples with a Python frame (`file.py(line): function`) on their stack: only these "
                            "can show a Python data loader");
  field<&W::note>(v, "note", "", "what the samples cannot tell (too few, none on those threads); empty: nothing");
}

// [SECTION] Critical path and simulated fixes ------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<PathCategory>) {
  using T = PathCategory;
  field<&T::category>(v, "category", "", "the category");
  field<&T::ns>(v, "ns", "ns", "its time on the paths");
}

template <class V>
constexpr void rows(V& v, Of<PathOp>) {
  using T = PathOp;
  field<&T::name>(v, "name", "", "kernel name (\"Memcpy HtoD\", \"Memset\" for copies)");
  field<&T::category>(v, "category", "", "its category");
  field<&T::ns>(v, "ns", "ns", "their time on the paths");
  field<&T::count>(v, "count", "", "ops of that name on the paths");
}

template <class V>
constexpr void rows(V& v, Of<CriticalPath>) {
  using C = CriticalPath;
  field<&C::steps>(v, "steps", "", "steps whose paths are summed (0: one path over the whole trace)");
  field<&C::length_ns>(v, "length_ns", "ns", "Σ of the paths' lengths (= Σ of those steps' times)");
  field<&C::gpu_compute_ns>(v, "gpu_compute_ns", "ns", "kernels other than communication: their own run");
  field<&C::communication_ns>(v, "communication_ns", "ns", "communication kernels");
  field<&C::copy_ns>(v, "copy_ns", "ns", "memcpys and memsets");
  field<&C::cpu_launch_ns>(v, "cpu_launch_ns", "ns", "launch calls and the latency to their ops' start");
  field<&C::cpu_other_ns>(v, "cpu_other_ns", "ns", "CPU time between calls, other API calls");
  field<&C::input_wait_ns>(v, "input_wait_ns", "ns", "CPU time in data-loading ranges");
  field<&C::sync_wait_ns>(v, "sync_wait_ns", "ns",
                          "host synchronisations, from the op they waited for to their return");
  field<&C::gpu_wait_ns>(v, "gpu_wait_ns", "ns",
                         "a stream idle before an op, beyond its typical gap, that no recorded dependency explains "
                         "(an event, a peer, records the trace lacks): unknown cause");
  field<&C::gpu_gap_ns>(v, "gpu_gap_ns", "ns",
                        "a stream idle before an op for what held it: the device's typical gap after the previous "
                        "op of its stream, or the latency after the op on another stream it waited for");
  field<&C::optimizer_host_ns>(v, "optimizer_host_ns", "ns",
                               "of the host's time on the paths (launch calls, CPU time between calls), what lies "
                               "inside the optimizer's steps (Optimizer.step#…)");
  field<&C::categories>(v, "categories", "", "the GPU time by category, largest first");
  field<&C::ops>(v, "ops", "", "the ops with the most time on the paths, most first");
}

template <class V>
constexpr void rows(V& v, Of<Prediction>) {
  using T = Prediction;
  field<&T::change>(v, "change", "", "the `gpuscope whatif` change(s)");
  field<&T::step_ns>(v, "step_ns", "ns", "median step predicted (the span without steps)");
  field<&T::speedup>(v, "speedup", "ratio", "replayed / predicted step");
  added<&T::saving_ns>(v, "saving_ns", "ns",
                       "wall-clock saving over the replayed steps, per trace (as a finding's simulated "
                       "`saving_ns`); 0 where the replay is not shorter");
  added<&T::after_step_ns>(v, "after_step_ns", "ns",
                           "where the change is not among the fixes that save time (`together`): the median step "
                           "with those fixes and this change; 0: not predicted");
}

template <class V>
constexpr void rows(V& v, Of<Simulation>) {
  using S = Simulation;
  field<&S::status>(v, "status", "", "`simulated`; empty when not run; otherwise why not");
  field<&S::scope>(v, "scope", "", "what was replayed (\"all 6 steps\", \"32 steps in the middle of …\")");
  field<&S::steps>(v, "steps", "", "steps simulated (0: the whole trace, which has none)");
  field<&S::replayed_step_ns>(v, "replayed_step_ns", "ns", "median step replayed");
  field<&S::replay_error>(v, "replay_error", "fraction",
                          "median per-step relative error of the replay (of the span without steps)");
  field<&S::replay_error_worst>(v, "replay_error_worst", "fraction", "the worst step's");
  field<&S::predictions>(v, "predictions", "",
                         "each finding's fix alone, and the changes the \"What would help?\" answers quote");
  field<&S::together>(v, "together", "", "the fixes with a simulated saving, together");
  added<&S::together_note>(v, "together_note", "", "why `together` is empty though a fix saves time");
}

// [SECTION] Trace quality --------------------------------------------------------------------

// The parts of a file's damage (trace/damage.h): the report writes them
// through file_quality's rows.
template <class V>
constexpr void rows(V& v, Of<TableLoss>) {
  using L = TableLoss;
  elsewhere<&L::loaded>(v, "`rows_lost[].loaded`");
  elsewhere<&L::lost>(v, "`rows_lost[].lost`");
  elsewhere<&L::count>(v, "`rows_lost[].count`");
}
template <class V>
constexpr void rows(V& v, Of<FileDamage>) {
  using D = FileDamage;
  elsewhere<&D::truncated>(v, "`truncated`");
  elsewhere<&D::file_bytes>(v, "`file_bytes`");
  elsewhere<&D::intact_bytes>(v, "`intact_bytes`");
  elsewhere<&D::bytes_lost>(v, "`bytes_lost`");
  elsewhere<&D::damaged_sections>(v, "`damaged_sections`");
  elsewhere<&D::tables>(v, "`rows_lost`");
  elsewhere<&D::problems>(v, "`problems`");
}
template <class V>
constexpr void rows(V& v, Of<DeviceCoverage>) {
  using C = DeviceCoverage;
  elsewhere<&C::declared>(v, "`devices_declared`");
  elsewhere<&C::with_data>(v, "`devices_with_data`");
}

template <class V>
constexpr void rows(V& v, Of<FileQuality>) {
  using Q = FileQuality;
  using D = FileDamage;
  field<&Q::file>(v, "file", "", "the file; empty when analysed from memory");
  derived<&file_complete>(v, "complete", "", "nothing was lost in storage");
  derived<&file_headline>(v, "headline", "",
                          "the line every output states first (\"INCOMPLETE file: truncated at byte …\"); "
                          "empty when complete");
  field<&Q::damage, &D::truncated>(v, "truncated", "",
                                   "the file ends before its data did (cut short, or its writer stopped)");
  field<&Q::damage, &D::file_bytes>(v, "file_bytes", "bytes", "size of the file as read (compressed, for gzip)");
  field<&Q::damage, &D::intact_bytes>(v, "intact_bytes", "bytes", "its first bytes, read without a problem");
  field<&Q::damage, &D::bytes_lost>(v, "bytes_lost", "bytes", "bytes of the file not loaded");
  field<&Q::damage, &D::damaged_sections>(v, "damaged_sections", "",
                                          "damaged parts skipped or stopped at (sections, the index)");
  custom<&Q::damage, &D::tables>(v, "rows_lost", "", "the tables that lost rows, or may have");
  field<&Q::devices, &DeviceCoverage::declared>(v, "devices_declared", "", "GPUs the trace describes or has tracks on");
  field<&Q::devices, &DeviceCoverage::with_data>(v, "devices_with_data", "",
                                                 "those with at least one kernel, copy or fill");
  field<&Q::dropped_records>(v, "dropped_records", "",
                             "records the recorder dropped (CUPTI buffers full): they never reached the file, and "
                             "are not storage damage");
  field<&Q::damage, &D::problems>(v, "problems", "", "one line per problem, in file order");
  elsewhere<&Q::damage>(v, "the keys above from `truncated` to `problems`");
  elsewhere<&Q::devices>(v, "`devices_declared`, `devices_with_data`");
}

template <class V>
constexpr void rows(V& v, Of<TraceQuality>) {
  using Q = TraceQuality;
  derived<&quality_complete>(v, "complete", "", "no file lost anything in storage");
  derived<&quality_truncated>(v, "truncated", "", "some file is truncated");
  derived<&quality_bytes_lost>(v, "bytes_lost", "bytes", "Σ bytes not loaded, over files");
  derived<&quality_rows_lost>(v, "rows_lost", "", "Σ rows lost, over files and tables (some may be lower bounds)");
  field<&Q::files>(v, "files", "", "one per analysed file, in order");
}

// [SECTION] The top level --------------------------------------------------------------------

template <class V>
constexpr void rows(V& v, Of<Profile>) {
  using P = Profile;
  custom(v, "schema", "", "`\"gpuscope.report/1\"` (always the first key)");
  lenient<&P::source>(v, "source", "what recorded the traces (`unknown`: mixed, or a name this reader does not know)");
  field<&P::producer>(v, "producer", "", "what recorded the first trace (\"PyTorch Profiler (Kineto)\", …)");
  field<&P::files>(v, "files", "", "the analysed files, one per rank for jobs");
  added<&P::workload>(v, "workload", "", "what the traced program is: training or inference, eager or not, ranks");
  added<&P::trace_quality>(v, "trace_quality", "",
                           "what the files lost in storage (cut short or damaged), and which GPUs have data");
  field<&P::clock_alignment>(v, "clock_alignment", "", "how ranks were put on one clock; empty for one file");
  field<&P::window>(v, "window", "", "first to last event of all traces");
  field<&P::kernel_time_ns>(v, "kernel_time_ns", "ns", "Σ kernel durations (the denominator of `share`s)");
  field<&P::devices>(v, "devices", "", "one per GPU (per rank and GPU in jobs)");
  field<&P::categories>(v, "categories", "", "kernel categories with time, largest first");
  limited<kTop, &P::hotspots>(v, "hotspots", "kernels by name, largest total first (all, or `--top`)");
  limited<kTop, &P::op_names>(v, "op_names", "framework ops by name, most GPU time first (all, or `--top`)");
  limited<kTop, &P::ops>(v, "ops",
                         "framework ops by name × input shapes and types, most GPU time first (all, or `--top`)");
  field<&P::op_summary>(v, "op_summary", "", "attribution of GPU ops to framework ops");
  added<&P::module_split>(v, "module_split", "", "forward and backward GPU time per nn.Module");
  limited<kSteps, &P::steps, &StepSummary::steps>(v, "steps", "every step (or the first `--steps`)");
  field<&P::steps>(v, "step_summary", "", "the steps together");
  field<&P::idle>(v, "idle", "", "idle time by cause, per stream");
  field<&P::launches>(v, "launches", "", "launch statistics");
  added<&P::collective_sites>(v, "collective_sites", "",
                              "collective call sites compared across steps, most time first (every rank's)");
  added<&P::collective_summary>(v, "collective_summary", "", "the collective sites pooled across GPUs and ranks");
  field<&P::temporal_breakdown>(v, "temporal_breakdown", "", "HTA's breakdown, one per rank (and GPU)");
  field<&P::ranks>(v, "ranks", "", "one per rank and GPU");
  field<&P::skew>(v, "skew", "", "spreads across ranks and GPUs");
  added<&P::collectives>(v, "collectives", "", "jobs: collective instances matched across ranks, in order");
  added<&P::stragglers>(v, "stragglers", "", "jobs: every rank by the wait it caused, most first");
  added<&P::job_steps>(v, "job_steps", "", "jobs: each step's critical rank");
  added<&P::left_out>(v, "left_out", "", "jobs: files not analysed and ranks with no file, and why");
  field<&P::syncs>(v, "syncs", "", "host synchronizations");
  field<&P::memcpys>(v, "memcpys", "", "copies and fills");
  field<&P::findings>(v, "findings", "",
                      "the material findings (saving or share ≥ 1 % of the run), largest `saving_ns` first");
  added<&P::minor_findings>(v, "minor_findings", "", "findings under 1 % of the run: true, listed, not numbered");
  added<&P::helps>(v, "helps", "", "\"What would help?\": the usual changes, answered from the trace");
  added<&P::idle_charges>(v, "idle_charges", "",
                          "the GPUs' idle time by cause, each part charged to one finding (docs/findings.md)");
  added<&P::host_while_idle>(v, "host_while_idle", "",
                             "where the host was during each cause's idle time, from host samples (traces "
                             "with host samples only)");
  added<&P::critical_path>(v, "critical_path", "", "the steps' critical path");
  added<&P::simulation>(v, "simulation", "", "the replay behind the simulated savings");
  custom<&P::trace_stats>(
      v, "trace_stats", "",
      "the traces' statistics (`capture.dropped_records`, `import.skipped.<reason>`, …), summed over files");
}

// [SECTION] Counting the members -------------------------------------------------------------

// Counts the rows of one member: those the digest writes.
struct MemberCount {
  std::size_t n = 0;
  template <unsigned Flags, auto... Path>
  constexpr void member(const Row&) {
    if constexpr (sizeof...(Path) == 1) ++n;
  }
  template <auto Compute>
  constexpr void computed(const Row&) {}
};

// The types listed here.
template <class T>
concept Listed = requires(MemberCount& c) {
  rows(c, Of<T>{});
};

template <Listed T>
constexpr std::size_t listed_members() {
  MemberCount c;
  rows(c, Of<T>{});
  return c.n;
}

}  // namespace gpuscope::record
