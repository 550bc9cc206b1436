// A job of many trace files, analysed one file at a time (analysis/job/job.h):
// shared by report, diff and check.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/job/job.h"
#include "analysis/profile.h"

namespace gpuscope::cli {

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
};

// One file: the trace's profile as analyze_and_simulate() gives it. Several:
// each file opened, digested and freed (`jobs` at a time), the files that
// cannot be analysed left out (Profile::left_out says why; so is a file that
// disappears, shrinks or is rewritten between its two reads), files of
// different runs refused, then the job's profile from the digests and the
// simulation over the files again, one at a time. Throws cli::Error when
// nothing can be analysed. Under MPI (cli/mpi.h joined) the processes share
// the files and gather the digests at process 0, which returns the one
// process's Profile; the others return an empty one (they print nothing).
Profile analyze_files(const std::vector<std::string>& files, const JobOptions& options);

// One side of a comparison (diff, check): a trace, a directory of traces
// analysed as one job (analyze_files), or a report saved with `report --json`
// (which names no run: it adds nothing to options.runs). Entries the listing
// of a directory leaves out join the profile's left_out. Throws cli::Error.
Profile load_profile(const std::string& path, const JobOptions& options);

}  // namespace gpuscope::cli
