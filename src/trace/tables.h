// The event tables of a trace: one struct-of-arrays table per event kind.
//
// [SECTION] Column conventions
// [SECTION] Row value types (what producers append)
// [SECTION] Tables
//
// Every table is a set of equally long std::vector columns; row i of a table is
// element i of each column. Tables are append-only while a TraceBuilder owns
// them and sorted by (track, start) once frozen, so the rows of one track are
// contiguous (Trace::rows_of gives the range).
//
// Optional columns ("sparse" below) stay EMPTY when every row has the default
// value (0): a trace without CUDA graphs carries no graph-id bytes. Read them
// through the `*_at(i)` accessors, which return the default for an empty column.
//
// Derived columns are computed at freeze (and again after loading a file); the
// native file stores only the stored columns. Each table lists its columns in
// `for_each_column` so that generic code (the file format, sorting, tests) never
// has to name them one by one.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/types.h"

namespace gpuscope {

// [SECTION] Column conventions --------------------------------------------------------------

enum ColumnFlags : std::uint8_t {
  kStored = 1,   // saved in .gscope files
  kSparse = 2,   // may be empty, meaning "all rows are 0"
  kDerived = 4,  // computed at freeze; not saved
  kTime = 8,     // a timestamp in ns (delta-encoded by the file format)
};

struct ColumnInfo {
  std::string_view name;
  std::uint8_t flags;
};

template <class T>
inline T sparse_at(const std::vector<T>& column, std::size_t row) {
  return column.empty() ? T{} : column[row];
}

// [SECTION] Row value types -----------------------------------------------------------------
// Plain values a producer fills and hands to TraceBuilder::add_*. Fields left at
// their defaults mean "unknown".

struct KernelRow {
  TimeNs start = 0, end = 0;
  TrackId track = 0;              // a GPU track (device, stream)
  std::uint32_t correlation = 0;  // 0 = none
  StringId name = 0;              // demangled (display) name
  StringId mangled = 0;           // mangled name if known and different from `name`
  std::uint32_t grid_x = 0, grid_y = 0, grid_z = 0;
  std::uint32_t block_x = 0, block_y = 0, block_z = 0;
  std::uint16_t registers = 0;                      // per thread
  std::uint32_t static_smem = 0, dynamic_smem = 0;  // bytes per block
  std::uint32_t graph_id = 0;                       // CUDA graph, 0 = not launched from a graph
  std::uint64_t graph_node_id = 0;                  // node within that graph
};

struct MemcpyRow {
  TimeNs start = 0, end = 0;
  TrackId track = 0;  // GPU track
  std::uint32_t correlation = 0;
  std::uint64_t bytes = 0;
  CopyKind kind = CopyKind::unknown;
  MemoryKind src_kind = MemoryKind::unknown, dst_kind = MemoryKind::unknown;
  std::uint32_t graph_id = 0;
  std::uint64_t graph_node_id = 0;
};

struct MemsetRow {
  TimeNs start = 0, end = 0;
  TrackId track = 0;  // GPU track
  std::uint32_t correlation = 0;
  std::uint64_t bytes = 0;
  std::uint32_t value = 0;
  MemoryKind mem_kind = MemoryKind::unknown;
  std::uint32_t graph_id = 0;
  std::uint64_t graph_node_id = 0;
};

struct ApiCallRow {
  TimeNs start = 0, end = 0;
  TrackId track = 0;  // CPU track (pid, tid)
  std::uint32_t correlation = 0;
  StringId name = 0;  // e.g. "cudaLaunchKernel"
  ApiDomain domain = ApiDomain::runtime;
  std::uint32_t cbid = 0;   // CUPTI callback id, 0 if unknown
  std::int32_t status = 0;  // return code (0 = success)
};

struct RangeRow {
  TimeNs start = 0, end = 0;  // end == start for marks
  TrackId track = 0;          // CPU track normally; GPU track for GPU-side annotations
  StringId name = 0;
  StringId domain = 0;  // NVTX domain or the source category ("cpu_op", "user_annotation", …)
  RangeKind kind = RangeKind::push_pop;
  std::uint32_t color = 0;        // ARGB, 0 = none
  std::int64_t payload = 0;       // NVTX payload when integral, 0 = none
  std::uint32_t correlation = 0;  // correlation of a GPU-side annotation or external id, 0 = none
  // What a framework op was called with, as the source recorded it (PyTorch's
  // "Input Dims", "Input type", "Concrete Inputs": compact JSON text), 0 = not recorded.
  StringId input_dims = 0, input_types = 0, concrete_inputs = 0;
  // What the source recorded of the collective a communication op ran
  // (Kineto's "Collective name", "In msg nelems", "Out msg nelems", "dtype",
  // "Group size", "Process Group Name"), as a compact JSON object, 0 = none.
  StringId collective = 0;
  // PyTorch's autograd link (Kineto's "Sequence number" and "Fwd thread id"):
  // a forward op and the backward ops of the node it created share the
  // sequence number; a backward op also names the forward op's thread by
  // PyTorch's own thread number (not the OS tid), 0 on forward ops.
  std::int64_t sequence = -1;  // -1 = none
  std::uint32_t fwd_thread = 0;
};

// Host samples (where a thread was, taken at a rate: gpuscope's Python
// sampler, Nsight Systems' CPU sampling) are marks of this domain on the
// thread's track, the stack as the name: frames outermost first, separated
// by ";".
inline constexpr std::string_view kHostSampleDomain = "host_sample";
inline constexpr char kHostSampleFrameSeparator = ';';

inline constexpr std::uint32_t kNoId = 0xffffffffu;  // "not applicable" for stream/event ids

// A host thread blocked until GPU work finished (CUPTI synchronization
// records; Kineto's "cuda_sync" events, which it draws on GPU tracks).
struct SyncRow {
  TimeNs start = 0, end = 0;
  TrackId track = 0;              // CPU track of the waiting thread (see TraceBuilder::kResolveThroughCorrelation)
  std::uint32_t correlation = 0;  // of the API call that waited (cudaStreamSynchronize, …)
  SyncType type = SyncType::unknown;
  std::uint32_t device = kNoDevice;
  std::uint32_t stream = kNoId;  // stream waited on (stream syncs) or waiting (stream-wait-event)
  std::uint32_t event = kNoId;   // CUDA event waited on (event syncs)
};

struct CounterRow {
  TimeNs time = 0;
  std::uint32_t series = 0;  // index into Trace::counter_series()
  double value = 0;
};

// An allocation or a free (Kineto's `[memory]` events, CUPTI's memory
// activity). `series` is the counter series whose value the event changed —
// the device's (or the host's) allocated bytes —, so the events of one device
// are the rows of its series (Trace::rows_of(TableId::memory_events, series)).
struct MemoryEventRow {
  TimeNs time = 0;
  std::uint32_t series = 0;   // index into Trace::counter_series()
  std::int64_t bytes = 0;     // > 0 allocated, < 0 freed
  std::uint64_t address = 0;  // 0 = unknown
};

// An OS runtime call (Nsight Systems' OSRT_API: read, ioctl, pthread_mutex_lock,
// …). Kept apart from ApiCallRow, the CUDA API calls: it launches no GPU work,
// and every analysis of launches, syncs and host overhead reads CUDA calls only.
struct OsCallRow {
  TimeNs start = 0, end = 0;
  TrackId track = 0;          // CPU track (pid, tid)
  StringId name = 0;          // the function, e.g. "pthread_mutex_lock"
  std::int64_t status = 0;    // the call's return value, as the source recorded it
  std::uint16_t nesting = 0;  // 0 = outermost; 1 = called inside another traced OS call, …
};

struct OverheadRow {
  TimeNs start = 0, end = 0;
  TrackId track = 0;  // CPU track the overhead happened on
  StringId kind = 0;  // e.g. "buffer_flush", "cupti_resource", "activity_buffer_request"
};

// [SECTION] Tables -----------------------------------------------------------------------------

struct KernelTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<std::uint32_t> correlation;
  std::vector<StringId> name;
  std::vector<StringId> mangled;  // sparse
  std::vector<std::uint32_t> grid_x;
  std::vector<std::uint16_t> grid_y, grid_z;  // CUDA limits them to 65535
  std::vector<std::uint16_t> block_x, block_y, block_z;
  std::vector<std::uint16_t> registers;
  std::vector<std::uint32_t> static_smem, dynamic_smem;
  std::vector<std::uint32_t> graph_id;       // sparse
  std::vector<std::uint64_t> graph_node_id;  // sparse
  // derived
  std::vector<std::uint8_t> category;       // KernelCategory
  std::vector<std::uint8_t> category_rule;  // CategoryRuleKind: what placed the kernel in its category
  std::vector<RowIndex> api;                // launching API call, kNoRow if none

