// What runs alone that could overlap: concurrency, communication, the weight
// update, the optimizer's launches, the rank or GPU the others wait for.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "analysis/findings/rules.h"
#include "analysis/job/job.h"
#include "analysis/ops/occupancy.h"

namespace gpuscope::detail::rules {

// Concurrency: kernels never overlap although they leave the GPU room, and
// something could run beside them (analysis/ops/occupancy.h, concurrency_room:
// the gate and the saving).
void low_concurrency(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  double worst = 1;
  const DeviceSummary* dev = nullptr;
  ConcurrencyRoom worst_room;
  TimeNs saving = 0;
  for (const DeviceSummary& d : b.p.devices) {
    if (d.kernels == 0 || d.kernel_concurrency >= th.low_concurrency) continue;
    const ConcurrencyRoom room = concurrency_room(d);
    if (!room.fires()) continue;
    if (!dev || d.kernel_concurrency < worst) worst = d.kernel_concurrency, dev = &d, worst_room = room;
    saving += room.saving_ns;
  }
  if (dev) {
    Finding& f = b.add(Severity::warning, worst, th.low_concurrency, t.per_device(saving));
    f.device = t.devices > 1 ? kNoDevice : dev->id;
    f.title = "Kernel concurrency is " + pct1(worst) + ": kernels almost never run side by side (" +
              std::to_string(dev->streams) + " stream" + (dev->streams == 1 ? "" : "s") + " on GPU " +
              std::to_string(dev->id) + ")";
    const DeviceOccupancy& o = dev->occupancy;
    std::string used = "kernels use " + pct(worst_room.used) + " of the GPU by " + std::string(worst_room.measure);
    if (worst_room.measure == "GPU fill")
      used += " (they hold " + pct(*o.gpu_fill) + " of its thread slots; their theoretical occupancy allows " +
              pct(*o.theoretical) + ")";
    else if (worst_room.measure == "SM efficiency")
      used += " (blocks against the " + std::to_string(dev->sm_count) + " SMs, duration-weighted)";
    f.evidence = "Time with >= 2 kernels in flight is " + pct1(worst) + " of kernel time vs a " +
                 pct1(th.low_concurrency) + " threshold (nvvp's Low Kernel Concurrency); " + used +
                 ", below 80 %. The GPU waits for the host or for dependencies " +
                 dur(dev->idle_host_wait_ns + dev->idle_other_ns) + ", less than its " + dur(dev->kernel_busy_ns) +
                 " of kernel time, so work is queued that could run side by side; exposed communication " +
                 dur(dev->exposed_communication_ns) + ", copies with no kernel alongside " +
                 dur(dev->memcpy_exposed_ns) + ".";
    f.recommendation =
        "Run independent work concurrently: the gradient all-reduce on its own stream overlapping the backward "
        "pass, input copies on a copy stream, the weight update of one bucket while the next is reduced; small "
        "kernels that leave the GPU's thread slots unused can run side by side on separate streams (or be fused / "
        "captured in a CUDA graph). Estimated saving: the GPU capacity the kernels leave unused during kernel "
        "time, at most what the kernels could overlap each other.";
  }
}

namespace {

// Communication nothing hides.
// Communication time by collective kind (from the kernels' names), the
// dominant kind, and whether its durations are heavy-tailed: the longest
// instance ≥ 10x the median, a sign that most of the time is spent waiting
// for a rank that arrives late rather than moving data.
struct CollectiveMix {
  std::uint8_t dominant = 0;  // collective_kind()
  std::string said;           // "65% send/recv, 35% all_reduce"
  bool heavy_tailed = false;
  std::string tail;  // the evidence for it
};

CollectiveMix collective_mix(const Profile& p) {
  CollectiveMix m;
  std::array<TimeNs, 16> by_kind{};
  TimeNs all = 0;
  for (const Hotspot& h : p.hotspots)
    if (h.category == KernelCategory::communication) {
      by_kind[collective_kind(h.name) & 15] += h.stats.total;
      all += h.stats.total;
    }
  if (all <= 0) return m;
  std::vector<std::uint8_t> kinds;
  for (std::uint8_t k = 0; k < by_kind.size(); ++k)
    if (by_kind[k] > 0) kinds.push_back(k);
  std::stable_sort(kinds.begin(), kinds.end(), [&](std::uint8_t a, std::uint8_t b) { return by_kind[a] > by_kind[b]; });
  m.dominant = kinds.front();
  for (std::uint8_t k : kinds)
    m.said += (m.said.empty() ? "" : ", ") + pct(ratio(by_kind[k], all)) + " " + std::string(collective_kind_name(k));
  for (const Hotspot& h : p.hotspots)
    if (h.category == KernelCategory::communication && collective_kind(h.name) == m.dominant && h.stats.count >= 3 &&
        h.stats.median > 0 && h.stats.max >= 10 * h.stats.median) {
      m.heavy_tailed = true;
      m.tail = "the longest " + h.name + " took " + dur(h.stats.max) + ", " +
               count(static_cast<std::uint64_t>(h.stats.max / h.stats.median)) + "x its median of " +
               dur(h.stats.median) + " over " + count(h.stats.count) + " calls.";
      break;
    }
  return m;
}

// The fix for exposed communication of this collective kind.
std::string communication_fix(std::uint8_t kind) {
  const std::string_view k = collective_kind_name(kind);
  if (k == "all_to_all" || k == "send_recv")
    return "Hide the all-to-all / send-recv: pipeline the input distribution so the next batch's exchange runs under "
           "this batch's compute (embedding models: TorchRec's pipelined training, or the sparse all-to-all "
           "overlapped with the dense part), revisit the sharding plan so fewer rows cross ranks, and for pipeline "
           "parallelism overlap each send/recv with the next micro-batch (interleaved schedules).";
  if (k == "all_gather" || k == "reduce_scatter")
    return "Overlap the all-gathers and reduce-scatters with compute: prefetch the next layer's parameters while "
           "this one computes (FSDP forward_prefetch/backward_prefetch, limit_all_gathers; ZeRO-3 prefetch "
           "buckets), fuse small gathers into larger ones, and overlap tensor-parallel collectives with the GEMMs "
           "around them (asynchronous tensor parallelism).";
  if (k == "broadcast")
    return "Broadcast less: broadcast parameters once at the start, not every step (PyTorch DDP: "
           "broadcast_buffers=False when the buffers need no sync each step), and run what stays on a communication "
           "stream alongside compute.";
  return "Overlap the gradient all-reduce with the backward pass: bucket gradients and launch each bucket's "
         "all-reduce on a communication stream as soon as its gradients are ready (PyTorch DDP does this; tune "
         "bucket_cap_mb, gradient_as_bucket_view=True), not one all-reduce per tensor after the whole backward. Small "
         "gradients are latency-bound: fewer, larger buckets help. Bundled workload: --allreduce bucketed.";
}
}  // namespace

void exposed_communication(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (t.comm > 0) {
    const double share = ratio(t.exposed_comm, t.span);
    if (share >= th.exposed_comm_moderate) {
      Finding& f = b.add(share >= th.exposed_comm_high ? Severity::critical : Severity::warning, share,
                         th.exposed_comm_moderate, t.per_device(t.exposed_comm));
      f.share = share;
      const double overlapped = ratio(t.comm - t.exposed_comm, t.comm);
      f.title = "Communication is exposed " + pct1(share) + " of the run (" + dur(t.per_device(t.exposed_comm)) +
                "): only " + pct(overlapped) + " of communication time overlaps compute";
      f.evidence = "Communication kernels run " + dur(t.comm) + " (summed over GPUs), " + dur(t.exposed_comm) +
                   " of it with no compute kernel alongside: " + pct1(share) + " of the run vs xprof's anchors (" +
                   pct(th.exposed_comm_moderate) + " moderate, " + pct(th.exposed_comm_high) +
                   " high). Top: " + top_kernels_text(b.p, KernelCategory::communication, 2) + ".";
      const CollectiveMix mix = collective_mix(b.p);
      if (!mix.said.empty()) f.evidence += " By collective: " + mix.said + ".";
      f.recommendation = communication_fix(mix.dominant);
      if (mix.heavy_tailed) {
        f.evidence += " " + mix.tail;
        f.recommendation =
            "Most of this is probably waiting for a slower rank, not data moving: " + mix.tail +
            " Find the rank that arrives last (gpuscope report on every rank's trace names it: straggler) and why "
            "it is late before overlapping anything. Then: " +
            f.recommendation;
      }
      f.kernels = kernels_of(b.p, KernelCategory::communication);
      f.ranges = b.ev.exposed_comm.ranges();
    }
  }
}

namespace {

// The optimizer's framework ops (PyTorch's "Optimizer.step#SGD.step"), the
// one with the most kernels first; empty when the trace has none.
std::vector<const OpRow*> optimizer_ops(const Profile& p) {
  std::vector<const OpRow*> rows;
  for (const OpRow& r : p.op_names)
    if (r.name.starts_with("Optimizer.step#") && r.calls > 0) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpRow* a, const OpRow* b) { return a->kernels_total > b->kernels_total; });
  return rows;
}
}  // namespace

