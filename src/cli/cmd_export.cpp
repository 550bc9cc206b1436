// gpuscope export: any trace gpuscope reads -> Chrome Trace Event JSON
// (Perfetto, chrome://tracing, Holistic Trace Analysis), plain or gzip, or an
// SQLite database in Nsight Systems' schema.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/output.h"
#include "export/chrome_trace.h"
#include "export/sqlite_export.h"
#include "import/open_trace.h"
#include "trace/files.h"
#include "words/format.h"

namespace gpuscope::cli {

namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Convert a trace (.gscope, Chrome JSON, .json.gz or Nsight Systems .sqlite) to Chrome Trace Event JSON in "
    "PyTorch profiler (Kineto) "
    "conventions, for Perfetto, chrome://tracing and HTA, or to an SQLite database with Nsight Systems' table names. "
    "Timestamps keep every nanosecond.";

struct ExportArgs {
  std::string input, out, format = "auto";
  int gzip_level = 1;
  bool no_flows = false;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void run(const ExportArgs& a) {
  files::refuse_output_among_inputs(a.out, std::vector<std::string>{a.input});
  const bool gz = ends_with(a.out, ".gz"), json = ends_with(a.out, ".json");
  const bool sqlite = ends_with(a.out, ".sqlite") || ends_with(a.out, ".sqlite3") || ends_with(a.out, ".db");
  std::string format = a.format;
  if (format == "auto") {
    if (gz || json)
      format = "chrome";
    else if (sqlite)
      format = "sqlite";
    else
      throw Error(a.out + (is_stdout(a.out) ? ": standard output has no name to tell the format by (give --format)"
                                            : ": cannot tell the format from the name (use OUT.json, OUT.json.gz or "
                                              "OUT.sqlite, or --format)"));
  }

  const Trace trace = open_trace(a.input);
  warn_if_damaged(a.input, trace);
  note_losses(a.input, trace);  // what the reader skipped or changed (info and import list it)
  const std::string source(to_string(trace.meta().source));
  if (format == "sqlite") {
    const SqliteExportStats s = write_sqlite_trace(trace, a.out);
    status("wrote %s: %s rows, %s SQLite (source: %s)", output_name(a.out).c_str(), format::count(s.rows).c_str(),
           format::bytes(s.file_bytes).c_str(), source.c_str());
    return;
  }
  ChromeExportOptions o;
  o.gzip = gz;
  o.gzip_level = a.gzip_level;
  o.flows = !a.no_flows;
  const ChromeExportStats s = write_chrome_trace_file(trace, a.out, o);
  status("wrote %s: %s events, %s%s (source: %s)", output_name(a.out).c_str(), format::count(s.events).c_str(),
         format::bytes(s.file_bytes).c_str(), o.gzip ? " gzip" : "", source.c_str());
  if (s.skipped_non_finite_counters)
    status("note: %llu counter samples were NaN or infinite and were left out (JSON cannot hold them)",
           static_cast<unsigned long long>(s.skipped_non_finite_counters));
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<ExportArgs>(app, "export", kAbout, run);
  cmd->add_option("FILE", args->input, "Trace to convert")->required();
  cmd->add_option("-o,--output", args->out,
                  "Output: OUT.json, OUT.json.gz (gzip) or OUT.sqlite; - for standard output (with --format)")
      ->required()
      ->check(output_path());
  cmd->add_option("--format", args->format,
                  "auto (default: from the output name), chrome (Chrome Trace Event JSON; gzip if OUT ends in .gz) or "
                  "sqlite (Nsight Systems-like schema)")
      ->check(CLI::IsMember({"auto", "chrome", "sqlite"}));
  cmd->add_option("--gzip-level", args->gzip_level, "chrome: zlib level for .gz output, 1 (fast, default) .. 9 (small)")
      ->check(CLI::Range(1, 9));
  cmd->add_flag("--no-flows", args->no_flows, "chrome: leave out the ac2g arrows from launch calls to GPU ops");
  add_examples(*cmd, {"gpuscope export run.gscope -o run.json.gz", "gpuscope export report.sqlite -o run.json",
                      "gpuscope export run.gscope -o - --format chrome | gzip > run.json.gz"});
}

const CommandRegistration registration(40, add);

}  // namespace
}  // namespace gpuscope::cli
