// Section payloads: metadata records, row chunks, the footer index.
//
// [SECTION] Records (length-prefixed, so later versions can append fields)
// [SECTION] Strings, tracks, devices, processes, counter series, meta
// [SECTION] Contents
// [SECTION] Row chunks: encoding
// [SECTION] Row chunks: decoding and checking
// [SECTION] Footer
#include "store/detail/sections.h"

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>

#include "store/detail/column_codec.h"
#include "trace/budget.h"

namespace gpuscope::store_detail {

namespace {

// [SECTION] Records ---------------------------------------------------------------------------
// A record is varint length + fields. A reader takes the fields it knows and
// ignores the rest, so a field appended by a later version does not break it.

template <class F>
void write_record(ByteWriter& out, ByteWriter& tmp, F&& fields) {
  tmp.clear();
  fields(tmp);
  out.varint(tmp.size());
  out.raw(tmp.data(), tmp.size());
}

ByteCursor read_record(ByteCursor& in) {
  const std::uint64_t len = in.varint();
  const std::uint8_t* p = in.take(len);
  return ByteCursor(p, static_cast<std::size_t>(len));
}

// Counts are checked against the bytes left (every record or string is at
// least one byte), so a corrupt count never reserves more than the payload.
std::uint64_t read_count(ByteCursor& in, const char* what) {
  const std::uint64_t n = in.varint();
  if (n > in.remaining()) throw FormatError(std::string(what) + " count exceeds the payload");
  return n;
}

void expect_end(const ByteCursor& in, const char* what) {
  if (!in.done()) throw FormatError(std::string(what) + ": trailing bytes");
}

// The count of `items`, then a record of each: fields(w, item).
template <class Items, class F>
void write_records(ByteWriter& out, const Items& items, F&& fields) {
  ByteWriter tmp;
  out.varint(items.size());
  for (const auto& item : items) write_record(out, tmp, [&](ByteWriter& w) { fields(w, item); });
}

// A count of records (`what` names one in errors), read(r) for each, then
// the end of the payload (`whats` names them).
template <class F>
void read_records(ByteCursor& in, const char* what, const char* whats, F&& read) {
  const std::uint64_t count = read_count(in, what);
  for (std::uint64_t i = 0; i < count; ++i) {
    ByteCursor r = read_record(in);
    read(r);
  }
  expect_end(in, whats);
}

// What an earlier file lost, after the meta record's other fields (docs/format.md, "meta").
void encode_damage(const FileDamage& d, ByteWriter& w) {
  w.u8(d.truncated ? 1 : 0);
  w.varint(d.file_bytes);
  w.varint(d.intact_bytes);
  w.varint(d.bytes_lost);
  w.varint(d.damaged_sections);
  w.varint(kTableCount);
  for (const TableLoss& t : d.tables) {
    w.varint(t.loaded);
    w.varint(t.lost);
    w.u8(static_cast<std::uint8_t>(t.count));
  }
  w.varint(d.problems.size());
  for (const std::string& p : d.problems) w.str(p);
}

FileDamage decode_damage(ByteCursor& r) {
  FileDamage d;
  d.truncated = (r.u8() & 1) != 0;
  d.file_bytes = r.varint();
  d.intact_bytes = r.varint();
  d.bytes_lost = r.varint();
  d.damaged_sections = r.varint();
  const std::uint64_t tables = read_count(r, "damage table");
  for (std::uint64_t t = 0; t < tables; ++t) {
    TableLoss loss;
    loss.loaded = r.varint();
    loss.lost = r.varint();
    const std::uint8_t count = r.u8();
    // A kind of count from a later version says at least that it is not exact.
    loss.count =
        count <= static_cast<std::uint8_t>(LossCount::estimate) ? static_cast<LossCount>(count) : LossCount::estimate;
    if (t < static_cast<std::uint64_t>(kTableCount)) d.tables[t] = loss;
  }
  const std::uint64_t nproblems = read_count(r, "problem");
  d.problems.reserve(nproblems);
  for (std::uint64_t i = 0; i < nproblems; ++i) d.problems.emplace_back(r.str());
  return d;
}

}  // namespace

// [SECTION] Strings, tracks, devices, processes, counter series, meta -------------------------

void encode_strings(const StringTable& table, StringId first, StringId end, ByteWriter& out) {
  out.varint(first);
  out.varint(end - first);
  for (StringId id = first; id < end; ++id) out.varint(table.get(id).size());
  for (StringId id = first; id < end; ++id) {
    const std::string_view s = table.get(id);
    out.raw(s.data(), s.size());
  }
}

void decode_strings(ByteCursor in, TraceBuilder& b) {
  const std::uint64_t first = in.varint();
  if (first != b.strings().size())
    throw FormatError("strings start at id " + std::to_string(first) + ", expected " +
                      std::to_string(b.strings().size()));
  const std::uint64_t count = read_count(in, "string");
  if (count + first >= 0xffffffffu) throw FormatError("too many strings");
  std::vector<std::uint64_t> lengths(count);
  std::uint64_t total = 0;
  for (auto& len : lengths) {
    len = in.varint();
    if (len > in.remaining()) throw FormatError("string length exceeds the payload");
    total += len;
  }
  if (total != in.remaining()) throw FormatError("string lengths do not add up to the payload");
  const std::string_view bytes(reinterpret_cast<const char*>(in.position()), in.remaining());
  StringTable& st = b.strings_mutable();
  // Many strings at once (a whole trace): one bulk append and one rehash.
  // A few (a live capture's chunk): intern each, which also proves the file
  // holds no duplicates.
  // Names longer than the readers keep (trace/budget.h) are cut by
  // append_raw(), which appends each as its own id even where two cut ones
  // become equal.
  const bool long_names =
      std::any_of(lengths.begin(), lengths.end(), [](std::uint64_t n) { return n > kMaxNameBytes; });
  if (count >= 1024 || count * 4 >= st.size() || long_names) {
    if (!st.append_raw(bytes, lengths)) throw FormatError("string lengths do not add up to the payload");
    return;
  }
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const StringId expected = st.size();
    if (st.intern(bytes.substr(at, lengths[i])) != expected) throw FormatError("duplicate string");
    at += lengths[i];
  }
}

