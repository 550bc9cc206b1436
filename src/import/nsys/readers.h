// The two readers behind import_nsys_sqlite (internal to src/import/nsys):
// one for Nsight Systems' exports, one for gpuscope's own SQLite export.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "import/nsys/nsys_sqlite.h"
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

// start/end of a row shifted by `offset` ns. False (the row is skipped, and
// counted under "import.skipped.<what>_<reason>") when either is NULL, the
// sum overflows, or it ends before it starts.
inline bool interval(const SqlValue& s, const SqlValue& e, TimeNs offset, std::string_view what, Counts& skipped,
                     TimeNs* start, TimeNs* end) {
  if (s.null() || e.null()) {
    skipped.add("import.skipped." + std::string(what) + "_without_time");
    return false;
  }
  if (__builtin_add_overflow(s.as_int(), offset, start) || __builtin_add_overflow(e.as_int(), offset, end)) {
    skipped.add("import.skipped." + std::string(what) + "_invalid_time");
    return false;
  }
  if (*end < *start) {
    skipped.add("import.skipped." + std::string(what) + "_negative_duration");
    return false;
  }
  return true;
}

}  // namespace gpuscope::nsys
