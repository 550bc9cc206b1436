#include "workloads/resnet/loader.h"

#include <cstring>
#include <stdexcept>

#include "kernels/data.h"

namespace gpuscope::resnet {

using kernels::hash_mix;
using kernels::kRecordBytes;

// ---- Shuffle ---------------------------------------------------------------
Shuffle::Shuffle(std::uint64_t n) : n_(n) {
  if (n == 0) throw std::invalid_argument("shuffle of an empty set");
  int bits = 2;
  while ((std::uint64_t{1} << bits) < n) ++bits;
  if (bits % 2) ++bits;
  half_bits_ = bits / 2;
}

std::uint64_t Shuffle::operator()(std::uint64_t i, std::uint32_t key) const {
  // A balanced Feistel network is a bijection of [0, 2^bits) whatever the
  // round function; walking the cycle until the value falls below n restricts
  // it to a bijection of [0, n). The domain is < 4n, so a few walks suffice.
  const std::uint64_t mask = (std::uint64_t{1} << half_bits_) - 1;
  std::uint64_t x = i;
  do {
    std::uint64_t l = x >> half_bits_, r = x & mask;
    for (std::uint32_t round = 0; round < 4; ++round) {
      const std::uint64_t f = hash_mix(key + round * 0x9e3779b9U, static_cast<std::uint32_t>(r)) & mask;
      const std::uint64_t nl = r;
      r = l ^ f;
      l = nl;
    }
    x = (l << half_bits_) | r;
  } while (x >= n_);
  return x;
}

// ---- HostLoader ---------------------------------------------------------------
HostLoader::HostLoader(const CifarDataset& data, Config cfg, SlotMemory mem)
    : data_(data),
      cfg_(cfg),
      mem_(std::move(mem)),
      shuffle_(data.count),
      slot_bytes_(static_cast<std::size_t>(cfg.batch) * kRecordBytes) {
  if (cfg.batch < 1 || cfg.slots < 2 || cfg.threads < 1 || cfg.world < 1 || cfg.rank < 0 || cfg.rank >= cfg.world)
    throw std::invalid_argument("HostLoader: bad configuration");
  for (int s = 0; s < cfg_.slots; ++s) {
    auto* p = static_cast<std::uint8_t*>(mem_.allocate(slot_bytes_));
    if (!p) {
      for (std::uint8_t* q : slot_data_) mem_.free(q);
      throw std::runtime_error("HostLoader: cannot allocate a slot");
    }
    slot_data_.push_back(p);
    slot_ready_.push_back(-1);
    slot_free_for_.push_back(s);
  }
  for (int t = 0; t < cfg_.threads; ++t) threads_.emplace_back([this] { run(); });
}

HostLoader::~HostLoader() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  for (std::uint8_t* p : slot_data_) mem_.free(p);
}

std::uint64_t HostLoader::record_of(std::int64_t step, int i) const {
  const std::uint64_t p =
      (static_cast<std::uint64_t>(step) * cfg_.world + cfg_.rank) * cfg_.batch + static_cast<std::uint64_t>(i);
  const std::uint64_t epoch = p / data_.count;
  return shuffle_(p % data_.count, hash_mix(cfg_.seed, static_cast<std::uint32_t>(epoch)));
}

void HostLoader::run() {
  for (;;) {
    std::int64_t step;
    int slot;
    {
      std::unique_lock lock(mu_);
      step = next_fill_++;
      slot = static_cast<int>(step % cfg_.slots);
      // Wait until the consumer has released the slot's previous batch.
      cv_.wait(lock, [&] { return stop_ || slot_free_for_[slot] == step; });
      if (stop_) return;
    }
    std::uint8_t* dst = slot_data_[slot];
    for (int i = 0; i < cfg_.batch; ++i)
      std::memcpy(dst + static_cast<std::size_t>(i) * kRecordBytes,
                  data_.records.data() + record_of(step, i) * kRecordBytes, kRecordBytes);
    {
      std::lock_guard lock(mu_);
      slot_ready_[slot] = step;
    }
    cv_.notify_all();
  }
}

const std::uint8_t* HostLoader::acquire(std::int64_t step) {
  const int slot = static_cast<int>(step % cfg_.slots);
  std::unique_lock lock(mu_);
  if (slot_ready_[slot] != step) {
    stalls_.fetch_add(1);
    cv_.wait(lock, [&] { return slot_ready_[slot] == step; });
  }
  return slot_data_[slot];
}

void HostLoader::release(std::int64_t step) {
  const int slot = static_cast<int>(step % cfg_.slots);
  {
    std::lock_guard lock(mu_);
    if (slot_ready_[slot] != step) throw std::logic_error("HostLoader::release of a step not acquired");
    slot_ready_[slot] = -1;
    slot_free_for_[slot] = step + cfg_.slots;
  }
  cv_.notify_all();
}

}  // namespace gpuscope::resnet
