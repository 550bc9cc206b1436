// The event tables of a trace: one struct-of-arrays table per event kind.
//
// [SECTION] Column conventions
// [SECTION] Column lists (each table's columns, declared once)
// [SECTION] Generated rows and tables
// [SECTION] Rows and tables
//
// Every table is a set of equally long std::vector columns; row i of a table is
// element i of each column. Tables are append-only while a TraceBuilder owns
// them and sorted by (track, start) once frozen, so the rows of one track are
// contiguous (Trace::rows_of gives the range).
//
// Each table's columns are declared once, in a column list (a macro taking
// two generators, one line per column, as Perfetto's trace processor declares
// its tables). From that list come the Row a producer fills and hands to
// TraceBuilder::add_*, the Table's std::vector columns, its `name_at(i)`
// accessors, its `for_each_column` (name and flags, in list order: the file
// format, sorting and tests walk it and never name columns one by one) and the
// builder's append. Adding a column is one line in its table's list, plus the
// code that reads it.
//
// Optional columns ("sparse" below) stay EMPTY when every row has the default
// value (0): a trace without CUDA graphs carries no graph-id bytes. Read them
// through the `*_at(i)` accessors, which return the default for an empty column.
//
// Derived columns are computed at freeze (and again after loading a file); they
// are no field of the Row, and the native file stores only the stored columns.
//
// Compact columns ("grouped" and "by name" below) are full while a builder
// owns the table; a frozen table keeps less than a value per row: a grouped
// column (a table's track, by which its rows are sorted) where each value's
// rows begin, a by-name column (an API call's callback id) one value per name
// when it is a function of the row's name. Read them through `*_at(i)`; the
// file format, copies and exports expand them with detail::expand_rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "trace/types.h"

namespace gpuscope {

// [SECTION] Column conventions --------------------------------------------------------------

enum ColumnFlags : std::uint8_t {
  kStored = 1,    // saved in .gscope files
  kSparse = 2,    // may be empty, meaning "all rows are the default"
  kDerived = 4,   // computed at freeze; not saved, not in the Row
  kTime = 8,      // a timestamp in ns (delta-encoded by the file format)
  kString = 16,   // a StringId (checked against the string table wherever rows are checked)
  kGrouped = 32,  // the rows are sorted by it once frozen: a frozen table keeps where each value's rows begin
  kByName = 64,   // a frozen table keeps one value per `name` instead, when it is a function of the name
};

struct ColumnInfo {
  std::string_view name;
  std::uint8_t flags;
};

// A column's flags as a type, for code that must decide at compile time (the
// builder's append): Table::for_each_row_column passes one.
template <std::uint8_t Flags>
struct ColumnTag {
  static constexpr std::uint8_t flags = Flags;
};

inline constexpr std::uint32_t kNoId = 0xffffffffu;  // "not applicable" for stream/event ids

template <class T>
inline T sparse_at(const std::vector<T>& column, std::size_t row) {
  return column.empty() ? T{} : column[row];
}

namespace detail {

// A kGrouped column: the rows' values while a builder owns the table; once
// frozen (compact()), only where each value's rows begin and the value of
// every 1024th row, so that a row's value is one or two loads of a small
// table (a binary search only in a block that spans several values).
template <class T>
struct GroupedColumn : std::vector<T> {
  static constexpr unsigned kBlockShift = 10;
  std::vector<std::uint32_t> group_begin;  // rows of value v: [group_begin[v], group_begin[v + 1])
  std::vector<T> block_first;              // the value of row b << kBlockShift; then of the last row

  // Reads must say which form they want (value(i)); writes go to the rows.
  T& operator[](std::size_t i) { return std::vector<T>::operator[](i); }
  const T& operator[](std::size_t i) const = delete;