void encode_tracks(std::span<const Track> tracks, std::span<const TrackId> ids, ByteWriter& out) {
  write_records(out, ids, [&](ByteWriter& w, TrackId id) {
    const Track& t = tracks[id];
    w.varint(id);
    w.u8(static_cast<std::uint8_t>(t.kind));
    w.varint(t.device);
    w.varint(t.stream);
    w.varint(t.pid);
    w.varint(t.tid);
    w.str(t.name);
  });
}

void decode_tracks(ByteCursor in, TraceBuilder& b) {
  read_records(in, "track", "tracks", [&](ByteCursor& r) {
    const std::uint64_t id = r.varint();
    Track t;
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(TrackKind::cpu)) throw FormatError("unknown track kind");
    t.kind = static_cast<TrackKind>(kind);
    t.device = r.varint32("track device");
    t.stream = r.varint32("track stream");
    t.pid = r.varint32("track pid");
    t.tid = r.varint32("track tid");
    t.name = r.str();
    const std::size_t have = b.tracks().size();
    if (id == have) {
      if (have >= TraceBuilder::kResolveThroughCorrelation) throw FormatError("too many tracks");
      b.add_track(t);
    } else if (id < have) {
      const Track& old = b.tracks()[id];
      if (old.kind != t.kind || old.device != t.device || old.stream != t.stream || old.pid != t.pid ||
          old.tid != t.tid)
        throw FormatError("track " + std::to_string(id) + " changes identity");
      b.set_track_name(static_cast<TrackId>(id), t.name);
    } else {
      throw FormatError("track id " + std::to_string(id) + " skips ahead of " + std::to_string(have));
    }
  });
}

void encode_devices(std::span<const Device> devices, ByteWriter& out) {
  write_records(out, devices, [](ByteWriter& w, const Device& d) {
    w.varint(d.id);
    w.str(d.name);
    w.str(d.uuid);
    w.svarint(d.compute_major);
    w.svarint(d.compute_minor);
    w.varint(d.sm_count);
    w.varint(d.memory_bytes);
    w.varint(d.core_clock_khz);
    w.varint(d.memory_clock_khz);
    w.varint(d.memory_bus_width_bits);
    w.varint(d.max_threads_per_sm);
    w.varint(d.max_blocks_per_sm);
    w.varint(d.max_threads_per_block);
    w.varint(d.registers_per_sm);
    w.varint(d.shared_memory_per_sm);
    w.varint(d.warp_size);
    w.f64(d.peak_fp32_flops);
    w.f64(d.peak_tensor_flops);
    w.f64(d.peak_memory_bandwidth);
  });
}

