// The hardware pass: what each GPU's counters measured (series "hw.*" from
// CUPTI PM sampling, "nvml.*" from NVML) summarised per device, the samples
// attributed to the kernels running when they were taken, and the steps
// during which the clocks were held down for a thermal or power reason.
// Definitions: docs/metrics.md, "Hardware metrics".
//
// Attribution is a statistical estimate: a sample goes to the longest kernel
// in flight at its time (none when the GPU was idle), and every figure built
// from samples keeps its sample count so that the findings make no claim
// from too few.
#include "analysis/passes/hardware.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/ops/roofline.h"

namespace gpuscope::detail {

namespace {

// NVML's clock event reasons that mean a thermal or power limit
// (nvmlClocksEventReason*: SwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown
// 0x20, HwThermalSlowdown 0x40, HwPowerBrakeSlowdown 0x80). Idle (0x1),
// application clocks (0x2) and sync boost (0x10) are not a slowdown.
constexpr std::uint64_t kThermalOrPower = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// Whether two of the kernels, (start, row) by start, start and end
// together: the only ones whose order in `kernels` is a choice that shows
// (as the last of the longest in flight). Runs of one start longer than
// `kLongRun` count as such, unchecked.
bool twins(const KernelTable& k, const std::vector<std::pair<TimeNs, RowIndex>>& kernels) {
  constexpr std::size_t kLongRun = 64;
  for (std::size_t a = 0, b = 0; a < kernels.size(); a = b) {
    for (b = a + 1; b < kernels.size() && kernels[b].first == kernels[a].first;) ++b;
    if (b - a > kLongRun) return true;
    for (std::size_t x = a; x + 1 < b; ++x)
      for (std::size_t y = x + 1; y < b; ++y)
        if (k.end[kernels[x].second] == k.end[kernels[y].second]) return true;
  }
  return false;
}

// The device's kernels as (start, row), by start, in the order std::sort
// gives them by start. Where each track's kernels are by start, the tracks
// merged instead, for less than the sort: the same order but among kernels
// that start together, whose order shows only if two also end together
// (twins); then the sort.
std::vector<std::pair<TimeNs, RowIndex>> kernels_by_start(const Trace& t, std::uint32_t device) {
  const KernelTable& k = t.kernels();
  const auto before = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::vector<std::pair<TimeNs, RowIndex>> by_start;
  std::vector<std::size_t> track_end;
  bool tracks_sorted = true;
  auto collect = [&] {  // track by track
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      const Track& track = t.tracks()[tr];
      if (track.kind != TrackKind::gpu || track.device != device) continue;
      const RowRange rows = t.rows_of(TableId::kernels, tr);
      const auto begin = static_cast<std::ptrdiff_t>(by_start.size());
      for (RowIndex i = rows.begin; i < rows.end; ++i) by_start.emplace_back(k.start[i], i);
      tracks_sorted = tracks_sorted && std::is_sorted(by_start.begin() + begin, by_start.end(), before);
      track_end.push_back(by_start.size());
    }
  };
  collect();
  if (tracks_sorted) {
    for (std::size_t r = 1; r < track_end.size(); ++r)
      std::inplace_merge(by_start.begin(), by_start.begin() + static_cast<std::ptrdiff_t>(track_end[r - 1]),
                         by_start.begin() + static_cast<std::ptrdiff_t>(track_end[r]), before);
    if (!twins(k, by_start)) return by_start;
    by_start.clear(), track_end.clear();
    collect();
  }
  std::sort(by_start.begin(), by_start.end(), before);
  return by_start;
}

// What a hw.* series measures, as far as attribution cares.
enum class HwKind { sm_active, tensor_active, sm_issue, dram, other };
HwKind hw_kind_of(std::string_view name) {
  if (name == "hw.sm_active") return HwKind::sm_active;
  if (name == "hw.tensor_active") return HwKind::tensor_active;
  if (name == "hw.sm_issue") return HwKind::sm_issue;
  if (name == "hw.dram_read" || name == "hw.dram_write") return HwKind::dram;
  return HwKind::other;
}

// Whether a sample at `at` with value `v` counts: a finite value in the window `w`.
bool counts(TimeRange w, TimeNs at, double v) {
  return std::isfinite(v) && !(w.duration() > 0 && (at < w.start || at > w.end));
}

// The kernel in flight at each time a device's hw.* series sampled (in the
// window): the times, sorted and distinct, and at each the longest kernel
// in flight (of the longest, the last by start), or kNoRow when the GPU was
// idle. One sweep over the kernels by start with a heap of those started,
// longest first, rather than a search per sample.
class SampleKernels {
 public:
  // `kernels`: the device's, by start (kernels_by_start).
  SampleKernels(const Trace& t, const std::vector<std::pair<TimeNs, RowIndex>>& kernels,
                const std::vector<std::uint32_t>& series, TimeRange w) {
    collect_times(t, series, w);
    const KernelTable& k = t.kernels();
    kernel_.reserve(times_.size());
    category_.reserve(times_.size());
    std::vector<std::pair<TimeNs, std::size_t>> started;  // a heap of (length, index in `kernels`)
    std::size_t j = 0;
    for (TimeNs at : times_) {
      for (; j < kernels.size() && kernels[j].first <= at; ++j) {
        const RowIndex r = kernels[j].second;
        if (k.end[r] <= at) continue;  // over before this time, and so before any later one
        started.emplace_back(k.end[r] - k.start[r], j);
        std::push_heap(started.begin(), started.end());
      }
      // Ended kernels leave the heap once on top; time only grows.
      while (!started.empty() && k.end[kernels[started.front().second].second] <= at) {
        std::pop_heap(started.begin(), started.end());
        started.pop_back();
      }
      const RowIndex kr = started.empty() ? kNoRow : kernels[started.front().second].second;
      kernel_.push_back(kr);
      category_.push_back(kr == kNoRow ? KernelCategory{} : k.category_at(kr));
    }
  }
  std::size_t size() const { return times_.size(); }
  // The index of `at`, one of the times; a cursor makes a series' samples in
  // time order a walk rather than a search each.
  std::size_t index_of(TimeNs at, std::size_t& cursor) const {
    if (cursor >= times_.size() || times_[cursor] > at)
      cursor = static_cast<std::size_t>(std::lower_bound(times_.begin(), times_.end(), at) - times_.begin());
    while (times_[cursor] < at) ++cursor;
    return cursor;
  }
  RowIndex kernel(std::size_t i) const { return kernel_[i]; }
  KernelCategory category(std::size_t i) const { return category_[i]; }