  bool compacted() const { return this->empty() && !block_first.empty(); }
  T value(std::size_t i) const {
    if (!compacted()) return std::vector<T>::operator[](i);
    const std::size_t b = i >> kBlockShift;
    const T lo = block_first[b], hi = block_first[b + 1];
    if (lo == hi) return lo;
    const auto* g = group_begin.data();
    return static_cast<T>(std::upper_bound(g + lo + 1, g + hi + 1, i) - g - 1);
  }
  // Drops the rows' values, keeping `begin` (the rows of value v start at
  // begin[v]; the rows are sorted by value).
  void compact(std::span<const std::uint32_t> begin) {
    const std::size_t n = this->size();
    if (n == 0) return;
    group_begin.assign(begin.begin(), begin.end());
    block_first.clear();
    for (std::size_t r = 0; r < n; r += std::size_t{1} << kBlockShift)
      block_first.push_back(std::vector<T>::operator[](r));
    block_first.push_back(std::vector<T>::operator[](n - 1));
    std::vector<T>().swap(*this);
  }
  std::size_t compact_bytes() const {
    return group_begin.capacity() * sizeof(std::uint32_t) + block_first.capacity() * sizeof(T);
  }
  void clear_compact() {
    std::vector<std::uint32_t>().swap(group_begin);
    std::vector<T>().swap(block_first);
  }
};

// A kByName column: the rows' values while a builder owns the table; once
// frozen, one value per name id when every row of a name has the same value.
template <class T>
struct ByNameColumn : std::vector<T> {
  std::vector<T> by_name;  // indexed by the row's `name`

  // Reads must say which form they want (the table's `*_at(i)`); writes go to the rows.
  T& operator[](std::size_t i) { return std::vector<T>::operator[](i); }
  const T& operator[](std::size_t i) const = delete;

  bool compacted() const { return this->empty() && !by_name.empty(); }
  // Keeps one value per name instead of the rows when that is a function of
  // the name and takes less room; else keeps the rows.
  void compact(const std::vector<std::uint32_t>& name) {
    const std::size_t n = this->size();
    if (n == 0 || name.size() != n) return;
    const std::uint32_t names = *std::max_element(name.begin(), name.end()) + 1;
    if (names >= n) return;
    std::vector<T> value(names);
    std::vector<std::uint8_t> seen(names, 0);
    const T* v = this->data();
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t k = name[i];
      if (!seen[k]) {
        seen[k] = 1;
        value[k] = v[i];
      } else if (value[k] != v[i]) {
        return;
      }
    }
    by_name.swap(value);
    std::vector<T>().swap(*this);
  }
  std::size_t compact_bytes() const { return by_name.capacity() * sizeof(T); }
  void clear_compact() { std::vector<T>().swap(by_name); }
};

template <class T, std::uint8_t Flags>
using ColumnStorage = std::conditional_t<(Flags & kGrouped) != 0, GroupedColumn<T>,
                                         std::conditional_t<(Flags & kByName) != 0, ByNameColumn<T>, std::vector<T>>>;

template <class C>
constexpr bool is_compact_column = requires(const C& c) {
  c.compacted();
};

// Row i of a column as the Row's type (an enumeration, not its byte); the
// default for an empty sparse column; a compact column's value for the row.
template <class T, std::uint8_t Flags, class C, class Table>
inline T column_at(const C& column, std::size_t row, T fallback, const Table& table) {
  if constexpr ((Flags & kGrouped) != 0) {
    return static_cast<T>(column.value(row));
  } else if constexpr ((Flags & kByName) != 0) {
    if (column.empty()) return column.by_name.empty() ? fallback : static_cast<T>(column.by_name[table.name[row]]);
    return static_cast<T>(column.data()[row]);
  } else {
    if constexpr ((Flags & kSparse) != 0) {
      if (column.empty()) return fallback;
    }
    return static_cast<T>(column[row]);
  }
}

// Rows [begin, begin + n) of a column as a builder held them (a compact one
// expanded): for the file writer, copies and exports.
template <class Table, class C>
void expand_rows(const Table& table, const C& column, std::size_t begin, std::size_t n,
                 std::vector<typename C::value_type>& out) {
  out.resize(n);
  if constexpr (requires { column.block_first; }) {
    if (column.compacted()) {
      for (std::size_t i = 0; i < n; ++i) out[i] = column.value(begin + i);
      return;
    }
  } else if constexpr (requires { column.by_name; }) {
    if (column.compacted()) {
      for (std::size_t i = 0; i < n; ++i) out[i] = column.by_name[table.name[begin + i]];
      return;
    }
  }
  if (column.empty())  // sparse, every row the default
    std::fill(out.begin(), out.end(), typename C::value_type{});
  else
    std::copy_n(column.data() + begin, n, out.data());
}

// A column's stored rows as a vector, for comparing tables row by row: a
// compact one expanded, an empty sparse one empty.
template <class Table, class C>
std::vector<typename C::value_type> stored_rows(const Table& table, const C& column) {
  std::vector<typename C::value_type> out(column.begin(), column.end());
  if constexpr (is_compact_column<C>) {
    if (column.compacted()) expand_rows(table, column, 0, table.size(), out);
  }
  return out;
}

// Every compact column of a table back to its rows (a frozen table's copy
// handed to a builder).
template <class Table>
void expand_columns(Table& table) {
  const std::size_t n = table.size();
  table.for_each_column([&](ColumnInfo, auto& col) {
    if constexpr (is_compact_column<std::remove_cvref_t<decltype(col)>>) {
      if (col.compacted()) {
        std::vector<typename std::remove_cvref_t<decltype(col)>::value_type> rows;
        expand_rows(table, col, 0, n, rows);
        static_cast<std::vector<typename std::remove_cvref_t<decltype(col)>::value_type>&>(col).swap(rows);
      }
      col.clear_compact();
    }
  });
}

template <class T>
constexpr bool is_zero(T v) {
  return v == T{};
}

}  // namespace detail