  std::size_t size() const { return start.size(); }
  KernelCategory category_at(std::size_t i) const { return static_cast<KernelCategory>(category[i]); }
  CategoryRuleKind category_rule_at(std::size_t i) const {
    return static_cast<CategoryRuleKind>(sparse_at(category_rule, i));
  }
  StringId mangled_at(std::size_t i) const { return sparse_at(mangled, i); }
  std::uint32_t graph_id_at(std::size_t i) const { return sparse_at(graph_id, i); }
  std::uint64_t graph_node_id_at(std::size_t i) const { return sparse_at(graph_node_id, i); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"correlation", kStored}, s.correlation);
    f(ColumnInfo{"name", kStored}, s.name);
    f(ColumnInfo{"mangled", kStored | kSparse}, s.mangled);
    f(ColumnInfo{"grid_x", kStored}, s.grid_x);
    f(ColumnInfo{"grid_y", kStored}, s.grid_y);
    f(ColumnInfo{"grid_z", kStored}, s.grid_z);
    f(ColumnInfo{"block_x", kStored}, s.block_x);
    f(ColumnInfo{"block_y", kStored}, s.block_y);
    f(ColumnInfo{"block_z", kStored}, s.block_z);
    f(ColumnInfo{"registers", kStored}, s.registers);
    f(ColumnInfo{"static_smem", kStored}, s.static_smem);
    f(ColumnInfo{"dynamic_smem", kStored}, s.dynamic_smem);
    f(ColumnInfo{"graph_id", kStored | kSparse}, s.graph_id);
    f(ColumnInfo{"graph_node_id", kStored | kSparse}, s.graph_node_id);
    f(ColumnInfo{"category", kDerived}, s.category);
    f(ColumnInfo{"category_rule", kDerived | kSparse}, s.category_rule);
    f(ColumnInfo{"api", kDerived}, s.api);
  }
};