 private:
  // The times of the series' samples that count, sorted and distinct.
  void collect_times(const Trace& t, const std::vector<std::uint32_t>& series, TimeRange w) {
    const CounterTable& c = t.counters();
    std::vector<TimeNs> one, merged;
    for (std::uint32_t s : series) {
      const RowRange rows = t.rows_of(TableId::counters, s);
      if (same_times(c, rows, w)) continue;  // the usual case: series sampled together
      one.clear();
      for (RowIndex i = rows.begin; i < rows.end; ++i)
        if (counts(w, c.time[i], c.value[i])) one.push_back(c.time[i]);
      if (!std::is_sorted(one.begin(), one.end())) std::sort(one.begin(), one.end());
      one.erase(std::unique(one.begin(), one.end()), one.end());
      merged.clear();
      std::set_union(times_.begin(), times_.end(), one.begin(), one.end(), std::back_inserter(merged));
      times_.swap(merged);
    }
  }

  // Whether the samples in `rows` that count were taken at times_, each once.
  bool same_times(const CounterTable& c, RowRange rows, TimeRange w) const {
    std::size_t p = 0;
    for (RowIndex i = rows.begin; i < rows.end; ++i)
      if (counts(w, c.time[i], c.value[i]) && (p >= times_.size() || times_[p++] != c.time[i])) return false;
    return p == times_.size();
  }