// [SECTION] Column lists ---------------------------------------------------------------------
// One line per column, in file and display order:
//   COLUMN(name, Type, Stored, flags, default)   a field of the Row, a column of the Table
//   DERIVED(name, Type, Stored, flags, default)  a column of the Table only (flags has kDerived)
// Type is the Row's field and what `name_at(i)` returns; Stored the column's
// element type (an enumeration is stored as its byte; a u32 stored in 16 bits
// is clamped to 65535 on append). A stored sparse column's default is 0: files
// leave an all-zero column out.
//
// Comments must be /* */ ones (a // comment would swallow the line's `\`).
//
// clang-format off

#define GPUSCOPE_KERNEL_COLUMNS(COLUMN, DERIVED)                                                                       \
  COLUMN( start,         TimeNs,           TimeNs,        kStored | kTime,             0)                              \
  COLUMN( end,           TimeNs,           TimeNs,        kStored | kTime,             0)                              \
  COLUMN( track,         TrackId,          TrackId,       kStored | kGrouped,          0) /* GPU (device, stream) */   \
  COLUMN( correlation,   std::uint32_t,    std::uint32_t, kStored,                     0) /* 0 = none */               \
  COLUMN( name,          StringId,         StringId,      kStored | kString,           0) /* demangled, shown */       \
  COLUMN( mangled,       StringId,         StringId,      kStored | kSparse | kString, 0) /* if known and not `name` */\
  COLUMN( grid_x,        std::uint32_t,    std::uint32_t, kStored,                     0)                              \
  COLUMN( grid_y,        std::uint32_t,    std::uint16_t, kStored,                     0) /* CUDA limits it to 65535 */\
  COLUMN( grid_z,        std::uint32_t,    std::uint16_t, kStored,                     0)                              \
  COLUMN( block_x,       std::uint32_t,    std::uint16_t, kStored,                     0)                              \
  COLUMN( block_y,       std::uint32_t,    std::uint16_t, kStored,                     0)                              \
  COLUMN( block_z,       std::uint32_t,    std::uint16_t, kStored,                     0)                              \
  COLUMN( registers,     std::uint16_t,    std::uint16_t, kStored,                     0) /* per thread */             \
  COLUMN( static_smem,   std::uint32_t,    std::uint32_t, kStored,                     0) /* bytes per block */        \
  COLUMN( dynamic_smem,  std::uint32_t,    std::uint32_t, kStored,                     0) /* bytes per block */        \
  COLUMN( graph_id,      std::uint32_t,    std::uint32_t, kStored | kSparse,           0) /* CUDA graph, 0 = none */   \
  COLUMN( graph_node_id, std::uint64_t,    std::uint64_t, kStored | kSparse,           0) /* node within that graph */ \
  DERIVED(category,      KernelCategory,   std::uint8_t,  kDerived,                    {})                             \
  DERIVED(category_rule, CategoryRuleKind, std::uint8_t,  kDerived | kSparse,          {}) /* what placed it there */  \
  DERIVED(api,           RowIndex,         RowIndex,      kDerived,                    kNoRow) /* launching API call */

