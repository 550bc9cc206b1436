// The fields of gpuscope.report/1, described once: one table per JSON
// object, one row per key, in the order written. report_json() writes these
// rows, parse_report_json() reads them back, and docs/report-schema.md's key
// tables are generated from them (report_schema_markdown(); a test fails
// when the doc differs, `cmake --build build --target update-docs` rewrites
// it).
//
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
// [SECTION] Entry points
//
// A new number: compute it (src/analysis), then add its row here: key (the
// Profile's field name, `_ns` for times), member, unit, meaning (the formula
// lives in docs/metrics.md). Keys are only ever added within /1; renaming or
// removing one means /2.
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/util/parallel.h"
#include "export/detail/report_fields.h"
#include "export/report_json.h"
#include "words/damage_text.h"

namespace gpuscope::detail {

// [SECTION] Time ranges and duration statistics -------------------------------------------

template <>
struct Record<TimeRange> {
  static constexpr std::string_view name = "range";
  static constexpr std::string_view meaning = "A time range on the trace's clock.";
  static constexpr Field<TimeRange> fields[] = {
      field<&TimeRange::start>("start_ns", "ns", "start, on the trace's clock"),
      field<&TimeRange::end>("end_ns", "ns", "end (not before `start_ns`)"),
  };
  static void check(const TimeRange& r, const std::string& path, const Reader& reader) {
    if (r.end < r.start) reader.fail(path, "ends before it starts");
  }
};

template <>
struct Record<DurationStats> {
  static constexpr std::string_view name = "stats";
  static constexpr std::string_view meaning = "Summary statistics of a set of durations.";
  static constexpr Field<DurationStats> fields[] = {
      field<&DurationStats::count>("count", "", "durations"),
      field<&DurationStats::total>("total_ns", "ns", "their sum"),
      field<&DurationStats::min>("min_ns", "ns", "the shortest"),
      field<&DurationStats::max>("max_ns", "ns", "the longest"),
      field<&DurationStats::mean>("mean_ns", "ns", "the mean"),
      field<&DurationStats::median>("median_ns", "ns", "the median"),
  };
};

// [SECTION] Per device ------------------------------------------------------------------------

template <>
struct Record<HwMetric> {
  using M = HwMetric;
  static constexpr std::string_view name = "hw_metric";
  static constexpr std::string_view meaning =
      "One hardware series of a GPU over its window, as measured (docs/metrics.md, \"Hardware metrics\").";
  static constexpr Field<M> fields[] = {
      field<&M::name>("name", "", "the series: `hw.*` from CUPTI PM sampling, `nvml.*` from NVML"),
      field<&M::unit>("unit", "", "as the series gives it (`%`, `B/s`, `MHz`, `W`, …)"),
      field<&M::samples>("samples", "", "samples in the GPU's window"),
      field<&M::mean>("mean", "unit", "their mean"),
      field<&M::min>("min", "unit", "the least"),
      field<&M::max>("max", "unit", "the most"),
  };
};

template <>
struct Record<HwCategory> {
  using C = HwCategory;
  static constexpr std::string_view name = "hw_category";
  static constexpr std::string_view meaning =
      "The hardware samples taken while kernels of one category ran (each sample to the longest kernel in flight): "
      "a statistical estimate.";
  static constexpr Field<C> fields[] = {
      field<&C::category>("category", "", "the kernel category"),
      field<&C::samples>("samples", "", "hw.sm_active samples in its kernels"),
      field<&C::sm_active>("sm_active", "fraction", "mean SMs active; null: no samples"),
      field<&C::tensor_active>("tensor_active", "fraction", "mean tensor pipes active; null: no samples"),
      field<&C::sm_issue>("sm_issue", "fraction", "mean instruction issue against peak; null: no samples"),
      field<&C::dram_bytes_per_s>("dram_bytes_per_s", "B/s",
                                  "mean DRAM read + write; null: no samples, or samples in % on a GPU of unknown peak"),
      field<&C::dram_share>("dram_share", "fraction",
                            "mean DRAM read + write against the GPU's peak bandwidth; null: no samples, or samples in "
                            "B/s on a GPU of unknown peak"),
      field<&C::issue_samples>("issue_samples", "", "hw.sm_issue samples in its kernels"),
      field<&C::dram_samples>("dram_samples", "", "DRAM sample times in its kernels"),
  };
};

template <>
struct Record<DeviceHw> {
  using H = DeviceHw;
  static constexpr std::string_view name = "device_hw";
  static constexpr std::string_view meaning =
      "What the GPU's hardware measured (counter series `hw.*`, `nvml.*`); empty lists and zeros without them.";
  static constexpr Field<H> fields[] = {
      field<&H::metrics>("metrics", "", "one per series, by name"),
      field<&H::by_category>("by_category", "", "samples by the category of the kernel running, most samples first"),
      field<&H::busy_samples>("busy_samples", "", "hw.sm_active samples taken while a kernel ran"),
      field<&H::low_busy_samples>("low_busy_samples", "", "… of which below the low-SM-activity threshold"),
      field<&H::busy_sm_active>("busy_sm_active", "fraction", "mean SMs active over busy_samples; null: none"),
      field<&H::low_kernels>("low_kernels", "", "the kernels most often running during the low samples"),
      field<&H::throttle_samples>("throttle_samples", "",
                                  "nvml.throttle_reasons samples with a thermal or power reason"),
      field<&H::throttle_mask>("throttle_mask", "", "every such reason seen (NVML's clock event reason bits)"),
      field<&H::throttled_steps>("throttled_steps", "", "steps with such a sample"),
      field<&H::other_steps>("other_steps", "", "steps without"),
      field<&H::throttled_step_mean_ns>("throttled_step_mean_ns", "ns", "their mean duration; 0: none"),
      field<&H::other_step_mean_ns>("other_step_mean_ns", "ns", "the others' mean duration; 0: none"),
      field<&H::sm_clock_max_mhz>("sm_clock_max_mhz", "MHz", "the highest SM clock sampled; null: no clock series"),
      field<&H::throttled_sm_clock_mhz>("throttled_sm_clock_mhz", "MHz",
                                        "mean SM clock at the throttled samples; null: none"),
  };
};

template <>
struct Record<DeviceOccupancy> {
  using O = DeviceOccupancy;
  static constexpr std::string_view name = "occupancy";
  static constexpr std::string_view meaning =
      "Theoretical occupancy of a GPU's kernels, weighted by kernel time. Formulas: docs/metrics.md, \"Occupancy\".";
  static constexpr Field<O> fields[] = {
      field<&O::limits>("limits", "",
                        "where the per-SM limits came from: `trace`, `table cc 9.0` (by compute capability), "
                        "`trace + table cc 9.0`, `unknown` (then no kernel's occupancy is known)"),
      field<&O::known_kernels>("known_kernels", "", "kernels whose occupancy is known"),
      field<&O::unknown_kernels>("unknown_kernels", "",
                                 "kernels without block size, grid or registers in the trace, or with no limits"),
      field<&O::known_ns>("known_ns", "ns", "Σ durations of the kernels whose occupancy is known"),
      field<&O::known_share>("known_share", "fraction", "known_ns / the device's kernel_time_ns"),
      field<&O::theoretical>("theoretical", "fraction",
                             "Σ duration × theoretical occupancy / known_ns; null when no kernel's is known"),
      field<&O::block_size_ns>("block_size_ns", "ns",
                               "kernel time whose resident blocks per SM the warp slots limit (the block size)"),
      field<&O::blocks_per_sm_ns>("blocks_per_sm_ns", "ns", "… the most resident blocks per SM"),
      field<&O::registers_ns>("registers_ns", "ns", "… the registers"),
      field<&O::shared_memory_ns>("shared_memory_ns", "ns", "… the shared memory"),
      field<&O::gpu_fill>("gpu_fill", "fraction",
                          "Σ duration × min(blocks, SMs × blocks per SM) × threads per block / (SMs × threads per "
                          "SM) / known_ns; null when unknown (no SM count)"),
      field<&O::side_work_ns>("side_work_ns", "ns",
                              "Σ durations of communication kernels and copies (work that could run beside compute)"),
      field<&O::side_work_shared_ns>(
          "side_work_shared_ns", "ns",
          "… of those on streams that also run compute kernels (0: on streams of their own)"),
  };
};

template <>
struct Record<DeviceSummary> {
  using D = DeviceSummary;
  static constexpr std::string_view name = "device";
  static constexpr std::string_view meaning =
      "One per GPU (per rank and GPU in jobs). Formulas: docs/metrics.md, \"Per GPU\".";
  static constexpr Field<D> fields[] = {
      field<&D::id>("id", "", "CUDA ordinal"),
      field<&D::name>("name", "", "device name; empty when the trace does not say"),
      field<&D::rank>("rank", "", "distributed rank of the process that drove it; -1: unknown"),
      field<&D::compute_major>("compute_major", "", "compute capability, major; 0 when unknown"),
      field<&D::compute_minor>("compute_minor", "", "compute capability, minor; 0 when unknown"),
      field<&D::sm_count>("sm_count", "", "streaming multiprocessors; 0 when unknown"),
      field<&D::window>("window", "", "first GPU op start to last GPU op end on this GPU"),
      field<&D::span_ns>("span_ns", "ns", "length of `window`"),
      field<&D::busy_ns>("busy_ns", "ns", "|union of all GPU ops (kernels, memcpys, memsets)|"),
      field<&D::utilization>("utilization", "fraction", "busy_ns / span_ns"),
      field<&D::kernel_busy_ns>("kernel_busy_ns", "ns", "|union of kernels|"),
      field<&D::kernel_concurrency>("kernel_concurrency", "fraction",
                                    "time with ≥ 2 kernels in flight / kernel_busy_ns"),
      field<&D::mean_kernels_in_flight>("mean_kernels_in_flight", "kernels",
                                        "Σ kernel durations / kernel_busy_ns (≥ 0; 1 = one at a time)"),
      field<&D::memcpy_ns>("memcpy_ns", "ns", "|union of memcpys|"),
      field<&D::memcpy_compute_overlap>("memcpy_compute_overlap", "fraction", "|memcpys ∩ kernels| / memcpy_ns"),
      field<&D::communication_ns>("communication_ns", "ns", "|union of communication kernels|"),
      field<&D::communication_compute_overlap>("communication_compute_overlap", "fraction",
                                               "|communication ∩ other kernels| / communication_ns"),
      field<&D::compute_ns>("compute_ns", "ns", "|union of non-communication kernels|"),
      field<&D::exposed_communication_ns>("exposed_communication_ns", "ns",
                                          "|communication \\ compute|: communication nothing hides"),
      field<&D::memcpy_exposed_ns>("memcpy_exposed_ns", "ns", "|memcpys \\ kernels|"),
      field<&D::kernel_time_ns>("kernel_time_ns", "ns", "Σ kernel durations (not a union)"),
      field<&D::idle_ns>("idle_ns", "ns", "span_ns − busy_ns"),
      field<&D::idle_host_wait_ns>("idle_host_wait_ns", "ns", "idle gaps ended by an op launched after the gap began"),
      field<&D::idle_kernel_wait_ns>("idle_kernel_wait_ns", "ns",
                                     "other idle gaps shorter than the consecutive-kernel delay (30 µs)"),
      field<&D::idle_other_ns>("idle_other_ns", "ns", "the remaining idle gaps; the three add up to idle_ns"),
      field<&D::kernels>("kernels", "", "kernels run"),
      field<&D::memcpys>("memcpys", "", "copies run"),
      field<&D::memsets>("memsets", "", "fills run"),
      field<&D::streams>("streams", "", "streams with at least one GPU op"),
      field<&D::sm_efficiency>("sm_efficiency", "fraction",
                               "duration-weighted min(blocks / SMs, 1); 0 when the SM count is unknown"),
      field<&D::achieved_tflops>("achieved_tflops", "TFLOP/s",
                                 "Σ FLOPs of the matrix, convolution and attention ops whose shapes were recorded / "
                                 "Σ their GPU time; null when unknown (docs/ops.md)"),
      field<&D::peaks_source>("peaks_source", "",
                              "where the roofline's peak rates came from; empty when the GPU model is unknown"),
      maybe<&D::memory_bytes>("memory_bytes", "bytes", "the GPU's memory; null: the trace does not say"),
      maybe<&D::peak_allocated_bytes>("peak_allocated_bytes", "bytes",
                                      "most bytes in live allocations at once; null: the trace does not say"),
      maybe<&D::peak_reserved_bytes>("peak_reserved_bytes", "bytes",
                                     "most bytes the allocator held from the GPU; null: the trace does not say"),
      field<&D::hw>("hw", "", "what its hardware measured (docs/metrics.md, \"Hardware metrics\")"),
      optional<&D::occupancy>("occupancy", "", "theoretical occupancy and GPU fill of its kernels"),
  };
};

// [SECTION] Categories and hotspots -----------------------------------------------------------

template <>
struct Record<CategoryTime> {
  using C = CategoryTime;
  static constexpr std::string_view name = "category";
  static constexpr std::string_view meaning = "Kernel time of one kernel category (docs/metrics.md).";
  static constexpr Field<C> fields[] = {
      field<&C::category>("name", "", "the category"),
      field<&C::time_ns>("time_ns", "ns", "Σ durations of its kernels"),
      field<&C::share>("share", "fraction", "time_ns / the top level's kernel_time_ns"),
      field<&C::count>("count", "", "its kernels"),
      field<&C::stats>("stats", "", "of its kernels' durations (`total_ns` = time_ns)"),
  };
};

template <>
struct Record<Hotspot> {
  using H = Hotspot;
  static constexpr std::string_view name = "hotspot";
  static constexpr std::string_view meaning = "The kernels of one name.";
  static constexpr Field<H> fields[] = {
      field<&H::name>("name", "", "demangled kernel name"),
      field<&H::category>("category", "", "its kernel category"),
      field<&H::share>("share", "fraction", "stats.total_ns / the top level's kernel_time_ns"),
      gpu<&H::device>("device", "the GPU; null: aggregated over all GPUs"),
      field<&H::tensor_cores>("tensor_cores", "", "the name marks a tensor-core kernel (hmma, 16816, wgmma, …)"),
      optional<&H::category_rule>("category_rule", "",
                                  "what placed it in its category: \"name: <pattern>\", \"template arguments: …\", "
                                  "\"launching op: …\""),
      field<&H::stats>("stats", "", "of the kernels' durations"),
  };
};

// [SECTION] Framework ops -------------------------------------------------------------------------

template <>
struct Record<OpKernel> {
  using K = OpKernel;
  static constexpr std::string_view name = "op_kernel";
  static constexpr std::string_view meaning = "The kernels of one name under an op.";
  static constexpr Field<K> fields[] = {
      field<&K::name>("name", "", "demangled kernel name"),
      field<&K::category>("category", "", "its kernel category"),
      field<&K::count>("count", "", "kernels"),
      field<&K::time_ns>("time_ns", "ns", "Σ their durations"),
      field<&K::blocks>("blocks", "",
                        "blocks in the grid of its first launch under the op; 0 when the trace does not say"),
  };
};

template <>
struct Record<OpRow> {
  using O = OpRow;
  static constexpr std::string_view name = "op";
  static constexpr std::string_view meaning =
      "The calls of one framework op, per name or per name × input shapes and types (docs/ops.md).";
  static constexpr Field<O> fields[] = {
      field<&O::name>("name", "", "op name (`aten::addmm`, an NVTX range); `(no op)`: GPU work launched outside ops"),
      field<&O::shapes>("shapes", "", "recorded input shapes, JSON text; empty: not recorded, or the per-name row"),
      field<&O::dtypes>("dtype", "", "recorded input types, JSON text; empty: not recorded"),
      field<&O::path>("path", "", "the ops around its first call, outermost first, ` > ` between"),
      field<&O::calls>("calls", "", "calls (a call inside a call of the same op is part of it: see nested_calls)"),
      field<&O::cpu_self_ns>("cpu_self_ns", "ns", "Σ call durations minus the ops inside them"),
      field<&O::cpu_total_ns>("cpu_total_ns", "ns", "Σ call durations"),
      field<&O::gpu_self_ns>("gpu_self_ns", "ns", "Σ durations of the GPU ops it launched itself"),
      field<&O::gpu_total_ns>("gpu_total_ns", "ns", "… with those of the ops inside it"),
      field<&O::kernels>("kernels", "", "GPU ops (kernels, copies, fills) it launched itself"),
      field<&O::kernels_total>("kernels_total", "", "… with those of the ops inside it"),
      field<&O::launch_ns>("launch_ns", "ns", "Σ durations of its own launch calls"),
      optional<&O::copy_call_ns>("copy_call_ns", "ns",
                                 "… of which calls that launched copies or fills (they may wait for the GPU: not "
                                 "launch overhead)"),
      optional<&O::starved_ns>("starved_ns", "ns",
                               "GPU idle that its own late launches ended: the GPU waited for this op's launch"),
      optional<&O::starved_total_ns>("starved_total_ns", "ns", "… with the ops inside it"),
      field<&O::family>("family", "", "cost formula used (gemm, convolution, attention, …); empty: none"),
      field<&O::flops>("flops", "FLOP", "Σ over calls, from the shapes; null when unknown"),
      field<&O::bytes>("bytes", "B", "Σ bytes read and written, from the shapes and types; null when unknown"),
      field<&O::achieved_tflops>("achieved_tflops", "TFLOP/s", "flops / gpu_total_ns; null when unknown"),
      field<&O::achieved_tbps>("achieved_tbps", "TB/s", "bytes / gpu_total_ns; null when unknown"),
      field<&O::intensity>("intensity", "FLOP/B", "flops / bytes; null when unknown"),
      field<&O::roofline_fraction>("roofline_fraction", "fraction",
                                   "achieved / min(peak FLOP/s, intensity × bandwidth) (memory-bound ops "
                                   "without FLOPs: achieved_tbps / bandwidth; a job's rows: the ranks' fractions "
                                   "weighted by their GPU time); null when unknown"),
      field<&O::bound>("bound", "", "`compute` or `memory` by the roofline; empty when unknown"),
      field<&O::math>("math", "", "the precision whose peak the roofline used (fp32, bf16, …)"),
      field<&O::dims>("dims", "", "the formula's dimensions (`M=… N=… K=… batch=…`)"),
      field<&O::aligned8>("aligned8", "", "GEMMs: M, N and K all multiples of 8"),
      field<&O::top_kernels>("top_kernels", "", "its kernels, most time first (the heaviest rows only)"),
      field<&O::gpu_calls>("gpu_calls", "",
                           "calls that launched GPU work, themselves or through the ops inside them (the calls "
                           "that hold GPU time): per-call figures are per such call"),
      field<&O::nested_calls>("nested_calls", "",
                              "calls made inside a call of the same op (an op calling itself under its name): "
                              "counted in the outer call, their time once"),
  };
};

template <>
struct Record<OpSummary> {
  using S = OpSummary;
  static constexpr std::string_view name = "op_summary";
  static constexpr std::string_view meaning = "How many GPU ops have a launching op, and what the shapes allow.";
  static constexpr Field<S> fields[] = {
      field<&S::op_calls>("op_calls", "", "op ranges (calls)"),
      field<&S::gpu_ops>("gpu_ops", "", "kernels, copies and fills"),
      field<&S::attributed>("attributed", "", "… with a launching op"),
      field<&S::unattributed>("unattributed", "", "… without one (the `(no op)` row)"),
      field<&S::unattributed_ns>("unattributed_ns", "ns", "Σ their durations"),
      field<&S::no_correlation>("no_correlation", "", "… of which carry no correlation id"),
      field<&S::unmatched_correlation>("unmatched_correlation", "",
                                       "… of which name a correlation id that no launch call has"),
      field<&S::with_shapes>("with_shapes", "", "op calls with recorded input shapes"),
      field<&S::malformed_shapes>("malformed_shapes", "", "… whose shapes could not be read (no cost given)"),
      field<&S::overlapping>("overlapping", "", "op ranges overlapping another without nesting"),
      field<&S::shapes_recorded>("shapes_recorded", "",
                                 "any op had input shapes; false: record with record_shapes=True for FLOPs"),
  };
};

template <>
struct Record<ModuleTime> {
  using M = ModuleTime;
  static constexpr std::string_view name = "module_time";
  static constexpr std::string_view meaning = "One nn.Module's GPU time, forward and backward.";
  static constexpr Field<M> fields[] = {
      field<&M::name>("name", "",
                      "the module (`model.layer1.0.conv1`: the range's name without `nn.Module: `); `(no module)`: "
                      "launched outside every module range"),
      field<&M::forward_gpu_ns>("forward_gpu_ns", "ns",
                                "Σ GPU ops launched inside its calls (innermost module) outside backward ops"),
      field<&M::backward_gpu_ns>("backward_gpu_ns", "ns",
                                 "Σ GPU ops launched by the backward ops linked to its forward ops"),
      field<&M::backward_ops>("backward_ops", "", "backward ops linked to its forward ops"),
  };
};

template <>
struct Record<ModuleSplit> {
  using S = ModuleSplit;
  static constexpr std::string_view name = "module_split";
  static constexpr std::string_view meaning =
      "Forward and backward GPU time per nn.Module: each backward op linked to its forward op by PyTorch's "
      "sequence number (docs/ops.md).";
  static constexpr Field<S> fields[] = {
      field<&S::known>("known", "",
                       "the trace has sequence numbers; false: the split is unknown (never guessed from names) and "
                       "the rest is 0"),
      field<&S::backward_ops>("backward_ops", "", "outermost backward ops (ops naming a forward thread)"),
      field<&S::linked>("linked", "", "… linked to a forward op"),
      field<&S::unlinked>("unlinked", "",
                          "… not: no forward op of their number in the process, or such ops on several threads"),
      field<&S::backward_gpu_ns>("backward_gpu_ns", "ns", "Σ GPU ops launched inside backward ops"),
      field<&S::unlinked_gpu_ns>("unlinked_gpu_ns", "ns", "… inside unlinked ones"),
      field<&S::modules>("modules", "", "per module, most forward + backward GPU time first"),
  };
};

template <>
struct Record<WorkloadKind> {
  using W = WorkloadKind;
  static constexpr std::string_view name = "workload";
  static constexpr std::string_view meaning =
      "What the analysis recognised the traced program to be, with the evidence; the findings' advice fits it.";
  static constexpr Field<W> fields[] = {
      field<&W::phase>("phase", "", "`training`, `inference` or `unknown` (too little to tell)"),
      field<&W::phase_evidence>("phase_evidence", "", "the ops and kernels that told"),
      field<&W::execution>("execution", "", "`eager`, `compiled` (Triton, torch.compile) or `cuda graphs` (replays)"),
      field<&W::execution_evidence>("execution_evidence", "", "graph ids, graph launches, Triton kernels, regions"),
      field<&W::graph_kernels>("graph_kernels", "", "kernels replayed from CUDA graphs"),
      field<&W::ranks>("ranks", "", "processes of the job (world size, or the job's files)"),
      field<&W::bundled>("bundled", "",
                         "a trace of gpuscope's bundled workload (resnet-train): only then do fixes name its switches"),
      optional<&W::framework>("framework", "",
                              "`pytorch`, `tensorflow`, `jax` or `unknown`: the framework the fixes are worded for"),
      optional<&W::framework_evidence>("framework_evidence", "", "the ops and kernels that told"),
      optional<&W::data_parallel>("data_parallel", "",
                                  "`ddp` when gradients are all-reduced in buckets during the backward pass; empty "
                                  "otherwise"),
      optional<&W::data_parallel_evidence>("data_parallel_evidence", "", "the ops that told"),
      optional<&W::graph_launches>("graph_launches", "", "cudaGraphLaunch / cuGraphLaunch calls"),
      optional<&W::data_loading_recorded>("data_loading_recorded", "",
                                          "the trace has data-loading ranges, so input wait can be measured"),
      field<&W::run>(
          "run", "",
          "`no-kernels` (nothing on the GPU to diagnose), `tiny-span` (GPU ops spanning under 100 µs and 1 % "
          "of the recording: no finding is numbered), `one-shot` (a whole program whose setup and teardown take at "
          "least a third of the recording: findings about them are minor); empty: none of these"),
      field<&W::run_evidence>("run_evidence", "", "what shows it, with the numbers, and what to profile instead"),
      field<&W::kernel_window>("kernel_window", "",
                               "the first kernel's start to the last one's end, in the trace's clock (empty in a job)"),
      field<&W::setup_ns>("setup_ns", "ns", "recorded time before the first kernel"),
      field<&W::teardown_ns>("teardown_ns", "ns", "recorded time after the last kernel"),
  };
};

// [SECTION] Steps -------------------------------------------------------------------------------

inline TimeNs step_duration(const Step& s) { return s.range.duration(); }
inline std::size_t step_count(const StepSummary& s) { return s.steps.size(); }

template <>
struct Record<StepHw> {
  using H = StepHw;
  static constexpr std::string_view name = "step_hw";
  static constexpr std::string_view meaning =
      "What the GPU's hardware measured during the step: the means of the samples inside it (null: no samples).";
  static constexpr Field<H> fields[] = {
      field<&H::sm_active>("sm_active", "fraction", "SM cycles with a warp resident (hw.sm_active)"),
      field<&H::sm_occupancy>("sm_occupancy", "fraction", "warps resident against the most (hw.sm_occupancy)"),
      field<&H::tensor_active>("tensor_active", "fraction", "tensor pipes busy (hw.tensor_active)"),
      field<&H::dram_bytes_per_s>("dram_bytes_per_s", "B/s", "DRAM read + write (hw.dram_read, hw.dram_write)"),
      field<&H::sm_clock_mhz>("sm_clock_mhz", "MHz", "SM clock (nvml.sm_clock)"),
      field<&H::power_w>("power_w", "W", "power draw (nvml.power)"),
      field<&H::temperature_c>("temperature_c", "°C", "GPU temperature (nvml.temperature)"),
      field<&H::throttled>("throttled", "",
                           "a thermal or power throttle reason in one of its nvml.throttle_reasons samples"),
  };
};

template <>
struct Record<Step> {
  using S = Step;
  static constexpr std::string_view name = "step";
  static constexpr std::string_view meaning =
      "One training step on one GPU; compute_ns, communication_ns, memcpy_ns and idle_ns add up to duration_ns.";
  static constexpr Field<S> fields[] = {
      field<&S::index>("index", "", "step number"),
      field<&S::name>("name", "", "\"ProfilerStep#12\", NVTX \"step 3\", or \"step 3\" (found from the pattern)"),
      gpu<&S::device>("device", "the GPU it ran on; null: not known"),
      field<&S::rank>("rank", "", "distributed rank; -1: unknown"),
      inlined<&S::range>(),
      derived<&step_duration>("duration_ns", "ns", "end_ns − start_ns"),
      field<&S::compute_ns>("compute_ns", "ns", "non-communication kernels running"),
      field<&S::communication_ns>("communication_ns", "ns", "else communication kernels running"),
      field<&S::memcpy_ns>("memcpy_ns", "ns", "else copies or fills running"),
      field<&S::idle_ns>("idle_ns", "ns", "else idle"),
      field<&S::input_wait_ns>("input_wait_ns", "ns", "part of idle_ns while the host loaded input"),
      field<&S::host_wait_ns>("host_wait_ns", "ns", "part of the rest of idle_ns ended by a host wait"),
      field<&S::host_tail_ns>("host_tail_ns", "ns",
                              "CPU time in the step after the last GPU op it launched ended (apart from the GPU "
                              "breakdown; 0 for pattern steps)"),
      maybe<&S::peak_allocated_bytes>("peak_allocated_bytes", "bytes",
                                      "most bytes in live allocations on its GPU during the step; null: not known"),
      maybe<&S::min_allocated_bytes>("min_allocated_bytes", "bytes",
                                     "the least during the step (what stays allocated across steps); null: not known"),
      field<&S::hw>("hw", "", "what the GPU's hardware measured during it"),
  };
};

template <>
struct Record<HostRange> {
  static constexpr std::string_view name = "host_range";
  static constexpr std::string_view meaning = "Host ranges of one name (framework ops, Python functions, annotations).";
  static constexpr Field<HostRange> fields[] = {
      field<&HostRange::name>("name", "", "the range's name"),
      field<&HostRange::ns>("ns", "ns", "Σ of their durations"),
      field<&HostRange::count>("count", "", "ranges of that name"),
  };
};

template <>
struct Record<StepSummary> {
  using S = StepSummary;
  static constexpr std::string_view name = "step_summary";
  static constexpr std::string_view meaning = "The steps together; the times are sums over all steps.";
  static constexpr Field<S> fields[] = {
      field<&S::source>("source", "",
                        "where the steps came from: ranges (`profiler_step`, `nvtx`), the repeating kernel pattern "
                        "(`pattern`), bursts of GPU work between host gaps (`bursts`); `none`"),
      derived<&step_count>("count", "", "steps (all of them, also when `--steps` lists fewer)"),
      field<&S::step_time>("step_time", "", "of the step durations"),
      field<&S::total_ns>("total_ns", "ns", "Σ step durations"),
      field<&S::compute_ns>("compute_ns", "ns", "Σ compute_ns"),
      field<&S::communication_ns>("communication_ns", "ns", "Σ communication_ns"),
      field<&S::memcpy_ns>("memcpy_ns", "ns", "Σ memcpy_ns"),
      field<&S::idle_ns>("idle_ns", "ns", "Σ idle_ns"),
      field<&S::input_wait_ns>("input_wait_ns", "ns", "Σ input_wait_ns"),
      field<&S::host_tail_ns>("host_tail_ns", "ns", "Σ host_tail_ns"),
      field<&S::not_steps>("not_steps", "",
                           "why a repeating kernel pattern was not taken for steps (it repeats inside one call: "
                           "a model's layers); empty otherwise"),
      field<&S::outside_gpu_ns>("outside_gpu_ns", "ns",
                                "step time before its GPU's first op or after its last (host time the GPU's span "
                                "does not see)"),
      field<&S::before_gpu_ns>("before_gpu_ns", "ns", "the part of outside_gpu_ns before the GPU's first op"),
      field<&S::outside_ranges>("outside_ranges", "",
                                "the longest host ranges wholly inside that time, most first (up to 5 names)"),
      field<&S::source_evidence>("source_evidence", "",
                                 "how steps found on the GPU were found: the kernel that begins each iteration and "
                                 "its period (`pattern`), or the bursts and the host gaps between them (`bursts`); "
                                 "empty for steps from ranges"),
  };
};

// [SECTION] Idle time, launches, ranks ----------------------------------------------------

template <>
struct Record<IdleByCause> {
  using I = IdleByCause;
  static constexpr std::string_view name = "idle";
  static constexpr std::string_view meaning =
      "Idle gaps between consecutive ops of one stream, by cause (HTA's rules, docs/metrics.md).";
  static constexpr Field<I> fields[] = {
      field<&I::rank>("rank", "", "distributed rank; -1: unknown"),
      field<&I::device>("device", "", "CUDA ordinal"),
      field<&I::stream>("stream", "", "stream id"),
      field<&I::host_wait_ns>("host_wait_ns", "ns", "the next op's launch call started after the previous op ended"),
      field<&I::kernel_wait_ns>("kernel_wait_ns", "ns", "else gaps shorter than the consecutive-kernel delay"),
      field<&I::other_ns>("other_ns", "ns", "the rest"),
  };
};

template <>
struct Record<LaunchStats> {
  using L = LaunchStats;
  static constexpr std::string_view name = "launches";
  static constexpr std::string_view meaning = "API calls that launched GPU ops, and the ops they launched.";
  static constexpr Field<L> fields[] = {
      field<&L::launches>("launches", "", "API calls linked to a GPU op"),
      field<&L::cpu_launch>("cpu_launch", "", "of the launching calls' durations"),
      field<&L::gpu_duration>("gpu_duration", "", "of the launched ops' durations"),
      field<&L::launch_delay>("launch_delay", "", "of op start − launching call end (may be negative)"),
      field<&L::short_kernels>("short_kernels", "", "ops shorter on the GPU than their launch call on the CPU"),
      field<&L::short_kernel_share>("short_kernel_share", "fraction", "short_kernels / launches"),
      field<&L::max_queue_depth>("max_queue_depth", "", "most ops launched and not yet started, on any stream"),
      field<&L::runtime_outliers>("runtime_outliers", "", "launching calls longer than 50 µs (HTA's outlier rule)"),
      field<&L::launch_delay_outliers>("launch_delay_outliers", "",
                                       "launch delays longer than 100 µs (HTA's outlier rule)"),
      optional<&L::late_launch_idle_ns>("late_launch_idle_ns", "ns",
                                        "GPU idle in gaps under the idle-gap threshold that an op launched after the "
                                        "gap began ended (the GPU waited for a launch), Σ GPUs"),
  };
};

template <>
struct Record<CollectiveSite> {
  using C = CollectiveSite;
  static constexpr std::string_view name = "collective_site";
  static constexpr std::string_view meaning =
      "One collective call site: the collectives of one kind and size at one place in their steps, on one GPU, "
      "compared across steps (docs/metrics.md, \"Collective sites\").";
  static constexpr Field<C> fields[] = {
      field<&C::rank>("rank", "", "distributed rank; -1: unknown, or pooled over several"),
      gpu<&C::device>("device", "the GPU; null: pooled over several (`collective_summary.widest`)"),
      field<&C::kind>("kind", "",
                      "all_reduce, all_gather, reduce_scatter, broadcast, reduce, send_recv, all_to_all or "
                      "collective: the framework's annotation's, else the kernel name's"),
      field<&C::named_by>("named_by", "",
                          "the annotation that named the kind (\"nccl:all_reduce\"), or \"kernel name\""),
      field<&C::bytes>("bytes", "bytes", "message bytes; 0: the trace does not say"),
      field<&C::ordinal>("ordinal", "",
                         "its place among its step's collectives of its kind and size; -1: outside steps"),
      field<&C::kernel>("kernel", "", "the kernel of its first instance"),
      field<&C::durations>("durations", "", "of its instances (one per step it ran in)"),
      field<&C::wait_ns>("wait_ns", "ns", "Σ (instance − fastest instance): time beyond the transfer"),
      field<&C::exposed_ns>("exposed_ns", "ns", "Σ of its instances' time with no compute kernel alongside"),
  };
};

template <>
struct Record<CollectiveKind> {
  using K = CollectiveKind;
  static constexpr std::string_view name = "collective_kind";
  static constexpr std::string_view meaning = "The collective sites of one kind, pooled across GPUs and ranks.";
  static constexpr Field<K> fields[] = {
      field<&K::kind>("kind", "", "as a site's `kind`"),
      field<&K::sites>("sites", "", "pooled sites (kind, size, place in the step) of this kind"),
      field<&K::time_ns>("time_ns", "ns", "Σ their instances' durations"),
      field<&K::exposed_ns>("exposed_ns", "ns", "Σ their time with no compute kernel alongside"),
      field<&K::repeated_ns>(
          "repeated_ns", "ns",
          "Σ durations of the sites seen more than once (steps or ranks), with a place in the step or a "
          "known size"),
      field<&K::wait_ns>("wait_ns", "ns", "… of which beyond each site's fastest instance: waiting"),
  };
};

template <>
struct Record<CollectiveSummary> {
  using S = CollectiveSummary;
  static constexpr std::string_view name = "collective_summary";
  static constexpr std::string_view meaning =
      "The collective sites together: the same site of every GPU and rank pooled, its fastest instance anywhere "
      "taken as the transfer.";
  static constexpr Field<S> fields[] = {
      field<&S::kinds>("kinds", "", "by kind, most exposed time first"),
      field<&S::sites>("sites", "", "pooled sites"),
      field<&S::repeated_sites>("repeated_sites", "",
                                "… seen more than once, with a place in the step or a known size"),
      field<&S::time_ns>("time_ns", "ns", "Σ over kinds"),
      field<&S::exposed_ns>("exposed_ns", "ns", "Σ over kinds"),
      field<&S::repeated_ns>("repeated_ns", "ns", "Σ over kinds"),
      field<&S::wait_ns>("wait_ns", "ns", "Σ over kinds"),
      optional<&S::widest>(
          "widest", "",
          "the pooled site with the most wait (rank -1 and device null when pooled over several; "
          "its median then that of the one with the most instances); `durations.count` 0 when no site repeats"),
      field<&S::renamed_sites>("renamed_sites", "",
                               "sites whose annotation names another kind than their kernel's name"),
  };
};

template <>
struct Record<TemporalBreakdown> {
  using B = TemporalBreakdown;
  static constexpr std::string_view name = "temporal";
  static constexpr std::string_view meaning =
      "HTA's temporal breakdown of one rank (of one rank and GPU when a trace holds several GPUs), computed as HTA "
      "does.";
  static constexpr Field<B> fields[] = {
      field<&B::rank>("rank", "", "distributed rank"),
      gpu<&B::device>("device", "the GPU; null: all GPUs of the rank"),
      field<&B::span_ns>("span_ns", "ns", "HTA's span"),
      field<&B::idle_ns>("idle_ns", "ns", "HTA's idle time"),
      field<&B::compute_ns>("compute_ns", "ns", "HTA's compute time"),
      field<&B::non_compute_ns>("non_compute_ns", "ns", "HTA's non-compute time"),
      field<&B::idle_share>("idle_share", "fraction", "idle_ns / span_ns"),
      field<&B::compute_share>("compute_share", "fraction", "compute_ns / span_ns"),
      field<&B::non_compute_share>("non_compute_share", "fraction", "non_compute_ns / span_ns"),
      optional<&B::non_compute_note>("non_compute_note", "",
                                     "when HTA's own non-compute figure is negative (its µs rounding), what it was: "
                                     "the two numbers above are then 0; empty otherwise"),
  };
};

template <>
struct Record<RankSummary> {
  using R = RankSummary;
  static constexpr std::string_view name = "rank";
  static constexpr std::string_view meaning = "One rank (one file) of a job, per GPU when a process drove several.";
  static constexpr Field<R> fields[] = {
      field<&R::rank>("rank", "", "distributed rank"),
      gpu<&R::device>("device", "the GPU; null: all GPUs of the rank"),
      field<&R::source_file>("source_file", "", "the trace file"),
      field<&R::clock_offset_ns>("clock_offset_ns", "ns", "added to this rank's times to align it with rank 0"),
      field<&R::step_time_mean>("step_time_mean_ns", "ns", "mean step time"),
      field<&R::communication_ns>("communication_ns", "ns", "|union of communication kernels|"),
      field<&R::utilization>("utilization", "fraction", "busy / span"),
      field<&R::compute_ns>("compute_ns", "ns", "|union of non-communication kernels|"),
      field<&R::exposed_communication_ns>("exposed_communication_ns", "ns", "communication nothing hides"),
      field<&R::compute_per_step_ns>("compute_per_step_ns", "ns", "compute_ns / steps; 0 without steps"),
      optional<&R::clock_residual_ns>("clock_residual_ns", "ns",
                                      "median distance of one collective's shift from `clock_offset_ns`"),
      optional<&R::waited_ns>("waited_ns", "ns", "Σ over the matched collectives of (last arrival − its arrival)"),
      optional<&R::wait_caused_ns>("wait_caused_ns", "ns",
                                   "Σ of the others' wait at the collectives it arrived at last"),
      optional<&R::last_arrivals>("last_arrivals", "", "matched collectives it arrived at last"),
  };
};

template <>
struct Record<CollectiveInstance> {
  using C = CollectiveInstance;
  static constexpr std::string_view name = "collective";
  static constexpr std::string_view meaning =
      "One collective instance of a job, matched across ranks by call site or in order (docs/scale.md); job clock.";
  static constexpr Field<C> fields[] = {
      field<&C::index>("index", "", "its place in the reference rank's sequence of collectives"),
      field<&C::kind>("kind", "",
                      "all_reduce, all_gather, reduce_scatter, broadcast, reduce, send_recv, "
                      "all_to_all or collective (the framework's annotation's, else the kernel name's)"),
      field<&C::step>("step", "", "the reference rank's step it lies in; -1: none"),
      field<&C::range>("range", "", "first arrival .. last end over the ranks"),
      field<&C::last_arrival_ns>("last_arrival_ns", "ns", "when the last rank started its part"),
      field<&C::last_rank>("last_rank", "", "the last rank to arrive"),
      field<&C::wait_ns>("wait_ns", "ns", "Σ over the other ranks of (last arrival − their arrival)"),
      field<&C::bytes>("bytes", "bytes", "0: the traces do not say"),
  };
};

template <>
struct Record<Straggler> {
  using S = Straggler;
  static constexpr std::string_view name = "straggler";
  static constexpr std::string_view meaning = "A rank of a job by the wait it caused at the matched collectives.";
  static constexpr Field<S> fields[] = {
      field<&S::rank>("rank", "", "the rank"),
      field<&S::source_file>("source_file", "", "its trace file"),
      field<&S::wait_caused_ns>("wait_caused_ns", "ns", "Σ of the others' wait at the collectives it arrived at last"),
      field<&S::last_arrivals>("last_arrivals", "", "collectives it arrived at last"),
      field<&S::critical_steps>("critical_steps", "", "steps in which it caused the most wait"),
      field<&S::waited_ns>("waited_ns", "ns", "its own wait for the others"),
  };
};

template <>
struct Record<JobStep> {
  using J = JobStep;
  static constexpr std::string_view name = "job_step";
  static constexpr std::string_view meaning = "A step of a job (the reference rank's steps) and its critical rank.";
  static constexpr Field<J> fields[] = {
      field<&J::index>("index", "", "the step's index"),
      field<&J::critical_rank>("critical_rank", "", "the rank that caused the most wait in it; -1: no wait"),
      field<&J::wait_ns>("wait_ns", "ns", "the others' wait in its collectives"),
  };
};

template <>
struct Record<LeftOut> {
  using L = LeftOut;
  static constexpr std::string_view name = "left_out";
  static constexpr std::string_view meaning = "A file of a job that was not analysed, or ranks no file gives.";
  static constexpr Field<L> fields[] = {
      field<&L::file>("file", "", "the file; empty: ranks of the job with no file"),
      field<&L::problem>("problem", "", "what is wrong"),
  };
};

template <>
struct Record<Skew> {
  using K = Skew;
  static constexpr std::string_view name = "skew";
  static constexpr std::string_view meaning =
      "How far GPUs or ranks are from each other; spreads are (max − min) / mean over GPUs with work, 0 = "
      "identical.";
  static constexpr Field<K> fields[] = {
      field<&K::participants>("participants", "", "GPUs (or ranks) compared"),
      field<&K::busy_spread>("busy_spread", "ratio", "of busy time"),
      field<&K::compute_spread>("compute_spread", "ratio", "of compute time"),
      field<&K::step_time_spread>("step_time_spread", "ratio", "of mean step time"),
      field<&K::slowest_rank>("slowest_rank", "", "the rank with the most compute (the others wait for it); -1: none"),
      gpu<&K::slowest_device>("slowest_device", "its GPU; null: none"),
  };
};

// [SECTION] Synchronization and copies --------------------------------------------------------

template <>
struct Record<SyncStats> {
  using Y = SyncStats;
  static constexpr std::string_view name = "syncs";
  static constexpr std::string_view meaning = "Host-side synchronizations (device, stream and event syncs).";
  static constexpr Field<Y> fields[] = {
      field<&Y::count>("count", "", "synchronizations"),
      field<&Y::total_ns>("total_ns", "ns", "time hosts spent blocked in them"),
      field<&Y::device_syncs>("device_syncs", "", "device synchronizations"),
      field<&Y::stream_syncs>("stream_syncs", "", "stream synchronizations"),
      field<&Y::event_syncs>("event_syncs", "", "event synchronizations"),
      field<&Y::gpu_idle_after_ns>("gpu_idle_after_ns", "ns",
                                   "GPU idle from a sync's (or blocking copy's) end to its GPU's next op, when the "
                                   "queue had drained"),
      optional<&Y::copies>("copies", "",
                           "copies that block the host (`memcpys.synchronous`), charged as synchronizations"),
      optional<&Y::copy_ns>("copy_ns", "ns", "time hosts spent blocked in their calls"),
      optional<&Y::gpu_idle_after_copies_ns>("gpu_idle_after_copies_ns", "ns",
                                             "the part of `gpu_idle_after_ns` that follows them"),
  };
};

template <>
struct Record<CopyGroup> {
  using G = CopyGroup;
  static constexpr std::string_view name = "copy_group";
  static constexpr std::string_view meaning = "The copies of one direction, stream kind and host memory.";
  static constexpr Field<G> fields[] = {
      field<&G::direction>("direction", "", "`HtoD`, `DtoH`, `DtoD`, `peer` or `other`"),
      field<&G::own_stream>("own_stream", "",
                            "true: on a stream that runs no kernels (a copy stream); false: on a compute stream"),
      field<&G::memory>("memory", "", "the host side: `pinned`, `pageable`; `device` for copies with none; `unknown`"),
      field<&G::count>("count", "", "copies"),
      field<&G::bytes>("bytes", "bytes", "bytes copied"),
      field<&G::time_ns>("time_ns", "ns", "Σ copy durations"),
      field<&G::blocking>("blocking", "", "of them, copies that block the host"),
  };
};

template <>
struct Record<MemcpyStats> {
  using M = MemcpyStats;
  static constexpr std::string_view name = "memcpys";
  static constexpr std::string_view meaning = "Copies and fills done by the copy engines.";
  static constexpr Field<M> fields[] = {
      field<&M::count>("count", "", "copies"),
      field<&M::bytes>("bytes", "bytes", "bytes copied"),
      field<&M::time_ns>("time_ns", "ns", "Σ copy durations"),
      field<&M::htod>("htod", "", "host-to-device copies"),
      field<&M::dtoh>("dtoh", "", "device-to-host copies"),
      field<&M::dtod>("dtod", "", "device-to-device copies"),
      field<&M::other>("other", "", "other copies (peer, array, unknown)"),
      field<&M::pageable>("pageable", "", "copies with a pageable host side"),
      field<&M::pageable_ns>("pageable_ns", "ns", "their time"),
      field<&M::pageable_bytes>("pageable_bytes", "bytes", "their bytes"),
      field<&M::synchronous>("synchronous", "",
                             "copies that block the host: launched by a blocking call (cudaMemcpy, not …Async), "
                             "with a pageable host side, or the device-to-host copy of .item(); host-to-device "
                             "copies ≤ 64 KB exempt"),
      field<&M::synchronous_ns>("synchronous_ns", "ns", "duration of their launching calls"),
      field<&M::memsets>("memsets", "", "fills"),
      field<&M::memset_ns>("memset_ns", "ns", "Σ fill durations"),
      optional<&M::groups>("groups", "", "copies by direction × stream × host memory, most time first"),
  };
};

// [SECTION] Findings --------------------------------------------------------------------------

template <>
struct Record<Finding> {
  using F = Finding;
  static constexpr std::string_view name = "finding";
  static constexpr std::string_view meaning = "What a rule of docs/findings.md found.";
  static constexpr Field<F> fields[] = {
      field<&F::id>("id", "", "the rule id (docs/findings.md)"),
      field<&F::severity>("severity", "", "how much it matters"),
      field<&F::title>("title", "", "one line with the numbers"),
      field<&F::evidence>("evidence", "", "which kernels, the metric against its threshold, in words"),
      field<&F::recommendation>("recommendation", "", "what to change"),
      field<&F::saving_ns>("saving_ns", "ns", "estimated wall-clock time a fix would save over the trace"),
      field<&F::metric>("metric", "", "the value the rule tested …"),
      field<&F::threshold>("threshold", "", "… and the threshold it crossed"),
      gpu<&F::device>("device", "the GPU it is about; null: all GPUs"),
      field<&F::ranges>("ranges", "", "where to look (the viewer zooms there), longest first"),
      field<&F::kernels>("kernels", "", "kernels involved, most expensive first"),
      optional<&F::saving_source>("saving_source", "",
                                  "how `saving_ns` was estimated: by replaying the dependency graph with the fix "
                                  "applied (docs/whatif.md), or by the rule's rule of thumb (docs/findings.md)"),
      optional<&F::fix>("fix", "", "the fix as `gpuscope whatif` changes; empty where the graph cannot express it"),
      optional<&F::predicted_step_ns>("predicted_step_ns", "ns",
                                      "median step after the fix, simulated; 0 when not simulated"),
      optional<&F::saving_note>("saving_note", "",
                                "why the saving is not the plain estimate: the fix's changed graph has a dependency "
                                "cycle (not simulated, the rule of thumb stays), or the simulated fix saves nothing "
                                "(`saving_ns` 0); empty otherwise"),
      optional<&F::variant>("variant", "",
                            "which case of its rule fired (docs/findings.md lists each rule's cases); empty when the "
                            "rule has one"),
      optional<&F::share>("share", "",
                          "its time as a share of the run (of kernel time for rules that measure kernel time) where "
                          "the rule measures one; with `saving_ns`, what decides whether it is numbered (≥ 1 %)"),
  };
};

template <>
struct Record<HelpAnswer> {
  using H = HelpAnswer;
  static constexpr std::string_view name = "help";
  static constexpr std::string_view meaning =
      "One of the changes users ask about (\"What would help?\"), answered from the trace.";
  static constexpr Field<H> fields[] = {
      field<&H::id>("id", "", "the question's stable id (docs/findings.md, \"What would help?\")"),
      field<&H::question>("question", "", "the question, as the report asks it"),
      field<&H::verdict>("verdict", "", "the answer; `unknown` where the trace cannot tell"),
      field<&H::reason>("reason", "", "what in the trace decides it, with the numbers"),
      field<&H::findings>("findings", "", "ids of the numbered findings behind the answer"),
      optional<&H::fix>("fix", "", "the `gpuscope whatif` change the replay simulated for it; empty: none"),
      optional<&H::predicted_step_ns>("predicted_step_ns", "ns",
                                      "median step with that fix, simulated, when shorter than now; 0: none"),
  };
};

template <>
struct Record<IdleCharge> {
  using C = IdleCharge;
  static constexpr std::string_view name = "idle_charge";
  static constexpr std::string_view meaning =
      "One part of the GPUs' idle time by what it waited for, and the one finding that charges it.";
  static constexpr Field<C> fields[] = {
      field<&C::cause>("cause", "",
                       "`input-wait`, `host-sync`, `blocking-copy`, `late-launch` (gaps under the idle-gap threshold), "
                       "`late-launch-gap`, `queued-gap`, `warm-up` (gaps at or over it), `other`; and "
                       "`input-before-start` (input loading before a GPU's first op: not in its idle time)"),
      field<&C::ns>("ns", "ns", "its time, summed over the GPUs"),
      field<&C::finding>("finding", "", "the rule id of the finding (numbered or minor) that charges it; empty: none"),
      optional<&C::note>("note", "", "why no finding charges it, or how the finding does"),
  };
};

template <>
struct Record<HostFrame> {
  static constexpr std::string_view name = "host_frame";
  static constexpr std::string_view meaning = "A frame of the host's stacks and the samples it was innermost in.";
  static constexpr Field<HostFrame> fields[] = {
      field<&HostFrame::frame>("frame", "", "the frame as the sampler wrote it (`train.py(57): main`, a symbol)"),
      field<&HostFrame::samples>("samples", "", "samples with it as the innermost frame"),
  };
};

template <>
struct Record<HostWhere> {
  using W = HostWhere;
  static constexpr std::string_view name = "host_where";
  static constexpr std::string_view meaning =
      "Where the host was during one cause's idle time: the host samples of the threads the GPUs waited for (the "
      "thread whose launch ended the gap, else the one that launched most of the GPU's work).";
  static constexpr Field<W> fields[] = {
      field<&W::cause>("cause", "", "the `idle_charges` cause"),
      field<&W::samples>("samples", "", "host samples in that idle time on those threads"),
      field<&W::threads>("threads", "", "threads they were taken on"),
      field<&W::thread>("thread", "", "the thread with most of them"),
      field<&W::path>("path", "",
                      "the innermost frames (up to 3) of the path most samples share, outermost first: from the root "
                      "down while one frame holds more than half of the samples, or, where the stacks share no root, "
                      "from the innermost frame up; empty: no frame holds more than half"),
      field<&W::path_samples>("path_samples", "", "samples under the path's last frame"),
      field<&W::path_depth>("path_depth", "", "frames on the whole path (`path` keeps its innermost)"),
      field<&W::path_from_root>("path_from_root", "", "the path starts at the stacks' root (false: at their leaves)"),
      field<&W::leaves>("leaves", "", "the innermost frames with most samples (up to 3), most first"),
      field<&W::input_samples>("input_samples", "",
                               "samples with a frame of a data-loading library (torch/utils/data, tf.data) on their "
                               "stack"),
      field<&W::python_samples>("python_samples", "",
                                "samples with a Python frame (`file.py(line): function`) on their stack: only these "
                                "can show a Python data loader"),
      field<&W::note>("note", "", "what the samples cannot tell (too few, none on those threads); empty: nothing"),
  };
};

// [SECTION] Critical path and simulated fixes ------------------------------------------------

template <>
struct Record<PathCategory> {
  static constexpr std::string_view name = "path_category";
  static constexpr std::string_view meaning = "GPU time on the critical path of one kernel category.";
  static constexpr Field<PathCategory> fields[] = {
      field<&PathCategory::category>("category", "", "the category"),
      field<&PathCategory::ns>("ns", "ns", "its time on the paths"),
  };
};

template <>
struct Record<PathOp> {
  static constexpr std::string_view name = "path_op";
  static constexpr std::string_view meaning = "GPU ops of one name on the critical path.";
  static constexpr Field<PathOp> fields[] = {
      field<&PathOp::name>("name", "", "kernel name (\"Memcpy HtoD\", \"Memset\" for copies)"),
      field<&PathOp::category>("category", "", "its category"),
      field<&PathOp::ns>("ns", "ns", "their time on the paths"),
      field<&PathOp::count>("count", "", "ops of that name on the paths"),
  };
};

template <>
struct Record<CriticalPath> {
  using C = CriticalPath;
  static constexpr std::string_view name = "critical_path";
  static constexpr std::string_view meaning =
      "What decided the steps' length: their critical paths on the replayed dependency graph, summed over the "
      "steps simulated (`simulation.scope`), by kind and kernel category (docs/whatif.md). All zero when not "
      "simulated.";
  static constexpr Field<C> fields[] = {
      field<&C::steps>("steps", "", "steps whose paths are summed (0: one path over the whole trace)"),
      field<&C::length_ns>("length_ns", "ns", "Σ of the paths' lengths (= Σ of those steps' times)"),
      field<&C::gpu_compute_ns>("gpu_compute_ns", "ns", "kernels other than communication, with their gaps"),
      field<&C::communication_ns>("communication_ns", "ns", "communication kernels"),
      field<&C::copy_ns>("copy_ns", "ns", "memcpys and memsets"),
      field<&C::cpu_launch_ns>("cpu_launch_ns", "ns", "launch calls and the latency to their ops' start"),
      field<&C::cpu_other_ns>("cpu_other_ns", "ns", "CPU time between calls, other API calls"),
      field<&C::input_wait_ns>("input_wait_ns", "ns", "CPU time in data-loading ranges"),
      field<&C::sync_wait_ns>("sync_wait_ns", "ns",
                              "host synchronisations, from the op they waited for to their return"),
      field<&C::categories>("categories", "", "the GPU time by category, largest first"),
      field<&C::ops>("ops", "", "the ops with the most time on the paths, most first"),
  };
};

template <>
struct Record<Prediction> {
  static constexpr std::string_view name = "prediction";
  static constexpr std::string_view meaning = "A fix's predicted step time.";
  static constexpr Field<Prediction> fields[] = {
      field<&Prediction::change>("change", "", "the `gpuscope whatif` change(s)"),
      field<&Prediction::step_ns>("step_ns", "ns", "median step predicted (the span without steps)"),
      field<&Prediction::speedup>("speedup", "ratio", "replayed / predicted step"),
  };
};

template <>
struct Record<Simulation> {
  using S = Simulation;
  static constexpr std::string_view name = "simulation";
  static constexpr std::string_view meaning =
      "The replay of the dependency graph that the simulated savings come from (docs/whatif.md).";
  static constexpr Field<S> fields[] = {
      field<&S::status>("status", "", "`simulated`; empty when not run; otherwise why not"),
      field<&S::scope>("scope", "", "what was replayed (\"all 6 steps\", \"32 steps in the middle of …\")"),
      field<&S::steps>("steps", "", "steps simulated (0: the whole trace, which has none)"),
      field<&S::replayed_step_ns>("replayed_step_ns", "ns", "median step replayed"),
      field<&S::replay_error>("replay_error", "fraction",
                              "median per-step relative error of the replay (of the span without steps)"),
      field<&S::replay_error_worst>("replay_error_worst", "fraction", "the worst step's"),
      field<&S::predictions>("predictions", "", "each finding's fix alone"),
      field<&S::together>("together", "", "the fixes with a simulated saving, together"),
      optional<&S::together_note>("together_note", "", "why `together` is empty though a fix saves time"),
  };
};

// [SECTION] Trace quality -------------------------------------------------------------------

// One table's rows in a file's damage, as the report lists them.
struct TableLossRow {
  std::string table;
  std::uint64_t loaded = 0, lost = 0;
  LossCount count = LossCount::exact;
};

template <>
struct Record<TableLossRow> {
  using L = TableLossRow;
  static constexpr std::string_view name = "table_loss";
  static constexpr std::string_view meaning = "The rows of one table of a damaged file.";
  static constexpr Field<L> fields[] = {
      field<&L::table>("table", "",
                       "`kernels`, `memcpys`, `memsets`, `api_calls`, `ranges`, `syncs`, `counters` or "
                       "`overheads`"),
      field<&L::loaded>("loaded", "", "rows read"),
      field<&L::lost>("lost", "", "rows lost, as `count` says"),
      field<&L::count>("count", "",
                       "how well `lost` is known: from the file's index or declared totals, a lower bound (more may "
                       "have followed the cut), or an estimate (a damaged section header's count)"),
  };
};

// FileDamage::tables as a list of the tables that lost rows (or may have).
struct TableLossesKind {
  template <class T>
  struct For {
    static std::string type_() { return "[table_loss]"; }
    static void emit_(const T& q, const char* key, Out& out, const ReportJsonOptions& o) {
      out.key(key);
      out.begin_array();
      for (int i = 0; i < kTableCount; ++i) {
        const TableLoss& t = q.damage.tables[i];
        if (t.lost == 0 && t.count == LossCount::exact) continue;
        emit_record(TableLossRow{std::string(to_string(static_cast<TableId>(i))), t.loaded, t.lost, t.count}, out, o);
      }
      out.end_array();
    }
    static void read_(T& q, const char* key, const Json& from, const std::string& path, const Reader& r) {
      std::vector<TableLossRow> rows;
      read_value(rows, from, key, path, r);
      for (std::size_t n = 0; n < rows.size(); ++n) {
        int i = 0;
        while (i < kTableCount && to_string(static_cast<TableId>(i)) != rows[n].table) ++i;
        if (i == kTableCount) continue;  // a table of a later version
        q.damage.tables[i] = TableLoss{rows[n].loaded, rows[n].lost, rows[n].count};
      }
    }
    static void rows_(SchemaDoc& doc, const Field<T>& f) { add_row(doc, f.key, f.type(), f.unit, f.meaning); }
    static constexpr auto type = &type_;
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ReadFn<T> read = &read_;
    static constexpr auto rows = &rows_;
    static constexpr NestedFn nested = &describe_record<TableLossRow>;
  };
};

inline bool file_complete(const FileQuality& q) { return !q.damage.any(); }
inline std::string file_headline(const FileQuality& q) { return damage_headline(q.damage, q.devices); }

template <>
struct Record<FileQuality> {
  using Q = FileQuality;
  using D = FileDamage;
  static constexpr std::string_view name = "file_quality";
  static constexpr std::string_view meaning =
      "What one analysed file lost in storage (cut short or damaged), apart from what the recorder dropped "
      "(docs/metrics.md, \"Trace quality\").";
  static constexpr Field<Q> fields[] = {
      field<&Q::file>("file", "", "the file; empty when analysed from memory"),
      derived<&file_complete>("complete", "", "nothing was lost in storage"),
      derived<&file_headline>("headline", "",
                              "the line every output states first (\"INCOMPLETE file: truncated at byte …\"); "
                              "empty when complete"),
      field<&Q::damage, &D::truncated>("truncated", "",
                                       "the file ends before its data did (cut short, or its writer stopped)"),
      field<&Q::damage, &D::file_bytes>("file_bytes", "bytes", "size of the file as read (compressed, for gzip)"),
      field<&Q::damage, &D::intact_bytes>("intact_bytes", "bytes", "its first bytes, read without a problem"),
      field<&Q::damage, &D::bytes_lost>("bytes_lost", "bytes", "bytes of the file not loaded"),
      field<&Q::damage, &D::damaged_sections>("damaged_sections", "",
                                              "damaged parts skipped or stopped at (sections, the index)"),
      Spec<TableLossesKind>{"rows_lost", "", "the tables that lost rows, or may have"},
      field<&Q::devices, &DeviceCoverage::declared>("devices_declared", "",
                                                    "GPUs the trace describes or has tracks on"),
      field<&Q::devices, &DeviceCoverage::with_data>("devices_with_data", "",
                                                     "those with at least one kernel, copy or fill"),
      field<&Q::dropped_records>("dropped_records", "",
                                 "records the recorder dropped (CUPTI buffers full): they never reached the file, and "
                                 "are not storage damage"),
      field<&Q::damage, &D::problems>("problems", "", "one line per problem, in file order"),
  };
};

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

template <>
struct Record<TraceQuality> {
  using Q = TraceQuality;
  static constexpr std::string_view name = "trace_quality";
  static constexpr std::string_view meaning =
      "Storage damage of the analysed files, said first by every output; recording drops stay in `trace_stats` and "
      "the `dropped-records` finding.";
  static constexpr Field<Q> fields[] = {
      derived<&quality_complete>("complete", "", "no file lost anything in storage"),
      derived<&quality_truncated>("truncated", "", "some file is truncated"),
      derived<&quality_bytes_lost>("bytes_lost", "bytes", "Σ bytes not loaded, over files"),
      derived<&quality_rows_lost>("rows_lost", "", "Σ rows lost, over files and tables (some may be lower bounds)"),
      field<&Q::files>("files", "", "one per analysed file, in order"),
  };
};

// [SECTION] The top level ---------------------------------------------------------------------

std::string string_type() { return "string"; }
std::string counters_type() { return "{string: int}"; }

void write_schema(const Profile&, const char* key, Out& out, const ReportJsonOptions&) {
  out.member(key, Profile::kSchema);
}
void read_schema(Profile&, const char* key, const Json& from, const std::string& path, const Reader& r) {
  const std::string schema = r.str(from, key, path);
  if (schema != Profile::kSchema)
    r.fail(Reader::join(path, key),
           "\"" + schema + "\" is not " + Profile::kSchema + " (made by another gpuscope version?)");
}

void write_trace_stats(const Profile& p, const char* key, Out& out, const ReportJsonOptions&) {
  out.key(key);
  out.begin_object();
  for (const auto& [name, value] : p.trace_stats) out.member(name, value);
  out.end_object();
}
void read_trace_stats(Profile& p, const char* key, const Json& from, const std::string& path, const Reader& r) {
  const Json& stats = r.member(from, key, path);
  const std::string at = Reader::join(path, key);
  if (!stats.is_object()) r.fail(at, "expected an object");
  for (const auto& item : stats.items()) p.trace_stats.emplace_back(item.key(), r.u64(stats, item.key().c_str(), at));
}

template <>
struct Record<Profile> {
  using P = Profile;
  static constexpr std::string_view name = "";  // the document itself
  static constexpr std::string_view meaning = "Top level, in this order:";
  static constexpr Field<P> fields[] = {
      custom<&string_type, &write_schema, &read_schema>("schema", "", "`\"gpuscope.report/1\"` (always the first key)"),
      lenient<&P::source>("source", "what recorded the traces (`unknown`: mixed, or a name this reader does not know)"),
      field<&P::producer>("producer", "", "what recorded the first trace (\"PyTorch Profiler (Kineto)\", …)"),
      field<&P::files>("files", "", "the analysed files, one per rank for jobs"),
      optional<&P::workload>("workload", "", "what the traced program is: training or inference, eager or not, ranks"),
      optional<&P::trace_quality>("trace_quality", "",
                                  "what the files lost in storage (cut short or damaged), and which GPUs have data"),
      field<&P::clock_alignment>("clock_alignment", "", "how ranks were put on one clock; empty for one file"),
      field<&P::window>("window", "", "first to last event of all traces"),
      field<&P::kernel_time_ns>("kernel_time_ns", "ns", "Σ kernel durations (the denominator of `share`s)"),
      field<&P::devices>("devices", "", "one per GPU (per rank and GPU in jobs)"),
      field<&P::categories>("categories", "", "kernel categories with time, largest first"),
      limited<&ReportJsonOptions::top, &P::hotspots>("hotspots",
                                                     "kernels by name, largest total first (all, or `--top`)"),
      limited<&ReportJsonOptions::top, &P::op_names>("op_names",
                                                     "framework ops by name, most GPU time first (all, or `--top`)"),
      limited<&ReportJsonOptions::top, &P::ops>(
          "ops", "framework ops by name × input shapes and types, most GPU time first (all, or `--top`)"),
      field<&P::op_summary>("op_summary", "", "attribution of GPU ops to framework ops"),
      optional<&P::module_split>("module_split", "", "forward and backward GPU time per nn.Module"),
      limited<&ReportJsonOptions::max_steps, &P::steps, &StepSummary::steps>("steps",
                                                                             "every step (or the first `--steps`)"),
      field<&P::steps>("step_summary", "", "the steps together"),
      field<&P::idle>("idle", "", "idle time by cause, per stream"),
      field<&P::launches>("launches", "", "launch statistics"),
      optional<&P::collective_sites>("collective_sites", "",
                                     "collective call sites compared across steps, most time first (every rank's)"),
      optional<&P::collective_summary>("collective_summary", "", "the collective sites pooled across GPUs and ranks"),
      field<&P::temporal_breakdown>("temporal_breakdown", "", "HTA's breakdown, one per rank (and GPU)"),
      field<&P::ranks>("ranks", "", "one per rank and GPU"),
      field<&P::skew>("skew", "", "spreads across ranks and GPUs"),
      optional<&P::collectives>("collectives", "", "jobs: collective instances matched across ranks, in order"),
      optional<&P::stragglers>("stragglers", "", "jobs: every rank by the wait it caused, most first"),
      optional<&P::job_steps>("job_steps", "", "jobs: each step's critical rank"),
      optional<&P::left_out>("left_out", "", "jobs: files not analysed and ranks with no file, and why"),
      field<&P::syncs>("syncs", "", "host synchronizations"),
      field<&P::memcpys>("memcpys", "", "copies and fills"),
      field<&P::findings>("findings", "",
                          "the material findings (saving or share ≥ 1 % of the run), largest `saving_ns` first"),
      optional<&P::minor_findings>("minor_findings", "", "findings under 1 % of the run: true, listed, not numbered"),
      optional<&P::helps>("helps", "", "\"What would help?\": the usual changes, answered from the trace"),
      optional<&P::idle_charges>("idle_charges", "",
                                 "the GPUs' idle time by cause, each part charged to one finding (docs/findings.md)"),
      optional<&P::host_while_idle>("host_while_idle", "",
                                    "where the host was during each cause's idle time, from host samples (traces "
                                    "with host samples only)"),
      optional<&P::critical_path>("critical_path", "", "the steps' critical path"),
      optional<&P::simulation>("simulation", "", "the replay behind the simulated savings"),
      custom<&counters_type, &write_trace_stats, &read_trace_stats>(
          "trace_stats", "",
          "the traces' statistics (`capture.dropped_records`, `import.skipped.<reason>`, …), summed over files"),
  };
};

// [SECTION] Entry points ------------------------------------------------------------------------

namespace {

std::string escaped(std::string_view cell) {
  std::string s;
  for (char c : cell) {
    if (c == '|') s += '\\';
    s += c;
  }
  return s;
}

}  // namespace

void begin_table(SchemaDoc& doc, std::string_view name, std::string_view meaning) {
  if (!doc.text.empty()) doc.text += "\n";
  if (!name.empty()) doc.text += "### `" + std::string(name) + "`\n\n";
  doc.text += std::string(meaning) + "\n\n| key | type | unit | meaning |\n|---|---|---|---|\n";
}

void add_row(SchemaDoc& doc, std::string_view key, const std::string& type, std::string_view unit,
             std::string_view meaning) {
  doc.text +=
      "| `" + std::string(key) + "` | " + escaped(type) + " | " + escaped(unit) + " | " + escaped(meaning) + " |\n";
}

namespace {

// Items [begin, end) of one list, formatted into parts[part].
struct ListChunk {
  const Field<Profile>* field;
  std::size_t begin, end, part;
};

}  // namespace

// The keys that are not lists, and each list's key and brackets, are written
// here in order into the current part; each range of a list's items gets a
// part of its own, left empty until the ranges are formatted, all at once.
// A writer is made for each piece (Out::inside), where the piece sits in the
// document: a part's string moves when parts are added.
std::vector<std::string> write_report_parts(const Profile& p, const ReportJsonOptions& options,
                                            std::size_t chunk_items) {
  const bool pretty = options.pretty;
  if (chunk_items == 0) chunk_items = kReportChunkItems;
  std::vector<std::string> parts(1, "{");
  std::vector<ListChunk> chunks;
  bool keys = false;  // written in the top-level object so far
  for (const Field<Profile>& f : Record<Profile>::fields) {
    Out top = Out::inside(parts.back(), pretty, 0, keys);
    if (!f.items) {
      f.emit(p, f.key, top, options);
      keys = !top.container_empty();
      continue;
    }
    top.key(f.key);
    top.begin_array();
    keys = true;
    const std::size_t n = f.count(p, options);
    for (std::size_t begin = 0; begin < n; begin += chunk_items) {
      chunks.push_back(ListChunk{&f, begin, std::min(n, begin + chunk_items), parts.size()});
      parts.emplace_back();
    }
    parts.emplace_back();
    Out::inside(parts.back(), pretty, 1, n).end_array();
  }
  Out::inside(parts.back(), pretty, 0, keys).end_object();
  parallel_for(chunks.size(), options.jobs, [&](std::size_t i) {
    const ListChunk& c = chunks[i];
    Out out = Out::inside(parts[c.part], pretty, 1, c.begin);
    c.field->items(p, options, c.begin, c.end, out);
  });
  return parts;
}

std::string write_report_text(const Profile& p, const ReportJsonOptions& options, std::size_t chunk_items) {
  std::vector<std::string> parts = write_report_parts(p, options, chunk_items);
  std::size_t size = 0;
  for (const std::string& part : parts) size += part.size();
  std::string out;
  out.reserve(size + 1);  // report_json() adds a newline
  for (std::string& part : parts) {
    out += part;
    std::string().swap(part);
  }
  return out;
}

Profile read_report(const Json& document, const Reader& r) {
  Profile p;
  read_record(p, document, "", r);
  return p;
}

}  // namespace gpuscope::detail

namespace gpuscope {

void write_file_quality_json(json::Writer& out, const FileQuality& q) {
  detail::emit_record(q, out, ReportJsonOptions{});
}

void write_op_summary_json(json::Writer& out, const OpSummary& s) { detail::emit_record(s, out, ReportJsonOptions{}); }

std::string report_schema_markdown() {
  detail::SchemaDoc doc;
  detail::describe_record<Profile>(doc);
  return doc.text + "\n";  // a blank line ends the last table
}

}  // namespace gpuscope
