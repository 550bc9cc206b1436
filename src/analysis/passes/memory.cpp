// The memory pass: peaks of the memory series per GPU and per step, the GPU's
// capacity, and the calls that allocate or free device memory directly.
// Definitions: docs/metrics.md, "Memory".
#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/detail/context.h"

namespace gpuscope::detail {

bool is_allocator_call(std::string_view name) {
  const bool alloc_or_free = name.starts_with("cudaMalloc") || name.starts_with("cudaFree") ||
                             name.starts_with("cuMemAlloc") || name.starts_with("cuMemFree") ||
                             name.starts_with("hipMalloc") || name.starts_with("hipFree");
  return alloc_or_free && name.find("Async") == std::string_view::npos && name.find("Host") == std::string_view::npos;
}

bool is_cache_flush_name(std::string_view name) {
  for (std::string_view w : {"clear_cache", "empty_cache", "flush_cache", "cache_flush", "flush_l2", "clear_l2"})
    if (contains_nocase(name, w)) return true;
  return false;
}

namespace {

// A memory series' samples: a step function, each sample the level from its
// time on.
struct Levels {
  const std::vector<TimeNs>* time = nullptr;
  const std::vector<double>* value = nullptr;
  RowRange rows;

  bool empty() const { return rows.size() == 0; }
  static std::uint64_t bytes(double v) {
    if (!(v > 0)) return 0;  // negative levels (and NaN) are not bytes held
    return v >= 1.8e19 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(std::llround(v));
  }
  // Most and least in [t0, t1]: the level at t0 (the last sample before it)
  // and every sample inside. Nothing when no sample is at or before t1.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> max_min(TimeNs t0, TimeNs t1) const {
    const auto first = time->begin() + rows.begin, last = time->begin() + rows.end;
    auto it = std::upper_bound(first, last, t0);  // first sample after t0
    std::size_t i = static_cast<std::size_t>(it - time->begin());
    std::optional<std::pair<std::uint64_t, std::uint64_t>> out;
    auto take = [&](std::size_t row) {
      const std::uint64_t b = bytes((*value)[row]);
      if (!out)
        out = std::pair{b, b};
      else
        out->first = std::max(out->first, b), out->second = std::min(out->second, b);
    };
    if (it != first) take(i - 1);
    for (; i < rows.end && (*time)[i] <= t1; ++i) take(i);
    return out;
  }
  std::uint64_t peak() const {
    double m = 0;
    for (std::size_t i = rows.begin; i < rows.end; ++i) m = std::max(m, (*value)[i]);
    return bytes(m);
  }
};

Levels levels(const Trace& t, std::string_view name, std::uint32_t device) {
  Levels l{&t.counters().time, &t.counters().value, {}};
  const std::uint32_t s = t.find_counter_series(name, device);
  if (s != kNoSeries) l.rows = t.rows_of(TableId::counters, s);
  return l;
}

void allocator_calls(const RankedTrace& rt, Evidence* ev) {
  const Trace& t = *rt.trace;
  const ApiCallTable& a = t.api_calls();
  if (!any_string(t, is_allocator_call)) return;
  std::vector<std::int8_t> known;  // per StringId: -1 not yet looked at, 0 no, 1 yes
  for (std::size_t i = 0; i < a.size(); ++i) {
    const StringId name = a.name[i];
    if (name >= known.size()) known.resize(name + 1, -1);
    if (known[name] < 0) known[name] = is_allocator_call(t.str(name)) ? 1 : 0;
    if (!known[name]) continue;
    ++ev->allocator_calls;
    const TimeNs d = a.end[i] - a.start[i];
    ev->allocator_call_ns += d;
    ev->allocator.add(rt.shift({a.start[i], a.end[i]}), d);
  }
}

}  // namespace

void memory_pass(const RankedTrace& rt, const AnalysisOptions&, std::vector<DeviceSummary>& devices,
                 std::vector<Step>& steps, Evidence* ev) {
  const Trace& t = *rt.trace;
  for (DeviceSummary& d : devices) {
    if (const Device* dev = t.device(d.id); dev && dev->memory_bytes) d.memory_bytes = dev->memory_bytes;
    const Levels allocated = levels(t, series_name::kMemoryAllocated, d.id);
    const Levels reserved = levels(t, series_name::kMemoryReserved, d.id);
    if (!allocated.empty()) d.peak_allocated_bytes = allocated.peak();
    if (!reserved.empty()) d.peak_reserved_bytes = reserved.peak();
    if (allocated.empty()) continue;
    for (Step& s : steps) {
      if (s.device != d.id) continue;
      if (const auto m = allocated.max_min(s.range.start, s.range.end)) {
        s.peak_allocated_bytes = m->first;
        s.min_allocated_bytes = m->second;
      }
    }
  }
  allocator_calls(rt, ev);
}

}  // namespace gpuscope::detail