namespace {
std::int32_t read_i32(ByteCursor& r, const char* what) {
  const std::int64_t v = r.svarint();
  if (v < INT32_MIN || v > INT32_MAX) throw FormatError(std::string(what) + " does not fit 32 bits");
  return static_cast<std::int32_t>(v);
}
}  // namespace

void decode_devices(ByteCursor in, TraceBuilder& b) {
  read_records(in, "device", "devices", [&](ByteCursor& r) {
    Device d;
    d.id = r.varint32("device id");
    d.name = r.str();
    d.uuid = r.str();
    d.compute_major = read_i32(r, "compute capability");
    d.compute_minor = read_i32(r, "compute capability");
    d.sm_count = r.varint32("sm count");
    d.memory_bytes = r.varint();
    d.core_clock_khz = r.varint32("core clock");
    d.memory_clock_khz = r.varint32("memory clock");
    d.memory_bus_width_bits = r.varint32("memory bus width");
    d.max_threads_per_sm = r.varint32("max threads per SM");
    d.max_blocks_per_sm = r.varint32("max blocks per SM");
    d.max_threads_per_block = r.varint32("max threads per block");
    d.registers_per_sm = r.varint32("registers per SM");
    d.shared_memory_per_sm = r.varint32("shared memory per SM");
    d.warp_size = r.varint32("warp size");
    d.peak_fp32_flops = r.f64();
    d.peak_tensor_flops = r.f64();
    d.peak_memory_bandwidth = r.f64();
    b.add_device(d);
  });
}

void encode_processes(std::span<const Process> processes, ByteWriter& out) {
  write_records(out, processes, [](ByteWriter& w, const Process& p) {
    w.varint(p.pid);
    w.str(p.name);
    w.svarint(p.rank);
  });
}

void decode_processes(ByteCursor in, TraceBuilder& b) {
  read_records(in, "process", "processes", [&](ByteCursor& r) {
    Process p;
    p.pid = r.varint32("pid");
    p.name = r.str();
    p.rank = read_i32(r, "rank");
    b.add_process(p);
  });
}

void encode_counter_series(std::span<const CounterSeries> all, std::uint32_t first, std::uint32_t end,
                           ByteWriter& out) {
  ByteWriter tmp;
  out.varint(first);
  out.varint(end - first);
  for (std::uint32_t i = first; i < end; ++i) {
    write_record(out, tmp, [&](ByteWriter& w) {
      w.str(all[i].name);
      w.varint(all[i].device);
      w.str(all[i].unit);
    });
  }
}

void decode_counter_series(ByteCursor in, TraceBuilder& b) {
  const std::uint64_t first = in.varint();
  if (first != b.all_counter_series().size()) throw FormatError("counter series out of order");
  read_records(in, "counter series", "counter series", [&](ByteCursor& r) {
    const std::string_view name = r.str();
    const std::uint32_t device = r.varint32("series device");
    const std::string_view unit = r.str();
    const std::size_t expected = b.all_counter_series().size();
    if (b.counter_series(name, device, unit) != expected) throw FormatError("duplicate counter series");
  });
}

void encode_meta(const TraceMeta& m, ByteWriter& out) {
  ByteWriter tmp;
  write_record(out, tmp, [&](ByteWriter& w) {
    w.u8(static_cast<std::uint8_t>(m.source));
    w.str(m.producer);
    w.str(m.host);
    w.str(m.command_line);
    w.svarint(m.start_time_ns);
    w.svarint(m.rank);
    w.svarint(m.world_size);
    w.varint(m.stats.size());
    for (const auto& [k, v] : m.stats) {
      w.str(k);
      w.varint(v);
    }
    w.varint(m.properties.size());
    for (const auto& [k, v] : m.properties) {
      w.str(k);
      w.str(v);
    }
    if (m.damage.any()) encode_damage(m.damage, w);
  });
}

