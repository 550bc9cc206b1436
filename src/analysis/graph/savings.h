// The dependency graph's part of the report: each finding's saving becomes
// the simulated saving of its fix where the rule registry gives one (the
// rule of thumb stays otherwise, and Finding::saving_source says which), the
// critical path of the steps, and the predicted step time of each fix alone
// and of all of them together (Profile::simulation). A pass of its own, run
// after analyze(): analyze() stays as fast as it was.
#pragma once

#include <cstddef>
#include <span>

#include "analysis/analyze.h"
#include "analysis/profile.h"

namespace gpuscope::graph {

struct SimulationOptions {
  // A trace with more steps than this (per GPU) is simulated on the ones in
  // its middle: steps repeat, and the report stays fast on 10M-kernel traces.
  std::size_t window_steps = 32;
  // A trace without steps is simulated whole up to this many GPU ops (and a
  // window of steps only when it holds no more than this).
  std::size_t max_ops = 4'000'000;
  std::size_t top_ops = 10;  // ops listed on the critical path
  // Only this GPU's steps count (CUDA ordinal; kNoDevice: all), as with
  // AnalysisOptions::device.
  std::uint32_t device = kNoDevice;
};

// Fills p->critical_path and p->simulation, and the simulated savings of the
// findings (then ordered by saving again). `inputs` are the traces `p` was
// analysed from, in the same order.
void simulate_findings(std::span<const JobInput> inputs, Profile* p, const SimulationOptions& options = {});

// A job's profile as `gpuscope report` and `gpuscope diff` give it (the CLI
// and the Python module alike): analyze_job(), then, unless `simulate` is
// false, simulate_findings() on the same GPU.
Profile analyze_and_simulate(std::span<const JobInput> inputs, const AnalysisOptions& options, bool simulate = true);

}  // namespace gpuscope::graph
