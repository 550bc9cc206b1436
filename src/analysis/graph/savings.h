// The dependency graph's part of the report: each finding's saving becomes
// the simulated saving of its fix where the rule registry gives one (the
// rule of thumb stays otherwise, and Finding::saving_source says which), the
// critical path of the steps, and the predicted step time of each fix alone
// and of all of them together (Profile::simulation). A pass of its own, run
// after analyze(): analyze() stays as fast as it was.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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
// findings (then ordered by saving again, a simulated one first at equal
// savings). A fix whose changed graph has a dependency cycle keeps its rule
// of thumb; one that saves nothing gets 0; Finding::saving_note says which.
// `inputs` are the traces `p` was analysed from, in the same order.
void simulate_findings(std::span<const JobInput> inputs, Profile* p, const SimulationOptions& options = {});

// The same for traces loaded one at a time: visit(i, f) calls f with the
// i-th trace of the job (loaded for the call, freed after); `jobs` traces
// at once. The result does not depend on `jobs`.
using TraceVisitor = std::function<void(std::size_t, const std::function<void(const Trace&)>&)>;
void simulate_findings_each(std::size_t n, const TraceVisitor& visit, Profile* p, const SimulationOptions& options,
                            unsigned jobs);

// The same in parts, for processes that each hold some of a job's traces
// (job/job_files.cpp under MPI; simulate_findings_each() runs the parts in one
// process):
//   1. simulation_plan(p): the fixes to simulate, from p's findings (process 0),
//      sent to every process (encode_plan / decode_plan);
//   2. SimulationShare::simulate(mine, …) in every process, for its traces;
//      each trace's outcome goes to process 0 (encode / decode);
//   3. combine(p) at process 0, which says which fixes count for the job
//      (helps_bytes(), sent to every process: set_helps());
//   4. retogether(mine, …): each process predicts again "every fix together"
//      for those of its traces whose own set of fixes that save time differs
//      from the job's (stale(i)), and sends them (encode_together /
//      decode_together) to process 0, which then calls finish(p).
struct SimulationPlan {
  bool run = false;                // false: nothing to simulate (a job without GPUs, or without traces)
  std::vector<std::string> fixes;  // the distinct fixes of the findings, in the findings' order
  // Of `fixes`, how many at their end are no finding's but a "What would
  // help?" answer's (precision_replay_change()): replayed alone and after
  // the fixes that save time, never among those together.
  std::size_t questions = 0;
  SimulationOptions options;
};
// Sets the findings' Finding::fix from the rule registry (when there is something to simulate).
SimulationPlan simulation_plan(std::size_t n, Profile* p, const SimulationOptions& options);

// Bytes that are not a simulation outcome of this build: says what.
class SimulationCodecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
std::string encode_plan(const SimulationPlan& plan);
// A rule's fix narrowed to what the trace has: the `--scale CATEGORY=F`
// clauses of categories with no kernel time left out (such a clause would
// make the whole change fail).
std::string present_fix(const Profile& p, std::string_view fix);
SimulationPlan decode_plan(std::string_view bytes);  // throws SimulationCodecError

class SimulationShare {
 public:
  SimulationShare(SimulationPlan plan, std::size_t n);
  ~SimulationShare();
  SimulationShare(const SimulationShare&) = delete;
  SimulationShare& operator=(const SimulationShare&) = delete;

  // Simulates traces `mine` (visit(i, f) loads the i-th), `jobs` at once. A
  // trace that fails to load or replay keeps its exception: encode() sends its
  // message, combine() throws the first trace's.
  void simulate(std::span<const std::size_t> mine, const TraceVisitor& visit, unsigned jobs);
  std::string encode(std::size_t i) const;             // trace i's outcome (simulated here)
  void decode(std::size_t i, std::string_view bytes);  // throws SimulationCodecError

  // With every trace's outcome here: fills p as far as the fixes alone; false
  // when the simulation stops there (not simulated, or nothing replayed).
  bool combine(Profile* p);
  std::string helps_bytes() const;         // empty when no trace needs retogether()
  void set_helps(std::string_view bytes);  // throws SimulationCodecError
  bool stale(std::size_t i) const;
  void retogether(std::span<const std::size_t> mine, const TraceVisitor& visit, unsigned jobs);
  std::string encode_together(std::size_t i) const;
  void decode_together(std::size_t i, std::string_view bytes);  // throws SimulationCodecError
  // All fixes together, and the findings in order of saving (after combine() said true).
  void finish(Profile* p);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A job's profile as `gpuscope report` and `gpuscope diff` give it (the CLI
// and the Python module alike): analyze_job(), then, unless `simulate` is
// false, simulate_findings() on the same GPU.
Profile analyze_and_simulate(std::span<const JobInput> inputs, const AnalysisOptions& options, bool simulate = true);

}  // namespace gpuscope::graph
