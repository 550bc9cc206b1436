// A Profile (and a ProfileDiff) as text for people: findings first, largest
// estimated saving first, then per-GPU summary, steps, time by category, top
// kernels, launches, copies, syncs, HTA's breakdown, ranks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "analysis/diff.h"
#include "analysis/profile.h"

namespace gpuscope {

struct ReportTextOptions {
  std::size_t top = 10;        // kernels listed
  std::size_t max_steps = 12;  // steps listed (the summary covers all)
  std::size_t width = 100;     // wrap paragraphs at this many columns
  bool colour = false;         // ANSI colour for the findings' severities (a terminal)
};

std::string report_text(const Profile& p, const ReportTextOptions& options = {});
std::string diff_text(const ProfileDiff& d, const ReportTextOptions& options = {});

// What the program is, as the report's Workload line says it: "pytorch,
// training, eager, 1 rank, DDP, foreach optimizer"; with `evidence`, the
// ops and kernels that told, in parentheses after it.
std::string workload_line(const WorkloadKind& w, bool evidence = true);
// An idle cause (IdleCharge::cause) in words: "input wait", "host sync", ...
std::string_view idle_cause_words(std::string_view cause);
// Where the host was during one idle cause (Profile::host_while_idle), as
// the report writes it: "host (N samples, THREAD): path share".
std::string host_where_line(const HostWhere& w);

}  // namespace gpuscope
