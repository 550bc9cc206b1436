// TraceBuilder: the one way to make a Trace.
//
// Every source (CUPTI capture, JSON import, .gscope reader, synthetic
// generator) appends rows through a builder owned by one thread, then calls
// freeze(), which:
//   0. drops rows with a time outside the plausible window (trace/budget.h),
//      counted under "trace.out_of_window.<table>";
//   1. validates every id (tracks, strings, counter series) and every
//      interval (end >= start), throwing TraceError naming the first bad row;
//   2. renumbers tracks into display order (GPU by device/stream, then CPU by
//      pid/tid) and sorts every table by (track, start, longer first) — a
//      linear counting pass by track, then a sort only where a track's rows
//      arrived out of order;
//   3. fills derived columns: kernel categories, correlation links (API call
//      <-> GPU op), range nesting depth, sync tracks resolved through their API
//      call, per-track search indexes;
//   4. compacts the compact columns (trace/tables.h): each table's track kept
//      as where each track's rows begin, a callback id as one per call name
//      where it is a function of the name.
//
// Appending never allocates per event beyond the columns' amortized growth.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/trace.h"

namespace gpuscope {

// A trace that breaks the model's invariants (bad id, end < start, …).
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TraceBuilder {
 public:
  TraceBuilder();

  StringId intern(std::string_view s) { return trace_.strings_.intern(s); }
  // For readers of untrusted files: names longer than `max_bytes` are cut
  // (StringTable::limit_length), counted by freeze() under the stat
  // "trace.truncated_names".
  void limit_names(std::size_t max_bytes) { trace_.strings_.limit_length(max_bytes); }
  const StringTable& strings() const { return trace_.strings_; }
  StringTable& strings_mutable() { return trace_.strings_; }

  // Tracks: returns the existing track or adds one.
  TrackId gpu_track(std::uint32_t device, std::uint32_t stream);
  TrackId cpu_track(std::uint32_t pid, std::uint32_t tid);
  // Adds a track exactly as given (a reader restoring a file). No deduplication.
  TrackId add_track(const Track& t);
  void set_track_name(TrackId id, std::string_view name) { trace_.tracks_[id].name = name; }
  const std::vector<Track>& tracks() const { return trace_.tracks_; }

  // Devices and processes: adding one with an id/pid that exists replaces it.
  void add_device(const Device& d);
  void add_process(const Process& p);
  const std::vector<Device>& devices() const { return trace_.devices_; }
  const std::vector<Process>& processes() const { return trace_.processes_; }

  std::uint32_t counter_series(std::string_view name, std::uint32_t device = kNoDevice, std::string_view unit = {});
  const std::vector<CounterSeries>& all_counter_series() const { return trace_.counter_series_; }
  // Moves every counter series of device `from` to device `to` (an importer
  // that learns late which GPU a series' number means).
  void renumber_counter_series(std::uint32_t from, std::uint32_t to) {
    for (CounterSeries& c : trace_.counter_series_)
      if (c.device == from) c.device = to;
  }

  TraceMeta& meta() { return trace_.meta_; }
  const TraceMeta& meta() const { return trace_.meta_; }

  void add_kernel(const KernelRow& r);
  void add_memcpy(const MemcpyRow& r);
  void add_memset(const MemsetRow& r);
  void add_api_call(const ApiCallRow& r);
  void add_range(const RangeRow& r);
  void add_sync(const SyncRow& r);
  void add_counter(const CounterRow& r);
  void add_memory_event(const MemoryEventRow& r);
  void add_overhead(const OverheadRow& r);
  void add_os_call(const OsCallRow& r);

  // A sync row whose waiting thread is not known yet (CUPTI synchronization
  // records carry only a correlation id): freeze() moves it to the track of the
  // API call with the same correlation, or to an "unknown thread" CPU track.
  static constexpr TrackId kResolveThroughCorrelation = 0xfffffffeu;

  // Raw access to the rows appended so far, for readers that fill whole columns
  // at once and for chunked writers (which write and then clear_rows()).
  TraceTables& tables() { return trace_.t_; }
  const TraceTables& tables() const { return trace_.t_; }
  // Drops every row but keeps strings, tracks, devices, processes, series and meta.
  void clear_rows();
  std::size_t row_count() const;
  // Heap bytes held so far (columns by capacity, strings, tracks, …).
  std::size_t memory_bytes() const { return trace_.memory_bytes(); }

  void reserve_kernels(std::size_t n);
  void reserve_api_calls(std::size_t n);

  // Whether freeze() must check every row (ids in range, intervals, enums) or
  // the caller already did, exactly as freeze() would: the .gscope reader
  // checks each chunk as it decodes it, to name the chunk that is bad, and a
  // second pass would cost ~10% of a load. Column lengths are checked always,
  // and every row in builds with assertions.
  enum class Rows { unchecked, checked };

  // Validates, sorts, derives. The builder is left empty (as if new).
  Trace freeze(Rows rows = Rows::unchecked);

 private:
  // freeze()'s phases, in order.
  static void resolve_sync_threads(Trace& t);  // syncs known only by their API call get its thread
  static void order_tracks(Trace& t);          // tracks into display order, track ids renumbered
  static void index_tables(Trace& t);          // per-track indexes, range depth, time bounds (sorts if needed)
  static void link_ops(Trace& t);              // correlation links both ways, kernel categories
  static void attribute_ops(Trace& t);         // launching framework op of each API call, op nesting,
                                               // categories by launching op
  static void compact_columns(Trace& t);       // compact columns (tables.h) to their frozen form

  Trace trace_;
  std::unordered_map<std::uint64_t, TrackId> gpu_tracks_, cpu_tracks_;
};

}  // namespace gpuscope
