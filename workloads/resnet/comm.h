// How the ranks of a run find each other.
//
// Single node: one process, one thread per GPU, the communicators made by
// ncclCommInitAll and host-side coordination through a std::barrier.
// Multi-node: one process per GPU started by mpirun; rank 0 makes the NCCL
// unique id and MPI broadcasts it (the only thing MPI carries besides the
// final consistency check).
#pragma once

#include <nccl.h>

#include <barrier>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpuscope::resnet {

// Host-side coordination between ranks: a barrier and an agreement check.
class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual void barrier() = 0;
  // Whether every rank passed the same value (called by all ranks).
  virtual bool all_equal(std::uint64_t value) = 0;
};

// Ranks as threads of this process.
class ThreadGroup final : public RankGroup {
 public:
  explicit ThreadGroup(int ranks);
  void barrier() override;
  bool all_equal(std::uint64_t value) override;

 private:
  int ranks_;
  std::barrier<> barrier_;
  std::mutex mu_;
  std::vector<std::uint64_t> values_;
};

// One communicator per local GPU (devices 0 .. n-1), made together.
class LocalComms {
 public:
  explicit LocalComms(int n);
  ~LocalComms();
  LocalComms(const LocalComms&) = delete;
  LocalComms& operator=(const LocalComms&) = delete;
  ncclComm_t operator[](int i) const { return comms_[i]; }

 private:
  std::vector<ncclComm_t> comms_;
};

#if defined(GPUSCOPE_HAVE_MPI)
// True when this process was started by mpirun (OpenMPI or a PMI launcher).
bool launched_by_mpi();

// MPI_Init on construction, MPI_Finalize on destruction.
class MpiSession final : public RankGroup {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession() override;
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  // The communicator of this rank's GPU (the device must be current).
  ncclComm_t make_comm();
  void barrier() override;
  bool all_equal(std::uint64_t value) override;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};
#endif

}  // namespace gpuscope::resnet
