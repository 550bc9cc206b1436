#include "trace/builder.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <type_traits>

#include "trace/budget.h"
#include "trace/fresh_memory.h"
#include "trace/kernel_category.h"
#include "trace/row_values.h"
#include "trace/time_columns.h"

namespace gpuscope {

namespace {

// [SECTION] Appending ---------------------------------------------------------------------

// A sparse column stays empty until its first non-default value, then is
// back-filled with defaults so it has one entry per row.
template <class T>
void push_sparse(std::vector<T>& column, std::size_t rows_before, T value) {
  if (column.empty()) {
    if (value == T{}) return;
    column.resize(rows_before, T{});
  }
  column.push_back(value);
}

std::uint64_t pack(std::uint32_t a, std::uint32_t b) { return (std::uint64_t{a} << 32) | b; }

// [SECTION] Times outside the plausible window ------------------------------------------------

// Drops the rows of `t` with a time outside ±2^62 ns (budget.h: beyond it the
// difference of two times overflows); returns how many. Then
// check_total_duration() refuses a table whose durations add up to more than
// 2^59 ns, so that a sum over all tables stays under 2^63.
template <class Table>
std::size_t drop_implausible_times(Table& t) {
  const std::size_t n = t.size();
  std::vector<std::uint8_t> bad;  // allocated at the first bad row
  std::size_t dropped = 0;
  t.for_each_column([&](ColumnInfo info, const auto& col) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(col)>, std::vector<TimeNs>>) {
      if (!(info.flags & kTime) || col.size() != n) return;
      // The common case first, without a branch per row: a time is
      // plausible when its top two bits are equal (budget.h), so the column
      // is when no row's bit 63 differs from its bit 62.
      std::uint64_t differ = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto v = static_cast<std::uint64_t>(col[i]);
        differ |= v ^ (v << 1);
      }
      if (!(differ >> 63)) return;
      for (std::size_t i = 0; i < n; ++i) {
        if (plausible_time(col[i])) [[likely]]
          continue;
        if (bad.empty()) bad.assign(n, 0);
        dropped += bad[i] == 0;
        bad[i] = 1;
      }
    }
  });
  if (dropped == 0) return 0;
  t.for_each_column([&](ColumnInfo, auto& col) {
    if (col.size() != n) return;  // an empty sparse or derived column
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (!bad[i]) col[kept++] = col[i];
    col.resize(kept);
  });
  return dropped;
}

// Refuses a table whose rows' durations add up to more than kMaxTableDuration
// (budget.h): then no sum of durations over a trace's tables can overflow.
template <class Table>
void check_total_duration(const Table& t, TableId id) {
  const std::vector<TimeNs>*start = nullptr, *end = nullptr;
  t.for_each_column([&](ColumnInfo info, const auto& col) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(col)>, std::vector<TimeNs>>) {
      if (info.name == "start") start = &col;
      if (info.name == "end") end = &col;
    }
  });
  if (!start || !end || start->size() != end->size()) return;
  TimeNs total = 0;
  for (std::size_t i = 0; i < start->size(); ++i) {
    // Both are within the plausible window: the difference fits.
    total += std::max<TimeNs>(0, (*end)[i] - (*start)[i]);
    if (total > kMaxTableDuration)
      throw TraceError(std::string(to_string(id)) +
                       ": the rows' durations add up to more than 2^59 ns (18 years): not a plausible trace");
  }
}

// [SECTION] Validation --------------------------------------------------------------------

[[noreturn]] void fail(std::string_view table, std::size_t row, std::string_view what) {
  throw TraceError(std::string(table) + " row " + std::to_string(row) + ": " + std::string(what));
}

template <class Table>
void check_column_lengths(const Table& t, TableId id) {
  const std::size_t n = t.size();
  if (n >= kNoRow) throw TraceError(std::string(to_string(id)) + ": too many rows (" + std::to_string(n) + ")");
  t.for_each_column([&](ColumnInfo info, const auto& col) {
    if (info.flags & kDerived) return;
    if (col.size() == n) return;
    if ((info.flags & kSparse) && col.empty()) return;
    throw TraceError(std::string(to_string(id)) + " column '" + std::string(info.name) + "' has " +
                     std::to_string(col.size()) + " rows, expected " + std::to_string(n));
  });
}

void check_intervals(std::string_view table, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) {
  for (std::size_t i = 0; i < start.size(); ++i) {
    if (end[i] < start[i]) fail(table, i, "ends before it starts");
    if (!valid_duration(start[i], end[i])) fail(table, i, "lasts 2^63 ns or more");
  }
}

void check_tracks(std::string_view table, const std::vector<TrackId>& track, const std::vector<Track>& tracks,
                  int required_kind /* -1 = any */, bool allow_resolve = false) {
  for (std::size_t i = 0; i < track.size(); ++i) {
    const TrackId id = track[i];
    if (allow_resolve && id == TraceBuilder::kResolveThroughCorrelation) continue;
    if (id >= tracks.size()) fail(table, i, "track id " + std::to_string(id) + " out of range");
    if (required_kind >= 0 && static_cast<int>(tracks[id].kind) != required_kind)
      fail(table, i,
           required_kind == 0 ? "is on a CPU track, expected a GPU track" : "is on a GPU track, expected a CPU track");
  }
}

// Every string column of `t` (flagged kString) holds ids below `count`.
template <class Table>
void check_strings(const Table& t, TableId id, std::uint32_t count) {
  t.for_each_column([&](ColumnInfo info, const auto& col) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(col)>, std::vector<StringId>>) {
      if (!(info.flags & kString)) return;
      for (std::size_t i = 0; i < col.size(); ++i)
        if (col[i] >= count) fail(to_string(id), i, std::string(info.name) + " string id out of range");
    }
  });
}

