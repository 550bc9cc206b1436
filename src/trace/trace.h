// Trace: the one model in the middle of gpuscope.
//
// [SECTION] Descriptions (devices, processes, tracks, counter series)
// [SECTION] Metadata (source, host, capture statistics)
// [SECTION] Trace (frozen, read-only tables + indexes)
//
// A Trace is produced by exactly one TraceBuilder (trace/builder.h) and is
// immutable afterwards. Its tables are sorted by (track, start, longer first),
// so the rows of one track are a contiguous RowRange and can be searched by
// time. Derived columns (kernel category, correlation links, range depth) are
// filled at freeze.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/damage.h"
#include "trace/string_table.h"
#include "trace/tables.h"
#include "trace/types.h"

namespace gpuscope {

// [SECTION] Descriptions ----------------------------------------------------------------------

// A GPU as the source described it. Numbers are 0 when unknown.
struct Device {
  std::uint32_t id = 0;  // CUDA device ordinal as the source named it
  std::string name;      // "NVIDIA H200"
  std::string uuid;
  std::int32_t compute_major = 0, compute_minor = 0;
  std::uint32_t sm_count = 0;
  std::uint64_t memory_bytes = 0;
  std::uint32_t core_clock_khz = 0, memory_clock_khz = 0, memory_bus_width_bits = 0;
  std::uint32_t max_threads_per_sm = 0, max_blocks_per_sm = 0, max_threads_per_block = 0;
  std::uint32_t registers_per_sm = 0, shared_memory_per_sm = 0, warp_size = 0;
  // Peaks the analysis compares against (0 = unknown; analysis may estimate).
  double peak_fp32_flops = 0, peak_tensor_flops = 0, peak_memory_bandwidth = 0;  // FLOP/s, FLOP/s, B/s

  friend bool operator==(const Device&, const Device&) = default;
};

struct Process {
  std::uint32_t pid = 0;
  std::string name;        // executable or command line
  std::int32_t rank = -1;  // distributed rank, -1 if unknown

  friend bool operator==(const Process&, const Process&) = default;
};

// A row of the timeline: a GPU (device, stream) or a CPU (pid, tid).
struct Track {
  TrackKind kind = TrackKind::gpu;
  std::uint32_t device = 0;  // GPU tracks
  std::uint32_t stream = 0;  // GPU tracks: CUDA stream id as the source numbered it
  std::uint32_t pid = 0;     // CPU tracks (GPU tracks: the owning process, 0 if unknown)
  std::uint32_t tid = 0;     // CPU tracks
  std::string name;          // display name ("stream 7", "MainThread"); may be empty

  friend bool operator==(const Track&, const Track&) = default;
};

inline constexpr std::uint32_t kNoSeries = 0xffffffffu;

// A series of samples over time. Memory series (see series_name below) hold
// bytes as a step function: each sample is the value from its time on.
struct CounterSeries {
  std::string name;                  // "memory.allocated", "power", …
  std::uint32_t device = kNoDevice;  // GPU the series belongs to, or kNoDevice
  std::string unit;                  // "%", "W", "B/s", …