void decode_meta(ByteCursor in, TraceBuilder& b) {
  ByteCursor r = read_record(in);
  expect_end(in, "meta");
  TraceMeta m;
  const std::uint8_t source = r.u8();
  // A source added by a later version reads as "unknown" rather than failing.
  m.source = source <= static_cast<std::uint8_t>(TraceSource::nsys_sqlite) ? static_cast<TraceSource>(source)
                                                                           : TraceSource::unknown;
  m.producer = r.str();
  m.host = r.str();
  m.command_line = r.str();
  m.start_time_ns = r.svarint();
  m.rank = read_i32(r, "rank");
  m.world_size = read_i32(r, "world size");
  const std::uint64_t nstats = read_count(r, "stat");
  m.stats.reserve(nstats);
  for (std::uint64_t i = 0; i < nstats; ++i) {
    std::string key(r.str());
    m.stats.emplace_back(std::move(key), r.varint());
  }
  const std::uint64_t nprops = read_count(r, "property");
  m.properties.reserve(nprops);
  for (std::uint64_t i = 0; i < nprops; ++i) {
    std::string key(r.str());
    m.properties.emplace_back(std::move(key), std::string(r.str()));
  }
  if (!r.done()) m.damage = decode_damage(r);
  b.meta() = std::move(m);
}

// [SECTION] Contents ----------------------------------------------------------------------------

namespace {

// The totals that the contents section and the footer both end with (a
// Contents or a Footer): rows per table, strings, tracks, counter series.
template <class Totals>
void encode_totals(const Totals& c, ByteWriter& out) {
  out.varint(kTableCount);
  for (std::uint64_t rows : c.table_rows) out.varint(rows);
  out.varint(c.strings);
  out.varint(c.tracks);
  out.varint(c.counter_series);
}

// The same after their count of tables: the rows of the tables this version
// knows are kept, those of later ones skipped.
template <class Totals>
void decode_totals(ByteCursor& in, std::uint64_t tables, Totals& c) {
  for (std::uint64_t t = 0; t < tables; ++t) {
    const std::uint64_t rows = in.varint();
    if (t < static_cast<std::uint64_t>(kTableCount)) c.table_rows[t] = rows;
  }
  c.strings = in.varint();
  c.tracks = in.varint();
  c.counter_series = in.varint();
}

}  // namespace

void encode_contents(const Contents& c, ByteWriter& out) { encode_totals(c, out); }

Contents decode_contents(ByteCursor in) {
  Contents c;
  decode_totals(in, read_count(in, "table"), c);
  expect_end(in, "contents");
  return c;
}

// [SECTION] Row chunks: encoding ----------------------------------------------------------------

namespace {

template <class T>
bool all_default(const T* values, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (values[i] != T{}) return false;
  return true;
}

template <class Table>
void encode_table_rows(const Table& t, std::size_t begin, std::size_t n, ByteWriter& out, ColumnScratch& s) {
  out.varint(n);
  const std::size_t count_at = out.size();
  out.u8(0);  // column count, patched below
  std::uint8_t columns = 0;
  const TimeNs* start = nullptr;
  bool first = true;
  t.for_each_column([&](ColumnInfo info, const auto& col) {
    if (!(info.flags & kStored)) return;
    const bool is_first = first;
    first = false;
    using C = std::remove_cvref_t<decltype(col)>;
    using T = typename C::value_type;
    // A compact column is written as its rows (the file keeps every row's value).
    const T* values = col.data() + begin;
    std::vector<T> expanded;
    if constexpr (detail::is_compact_column<C>) {
      if (col.compacted()) {
        detail::expand_rows(t, col, begin, n, expanded);
        values = expanded.data();
      }
    }
    // Sparse columns that are empty, or all zero in this chunk, are absent.
    if ((info.flags & kSparse) && ((col.empty() && expanded.empty()) || all_default(values, n))) return;
    const TimeNs* relative = nullptr;
    if constexpr (std::is_same_v<T, TimeNs>) {
      if (info.flags & kTime) {
        if (start)
          relative = start;
        else
          start = col.data() + begin;
      }
    }
    encode_column<T>(info.name, values, n, relative, is_first, out, s.values);
    ++columns;
  });
  out.data()[count_at] = columns;
}

}  // namespace

