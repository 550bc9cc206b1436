// A job of many trace files, analysed one file at a time (analysis/job/job.h):
// what `gpuscope report`, diff and check, Python's report() and diff() of
// paths and the viewer's job view share. One process by default; the CLI
// passes its MPI processes (cli/mpi.h) through Processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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

// analyze_job stopped because JobOptions::cancel was set.
class Cancelled : public Error {
 public:
  using Error::Error;
};

// What a caller that shows each rank (the viewer's job view) learns besides
// the Profile: which files the job's profile was made of and how their
// collectives were matched.
struct JobRanks {
  // The index (into analyze_job's files) of each rank's file, in the order of
  // its digest (the job's file order less the files left out).
  std::vector<std::size_t> files;
  // matched_collective_parts() of those digests: per instance of
  // Profile::collectives, the index of each rank's part in its digest's
  // collectives (kNoCollectivePart: none). Empty for a job of one file.
  std::vector<std::vector<std::uint32_t>> parts;
};

// Called with each file while its trace is open for its digest, from the
// thread that digests it (`jobs` at once): a file's index, its trace and its
// digest (nullptr for a job of one file, analysed whole).
using RankVisitor = std::function<void(std::size_t file, const Trace& trace, const RankDigest* digest)>;

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
  // For a caller that keeps something of each rank (the viewer's lanes),
  // computed while the rank is open so that no file is opened a third time:
  // called for every file of this process that could be digested.
  RankVisitor on_rank;
  JobRanks* ranks = nullptr;  // when set, receives which files the profile was made of
  // When set: counts the files read for their digests (digested or left out).
  std::atomic<std::uint64_t>* files_read = nullptr;
  // When it becomes true, the files not yet opened are not, and analyze_job
  // throws Cancelled.
  const std::atomic<bool>* cancel = nullptr;
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
