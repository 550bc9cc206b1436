// The regression gate for CI: is a candidate run within the limits a
// baseline run sets? Each limit is one check (step time, the share of a
// kernel category, new critical findings, new findings) that passes, fails,
// could not run (the runs lack what it needs, or cannot tell), or was
// skipped because the caller allowed that; its numbers in one line. Built on
// diff_profiles(), so the numbers are those `gpuscope diff` shows.
//
// Step-time noise: a run's mean step time moves from one run to the next
// without any change to the code. A step-time change within the limit
// passes; one above both the limit and the baseline's own step-to-step spread
// (the standard deviation of its step times over their mean) fails; one
// above the limit but within the spread cannot be told from noise, so the
// check could not decide (never a silent pass). With noise off, the limit
// alone decides. Definitions: docs/cli.md (`gpuscope check`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/diff.h"
#include "analysis/profile.h"

namespace gpuscope {

struct CheckLimits {
  // Largest allowed increase of the mean step time, relative (0.05 = 5%);
  // negative = no step-time check.
  double max_step_regression = 0.05;
  // Largest allowed increase of a category's share of kernel time, in
  // fractions of kernel time (0.02 = 2 percentage points).
  std::vector<std::pair<KernelCategory, double>> max_share_increase;
  bool fail_on_new_critical = false;  // a finding critical in the candidate but not in the baseline
  bool fail_on_new_finding = false;   // a finding (any severity) absent from the baseline
  // Weigh a step-time change against the baseline's step-to-step spread;
  // false: the limit alone decides.
  bool noise = true;
  // A check that could not run is skipped (on purpose) instead of failing
  // the gate.
  bool allow_skip = false;
};

// not_run: the check could not run or could not decide (no steps, a change
// that cannot be told from noise); the gate then fails with the reason.
// skipped: the same, when CheckLimits::allow_skip said so.
enum class CheckOutcome : std::uint8_t { passed, failed, skipped, not_run };
std::string_view to_string(CheckOutcome o);

struct CheckResult {
  std::string name;  // "step-time", "share:padding", "new-critical", "new-finding"
  CheckOutcome outcome = CheckOutcome::passed;
  std::string message;  // one line with the numbers (or why it could not run)
  // The measured change and what it was held to, in the check's unit: step
  // time and shares as fractions (0.074 = +7.4%, 0.021 = +2.1 points);
  // findings as counts.
  double value = 0, threshold = 0;
  std::vector<std::string> findings;  // new-critical / new-finding: the finding ids that failed it
  double seconds = 0;                 // time spent deciding it (JUnit's testcase time)
};

// Step times of the baseline: what the noise threshold comes from.
struct StepNoise {
  std::uint64_t steps = 0;  // steps the spread was computed over (all GPUs)
  TimeNs mean_ns = 0, stddev_ns = 0;
  double spread = 0;  // stddev_ns / mean_ns; 0 with fewer than 2 steps
};

struct CheckReport {
  static constexpr const char* kSchema = "gpuscope.check/1";

  ProfileDiff diff;          // baseline = before, candidate = after
  StepNoise baseline_noise;  // of the baseline's steps
  bool noise = true;         // CheckLimits::noise
  double step_limit = 0;     // CheckLimits::max_step_regression: a change up to it passes
  // What a change must exceed to fail: max(step_limit, baseline_noise.spread)
  // with noise on, step_limit with noise off. Between the two the check
  // cannot decide (not_run).
  double step_threshold = 0;
  std::vector<CheckResult> checks;
  // How the caller found the two to be runs of one workload, or why it could
  // not tell; shown with the verdict (empty: nothing said).
  std::string same_workload;

  bool passed() const;    // every check passed or was skipped on purpose
  bool complete() const;  // no check is not_run
  // 0 passed, 1 a check failed (all could run), 2 a check could not run.
  int exit_code() const;
  std::size_t count(CheckOutcome o) const;
  const CheckResult* find(std::string_view name) const;
};

// The step-to-step spread of a profile's steps (every GPU's steps pooled).
StepNoise step_noise(const Profile& p);

// Runs every check `limits` asks for: the step-time check (unless
// max_step_regression < 0), one per max_share_increase entry, then the
// finding checks. Each check's `seconds` is measured.
CheckReport check_profiles(const Profile& baseline, const Profile& candidate, const CheckLimits& limits);

}  // namespace gpuscope
