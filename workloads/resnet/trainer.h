// One rank of a training run: one GPU, its share of every batch, its NCCL
// communicator. main.cpp starts one per GPU (threads) or one per process
// (mpirun) and hands each its context.
#pragma once

#include <nccl.h>

#include "workloads/resnet/cifar.h"
#include "workloads/resnet/comm.h"
#include "workloads/resnet/options.h"

namespace gpuscope::resnet {

struct RankContext {
  int rank = 0, world = 1;
  int device = 0;
  ncclComm_t comm = nullptr;
  RankGroup* group = nullptr;
  const CifarDataset* host_data = nullptr;  // --data host|cifar
  bool group_per_process = false;           // one process per rank (mpirun): per-process capture
};

// Trains (or, with --verify, checks one step against the CPU reference) and
// returns the process exit status. Rank 0 prints; GPU and library failures
// throw GpuError.
int run_rank(const Options& opt, const RankContext& ctx);

}  // namespace gpuscope::resnet