#define GPUSCOPE_MEMCPY_COLUMNS(COLUMN, DERIVED)                                                                       \
  COLUMN( start,         TimeNs,        TimeNs,        kStored | kTime,   0)                                           \
  COLUMN( end,           TimeNs,        TimeNs,        kStored | kTime,   0)                                           \
  COLUMN( track,         TrackId,       TrackId,       kStored | kGrouped, 0) /* GPU track */                          \
  COLUMN( correlation,   std::uint32_t, std::uint32_t, kStored,           0)                                           \
  COLUMN( bytes,         std::uint64_t, std::uint64_t, kStored,           0)                                           \
  COLUMN( kind,          CopyKind,      std::uint8_t,  kStored,           CopyKind::unknown)                           \
  COLUMN( src_kind,      MemoryKind,    std::uint8_t,  kStored,           MemoryKind::unknown)                         \
  COLUMN( dst_kind,      MemoryKind,    std::uint8_t,  kStored,           MemoryKind::unknown)                         \
  COLUMN( graph_id,      std::uint32_t, std::uint32_t, kStored | kSparse, 0)                                           \
  COLUMN( graph_node_id, std::uint64_t, std::uint64_t, kStored | kSparse, 0)                                           \
  DERIVED(api,           RowIndex,      RowIndex,      kDerived,          kNoRow)

#define GPUSCOPE_MEMSET_COLUMNS(COLUMN, DERIVED)                                                                       \
  COLUMN( start,         TimeNs,        TimeNs,        kStored | kTime,   0)                                           \
  COLUMN( end,           TimeNs,        TimeNs,        kStored | kTime,   0)                                           \
  COLUMN( track,         TrackId,       TrackId,       kStored | kGrouped, 0) /* GPU track */                          \
  COLUMN( correlation,   std::uint32_t, std::uint32_t, kStored,           0)                                           \
  COLUMN( bytes,         std::uint64_t, std::uint64_t, kStored,           0)                                           \
  COLUMN( value,         std::uint32_t, std::uint32_t, kStored | kSparse, 0)                                           \
  COLUMN( mem_kind,      MemoryKind,    std::uint8_t,  kStored,           MemoryKind::unknown)                         \
  COLUMN( graph_id,      std::uint32_t, std::uint32_t, kStored | kSparse, 0)                                           \
  COLUMN( graph_node_id, std::uint64_t, std::uint64_t, kStored | kSparse, 0)                                           \
  DERIVED(api,           RowIndex,      RowIndex,      kDerived,          kNoRow)

// The derived op_table/op_row: the GPU op the call launched (the first one, if
// it launched several, as a cudaGraphLaunch does; Trace::ops_of gives them
// all). op_range: the innermost framework op (a range, see
// Trace::is_op_range) on the call's thread that encloses its start, kNoRow if
// none; empty while no call has one.
#define GPUSCOPE_API_CALL_COLUMNS(COLUMN, DERIVED)                                                                     \
  COLUMN( start,       TimeNs,        TimeNs,        kStored | kTime,    0)                                            \
  COLUMN( end,         TimeNs,        TimeNs,        kStored | kTime,    0)                                            \
  COLUMN( track,       TrackId,       TrackId,       kStored | kGrouped, 0) /* CPU track (pid, tid) */                 \
  COLUMN( correlation, std::uint32_t, std::uint32_t, kStored,            0)                                            \
  COLUMN( name,        StringId,      StringId,      kStored | kString,  0) /* e.g. "cudaLaunchKernel" */              \
  COLUMN( domain,      ApiDomain,     std::uint8_t,  kStored,            ApiDomain::runtime)                           \
  COLUMN( cbid,        std::uint32_t, std::uint32_t, kStored | kSparse | kByName, 0) /* CUPTI callback id, 0 none */  \
  COLUMN( status,      std::int32_t,  std::int32_t,  kStored | kSparse,  0) /* return code (0 = success) */            \
  DERIVED(op_table,    OpTable,       std::uint8_t,  kDerived,           OpTable::none)                                \
  DERIVED(op_row,      RowIndex,      RowIndex,      kDerived,           kNoRow)                                       \
  DERIVED(op_range,    RowIndex,      RowIndex,      kDerived | kSparse, kNoRow)

