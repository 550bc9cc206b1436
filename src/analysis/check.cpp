// check_profiles(): the CI gate's checks, each from the diff of the two runs.
// Phases: the baseline's step noise, the step-time check, the share checks,
// the finding checks, each timed.
#include "analysis/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "words/format.h"

namespace gpuscope {

std::string_view to_string(CheckOutcome o) {
  switch (o) {
    case CheckOutcome::passed: return "passed";
    case CheckOutcome::failed: return "failed";
    case CheckOutcome::skipped: return "skipped";
    case CheckOutcome::not_run: break;
  }
  return "not_run";
}

bool CheckReport::passed() const { return count(CheckOutcome::failed) == 0 && complete(); }

bool CheckReport::complete() const { return count(CheckOutcome::not_run) == 0; }

int CheckReport::exit_code() const { return !complete() ? 2 : passed() ? 0 : 1; }

std::size_t CheckReport::count(CheckOutcome o) const {
  return static_cast<std::size_t>(
      std::count_if(checks.begin(), checks.end(), [o](const CheckResult& c) { return c.outcome == o; }));
}

const CheckResult* CheckReport::find(std::string_view name) const {
  for (const CheckResult& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

StepNoise step_noise(const Profile& p) {
  StepNoise n;
  const std::vector<Step>& steps = p.steps.steps;
  n.steps = steps.size();
  if (steps.empty()) return n;
  double sum = 0;
  for (const Step& s : steps) sum += static_cast<double>(s.range.duration());
  const double mean = sum / static_cast<double>(steps.size());
  double squares = 0;
  for (const Step& s : steps) {
    const double d = static_cast<double>(s.range.duration()) - mean;
    squares += d * d;
  }
  const double stddev = steps.size() > 1 ? std::sqrt(squares / static_cast<double>(steps.size() - 1)) : 0.0;
  n.mean_ns = static_cast<TimeNs>(std::llround(mean));
  n.stddev_ns = static_cast<TimeNs>(std::llround(stddev));
  n.spread = mean > 0 ? stddev / mean : 0.0;
  return n;
}

namespace {

// Shares and changes as people read them: "+7.4%", "-0.3%".
std::string with_sign(double v, std::string text) {
  if (v >= 0) text.insert(text.begin(), '+');
  return text;
}
std::string signed_percent(double share) { return with_sign(share, format::percent1(share)); }
std::string signed_points(double share) { return with_sign(share, format::fixed(share * 100, 1)) + " points"; }

// Shares compare to 1e-9: the diff's shares are ratios of integers, and a
// limit of 0 points must pass an unchanged share.
constexpr double kShareEpsilon = 1e-9;

// A check that could not run: not_run, or skipped when the caller allows it.
void cannot_run(CheckResult& c, bool allow_skip, const std::string& why) {
  c.outcome = allow_skip ? CheckOutcome::skipped : CheckOutcome::not_run;
  c.message = why + (allow_skip ? " (skipped: --allow-skip)" : "");
}

// Which run has none of something (its total is 0 or less): "either run",
// "the baseline" or "the candidate".
const char* lacking(TimeNs before, TimeNs after) {
  if (before <= 0 && after <= 0) return "either run";
  return before <= 0 ? "the baseline" : "the candidate";
}

CheckResult step_time_check(const CheckReport& r, bool allow_skip) {
  const ProfileDiff& d = r.diff;
  CheckResult c;
  c.name = "step-time";
  c.threshold = r.step_limit;
  if (d.before_step_ns <= 0 || d.after_step_ns <= 0) {
    cannot_run(c, allow_skip,
               std::string("no steps in ") + lacking(d.before_step_ns, d.after_step_ns) +
                   " (steps come from ProfilerStep#N or NVTX step ranges, or the repeating kernel pattern)");
    return c;
  }
  c.value = static_cast<double>(d.after_step_ns - d.before_step_ns) / static_cast<double>(d.before_step_ns);
  const std::string change = "mean step time " + format::duration(d.before_step_ns) + " -> " +
                             format::duration(d.after_step_ns) + " (" + signed_percent(c.value) + ")";
  std::string noise = "baseline step-to-step spread " + format::percent1(r.baseline_noise.spread);
  if (!r.noise) noise += ", not weighed: --noise off";
  if (r.baseline_noise.steps < 2) noise = "spread unknown: the baseline lists fewer than 2 steps";
  if (c.value <= r.step_limit) {
    c.outcome = CheckOutcome::passed;
    c.message = change + ", within the limit of " + format::percent1(r.step_limit) + " (" + noise + ")";
  } else if (c.value > r.step_threshold) {
    c.outcome = CheckOutcome::failed;
    c.threshold = r.step_threshold;
    c.message = change + ", above the threshold of " + format::percent1(r.step_threshold) + " (limit " +
                format::percent1(r.step_limit) + ", " + noise + ")";
  } else {
    c.threshold = r.step_threshold;
    cannot_run(c, allow_skip,
               change + ": above the limit of " + format::percent1(r.step_limit) +
                   " but within the baseline's step-to-step spread of " + format::percent1(r.baseline_noise.spread) +
                   ", so it cannot be told from noise (a baseline with steadier steps, or --noise off to hold the "
                   "step time to the limit)");
  }
  return c;
}

CheckResult share_check(const ProfileDiff& d, KernelCategory category, double limit, bool allow_skip) {
  CheckResult c;
  c.name = "share:" + std::string(to_string(category));
  c.threshold = limit;
  if (d.before_kernel_ns <= 0 || d.after_kernel_ns <= 0) {
    cannot_run(c, allow_skip,
               std::string("no kernel time in ") + lacking(d.before_kernel_ns, d.after_kernel_ns) +
                   ": a category's share of it cannot be compared");
    return c;
  }
  double before = 0, after = 0;
  for (const CategoryDelta& x : d.categories)
    if (x.category == category) before = x.before_share, after = x.after_share;
  c.value = after - before;
  const bool over = c.value > limit + kShareEpsilon;
  c.outcome = over ? CheckOutcome::failed : CheckOutcome::passed;
  c.message = std::string(to_string(category)) + " " + format::percent1(before) + " -> " + format::percent1(after) +
              " of kernel time (" + signed_points(c.value) + "), " + (over ? "above" : "within") + " the limit of " +
              signed_points(limit);
  return c;
}

// new-critical: critical in the candidate, absent or less severe in the
// baseline. new-finding: absent from the baseline, any severity.
CheckResult finding_check(const ProfileDiff& d, bool critical_only) {
  CheckResult c;
  c.name = critical_only ? "new-critical" : "new-finding";
  std::string listed;
  for (const FindingDelta& f : d.findings) {
    const bool counts = critical_only ? f.in_after && f.after_severity == Severity::critical &&
                                            (!f.in_before || f.before_severity != Severity::critical)
                                      : f.change == FindingChange::appeared;
    if (!counts) continue;
    c.findings.push_back(f.id);
    listed += (listed.empty() ? "" : "; ") + f.id + ": " + f.after_title;
  }
  c.value = static_cast<double>(c.findings.size());
  c.outcome = c.findings.empty() ? CheckOutcome::passed : CheckOutcome::failed;
  const char* what = critical_only ? "critical finding" : "finding";
  if (c.findings.empty()) {
    const auto n = std::count_if(d.findings.begin(), d.findings.end(), [&](const FindingDelta& f) {
      return f.in_after && (!critical_only || f.after_severity == Severity::critical);
    });
    const std::string plural = std::string(what) + (n == 1 ? "" : "s");
    c.message = std::string("no new ") + what + ": the candidate has " +
                (n == 0 ? std::string("none")
                        : std::to_string(n) + " " + plural + ", " + (n == 1 ? "it is" : "all") +
                              (critical_only ? " critical" : "") + " in the baseline too");
  } else {
    c.message = std::to_string(c.findings.size()) + " new " + what + (c.findings.size() > 1 ? "s" : "") + ": " + listed;
  }
  return c;
}

}  // namespace

CheckReport check_profiles(const Profile& baseline, const Profile& candidate, const CheckLimits& limits) {
  CheckReport r;
  r.diff = diff_profiles(baseline, candidate);
  r.baseline_noise = step_noise(baseline);
  r.noise = limits.noise;
  r.step_limit = std::max(0.0, limits.max_step_regression);
  r.step_threshold = limits.noise ? std::max(r.step_limit, r.baseline_noise.spread) : r.step_limit;
  auto timed = [&r](auto&& run) {
    const auto t0 = std::chrono::steady_clock::now();
    CheckResult c = run();
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.checks.push_back(std::move(c));
  };
  if (limits.max_step_regression >= 0) timed([&] { return step_time_check(r, limits.allow_skip); });
  for (const auto& [category, limit] : limits.max_share_increase)
    timed([&, category = category, limit = limit] { return share_check(r.diff, category, limit, limits.allow_skip); });
  if (limits.fail_on_new_critical) timed([&] { return finding_check(r.diff, true); });
  if (limits.fail_on_new_finding) timed([&] { return finding_check(r.diff, false); });
  return r;
}

}  // namespace gpuscope