struct MemcpyTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<std::uint32_t> correlation;
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint8_t> kind, src_kind, dst_kind;  // CopyKind, MemoryKind, MemoryKind
  std::vector<std::uint32_t> graph_id;                 // sparse
  std::vector<std::uint64_t> graph_node_id;            // sparse
  std::vector<RowIndex> api;                           // derived

  std::size_t size() const { return start.size(); }
  CopyKind kind_at(std::size_t i) const { return static_cast<CopyKind>(kind[i]); }
  MemoryKind src_kind_at(std::size_t i) const { return static_cast<MemoryKind>(src_kind[i]); }
  MemoryKind dst_kind_at(std::size_t i) const { return static_cast<MemoryKind>(dst_kind[i]); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"correlation", kStored}, s.correlation);
    f(ColumnInfo{"bytes", kStored}, s.bytes);
    f(ColumnInfo{"kind", kStored}, s.kind);
    f(ColumnInfo{"src_kind", kStored}, s.src_kind);
    f(ColumnInfo{"dst_kind", kStored}, s.dst_kind);
    f(ColumnInfo{"graph_id", kStored | kSparse}, s.graph_id);
    f(ColumnInfo{"graph_node_id", kStored | kSparse}, s.graph_node_id);
    f(ColumnInfo{"api", kDerived}, s.api);
  }
};

struct MemsetTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<std::uint32_t> correlation;
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint32_t> value;          // sparse
  std::vector<std::uint8_t> mem_kind;        // MemoryKind
  std::vector<std::uint32_t> graph_id;       // sparse
  std::vector<std::uint64_t> graph_node_id;  // sparse
  std::vector<RowIndex> api;                 // derived

  std::size_t size() const { return start.size(); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"correlation", kStored}, s.correlation);
    f(ColumnInfo{"bytes", kStored}, s.bytes);
    f(ColumnInfo{"value", kStored | kSparse}, s.value);
    f(ColumnInfo{"mem_kind", kStored}, s.mem_kind);
    f(ColumnInfo{"graph_id", kStored | kSparse}, s.graph_id);
    f(ColumnInfo{"graph_node_id", kStored | kSparse}, s.graph_node_id);
    f(ColumnInfo{"api", kDerived}, s.api);
  }
};