template <class T>
void check_enum(std::string_view table, std::string_view column, const std::vector<T>& v, unsigned max) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (static_cast<unsigned>(v[i]) > max) fail(table, i, std::string(column) + " value out of range");
}

void validate(const Trace& t, const TraceTables& tb, bool rows_checked) {
  tb.for_each_table([](TableId id, const auto& table) { check_column_lengths(table, id); });
#ifdef NDEBUG
  if (rows_checked) return;
#else
  (void)rows_checked;
#endif
  const auto& tracks = t.tracks();
  const std::uint32_t nstr = t.strings().size();

  check_intervals("kernels", tb.kernels.start, tb.kernels.end);
  check_tracks("kernels", tb.kernels.track, tracks, 0);

  check_intervals("memcpys", tb.memcpys.start, tb.memcpys.end);
  check_tracks("memcpys", tb.memcpys.track, tracks, 0);
  check_enum("memcpys", "kind", tb.memcpys.kind, static_cast<unsigned>(CopyKind::ptop));
  check_enum("memcpys", "src_kind", tb.memcpys.src_kind, static_cast<unsigned>(MemoryKind::managed_static));
  check_enum("memcpys", "dst_kind", tb.memcpys.dst_kind, static_cast<unsigned>(MemoryKind::managed_static));

  check_intervals("memsets", tb.memsets.start, tb.memsets.end);
  check_tracks("memsets", tb.memsets.track, tracks, 0);
  check_enum("memsets", "mem_kind", tb.memsets.mem_kind, static_cast<unsigned>(MemoryKind::managed_static));

  check_intervals("api_calls", tb.api_calls.start, tb.api_calls.end);
  check_tracks("api_calls", tb.api_calls.track, tracks, 1);
  check_enum("api_calls", "domain", tb.api_calls.domain, static_cast<unsigned>(ApiDomain::other));

  check_intervals("ranges", tb.ranges.start, tb.ranges.end);
  check_tracks("ranges", tb.ranges.track, tracks, -1);
  check_enum("ranges", "kind", tb.ranges.kind, static_cast<unsigned>(RangeKind::annotation));

  check_intervals("syncs", tb.syncs.start, tb.syncs.end);
  check_tracks("syncs", tb.syncs.track, tracks, 1, /*allow_resolve=*/true);
  check_enum("syncs", "type", tb.syncs.type, static_cast<unsigned>(SyncType::context));

  for (std::size_t i = 0; i < tb.counters.size(); ++i)
    if (tb.counters.series[i] >= t.counter_series().size()) fail("counters", i, "series id out of range");
  for (std::size_t i = 0; i < tb.memory_events.size(); ++i)
    if (tb.memory_events.series[i] >= t.counter_series().size()) fail("memory_events", i, "series id out of range");

  check_intervals("overheads", tb.overheads.start, tb.overheads.end);
  check_tracks("overheads", tb.overheads.track, tracks, 1);

  check_intervals("os_calls", tb.os_calls.start, tb.os_calls.end);
  check_tracks("os_calls", tb.os_calls.track, tracks, 1);

  tb.for_each_table([&](TableId id, const auto& table) { check_strings(table, id, nstr); });
}

// [SECTION] Sorting -----------------------------------------------------------------------

// Returns the permutation that sorts rows by (track, start, end descending,
// original order), or an empty vector if the rows are already in that order.
// A stable counting pass groups rows by track in O(n); each track's rows are
// sorted only if they arrived out of order.
std::vector<RowIndex> sort_order(const std::vector<TrackId>& track, const std::vector<TimeNs>& start,
                                 const std::vector<TimeNs>& end, std::size_t ntracks) {
  const std::size_t n = track.size();
  auto before = [&](std::size_t a, std::size_t b) {  // strict "a sorts before b", ignoring original order
    if (track[a] != track[b]) return track[a] < track[b];
    if (start[a] != start[b]) return start[a] < start[b];
    return end[a] > end[b];
  };
  bool sorted = true;
  for (std::size_t i = 1; i < n && sorted; ++i) sorted = !before(i, i - 1);
  if (sorted) return {};

  std::vector<RowIndex> pos(ntracks + 1, 0);
  for (TrackId t : track) ++pos[t + 1];
  std::partial_sum(pos.begin(), pos.end(), pos.begin());
  std::vector<RowIndex> perm(n);
  {
    std::vector<RowIndex> cursor(pos.begin(), pos.end() - 1);
    for (std::size_t i = 0; i < n; ++i) perm[cursor[track[i]]++] = static_cast<RowIndex>(i);
  }
  for (std::size_t t = 0; t < ntracks; ++t) {
    auto first = perm.begin() + pos[t], last = perm.begin() + pos[t + 1];
    if (!std::is_sorted(first, last, [&](RowIndex a, RowIndex b) { return before(a, b); }))
      std::stable_sort(first, last, [&](RowIndex a, RowIndex b) { return before(a, b); });
  }
  return perm;
}

template <class Table>
void apply_order(Table& table, const std::vector<RowIndex>& perm) {
  if (perm.empty()) return;
  table.for_each_column([&](ColumnInfo info, auto& col) {
    if (info.flags & kDerived) return;
    if (col.empty()) return;  // sparse and all default
    // A fresh column, mapped on huge pages before it is filled (the sorted
    // columns are what analysis reads: on 4 KiB pages, TLB misses cost it
    // ~30%; and one fault per 2 MiB instead of per 4 KiB here).
    std::remove_reference_t<decltype(col)> out;
    detail::prepare_column(out, col.size());
    for (std::size_t i = 0; i < perm.size(); ++i) out.push_back(col[perm[i]]);
    col.swap(out);
  });
}