  std::vector<TimeNs> times_;
  std::vector<RowIndex> kernel_;
  std::vector<KernelCategory> category_;
};

struct Sums {
  double sum = 0;
  std::uint64_t n = 0;
  void add(double v) { sum += v, ++n; }
  std::optional<double> mean() const { return n ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt; }
};

struct CategorySums {
  Sums sm_active, tensor_active, sm_issue, dram, dram_share;
};

// DRAM throughput of one sample, in both units where the device's peak
// bandwidth converts: CUPTI gives B/s, Nsight Systems a percent of the peak.
struct Dram {
  double bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  double share = std::numeric_limits<double>::quiet_NaN();  // fraction of the peak bandwidth
};
// `pct`: whether the series' unit is "%".
Dram dram_of(bool pct, double v, double peak) {
  Dram d;
  if (pct) {
    d.share = v / 100.0;
    if (peak > 0) d.bytes_per_s = d.share * peak;
  } else {
    d.bytes_per_s = v;
    if (peak > 0) d.share = v / peak;
  }
  return d;
}
// Adds what is known of `x` to `into`.
void add_dram(Dram& into, const Dram& x) {
  auto add = [](double& a, double b) {
    if (std::isfinite(b)) a = std::isfinite(a) ? a + b : b;
  };
  add(into.bytes_per_s, x.bytes_per_s);
  add(into.share, x.share);
}

// The device's peak DRAM bandwidth: the trace's device properties, else the datasheet of its model.
double peak_bandwidth_of(const Trace& t, std::uint32_t device) {
  double peak_bandwidth = 0;
  for (const Device& dev : t.devices())
    if (dev.id == device) {
      peak_bandwidth = dev.peak_memory_bandwidth;
      if (peak_bandwidth <= 0)
        if (const std::optional<DevicePeaks> p = peaks_for_device(device_model_name(dev)))
          peak_bandwidth = p->memory_bandwidth;
    }
  return peak_bandwidth;
}

// What a device's hw.* samples add up to, per category of the kernel in
// flight at each; DRAM read and write are separate series, summed per
// sample time (indexed as SampleKernels' times; unknown where no kernel ran).
struct SampleSums {
  std::array<CategorySums, kKernelCategoryCount> by_cat{};
  std::unordered_map<StringId, std::uint64_t> low_kernels;  // kernels in flight at low-SM-activity samples
  std::vector<Dram> dram_at;
  Sums busy;
};

// Series s's samples in the window `w`: its metric (min, mean, max), and each
// hw.* sample attributed to the kernel in flight.
void add_series(const Trace& t, const AnalysisOptions& opt, TimeRange w, const SampleKernels* at_kernels,
                std::uint32_t s, double peak_bandwidth, DeviceHw& hw, SampleSums& sums) {
  const CounterTable& c = t.counters();
  const KernelTable& k = t.kernels();
  const CounterSeries& cs = t.counter_series()[s];
  const RowRange rows = t.rows_of(TableId::counters, s);
  const bool attribute = at_kernels && cs.name.starts_with(series_name::kHardwarePrefix);
  const HwKind kind = hw_kind_of(cs.name);
  const bool pct = cs.unit == "%";
  HwMetric m{cs.name, cs.unit, 0, 0, 0, 0};
  double sum = 0;
  std::size_t cursor = 0;
  for (RowIndex i = rows.begin; i < rows.end; ++i) {
    const TimeNs at = c.time[i];
    const double v = c.value[i];
    if (!counts(w, at, v)) continue;
    m.min = m.samples ? std::min(m.min, v) : v;
    m.max = m.samples ? std::max(m.max, v) : v;
    sum += v;
    ++m.samples;
    if (!attribute) continue;
    // The sample, to the kernel in flight at its time.
    const std::size_t ti = at_kernels->index_of(at, cursor);
    const RowIndex kr = at_kernels->kernel(ti);
    if (kr == kNoRow) continue;
    CategorySums& cat_sums = sums.by_cat[static_cast<int>(at_kernels->category(ti))];
    const double f = pct ? v / 100.0 : v;  // a fraction of peak: "%" series hold 0–100
    switch (kind) {
      case HwKind::sm_active:
        cat_sums.sm_active.add(f);
        sums.busy.add(f);
        if (f < opt.thresholds.hw_low_sm_active) {
          ++hw.low_busy_samples;
          ++sums.low_kernels[k.name[kr]];
        }
        break;
      case HwKind::tensor_active: cat_sums.tensor_active.add(f); break;
      case HwKind::sm_issue: cat_sums.sm_issue.add(f); break;
      case HwKind::dram: add_dram(sums.dram_at[ti], dram_of(pct, v, peak_bandwidth)); break;
      case HwKind::other: break;
    }
  }
  if (m.samples) {
    m.mean = sum / static_cast<double>(m.samples);
    hw.metrics.push_back(std::move(m));
  }
}

// The sums per kernel category (most samples first), busy samples, and the
// kernels most often in flight at low SM activity.
void summarise_categories(const Trace& t, const SampleKernels* at_kernels, SampleSums& sums, DeviceHw& hw) {
  for (std::size_t i = 0; i < sums.dram_at.size(); ++i) {
    const Dram& v = sums.dram_at[i];
    CategorySums& cs = sums.by_cat[static_cast<int>(at_kernels->category(i))];
    if (std::isfinite(v.bytes_per_s)) cs.dram.add(v.bytes_per_s);
    if (std::isfinite(v.share)) cs.dram_share.add(v.share);
  }
  for (int ci = 0; ci < kKernelCategoryCount; ++ci) {
    const CategorySums& cs = sums.by_cat[ci];
    const std::uint64_t n = std::max({cs.sm_active.n, cs.tensor_active.n, cs.sm_issue.n, cs.dram.n, cs.dram_share.n});
    if (!n) continue;
    HwCategory hc;
    hc.category = static_cast<KernelCategory>(ci);
    hc.samples = cs.sm_active.n;
    hc.sm_active = cs.sm_active.mean();
    hc.tensor_active = cs.tensor_active.mean();
    hc.sm_issue = cs.sm_issue.mean();
    hc.dram_bytes_per_s = cs.dram.mean();
    hc.dram_share = cs.dram_share.mean();
    hc.issue_samples = cs.sm_issue.n;
    hc.dram_samples = std::max(cs.dram.n, cs.dram_share.n);
    hw.by_category.push_back(hc);
  }
  std::stable_sort(hw.by_category.begin(), hw.by_category.end(),
                   [](const HwCategory& a, const HwCategory& b) { return a.samples > b.samples; });
  hw.busy_samples = sums.busy.n;
  hw.busy_sm_active = sums.busy.mean();
  std::vector<std::pair<std::uint64_t, StringId>> low(sums.low_kernels.size());
  std::size_t li = 0;
  for (const auto& [name, n] : sums.low_kernels) low[li++] = {n, name};
  std::sort(low.begin(), low.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : t.str(a.second) < t.str(b.second);
  });
  for (std::size_t i = 0; i < low.size() && i < 5; ++i) hw.low_kernels.emplace_back(t.str(low[i].second));
}

