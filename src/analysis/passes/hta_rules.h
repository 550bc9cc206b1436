// Internal to analysis/: HTA's rules for which GPU ops count and which are
// compute, shared by hta.cpp (the reference emulation) and the device sweep
// (the per-device numbers of the Profile).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "trace/trace.h"

namespace gpuscope::detail {

// HTA's non-compute kernel names (Python re.search semantics): ^nccl, Memcpy,
// Memset, dma, Sync, ^Stream Wait Event, cuda.*LaunchKernel, ^runFunction,
// ^hip, ^hccl.
bool hta_non_compute(std::string_view name);

// Whether HTA counts a kernel as compute, decided once per distinct name.
class HtaComputeNames {
 public:
  explicit HtaComputeNames(const Trace& t) : t_(t), known_(t.strings().size(), -1) {}
  bool operator()(StringId name) {
    std::int8_t& k = known_[name];
    if (k < 0) k = hta_non_compute(t_.str(name)) ? 0 : 1;
    return k == 1;
  }

 private:
  const Trace& t_;
  std::vector<std::int8_t> known_;
};

// Which GPU ops HTA keeps: with >= 2 distinct ProfilerStep#N ranges, only ops
// whose correlation is that of a CPU-side event starting before the last one.
class HtaOpFilter {
 public:
  explicit HtaOpFilter(const Trace& t);
  // A kernel/memcpy/memset with its correlation and launching API row.
  bool keep(std::uint32_t correlation, RowIndex api) const {
    if (!active_ || correlation == 0) return true;
    if (api != kNoRow && t_.api_calls().start[api] < cutoff_) return true;
    return extra_.count(correlation) != 0;
  }
  // A sync row (no API link column): by correlation.
  bool keep_sync(std::uint32_t correlation) const {
    if (!active_ || correlation == 0) return true;
    return api_before_.count(correlation) != 0 || extra_.count(correlation) != 0;
  }
  bool active() const { return active_; }

 private:
  const Trace& t_;
  bool active_ = false;
  TimeNs cutoff_ = 0;
  std::unordered_set<std::uint32_t> extra_, api_before_;
};

}  // namespace gpuscope::detail
