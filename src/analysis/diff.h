// Before/after comparison of two Profiles: what a user needs after switching a
// layout, fusing a pad or adding DataLoader workers — step time, where kernel
// time moved (per category, per kernel) and which findings went away or came.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/profile.h"

namespace gpuscope {

struct CategoryDelta {
  KernelCategory category = KernelCategory::other;
  TimeNs before_ns = 0, after_ns = 0;  // per step when ProfileDiff::per_step, else totals
  double before_share = 0, after_share = 0;
};

struct KernelDelta {
  std::string name;
  KernelCategory category = KernelCategory::other;
  TimeNs before_ns = 0, after_ns = 0;  // per step when ProfileDiff::per_step, else totals
  std::uint64_t before_count = 0, after_count = 0;
};

// GPU time (with the ops inside) of one framework op, matched by name and input shapes and types.
struct OpDelta {
  std::string name, shapes, dtypes;
  TimeNs before_ns = 0, after_ns = 0;  // per step when ProfileDiff::per_step, else totals
  std::uint64_t before_calls = 0, after_calls = 0;
};

// A hardware series' mean over the GPUs that measured it, on each side
// (nullopt where a side has no such series).
struct HwDelta {
  std::string name, unit;  // "hw.sm_active", "%"
  std::optional<double> before, after;
  std::uint64_t before_samples = 0, after_samples = 0;
};

enum class FindingChange : std::uint8_t { resolved, appeared, better, worse, unchanged };
std::string_view to_string(FindingChange c);
bool parse_finding_change(std::string_view s, FindingChange* out);

struct FindingDelta {
  std::string id;
  FindingChange change = FindingChange::unchanged;
  bool in_before = false, in_after = false;
  Severity before_severity = Severity::info, after_severity = Severity::info;
  double before_metric = 0, after_metric = 0, threshold = 0;
  TimeNs before_saving_ns = 0, after_saving_ns = 0;
  std::string before_title, after_title;
};

// One cause of the GPUs' idle time (Profile::idle_charges) in both runs,
// per GPU (and per step when both have steps), with the finding each run
// charges it to (empty: none).
struct IdleDelta {
  std::string cause;
  TimeNs before_ns = 0, after_ns = 0;
  std::string before_finding, after_finding;
};

// A "What would help?" answer that changed between the runs.
struct HelpDelta {
  std::string id, question;
  bool in_before = false, in_after = false;
  Verdict before = Verdict::unknown, after = Verdict::unknown;
  std::string before_reason, after_reason;
};

struct ProfileDiff {
  static constexpr const char* kSchema = "gpuscope.diff/1";

  std::string before_label, after_label;  // file names
  // Per-step figures when both sides have steps (runs of different lengths
  // compare fairly), totals otherwise.
  bool per_step = false;
  std::uint64_t before_steps = 0, after_steps = 0;       // steps per GPU
  TimeNs before_step_ns = 0, after_step_ns = 0;          // mean step time (0 without steps)
  TimeNs before_kernel_ns = 0, after_kernel_ns = 0;      // kernel time (per step or total)
  double before_utilization = 0, after_utilization = 0;  // mean over GPUs
  double before_concurrency = 0, after_concurrency = 0;  // mean over GPUs
  double before_idle_share = 0, after_idle_share = 0;    // HTA idle share, mean over rows
  // Memory: the largest peak over GPUs; nullopt where a side's trace does not say.
  std::optional<std::uint64_t> before_peak_allocated, after_peak_allocated;
  std::optional<std::uint64_t> before_peak_reserved, after_peak_reserved;
  std::vector<CategoryDelta> categories;  // largest change first
  std::vector<KernelDelta> kernels;       // largest change first, at most top_kernels
  std::vector<OpDelta> ops;               // largest change first, at most top_kernels
  std::vector<HwDelta> hardware;          // by series name: what the GPUs' counters measured
  std::vector<FindingDelta> findings;     // resolved, appeared, worse, better, unchanged
  std::vector<HelpDelta> helps;           // "What would help?" answers that changed, in the report's order
  std::vector<IdleDelta> idle;            // the idle time by cause, in the report's order of causes
  std::vector<std::string> summary;       // one-line statements, most important first
};

ProfileDiff diff_profiles(const Profile& before, const Profile& after, std::size_t top_kernels = 15);

}  // namespace gpuscope
