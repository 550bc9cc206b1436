// gpuscope stats FILE [--report NAME[,NAME]…] [--format table|csv|json] [--device D] [-o OUT]
//
// The summaries an Nsight Systems user runs first (`nsys stats`), from any
// trace gpuscope reads: kernels, CUDA API calls, memory copies, memsets,
// synchronizations, NVTX / framework ranges, OS runtime calls, and steps. The tables:
// export/stats_tables.h.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "cli/command.h"
#include "cli/output.h"
#include "export/stats_tables.h"
#include "import/open_trace.h"
#include "trace/files.h"

namespace gpuscope::cli {

namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Summaries of a trace as Nsight Systems' `nsys stats` prints them: per kernel name, CUDA API call, memory copy "
    "kind, memset, synchronization type, NVTX / framework range and OS runtime call (nsys' osrt_sum, from exports "
    "traced with --trace=osrt) the calls, total, mean, median, min, max and standard deviation of the durations "
    "(and bytes), and each one's share; and the steps, one row each. Any trace gpuscope reads; a summary the trace "
    "has nothing for says why.";

struct StatsArgs {
  std::string input, output, format = "table";
  std::vector<std::string> reports;
  long long device = -1;
};

std::string report_names() {
  std::string s;
  for (StatsReport r : all_stats_reports()) s += (s.empty() ? "" : ", ") + std::string(to_string(r));
  return s;
}

std::vector<StatsReport> reports_of(const std::vector<std::string>& names) {
  std::vector<StatsReport> out;
  for (const std::string& name : names) {
    if (name == "all") {
      const auto all = all_stats_reports();
      out.insert(out.end(), all.begin(), all.end());
      continue;
    }
    StatsReport r{};
    if (!parse_stats_report(name, &r))
      throw Error("--report: unknown report '" + name + "' (one of " + report_names() +
                  ", all; or nsys' cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, "
                  "nvtx_sum, osrt_sum)");
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

// The terminal's width, when standard output is one (names are shortened to fit); 0 otherwise.
std::size_t terminal_columns(const std::string& output) {
  winsize w{};
  if (!is_stdout(output) || !::isatty(STDOUT_FILENO) || ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) != 0) return 0;
  return w.ws_col;
}

void check_device(const Trace& t, const std::string& file, std::uint32_t device) {
  std::set<std::uint32_t> seen;
  for (const Track& tr : t.tracks())
    if (tr.kind == TrackKind::gpu) seen.insert(tr.device);
  if (seen.count(device)) return;
  std::string have;
  for (std::uint32_t d : seen) have += (have.empty() ? "" : ", ") + std::to_string(d);
  throw Error(files::input_name(file) + ": no GPU " + std::to_string(device) +
              " (GPUs with activity: " + (have.empty() ? "none" : have) + ")");
}

void run(const StatsArgs& a) {
  if (!is_stdout(a.output)) files::refuse_output_among_inputs(a.output, std::vector<std::string>{a.input});
  StatsOptions o;
  o.reports = reports_of(a.reports);
  const Trace trace = open_trace(a.input);
  warn_if_damaged(a.input, trace);
  if (a.device >= 0) {
    o.device = static_cast<std::uint32_t>(a.device);
    check_device(trace, a.input, o.device);
  }
  // Steps come from the analysis: run it only when they are asked for.
  Profile profile;
  const bool steps = std::find(o.reports.begin(), o.reports.end(), StatsReport::steps) != o.reports.end();
  if (steps) {
    AnalysisOptions ao;
    ao.device = o.device;
    profile = analyze(trace, ao);
  }
  const std::vector<StatsTable> tables = stats_tables(trace, steps ? &profile : nullptr, o);
  std::string text;
  if (a.format == "csv") {
    text = stats_csv(tables);
  } else if (a.format == "json") {
    text = stats_json(tables, files::input_name(a.input));
  } else {
    StatsTextOptions to;
    const std::size_t columns = terminal_columns(a.output);
    to.max_name = columns ? std::max<std::size_t>(columns / 2, 40) : 0;
    text = stats_text(tables, to);
  }
  write_output(a.output, text);
  note_losses(a.input, trace);  // what the reader skipped or changed (info and import list it)
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<StatsArgs>(app, "stats", kAbout, run);
  cmd->add_option("FILE", args->input,
                  "Trace (.gscope, Chrome/Kineto .json or .json.gz, Nsight Systems .sqlite); - for standard input")
      ->required();
  cmd->add_option("--report", args->reports,
                  "Which summaries, comma-separated: kernels, api, memcpy, memset, sync, ranges, osrt, steps, or all "
                  "(default: all but steps, which needs the whole analysis); nsys' names work too "
                  "(cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, nvtx_sum, osrt_sum, …)")
      ->delimiter(',');
  cmd->add_option("--format", args->format,
                  "table (default: aligned text; on a terminal long names are shortened and listed whole under "
                  "the table), csv or json (full names)")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--device", args->device,
                  "GPU-side summaries (kernels, copies, memsets, syncs, steps) of this GPU only")
      ->check(CLI::Range(0, 65535));
  add_output_option(*cmd, args->output);
  add_examples(
      *cmd, {"gpuscope stats run.gscope", "gpuscope stats report.sqlite --report kernels --format csv -o kernels.csv",
             "gpuscope stats report.sqlite --report osrt_sum",
             "gpuscope stats trace.json.gz --report api,memcpy,steps --format json | jq '.reports[0].rows[0]'"});
}

const CommandRegistration registration(51, add);  // after report

}  // namespace
}  // namespace gpuscope::cli