// input_dims, input_types, concrete_inputs: what a framework op was called
// with, as the source recorded it (PyTorch's "Input Dims", "Input type",
// "Concrete Inputs": compact JSON text). collective: what the source recorded
// of the collective a communication op ran (Kineto's "Collective name", "In
// msg nelems", "Out msg nelems", "dtype", "Group size", "Process Group Name"),
// as a compact JSON object. 0 = not recorded. The derived parent: the
// enclosing op range on the same track (kNoRow at the top, and for rows that
// are not ops; see Trace::is_op_range).
#define GPUSCOPE_RANGE_COLUMNS(COLUMN, DERIVED)                                                                        \
  COLUMN( start,           TimeNs,        TimeNs,        kStored | kTime,             0) /* end == start for marks */  \
  COLUMN( end,             TimeNs,        TimeNs,        kStored | kTime,             0)                               \
  COLUMN( track,           TrackId,       TrackId,       kStored | kGrouped,          0) /* CPU; GPU for GPU-side */   \
  COLUMN( name,            StringId,      StringId,      kStored | kString,           0)                               \
  COLUMN( domain,          StringId,      StringId,      kStored | kString,           0) /* NVTX domain, "cpu_op", … */\
  COLUMN( kind,            RangeKind,     std::uint8_t,  kStored,                     RangeKind::push_pop)             \
  COLUMN( color,           std::uint32_t, std::uint32_t, kStored | kSparse,           0) /* ARGB, 0 = none */          \
  COLUMN( payload,         std::int64_t,  std::int64_t,  kStored | kSparse,           0) /* NVTX payload if integral */\
  COLUMN( correlation,     std::uint32_t, std::uint32_t, kStored | kSparse,           0) /* GPU-side or external */    \
  COLUMN( input_dims,      StringId,      StringId,      kStored | kSparse | kString, 0)                               \
  COLUMN( input_types,     StringId,      StringId,      kStored | kSparse | kString, 0)                               \
  COLUMN( concrete_inputs, StringId,      StringId,      kStored | kSparse | kString, 0)                               \
  COLUMN( collective,      StringId,      StringId,      kStored | kSparse | kString, 0)                               \
  COLUMN( sequence,        std::int64_t,  std::int64_t,  kStored | kSparse,           0) /* seq + 1: sequence_number */\
  COLUMN( fwd_thread,      std::uint32_t, std::uint32_t, kStored | kSparse,           0) /* PyTorch's number, 0 none */\
  DERIVED(depth,           std::uint16_t, std::uint16_t, kDerived,                    0) /* nesting, 0 = top */        \
  DERIVED(parent,          RowIndex,      RowIndex,      kDerived,                    kNoRow)

// A host thread blocked until GPU work finished (CUPTI synchronization
// records; Kineto's "cuda_sync" events, which it draws on GPU tracks). track:
// the waiting thread's (see TraceBuilder::kResolveThroughCorrelation);
// correlation: of the API call that waited (cudaStreamSynchronize, …); stream:
// the stream waited on (stream syncs) or waiting (stream-wait-event); event:
// the CUDA event waited on (event syncs).
#define GPUSCOPE_SYNC_COLUMNS(COLUMN, DERIVED)                                                                         \
  COLUMN( start,       TimeNs,        TimeNs,        kStored | kTime, 0)                                               \
  COLUMN( end,         TimeNs,        TimeNs,        kStored | kTime, 0)                                               \
  COLUMN( track,       TrackId,       TrackId,       kStored | kGrouped, 0)                                            \
  COLUMN( correlation, std::uint32_t, std::uint32_t, kStored,         0)                                               \
  COLUMN( type,        SyncType,      std::uint8_t,  kStored,         SyncType::unknown)                               \
  COLUMN( device,      std::uint32_t, std::uint32_t, kStored,         kNoDevice)                                       \
  COLUMN( stream,      std::uint32_t, std::uint32_t, kStored,         kNoId)                                           \
  COLUMN( event,       std::uint32_t, std::uint32_t, kStored,         kNoId)

#define GPUSCOPE_COUNTER_COLUMNS(COLUMN, DERIVED)                                                                      \
  COLUMN( time,   TimeNs,        TimeNs,        kStored | kTime, 0)                                                    \
  COLUMN( series, std::uint32_t, std::uint32_t, kStored,         0) /* index into Trace::counter_series() */           \
  COLUMN( value,  double,        double,        kStored,         0)

#define GPUSCOPE_MEMORY_EVENT_COLUMNS(COLUMN, DERIVED)                                                                 \
  COLUMN( time,    TimeNs,        TimeNs,        kStored | kTime,   0)                                                 \
  COLUMN( series,  std::uint32_t, std::uint32_t, kStored,           0) /* index into Trace::counter_series() */        \
  COLUMN( bytes,   std::int64_t,  std::int64_t,  kStored,           0) /* > 0 allocated, < 0 freed */                  \
  COLUMN( address, std::uint64_t, std::uint64_t, kStored | kSparse, 0) /* 0 = unknown */