struct ApiCallTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<std::uint32_t> correlation;
  std::vector<StringId> name;
  std::vector<std::uint8_t> domain;  // ApiDomain
  std::vector<std::uint32_t> cbid;   // sparse
  std::vector<std::int32_t> status;  // sparse
  // derived: the GPU op this call launched (first one, if it launched several,
  // as a cudaGraphLaunch does; Trace::ops_of gives them all)
  std::vector<std::uint8_t> op_table;  // OpTable
  std::vector<RowIndex> op_row;
  // derived, sparse: the innermost framework op (a range, see
  // Trace::is_op_range) on the call's thread that encloses its start, kNoRow
  // if none; empty while no call has one (read with op_range_at)
  std::vector<RowIndex> op_range;

  std::size_t size() const { return start.size(); }
  ApiDomain domain_at(std::size_t i) const { return static_cast<ApiDomain>(domain[i]); }
  std::int32_t status_at(std::size_t i) const { return sparse_at(status, i); }
  RowIndex op_range_at(std::size_t i) const { return op_range.empty() ? kNoRow : op_range[i]; }
  std::uint32_t cbid_at(std::size_t i) const { return sparse_at(cbid, i); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"correlation", kStored}, s.correlation);
    f(ColumnInfo{"name", kStored}, s.name);
    f(ColumnInfo{"domain", kStored}, s.domain);
    f(ColumnInfo{"cbid", kStored | kSparse}, s.cbid);
    f(ColumnInfo{"status", kStored | kSparse}, s.status);
    f(ColumnInfo{"op_table", kDerived}, s.op_table);
    f(ColumnInfo{"op_row", kDerived}, s.op_row);
    f(ColumnInfo{"op_range", kDerived | kSparse}, s.op_range);
  }
};

struct RangeTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<StringId> name;
  std::vector<StringId> domain;
  std::vector<std::uint8_t> kind;          // RangeKind
  std::vector<std::uint32_t> color;        // sparse
  std::vector<std::int64_t> payload;       // sparse
  std::vector<std::uint32_t> correlation;  // sparse
  std::vector<StringId> input_dims;        // sparse: JSON text of the op's input shapes
  std::vector<StringId> input_types;       // sparse: JSON text of the op's input dtypes
  std::vector<StringId> concrete_inputs;   // sparse: JSON text of the op's scalar inputs
  std::vector<StringId> collective;        // sparse: JSON object text of its collective's arguments
  std::vector<std::int64_t> sequence;      // sparse: PyTorch's sequence number + 1, 0 = none (read sequence_at)
  std::vector<std::uint32_t> fwd_thread;   // sparse: a backward op's forward thread (PyTorch's number), 0 = none
  std::vector<std::uint16_t> depth;        // derived: nesting depth on its track, 0 = outermost
  // derived: the enclosing op range on the same track (kNoRow at the top, and
  // for rows that are not ops; see Trace::is_op_range)
  std::vector<RowIndex> parent;

  std::size_t size() const { return start.size(); }
  RangeKind kind_at(std::size_t i) const { return static_cast<RangeKind>(kind[i]); }
  std::uint32_t color_at(std::size_t i) const { return sparse_at(color, i); }
  std::int64_t payload_at(std::size_t i) const { return sparse_at(payload, i); }
  std::uint32_t correlation_at(std::size_t i) const { return sparse_at(correlation, i); }
  StringId input_dims_at(std::size_t i) const { return sparse_at(input_dims, i); }
  StringId input_types_at(std::size_t i) const { return sparse_at(input_types, i); }
  StringId concrete_inputs_at(std::size_t i) const { return sparse_at(concrete_inputs, i); }
  StringId collective_at(std::size_t i) const { return sparse_at(collective, i); }
  std::int64_t sequence_at(std::size_t i) const {  // -1 = none (as is a stored value below 1, from a damaged file)
    const std::int64_t v = sparse_at(sequence, i);
    return v > 0 ? v - 1 : -1;
  }
  std::uint32_t fwd_thread_at(std::size_t i) const { return sparse_at(fwd_thread, i); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"name", kStored}, s.name);
    f(ColumnInfo{"domain", kStored}, s.domain);
    f(ColumnInfo{"kind", kStored}, s.kind);
    f(ColumnInfo{"color", kStored | kSparse}, s.color);
    f(ColumnInfo{"payload", kStored | kSparse}, s.payload);
    f(ColumnInfo{"correlation", kStored | kSparse}, s.correlation);
    f(ColumnInfo{"input_dims", kStored | kSparse}, s.input_dims);
    f(ColumnInfo{"input_types", kStored | kSparse}, s.input_types);
    f(ColumnInfo{"concrete_inputs", kStored | kSparse}, s.concrete_inputs);
    f(ColumnInfo{"collective", kStored | kSparse}, s.collective);
    f(ColumnInfo{"sequence", kStored | kSparse}, s.sequence);
    f(ColumnInfo{"fwd_thread", kStored | kSparse}, s.fwd_thread);
    f(ColumnInfo{"depth", kDerived}, s.depth);
    f(ColumnInfo{"parent", kDerived}, s.parent);
  }
};

