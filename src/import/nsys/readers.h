// The two readers behind import_nsys_sqlite (internal to src/import/nsys):
// one for Nsight Systems' exports, one for gpuscope's own SQLite export.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "import/nsys/nsys_sqlite.h"
#include "import/nsys/row_parts.h"
#include "import/nsys/sqlite_db.h"
#include "import/nsys/sqlite_pages.h"
#include "import/nsys/sqlite_table.h"
#include "trace/builder.h"

namespace gpuscope::nsys {

struct Input {
  const Database& db;
  PageFile* pages;  // null: read every table through SQLite
  const NsysImportOptions& options;
  const FileDamage* cut = nullptr;  // the file ends inside its pages (nsys_sqlite.cpp)

  // The file's own loss, into the trace's damage before freeze() (a
  // gpuscope export keeps what an earlier file lost: both are said).
  void add_damage(TraceBuilder& b) const {
    if (!cut) return;
    FileDamage d = *cut;
    b.tables().for_each_table([&](TableId id, const auto& t) {
      d.tables[static_cast<int>(id)].loaded = t.size();
      d.tables[static_cast<int>(id)].count = LossCount::at_least;
    });
    if (b.meta().damage.any()) d.add_earlier(b.meta().damage);
    b.meta().damage = std::move(d);
  }

  TableReader reader(const TableDef& t, std::vector<std::string_view> columns) const {
    return TableReader(db, pages, t, std::move(columns));
  }
  // Rows of a table: from its pages' headers where it can be read directly
  // (SQLite's count(*) reads every page through its cache).
  std::uint64_t rows(const TableDef& t) const {
    return pages && t.plain ? pages->count(static_cast<std::uint32_t>(t.root_page), t.name) : db.row_count(t);
  }
  unsigned threads() const {
    if (options.threads) return options.threads;
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  }
};

Trace read_nsys_export(const Input& in);
Trace read_gpuscope_export(const Input& in);

// Counts by key, kept in the order they first occur (so that a trace's stats
// come out the same every time), added to TraceMeta::stats at the end.
class Counts {
 public:
  void add(std::string_view key, std::uint64_t n = 1) {
    if (n == 0) return;
    for (auto& [k, v] : counts_)
      if (k == key) {
        v += n;
        return;
      }
    counts_.emplace_back(std::string(key), n);
  }
  std::uint64_t get(std::string_view key) const {
    for (const auto& [k, v] : counts_)
      if (k == key) return v;
    return 0;
  }
  void write_to(TraceMeta& m) const {
    for (const auto& [k, v] : counts_) m.add_stat(k, v);
  }
  void add_to(Counts& other) const {
    for (const auto& [k, v] : counts_) other.add(k, v);
  }

 private:
  std::vector<std::pair<std::string, std::uint64_t>> counts_;
};

// Values of an untrusted row narrowed to the model's types.
inline std::uint32_t id32(const SqlValue& v) { return static_cast<std::uint32_t>(v.as_int()); }  // CUPTI's uint32 ids
inline std::uint32_t clamp32(const SqlValue& v) {
  const std::int64_t x = v.as_int();
  return x <= 0 ? 0 : x >= 0xffffffffLL ? 0xffffffffu : static_cast<std::uint32_t>(x);
}
inline std::uint16_t clamp16(const SqlValue& v) {
  const std::int64_t x = v.as_int();
  return x <= 0 ? 0 : x >= 0xffff ? std::uint16_t{0xffff} : static_cast<std::uint16_t>(x);
}
inline std::uint64_t clamp64(const SqlValue& v) {
  const std::int64_t x = v.as_int();
  return x <= 0 ? 0 : static_cast<std::uint64_t>(x);
}

// Values of one table's rows narrowed to the model's types like the
// functions above, with every value that did not fit counted under
// "import.coerced.<table>.<column>": text or a blob where a number belongs,
// a real where an integer belongs, a number outside the model's range (a
// negative grid, an id of 2^32 or more). NULL is "unknown", not counted
// (the readers say what it means). One per table, or per part of a table
// read in parts (merged with add_to()).
class Narrow {
 public:
  Narrow(std::string_view table, const std::vector<std::string>& columns)
      : table_(table), columns_(columns), n_(columns.size()) {}

