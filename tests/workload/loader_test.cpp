// The host loader: the keyed shuffle is a bijection, every rank reads its own
// disjoint share of each epoch, and the ring of slots delivers the right
// records in order whatever the thread count.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "kernels/data.h"
#include "workloads/resnet/loader.h"

namespace gpuscope::resnet {
namespace {

using kernels::kRecordBytes;

SlotMemory heap_memory() {
  return SlotMemory{[](std::size_t n) { return std::malloc(n); }, [](void* p) { std::free(p); }};
}

TEST(Shuffle, IsABijectionForAnySize) {
  for (std::uint64_t n : {1ull, 2ull, 3ull, 7ull, 64ull, 1000ull, 50000ull}) {
    const Shuffle s(n);
    std::vector<char> hit(n, 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t j = s(i, 12345);
      ASSERT_LT(j, n);
      ASSERT_FALSE(hit[j]) << "n=" << n << " collision at " << i;
      hit[j] = 1;
    }
  }
}

TEST(Shuffle, KeysGiveDifferentOrders) {
  const Shuffle s(1000);
  int same = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) same += s(i, 1) == s(i, 2);
  EXPECT_LT(same, 20);
  int fixed = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) fixed += s(i, 1) == i;
  EXPECT_LT(fixed, 20);
}

TEST(HostLoader, RanksShareEachEpochWithoutOverlap) {
  const CifarDataset data = synthetic_dataset(1, 96);
  HostLoader::Config cfg;
  cfg.batch = 8;
  cfg.world = 3;
  std::multiset<std::uint64_t> seen;
  for (int rank = 0; rank < 3; ++rank) {
    cfg.rank = rank;
    HostLoader l(data, cfg, heap_memory());
    for (int step = 0; step < 4; ++step)  // 4 steps x 3 ranks x 8 = 96 = one epoch
      for (int i = 0; i < 8; ++i) seen.insert(l.record_of(step, i));
  }
  EXPECT_EQ(seen.size(), 96u);
  EXPECT_EQ(std::set<std::uint64_t>(seen.begin(), seen.end()).size(), 96u);
}

TEST(HostLoader, DeliversTheRightRecordsInOrder) {
  const CifarDataset data = synthetic_dataset(2, 50);
  for (int threads : {1, 3}) {
    HostLoader::Config cfg;
    cfg.batch = 7;
    cfg.slots = 3;
    cfg.threads = threads;
    cfg.seed = 5;
    HostLoader l(data, cfg, heap_memory());
    for (int step = 0; step < 30; ++step) {  // several epochs
      const std::uint8_t* batch = l.acquire(step);
      for (int i = 0; i < cfg.batch; ++i)
        ASSERT_EQ(std::memcmp(batch + i * kRecordBytes, data.records.data() + l.record_of(step, i) * kRecordBytes,
                              kRecordBytes),
                  0)
            << "step " << step << " sample " << i;
      l.release(step);
    }
    EXPECT_GE(l.stalls(), 0);
  }
}

TEST(HostLoader, EpochsReshuffle) {
  const CifarDataset data = synthetic_dataset(2, 16);
  HostLoader::Config cfg;
  cfg.batch = 16;
  HostLoader l(data, cfg, heap_memory());
  int same = 0;
  std::set<std::uint64_t> epoch1;
  for (int i = 0; i < 16; ++i) {
    same += l.record_of(0, i) == l.record_of(1, i);
    epoch1.insert(l.record_of(1, i));
  }
  EXPECT_LT(same, 8);
  EXPECT_EQ(epoch1.size(), 16u);
}

TEST(HostLoader, StopsCleanlyWithBatchesPending) {
  const CifarDataset data = synthetic_dataset(2, 20);
  HostLoader::Config cfg;
  cfg.batch = 4;
  cfg.threads = 4;
  HostLoader l(data, cfg, heap_memory());
  l.acquire(0);
  // Destructor runs with loader threads blocked on full slots.
}

TEST(HostLoader, RejectsBadConfiguration) {
  const CifarDataset data = synthetic_dataset(2, 4);
  HostLoader::Config cfg;
  cfg.rank = 2;
  cfg.world = 2;
  EXPECT_THROW(HostLoader(data, cfg, heap_memory()), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscope::resnet
