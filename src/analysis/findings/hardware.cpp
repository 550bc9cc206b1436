// What the counters and the recorder measured: throttled clocks, memory-bound
// kernels, records the recorder lost.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "analysis/findings/rules.h"

namespace gpuscope::detail::rules {

// Clocks held down for a thermal or power reason (nvml.throttle_reasons)
// during some steps, and how much longer those steps took.
void clocks_throttled(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  for (const DeviceSummary& d : b.p.devices) {
    const DeviceHw& hw = d.hw;
    if (!hw.throttle_samples || !hw.throttled_steps) continue;
    const bool compare = hw.other_steps > 0 && hw.other_step_mean_ns > 0;
    const double slower =
        compare ? static_cast<double>(hw.throttled_step_mean_ns) / static_cast<double>(hw.other_step_mean_ns) - 1 : 0;
    if (compare && slower < th.throttle_slowdown) continue;
    const TimeNs saving = compare ? static_cast<TimeNs>(hw.throttled_steps) *
                                        std::max<TimeNs>(0, hw.throttled_step_mean_ns - hw.other_step_mean_ns)
                                  : 0;
    Finding& f = b.add(Severity::warning, slower, th.throttle_slowdown, saving);
    f.share = slower;
    f.device = d.id;
    std::string reasons;
    const std::pair<std::uint64_t, const char*> names[] = {{0x4, "software power cap"},
                                                           {0x8, "hardware slowdown"},
                                                           {0x20, "software thermal slowdown"},
                                                           {0x40, "hardware thermal slowdown"},
                                                           {0x80, "power brake"}};
    for (const auto& [bit, what] : names)
      if (hw.throttle_mask & bit) reasons += (reasons.empty() ? "" : ", ") + std::string(what);
    f.title = "Clocks throttled on GPU " + std::to_string(d.id) + " (" + reasons + ") in " + count(hw.throttled_steps) +
              " of " + count(hw.throttled_steps + hw.other_steps) + " steps" +
              (compare ? ", which took " + pct1(slower) + " longer than the others" : "");
    std::string clocks;
    if (hw.sm_clock_max_mhz && hw.throttled_sm_clock_mhz)
      clocks = " SM clock " + fmt("%.0f", *hw.throttled_sm_clock_mhz) + " MHz at the throttled samples vs " +
               fmt("%.0f", *hw.sm_clock_max_mhz) + " MHz at most.";
    f.evidence = "Measured by NVML (nvml.throttle_reasons): " + count(hw.throttle_samples) +
                 " samples with a thermal or power reason." + clocks +
                 (compare ? " Throttled steps: mean " + dur(hw.throttled_step_mean_ns) +
                                "; the others: " + dur(hw.other_step_mean_ns) + "."
                          : " Every step was throttled: no unthrottled step to compare with.");
    f.recommendation =
        "The card slowed itself down to stay within its power or temperature limit. Check cooling and airflow "
        "(inlet temperature, fan speed, neighbouring cards), whether the power limit was lowered (nvidia-smi -q -d "
        "POWER), and whether other work shares the card; a lower-power precision (bf16) or a smaller batch per step "
        "also reduces the draw.";
  }
}

namespace {

// Memory-bound kernels, measured: per kernel category, the DRAM throughput
// (against the GPU's peak bandwidth) and the instruction issue of the samples
// taken while its kernels ran, over every GPU (sample-weighted). A category
// at high DRAM and low issue waits on memory: fusing it with its neighbours
// pays, a faster kernel does not; one at high issue is compute-bound.
struct BoundCategory {
  KernelCategory category = KernelCategory::other;
  double dram = 0, issue = 0;  // fractions of peak
  std::uint64_t samples = 0;   // the fewer of its DRAM and issue samples
  double share = 0;            // of kernel time
};
std::vector<BoundCategory> measured_bound_categories(const Builder& b) {
  struct Acc {
    double dram = 0, issue = 0;
    std::uint64_t dram_n = 0, issue_n = 0;
  };
  std::array<Acc, kKernelCategoryCount> acc{};
  for (const DeviceSummary& d : b.p.devices)
    for (const HwCategory& c : d.hw.by_category) {
      Acc& a = acc[static_cast<int>(c.category)];
      if (c.dram_share && c.dram_samples) {
        a.dram += *c.dram_share * static_cast<double>(c.dram_samples);
        a.dram_n += c.dram_samples;
      }
      if (c.sm_issue && c.issue_samples) {
        a.issue += *c.sm_issue * static_cast<double>(c.issue_samples);
        a.issue_n += c.issue_samples;
      }
    }
  std::vector<BoundCategory> out;
  for (int ci = 0; ci < kKernelCategoryCount; ++ci) {
    const Acc& a = acc[ci];
    const std::uint64_t n = std::min(a.dram_n, a.issue_n);
    if (n < b.opt.thresholds.hw_min_samples) continue;
    const auto cat = static_cast<KernelCategory>(ci);
    out.push_back({cat, a.dram / static_cast<double>(a.dram_n), a.issue / static_cast<double>(a.issue_n), n,
                   b.t.share_of_gpu(cat)});
  }
  std::sort(out.begin(), out.end(), [](const BoundCategory& x, const BoundCategory& y) { return x.share > y.share; });
  return out;
}
}  // namespace

void memory_bound_kernels(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::vector<BoundCategory> cats = measured_bound_categories(b);
  std::vector<const BoundCategory*> memory, compute;
  double share = 0;
  std::uint64_t samples = 0;
  double dram = 0, issue = 0;  // sample-weighted over the memory-bound categories
  for (const BoundCategory& c : cats) {
    if (c.dram >= th.hw_memory_bound_dram && c.issue <= th.hw_memory_bound_issue) {
      memory.push_back(&c);
      share += c.share;
      samples += c.samples;
      dram += c.dram * static_cast<double>(c.samples);
      issue += c.issue * static_cast<double>(c.samples);
    } else if (c.issue >= th.hw_compute_bound_issue) {
      compute.push_back(&c);
    }
  }
  if (memory.empty() || share < th.hw_memory_bound_share) return;
  dram /= static_cast<double>(samples);
  issue /= static_cast<double>(samples);
  auto names = [](const std::vector<const BoundCategory*>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i)
      s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + std::string(to_string(v[i]->category));
    return s;
  };
  auto numbers = [](const BoundCategory& c) {
    return std::string(to_string(c.category)) + " " + pct(c.share) + " of kernel time, DRAM " + pct(c.dram) +
           " of peak, issue " + pct(c.issue) + " (" + count(c.samples) + " samples)";
  };
  TimeNs time = 0;
  for (const BoundCategory* c : memory) time += b.t.category[static_cast<int>(c->category)];
  // Fusing a chain of memory-bound kernels removes the round trips through
  // DRAM between them: half their time is the rule of thumb.
  Finding& f = b.add(share >= 0.25 ? Severity::warning : Severity::info, share, th.hw_memory_bound_share,
                     b.t.per_device(time) / 2);
  f.share = share;
  f.title = "Memory-bound kernels: " + names(memory) + " kernels (" + pct1(share) + " of kernel time) moved DRAM at " +
            pct(dram) + " of the peak bandwidth while issuing " + pct(issue) + " of the peak instructions (measured, " +
            count(samples) + " samples)";
  std::string memory_text, compute_text;
  for (const BoundCategory* c : memory) memory_text += (memory_text.empty() ? "" : "; ") + numbers(*c);
  for (const BoundCategory* c : compute) compute_text += (compute_text.empty() ? "" : "; ") + numbers(*c);
  f.evidence =
      "Measured by the GPU's counters (hw.dram_read + hw.dram_write against the GPU's peak bandwidth, "
      "hw.sm_issue), each sample attributed to the longest kernel in flight. Memory-bound (DRAM ≥ " +
      pct(th.hw_memory_bound_dram) + ", issue at most " + pct(th.hw_memory_bound_issue) + "): " + memory_text +
      ". Compute-bound (issue ≥ " + pct(th.hw_compute_bound_issue) +
      "): " + (compute_text.empty() ? std::string("none") : compute_text) + ". No category is judged from fewer than " +
      count(th.hw_min_samples) + " samples.";
  f.recommendation =
      "These kernels wait on memory, not on math: a faster kernel that moves the same bytes gains nothing here. "
      "Fusion pays: merge chains of elementwise, normalization and optimizer kernels so the data stays on chip "
      "(" +
      fuser(b.p) + (b.p.workload.optimizer == "per-parameter" ? "; a fused optimizer (fused=True)" : "") +
      "; fused bias + activation, fused layer norm), keep "
      "activations in bf16 to halve the bytes, and avoid materialising intermediates. Estimated saving: half their "
      "time." +
      (compute.empty() ? std::string()
                       : " The compute-bound " + names(compute) +
                             " kernels are where a faster kernel (tensor cores, a better algorithm) pays instead.");
  for (const BoundCategory* c : memory)
    for (const std::string& k : kernels_of(b.p, c->category, 5))
      if (f.kernels.size() < 5) f.kernels.push_back(k);
  f.ranges = b.ev.ops_by_category[static_cast<int>(memory.front()->category)].ranges();
}