template <class Table>
void sort_table(Table& table, std::size_t ntracks) {
  apply_order(table, sort_order(table.track, table.start, table.end, ntracks));
}

// Counters and memory events: by (series, time), arrival order kept for equal times.
template <class Table>
void sort_by_series(Table& c, std::size_t nseries) {
  apply_order(c, sort_order(c.series, c.time, c.time, nseries));
}

}  // namespace

// [SECTION] TraceBuilder -------------------------------------------------------------------

TraceBuilder::TraceBuilder() = default;

namespace {

// The track `key` stands for in `map`, added (make()) when it is new.
template <class Make>
TrackId find_or_add_track(std::unordered_map<std::uint64_t, TrackId>& map, std::vector<Track>& tracks,
                          std::uint64_t key, Make&& make) {
  const auto [it, inserted] = map.try_emplace(key, static_cast<TrackId>(tracks.size()));
  if (inserted) tracks.push_back(make());
  return it->second;
}

}  // namespace

TrackId TraceBuilder::gpu_track(std::uint32_t device, std::uint32_t stream) {
  return find_or_add_track(gpu_tracks_, trace_.tracks_, pack(device, stream),
                           [&] { return Track{TrackKind::gpu, device, stream, 0, 0, {}}; });
}

TrackId TraceBuilder::cpu_track(std::uint32_t pid, std::uint32_t tid) {
  return find_or_add_track(cpu_tracks_, trace_.tracks_, pack(pid, tid),
                           [&] { return Track{TrackKind::cpu, 0, 0, pid, tid, {}}; });
}

TrackId TraceBuilder::add_track(const Track& t) {
  const TrackId id = static_cast<TrackId>(trace_.tracks_.size());
  trace_.tracks_.push_back(t);
  auto& map = t.kind == TrackKind::gpu ? gpu_tracks_ : cpu_tracks_;
  map.try_emplace(t.kind == TrackKind::gpu ? pack(t.device, t.stream) : pack(t.pid, t.tid), id);
  return id;
}

namespace {

// Replaces the record of `all` whose `key` matches r's, or appends r.
template <class Record, class Key>
void put_record(std::vector<Record>& all, const Record& r, Key Record::*key) {
  for (Record& x : all)
    if (x.*key == r.*key) {
      x = r;
      return;
    }
  all.push_back(r);
}

}  // namespace

void TraceBuilder::add_device(const Device& d) { put_record(trace_.devices_, d, &Device::id); }

void TraceBuilder::add_process(const Process& p) { put_record(trace_.processes_, p, &Process::pid); }

std::uint32_t TraceBuilder::counter_series(std::string_view name, std::uint32_t device, std::string_view unit) {
  auto& all = trace_.counter_series_;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name && all[i].device == device) return static_cast<std::uint32_t>(i);
  all.push_back(CounterSeries{std::string(name), device, std::string(unit)});
  return static_cast<std::uint32_t>(all.size() - 1);
}

// Row columns of a big table grow in one step for all columns, into fresh
// buffers advised for transparent huge pages before the rows are copied in
// (detail::regrow):
// analysis reads ~10 columns of 10^7 rows at once plus scattered API calls,
// and on 4 KiB pages the TLB misses alone made it ~30% slower than on the
// same trace read back from a .gscope (whose columns are huge-page backed).
// Columns under two huge pages get no advice (it would cover other data).
template <class Table>
[[gnu::noinline]] void grow_rows(Table& table, std::size_t rows) {
  table.for_each_column([&](ColumnInfo info, auto& col) {
    if (info.flags & (kSparse | kDerived)) return;
    if (col.capacity() < rows) detail::regrow(col, rows);
  });
}

// Room for one more row: doubling, as std::vector would, but see grow_rows.
template <class Table>
void make_room(Table& table, const auto& first_column) {
  if (first_column.size() < first_column.capacity()) [[likely]]
    return;
  grow_rows(table, std::max<std::size_t>(4096, 2 * first_column.capacity()));
}

// One row into every column its Row fills (the column list's COLUMNs, in
// tables.h), a sparse one through push_sparse, each value as its column
// stores it (row_values.h).
template <class Table, class Row>
void append_row(Table& table, const Row& r) {
  const std::size_t n = table.size();
  table.for_each_row_column(r, [n](auto tag, auto& col, auto value) {
    using T = typename std::remove_cvref_t<decltype(col)>::value_type;
    if constexpr ((decltype(tag)::flags & kSparse) != 0)
      push_sparse(col, n, detail::to_column<T>(value));
    else
      col.push_back(detail::to_column<T>(value));
  });
}

void TraceBuilder::add_kernel(const KernelRow& r) {
  KernelTable& k = trace_.t_.kernels;
  make_room(k, k.start);
  append_row(k, detail::stored_row(r));
}

void TraceBuilder::add_memcpy(const MemcpyRow& r) { append_row(trace_.t_.memcpys, r); }

void TraceBuilder::add_memset(const MemsetRow& r) { append_row(trace_.t_.memsets, r); }

void TraceBuilder::add_api_call(const ApiCallRow& r) {
  ApiCallTable& a = trace_.t_.api_calls;
  make_room(a, a.start);
  append_row(a, r);
}

void TraceBuilder::add_range(const RangeRow& r) { append_row(trace_.t_.ranges, r); }

void TraceBuilder::add_sync(const SyncRow& r) { append_row(trace_.t_.syncs, r); }

void TraceBuilder::add_counter(const CounterRow& r) { append_row(trace_.t_.counters, r); }

void TraceBuilder::add_memory_event(const MemoryEventRow& r) { append_row(trace_.t_.memory_events, r); }

void TraceBuilder::add_overhead(const OverheadRow& r) { append_row(trace_.t_.overheads, r); }

