// gpuscope check BASELINE CANDIDATE [--max-step-regression 5%] [--noise on|off] [--max-share-increase CAT=POINTS]…
//                [--fail-on new-critical|new-finding|none]… [--allow-skip] [--allow-different-runs]
//                [--junit OUT.xml] [--json] [--device D]
//
// The regression gate for CI: exit 0 when the candidate is within every
// limit, 1 when it is not, 2 when something could not be checked (bad input,
// runs of different workloads, a check that could not run or decide). Each
// side is what `gpuscope diff` takes (a trace, a directory of traces, a
// saved report). The checks and the step-noise rule: analysis/check.h; the
// outputs: export/check_report.h. The JUnit file is written on every exit.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "analysis/check.h"
#include "cli/command.h"
#include "cli/job.h"
#include "cli/output.h"
#include "export/check_report.h"
#include "export/trace_inputs.h"
#include "trace/error.h"
#include "trace/files.h"
#include "trace/kernel_category.h"

namespace gpuscope::cli {

namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Regression gate for CI: compare a candidate run with a baseline of the same workload and exit 1 when it "
    "exceeds a limit (step time, a kernel category's share, new critical findings), 0 when it is within all of "
    "them, 2 when something could not be checked (bad input, runs of different workloads, no steps, a change "
    "that cannot be told from the baseline's noise). Each side is a trace, a directory of traces, or a report "
    "saved with `gpuscope report --json`.";

struct CheckArgs {
  std::string baseline, candidate, junit;
  std::string max_step_regression = "5%";
  std::string noise = "on";
  std::vector<std::string> max_share_increase;
  std::vector<std::string> fail_on;
  bool json = false, allow_skip = false, allow_different_runs = false;
  long long device = -1;
};

// "5%", "5" or "2.5%": a number of percent (or points), >= 0. Throws Error naming the flag.
double parse_percent(const std::string& flag, const std::string& text) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || errno != 0 || !std::isfinite(v) || v < 0 || v > 1e6)
    throw Error(flag + ": '" + text + "' is not a percentage (a number >= 0, with or without %: 5%, 2.5)");
  return v / 100.0;
}

std::pair<KernelCategory, double> parse_share_limit(const std::string& text) {
  const std::string flag = "--max-share-increase";
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos) throw Error(flag + ": '" + text + "' is not CATEGORY=POINTS (e.g. padding=2)");
  const std::string name = text.substr(0, eq);
  KernelCategory category{};
  if (!parse_category(name, &category)) {
    std::string known;
    for (int i = 0; i < kKernelCategoryCount; ++i)
      known += (i ? ", " : "") + std::string(to_string(static_cast<KernelCategory>(i)));
    throw Error(flag + ": unknown category '" + name + "' (one of " + known + ")");
  }
  return {category, parse_percent(flag + " " + name, text.substr(eq + 1))};
}

CheckLimits limits_of(const CheckArgs& a) {
  CheckLimits l;
  l.max_step_regression =
      a.max_step_regression == "off" ? -1.0 : parse_percent("--max-step-regression", a.max_step_regression);
  for (const std::string& s : a.max_share_increase) l.max_share_increase.push_back(parse_share_limit(s));
  // new-critical unless --fail-on says otherwise ("none": no finding check).
  const std::vector<std::string> fail_on = a.fail_on.empty() ? std::vector<std::string>{"new-critical"} : a.fail_on;
  for (const std::string& s : fail_on) {
    if (s == "new-critical")
      l.fail_on_new_critical = true;
    else if (s == "new-finding")
      l.fail_on_new_finding = true;
  }
  const bool none = std::find(fail_on.begin(), fail_on.end(), "none") != fail_on.end();
  if (none && fail_on.size() > 1) throw Error("--fail-on: none cannot be given with new-critical or new-finding");
  l.noise = a.noise == "on";
  l.allow_skip = a.allow_skip;
  return l;
}

// The wall clock of the run, for the JUnit file.
JunitRun junit_run(std::chrono::steady_clock::time_point t0, std::time_t started) {
  JunitRun r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char when[32] = {};
  std::tm tm{};
  if (gmtime_r(&started, &tm)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  r.timestamp = when;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) r.hostname = host;
  return r;
}

// Baseline and candidate must be runs of one workload: the test `report`
// applies to a job's files (check_job: the recorded command lines and job
// sizes), over both sides' files. A saved report names no run.
std::string same_workload(const CheckArgs& a, std::vector<RankDigest> runs, std::size_t baseline_files) {
  if (baseline_files == 0 || baseline_files == runs.size())
    return std::string("not compared: the ") + (baseline_files == 0 ? "baseline" : "candidate") +
           " is a saved report, which records no command line";
  const bool named = std::any_of(runs.begin(), runs.end(), [](const RankDigest& d) { return !d.command_line.empty(); });
  const JobCheck job = check_job(runs);
  if (job.refused.empty())
    return named ? "one workload: the same recorded command line and job size"
                 : "one workload as far as the traces tell: none records a command line; the job sizes agree";
  if (!a.allow_different_runs)
    throw Error(a.baseline + ", " + a.candidate + ": not runs of one workload: " + job.refused +
                " (--allow-different-runs compares them anyway, when the changed command is the change under test)");
  return "different runs, compared on purpose (--allow-different-runs): their recorded command lines or job sizes "
         "differ";
}

