// SQLite export with Nsight Systems' table and column names, so SQL written
// against `nsys export --type sqlite` files works on gpuscope traces:
// StringIds, TARGET_INFO_GPU, CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET /
// _RUNTIME / _DRIVER / _SYNCHRONIZATION, NVTX_EVENTS, PROFILER_OVERHEAD,
// ThreadNames, PROCESSES, ENUM_* tables; plus GPUSCOPE_META (source, stats,
// properties), GPUSCOPE_ANNOTATIONS (imported CPU/GPU annotations) and
// GPUSCOPE_COUNTER_SERIES / GPUSCOPE_COUNTERS. Times are int64 ns on the
// trace's clock. Full column list: docs/sqlite-export.md. Kernels' shortName
// is format::nsys_short_name (words/format.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/error.h"
#include "trace/trace.h"

namespace gpuscope {

struct SqliteExportOptions {
  bool sync = true;  // fdatasync the database before renaming it into place
};

struct SqliteExportStats {
  std::uint64_t rows = 0;  // rows inserted, all tables
  std::uint64_t file_bytes = 0;
};

// Writes `path` atomically (`<path>.tmp.<pid>`, then rename). Throws
// InputError naming `path` on any SQLite or I/O error; `path` is then
// untouched and the temporary file removed.
SqliteExportStats write_sqlite_trace(const Trace& trace, const std::string& path,
                                     const SqliteExportOptions& options = {});

}  // namespace gpuscope
