// gpuscope report FILE|DIR… [--json] [--top N] [--device D] [--steps N] [-j N] [-o OUT]
//
// Analyses one trace, or several (one per rank or process) as one job, and
// prints findings with their evidence and fixes, per-GPU numbers, steps, time
// by category and top kernels — or the same as gpuscope.report/1 JSON. A job
// is analysed one file at a time (cli/job.h, job/job_files.h), N files at once.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "analysis/analyze.h"
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
    "Diagnose a trace: the usual changes (more workers? overlap the all-reduce or the weight update? more "
    "streams? another layout? mixed precision? CUDA graphs?) answered yes or no with the number that says so, "
    "findings ordered by estimated saving (what is slow, the numbers, what to change), per-GPU "
    "utilization, kernel concurrency, copy/communication overlap, steps and their breakdown, time by kernel "
    "category, top kernels, launches, syncs, HTA's temporal breakdown. Several files (one per rank, or a "
    "directory of them) are analysed as one job, one file at a time: per-rank rows, clocks aligned on matched "
    "collectives, each collective's last arrival, stragglers by the wait they caused, files left out and why. "
    "Under `mpirun -n P` or `srun` the P processes share the files and process 0 prints the report, the same "
    "bytes as one process (docs/scale.md).";

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool json = false;
  int top = -1;  // -1: 10 for text, all for JSON
  int steps = -1;
  long long device = -1;
  bool no_simulation = false;
  unsigned jobs = 0;
};

void run(const ReportArgs& a) {
  mpi::join();  // under mpirun or srun: the processes share the files, process 0 prints
  const TraceInputs inputs = list_trace_inputs(a.inputs);
  const std::vector<std::string>& files = inputs.files;
  if (!a.output.empty()) files::refuse_output_among_inputs(a.output, files);
  JobOptions o;
  o.left_out = inputs.left_out;
  if (a.device >= 0) o.analysis.device = static_cast<std::uint32_t>(a.device), o.device_given = true;
  o.simulate = !a.no_simulation;
  o.jobs = a.jobs;
  const Profile p = analyze_files(files, o);
  if (mpi::quiet()) return;

  std::vector<std::string> parts;
  if (a.json) {
    ReportJsonOptions jo;
    jo.top = a.top < 0 ? 0 : static_cast<std::size_t>(a.top);
    jo.max_steps = a.steps < 0 ? 0 : static_cast<std::size_t>(a.steps);
    jo.jobs = a.jobs;
    parts = report_json_parts(p, jo);
  } else {
    ReportTextOptions to;
    to.top = a.top < 0 ? 10 : static_cast<std::size_t>(a.top);
    if (a.steps >= 0) to.max_steps = static_cast<std::size_t>(a.steps);
    to.colour = colour_for(a.output);
    parts.push_back(report_text(p, to));
  }
  write_output(a.output, parts);
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<ReportArgs>(app, "report", kAbout, run);
  cmd->add_option("FILE", args->inputs,
                  "Traces (.gscope, Chrome/Kineto .json or .json.gz, Nsight Systems .sqlite) or directories of them")
      ->required();
  cmd->add_flag("--json", args->json, "Print the report as JSON (schema gpuscope.report/1, docs/report-schema.md)");
  cmd->add_option("--top", args->top, "Kernels listed (default: 10 in text, all in JSON)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--steps", args->steps, "Steps listed (default: 12 in text, all in JSON)")
      ->check(CLI::Range(0, 100000000));
  cmd->add_option("--device", args->device, "Analyse only this GPU (CUDA device ordinal)")->check(CLI::Range(0, 65535));
  cmd->add_flag("--no-simulation", args->no_simulation,
                "Keep the findings' rule-of-thumb savings: do not replay the dependency graph (docs/whatif.md)");
  cmd->add_option("-j,--jobs", args->jobs,
                  "Files analysed at once, and threads writing --json (default: every core); same output whatever N")
      ->check(CLI::Range(1, 4096));
  add_output_option(*cmd, args->output);
  add_examples(*cmd, {"gpuscope report run.gscope", "gpuscope report --json run.gscope -o report.json",
                      "gpuscope report ranks/ -j 8 --device 0"});
}

const CommandRegistration registration(50, add);

}  // namespace

}  // namespace gpuscope::cli