// The weight update alone at the end of the step: optimizer kernels by name,
// and every kernel the optimizer's ops launched.
void serialized_weight_update(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  const double opt_share = ratio(b.ev.optimizer_kernel_ns, t.gpu_time);
  const double opt_overlap = ratio(b.ev.optimizer_overlapped_ns, b.ev.optimizer_ns);
  if (b.ev.optimizer_ns > 0 && opt_share >= th.weight_update_share && opt_overlap < th.weight_update_overlap) {
    const TimeNs lone = b.ev.optimizer_ns - b.ev.optimizer_overlapped_ns;
    Finding& f = b.add(opt_share >= 0.10 ? Severity::critical : Severity::warning, opt_overlap,
                       th.weight_update_overlap, t.per_device(lone));
    const std::size_t steps = b.p.steps.steps.size();
    f.title = "The weight update runs alone: " + pct1(opt_share) + " of kernel time in " +
              count(b.ev.optimizer_kernels) + " optimizer kernels" +
              (steps ? " (" + count(b.ev.optimizer_kernels / steps) + " per step)" : std::string()) + ", " +
              pct(opt_overlap) + " of it overlapped";
    f.evidence = "Optimizer kernels take " + dur(b.ev.optimizer_kernel_ns) + " (" + pct1(opt_share) +
                 " of kernel time vs a " + pct(th.weight_update_share) +
                 " threshold); other kernels or communication run alongside for " + pct1(opt_overlap) +
                 " of it (threshold " + pct(th.weight_update_overlap) + ").";
    const std::vector<const OpRow*> ops = optimizer_ops(b.p);
    if (b.ev.optimizer_op_kernels > 0 && !ops.empty())
      f.evidence += " Of them " + count(b.ev.optimizer_op_kernels) + " were launched by " + ops.front()->name +
                    (ops.size() > 1 ? " and the other optimizer ops" : "") + " (" +
                    count(b.ev.optimizer_op_named_kernels) + " named as optimizer kernels).";
    const std::string top = top_kernels_text(b.p, KernelCategory::optimizer, 2);
    if (!top.empty()) f.evidence += " Top: " + top + ".";
    f.recommendation =
        "Use a fused multi-tensor optimizer (one kernel for all parameters: torch.optim.SGD/Adam(foreach=True or "
        "fused=True), apex FusedSGD/FusedAdam) and overlap the update with communication and the next forward: update "
        "each gradient bucket as soon as its all-reduce completes, on a separate stream. Bundled workload: --update "
        "overlapped.";
    f.kernels = kernels_of(b.p, KernelCategory::optimizer);
    if (f.kernels.empty() && !ops.empty())
      for (const OpKernel& k : ops.front()->top_kernels) f.kernels.push_back(k.name);
    f.ranges = b.ev.optimizer.ranges();
  }
}

