// The processes of one `mpirun -n P gpuscope report …` (or srun): each digests
// its share of the job's files and the digests gather at process 0, which
// prints the report; the others print nothing (docs/scale.md). MPI is
// initialised only for the commands that share work (report, diff) and only
// when the launcher's environment says the process is one of several; a plain
// `gpuscope report` never touches MPI.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gpuscope::cli::mpi {

// What the environment says about how this process was launched: by an MPI
// launcher (Open MPI's OMPI_COMM_WORLD_SIZE/RANK, PMI_SIZE/PMI_RANK of MPICH
// and Slurm's PMI-2, PMIX_RANK of PMIx launchers such as `srun --mpi=pmix`),
// and which rank of how many (size 0: the launcher does not say).
struct Launch {
  bool launched = false;
  int rank = -1;  // -1: not told
  int size = 0;   // 0: not told
};
Launch launch_from(const std::function<const char*(const char*)>& getenv);
Launch launch_from_environment();

// Joins the job's processes when launched as one of several (MPI_Init on the
// first call); a no-op otherwise. Throws cli::Error when launched under
// several processes by a gpuscope built without MPI (GPUSCOPE_MPI): every
// process exits 2, and only rank 0 (when the environment tells the rank)
// prints why.
void join();

bool active();  // joined, with more than one process
int rank();     // 0 when not active
int size();     // 1 when not active
bool quiet();   // a process other than rank 0 of an active job: it prints nothing
bool built_with_mpi();

// Every process passes its items (item i belongs to process i % size());
// process 0 receives the others' and calls take(i, bytes) for every item of
// the others in the order of i; the others send theirs and return. Items are
// byte strings of any length. Errors inside (a process gone): the job is
// aborted with exit 2.
void gather_items(std::size_t n, const std::function<std::string(std::size_t)>& mine,
                  const std::function<void(std::size_t, std::string_view)>& take);

// Process 0's `bytes`, returned in every process (process 0 gets its own
// back; the others' `bytes` are not read). Every process of the job must
// call it, in the same order relative to gather_items(). Errors inside: the
// job is aborted with exit 2, as for gather_items().
std::string broadcast(std::string bytes);

// Ends the job with exit 2, naming this process and `what` (cli::Error
// when not active).
[[noreturn]] void fail(const std::string& what);

// The exit code every process ends with (process 0's), after which MPI is
// finalised; `code` unchanged when not active.
int finish(int code);

}  // namespace gpuscope::cli::mpi
