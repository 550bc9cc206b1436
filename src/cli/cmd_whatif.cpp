// gpuscope whatif TRACE [changes…] [--json] [-o OUT]
//
// Replays the trace's dependency graph, applies the changes (each the fix of
// a finding) and replays again: step time as measured, as replayed (with the
// replay error, which says how far to trust the rest) and as changed, the
// speedup, and the critical path with its breakdown. docs/whatif.md.
#include <memory>
#include <string>
#include <vector>

#include "analysis/graph/whatif.h"
#include "cli/command.h"
#include "cli/output.h"
#include "export/whatif_report.h"
#include "import/open_trace.h"
#include "trace/files.h"

namespace gpuscope::cli {

namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Predict the step time after a change: replay the trace's dependency graph (launches, stream order, "
    "syncs, waits between streams, collectives) with the observed durations, apply the changes and replay "
    "again. Prints the step time as measured, as replayed (with the replay error: how far to trust the "
    "prediction) and as changed, the speedup, and the critical path split by kind and kernel category. "
    "docs/whatif.md.";

struct WhatIfArgs {
  std::string input;
  std::string output;
  bool json = false;
  std::vector<std::string> remove, scale;
  bool overlap_allreduce = false, overlap_update = false, no_input_wait = false, no_host_sync = false,
       cuda_graphs = false, balance_ranks = false;
  std::size_t top = 10;
};

// The changes in their fixed order (graph::order_changes), whatever order
// the flags came in.
std::vector<graph::Change> changes_of(const WhatIfArgs& a) {
  std::vector<graph::Change> out;
  for (const std::string& r : a.remove) out.push_back(graph::parse_remove(r));
  for (const std::string& s : a.scale) out.push_back(graph::parse_scale(s));
  using K = graph::ChangeKind;
  const std::pair<bool, K> flags[] = {{a.no_input_wait, K::no_input_wait},
                                      {a.no_host_sync, K::no_host_sync},
                                      {a.cuda_graphs, K::cuda_graphs},
                                      {a.balance_ranks, K::balance_ranks},
                                      {a.overlap_allreduce, K::overlap_allreduce},
                                      {a.overlap_update, K::overlap_update}};
  for (const auto& [on, kind] : flags)
    if (on) out.push_back(graph::make_change(kind));
  graph::order_changes(out);
  return out;
}

void run(const WhatIfArgs& a) {
  std::vector<graph::Change> changes;
  try {
    changes = changes_of(a);
  } catch (const graph::ChangeError& e) {
    throw Error(a.input + ": " + e.what());
  }
  if (!a.output.empty()) {
    const std::vector<std::string> inputs{a.input};
    files::refuse_output_among_inputs(a.output, inputs);
  }
  const Trace trace = open_trace(a.input);
  graph::WhatIfOptions o;
  o.top_ops = a.top;
  graph::WhatIf w;
  try {
    w = graph::what_if(trace, changes, o);
  } catch (const graph::ChangeError& e) {
    throw Error(a.input + ": " + e.what());
  }
  const WhatIfHeader h = whatif_header(trace, a.input);
  write_output(a.output, a.json ? whatif_json(w, h) : whatif_text(w, h));
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<WhatIfArgs>(app, "whatif", kAbout, run);
  cmd->add_option("TRACE", args->input, "Trace (.gscope, Chrome/Kineto .json or .json.gz)")->required();
  cmd->add_option("--remove", args->remove,
                  "Remove the ops of a kernel category (padding, broadcast, transpose, …) or whose name matches "
                  "/REGEX/; their dependencies pass through (repeatable)");
  cmd->add_option("--scale", args->scale,
                  "Scale the ops of CATEGORY=F or /REGEX/=F, e.g. normalization=0.5 (repeatable)");
  cmd->add_flag("--no-input-wait", args->no_input_wait,
                "Data loading takes no time: data-loading ranges on the CPU shrink to zero and compute no longer "
                "waits for host-to-device input copies on another stream");
  cmd->add_flag("--no-host-sync", args->no_host_sync, "Host synchronisations inside steps no longer wait for the GPU");
  cmd->add_flag("--cuda-graphs", args->cuda_graphs,
                "Each launch costs the CPU 1 µs and the CPU time between calls inside steps goes");
  cmd->add_flag("--balance-ranks", args->balance_ranks, "Every GPU's compute moves to the median GPU's");
  cmd->add_flag("--overlap-allreduce", args->overlap_allreduce,
                "Each all-reduce bucket starts when the gradients it reduces are ready, on a stream of its own");
  cmd->add_flag("--overlap-update", args->overlap_update,
                "Optimizer kernels run on a side stream, each after its bucket's all-reduce");
  cmd->add_flag("--json", args->json, "Print JSON (schema gpuscope.whatif/1, docs/whatif.md)");
  cmd->add_option("--top", args->top, "Ops listed on each critical path (default 10)")->check(CLI::Range(0, 1000));
  add_output_option(*cmd, args->output);
  add_examples(*cmd, {"gpuscope whatif run.gscope --remove padding",
                      "gpuscope whatif run.gscope --scale normalization=0.5 --overlap-allreduce",
                      "gpuscope whatif run.gscope --cuda-graphs --json -o whatif.json"});
}

const CommandRegistration registration(52, add);  // after report

}  // namespace
}  // namespace gpuscope::cli
