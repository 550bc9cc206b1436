// A job of many trace files, analysed one file at a time (analysis/job/job.h):
// what `gpuscope report`, diff and check and Python's report() and diff() of
// paths share. One process by default; the CLI passes its MPI processes
// (cli/mpi.h) through Processes.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/job/job.h"
#include "analysis/profile.h"

namespace gpuscope::job {

// A job that cannot be analysed: what() is "FILE: PROBLEM" (FILE may be the
// first file and " …" for the whole job); the CLI prints it and exits 2.
class Error : public std::runtime_error {
 public:
  Error(std::string file, std::string problem)
      : std::runtime_error(file + ": " + problem), file_(std::move(file)), problem_(std::move(problem)) {}
  const std::string& file() const { return file_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_, problem_;
};

// The GPU asked for has no activity in any file (Python raises ValueError).
class NoDevice : public Error {
 public:
  using Error::Error;
};

// The processes that share a job's files (file i: process i % size()); this
// base is one process alone. The CLI's MPI processes (cli/job.cpp) override
// every call; their contract is cli/mpi.h's.
class Processes {
 public:
  virtual ~Processes() = default;
  virtual bool active() const { return false; }  // more than one process
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  virtual bool quiet() const { return false; }  // a process other than 0: it returns an empty Profile
  // Process 0 receives the others' items (take(i, bytes), in the order of i).
  virtual void gather_items(std::size_t /*n*/, const std::function<std::string(std::size_t)>& /*mine*/,
                            const std::function<void(std::size_t, std::string_view)>& /*take*/) {}
  virtual std::string broadcast(std::string bytes) { return bytes; }  // process 0's bytes, in every process
  [[noreturn]] virtual void fail(const std::string& what) { throw std::runtime_error(what); }
};

struct JobOptions {
  AnalysisOptions analysis;
  bool device_given = false;  // analysis.device was asked for: some file must have that GPU
  bool simulate = true;
  unsigned jobs = 0;  // files analysed at once; 0: every core
  // Entries the listing of the inputs left out (export/trace_inputs.h): they
  // join the profile's left_out.
  std::vector<LeftOut> left_out;
  // Called between the digests and the simulation (the second read of each
  // file): tests change files there, to see them left out.
  std::function<void()> after_digests;
  // When set, receives what each analysed file says about its run (file,
  // rank, job size, host, command line; no profile): what check_job()
  // compares, for a caller that compares runs (check).
  std::vector<RankDigest>* runs = nullptr;
  Processes* processes = nullptr;  // nullptr: this process alone
};

// One file: the trace's profile as analyze_and_simulate() gives it. Several:
// each file opened, digested and freed (`jobs` at a time), the files that
// cannot be analysed left out (Profile::left_out says why; so is a file that
// disappears, shrinks or is rewritten between its two reads), files of
// different runs refused, then the job's profile from the digests and the
// simulation over the files again, one at a time. At most `jobs` traces are
// in memory at once, whatever the number of files. Throws job::Error when
// nothing can be analysed (NoDevice for a GPU no file has). With several
// processes, they share the files and gather the digests at process 0, which
// returns the one Profile; the others return an empty one.
Profile analyze_job(const std::vector<std::string>& files, const JobOptions& options);

// One side of a comparison (diff, check): a trace, a directory of traces
// analysed as one job (analyze_job), or a report saved with `report --json`
// (which names no run: it adds nothing to options.runs). Entries the listing
// of a directory leaves out join the profile's left_out. Throws job::Error.
Profile load_side(const std::string& path, const JobOptions& options);

}  // namespace gpuscope::job