void TraceBuilder::add_os_call(const OsCallRow& r) { append_row(trace_.t_.os_calls, r); }

void TraceBuilder::clear_rows() {
  trace_.t_.for_each_table(
      [](TableId, auto& table) { table.for_each_column([](ColumnInfo, auto& col) { col.clear(); }); });
}

std::size_t TraceBuilder::row_count() const {
  std::size_t n = 0;
  trace_.t_.for_each_table([&](TableId, const auto& table) { n += table.size(); });
  return n;
}

void TraceBuilder::reserve_kernels(std::size_t n) { grow_rows(trace_.t_.kernels, n); }

void TraceBuilder::reserve_api_calls(std::size_t n) { grow_rows(trace_.t_.api_calls, n); }

// [SECTION] Freeze -------------------------------------------------------------------------

namespace {

// correlation id -> API call row, dense when the ids are (CUPTI's are).
class CorrelationMap {
 public:
  explicit CorrelationMap(const ApiCallTable& api, std::uint64_t* duplicates) {
    // Branch-free, so that it vectorizes: 0 (no id) counts as no minimum.
    std::uint32_t lo = 0xffffffffu, hi = 0;
    std::size_t with_id = 0;
    for (std::uint32_t c : api.correlation) {
      lo = std::min(lo, c - 1);
      hi = std::max(hi, c);
      with_id += c != 0;
    }
    if (with_id == 0) return;
    lo += 1;
    const std::uint64_t range = std::uint64_t{hi} - lo + 1;
    if (range <= 4 * with_id + 1024) {
      base_ = lo;
      detail::prepare_column(dense_, range);
      dense_.assign(range, kNoRow);
      // The slots are far out of cache: fetch them a few rows ahead.
      RowIndex* const slots = dense_.data();
      const std::uint32_t* const corr = api.correlation.data();
      const std::size_t n = api.size();
      constexpr std::size_t kAhead = 16;
      std::uint64_t dup = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (i + kAhead < n && corr[i + kAhead] - lo < range) __builtin_prefetch(slots + (corr[i + kAhead] - lo));
        const std::uint32_t c = corr[i];
        if (c == 0) continue;
        RowIndex& slot = slots[c - lo];
        if (slot == kNoRow)
          slot = static_cast<RowIndex>(i);
        else
          ++dup;
      }
      *duplicates += dup;
    } else {
      sparse_.reserve(with_id);
      for (std::size_t i = 0; i < api.size(); ++i)
        if (api.correlation[i] != 0) sparse_.emplace_back(api.correlation[i], static_cast<RowIndex>(i));
      std::stable_sort(sparse_.begin(), sparse_.end(), [](auto& a, auto& b) { return a.first < b.first; });
      auto last = std::unique(sparse_.begin(), sparse_.end(), [](auto& a, auto& b) { return a.first == b.first; });
      *duplicates += static_cast<std::uint64_t>(sparse_.end() - last);
      sparse_.erase(last, sparse_.end());
    }
  }

  RowIndex find(std::uint32_t c) const {
    if (c == 0) return kNoRow;
    if (!dense_.empty()) return c >= base_ && c - base_ < dense_.size() ? dense_[c - base_] : kNoRow;
    auto it = std::lower_bound(sparse_.begin(), sparse_.end(), c, [](auto& e, std::uint32_t v) { return e.first < v; });
    return it != sparse_.end() && it->first == c ? it->second : kNoRow;
  }

  // The dense table as raw values, for hot loops: a loop that stores bytes
  // (which may alias anything) would otherwise reload the vector's pointer
  // on every row. Empty (size 0) when the map is sparse.
  struct Dense {
    const RowIndex* slots;
    std::uint32_t base;
    std::size_t size;
    RowIndex find(std::uint32_t c) const { return c != 0 && c - base < size ? slots[c - base] : kNoRow; }
    void prefetch(std::uint32_t c) const {
      if (c - base < size) __builtin_prefetch(slots + (c - base));
    }
  };
  Dense dense() const { return {dense_.data(), base_, dense_.size()}; }

 private:
  std::uint32_t base_ = 0;
  std::vector<RowIndex> dense_;
  std::vector<std::pair<std::uint32_t, RowIndex>> sparse_;
};

// Per-track index of one table, its time bounds and (ranges) the nesting
// depth, in one pass over rows that are expected in (track, start, longer
// first) order — the order sort_order gives. It checks that order in the same
// pass and returns false as soon as a row breaks it (the caller sorts the
// table and runs it again): a file written from a frozen trace is in order,
// and a separate check would be a second pass over ~20 bytes a row.
//
// Range depth: rows are sorted by start, longer first, so giving each range
// the lowest lane that is free when it starts puts a child one below its
// parent (and spreads overlapping, non-nested start/end ranges over as few
// lanes as possible). Time bounds: a track's first row has its earliest
// start, and the running maximum of ends is its latest end.
struct Bounds {
  bool any = false;
  TimeNs lo = 0, hi = 0;
  void add(TimeNs a, TimeNs b) {
    lo = any ? std::min(lo, a) : a;
    hi = any ? std::max(hi, b) : b;
    any = true;
  }
  void add(const Bounds& o) {
    if (o.any) add(o.lo, o.hi);
  }
};

// Trace::TrackIndex's columns (the struct is private to Trace).
struct TrackIndexColumns {
  std::vector<RowIndex>& begin;
  std::vector<TimeNs>& max_duration;
  std::vector<std::uint8_t>& ends_sorted;
  std::vector<TimeNs>& reach;
  std::vector<RowIndex>& reach_begin;
  RowIndex reach_block;
};