#define GPUSCOPE_OS_CALL_COLUMNS(COLUMN, DERIVED)                                                                      \
  COLUMN( start,   TimeNs,        TimeNs,        kStored | kTime,   0)                                                 \
  COLUMN( end,     TimeNs,        TimeNs,        kStored | kTime,   0)                                                 \
  COLUMN( track,   TrackId,       TrackId,       kStored | kGrouped, 0) /* CPU track (pid, tid) */                     \
  COLUMN( name,    StringId,      StringId,      kStored | kString, 0) /* e.g. "pthread_mutex_lock" */                 \
  COLUMN( status,  std::int64_t,  std::int64_t,  kStored | kSparse, 0) /* the return value, as recorded */             \
  COLUMN( nesting, std::uint16_t, std::uint16_t, kStored | kSparse, 0) /* 0 = outermost, 1 = inside another, … */

#define GPUSCOPE_OVERHEAD_COLUMNS(COLUMN, DERIVED)                                                                     \
  COLUMN( start, TimeNs,   TimeNs,   kStored | kTime,   0)                                                             \
  COLUMN( end,   TimeNs,   TimeNs,   kStored | kTime,   0)                                                             \
  COLUMN( track, TrackId,  TrackId,  kStored | kGrouped, 0) /* CPU track the overhead happened on */                   \
  COLUMN( kind,  StringId, StringId, kStored | kString, 0) /* e.g. "buffer_flush", "cupti_resource" */

// clang-format on

// [SECTION] Generated rows and tables -------------------------------------------------------
// GPUSCOPE_TABLE(Row, Table, LIST, first) defines, from a column list:
//   struct Row    one field per COLUMN, with its default;
//   struct Table  one std::vector per column; size() (the rows of `first`);
//                 name_at(i) for every column; for_each_column(f), calling
//                 f(ColumnInfo, column) in list order; for_each_row_column(r, f),
//                 calling f(ColumnTag<flags>, column, r.name) for each COLUMN.

#define GPUSCOPE_ROW_FIELD(name, Type, Stored, flags, def) Type name = def;
#define GPUSCOPE_NO_ROW_FIELD(name, Type, Stored, flags, def)
#define GPUSCOPE_COLUMN_VECTOR(name, Type, Stored, flags, def) detail::ColumnStorage<Stored, (flags)> name;
#define GPUSCOPE_COLUMN_AT(name, Type, Stored, flags, def) \
  Type name##_at(std::size_t i) const { return detail::column_at<Type, (flags)>(name, i, def, *this); }