// A per-parameter (non-foreach) optimizer: its ops launch a few tiny kernels
// per parameter, each step, where a multi-tensor one launches a handful.
void unfused_optimizer(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  const Evidence& ev = b.ev;
  const std::vector<const OpRow*> ops = optimizer_ops(b.p);
  if (ops.empty() || ev.optimizer_op_kernels == 0) return;
  const OpRow& r = *ops.front();
  const double per_step = double(ev.optimizer_op_kernels) / double(r.calls);
  const double named =
      ratio(static_cast<TimeNs>(ev.optimizer_op_named_kernels), static_cast<TimeNs>(ev.optimizer_op_kernels));
  if (per_step < th.optimizer_kernels_per_step || named >= th.optimizer_fused_share) return;
  // A multi-tensor optimizer does the same GPU work in a few launches: the
  // host time beyond the GPU work is what the GPU may wait for — and it is a
  // cost only where the GPU did wait: the idle time the optimizer's own late
  // launches ended (its ops' starved time; where the trace does not give it,
  // the GPU's idle time bounds it).
  const TimeNs excess = std::max<TimeNs>(0, r.cpu_total_ns - ev.optimizer_op_kernel_ns);
  TimeNs starved = 0;
  for (const OpRow* o : ops) starved += o->starved_total_ns;
  const TimeNs waited = b.p.launches.late_launch_idle_ns > 0 || starved > 0 ? starved : t.idle;
  const TimeNs saving = std::min(t.per_device(excess), t.per_device(waited));
  Finding& f = b.add(per_step >= 10 * th.optimizer_kernels_per_step ? Severity::critical : Severity::warning, per_step,
                     th.optimizer_kernels_per_step, saving);
  const TimeNs mean = static_cast<TimeNs>(double(ev.optimizer_op_kernel_ns) / double(ev.optimizer_op_kernels));
  f.title = r.name + " launches " + fmt("%.0f", per_step) + " kernels per step (" + count(ev.optimizer_op_kernels) +
            " in " + count(r.calls) + " steps, mean " + dur(mean) +
            "): a per-parameter optimizer, not a multi-tensor (foreach) or fused one";
  f.evidence = "Kernels launched inside the optimizer's ops: " + fmt("%.0f", per_step) + " per step vs a " +
               fmt("%.0f", th.optimizer_kernels_per_step) + " threshold, " + pct(named) +
               " of them named as optimizer kernels (multi_tensor_apply, fused; threshold " +
               pct(th.optimizer_fused_share) + "). The host spends " + dur(r.cpu_total_ns) +
               " in the optimizer step for " + dur(ev.optimizer_op_kernel_ns) + " of GPU work; the GPU waited " +
               dur(t.per_device(waited)) + " for its launches.";
  f.share = ratio(t.per_device(waited), t.span / static_cast<TimeNs>(std::max<std::size_t>(1, t.devices)));
  f.recommendation =
      "Update all parameters in a few launches: torch.optim.SGD/Adam/AdamW(..., foreach=True) (multi-tensor) or "
      "fused=True (one fused kernel, Adam/AdamW/SGD), apex FusedSGD/FusedAdam, or torch.compile the optimizer "
      "step. Estimated saving: the host time of the optimizer step beyond its GPU work, at most the GPU idle time "
      "its launches ended.";
  for (const OpKernel& k : r.top_kernels) f.kernels.push_back(k.name);
}