CheckReport check_runs(const CheckArgs& a, const CheckLimits& limits) {
  JobOptions o;
  if (a.device >= 0) o.analysis.device = static_cast<std::uint32_t>(a.device), o.device_given = true;
  std::vector<RankDigest> runs;
  o.runs = &runs;
  const Profile baseline = load_profile(a.baseline, o);
  const std::size_t baseline_files = runs.size();
  const Profile candidate = load_profile(a.candidate, o);
  const std::string workload = same_workload(a, std::move(runs), baseline_files);
  CheckReport r = check_profiles(baseline, candidate, limits);
  r.same_workload = workload;
  if (r.checks.empty())
    throw Error(a.baseline + ", " + a.candidate +
                ": nothing to check (--max-step-regression off and --fail-on none, no --max-share-increase)");
  return r;
}

// Both sides' files, for the --junit output to be refused when it is one of them.
std::vector<std::string> inputs_of(const CheckArgs& a) {
  std::vector<std::string> inputs;
  for (const std::string& side : {a.baseline, a.candidate}) {
    try {
      for (std::string& f : trace_files({side})) inputs.push_back(std::move(f));
    } catch (const InputError&) {
      inputs.push_back(side);  // load_profile says what is wrong with it
    }
  }
  return inputs;
}

void run(const CheckArgs& a, Context& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::time_t started = std::time(nullptr);
  const bool junit = !a.junit.empty();
  if (junit) {
    try {
      files::refuse_output_among_inputs(a.junit, inputs_of(a));
    } catch (const InputError& e) {
      throw Error(e.what());  // no JUnit file: it would replace an input
    }
  }
  CheckReport r;
  try {
    r = check_runs(a, limits_of(a));
  } catch (const std::exception& e) {
    // A gate that could not run still leaves its JUnit file: one errored testcase saying why.
    if (junit) write_output(a.junit, check_junit_error_xml(a.baseline, a.candidate, e.what(), junit_run(t0, started)));
    throw;
  }
  if (junit) write_output(a.junit, check_junit_xml(r, junit_run(t0, started)));
  // With the JUnit file on standard output, the verdict goes to standard error.
  const bool verdict_on_stderr = junit && is_stdout(a.junit);
  CheckTextOptions to;
  to.colour = !verdict_on_stderr && colour_for("-");
  const std::string verdict = a.json ? check_json(r) : check_text(r, to);
  if (verdict_on_stderr)
    std::fputs(verdict.c_str(), stderr);
  else
    write_output("-", verdict);
  ctx.exit_code = r.exit_code();
}

void add(CLI::App& app, Context& ctx) {
  const auto [cmd, args] = add_command<CheckArgs>(app, "check", kAbout, ctx, run);
  cmd->add_option("BASELINE", args->baseline, "Trace, directory of traces, or saved report JSON; - for standard input")
      ->required();
  cmd->add_option("CANDIDATE", args->candidate,
                  "Trace, directory of traces, or saved report JSON; - for standard input")
      ->required();
  cmd->add_option("--max-step-regression", args->max_step_regression,
                  "Largest allowed increase of the mean step time, in percent (default 5%; 'off': no step check)");
  cmd->add_option("--noise", args->noise,
                  "on (default): a rise above the limit but within the baseline's step-to-step spread cannot be told "
                  "from noise (exit 2); off: the limit alone decides")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--max-share-increase", args->max_share_increase,
                  "CATEGORY=POINTS: largest allowed rise of the category's share of kernel time, in percentage "
                  "points (e.g. padding=2); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--fail-on", args->fail_on,
                  "new-critical (default): fail when a finding is critical in the candidate but not in the baseline; "
                  "new-finding: fail on any finding the baseline does not have; none: no finding check; repeatable")
      ->check(CLI::IsMember({"new-critical", "new-finding", "none"}))
      ->allow_extra_args(false);
  cmd->add_flag("--allow-skip", args->allow_skip,
                "A check that cannot run (no steps, no kernel time, a change within the noise) is skipped instead "
                "of failing with exit 2");
  cmd->add_flag("--allow-different-runs", args->allow_different_runs,
                "Compare runs whose recorded command lines or job sizes differ (refused otherwise, as `report` "
                "refuses such files)");
  cmd->add_option("--junit", args->junit,
                  "Also write the checks as JUnit XML (one testcase per check; on every exit, an error as a failing "
                  "testcase) to this file; - for standard output (the verdict then goes to standard error)")
      ->check(output_path());
  cmd->add_flag("--json", args->json, "Print the verdict as JSON (schema gpuscope.check/1) instead of text");
  cmd->add_option("--device", args->device, "Compare only this GPU (traces only)")->check(CLI::Range(0, 65535));
  add_examples(*cmd, {"gpuscope check baseline.gscope candidate.gscope --junit check.xml",
                      "gpuscope check perf/baseline-report.json run.gscope --max-step-regression 3% --noise off",
                      "gpuscope check base.gscope run.gscope --max-share-increase padding=2 --fail-on new-finding"});
}

const CommandRegistration registration(57, add);

}  // namespace
}  // namespace gpuscope::cli
