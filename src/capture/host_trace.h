// Host files: what gpuscope's Python startup hook (src/capture/pyhook/)
// recorded inside one captured process — framework ops with shapes, module
// calls, Python stacks around ops, samples of every thread's stack — and how
// they join a trace.
//
// Each Python process of a `gpuscope capture` run writes `<pid>.host` in the
// run's private directory: lines of compact JSON, each one chunk (format in
// docs/capture.md, "The host file"). The file is untrusted input: a line that
// is cut (the process was killed mid-write) or malformed is skipped and
// counted, never a crash, and a field of the wrong type skips its chunk.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/builder.h"

namespace gpuscope::capture {

// Range categories of the host file (the trace's range domains).
enum class HostRangeCategory : std::uint8_t { cpu_op = 0, user_annotation = 1, python_function = 2 };

struct HostRange {
  TimeNs start = 0, end = 0;
  // Linux thread id; negative: PyTorch's own number for a thread whose Linux
  // id the hook did not learn (add_host_process places it).
  std::int64_t tid = 0;
  std::uint32_t name = 0, dims = 0, types = 0;  // indexes into HostProcess::strings
  HostRangeCategory category = HostRangeCategory::cpu_op;
  std::int64_t sequence = -1;     // PyTorch's sequence number (forward op <-> its backward), -1 none
  std::uint32_t fwd_thread = 0;   // a backward op's forward thread, PyTorch's number (Kineto's "Fwd thread id"), 0 none
  std::uint64_t external_id = 0;  // the profiler's id of the op (Kineto's "External id"), 0 none
};

struct HostSample {
  TimeNs time = 0;
  std::uint32_t tid = 0;    // Linux thread id, 0 if Python did not know it
  std::uint32_t stack = 0;  // index into strings: frames outermost first, "file(line): function", ';'-separated
};

// Time the hook stood the program still (taking PyTorch's results at a flush point).
struct HostOverhead {
  TimeNs start = 0, end = 0;
  std::uint32_t tid = 0;
  std::uint32_t kind = 0;  // index into strings
};

struct HostProcess {
  std::string path;
  bool has_header = false;  // the "process" chunk was read
  std::uint32_t pid = 0, ppid = 0;
  // The parent whose file it joins: forked without exec (a DataLoader
  // worker) or started by multiprocessing; 0 if neither.
  std::uint32_t forked_from = 0;
  int rank = -1;  // from the process's environment, -1 unknown
  std::string command;
  TimeNs start_ns = 0;
  std::vector<std::string> strings{std::string()};  // index 0 is ""
  std::vector<HostRange> ranges;
  std::vector<HostSample> samples;
  std::vector<HostOverhead> overheads;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> thread_names;  // (Linux tid, string index)
  std::map<std::string, std::uint64_t> stats;                         // summed over the file
  std::map<std::string, std::string> notes;                           // the last value of each
  bool finished = false;                                              // the "end" chunk was read
  std::uint64_t bad_lines = 0;        // lines skipped: cut, not JSON, or not what their kind needs
  std::vector<std::string> problems;  // the first few, "line N: …"
};

// Reads one host file. Throws InputError (naming the file) only when it
// cannot be read at all; what is wrong inside is counted in bad_lines.
HostProcess read_host_file(const std::string& path);
// Every `<pid>.host` in `dir`, by pid.
std::vector<HostProcess> read_host_files(const std::string& dir);

// Adds one process's rows to `b`: ops and annotations as ranges (domain
// cpu_op, user_annotation, python_function) and samples as marks (domain
// "host_sample", the stack as the name) on its (pid, tid) tracks, thread
// names where a track has none, the hook's flushes as overheads, its stats
// (summed) and notes as meta
// properties — under their own key for the file's `owner`, with ".pid<N>"
// appended for another process merged into the same file. Threads known only
// by PyTorch's number go to the thread whose CUDA calls their ops enclose
// (when the trace has CUDA calls), else to a track of their own named
// "PyTorch thread N".
void add_host_process(const HostProcess& p, TraceBuilder& b, bool owner);

// Steps for threads that have none: ProfilerStep#N ranges (as torch.profiler
// writes them), ending where each Optimizer.step#… range on the thread ends
// (the first begins at the DataLoader's __next__ before it, else the first
// module call), or, without an optimizer, from one DataLoader __next__ to the
// next. Nothing when the trace already has ProfilerStep ranges. Returns the
// note for the trace ("6 steps from Optimizer.step#SGD.step on thread 4505").
std::string add_host_steps(TraceBuilder& b);

}  // namespace gpuscope::capture
