// gpuscope export: any trace gpuscope reads -> Chrome Trace Event JSON
// (Perfetto, chrome://tracing, Holistic Trace Analysis), plain or gzip.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "export/chrome_trace.h"
#include "import/open_trace.h"

namespace gpuscope::cli {
namespace {

struct ExportArgs {
  std::string input, out, format = "chrome";
  int gzip_level = 1;
  bool no_flows = false;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void run(const ExportArgs& a) {
  ChromeExportOptions o;
  if (ends_with(a.out, ".json.gz") || ends_with(a.out, ".gz"))
    o.gzip = true;
  else if (!ends_with(a.out, ".json"))
    throw Error(a.out + ": cannot tell the format from the name (use OUT.json or OUT.json.gz)");
  o.gzip_level = a.gzip_level;
  o.flows = !a.no_flows;

  const Trace trace = open_trace(a.input);
  const ChromeExportStats s = write_chrome_trace_file(trace, a.out, o);
  std::printf("wrote %s: %llu events, %.1f MB%s (source: %s)\n", a.out.c_str(),
              static_cast<unsigned long long>(s.events), static_cast<double>(s.file_bytes) / 1e6, o.gzip ? " gzip" : "",
              std::string(to_string(trace.meta().source)).c_str());
  if (s.skipped_non_finite_counters)
    std::printf("note: %llu counter samples were NaN or infinite and were left out (JSON cannot hold them)\n",
                static_cast<unsigned long long>(s.skipped_non_finite_counters));
}

void add(CLI::App& app, Context&) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Convert a trace (.gscope, Chrome JSON or .json.gz) to Chrome Trace Event JSON in PyTorch profiler (Kineto) "
      "conventions, for Perfetto, chrome://tracing and HTA. Timestamps keep every nanosecond.");
  cmd->add_option("FILE", args->input, "Trace to convert")->required();
  cmd->add_option("-o,--output", args->out, "Output: OUT.json, or OUT.json.gz to gzip it")->required();
  cmd->add_option("--format", args->format, "Output format (chrome: Chrome Trace Event JSON)")
      ->check(CLI::IsMember({"chrome"}));
  cmd->add_option("--gzip-level", args->gzip_level, "zlib level for .gz output, 1 (fast, default) .. 9 (small)")
      ->check(CLI::Range(1, 9));
  cmd->add_flag("--no-flows", args->no_flows, "Leave out the ac2g arrows from launch calls to GPU ops");
  cmd->callback([args] { run(*args); });
}

const CommandRegistration registration(40, add);

}  // namespace
}  // namespace gpuscope::cli