  friend bool operator==(const CounterSeries&, const CounterSeries&) = default;
};

// Names of the series every source writes the same way (docs/metrics.md, "Memory").
namespace series_name {
// Bytes in live allocations on the device (device = kNoDevice: on the host),
// as the source counted them (PyTorch: "Total Allocated" of its caching
// allocator; CUPTI: allocations made through CUDA while capturing).
inline constexpr std::string_view kMemoryAllocated = "memory.allocated";
// Bytes allocated minus bytes freed since the trace began: where the source
// gave only the changes (Kineto's 2021 schema), so the level is unknown.
inline constexpr std::string_view kMemoryAllocatedSinceStart = "memory.allocated_since_start";
// Bytes the allocator holds from the device (PyTorch: "Total Reserved";
// CUPTI: stream-ordered pools' sizes plus allocations outside pools).
inline constexpr std::string_view kMemoryReserved = "memory.reserved";

// What a GPU's hardware measured (docs/metrics.md, "Hardware metrics"):
// "hw.*" from CUPTI PM sampling, "nvml.*" from NVML, each of one device.
inline constexpr std::string_view kHardwarePrefix = "hw.";
inline constexpr std::string_view kNvmlPrefix = "nvml.";
inline bool is_hardware_metric(const CounterSeries& s) {
  return s.device != kNoDevice && (s.name.starts_with(kHardwarePrefix) || s.name.starts_with(kNvmlPrefix));
}

// A metric's name as Nsight Systems writes it in TARGET_INFO_GPU_METRICS,
// the unit in brackets at the end ("SM Active [Throughput %]"), and back.
inline std::string nsys_metric_name(const CounterSeries& s) {
  if (s.unit.empty()) return s.name;
  std::string out;  // appended, not `a + b`: GCC 12 warns falsely (-Wrestrict) on that when inlined
  out.reserve(s.name.size() + s.unit.size() + 3);
  out.append(s.name).append(" [").append(s.unit).push_back(']');
  return out;
}
inline std::pair<std::string_view, std::string_view> split_nsys_metric_name(std::string_view metric) {
  const std::size_t open = metric.rfind(" [");
  if (metric.size() < 4 || metric.back() != ']' || open == std::string_view::npos || open == 0) return {metric, {}};
  return {metric.substr(0, open), metric.substr(open + 2, metric.size() - open - 3)};
}

// Nsight Systems' GPU metrics (`nsys profile --gpu-metrics-devices`, the
// Turing to Blackwell sets) that measure what a hw.* series measures. nsys
// gives each as a percent of peak ("[Throughput %]"); hw.* series in "%" hold
// the same 0–100. Its DRAM bandwidths are percent of the peak bandwidth where
// CUPTI's are B/s. The first row of a hw name is the one the SQLite export
// writes; the others are other nsys versions' spellings. GR Active, the clock
// frequencies, PCIe and NVLink throughputs have no hw.* series that measures
// the same thing and keep nsys' names.
struct NsysHardwareMetric {
  std::string_view nsys, hw;
};
inline constexpr std::string_view kNsysPercentUnit = "Throughput %";
inline constexpr NsysHardwareMetric kNsysHardwareMetrics[] = {
    {"SMs Active", "hw.sm_active"},
    {"SM Active", "hw.sm_active"},
    {"SM Issue", "hw.sm_issue"},
    {"Tensor Active", "hw.tensor_active"},
    {"Compute Warps in Flight", "hw.sm_occupancy"},
    {"DRAM Read Bandwidth", "hw.dram_read"},
    {"DRAM Write Bandwidth", "hw.dram_write"},
};
// The hw.* name of an nsys metric (name and unit as split_nsys_metric_name
// gives them), or empty where it has none.
inline std::string_view hardware_name_of_nsys(std::string_view metric, std::string_view unit) {
  if (unit != kNsysPercentUnit) return {};
  for (const NsysHardwareMetric& m : kNsysHardwareMetrics)
    if (m.nsys == metric) return m.hw;
  return {};
}
// nsys' name for a hw.* series, or empty where nsys has none.
inline std::string_view nsys_name_of_hardware(std::string_view hw) {
  for (const NsysHardwareMetric& m : kNsysHardwareMetrics)
    if (m.hw == hw) return m.nsys;
  return {};
}
}  // namespace series_name

// [SECTION] Metadata ------------------------------------------------------------------------

// Counts keyed by a dotted name, in the order the keys first came: what a
// source or an analysis could not keep, inferred or adjusted.
using NamedCounts = std::vector<std::pair<std::string, std::uint64_t>>;
std::uint64_t count_of(const NamedCounts& counts, std::string_view key);  // 0 when absent
void add_count(NamedCounts& counts, std::string_view key, std::uint64_t delta);
void set_count(NamedCounts& counts, std::string_view key, std::uint64_t value);

// Where the trace came from and what was lost on the way. `stats` holds counts
// keyed by a dotted name: "capture.dropped_records", "capture.invalid_timestamps",
// "import.skipped.<reason>", … Every event a source could not keep is counted
// here, so `gpuscope info` can say what is missing.
struct TraceMeta {
  TraceSource source = TraceSource::unknown;
  std::string producer;  // "gpuscope 0.1 capture", "PyTorch Profiler", …
  std::string host;
  std::string command_line;
  TimeNs start_time_ns = 0;  // wall-clock (epoch) ns of the start of recording, 0 if unknown
  std::int32_t rank = -1, world_size = 0;
  NamedCounts stats;
  std::vector<std::pair<std::string, std::string>> properties;
  // What storage lost (a cut or damaged file), apart from recording drops in
  // `stats`: filled by the file's reader, kept when the trace is saved.
  FileDamage damage;