void encode_rows(const TraceTables& tables, TableId id, std::size_t begin, std::size_t n, ByteWriter& out,
                 ColumnScratch& scratch) {
  tables.for_each_table([&](TableId which, const auto& table) {
    if (which == id) encode_table_rows(table, begin, n, out, scratch);
  });
}

// [SECTION] Row chunks: decoding and checking -----------------------------------------------------

namespace {

[[noreturn]] void bad_row(TableId t, std::size_t row, const std::string& what) {
  throw FormatError(std::string(to_string(t)) + " row " + std::to_string(row) + " of the chunk: " + what);
}

// What decoding learnt about each column of the chunk (DecodeStats), found by
// the column's address. A column decoded some other way (sparse and absent
// in this chunk) has none, and is checked row by row.
struct ChunkStats {
  std::array<const void*, kMaxColumnsPerChunk> column{};
  std::array<DecodeStats, kMaxColumnsPerChunk> stats{};
  std::size_t count = 0;

  void add(const void* col, const DecodeStats& st) {
    if (count < column.size()) {
      column[count] = col;
      stats[count++] = st;
    }
  }
  const DecodeStats* find(const void* col) const {
    for (std::size_t i = 0; i < count; ++i)
      if (column[i] == col) return &stats[i];
    return nullptr;
  }
};

// Columns whose values RowChecker checks against a limit (ids, enums): the
// only ones whose decoding gathers min/max.
bool checked_column(ColumnInfo info) {
  if (info.flags & kString) return true;
  for (std::string_view c : {"track", "kind", "src_kind", "dst_kind", "mem_kind", "domain", "type", "series"})
    if (info.name == c) return true;
  return false;
}

// The checks TraceBuilder::freeze makes, per chunk, so that one bad chunk is
// dropped alone instead of failing the whole load. Each check first asks the
// column's DecodeStats (the min/max of an id column, whether an end column
// came before its start anywhere) and walks the rows only when those cannot
// clear the chunk, to name the first bad row.
struct RowChecker {
  TableId table;
  std::size_t begin, end;
  const std::vector<Track>& tracks;
  std::uint32_t strings, series;
  const ChunkStats& stats;

  // Whether every value of `v` in this chunk is known to be < limit.
  template <class T>
  bool below(const std::vector<T>& v, std::uint64_t limit) const {
    const DecodeStats* st = stats.find(&v);
    return st && (st->min > st->max || st->max < limit);
  }

