// gpuscope check BASELINE CANDIDATE [--max-step-regression 5%] [--max-share-increase CATEGORY=POINTS]…
//                [--fail-on new-critical|new-finding]… [--junit OUT.xml] [--json] [--device D]
//
// The regression gate for CI: exit 0 when the candidate is within every
// limit, 1 when it is not, 2 for bad input. Each side is what `gpuscope diff`
// takes (a trace, a directory of traces, a saved report). The checks and the
// step-noise rule: analysis/check.h; the outputs: export/check_report.h.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/check.h"
#include "cli/command.h"
#include "export/check_report.h"
#include "export/trace_inputs.h"
#include "trace/error.h"
#include "trace/files.h"
#include "trace/kernel_category.h"

namespace gpuscope::cli {

void write_output(const std::string& path, const std::string& text);
Profile load_profile(const std::string& path, const AnalysisOptions& o, bool device_given, unsigned jobs);

namespace {

struct CheckArgs {
  std::string baseline, candidate, junit;
  std::string max_step_regression = "5%";
  std::vector<std::string> max_share_increase;
  std::vector<std::string> fail_on;
  bool json = false;
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
  for (const std::string& s : a.fail_on) {
    if (s == "new-critical")
      l.fail_on_new_critical = true;
    else if (s == "new-finding")
      l.fail_on_new_finding = true;
  }
  return l;
}

void run(const CheckArgs& a, const CLI::App& cmd, Context& ctx) {
  const CheckLimits limits = limits_of(a);
  if (!a.junit.empty()) {
    std::vector<std::string> inputs = trace_files({a.baseline});
    for (std::string& f : trace_files({a.candidate})) inputs.push_back(std::move(f));
    try {
      files::refuse_output_among_inputs(a.junit, inputs);
    } catch (const InputError& e) {
      throw Error(e.what());
    }
  }
  AnalysisOptions o;
  if (a.device >= 0) o.device = static_cast<std::uint32_t>(a.device);
  const Profile baseline = load_profile(a.baseline, o, a.device >= 0, 0);
  const Profile candidate = load_profile(a.candidate, o, a.device >= 0, 0);
  const CheckReport r = check_profiles(baseline, candidate, limits);

  // A step limit asked for explicitly must be checkable: a gate that skips
  // what it was told to check would pass every run.
  const CheckResult* step = r.find("step-time");
  if (step && step->outcome == CheckOutcome::skipped && cmd.get_option("--max-step-regression")->count() > 0)
    throw Error((r.diff.before_step_ns <= 0 ? a.baseline : a.candidate) +
                ": --max-step-regression needs steps in both runs: " + step->message);

  if (!a.junit.empty()) write_output(a.junit, check_junit_xml(r));
  write_output("", a.json ? check_json(r) : check_text(r));
  ctx.exit_code = r.passed() ? 0 : 1;
}

void add(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Regression gate for CI: compare a candidate run with a baseline and exit 1 when it exceeds a limit (step "
      "time, a kernel category's share, new critical findings), 0 when it is within all of them, 2 for bad input. "
      "A step-time regression must also exceed the baseline's own step-to-step spread (the output states the "
      "threshold). Each side is a trace, a directory of traces, or a report saved with `gpuscope report --json`.");
  cmd->add_option("BASELINE", args->baseline, "Trace, directory of traces, or saved report JSON")->required();
  cmd->add_option("CANDIDATE", args->candidate, "Trace, directory of traces, or saved report JSON")->required();
  cmd->add_option("--max-step-regression", args->max_step_regression,
                  "Largest allowed increase of the mean step time, in percent (default 5%; 'off': no step check)");
  cmd->add_option("--max-share-increase", args->max_share_increase,
                  "CATEGORY=POINTS: largest allowed rise of the category's share of kernel time, in percentage "
                  "points (e.g. padding=2); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--fail-on", args->fail_on,
                  "new-critical: fail when a finding is critical in the candidate but not in the baseline; "
                  "new-finding: fail on any finding the baseline does not have; repeatable")
      ->check(CLI::IsMember({"new-critical", "new-finding"}))
      ->allow_extra_args(false);
  cmd->add_option("--junit", args->junit, "Also write the checks as JUnit XML (one testcase per check) to this file");
  cmd->add_flag("--json", args->json, "Print the verdict as JSON (schema gpuscope.check/1) instead of text");
  cmd->add_option("--device", args->device, "Compare only this GPU (traces only)")->check(CLI::Range(0, 65535));
  cmd->callback([args, cmd, &ctx] { run(*args, *cmd, ctx); });
}

const CommandRegistration registration(57, add);

}  // namespace
}  // namespace gpuscope::cli