// Stragglers: the rank (or GPU) the others wait for. In a job whose
// collectives were matched across ranks, the rank whose late arrivals made
// the others wait longest; else the one with the most compute.
void straggler(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  if (b.p.ranks.size() < 2 || b.p.skew.slowest_rank < 0) return;
  const bool by_wait = !b.p.stragglers.empty() && b.p.stragglers.front().wait_caused_ns > 0;
  const std::int32_t who_rank = by_wait ? b.p.stragglers.front().rank : b.p.skew.slowest_rank;
  std::vector<TimeNs> work;
  const bool by_step =
      std::all_of(b.p.ranks.begin(), b.p.ranks.end(), [](const RankSummary& r) { return r.compute_per_step_ns > 0; });
  const RankSummary* slow = nullptr;
  for (const RankSummary& r : b.p.ranks) {
    work.push_back(by_step ? r.compute_per_step_ns : r.compute_ns);
    const bool match = by_wait ? r.rank == who_rank : r.rank == who_rank && r.device == b.p.skew.slowest_device;
    if (match && !slow) slow = &r;
  }
  if (!slow) return;
  std::sort(work.begin(), work.end());
  const TimeNs median = work[(work.size() - 1) / 2];
  const TimeNs slowest = by_step ? slow->compute_per_step_ns : slow->compute_ns;
  const double excess = ratio(slowest - median, median);
  // The others' time spent waiting for it, of their time.
  const std::size_t others = b.p.stragglers.size() > 1 ? b.p.stragglers.size() - 1 : 1;
  const TimeNs caused = by_wait ? b.p.stragglers.front().wait_caused_ns : 0;
  const double wait_share = ratio(caused, b.p.window.duration() * static_cast<TimeNs>(others));
  const bool by_compute = excess >= th.straggler_spread;
  if (!by_compute && !(by_wait && wait_share >= th.straggler_wait_share)) return;
  TimeNs others_exposed = 0;
  for (const RankSummary& r : b.p.ranks)
    if (r.rank != slow->rank) others_exposed += r.exposed_communication_ns;
  const std::size_t steps = by_step ? b.p.steps.steps.size() / b.p.ranks.size() : 1;
  const TimeNs saving = by_wait ? caused / static_cast<TimeNs>(others)
                                : (slowest - median) * static_cast<TimeNs>(std::max<std::size_t>(1, steps));
  const bool critical = excess >= 0.25 || (by_wait && wait_share >= th.straggler_wait_critical);
  Finding& f = b.add(critical ? Severity::critical : Severity::warning, by_compute ? excess : wait_share,
                     by_compute ? th.straggler_spread : th.straggler_wait_share, saving);
  f.device = slow->device;
  bool one_rank = true;
  for (const RankSummary& r : b.p.ranks) one_rank = one_rank && r.rank == slow->rank;
  const std::string who = one_rank
                              ? "GPU " + std::to_string(slow->device)
                              : "Rank " + std::to_string(slow->rank) + " (GPU " + std::to_string(slow->device) + ")";
  const std::string compute_words = pct(excess) + " more compute " + (by_step ? "per step " : "") +
                                    "than the median (" + dur(slowest) + " vs " + dur(median) + ")";
  if (by_wait) {
    const Straggler& st = b.p.stragglers.front();
    f.title = who + " is a straggler: last to arrive at " + count(st.last_arrivals) + " of " +
              count(b.p.collectives.size()) + " collectives, the others waited " + dur(caused) + " for it";
    f.evidence = "Arrivals at the " + count(b.p.collectives.size()) + " collectives matched across " +
                 std::to_string(b.p.stragglers.size()) + " ranks: the others spent " + pct(wait_share) +
                 " of their time waiting for this rank; the critical rank of " + count(st.critical_steps) + " of " +
                 count(b.p.job_steps.size()) + " steps; " + compute_words +
                 ". Thresholds: " + pct(th.straggler_wait_share) + " of the others' time, or " +
                 pct(th.straggler_spread) + " more compute than the median.";
  } else {
    f.title = who + " is a straggler: " + compute_words;
    f.evidence =
        "Compute " + std::string(by_step ? "per step " : "") + "across " + std::to_string(b.p.ranks.size()) +
        " ranks/GPUs: spread " + pct(b.p.skew.compute_spread) + "; the others spend " + dur(others_exposed) +
        " in communication nothing hides, much of it waiting for the slowest. Threshold: " + pct(th.straggler_spread) +
        " above the median.";
  }
  f.recommendation =
      "Balance the work across ranks: check the data each rank gets (uneven batch or sequence lengths), "
      "clock/thermal throttling or a slower GPU or link on that rank, and other processes on its host; with "
      "imbalance that cannot be removed, overlap communication so the others' wait is hidden.";
}

}  // namespace gpuscope::detail::rules