// First-fit lanes for many overlapping rows (index_sorted_rows): the busy
// lanes by the time they end, the free ones by number; rows come in start
// order, so a lane that has ended stays free until it is given out again.
struct LaneHeaps {
  bool active = false;
  std::vector<std::pair<TimeNs, std::size_t>> busy;  // min-heap on (end, lane)
  std::vector<std::size_t> free;                     // min-heap on lane
  std::size_t lanes = 0;
  void start(const std::vector<TimeNs>& lane_end) {
    active = true;
    lanes = lane_end.size();
    for (std::size_t l = 0; l < lanes; ++l) busy.push_back({lane_end[l], l});
    std::make_heap(busy.begin(), busy.end(), std::greater<>());
  }
  std::size_t place(TimeNs start, TimeNs end) {
    while (!busy.empty() && busy.front().first <= start) {
      std::pop_heap(busy.begin(), busy.end(), std::greater<>());
      free.push_back(busy.back().second);
      std::push_heap(free.begin(), free.end(), std::greater<>());
      busy.pop_back();
    }
    std::size_t lane = lanes;
    if (!free.empty()) {
      std::pop_heap(free.begin(), free.end(), std::greater<>());
      lane = free.back();
      free.pop_back();
    } else {
      ++lanes;
    }
    busy.push_back({end, lane});
    std::push_heap(busy.begin(), busy.end(), std::greater<>());
    return lane;
  }
};

bool index_sorted_rows(const std::vector<TrackId>& track, const std::vector<TimeNs>& start,
                       const std::vector<TimeNs>& end, std::size_t groups, TrackIndexColumns ix, std::uint16_t* depth,
                       std::vector<TimeNs>& lane_end, Bounds& bounds) {
  const std::size_t n = track.size();
  ix.begin.assign(groups + 1, 0);
  ix.max_duration.assign(groups, 0);
  ix.ends_sorted.assign(groups, 1);
  ix.reach.clear();
  ix.reach_begin.assign(groups + 1, 0);
  std::size_t next_group = 0;  // groups below this one have their begin set
  std::size_t i = 0;
  while (i < n) {
    const TrackId g = track[i];
    if (g >= groups) throw std::logic_error("freeze: track id out of range after validation");
    if (g < next_group) return false;  // a track that came before
    for (; next_group <= g; ++next_group) {
      ix.begin[next_group] = static_cast<RowIndex>(i);
      ix.reach_begin[next_group] = static_cast<RowIndex>(ix.reach.size());
    }
    const std::size_t first = i;
    TimeNs prev_end = std::numeric_limits<TimeNs>::min();
    TimeNs max_duration = 0;
    bool ends_sorted = true, in_order = true;
    if (depth) {
      // Depth: the lowest lane free at the row's start (first fit). A linear
      // scan of the lanes while there are few (nesting depth); past
      // kManyLanes (rows that overlap by the thousand: untrusted input can do
      // that) two heaps, so that a track costs O(rows log lanes), not
      // O(rows x lanes). Both give the same lanes.
      constexpr std::size_t kManyLanes = 32;
      lane_end.clear();
      LaneHeaps heaps;
      for (; i < n && track[i] == g; ++i) {
        if (i > first) in_order &= start[i] > start[i - 1] || (start[i] == start[i - 1] && end[i] <= end[i - 1]);
        max_duration = std::max(max_duration, end[i] - start[i]);
        ends_sorted &= end[i] >= prev_end;
        prev_end = std::max(prev_end, end[i]);
        std::size_t lane;
        if (!heaps.active) [[likely]] {
          lane = 0;
          while (lane < lane_end.size() && lane_end[lane] > start[i]) ++lane;
          if (lane == lane_end.size())
            lane_end.push_back(end[i]);
          else
            lane_end[lane] = end[i];
          if (lane_end.size() > kManyLanes) heaps.start(lane_end);
        } else {
          lane = heaps.place(start[i], end[i]);
        }
        depth[i] = static_cast<std::uint16_t>(std::min<std::size_t>(lane, 0xffff));
      }
    } else {
      // The first row has no predecessor to compare with: taken out of the
      // loop, whose body is then branch-free (the order check is a flag read
      // once per track).
      max_duration = std::max<TimeNs>(0, end[i] - start[i]);
      prev_end = end[i];
      for (++i; i < n && track[i] == g; ++i) {
        in_order &= start[i] > start[i - 1] || (start[i] == start[i - 1] && end[i] <= end[i - 1]);
        max_duration = std::max(max_duration, end[i] - start[i]);
        ends_sorted &= end[i] >= prev_end;
        prev_end = std::max(prev_end, end[i]);
      }
    }
    if (!in_order) return false;
    ix.max_duration[g] = max_duration;
    ix.ends_sorted[g] = ends_sorted ? 1 : 0;
    if (!ends_sorted) {
      // A second pass over the ends of a nesting track only (ranges): the
      // loops above stay as they were for the op tables.
      TimeNs reach = std::numeric_limits<TimeNs>::min();
      for (std::size_t r = first; r < i; ++r) {
        reach = std::max(reach, end[r]);
        if ((r - first + 1) % ix.reach_block == 0 || r + 1 == i) ix.reach.push_back(reach);
      }
    }
    bounds.add(start[first], prev_end);
  }
  for (; next_group <= groups; ++next_group) {
    ix.begin[next_group] = static_cast<RowIndex>(n);
    ix.reach_begin[next_group] = static_cast<RowIndex>(ix.reach.size());
  }
  ix.reach.shrink_to_fit();
  return true;
}

// What TraceBuilder::link_ops() links every op table with: the API calls'
// op columns, the correlation map, and each kernel name's category (0xff:
// not classified yet).
struct OpLinks {
  TraceTables& tb;
  const CorrelationMap& map;
  const StringTable& strings;
  std::uint8_t* category_of;
};

