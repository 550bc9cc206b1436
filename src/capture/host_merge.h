// Joining the host side of a `gpuscope capture` run to its traces.
//
// After the program has exited, each Python process's host file is added to
// the .gscope file its CUDA capture wrote (rewritten whole, atomically).
// A process without one — no GPU, no CUDA, or a DataLoader worker — goes
// into the file of the process it was forked from when that one has a file,
// else into a new file named by the run's output pattern, so the host side is
// kept even where CUPTI could not start.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture/process_report.h"
#include "trace/builder.h"
#include "trace/trace.h"

namespace gpuscope::capture {

struct HostMerge {
  std::uint32_t owner = 0;          // the process whose file holds the rows
  std::vector<std::uint32_t> pids;  // every process merged into it (owner first)
  std::string output;               // the file written; empty when `error` is set
  bool host_only = false;           // a new file: the process had no CUDA capture
  std::uint64_t ops = 0, module_calls = 0, python_frames = 0, samples = 0;
  std::string framework;              // the owner's note: what was recorded, or why not
  std::string steps;                  // where the steps came from, or why there are none
  std::vector<std::string> problems;  // unreadable parts of host files (bounded)
  std::string error;                  // why nothing was written
};

// Merges every host file in `dir` (see above). `reports` are the run's CUDA
// processes; `output_pattern` is the run's -o pattern (absolute). Never throws:
// a merge that fails leaves the CUDA file as it was and says why in `error`.
std::vector<HostMerge> merge_host_files(const std::string& dir, const std::vector<ProcessReport>& reports,
                                        const std::string& output_pattern);

// Copies every stored row, string, track, device, process, counter series
// and the meta of `t` into an empty builder, ids unchanged.
void copy_trace(const Trace& t, TraceBuilder& b);

}  // namespace gpuscope::capture
