// A job of many trace files, analysed one file at a time (job/job_files.h),
// its files shared between the processes of `mpirun -n P gpuscope …`
// (cli/mpi.h): shared by report, diff and check.
#pragma once

#include <string>
#include <vector>

#include "analysis/profile.h"
#include "job/job_files.h"

namespace gpuscope::cli {

using JobOptions = job::JobOptions;

// job::analyze_job() with this process's MPI processes (cli/mpi.h): under
// MPI, process 0 returns the job's Profile and the others an empty one.
// Throws cli::Error (job::Error's message) when nothing can be analysed.
Profile analyze_files(const std::vector<std::string>& files, const JobOptions& options);

// job::load_side() with the MPI processes; throws cli::Error.
Profile load_profile(const std::string& path, const JobOptions& options);

}  // namespace gpuscope::cli