// Per step: the mean of each series' samples inside it.
void step_means(const Trace& t, std::uint32_t device, double peak_bandwidth, const std::vector<Step*>& steps) {
  const CounterTable& c = t.counters();
  const std::vector<CounterSeries>& all = t.counter_series();
  struct PerStep {
    const char* series;
    std::optional<double> StepHw::*member;
  };
  const PerStep per_step[] = {{"hw.sm_active", &StepHw::sm_active},
                              {"hw.sm_occupancy", &StepHw::sm_occupancy},
                              {"hw.tensor_active", &StepHw::tensor_active},
                              {"nvml.sm_clock", &StepHw::sm_clock_mhz},
                              {"nvml.power", &StepHw::power_w},
                              {"nvml.temperature", &StepHw::temperature_c}};
  auto mean_in_steps = [&](std::uint32_t series, auto&& store) {
    if (series == kNoSeries) return;
    const RowRange rows = t.rows_of(TableId::counters, series);
    RowIndex i = rows.begin;
    for (Step* st : steps) {  // in time order, not overlapping
      while (i < rows.end && c.time[i] < st->range.start) ++i;
      Sums m;
      for (RowIndex j = i; j < rows.end && c.time[j] < st->range.end; ++j)
        if (std::isfinite(c.value[j])) m.add(c.value[j]);
      if (m.n) store(*st, m.sum / static_cast<double>(m.n));
    }
  };
  for (const PerStep& ps : per_step) {
    const std::uint32_t series = t.find_counter_series(ps.series, device);
    const bool pct = series != kNoSeries && all[series].unit == "%";
    mean_in_steps(series, [&](Step& st, double v) { st.hw.*ps.member = pct ? v / 100.0 : v; });
  }
  // DRAM: read + write, each series' mean (in B/s: a percent of the peak
  // only where the device's peak bandwidth is known).
  for (const char* dram : {"hw.dram_read", "hw.dram_write"}) {
    const std::uint32_t series = t.find_counter_series(dram, device);
    if (series == kNoSeries) continue;
    mean_in_steps(series, [&](Step& st, double v) {
      const double bytes = dram_of(all[series].unit == "%", v, peak_bandwidth).bytes_per_s;
      if (std::isfinite(bytes)) st.hw.dram_bytes_per_s = st.hw.dram_bytes_per_s.value_or(0) + bytes;
    });
  }
}

