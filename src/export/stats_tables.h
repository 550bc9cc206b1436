// The summaries an Nsight Systems user runs first (`nsys stats`), from any
// trace gpuscope reads: kernels, CUDA API calls, memory copies by kind,
// memsets, synchronizations, NVTX / framework ranges and OS runtime calls, each grouped by name
// or kind with calls, total, mean, median, min, max and standard deviation of
// the durations (and of the bytes, for copies and memsets); and the steps, one
// row each. `gpuscope stats` prints them as a table, CSV or JSON; the Python
// module can build the same tables. Definitions: docs/cli.md (`gpuscope stats`).
//
// Medians follow the report's convention: the lower of the two middle values
// of an even count, so a median is always an observed duration. The standard
// deviation is the sample one (n - 1), 0 for one value.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analysis/profile.h"
#include "trace/trace.h"

namespace gpuscope {

enum class StatsReport : std::uint8_t { kernels, api, memcpy, memset, sync, ranges, osrt, steps };

// "kernels", "api", "memcpy", "memset", "sync", "ranges", "osrt", "steps".
std::string_view to_string(StatsReport r);
// A report's name, or Nsight Systems' name for the same summary
// (cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum,
// cuda_gpu_mem_size_sum, nvtx_sum, osrt_sum); false if unknown.
bool parse_stats_report(std::string_view name, StatsReport* out);
// Every report, in the order they are printed.
std::span<const StatsReport> all_stats_reports();
// What `gpuscope stats` prints unless told: every report but steps (which
// needs the whole analysis).
std::span<const StatsReport> default_stats_reports();

// One cell: unknown (null), a whole number, a real number, or text.
using StatsCell = std::variant<std::monostate, std::int64_t, double, std::string>;

struct StatsColumn {
  std::string key;     // CSV header and JSON key: "total_ns"
  std::string header;  // the table's header: "Total (ns)"
};

struct StatsTable {
  StatsReport report = StatsReport::kernels;
  std::string title;                         // "CUDA kernels, by name"
  std::string note;                          // what the table covers or leaves out (empty: nothing to say)
  std::vector<StatsColumn> columns;          // the name column (if any) is the last
  std::vector<std::vector<StatsCell>> rows;  // largest total first
};

struct StatsOptions {
  std::vector<StatsReport> reports;  // empty: default_stats_reports()
  // GPU-side tables (kernels, memcpy, memset, sync) only for this device;
  // kNoDevice = all. API calls, ranges and OS calls are host-side and not filtered.
  std::uint32_t device = kNoDevice;
};

// The tables `options` asks for, in that order. `profile` (the trace's
// analysis) is read only by the steps report; it may be null otherwise.
std::vector<StatsTable> stats_tables(const Trace& trace, const Profile* profile, const StatsOptions& options = {});

struct StatsTextOptions {
  // Longest name shown whole; a longer one is shortened and numbered, its
  // full text listed under the table by that number. 0: never shortened.
  std::size_t max_name = 0;
};

// Aligned tables with titles, as a terminal shows them.
std::string stats_text(const std::vector<StatsTable>& tables, const StatsTextOptions& options = {});
// CSV (a header row of column keys; fields quoted as RFC 4180 says), full names. Several tables: each after a "#
// REPORT: TITLE" line, separated by a blank line.
std::string stats_csv(const std::vector<StatsTable>& tables);
// {"schema": "gpuscope.stats/1", "file": …, "reports": [{"report", "title",
// "note", "columns", "rows": [{key: value, …}]}]}, full names.
std::string stats_json(const std::vector<StatsTable>& tables, const std::string& file);

}  // namespace gpuscope