  // The integer stored; NULL -> 0; anything else as SqlValue::as_int(), counted.
  std::int64_t i64(const SqlValue* v, int k) {
    if (v[k].type() == SqlValue::Type::integer) [[likely]]
      return v[k].as_int();
    if (!v[k].null()) ++n_[k];
    return v[k].as_int();
  }
  // CUPTI's uint32 ids: values outside [0, 2^32) counted (kept as their low 32 bits).
  std::uint32_t id32(const SqlValue* v, int k) { return static_cast<std::uint32_t>(in_range(v, k, 0, 0xffffffffLL)); }
  std::uint32_t clamp32(const SqlValue* v, int k) { return static_cast<std::uint32_t>(clamped(v, k, 0, 0xffffffffLL)); }
  std::uint16_t clamp16(const SqlValue* v, int k) { return static_cast<std::uint16_t>(clamped(v, k, 0, 0xffff)); }
  std::uint64_t clamp64(const SqlValue* v, int k) {
    return static_cast<std::uint64_t>(clamped(v, k, 0, std::numeric_limits<std::int64_t>::max()));
  }
  std::int32_t i32(const SqlValue* v, int k) {
    return static_cast<std::int32_t>(
        clamped(v, k, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
  }
  // A value the reader replaced by a stand-in (a NULL name by "<unnamed kernel>").
  void count(int k) { ++n_[k]; }

  void add_to(Counts& c) const {
    for (std::size_t k = 0; k < n_.size(); ++k)
      if (n_[k]) c.add("import.coerced." + table_ + "." + columns_[k], n_[k]);
  }
  void add(const Narrow& other) {
    for (std::size_t k = 0; k < n_.size(); ++k) n_[k] += other.n_[k];
  }

 private:
  std::int64_t in_range(const SqlValue* v, int k, std::int64_t lo, std::int64_t hi) {
    const std::int64_t x = i64(v, k);
    if ((x < lo || x > hi) && v[k].type() == SqlValue::Type::integer) [[unlikely]]
      ++n_[k];
    return x;
  }
  std::int64_t clamped(const SqlValue* v, int k, std::int64_t lo, std::int64_t hi) {
    return std::clamp(in_range(v, k, lo, hi), lo, hi);
  }

  std::string table_;
  std::vector<std::string> columns_;
  std::vector<std::uint64_t> n_;
};

inline Narrow narrow(const TableReader& r) { return Narrow(r.table_name(), r.columns()); }

// A kernel's launch configuration from the nine columns from `first` on, in
// CUPTI's order (both exports keep it): grid x, y, z, block x, y, z,
// registers per thread, static and dynamic shared memory per block.
inline void read_launch(Narrow& n, const SqlValue* v, int first, KernelRow& k) {
  k.grid_x = n.clamp32(v, first);
  k.grid_y = n.clamp32(v, first + 1);
  k.grid_z = n.clamp32(v, first + 2);
  k.block_x = n.clamp32(v, first + 3);
  k.block_y = n.clamp32(v, first + 4);
  k.block_z = n.clamp32(v, first + 5);
  k.registers = n.clamp16(v, first + 6);
  k.static_smem = n.clamp32(v, first + 7);
  k.dynamic_smem = n.clamp32(v, first + 8);
}

// Counts why a row's interval was refused (the slow path of interval()).
[[gnu::noinline, gnu::cold]] inline void refuse_interval(const SqlValue& s, const SqlValue& e, bool overflow,
                                                         std::string_view what, Counts& skipped) {
  const char* reason = s.null() || e.null() ? "_without_time" : overflow ? "_invalid_time" : "_negative_duration";
  skipped.add("import.skipped." + std::string(what) + reason);
}

// start/end of a row shifted by `offset` ns. False (the row is skipped, and
// counted under "import.skipped.<what>_<reason>") when either is NULL, is
// not an integer (_invalid_time), the sum overflows, or it ends before it
// starts.
[[gnu::always_inline]] inline bool interval(const SqlValue& s, const SqlValue& e, TimeNs offset, std::string_view what,
                                            Counts& skipped, TimeNs* start, TimeNs* end) {
  const bool start_overflows = __builtin_add_overflow(s.as_int(), offset, start);
  const bool end_overflows = __builtin_add_overflow(e.as_int(), offset, end);
  // Text, a blob or a real where a time belongs is no time: the row is refused.
  const bool overflow = start_overflows || end_overflows || (!s.null() && s.type() != SqlValue::Type::integer) ||
                        (!e.null() && e.type() != SqlValue::Type::integer);
  if (s.null() || e.null() || overflow || *end < *start) [[unlikely]] {
    refuse_interval(s, e, overflow, what, skipped);
    return false;
  }
  return true;
}

}  // namespace gpuscope::nsys