// The start of API row a's primary op (the earliest of its ops).
TimeNs primary_start(const TraceTables& tb, RowIndex a) {
  const RowIndex row = tb.api_calls.op_row[a];
  switch (static_cast<OpTable>(tb.api_calls.op_table[a])) {
    case OpTable::kernel: return tb.kernels.start[row];
    case OpTable::memcpy: return tb.memcpys.start[row];
    default: return tb.memsets.start[row];
  }
}

// Links the ops of `table` (kernels, memcpys or memsets) with their API
// calls: each op's API row (table.api), each API row's primary op, and
// extra(api_row, op) for its other ops; for kernels also their categories.
//
// Hot loop: raw pointers in locals (byte stores may alias any memory, so
// the compiler would reload every vector's pointer after each), ids looked
// up in the dense map when there is one, a prefetch 16 rows ahead (the
// map is ~4 bytes per API call, far out of cache), and the derived
// columns appended a block at a time (one write per value, no push_back).
template <class Table, class Extra>
void link_table(const OpLinks& links, OpTable which, Table& table, Extra&& extra) {
  constexpr bool kernels = std::is_same_v<Table, KernelTable>;
  const std::size_t n = table.size();
  table.api.clear();
  detail::prepare_column(table.api, n);
  if constexpr (kernels) {
    table.category.clear();
    detail::prepare_column(table.category, n);
  }
  const CorrelationMap::Dense d = links.map.dense();
  std::uint8_t* const ops = links.tb.api_calls.op_table.data();
  RowIndex* const rows = links.tb.api_calls.op_row.data();
  const std::uint32_t* const corr = table.correlation.data();
  const TimeNs* const start = table.start.data();
  [[maybe_unused]] const StringId* name = nullptr;
  if constexpr (kernels) name = table.name.data();
  std::uint8_t* const category_by_name = links.category_of;
  const auto which_u8 = static_cast<std::uint8_t>(which);
  // Prefetch the map's slot 32 rows ahead, and 16 rows ahead (that slot
  // has arrived by then) the API row's op_table/op_row entries.
  constexpr std::size_t kBlock = 1024, kAhead = 16;
  RowIndex api_of[kBlock];
  [[maybe_unused]] std::uint8_t category[kBlock];
  for (std::size_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::size_t k = std::min(kBlock, n - i0);
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t i = i0 + j;
      if constexpr (kernels) {
        std::uint8_t c = category_by_name[name[i]];
        if (c == 0xff) {
          c = static_cast<std::uint8_t>(classify_kernel(links.strings.get(name[i])));
          category_by_name[name[i]] = c;
        }
        category[j] = c;
      }
      RowIndex a;
      if (d.size) {
        if (i + 2 * kAhead < n) d.prefetch(corr[i + 2 * kAhead]);
        if (i + kAhead < n) {
          const RowIndex ahead = d.find(corr[i + kAhead]);
          if (ahead != kNoRow) {
            __builtin_prefetch(ops + ahead);
            __builtin_prefetch(rows + ahead);
          }
        }
        a = d.find(corr[i]);
      } else {
        a = links.map.find(corr[i]);
      }
      api_of[j] = a;
      if (a == kNoRow) continue;
      const auto row = static_cast<RowIndex>(i);
      if (ops[a] == static_cast<std::uint8_t>(OpTable::none)) {
        ops[a] = which_u8;
        rows[a] = row;
      } else if (start[i] < primary_start(links.tb, a)) {
        extra(a, OpRef{static_cast<OpTable>(ops[a]), rows[a]});
        ops[a] = which_u8;
        rows[a] = row;
      } else {
        extra(a, OpRef{which, row});
      }
    }
    table.api.insert(table.api.end(), api_of, api_of + k);
    if constexpr (kernels) table.category.insert(table.category.end(), category, category + k);
  }
}

}  // namespace

// Syncs whose thread is known only through their API call.
void TraceBuilder::resolve_sync_threads(Trace& t) {
  TraceTables& tb = t.t_;
  bool any = false;
  for (TrackId id : tb.syncs.track) any |= id == kResolveThroughCorrelation;
  if (any) {
    std::uint64_t dup = 0;
    const CorrelationMap map(tb.api_calls, &dup);
    TrackId unknown = kNoRow;
    for (std::size_t i = 0; i < tb.syncs.size(); ++i) {
      if (tb.syncs.track[i] != kResolveThroughCorrelation) continue;
      const RowIndex api = map.find(tb.syncs.correlation[i]);
      if (api != kNoRow) {
        tb.syncs.track[i] = tb.api_calls.track[api];
      } else {
        if (unknown == kNoRow) {
          unknown = static_cast<TrackId>(t.tracks_.size());
          t.tracks_.push_back(Track{TrackKind::cpu, 0, 0, 0, 0, "unknown thread"});
        }
        tb.syncs.track[i] = unknown;
      }
    }
  }
}

// Tracks into display order: GPU (device, stream), then CPU (pid, tid).
void TraceBuilder::order_tracks(Trace& t) {
  TraceTables& tb = t.t_;
  const std::size_t ntracks = t.tracks_.size();
  std::vector<TrackId> order(ntracks);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](TrackId a, TrackId b) {
    const Track& x = t.tracks_[a];
    const Track& y = t.tracks_[b];
    if (x.kind != y.kind) return x.kind < y.kind;
    if (x.kind == TrackKind::gpu) return std::tie(x.device, x.stream) < std::tie(y.device, y.stream);
    return std::tie(x.pid, x.tid) < std::tie(y.pid, y.tid);
  });
  bool identity = true;
  for (std::size_t i = 0; i < ntracks; ++i) identity &= order[i] == i;
  if (!identity) {
    std::vector<TrackId> remap(ntracks);
    std::vector<Track> sorted(ntracks);
    for (std::size_t i = 0; i < ntracks; ++i) {
      remap[order[i]] = static_cast<TrackId>(i);
      sorted[i] = std::move(t.tracks_[order[i]]);
    }
    t.tracks_.swap(sorted);
    tb.for_each_table([&](TableId, auto& table) {
      if constexpr (requires { table.track; })
        for (TrackId& x : table.track) x = remap[x];
    });
  }
}