#define GPUSCOPE_VISIT_COLUMN(name, Type, Stored, flags, def) f(ColumnInfo{#name, (flags)}, s.name);
#define GPUSCOPE_VISIT_ROW_COLUMN(name, Type, Stored, flags, def) f(ColumnTag<(flags)>{}, name, r.name);
#define GPUSCOPE_NO_ROW_COLUMN(name, Type, Stored, flags, def)
#define GPUSCOPE_CHECK_COLUMN(name, Type, Stored, flags, def)                                 \
  static_assert(!((flags)&kDerived), #name ": a COLUMN is not derived (list it as DERIVED)"); \
  static_assert(!((flags)&kSparse) || detail::is_zero<Type>(def), #name ": a sparse default is 0");
#define GPUSCOPE_CHECK_DERIVED(name, Type, Stored, flags, def) \
  static_assert(((flags)&kDerived) && !((flags)&kStored), #name ": a DERIVED column is derived, not stored");

#define GPUSCOPE_TABLE(Row, Table, LIST, first)               \
  struct Row {                                                \
    LIST(GPUSCOPE_ROW_FIELD, GPUSCOPE_NO_ROW_FIELD)           \
  };                                                          \
  struct Table {                                              \
    LIST(GPUSCOPE_COLUMN_VECTOR, GPUSCOPE_COLUMN_VECTOR)      \
    LIST(GPUSCOPE_CHECK_COLUMN, GPUSCOPE_CHECK_DERIVED)       \
                                                              \
    std::size_t size() const { return first.size(); }         \
    LIST(GPUSCOPE_COLUMN_AT, GPUSCOPE_COLUMN_AT)              \
                                                              \
    template <class F>                                        \
    void for_each_column(F&& f) {                             \
      columns(*this, f);                                      \
    }                                                         \
    template <class F>                                        \
    void for_each_column(F&& f) const {                       \
      columns(*this, f);                                      \
    }                                                         \
    template <class Self, class F>                            \
    static void columns(Self& s, F&& f) {                     \
      LIST(GPUSCOPE_VISIT_COLUMN, GPUSCOPE_VISIT_COLUMN)      \
    }                                                         \
    template <class F>                                        \
    void for_each_row_column(const Row& r, F&& f) {           \
      LIST(GPUSCOPE_VISIT_ROW_COLUMN, GPUSCOPE_NO_ROW_COLUMN) \
    }                                                         \
  };

// [SECTION] Rows and tables ------------------------------------------------------------------
// KernelRow, KernelTable, …: see the column lists above. A Row's fields left at
// their defaults mean "unknown".

GPUSCOPE_TABLE(KernelRow, KernelTable, GPUSCOPE_KERNEL_COLUMNS, start)
GPUSCOPE_TABLE(MemcpyRow, MemcpyTable, GPUSCOPE_MEMCPY_COLUMNS, start)
GPUSCOPE_TABLE(MemsetRow, MemsetTable, GPUSCOPE_MEMSET_COLUMNS, start)
GPUSCOPE_TABLE(ApiCallRow, ApiCallTable, GPUSCOPE_API_CALL_COLUMNS, start)
GPUSCOPE_TABLE(RangeRow, RangeTable, GPUSCOPE_RANGE_COLUMNS, start)
// PyTorch's autograd link (Kineto's "Sequence number" and "Fwd thread id"):
// a forward op and the backward ops of the node it created share the
// sequence number; a backward op also names the forward op's thread by
// PyTorch's own thread number (not the OS tid), 0 on forward ops. The
// `sequence` column stores the number + 1 so that 0, its sparse default, is
// none (PyTorch's numbers start at 0): write it with stored_sequence(), read
// it with sequence_number().
inline std::int64_t stored_sequence(std::int64_t seq) { return seq >= 0 && seq < INT64_MAX ? seq + 1 : 0; }
// -1 = none (as is a stored value below 1, from a damaged file).
inline std::int64_t sequence_number(const RangeTable& t, std::size_t i) {
  const std::int64_t v = t.sequence_at(i);
  return v > 0 ? v - 1 : -1;
}

GPUSCOPE_TABLE(SyncRow, SyncTable, GPUSCOPE_SYNC_COLUMNS, start)

// Counters are sorted by (series, time); `start` naming is kept out on purpose:
// a counter sample is a point.
GPUSCOPE_TABLE(CounterRow, CounterTable, GPUSCOPE_COUNTER_COLUMNS, time)

// An allocation or a free (Kineto's `[memory]` events, CUPTI's memory
// activity). `series` is the counter series whose value the event changed —
// the device's (or the host's) allocated bytes —, so the events of one device
// are the rows of its series (Trace::rows_of(TableId::memory_events, series)).
// Sorted by (series, time), as counters are.
GPUSCOPE_TABLE(MemoryEventRow, MemoryEventTable, GPUSCOPE_MEMORY_EVENT_COLUMNS, time)

// An OS runtime call (Nsight Systems' OSRT_API: read, ioctl, pthread_mutex_lock,
// …). Kept apart from ApiCallRow, the CUDA API calls: it launches no GPU work,
// and every analysis of launches, syncs and host overhead reads CUDA calls only.
// Nested calls (`nesting` > 0) are rows of their own, so a call's time may lie
// inside another's: sums by name count it in each, as Nsight Systems' osrt_sum
// does.
GPUSCOPE_TABLE(OsCallRow, OsCallTable, GPUSCOPE_OS_CALL_COLUMNS, start)

GPUSCOPE_TABLE(OverheadRow, OverheadTable, GPUSCOPE_OVERHEAD_COLUMNS, start)

// Host samples (where a thread was, taken at a rate: gpuscope's Python
// sampler, Nsight Systems' CPU sampling) are marks of this domain on the
// thread's track, the stack as the name: frames outermost first, separated
// by ";".
inline constexpr std::string_view kHostSampleDomain = "host_sample";
inline constexpr char kHostSampleFrameSeparator = ';';

}  // namespace gpuscope
