// gpuscope import IN -o OUT.gscope: converts a Chrome / PyTorch profiler
// (Kineto) trace, or an Nsight Systems SQLite export, into gpuscope's native
// file. (Every other command also opens those directly; importing once makes
// later loads faster.)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/output.h"
#include "import/open_trace.h"
#include "store/gscope.h"
#include "trace/files.h"
#include "words/format.h"

namespace gpuscope::cli {

namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Convert a Chrome trace / PyTorch profiler (Kineto) JSON file, plain or .gz, or an Nsight Systems SQLite export "
    "(nsys export --type sqlite), into a .gscope file";

struct ImportArgs {
  std::string input, output;
  bool quiet = false;
};

void run(const ImportArgs& args) {
  files::refuse_output_among_inputs(args.output, std::vector<std::string>{args.input});
  const auto t0 = std::chrono::steady_clock::now();
  Trace trace;
  bool sqlite = false;
  std::uint64_t file_bytes = 0;
  try {
    // A pipe or standard input is read once into memory (within the budget).
    const std::string file = seekable_trace_path(args.input);
    const TraceFileKind kind = detect_trace_file(file);
    sqlite = kind == TraceFileKind::nsys_sqlite || (kind == TraceFileKind::unknown && named_like_sqlite(args.input));
    std::error_code size_ec;
    file_bytes = std::filesystem::file_size(file, size_ec);
    trace = open_trace(args.input);
  } catch (const InputError& e) {
    throw Error(e.what());
  }
  const double import_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  warn_if_damaged(args.input, trace);
  try {
    write_gscope(trace, args.output);
  } catch (const InputError& e) {
    throw Error(e.what());
  }
  if (args.quiet) return;
  const TraceMeta& m = trace.meta();
  status("%s -> %s", files::input_name(args.input).c_str(), output_name(args.output).c_str());
  if (sqlite) {
    status("  %s; %s of SQLite in %.2f s", m.producer.c_str(), format::bytes(file_bytes).c_str(), import_s);
  } else {
    const std::uint64_t json_bytes = m.stat("import.json_bytes");
    status("  %s; %s of JSON in %.2f s (%s)", m.producer.c_str(), format::bytes(json_bytes).c_str(), import_s,
           format::bandwidth(import_s > 0 ? static_cast<double>(json_bytes) / import_s : 0.0).c_str());
  }
  status("  %zu kernels, %zu memcpys, %zu memsets, %zu API calls, %zu ranges, %zu syncs, %zu counter samples",
         trace.kernels().size(), trace.memcpys().size(), trace.memsets().size(), trace.api_calls().size(),
         trace.ranges().size(), trace.syncs().size(), trace.counters().size());
  if (const std::size_t os = trace.os_calls().size()) status("  %zu OS runtime calls", os);
  for (const auto& [key, value] : m.stats) {
    if (key.rfind("import.skipped.", 0) == 0)
      status("  skipped %s: %llu", key.c_str() + 15, static_cast<unsigned long long>(value));
    else if (key.rfind("import.coerced.", 0) == 0)
      status("  coerced %s: %llu", key.c_str() + 15, static_cast<unsigned long long>(value));
    else if (key.rfind("import.missing_table.", 0) == 0 || key.rfind("trace.out_of_window.", 0) == 0 ||
             key == "trace.truncated_names")
      status("  %s: %llu", key.c_str(), static_cast<unsigned long long>(value));
  }
  if (const std::string_view warning = m.property("import.warning"); !warning.empty())
    status("  warning: %.*s", static_cast<int>(warning.size()), warning.data());
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<ImportArgs>(app, "import", kAbout, run);
  cmd->add_option("input", args->input,
                  "trace JSON (.json or .json.gz) or Nsight Systems export (.sqlite); - for standard input")
      ->required();
  cmd->add_option("-o,--output", args->output, "the .gscope file to write (written atomically); - for standard output")
      ->required()
      ->check(output_path());
  cmd->add_flag("-q,--quiet", args->quiet, "print nothing on success (the summary goes to standard error)");
  add_examples(
      *cmd,
      {"gpuscope import trace.json.gz -o run.gscope", "gpuscope import report.sqlite -o run.gscope",
       "ssh node1 cat /tmp/trace.json | gpuscope import - -o run.gscope"},
      "Events gpuscope cannot use are counted by reason (shown here and by `gpuscope info`), never dropped silently.\n"
      "Mapping of Kineto categories and of Nsight Systems tables to gpuscope tables: docs/import.md.");
}

const CommandRegistration registration(30, add);

}  // namespace
}  // namespace gpuscope::cli