// Per-track indexes, range depth and time bounds; sorts a table only if
// the index pass finds its rows out of order (and indexes it again).
void TraceBuilder::index_tables(Trace& t) {
  TraceTables& tb = t.t_;
  const std::size_t ntracks = t.tracks_.size();
  std::vector<TimeNs> lane_end;
  detail::prepare_column(tb.ranges.depth, tb.ranges.size());
  tb.ranges.depth.assign(tb.ranges.size(), 0);
  Bounds all;
  for (int ti = 0; ti < kTableCount; ++ti) {
    const auto table = static_cast<TableId>(ti);
    const bool by_series = table == TableId::counters || table == TableId::memory_events;
    const std::size_t groups = by_series ? t.counter_series_.size() : ntracks;
    std::uint16_t* depth = table == TableId::ranges ? tb.ranges.depth.data() : nullptr;
    const detail::TimeColumns tc = detail::time_columns(tb, table);
    Trace::TrackIndex& tix = t.index_[ti];
    const TrackIndexColumns index{tix.begin, tix.max_duration, tix.ends_sorted,
                                  tix.reach, tix.reach_begin,  Trace::kReachBlock};
    Bounds bounds;
    if (!index_sorted_rows(*tc.track_rows, *tc.start, *tc.end, groups, index, depth, lane_end, bounds)) {
      tb.for_each_table([&](TableId which, auto& rows) {
        if (which != table) return;
        if constexpr (requires { rows.track; })
          sort_table(rows, ntracks);
        else
          sort_by_series(rows, groups);
      });
      bounds = Bounds{};
      if (!index_sorted_rows(*tc.track_rows, *tc.start, *tc.end, groups, index, depth, lane_end, bounds))
        throw std::logic_error("freeze: rows out of order after sorting");
    }
    all.add(bounds);
    // GPU ops come first in the table order: the GPU bounds are the bounds
    // once they are done.
    if (table == TableId::memsets) {
      static_assert(static_cast<int>(TableId::kernels) < static_cast<int>(TableId::memsets) &&
                    static_cast<int>(TableId::memcpys) < static_cast<int>(TableId::memsets));
      if (all.any) {
        t.gpu_begin_time_ = all.lo;
        t.gpu_end_time_ = all.hi;
      }
    }
  }
  if (all.any) {
    t.begin_time_ = all.lo;
    t.end_time_ = all.hi;
  }
}

// Correlation links, both ways, and (in the same pass over the kernels)
// kernel categories, classified once per distinct name. The derived
// columns are appended row by row into mapped memory: an assign() first
// would be one more pass over ~50 MB per 10M kernels.
void TraceBuilder::link_ops(Trace& t) {
  TraceTables& tb = t.t_;
  std::uint64_t duplicates = 0;
  const CorrelationMap map(tb.api_calls, &duplicates);
  if (duplicates) t.meta_.set_stat("trace.duplicate_api_correlations", duplicates);
  auto& api = tb.api_calls;
  detail::prepare_column(api.op_table, api.size());
  detail::prepare_column(api.op_row, api.size());
  api.op_table.assign(api.size(), static_cast<std::uint8_t>(OpTable::none));
  api.op_row.assign(api.size(), kNoRow);
  std::vector<std::uint8_t> category_of(t.strings_.size(), 0xff);  // by name id
  const OpLinks links{tb, map, t.strings_, category_of.data()};
  auto extra = [&](RowIndex api_row, OpRef op) { t.extra_ops_.push_back({api_row, op}); };
  link_table(links, OpTable::kernel, tb.kernels, extra);
  link_table(links, OpTable::memcpy, tb.memcpys, extra);
  link_table(links, OpTable::memset, tb.memsets, extra);
  std::stable_sort(t.extra_ops_.begin(), t.extra_ops_.end(),
                   [](const Trace::ExtraOp& a, const Trace::ExtraOp& b) { return a.api_row < b.api_row; });
  t.extra_ops_.shrink_to_fit();
}

