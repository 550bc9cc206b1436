// Profile: what gpuscope concludes from a Trace — numbers and findings.
//
// [SECTION] Building blocks
// [SECTION] Per device
// [SECTION] Categories and hotspots
// [SECTION] Steps
// [SECTION] Idle time, launches, communication
// [SECTION] HTA-compatible temporal breakdown
// [SECTION] Findings
// [SECTION] Profile
//
// analysis/ fills it (analyze.h); report, JSON, diff and the viewer read it.
// It never refers back into the Trace by row index, so a Profile can outlive
// its Trace and be compared with another (diff). Definitions and formulas of
// every number: docs/metrics.md. Its JSON form: docs/report-schema.md.
//
// Conventions: times are int64 ns; shares and ratios are fractions in [0, 1];
// a ratio whose denominator is 0 is reported as 0 and flagged by the field's
// documentation, never NaN.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

struct DeviceSummary {
  std::uint32_t id = 0;
  std::string name;
  std::int32_t rank = -1;            // distributed rank of the process that drove it, -1 unknown
  TimeRange window;                  // first GPU op start .. last GPU op end on this device
  TimeNs span_ns = 0;                // window.duration()
  TimeNs busy_ns = 0;                // |union of all GPU ops (kernels, memcpys, memsets)|
  double utilization = 0;            // busy_ns / span_ns
  TimeNs kernel_busy_ns = 0;         // |union of kernels|
  double kernel_concurrency = 0;     // time with >= 2 kernels in flight / kernel_busy_ns
  double mean_kernels_in_flight = 0; // sum of kernel durations / kernel_busy_ns
  TimeNs memcpy_ns = 0;              // |union of memcpys|
  double memcpy_compute_overlap = 0; // |memcpy ∩ kernels| / memcpy_ns
  TimeNs communication_ns = 0;       // |union of communication kernels|
  double communication_compute_overlap = 0;  // |comm ∩ non-comm kernels| / communication_ns
  TimeNs idle_ns = 0;                // span_ns - busy_ns
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0;
  std::uint32_t streams = 0;         // streams with at least one GPU op
  double sm_efficiency = 0;          // duration-weighted min(blocks / SMs, 1); 0 if SM count unknown
  double achieved_tflops = 0;        // when the source knows FLOPs (bundled workload), else 0
};

// [SECTION] Categories and hotspots ----------------------------------------------------------

struct CategoryTime {
  KernelCategory category = KernelCategory::other;
  TimeNs time_ns = 0;   // sum of kernel durations in this category
  double share = 0;     // time_ns / sum over all categories (GPU kernel time)
  std::uint64_t count = 0;
};

struct Hotspot {
  std::string name;     // demangled kernel name (or "Memcpy HtoD" etc. for copies)
  KernelCategory category = KernelCategory::other;
  DurationStats stats;
  double share = 0;     // stats.total / total kernel time
  std::uint32_t device = kNoDevice;  // kNoDevice when aggregated over devices
};

// [SECTION] Steps ---------------------------------------------------------------------------------

enum class StepSource : std::uint8_t { none, nvtx, profiler_step, pattern };

struct Step {
  std::int32_t index = 0;
  std::string name;          // "ProfilerStep#12", NVTX "step 3", or "step 3" (pattern)
  TimeRange range;
  // Breakdown of the step's wall time on its device, priority-ordered so the
  // parts add up to the step time: compute (non-communication kernels), then
  // communication, then memcpy/memset, then idle.
  TimeNs compute_ns = 0, communication_ns = 0, memcpy_ns = 0, idle_ns = 0;
  std::uint32_t device = kNoDevice;
};

struct StepSummary {
  StepSource source = StepSource::none;
  std::vector<Step> steps;
  DurationStats step_time;   // over steps
};

// [SECTION] Idle time, launches, communication -----------------------------------------

// HTA's idle-time causes, per stream.
struct IdleByCause {
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  TimeNs host_wait_ns = 0;    // the next op's launch call started after the previous op ended
  TimeNs kernel_wait_ns = 0;  // short gaps between back-to-back ops (< consecutive_kernel_delay)
  TimeNs other_ns = 0;
};

struct LaunchStats {
  std::uint64_t launches = 0;          // API calls linked to a GPU op
  DurationStats cpu_launch;            // duration of the launching API calls
  DurationStats gpu_duration;          // duration of the ops they launched
  DurationStats launch_delay;          // op start - launching call end
  std::uint64_t short_kernels = 0;     // GPU time < CPU launch time
  double short_kernel_share = 0;       // short_kernels / launches
  std::uint32_t max_queue_depth = 0;   // most ops launched and not yet started, on any stream
};

struct RankSummary {
  std::int32_t rank = -1;
  std::string source_file;
  TimeNs clock_offset_ns = 0;          // added to this rank's times to align it with rank 0
  TimeNs step_time_mean = 0;
  TimeNs communication_ns = 0;
  double utilization = 0;
};

// [SECTION] HTA-compatible temporal breakdown ------------------------------------------

// Computed exactly as Holistic Trace Analysis does (its event selection and its
// µs rounding), so users who know HTA see the same numbers.
struct TemporalBreakdown {
  std::int32_t rank = 0;
  TimeNs span_ns = 0, idle_ns = 0, compute_ns = 0, non_compute_ns = 0;
  double idle_share = 0, compute_share = 0, non_compute_share = 0;
};

// [SECTION] Findings ----------------------------------------------------------------------------

enum class Severity : std::uint8_t { info = 0, warning = 1, critical = 2 };

struct Finding {
  std::string id;              // stable rule id: "padding-hotspot", "low-concurrency", …
  Severity severity = Severity::info;
  std::string title;           // one line with the numbers
  std::string evidence;        // which kernels / metric vs threshold, in words
  std::string recommendation;  // what to change
  TimeNs saving_ns = 0;        // estimated time a fix would save over the trace
  double metric = 0;           // the measured value the rule tested …
  double threshold = 0;        // … and the threshold it crossed
  std::uint32_t device = kNoDevice;
  std::vector<TimeRange> ranges;     // where to look (the viewer zooms here)
  std::vector<std::string> kernels; // kernel names involved, most expensive first
};

// [SECTION] Profile ---------------------------------------------------------------------------

struct Profile {
  static constexpr const char* kSchema = "gpuscope.report/1";

  TraceSource source = TraceSource::unknown;
  std::string producer;
  TimeRange window;                          // whole trace
  std::vector<DeviceSummary> devices;
  std::vector<CategoryTime> categories;      // every category with time > 0, largest first
  std::vector<Hotspot> hotspots;             // per kernel name, largest total first
  StepSummary steps;
  std::vector<IdleByCause> idle;
  LaunchStats launches;
  std::vector<TemporalBreakdown> temporal_breakdown;  // one per rank
  std::vector<RankSummary> ranks;            // multi-file jobs
  std::vector<Finding> findings;             // largest saving first
  std::vector<std::pair<std::string, std::uint64_t>> trace_stats;  // copied from TraceMeta::stats
};

std::string_view to_string(Severity s);
std::string_view to_string(StepSource s);

}  // namespace gpuscope
