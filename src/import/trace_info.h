// What a trace file is and holds, as `gpuscope info --json` says it (schema
// gpuscope.info/1, docs/cli.md): the CLI and the Python module's Trace.info
// both print this one description.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "import/open_trace.h"
#include "store/gscope.h"
#include "trace/json_writer.h"
#include "trace/load_progress.h"
#include "trace/trace.h"

namespace gpuscope {

// A trace together with what its file said about itself.
struct TraceFile {
  Trace trace;
  TraceFileKind kind = TraceFileKind::unknown;
  std::uint64_t file_bytes = 0;
  bool has_gscope_report = false;  // .gscope files: the reader's report below
  GscopeReadReport gscope;
};

// Opens `path` like open_trace() (any format, chosen by content; a pipe is
// read once into memory), keeping the .gscope reader's report. Throws
// InputError naming `path`.
TraceFile open_trace_file(const std::string& path, const LoadProgress& progress = {});

// What the reader left out or changed, from the trace's stats: rows skipped
// ("import.skipped.*"), values coerced ("import.coerced.*"), tables missing
// ("import.missing_table.*"), rows with implausible times
// ("trace.out_of_window.*"), names cut ("trace.truncated_names"), rows a
// damaged file lost ("store.lost_rows.*"). One line ("the source's rows
// or values left out or changed: import.skipped.kernel_without_time 2, …,
// and 3 more (gpuscope info lists them)"), empty when there is none: what
// `export` and the viewer say besides `info`, `import` and `report`.
std::string source_losses_line(const TraceMeta& meta);

// "gscope", "chrome-json", "chrome-json-gz", "nsys-sqlite" or "unknown".
std::string_view trace_format_name(TraceFileKind kind);

// What `info --json` shows that a layer above this one works out (analysis
// of the trace): each writes its value, as the report writes it
// (export/report_json.h's write_file_quality_json, write_op_summary_json),
// straight into the document. Empty: the key is left out.
struct InfoParts {
  std::function<void(json::Writer&)> trace_quality;  // the file's storage damage, after file_bytes
  std::function<void(json::Writer&)> ops;            // the trace's op attribution, after the tables
};

// The gpuscope.info/1 document of `file`, opened from `path`, indented by
// 2 spaces when `pretty`, else on one line.
std::string trace_info_json(const std::string& path, const TraceFile& file, bool pretty = true,
                            const InfoParts& parts = {});

}  // namespace gpuscope