// The mean SM clock of the clock samples nearest in time to the throttled ones.
std::optional<double> clock_when_throttled(const Trace& t, std::uint32_t clock,
                                           const std::vector<TimeNs>& throttled_at) {
  const CounterTable& c = t.counters();
  const RowRange crows = t.rows_of(TableId::counters, clock);
  Sums clk;
  for (TimeNs at : throttled_at) {
    const auto first = c.time.begin() + crows.begin, last = c.time.begin() + crows.end;
    auto it = std::lower_bound(first, last, at);
    if (it == last && it != first) --it;
    if (it == last) continue;
    if (it != first && std::abs(*(it - 1) - at) < std::abs(*it - at)) --it;
    const double v = c.value[static_cast<std::size_t>(it - c.time.begin())];
    if (std::isfinite(v)) clk.add(v);
  }
  return clk.mean();
}

// Clocks: steps with a thermal or power reason among their samples.
void summarise_throttling(const Trace& t, std::uint32_t device, DeviceHw& hw, const std::vector<Step*>& steps) {
  const CounterTable& c = t.counters();
  const std::uint32_t throttle = t.find_counter_series("nvml.throttle_reasons", device);
  const std::uint32_t clock = t.find_counter_series("nvml.sm_clock", device);
  for (const HwMetric& m : hw.metrics)
    if (m.name == "nvml.sm_clock") hw.sm_clock_max_mhz = m.max;
  if (throttle == kNoSeries) return;
  const RowRange trows = t.rows_of(TableId::counters, throttle);
  std::vector<TimeNs> throttled_at;
  for (RowIndex i = trows.begin; i < trows.end; ++i) {
    const double v = c.value[i];
    if (!(v >= 0) || v >= 1.8e19) continue;
    const std::uint64_t mask = static_cast<std::uint64_t>(v) & kThermalOrPower;
    if (!mask) continue;
    ++hw.throttle_samples;
    hw.throttle_mask |= mask;
    throttled_at.push_back(c.time[i]);
  }
  if (clock != kNoSeries && !throttled_at.empty())
    hw.throttled_sm_clock_mhz = clock_when_throttled(t, clock, throttled_at);
  TimeNs throttled_sum = 0, other_sum = 0;
  for (Step* st : steps) {
    const auto it = std::lower_bound(throttled_at.begin(), throttled_at.end(), st->range.start);
    const bool hot = it != throttled_at.end() && *it < st->range.end;
    st->hw.throttled = hot;
    (hot ? throttled_sum : other_sum) += st->range.duration();
    ++(hot ? hw.throttled_steps : hw.other_steps);
  }
  if (hw.throttled_steps) hw.throttled_step_mean_ns = throttled_sum / static_cast<TimeNs>(hw.throttled_steps);
  if (hw.other_steps) hw.other_step_mean_ns = other_sum / static_cast<TimeNs>(hw.other_steps);
}