struct SyncTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<std::uint32_t> correlation;
  std::vector<std::uint8_t> type;     // SyncType
  std::vector<std::uint32_t> device;  // kNoDevice if unknown
  std::vector<std::uint32_t> stream;  // kNoId if n/a
  std::vector<std::uint32_t> event;   // kNoId if n/a

  std::size_t size() const { return start.size(); }
  SyncType type_at(std::size_t i) const { return static_cast<SyncType>(type[i]); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"correlation", kStored}, s.correlation);
    f(ColumnInfo{"type", kStored}, s.type);
    f(ColumnInfo{"device", kStored}, s.device);
    f(ColumnInfo{"stream", kStored}, s.stream);
    f(ColumnInfo{"event", kStored}, s.event);
  }
};

// Counters are sorted by (series, time); `start` naming is kept out on purpose:
// a counter sample is a point.
struct CounterTable {
  std::vector<TimeNs> time;
  std::vector<std::uint32_t> series;
  std::vector<double> value;

  std::size_t size() const { return time.size(); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"time", kStored | kTime}, s.time);
    f(ColumnInfo{"series", kStored}, s.series);
    f(ColumnInfo{"value", kStored}, s.value);
  }
};

// Memory events are sorted by (series, time), as counters are.
struct MemoryEventTable {
  std::vector<TimeNs> time;
  std::vector<std::uint32_t> series;
  std::vector<std::int64_t> bytes;
  std::vector<std::uint64_t> address;  // sparse

  std::size_t size() const { return time.size(); }
  std::uint64_t address_at(std::size_t i) const { return sparse_at(address, i); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"time", kStored | kTime}, s.time);
    f(ColumnInfo{"series", kStored}, s.series);
    f(ColumnInfo{"bytes", kStored}, s.bytes);
    f(ColumnInfo{"address", kStored | kSparse}, s.address);
  }
};

// OS runtime calls. Nested calls (`nesting` > 0) are rows of their own, so a
// call's time may lie inside another's: sums by name count it in each, as
// Nsight Systems' osrt_sum does.
struct OsCallTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<StringId> name;
  std::vector<std::int64_t> status;    // sparse
  std::vector<std::uint16_t> nesting;  // sparse

  std::size_t size() const { return start.size(); }
  std::int64_t status_at(std::size_t i) const { return sparse_at(status, i); }
  std::uint16_t nesting_at(std::size_t i) const { return sparse_at(nesting, i); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"name", kStored}, s.name);
    f(ColumnInfo{"status", kStored | kSparse}, s.status);
    f(ColumnInfo{"nesting", kStored | kSparse}, s.nesting);
  }
};

struct OverheadTable {
  std::vector<TimeNs> start, end;
  std::vector<TrackId> track;
  std::vector<StringId> kind;

  std::size_t size() const { return start.size(); }

  template <class F>
  void for_each_column(F&& f) {
    columns(*this, f);
  }
  template <class F>
  void for_each_column(F&& f) const {
    columns(*this, f);
  }
  template <class Self, class F>
  static void columns(Self& s, F&& f) {
    f(ColumnInfo{"start", kStored | kTime}, s.start);
    f(ColumnInfo{"end", kStored | kTime}, s.end);
    f(ColumnInfo{"track", kStored}, s.track);
    f(ColumnInfo{"kind", kStored}, s.kind);
  }
};

}  // namespace gpuscope
