// gpuscope diff BEFORE AFTER [--json] [--top N] [--device D] [-o OUT]
//
// Before/after: step time, kernel time by category and by kernel, and which
// findings were resolved, appeared, got better or worse. Each side is a trace,
// a directory of traces (one job), or a report saved with `report --json`.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "analysis/graph/savings.h"
#include "cli/command.h"
#include "cli/job.h"
#include "cli/mpi.h"
#include "cli/output.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "export/trace_inputs.h"
#include "import/open_trace.h"
#include "trace/files.h"

namespace gpuscope::cli {

namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Compare two runs (before/after a change): step time, kernel time by category and by kernel (per step when "
    "both have steps), and which findings were resolved, appeared, got better or worse. Each side is a trace, a "
    "directory of traces, or a report saved with `gpuscope report --json`.";

struct DiffArgs {
  std::string before, after, output;
  bool json = false;
  int top = 15;
  long long device = -1;
  unsigned jobs = 0;
};

void run(const DiffArgs& a) {
  mpi::join();  // under mpirun or srun: the processes share each side's files, process 0 prints
  if (!a.output.empty()) {
    std::vector<std::string> inputs = trace_files({a.before});
    for (std::string& f : trace_files({a.after})) inputs.push_back(std::move(f));
    files::refuse_output_among_inputs(a.output, inputs);
  }
  JobOptions o;
  if (a.device >= 0) o.analysis.device = static_cast<std::uint32_t>(a.device), o.device_given = true;
  o.jobs = a.jobs;
  const Profile before = load_profile(a.before, o);
  const Profile after = load_profile(a.after, o);
  if (mpi::quiet()) return;
  const ProfileDiff d = diff_profiles(before, after, static_cast<std::size_t>(a.top));
  ReportTextOptions to;
  to.top = static_cast<std::size_t>(a.top);
  const std::string text = a.json ? diff_json(d) : diff_text(d, to);
  write_output(a.output, text);
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<DiffArgs>(app, "diff", kAbout, run);
  cmd->add_option("BEFORE", args->before, "Trace, directory of traces, or saved report JSON")->required();
  cmd->add_option("AFTER", args->after, "Trace, directory of traces, or saved report JSON")->required();
  cmd->add_flag("--json", args->json, "Print the comparison as JSON (schema gpuscope.diff/1, docs/report-schema.md)");
  cmd->add_option("--top", args->top, "Kernels listed (default 15)")->check(CLI::Range(0, 1000000));
  cmd->add_option("--device", args->device, "Compare only this GPU (traces only)")->check(CLI::Range(0, 65535));
  cmd->add_option("-j,--jobs", args->jobs, "Files of a job analysed at once (default: every core)")
      ->check(CLI::Range(1, 4096));
  add_output_option(*cmd, args->output);
  add_examples(*cmd, {"gpuscope diff before.gscope after.gscope",
                      "gpuscope diff baseline-report.json run.gscope --json -o diff.json",
                      "gpuscope diff run.gscope <(zcat other.json.gz)"});
}

const CommandRegistration registration(55, add);

}  // namespace
}  // namespace gpuscope::cli