// `steps`: the device's steps, on the trace's clock; `w`: its window, on the trace's clock.
void summarise_device(const Trace& t, const AnalysisOptions& opt, TimeRange w, DeviceSummary& d,
                      const std::vector<Step*>& steps) {
  const std::vector<CounterSeries>& all = t.counter_series();
  std::vector<std::uint32_t> mine;
  for (std::uint32_t s = 0; s < all.size(); ++s)
    if (series_name::is_hardware_metric(all[s]) && all[s].device == d.id) mine.push_back(s);
  if (mine.empty()) return;
  std::sort(mine.begin(), mine.end(), [&](std::uint32_t a, std::uint32_t b) { return all[a].name < all[b].name; });
  const double peak_bandwidth = peak_bandwidth_of(t, d.id);
  std::optional<SampleKernels> at_kernels;
  if (const std::vector<std::pair<TimeNs, RowIndex>> kernels = kernels_by_start(t, d.id); !kernels.empty()) {
    std::vector<std::uint32_t> hw_series;
    for (std::uint32_t s : mine)
      if (all[s].name.starts_with(series_name::kHardwarePrefix)) hw_series.push_back(s);
    at_kernels.emplace(t, kernels, hw_series, w);
  }
  const SampleKernels* attribution = at_kernels ? &*at_kernels : nullptr;
  SampleSums sums;
  if (attribution) sums.dram_at.resize(attribution->size());
  for (std::uint32_t s : mine) add_series(t, opt, w, attribution, s, peak_bandwidth, d.hw, sums);
  summarise_categories(t, attribution, sums, d.hw);
  step_means(t, d.id, peak_bandwidth, steps);
  summarise_throttling(t, d.id, d.hw, steps);
}

}  // namespace

void hardware_pass(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<DeviceSummary>& devices,
                   std::vector<Step>& steps) {
  const Trace& t = *rt.trace;
  bool any = false;
  for (const CounterSeries& s : t.counter_series()) any = any || series_name::is_hardware_metric(s);
  if (!any) return;
  for (DeviceSummary& d : devices) {
    std::vector<Step*> mine;
    for (Step& s : steps)
      if (s.device == d.id) mine.push_back(&s);
    summarise_device(t, opt, {d.window.start - rt.offset, d.window.end - rt.offset}, d, mine);
  }
}

}  // namespace gpuscope::detail

namespace gpuscope {

std::vector<KernelSampleMean> kernel_sample_means(const Trace& t, RowIndex kernel) {
  std::vector<KernelSampleMean> out;
  const KernelTable& k = t.kernels();
  if (kernel >= k.size()) return out;
  const std::uint32_t device = t.tracks()[k.track_at(kernel)].device;
  const TimeNs start = k.start[kernel], end = k.end[kernel];
  const CounterTable& c = t.counters();
  const std::vector<CounterSeries>& all = t.counter_series();
  for (std::uint32_t s = 0; s < all.size(); ++s) {
    const CounterSeries& cs = all[s];
    if (cs.device != device || !cs.name.starts_with(series_name::kHardwarePrefix)) continue;
    const RowRange rows = t.rows_of(TableId::counters, s);
    KernelSampleMean m{cs.name, cs.unit, 0, 0, 0};
    if (rows.end - rows.begin >= 2)
      m.interval_ns = (c.time[rows.end - 1] - c.time[rows.begin]) / static_cast<TimeNs>(rows.end - rows.begin - 1);
    const auto first = c.time.begin() + rows.begin, last = c.time.begin() + rows.end;
    double sum = 0;
    for (auto it = std::lower_bound(first, last, start); it != last && *it <= end; ++it) {
      const double v = c.value[static_cast<std::size_t>(it - c.time.begin())];
      if (!std::isfinite(v)) continue;
      sum += v;
      ++m.samples;
    }
    if (m.samples) m.mean = sum / static_cast<double>(m.samples);
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(),
            [](const KernelSampleMean& a, const KernelSampleMean& b) { return a.name < b.name; });
  return out;
}

}  // namespace gpuscope
