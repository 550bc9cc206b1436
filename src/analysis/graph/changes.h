// Changes to a dependency graph: the fix of a finding, expressed on the graph,
// so that replaying the changed graph predicts the step time after the fix.
//
// Each change edits a copy of the graph (durations, latencies, edges, and for
// the overlap changes the stream an op runs on); docs/whatif.md says exactly
// what each one does and which parts of a real fix it leaves out.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph/graph.h"

namespace gpuscope::graph {

enum class ChangeKind : std::uint8_t {
  remove,             // --remove CATEGORY|/REGEX/: the ops disappear, their dependencies pass through
  scale,              // --scale CATEGORY=F|/REGEX/=F: the ops take F times as long
  overlap_allreduce,  // --overlap-allreduce: each bucket's all-reduce starts when its gradients are ready
  overlap_update,     // --overlap-update: the optimizer runs on a side stream after its bucket's all-reduce
  no_input_wait,      // --no-input-wait: data loading takes no time; compute no longer waits for input copies
  no_host_sync,       // --no-host-sync: host synchronisations inside steps no longer wait
  cuda_graphs,        // --cuda-graphs: a launch costs the CPU 1 µs, the CPU time between launches goes
  balance_ranks,      // --balance-ranks: every device's compute moves to the median device's
};

struct Change {
  ChangeKind kind = ChangeKind::remove;
  bool by_category = true;  // remove/scale: a kernel category, else a regular expression over op names
  KernelCategory category = KernelCategory::other;
  std::string pattern;  // the regular expression (RE2, trace/name_pattern.h; searched anywhere in the name)
  double factor = 1;    // scale
  std::string text;     // as written: "--remove padding", "--scale normalization=0.5"
};

// A change the user wrote that cannot be: an unknown category (the message
// lists the valid ones), a bad expression, a bad factor.
class ChangeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "padding" or "/Eigen.*Padding/"; "normalization=0.5" or "/bn_fw/=0.5".
Change parse_remove(std::string_view arg);
Change parse_scale(std::string_view arg);
Change make_change(ChangeKind kind);  // the changes without an argument
// Changes written as on the command line: "--remove padding --scale gemm=0.5 --no-input-wait".
std::vector<Change> parse_changes(std::string_view spec);
// Puts changes in the order they are applied, whatever order they were
// written in (stable): removals and scalings first, then --no-input-wait,
// --no-host-sync, --cuda-graphs, --balance-ranks, --overlap-allreduce,
// --overlap-update (docs/whatif.md).
void order_changes(std::vector<Change>& changes);
// The category names --remove and --scale accept, comma-separated.
std::string category_names();

// What a change did: how many things it matched, which ones, and how much
// time they held in the measured trace.
struct ChangeResult {
  std::string text;
  std::uint64_t matched = 0;
  std::string what;       // "ops", "data-loading gaps", "synchronisations", …
  TimeNs matched_ns = 0;  // their measured time (durations; for gaps, the gap time)
  std::string note;       // how it was applied where a heuristic decided ("buckets from 18 wgrad kernels per step")
};

// Applies the changes, in order, to a copy of `base`; `trace` is the trace it
// was built from (names for regular expressions). One result per change.
Graph apply_changes(const Graph& base, const Trace& trace, std::span<const Change> changes,
                    std::vector<ChangeResult>* results);

}  // namespace gpuscope::graph
