// gpuscope import IN -o OUT.gscope: converts a Chrome / PyTorch profiler
// (Kineto) trace, or an Nsight Systems SQLite export, into gpuscope's native
// file. (Every other command also opens those directly; importing once makes
// later loads faster.)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "analysis/format.h"
#include "cli/command.h"
#include "import/chrome_json.h"
#include "import/nsys/nsys_sqlite.h"
#include "import/open_trace.h"
#include "store/gscope.h"
#include "trace/files.h"

namespace gpuscope::cli {

void warn_if_damaged(const std::string& file, const Trace& trace);  // cmd_report.cpp

namespace {

struct ImportArgs {
  std::string input, output;
  bool quiet = false;
};

void run(const ImportArgs& args) {
  files::refuse_output_among_inputs(args.output, std::vector<std::string>{args.input});
  const auto t0 = std::chrono::steady_clock::now();
  Trace trace;
  bool sqlite = false;
  try {
    // A pipe, device or procfs file is read once into memory (within the budget).
    const std::string file = seekable_trace_path(args.input);
    try {
      const TraceFileKind kind = detect_trace_file(file);
      sqlite = kind == TraceFileKind::nsys_sqlite || (kind == TraceFileKind::unknown && named_like_sqlite(args.input));
      trace = sqlite ? import_nsys_sqlite(file) : import_chrome_json(file);
    } catch (const InputError& e) {
      if (file == args.input) throw;
      throw InputError(args.input, e.reason(), e.offset());
    }
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
  std::printf("%s -> %s\n", args.input.c_str(), args.output.c_str());
  if (sqlite) {
    std::error_code size_ec;
    const std::uint64_t file_bytes = std::filesystem::file_size(seekable_trace_path(args.input), size_ec);
    std::printf("  %s; %s of SQLite in %.2f s\n", m.producer.c_str(), format::bytes(size_ec ? 0 : file_bytes).c_str(),
                import_s);
  } else {
    const std::uint64_t json_bytes = m.stat("import.json_bytes");
    std::printf("  %s; %s of JSON in %.2f s (%s)\n", m.producer.c_str(), format::bytes(json_bytes).c_str(), import_s,
                format::bandwidth(import_s > 0 ? static_cast<double>(json_bytes) / import_s : 0.0).c_str());
  }
  std::printf("  %zu kernels, %zu memcpys, %zu memsets, %zu API calls, %zu ranges, %zu syncs, %zu counter samples\n",
              trace.kernels().size(), trace.memcpys().size(), trace.memsets().size(), trace.api_calls().size(),
              trace.ranges().size(), trace.syncs().size(), trace.counters().size());
  for (const auto& [key, value] : m.stats) {
    if (key.rfind("import.skipped.", 0) == 0)
      std::printf("  skipped %s: %llu\n", key.c_str() + 15, static_cast<unsigned long long>(value));
    else if (key.rfind("import.coerced.", 0) == 0)
      std::printf("  coerced %s: %llu\n", key.c_str() + 15, static_cast<unsigned long long>(value));
    else if (key.rfind("import.missing_table.", 0) == 0 || key.rfind("trace.out_of_window.", 0) == 0 ||
             key == "trace.truncated_names")
      std::printf("  %s: %llu\n", key.c_str(), static_cast<unsigned long long>(value));
  }
  if (const std::string_view warning = m.property("import.warning"); !warning.empty())
    std::printf("  warning: %.*s\n", static_cast<int>(warning.size()), warning.data());
}

void add(CLI::App& app, Context&) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Convert a Chrome trace / PyTorch profiler (Kineto) JSON file, plain or .gz, or an Nsight Systems SQLite export "
      "(nsys export --type sqlite), into a .gscope file");
  cmd->add_option("input", args->input, "trace JSON (.json or .json.gz) or Nsight Systems export (.sqlite)")
      ->required();
  cmd->add_option("-o,--output", args->output, "the .gscope file to write (written atomically)")->required();
  cmd->add_flag("-q,--quiet", args->quiet, "print nothing on success");
  cmd->footer(
      "Events gpuscope cannot use are counted by reason (shown here and by `gpuscope info`), never dropped silently.\n"
      "Mapping of Kineto categories and of Nsight Systems tables to gpuscope tables: docs/import.md.");
  cmd->callback([args] { run(*args); });
}

const CommandRegistration registration(30, add);

}  // namespace
}  // namespace gpuscope::cli