  void intervals(const std::vector<TimeNs>& start, const std::vector<TimeNs>& stop) const {
    if (const DecodeStats* st = stats.find(&stop); st && st->relative_checked && !st->before_relative) return;
    for (std::size_t i = begin; i < end; ++i) {
      if (stop[i] < start[i]) bad_row(table, i - begin, "ends before it starts");
      if (!valid_duration(start[i], stop[i])) bad_row(table, i - begin, "lasts 2^63 ns or more");
    }
  }
  // Rows with a start, an end and a track (its kind as track_ids() takes it).
  template <class Table>
  void timed_rows(const Table& t, int kind, bool allow_resolve = false) const {
    intervals(t.start, t.end);
    track_ids(t.track, kind, allow_resolve);
  }
  // Rows of a counter series: the series exists.
  void series_ids(const std::vector<std::uint32_t>& series_of) const {
    if (below(series_of, series)) return;
    for (std::size_t i = begin; i < end; ++i)
      if (series_of[i] >= series) bad_row(table, i - begin, "series id out of range");
  }
  void track_ids(const std::vector<TrackId>& track, int kind, bool allow_resolve = false) const {
    if (const DecodeStats* st = stats.find(&track); st && !allow_resolve) {
      if (st->min > st->max) return;  // no rows
      if (st->max < tracks.size()) {
        bool same_kind = true;
        if (kind >= 0)
          for (std::uint64_t id = st->min; id <= st->max; ++id) same_kind &= static_cast<int>(tracks[id].kind) == kind;
        if (same_kind) return;
      }
    }
    for (std::size_t i = begin; i < end; ++i) {
      const TrackId id = track[i];
      if (allow_resolve && id == TraceBuilder::kResolveThroughCorrelation) continue;
      if (id >= tracks.size()) bad_row(table, i - begin, "track id " + std::to_string(id) + " out of range");
      if (kind >= 0 && static_cast<int>(tracks[id].kind) != kind)
        bad_row(table, i - begin,
                kind == 0 ? "on a CPU track, expected a GPU track" : "on a GPU track, expected a CPU track");
    }
  }
  void string_ids(const std::vector<StringId>& ids, std::string_view column) const {
    if (ids.empty()) return;  // sparse, all ""
    if (below(ids, strings)) return;
    for (std::size_t i = begin; i < end; ++i)
      if (ids[i] >= strings) bad_row(table, i - begin, std::string(column) + " string id out of range");
  }
  template <class T>
  void at_most(const std::vector<T>& v, unsigned max, const char* column) const {
    if (below(v, std::uint64_t{max} + 1)) return;
    for (std::size_t i = begin; i < end; ++i)
      if (static_cast<unsigned>(v[i]) > max) bad_row(table, i - begin, std::string(column) + " value out of range");
  }
};

constexpr unsigned kMaxMemoryKind = static_cast<unsigned>(MemoryKind::managed_static);

void check_rows(const RowChecker& c, const KernelTable& t) { c.timed_rows(t, 0); }
void check_rows(const RowChecker& c, const MemcpyTable& t) {
  c.timed_rows(t, 0);
  c.at_most(t.kind, static_cast<unsigned>(CopyKind::ptop), "kind");
  c.at_most(t.src_kind, kMaxMemoryKind, "src_kind");
  c.at_most(t.dst_kind, kMaxMemoryKind, "dst_kind");
}
void check_rows(const RowChecker& c, const MemsetTable& t) {
  c.timed_rows(t, 0);
  c.at_most(t.mem_kind, kMaxMemoryKind, "mem_kind");
}
void check_rows(const RowChecker& c, const ApiCallTable& t) {
  c.timed_rows(t, 1);
  c.at_most(t.domain, static_cast<unsigned>(ApiDomain::other), "domain");
}
void check_rows(const RowChecker& c, const RangeTable& t) {
  c.timed_rows(t, -1);
  c.at_most(t.kind, static_cast<unsigned>(RangeKind::annotation), "kind");
}
void check_rows(const RowChecker& c, const SyncTable& t) {
  c.timed_rows(t, 1, /*allow_resolve=*/true);
  c.at_most(t.type, static_cast<unsigned>(SyncType::context), "type");
}
void check_rows(const RowChecker& c, const CounterTable& t) { c.series_ids(t.series); }
void check_rows(const RowChecker& c, const MemoryEventTable& t) { c.series_ids(t.series); }
void check_rows(const RowChecker& c, const OverheadTable& t) { c.timed_rows(t, 1); }
void check_rows(const RowChecker& c, const OsCallTable& t) { c.timed_rows(t, 1); }

// Every string column (flagged kString in the table's column list).
template <class Table>
void check_strings(const RowChecker& c, const Table& t) {
  t.for_each_column([&](ColumnInfo info, const auto& col) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(col)>, std::vector<StringId>>) {
      if (info.flags & kString) c.string_ids(col, info.name);
    }
  });
}