void dropped_records(Builder& b) {
  std::uint64_t lost = 0;
  std::string keys;
  for (const auto& [key, value] : b.p.trace_stats) {
    if (value == 0) continue;
    // Rows lost in storage (store.*: a cut or damaged file) were recorded;
    // the report states them apart, first (Profile::trace_quality).
    if (key.starts_with("store.")) continue;
    if (key.find("dropped") == std::string::npos && key.find("lost") == std::string::npos) continue;
    lost += value;
    if (!keys.empty()) keys += ", ";
    keys += key + " = " + count(value);
  }
  if (lost == 0) return;
  std::uint64_t ops = 0;
  for (const DeviceSummary& d : b.p.devices) ops += d.kernels + d.memcpys + d.memsets;
  const double share = ops + lost ? double(lost) / double(ops + lost) : 1.0;
  Finding& f = b.add(share >= 0.01 ? Severity::critical : Severity::warning, share, 0, 0);
  f.share = share;
  f.title = count(lost) + " records were lost while recording: the numbers in this report undercount";
  f.evidence = "Trace statistics: " + keys + " (about " + pct1(share) + " of the GPU ops).";
  f.recommendation =
      "Record again with larger or more activity buffers, or a shorter capture window, until nothing is dropped; "
      "treat the findings above as lower bounds meanwhile.";
}

}  // namespace gpuscope::detail::rules