  std::uint64_t stat(std::string_view key) const { return count_of(stats, key); }
  void add_stat(std::string_view key, std::uint64_t delta) { add_count(stats, key, delta); }
  void set_stat(std::string_view key, std::uint64_t value) { set_count(stats, key, value); }
  std::string_view property(std::string_view key) const;
  void set_property(std::string_view key, std::string_view value);

  friend bool operator==(const TraceMeta&, const TraceMeta&) = default;
};

// Well-known stat keys.
namespace stat_key {
inline constexpr std::string_view kDroppedRecords = "capture.dropped_records";
inline constexpr std::string_view kInvalidTimestamps = "capture.invalid_timestamps";
}  // namespace stat_key

// [SECTION] Trace -------------------------------------------------------------------------------

struct RowRange {
  RowIndex begin = 0, end = 0;
  RowIndex size() const { return end - begin; }
  bool empty() const { return begin == end; }
};

// All tables of a trace, by value. Shared by Trace and TraceBuilder.
struct TraceTables {
  KernelTable kernels;
  MemcpyTable memcpys;
  MemsetTable memsets;
  ApiCallTable api_calls;
  RangeTable ranges;
  SyncTable syncs;
  CounterTable counters;
  OverheadTable overheads;
  MemoryEventTable memory_events;
  OsCallTable os_calls;

  // Calls f(TableId, Table&) for each table.
  template <class F>
  void for_each_table(F&& f) {
    tables(*this, f);
  }
  template <class F>
  void for_each_table(F&& f) const {
    tables(*this, f);
  }
  template <class Self, class F>
  static void tables(Self& s, F&& f) {
    f(TableId::kernels, s.kernels);
    f(TableId::memcpys, s.memcpys);
    f(TableId::memsets, s.memsets);
    f(TableId::api_calls, s.api_calls);
    f(TableId::ranges, s.ranges);
    f(TableId::syncs, s.syncs);
    f(TableId::counters, s.counters);
    f(TableId::overheads, s.overheads);
    f(TableId::memory_events, s.memory_events);
    f(TableId::os_calls, s.os_calls);
  }
  std::size_t rows(TableId t) const;
};

// A reference to one GPU operation (kernel, memcpy or memset).
struct OpRef {
  OpTable table = OpTable::none;
  RowIndex row = kNoRow;
  friend bool operator==(const OpRef&, const OpRef&) = default;
};

class Trace {
 public:
  Trace() = default;
  Trace(Trace&&) noexcept = default;
  Trace& operator=(Trace&&) noexcept = default;
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  const TraceMeta& meta() const { return meta_; }
  const StringTable& strings() const { return strings_; }
  std::string_view str(StringId id) const { return strings_.get(id); }

  const std::vector<Device>& devices() const { return devices_; }
  const Device* device(std::uint32_t id) const;  // by CUDA ordinal; nullptr if unknown
  const std::vector<Process>& processes() const { return processes_; }
  const Process* process(std::uint32_t pid) const;
  // Tracks in display order: GPU tracks by (device, stream), then CPU tracks by (pid, tid).
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<CounterSeries>& counter_series() const { return counter_series_; }

  const KernelTable& kernels() const { return t_.kernels; }
  const MemcpyTable& memcpys() const { return t_.memcpys; }
  const MemsetTable& memsets() const { return t_.memsets; }
  const ApiCallTable& api_calls() const { return t_.api_calls; }
  const RangeTable& ranges() const { return t_.ranges; }
  const SyncTable& syncs() const { return t_.syncs; }
  const CounterTable& counters() const { return t_.counters; }
  const OverheadTable& overheads() const { return t_.overheads; }
  const MemoryEventTable& memory_events() const { return t_.memory_events; }
  const OsCallTable& os_calls() const { return t_.os_calls; }
  const TraceTables& tables() const { return t_; }

  // The counter series (name, device), or kNoSeries.
  std::uint32_t find_counter_series(std::string_view name, std::uint32_t device) const;

  // Rows of `table` on `track` (for TableId::counters and memory_events: on counter series `track`).
  RowRange rows_of(TableId table, TrackId track) const;
  // Rows of `table` on `track` that overlap [t0, t1] (an event touching the
  // window counts). Binary search: O(log n) plus the rows returned.
  RowRange rows_overlapping(TableId table, TrackId track, TimeNs t0, TimeNs t1) const;
  // The same rows, for a caller whose windows move along the track (each
  // near the one before: a trace's steps in time order): the searches start
  // at `*hint` (any row; set to the range's begin for the next call), a few
  // probes each instead of a binary search over the whole track.
  RowRange rows_overlapping(TableId table, TrackId track, TimeNs t0, TimeNs t1, RowIndex* hint) const;

