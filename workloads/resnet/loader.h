// The host data path: CPU loader threads gather each step's records into a
// ring of (pinned) slots ahead of the GPU; the trainer copies a ready slot to
// the device asynchronously and hands it back.
//
// Sampling is an epoch-wise shuffle without replacement, split across ranks:
// global sample p = (step * world + rank) * batch + i, epoch p / N, record
// shuffle(p mod N, epoch). The shuffle is a stateless keyed bijection (a
// Feistel network with cycle walking), so any thread computes any sample with
// no shared state and every rank agrees on the permutation.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "workloads/resnet/cifar.h"

namespace gpuscope::resnet {

// A keyed permutation of [0, n).
class Shuffle {
 public:
  explicit Shuffle(std::uint64_t n);
  std::uint64_t operator()(std::uint64_t i, std::uint32_t key) const;

 private:
  std::uint64_t n_;
  int half_bits_;
};

// Slot memory: pinned host memory in the trainer, plain memory in tests.
struct SlotMemory {
  std::function<void*(std::size_t)> allocate;
  std::function<void(void*)> free;
};

class HostLoader {
 public:
  struct Config {
    int batch = 128;
    int rank = 0, world = 1;
    std::uint32_t seed = 1;
    int slots = 4;    // ring depth: how far loaders may run ahead
    int threads = 2;  // loader threads
  };

  HostLoader(const CifarDataset& data, Config cfg, SlotMemory mem);
  ~HostLoader();
  HostLoader(const HostLoader&) = delete;
  HostLoader& operator=(const HostLoader&) = delete;

  // Blocks until step's batch (batch * 3073 bytes) is ready; steps must be
  // acquired in order 0, 1, 2, … and released before step + slots is acquired.
  const std::uint8_t* acquire(std::int64_t step);
  void release(std::int64_t step);

  // The record index sample i of a step reads (what a slot holds).
  std::uint64_t record_of(std::int64_t step, int i) const;

  // Times acquire() found its batch not ready yet: the input pipeline was the
  // bottleneck. Reported by the trainer, never silently dropped.
  std::int64_t stalls() const { return stalls_.load(); }

 private:
  void run();

  const CifarDataset& data_;
  Config cfg_;
  SlotMemory mem_;
  Shuffle shuffle_;
  std::size_t slot_bytes_;
  std::vector<std::uint8_t*> slot_data_;
  std::vector<std::int64_t> slot_ready_;     // step whose data the slot holds, or -1
  std::vector<std::int64_t> slot_free_for_;  // first step allowed to fill the slot
  std::mutex mu_;
  std::condition_variable cv_;
  std::int64_t next_fill_ = 0;
  bool stop_ = false;
  std::atomic<std::int64_t> stalls_{0};
  std::vector<std::thread> threads_;
};

}  // namespace gpuscope::resnet
