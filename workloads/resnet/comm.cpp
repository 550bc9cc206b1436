#include "workloads/resnet/comm.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "workloads/resnet/gpu_runtime.h"

#if defined(GPUSCOPE_HAVE_MPI)
#include <mpi.h>
#endif

namespace gpuscope::resnet {

ThreadGroup::ThreadGroup(int ranks) : ranks_(ranks), barrier_(ranks) {}

void ThreadGroup::barrier() { barrier_.arrive_and_wait(); }

bool ThreadGroup::all_equal(std::uint64_t value) {
  // Every rank appends its value, all wait, all read the last `ranks` values,
  // all wait again before anyone can start the next round.
  {
    std::lock_guard lock(mu_);
    values_.push_back(value);
  }
  barrier_.arrive_and_wait();
  bool equal;
  {
    std::lock_guard lock(mu_);
    const auto first = values_.end() - ranks_;
    equal = std::all_of(first, values_.end(), [&](std::uint64_t v) { return v == *first; });
  }
  barrier_.arrive_and_wait();
  return equal;
}

LocalComms::LocalComms(int n) : comms_(n, nullptr) {
  std::vector<int> devices(n);
  std::iota(devices.begin(), devices.end(), 0);
  NCCL_CHECK(ncclCommInitAll(comms_.data(), n, devices.data()));
}

LocalComms::~LocalComms() {
  for (ncclComm_t c : comms_)
    if (c) ncclCommDestroy(c);
}

#if defined(GPUSCOPE_HAVE_MPI)
bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

MpiSession::MpiSession(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // Ranks on the same node, numbered from 0: the GPU this process drives.
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_free(&local);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

ncclComm_t MpiSession::make_comm() {
  ncclUniqueId id;
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm = nullptr;
  NCCL_CHECK(ncclCommInitRank(&comm, size_, id, rank_));
  return comm;
}

void MpiSession::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

bool MpiSession::all_equal(std::uint64_t value) {
  std::uint64_t root = value;
  MPI_Bcast(&root, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int mine = root == value ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}
#endif

}  // namespace gpuscope::resnet