// The launching op of every API call: one sweep per CPU thread over its API
// calls and its op ranges, both in start order, with the ops open at the
// call on a stack (the innermost on top). The same sweep gives each op its
// parent. Of ranges that overlap without nesting the later one is taken as
// the inner one (the op table counts them: OpSummary::overlapping).
// Then kernels whose name misleads take the category of their launching op
// (classify_by_op), classified once per (op name, category).
void TraceBuilder::attribute_ops(Trace& t) {
  TraceTables& tb = t.t_;
  RangeTable& rg = tb.ranges;
  ApiCallTable& api = tb.api_calls;
  t.cpu_op_domain_ = t.strings_.find("cpu_op");
  t.user_annotation_domain_ = t.strings_.find("user_annotation");
  rg.parent.assign(rg.size(), kNoRow);
  api.op_range.clear();  // filled when some call has an op
  tb.kernels.category_rule.clear();
  if (rg.size() == 0) return;

  std::vector<RowIndex> open;
  for (TrackId track = 0; track < t.tracks_.size(); ++track) {
    if (t.tracks_[track].kind != TrackKind::cpu) continue;
    const RowRange ranges = t.rows_of(TableId::ranges, track);
    if (ranges.empty()) continue;
    const RowRange calls = t.rows_of(TableId::api_calls, track);
    open.clear();
    auto push = [&](RowIndex r) {
      if (!t.is_op_range(r)) return;
      // Ranges are in start order, longer first: one that starts with the
      // top is inside it.
      while (!open.empty() && rg.end[open.back()] <= rg.start[r] && rg.start[open.back()] < rg.start[r])
        open.pop_back();
      if (!open.empty()) rg.parent[r] = open.back();
      open.push_back(r);
    };
    RowIndex next = ranges.begin;
    for (RowIndex a = calls.begin; a < calls.end; ++a) {
      const TimeNs s = api.start[a];
      while (next < ranges.end && rg.start[next] <= s) push(next++);
      while (!open.empty() && rg.end[open.back()] < s) open.pop_back();
      if (open.empty()) continue;
      if (api.op_range.empty()) api.op_range.assign(api.size(), kNoRow);
      api.op_range[a] = open.back();
    }
    while (next < ranges.end) push(next++);
  }

  KernelTable& k = tb.kernels;
  std::vector<std::uint8_t> by_op;  // (op name id * categories + category) -> category, 0xff = not yet
  // Per string: -1 not decided, 0 neither, 1 a pad op, 2 a layout op.
  std::vector<std::int8_t> pad_name;
  // The category a pad or layout op around op r gives its copies and fills
  // (the innermost such op decides), `other` if no op around it is one.
  auto inside_pad_op = [&](RowIndex r) {
    for (int depth = 0; r != kNoRow && depth < 8; r = rg.parent[r], ++depth) {
      if (pad_name.empty()) pad_name.assign(t.strings_.size(), -1);
      std::int8_t& p = pad_name[rg.name[r]];
      if (p < 0) {
        const std::string_view n = t.strings_.get(rg.name[r]);
        p = is_pad_op(n) ? 1 : is_layout_copy_op(n) ? 2 : 0;
      }
      if (p) return p == 1 ? KernelCategory::padding : KernelCategory::transpose;
    }
    return KernelCategory::other;
  };
  for (std::size_t i = 0; i < k.size(); ++i) {
    const RowIndex a = k.api[i];
    if (a == kNoRow) continue;
    const RowIndex r = api.op_range_at(a);
    if (r == kNoRow) continue;
    const std::size_t key = std::size_t{rg.name[r]} * kKernelCategoryCount + k.category[i];
    if (by_op.empty()) by_op.assign(std::size_t{t.strings_.size()} * kKernelCategoryCount, 0xff);
    std::uint8_t& c = by_op[key];
    if (c == 0xff) c = static_cast<std::uint8_t>(classify_by_op(t.strings_.get(rg.name[r]), k.category_at(i)));
    std::uint8_t placed = c;
    auto rule = CategoryRuleKind::launching_op;
    // PyTorch pads with generic fill and copy kernels under its pad ops
    // (aten::constant_pad_nd > aten::copy_), and changes a tensor's layout
    // with a copy under aten::contiguous or aten::reshape (they copy only a
    // tensor that is not contiguous): an enclosing pad or layout op names them.
    if (placed == static_cast<std::uint8_t>(KernelCategory::memory) ||
        placed == static_cast<std::uint8_t>(KernelCategory::elementwise))
      if (const KernelCategory around = inside_pad_op(r); around != KernelCategory::other) {
        placed = static_cast<std::uint8_t>(around);
        rule = around == KernelCategory::padding ? CategoryRuleKind::pad_op : CategoryRuleKind::layout_op;
      }
    if (placed == k.category[i]) continue;
    if (k.category_rule.empty()) k.category_rule.assign(k.size(), 0);
    k.category[i] = placed;
    k.category_rule[i] = static_cast<std::uint8_t>(rule);
  }
}

namespace {

// A column kept per name, compacted by its table's name column (a template,
// so that tables without one are never looked at for it).
template <class Table, class Column>
void compact_by_name(const Table& table, Column& col) {
  if constexpr (requires { table.name; }) col.compact(table.name);
}

}  // namespace

// Compact columns (trace/tables.h) to their frozen form: a table's track to
// where each track's rows begin (the index), a callback id to one per name.
void TraceBuilder::compact_columns(Trace& t) {
  t.t_.for_each_table([&](TableId id, auto& table) {
    const std::vector<RowIndex>& begin = t.index_[static_cast<int>(id)].begin;
    table.for_each_column([&](ColumnInfo, auto& col) {
      if constexpr (requires { col.block_first; })
        col.compact(begin);
      else if constexpr (requires { col.by_name; })
        compact_by_name(table, col);
    });
  });
}

Trace TraceBuilder::freeze(Rows rows) {
  Trace t = std::move(trace_);
  trace_ = Trace();
  gpu_tracks_.clear();
  cpu_tracks_.clear();
  TraceTables& tb = t.t_;

  tb.for_each_table([&](TableId id, auto& table) {
    if (const std::size_t n = drop_implausible_times(table))
      t.meta_.add_stat("trace.out_of_window." + std::string(to_string(id)), n);
    check_total_duration(table, id);
  });
  if (const std::uint64_t n = t.strings_.truncated()) t.meta_.add_stat("trace.truncated_names", n);
  validate(t, tb, rows == Rows::checked);

  resolve_sync_threads(t);
  order_tracks(t);
  index_tables(t);
  link_ops(t);
  attribute_ops(t);
  compact_columns(t);
  // A column left empty (a sparse one no row needed, a derived one cleared)
  // gives back the room reserved for it: it would count in memory_bytes().
  tb.for_each_table([](TableId, auto& table) {
    table.for_each_column([](ColumnInfo, auto& col) {
      if (col.empty() && col.capacity()) std::remove_cvref_t<decltype(col)>().swap(col);
    });
  });

  return t;
}

}  // namespace gpuscope