template <class Table>
void decode_table_rows(Table& table, TableId id, ByteCursor& in, std::uint32_t rows, TraceBuilder& b,
                       RowDecodeContext& ctx) {
  const std::uint64_t n = in.varint();
  if (n != rows) throw FormatError("row count differs from the section header");
  if (n > kMaxRowsPerChunk) throw FormatError("too many rows in one chunk");
  const std::size_t old = table.size();
  if (old + n >= kNoRow) throw FormatError("table exceeds the row limit");
  const std::uint64_t ncols = in.u8();
  if (ncols > kMaxColumnsPerChunk) throw FormatError("too many columns");
  std::array<ColumnBlob, kMaxColumnsPerChunk> blobs;
  for (std::size_t c = 0; c < ncols; ++c) {
    blobs[c] = parse_column(in, static_cast<std::size_t>(n));
    for (std::size_t d = 0; d < c; ++d)
      if (blobs[d].name == blobs[c].name) throw FormatError("column '" + std::string(blobs[c].name) + "' twice");
  }
  expect_end(in, "row chunk");
  auto find = [&](std::string_view name) -> const ColumnBlob* {
    for (std::size_t c = 0; c < ncols; ++c)
      if (blobs[c].name == name) return &blobs[c];
    return nullptr;
  };

  // Every row costs a byte of the first column: the row count is then bounded
  // by the payload size before anything is allocated.
  {
    bool first = true;
    table.for_each_column([&](ColumnInfo info, const auto&) {
      if (!(info.flags & kStored) || !first) return;
      first = false;
      const ColumnBlob* blob = find(info.name);
      if (n && (!blob || blob->width == 0)) throw FormatError("first column missing or empty");
    });
  }

  std::size_t known = 0;
  std::array<std::size_t, 32> size_before{};
  std::size_t ci = 0;
  table.for_each_column([&](ColumnInfo, const auto& col) { size_before[ci++] = col.size(); });

  const std::uint64_t reserve = ctx.reserve_rows[static_cast<int>(id)];
  ChunkStats stats;
  try {
    const TimeNs* start = nullptr;
    table.for_each_column([&](ColumnInfo info, auto& col) {
      if (!(info.flags & kStored)) return;
      using T = typename std::remove_cvref_t<decltype(col)>::value_type;
      const ColumnBlob* blob = find(info.name);
      if (blob) ++known;
      const bool materialize = blob || !col.empty();
      if (!blob && !(info.flags & kSparse)) throw FormatError("column '" + std::string(info.name) + "' missing");
      if (!materialize) return;
      // The footer's total when known (one allocation of the final size), else
      // geometric growth.
      if (col.capacity() < old + n)
        reserve_column(col, static_cast<std::size_t>(std::max<std::uint64_t>({reserve, old + n, 2 * col.capacity()})));
      if (col.size() < old) col.resize(old);  // a sparse column's first non-zero chunk
      if (!blob) {                            // sparse, zero in this chunk
        col.resize(old + n);
        return;
      }
      const TimeNs* relative = nullptr;
      if constexpr (std::is_same_v<T, TimeNs>) {
        if (info.flags & kTime) relative = start;
      }
      populate(col.data() + old, static_cast<std::size_t>(n) * sizeof(T));
      const DecodeOptions options{.stats = checked_column(info)};
      stats.add(&col, append_column<T>(*blob, static_cast<std::size_t>(n), relative, col, options));
      if constexpr (std::is_same_v<T, TimeNs>) {
        if ((info.flags & kTime) && !start) start = col.data() + old;
      }
    });
    const RowChecker checker{id,
                             old,
                             old + static_cast<std::size_t>(n),
                             b.tracks(),
                             b.strings().size(),
                             static_cast<std::uint32_t>(b.all_counter_series().size()),
                             stats};
    check_rows(checker, table);
    check_strings(checker, table);
  } catch (...) {
    ci = 0;
    table.for_each_column([&](ColumnInfo, auto& col) {
      col.resize(size_before[ci++]);  // a sparse column empty before stays empty
    });
    throw;
  }
  ctx.unknown_columns += ncols - known;
}

}  // namespace

void decode_rows(TableId id, ByteCursor in, std::uint32_t rows, TraceBuilder& b, RowDecodeContext& ctx) {
  b.tables().for_each_table([&](TableId which, auto& table) {
    if (which == id) decode_table_rows(table, id, in, rows, b, ctx);
  });
}

// [SECTION] Footer ------------------------------------------------------------------------------

void encode_footer(const Footer& f, ByteWriter& out) {
  out.varint(f.sections.size());
  std::uint64_t prev = 0;
  for (const IndexEntry& e : f.sections) {
    out.varint(e.offset - prev);
    prev = e.offset;
    out.varint(e.tag);
    out.varint(e.items);
  }
  encode_totals(f, out);
}

Footer decode_footer(ByteCursor in) {
  Footer f;
  const std::uint64_t n = read_count(in, "section");
  f.sections.resize(n);
  std::uint64_t at = 0;
  for (IndexEntry& e : f.sections) {
    const std::uint64_t delta = in.varint();
    if (delta > ~0ull - at) throw FormatError("section offset overflows");
    at += delta;
    e.offset = at;
    const std::uint64_t tag = in.varint();
    if (tag > 0xffff) throw FormatError("bad section tag in the index");
    e.tag = static_cast<std::uint16_t>(tag);
    e.items = in.varint32("section items");
  }
  decode_totals(in, in.varint(), f);
  expect_end(in, "footer");
  return f;
}

}  // namespace gpuscope::store_detail
