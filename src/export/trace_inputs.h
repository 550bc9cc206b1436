// The trace files that command-line inputs name, shared by the CLI's
// report, diff and check and by the viewer's job view.
#pragma once

#include <string>
#include <vector>

#include "analysis/profile.h"

namespace gpuscope {

// True when the file starts as a saved gpuscope report (`report --json`), not
// a trace: false for anything unreadable.
bool is_saved_report(const std::string& path);

struct TraceInputs {
  std::vector<std::string> files;
  // Entries of the directories that are not taken, each with why: FIFOs,
  // devices, sockets, symbolic link loops and dangling links, folders, files
  // not named like a trace, saved reports. Never silently skipped, and never
  // a reason to refuse the directory while it holds a trace file.
  std::vector<LeftOut> left_out;
};

// Each directory's trace files (.gscope, .json, .json.gz, .sqlite; sorted by
// name), with what else the directory holds left out; every other input as
// given (the trace reader says what is wrong with it, if anything). Throws
// InputError naming a directory that cannot be listed or holds no trace file.
TraceInputs list_trace_inputs(const std::vector<std::string>& inputs);

// list_trace_inputs(inputs).files.
std::vector<std::string> trace_files(const std::vector<std::string>& inputs);

}  // namespace gpuscope
