// Memory: room for a larger batch, pressure near the GPU's capacity.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "analysis/findings/rules.h"

namespace gpuscope::detail::rules {

namespace {

// A GPU's memory peaks, where the trace knows them and the GPU's memory.
struct MemoryUse {
  const DeviceSummary* d = nullptr;
  std::uint64_t capacity = 0, peak = 0;  // peak allocated
  std::uint64_t persistent = 0;          // what stays allocated across steps (0: unknown)
  bool from_steps = false;
  double share() const { return capacity ? double(peak) / double(capacity) : 0; }
};

std::vector<MemoryUse> memory_use(const Profile& p) {
  std::vector<MemoryUse> out;
  for (const DeviceSummary& d : p.devices) {
    if (!d.memory_bytes || !d.peak_allocated_bytes || *d.memory_bytes == 0) continue;
    MemoryUse m{&d, *d.memory_bytes, *d.peak_allocated_bytes, 0, false};
    // The steps' peaks, when there are any: they leave out what happened
    // before the first step (model loading) and after the last.
    std::uint64_t step_peak = 0, step_min = ~std::uint64_t{0};
    for (const Step& s : p.steps.steps) {
      if (s.device != d.id || !s.peak_allocated_bytes || !s.min_allocated_bytes) continue;
      m.from_steps = true;
      step_peak = std::max(step_peak, *s.peak_allocated_bytes);
      step_min = std::min(step_min, *s.min_allocated_bytes);
    }
    if (m.from_steps) m.peak = step_peak, m.persistent = std::min(step_min, step_peak);
    out.push_back(m);
  }
  return out;
}

// How many times the batch could grow: the bytes that scale with it (peak −
// persistent) filling the usable memory beside the persistent ones.
double batch_factor(const MemoryUse& m, double usable_share) {
  const double usable = usable_share * double(m.capacity);
  const double scaling = double(m.peak - m.persistent);
  if (scaling <= 0) return usable / std::max(1.0, double(m.peak));
  return std::max(0.0, (usable - double(m.persistent)) / scaling);
}

std::string factor_text(double f) { return f >= 10 ? fmt("%.0f", std::floor(f)) : fmt("%.1f", f); }
}  // namespace

void larger_batch_fits(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::vector<MemoryUse> use = memory_use(b.p);
  if (use.empty()) return;
  // The GPU with the least room decides for all of them.
  const MemoryUse& m = *std::max_element(use.begin(), use.end(),
                                         [](const MemoryUse& x, const MemoryUse& y) { return x.share() < y.share(); });
  if (m.share() >= th.memory_headroom_share) return;
  const double factor = batch_factor(m, th.memory_usable_share);
  if (factor < 1.5) return;
  Finding& f = b.add(Severity::info, m.share(), th.memory_headroom_share, 0);
  if (use.size() > 1) f.device = m.d->id;
  const std::string where =
      use.size() > 1 ? "GPU " + std::to_string(m.d->id) + " (the fullest of " + std::to_string(use.size()) + ")"
                     : "the GPU";
  f.title = "Memory peaks at " + bytes(m.peak) + " of " + bytes(m.capacity) + " (" + pct1(m.share()) + ") on " + where +
            ": a batch " + (factor > 100 ? std::string("over 100") : "about " + factor_text(factor)) +
            "× larger would fit if memory grew in proportion to it (an estimate from this run's peak)";
  f.evidence =
      "Peak allocated " + bytes(m.peak) + (m.from_steps ? " during the steps" : " over the trace") + ", under the " +
      pct(th.memory_headroom_share) + " of the GPU's memory below which room for a larger batch is looked for. " +
      (m.from_steps ? "At least " + bytes(m.persistent) +
                          " stays allocated through every step (weights, optimizer state); the other " +
                          bytes(m.peak - m.persistent) + " is taken to grow with the batch"
                    : "Without steps, all of it is taken to grow with the batch") +
      ", to fill " + pct(th.memory_usable_share) + " of the memory (the rest left for fragmentation): " +
      (factor > 100 ? std::string("over 100") : factor_text(factor)) + "× the batch." +
      (m.d->peak_reserved_bytes ? " The allocator held at most " + bytes(*m.d->peak_reserved_bytes) + "." : "");
  // Inference batches inputs; training also scales its learning rate.
  f.recommendation =
      std::string(b.p.workload.phase == "inference"
                      ? "Put more inputs in each forward pass (a larger batch, or more requests batched together): "
                      : "Raise the batch size per GPU (scale the learning rate with it, or keep the global batch and "
                        "use fewer GPUs or fewer gradient-accumulation steps): ") +
      "more work per launch and per step makes launch and synchronization overhead a smaller share. Memory grows "
      "about linearly with the batch: raise it in steps (2×, then 4×), measure samples per second at each, and keep "
      "the size where it stops rising, below the estimate.";
}

void memory_pressure(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const std::size_t steps = b.p.steps.steps.size();
  const double calls_per_step =
      steps ? double(b.ev.allocator_calls) / double(steps) : double(b.ev.allocator_calls) / 100.0;
  for (const DeviceSummary& d : b.p.devices) {
    if (!d.memory_bytes || *d.memory_bytes == 0) continue;
    const std::uint64_t top = std::max(d.peak_reserved_bytes.value_or(0), d.peak_allocated_bytes.value_or(0));
    const double share = double(top) / double(*d.memory_bytes);
    if (top == 0 || share < th.memory_pressure_share) continue;
    const bool fragmented =
        d.peak_reserved_bytes && d.peak_allocated_bytes &&
        double(*d.peak_reserved_bytes) >= th.reserved_over_allocated * double(*d.peak_allocated_bytes);
    const bool churn = b.ev.allocator_calls > 0 && calls_per_step >= th.allocator_calls_per_step;
    if (!fragmented && !churn) continue;
    Finding& f = b.add(share >= 0.97 ? Severity::critical : Severity::warning, share, th.memory_pressure_share,
                       b.t.per_device(b.ev.allocator_call_ns));
    f.share = share;
    f.device = d.id;
    f.title = "GPU " + std::to_string(d.id) + " is close to its memory (" + pct1(share) + " of " +
              bytes(*d.memory_bytes) + ") with allocator churn" +
              (fragmented ? ": reserved " + bytes(*d.peak_reserved_bytes) + " vs " + bytes(*d.peak_allocated_bytes) +
                                " allocated"
                          : ": " + count(b.ev.allocator_calls) + " cudaMalloc/cudaFree calls");
    std::string ev = "Peak " + std::string(d.peak_reserved_bytes ? "reserved" : "allocated") + " " + bytes(top) +
                     " against a " + pct(th.memory_pressure_share) + " threshold.";
    if (fragmented)
      ev += " The allocator held " + fmt("%.1f", double(*d.peak_reserved_bytes) / double(*d.peak_allocated_bytes)) +
            "× the bytes in live tensors (threshold " + fmt("%.1f", th.reserved_over_allocated) +
            "×): cached blocks the allocation sizes do not fit.";
    if (b.ev.allocator_calls)
      ev += " Hosts called cudaMalloc/cudaFree directly " + count(b.ev.allocator_calls) + " times (" +
            dur(b.ev.allocator_call_ns) + ")" + (steps ? ", " + fmt("%.1f", calls_per_step) + " per step" : "") +
            "; each cudaFree synchronizes the device.";
    f.evidence = ev;
    f.recommendation =
        "Near the limit the caching allocator frees its cache and calls cudaFree/cudaMalloc again (each a device "
        "sync), and an out-of-memory error is close. In PyTorch set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
        "(or max_split_size_mb) against fragmentation; keep tensor shapes stable between steps; lower the batch a "
        "little or use activation checkpointing to leave headroom.";
    f.ranges = b.ev.allocator.ranges();
  }
}

}  // namespace gpuscope::detail::rules
