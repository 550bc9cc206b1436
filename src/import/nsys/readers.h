// The two readers behind import_nsys_sqlite (internal to src/import/nsys):
// one for Nsight Systems' exports, one for gpuscope's own SQLite export.
#pragma once

#include <algorithm>
#include <cstdint>
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

// Counts why a row's interval was refused (the slow path of interval()).
[[gnu::noinline, gnu::cold]] inline void refuse_interval(const SqlValue& s, const SqlValue& e, bool overflow,
                                                         std::string_view what, Counts& skipped) {
  const char* reason = s.null() || e.null() ? "_without_time" : overflow ? "_invalid_time" : "_negative_duration";
  skipped.add("import.skipped." + std::string(what) + reason);
}

// start/end of a row shifted by `offset` ns. False (the row is skipped, and
// counted under "import.skipped.<what>_<reason>") when either is NULL, the
// sum overflows, or it ends before it starts.
[[gnu::always_inline]] inline bool interval(const SqlValue& s, const SqlValue& e, TimeNs offset, std::string_view what,
                                            Counts& skipped, TimeNs* start, TimeNs* end) {
  const bool start_overflows = __builtin_add_overflow(s.as_int(), offset, start);
  const bool end_overflows = __builtin_add_overflow(e.as_int(), offset, end);
  const bool overflow = start_overflows || end_overflows;
  if (s.null() || e.null() || overflow || *end < *start) [[unlikely]] {
    refuse_interval(s, e, overflow, what, skipped);
    return false;
  }
  return true;
}

}  // namespace gpuscope::nsys