  // Correlation, both ways, O(1): the API call that launched a GPU op…
  RowIndex launching_api(OpRef op) const;
  // …and the GPU ops an API call launched (most launch one; a cudaGraphLaunch many).
  template <class F>
  void for_each_op_of(RowIndex api_row, F&& f) const {
    const auto table = static_cast<OpTable>(t_.api_calls.op_table[api_row]);
    if (table == OpTable::none) return;
    f(OpRef{table, t_.api_calls.op_row[api_row]});
    auto it = std::lower_bound(extra_ops_.begin(), extra_ops_.end(), api_row,
                               [](const ExtraOp& e, RowIndex r) { return e.api_row < r; });
    for (; it != extra_ops_.end() && it->api_row == api_row; ++it) f(it->op);
  }

  // Framework ops. An op is a range on a CPU track that a framework or the
  // user opened around work: PyTorch's cpu_op and user_annotation spans,
  // NVTX push/pop and start/end ranges. The op that launched a GPU op is the
  // innermost op on the launching thread that encloses the launch call's
  // start (kNoRow: no correlation, or launched outside every op).
  bool is_op_range(RowIndex range_row) const;
  RowIndex launching_op(OpRef op) const {
    const RowIndex api = launching_api(op);
    return api == kNoRow ? kNoRow : t_.api_calls.op_range_at(api);
  }
  // The op's enclosing op on its thread (kNoRow at the top).
  RowIndex parent_op(RowIndex range_row) const { return t_.ranges.parent[range_row]; }

  // Whether some API call launched more than one op (graph launches): when
  // not, an API call's ops are just api_calls().op_table/op_row.
  bool has_extra_ops() const { return !extra_ops_.empty(); }

  // Earliest start and latest end over every table (0, 0 when empty).
  TimeNs begin_time() const { return begin_time_; }
  TimeNs end_time() const { return end_time_; }
  // Earliest start and latest end of GPU ops (kernels, memcpys, memsets).
  TimeNs gpu_begin_time() const { return gpu_begin_time_; }
  TimeNs gpu_end_time() const { return gpu_end_time_; }

  std::size_t memory_bytes() const;  // heap bytes held by this trace

 private:
  friend class TraceBuilder;
  struct ExtraOp {
    RowIndex api_row;
    OpRef op;
  };
  // Per track (per series for counters) of each table: rows begin at
  // track_begin_[table][track] and end at track_begin_[table][track + 1].
  struct TrackIndex {
    std::vector<RowIndex> begin;
    std::vector<TimeNs> max_duration;       // longest event on each track
    std::vector<std::uint8_t> ends_sorted;  // 1 if ends are non-decreasing on the track
    // Tracks whose ends are not sorted (ranges that nest): the running
    // maximum of ends at the last row of each block of kReachBlock rows (and
    // at the track's last row), the blocks of track g at
    // reach[reach_begin[g] .. reach_begin[g + 1]). The first row that ends
    // at or after t0 is in the first block that reaches t0.
    std::vector<TimeNs> reach;
    std::vector<RowIndex> reach_begin;
  };
  static constexpr RowIndex kReachBlock = 64;
  template <class First>
  RowRange overlapping(TableId table, TrackId track, TimeNs t0, TimeNs t1, RowIndex near, First&& first) const;

  TraceMeta meta_;
  StringTable strings_;
  std::vector<Device> devices_;
  std::vector<Process> processes_;
  std::vector<Track> tracks_;
  std::vector<CounterSeries> counter_series_;
  TraceTables t_;
  TrackIndex index_[kTableCount];
  std::vector<ExtraOp> extra_ops_;                                               // sorted by api_row
  StringId cpu_op_domain_ = kNoOpDomain, user_annotation_domain_ = kNoOpDomain;  // 'cpu_op', 'user_annotation'
  static constexpr StringId kNoOpDomain = 0xffffffffu;
  TimeNs begin_time_ = 0, end_time_ = 0, gpu_begin_time_ = 0, gpu_end_time_ = 0;
};

}  // namespace gpuscope
