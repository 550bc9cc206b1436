// What runs alone that could overlap: concurrency, communication, the weight
// update, the optimizer's launches, the rank or GPU the others wait for.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/findings/rules.h"
#include "analysis/job/job.h"
#include "analysis/ops/occupancy.h"

namespace gpuscope::detail::rules {

// Concurrency: kernels never overlap although they leave the GPU room, and
// something could run beside them (analysis/ops/occupancy.h, concurrency_room:
// the gate and the saving).
std::string room_words(const ConcurrencyRoom& room, const DeviceSummary& d) {
  const DeviceOccupancy& o = d.occupancy;
  // GPU fill against what the kernels' occupancy allows: a ratio of two
  // figures, said as one, not as the GPU fill itself.
  if (room.measure == "GPU fill" && o.gpu_fill && o.theoretical)
    return "kernels use " + pct(room.used) + " of what their occupancy allows on GPU " + std::to_string(d.id) +
           " (they hold " + pct(*o.gpu_fill) +
           " of its thread slots, its GPU fill; their theoretical occupancy "
           "allows " +
           pct(*o.theoretical) + ")";
  std::string s =
      "kernels use " + pct(room.used) + " of GPU " + std::to_string(d.id) + " by " + std::string(room.measure);
  if (room.measure == "SM efficiency")
    s += nvidia_gpu(d.name, d.compute_major, d.compute_minor)
             ? " (blocks against the " + std::to_string(d.sm_count) + " SMs, duration-weighted)"
             : " (workgroups against the " + std::to_string(d.sm_count) + " CUs, duration-weighted)";
  return s;
}

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
    const std::string used = room_words(worst_room, *dev);
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

// Communication nothing hides, by collective kind (the framework's
// annotation's before the kernel name's) and, for each call site (kind, size,
// place in the step) compared with itself across steps and ranks, how much of
// it is waiting: the time of its instances beyond its fastest one
// (Profile::collective_summary; docs/metrics.md, "Collective sites").
// Waiting when the sites seen more than once spend at least kWaitingShare of
// their time beyond their fastest instance, and that is at least
// kWaitingOfComm of all communication time.
constexpr double kWaitingShare = 0.5;
constexpr double kWaitingOfComm = 0.25;

struct CollectiveMix {
  std::string dominant;  // the kind with the most exposed time
  std::string said;      // "55% all_to_all, 45% all_gather" (of exposed time)
  std::string named;     // which annotations named kinds the kernels' names do not say
  std::string variant;   // "waiting", "transfer"; empty: no site repeats
  std::string sites;     // the evidence for the variant
};

std::string ordinal_words(std::int32_t ordinal) {
  if (ordinal < 0) return "outside the steps";
  const std::int32_t n = ordinal + 1;
  const char* suffix = n % 100 / 10 == 1 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return "the " + std::to_string(n) + suffix + " of its kind and size in each step";
}

// "all_reduce of 74.8 MiB (the 1st of its kind and size in each step, named by nccl:all_reduce)".
std::string site_words(const CollectiveSite& s) {
  return s.kind + (s.bytes ? " of " + bytes(s.bytes) : std::string(" of unknown size")) + " (" +
         ordinal_words(s.ordinal) + ", named by " + s.named_by + ")";
}

// Waiting the message sizes prove, said after the sites' comparison (and
// deciding the variant where the sites alone do not).
void size_words(const CollectiveSummary& c, CollectiveMix& m) {
  if (c.size_wait_ns <= 0 || c.size_widest.durations.count == 0) return;
  const CollectiveSite& s = c.size_widest;
  m.sites += (m.sites.empty() ? "" : " ") +
             std::string(
                 "The message sizes bound it too: at 100 MB/s, slower than any link "
                 "a GPU job runs on, and 2 ms of latency, the collectives' "
                 "fastest instances still took ") +
             dur(c.size_wait_ns) + " more than their bytes need (" + pct(ratio(c.size_wait_ns, c.time_ns)) +
             " of communication time), so that much is waiting at least, whatever the link; most: " + site_words(s) +
             ", fastest " + dur(s.durations.min) + " over " + count(s.durations.count) +
             (s.durations.count == 1 ? " instance." : " instances.");
  if (ratio(c.size_wait_ns, c.time_ns) >= kWaitingOfComm) m.variant = "waiting";
}

CollectiveMix collective_mix(const Profile& p) {
  CollectiveMix m;
  const CollectiveSummary& c = p.collective_summary;
  if (c.kinds.empty()) return m;
  m.dominant = c.kinds.front().kind;
  for (const CollectiveKind& k : c.kinds)
    if (k.exposed_ns > 0)
      m.said += (m.said.empty() ? "" : ", ") + pct(ratio(k.exposed_ns, c.exposed_ns)) + " " + k.kind;
  if (c.renamed_sites) {
    std::vector<std::string> names;
    std::string kernels;
    for (const CollectiveSite& s : p.collective_sites) {
      const std::string_view by_name = collective_kind_name(collective_kind(s.kernel));
      if (s.named_by == "kernel name" || by_name == s.kind) continue;
      if (names.size() < 3 && std::find(names.begin(), names.end(), s.named_by) == names.end())
        names.push_back(s.named_by);
      if (kernels.find(by_name) == std::string::npos) kernels += (kernels.empty() ? "" : ", ") + std::string(by_name);
    }
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    m.named = "Kinds as the framework's annotations name them (" + list + "), not as the kernels' names say (" +
              kernels + ").";
  }
  if (c.repeated_sites == 0) {
    const bool unplaced =
        std::any_of(p.collective_sites.begin(), p.collective_sites.end(),
                    [](const CollectiveSite& x) { return x.durations.count >= 2 && x.ordinal < 0 && x.bytes == 0; });
    m.sites = unplaced ? "The trace has neither steps nor message sizes to tell one collective of a kind from "
                         "another, so waiting cannot be told from transfer."
                       : "No collective site (kind, size, place in the step) ran more than once, so waiting "
                         "cannot be told from transfer.";
    size_words(c, m);
    return m;
  }
  const double waiting = ratio(c.wait_ns, c.repeated_ns);
  m.variant = waiting >= kWaitingShare && ratio(c.wait_ns, c.time_ns) >= kWaitingOfComm ? "waiting" : "transfer";
  const CollectiveSite& w = c.widest;
  const bool pooled = w.rank < 0 || w.device == kNoDevice;
  m.sites =
      "Each collective compared with itself (same kind, size and place in the step, across " +
      std::string(p.files.size() > 1 ? "steps and ranks" : "steps") + "): of the " + dur(c.repeated_ns) + " in the " +
      count(c.repeated_sites) + " sites seen more than once, " + dur(c.wait_ns) + " (" + pct(waiting) +
      ") is beyond each site's fastest instance (waiting), the rest transfer or a wait every instance "
      "shares. Widest: " +
      site_words(w) + ", fastest " + dur(w.durations.min) +
      // Of two instances the median would be one of them.
      (w.durations.count > 2 || pooled
           ? ", " + std::string(pooled ? "mean " : "median ") + dur(pooled ? w.durations.mean : w.durations.median)
           : std::string()) +
      ", longest " + dur(w.durations.max) + " over " + count(w.durations.count) + " instances.";
  size_words(c, m);
  return m;
}

}  // namespace

std::string all_reduce_fixed_cost(const Profile& p) {
  constexpr std::uint64_t kLarge = 4u << 20;
  const CollectiveSite* big = nullptr;  // the largest, by its bytes
  for (const CollectiveSite& s : p.collective_sites)
    if (s.kind == "all_reduce" && s.bytes >= kLarge && s.durations.min > 0 &&
        (!big || s.bytes > big->bytes || (s.bytes == big->bytes && s.durations.total > big->durations.total)))
      big = &s;
  if (!big) return {};
  // The smaller all-reduce of the same device whose fastest instance comes
  // nearest the large one's in time.
  const CollectiveSite* small = nullptr;
  for (const CollectiveSite& s : p.collective_sites)
    if (s.kind == "all_reduce" && s.device == big->device && s.bytes > 0 && 2 * s.bytes <= big->bytes &&
        s.durations.min > 0 && 2 * s.durations.min >= big->durations.min &&
        (!small || s.durations.min > small->durations.min))
      small = &s;
  if (!small) return {};
  // t = fixed + bytes / rate through the two fastest instances.
  const double slope = double(big->durations.min - small->durations.min) / double(big->bytes - small->bytes);
  // At most the smaller one's whole time (a larger one as fast: all of it).
  const double fixed = std::min({double(small->durations.min), double(big->durations.min),
                                 double(big->durations.min) - slope * double(big->bytes)});
  if (fixed < 0.5 * double(big->durations.min)) return {};
  return "the " + bytes(small->bytes) + " all-reduce's fastest instance took " + dur(small->durations.min) + ", " +
         pct(ratio(small->durations.min, big->durations.min)) + " of the " + bytes(big->bytes) + " one's " +
         dur(big->durations.min) + " for " + pct(ratio(small->bytes, big->bytes)) + " of its bytes: about " +
         dur(static_cast<TimeNs>(fixed)) +
         " of each call does not grow with its size (a wait every instance shares, for a rank late at every step, "
         "or a fixed cost per call), which a faster link would not shorten";
}

std::string slow_all_reduce(const Profile& p) {
  constexpr std::uint64_t kLarge = 4u << 20;  // latency is a small part of its time on any link
  constexpr double kSlowBusBw = 5e9;          // bytes/s: below PCIe, NVLink, xGMI and InfiniBand
  const CollectiveSite* slow = nullptr;
  for (const CollectiveSite& s : p.collective_sites)
    if (s.kind == "all_reduce" && s.bytes >= kLarge && s.durations.min > 0 &&
        (!slow || s.durations.total > slow->durations.total))
      slow = &s;
  if (!slow) return {};
  // nccl-tests' bus bandwidth: a ring all-reduce moves 2(n-1)/n of the
  // message per rank; with the ranks unknown, n = 2 (a factor of 1, the lowest).
  const std::uint32_t n = std::max<std::uint32_t>(2, p.workload.ranks);
  const auto bus = [&](const CollectiveSite& s) {
    return double(s.bytes) / (double(s.durations.min) * 1e-9) * 2.0 * double(n - 1) / double(n);
  };
  const double algbw = double(slow->bytes) / (double(slow->durations.min) * 1e-9);
  const double busbw = bus(*slow);
  if (busbw >= kSlowBusBw) return {};
  // Another large all-reduce that moved its bytes faster shows the link is
  // not slow: a time that does not grow with the size is a fixed cost (a
  // wait for another rank, a per-call cost), not the transfer.
  for (const CollectiveSite& s : p.collective_sites)
    if (s.kind == "all_reduce" && s.bytes >= kLarge && s.durations.min > 0 && bus(s) >= kSlowBusBw) return {};
  // So does a smaller one that took half its time or more for half its
  // bytes or fewer (all_reduce_fixed_cost()).
  if (!all_reduce_fixed_cost(p).empty()) return {};
  return "the " + bytes(slow->bytes) + " all-reduce's fastest instance took " + dur(slow->durations.min) + ": " +
         fmt("%.1f", algbw / 1e9) + " GB/s of algorithm bandwidth, " + fmt("%.1f", busbw / 1e9) +
         " GB/s of bus bandwidth" +
         (p.workload.ranks > 1 ? " over " + std::to_string(p.workload.ranks) + " ranks"
                               : std::string(" (the ranks unknown: taken as 2, the lowest)"));
}

namespace {

// Who a waiting collective waits for: another rank, or (one process driving
// several GPUs) another GPU.
std::string waited_for(const Profile& p) {
  return p.files.size() <= 1 && p.workload.ranks <= 1 && p.devices.size() > 1 ? "GPU" : "rank";
}

// How to find the one it waits for.
std::string waiting_for(const Profile& p) {
  if (p.files.size() > 1 && !p.stragglers.empty() && p.stragglers.front().wait_caused_ns > 0)
    return " In this job rank " + std::to_string(p.stragglers.front().rank) +
           " arrives last most (the Stragglers table, the straggler finding): find why it is late.";
  if (p.files.size() > 1)
    return " The job's collectives could not be matched across ranks to say which one arrives last.";
  if (waited_for(p) == "GPU") return " Find which GPU arrives last and why it is late (compare the GPUs' step times).";
  return " This trace is one rank of " +
         (p.workload.ranks > 1 ? "a " + std::to_string(p.workload.ranks) + "-rank job" : std::string("a job")) +
         ": open the whole job, gpuscope report DIR with every rank's trace file in DIR, to see which rank arrives "
         "last at each collective and why.";
}

// The all-reduce sites in each step, at most over the GPUs.
std::uint64_t all_reduces_per_step(const Profile& p) {
  std::map<std::uint32_t, std::uint64_t> per_device;
  for (const CollectiveSite& s : p.collective_sites)
    if (s.kind == "all_reduce" && s.ordinal >= 0 && s.durations.count > 0) ++per_device[s.device];
  std::uint64_t n = 0;
  for (const auto& [device, k] : per_device) n = std::max(n, k);
  return n;
}

// Gradients all-reduced a tensor at a time: 100 all-reduces or more in each
// step, and small ones (a median message under 1 MiB, or, where no size is
// recorded, a median instance under 50 µs, less than a 25 MB bucket takes
// on any link). DDP's reducer all-reduces buckets of 25 MB by default, so
// these are not its buckets, whatever else says DDP. Empty otherwise.
std::string per_tensor_all_reduce(const Profile& p) {
  constexpr std::uint64_t kPerStep = 100, kSmallBytes = 1 << 20;
  constexpr TimeNs kSmallNs = 50'000;
  const std::uint64_t per_step = all_reduces_per_step(p);
  if (per_step < kPerStep) return {};
  std::vector<TimeNs> durations;
  std::vector<std::uint64_t> sizes;
  TimeNs all = 0, short_ones = 0;  // Σ instances' time, and of the sites under kSmallNs
  for (const CollectiveSite& s : p.collective_sites) {
    if (s.kind != "all_reduce" || s.ordinal < 0 || s.durations.count == 0) continue;
    durations.push_back(s.durations.median);
    if (s.bytes) sizes.push_back(s.bytes);
    all += s.durations.total;
    if (s.durations.median < kSmallNs) short_ones += s.durations.total;
  }
  const TimeNs median = lower_median(durations);
  // Sizes where most sites record one.
  const bool sized = 2 * sizes.size() >= durations.size();
  const std::uint64_t median_bytes = sized ? lower_median(sizes) : 0;
  if (sized ? median_bytes >= kSmallBytes : median >= kSmallNs) return {};
  // Without sizes, short instances say latency only where they hold most of
  // the time: many short ones beside a few long ones are not what it costs.
  if (!sized && 2 * short_ones < all) return {};
  return count(per_step) + " all-reduces in each step, median " + dur(median) +
         (sized ? ", median message " + bytes(median_bytes) : std::string(", sizes not recorded"));
}

// One all-reduce per parameter: at least 20 all-reduces in each step, as
// many (within 3 %) as the parameters the trace counts otherwise: the fills
// per call of Optimizer.zero_grad (one per gradient, set_to_none=False), or
// the kernels per step of a per-parameter optimizer (1 to 4 per parameter:
// SGD's add_, momentum's mul_ and add_). The gradients are then all-reduced
// unbucketed, whatever the messages' sizes. Empty otherwise.
std::string per_parameter_all_reduce(const Profile& p) {
  constexpr std::uint64_t kMin = 20;
  constexpr double kTolerance = 0.03;
  const std::uint64_t n = all_reduces_per_step(p);
  if (n < kMin) return {};
  const auto near = [&](double params) { return std::abs(params - double(n)) <= kTolerance * double(n); };
  for (const OpRow& r : p.op_names) {
    if (r.calls == 0 || r.kernels_total == 0) continue;
    const double per_call = double(r.kernels_total) / double(r.calls);
    if (r.name.starts_with("Optimizer.zero_grad#") && near(per_call))
      return count(n) + " all-reduces in each step, as many as the gradients " + r.name + " fills per call (" +
             fmt("%.0f", per_call) + ")";
    if (!is_optimizer_step(r.name) || p.workload.optimizer != "per-parameter") continue;
    for (int k = 1; k <= 4; ++k)
      if (near(per_call / k))
        return count(n) + " all-reduces in each step, as many as the parameters " + r.name + " updates (" +
               fmt("%.0f", per_call) + " kernels per step" +
               (k > 1 ? ": " + std::to_string(k) + " per all-reduce" : std::string()) + ")";
  }
  return {};
}

// The fix for gradients all-reduced one parameter at a time
// (per_parameter_all_reduce's words in `each`): bucket them.
std::string per_parameter_fix(const Profile& p, const std::string& each) {
  const WorkloadKind& w = p.workload;
  return "The trace shows one all-reduce per parameter, unbucketed (" + each + (w.data_parallel.empty() ? "" : "; ") +
         (w.data_parallel == "ddp" ? "although the trace also shows " : "") + w.data_parallel_evidence +
         "): each message pays the collective's latency, and each its own launch on the host. Bucket them: "
         "DistributedDataParallel's reducer all-reduces 25 MB buckets as their gradients are ready, under the "
         "rest of the backward pass (bucket_cap_mb), or flatten the gradients into a few buffers before "
         "all-reducing them (torch.distributed's all_reduce_coalesced); then fewer, larger messages move at the "
         "link's bandwidth instead of its latency, from a few launches a step instead of " +
         count(all_reduces_per_step(p)) + ".";
}

// The fix for exposed communication of this collective kind, in a run of
// this kind (inference has no gradients; DDP already buckets them).
std::string communication_fix(std::string_view k, const Profile& p) {
  const WorkloadKind& w = p.workload;
  // TorchRec's pipelined training names its phases: the next batch's input
  // distribution (sparse_data_dist) started ahead of this batch's wait for
  // it (wait_sparse_data_dist). Then the input's exchange is pipelined
  // already, and what stays exposed is the model's own all-to-alls.
  bool pipelined = false;
  // fbgemm's quantizing ops around the embeddings' exchange (TorchRec's
  // QCommsConfig): its communication is quantized already.
  std::string quantized;
  for (const OpRow& r : p.op_names) {
    pipelined = pipelined || r.name.find("wait_sparse_data_dist") != std::string::npos;
    if (quantized.empty() && r.name.starts_with("fbgemm::FloatTo") && r.name.find("Quantized") != std::string::npos)
      quantized = r.name;
  }
  const std::string send_less =
      quantized.empty()
          ? "send less (quantized embedding communication: TorchRec's QCommsConfig, fp16/bf16 forward and backward)"
          : "its exchange is quantized already (" + quantized +
                ": TorchRec's QCommsConfig), so a lower precision is not the next step";
  if ((k == "all_to_all" || k == "send_recv") && pipelined)
    return "The input distribution is already pipelined (TorchRec's sparse_data_dist for the next batch runs ahead "
           "of this batch's wait_sparse_data_dist), so pipelining it is not the fix: see which all-to-alls stay "
           "exposed (the collective sites, by size and place). For the embeddings' own exchange, forward and "
           "backward: " +
           send_less +
           "; revisit the sharding plan so fewer rows cross ranks (table-wise against row-wise or "
           "column-wise sharding), or overlap the embedding all-to-all with the dense part (a pipeline that runs the "
           "sparse forward ahead, TorchRec's semi-synchronous or prefetching pipelines).";
  if (k == "all_to_all" || k == "send_recv")
    return "Hide the all-to-all / send-recv: pipeline the input distribution so the next batch's exchange runs under "
           "this batch's compute (embedding models: TorchRec's pipelined training, or the sparse all-to-all "
           "overlapped with the dense part), and revisit the sharding plan so fewer rows cross ranks." +
           // Point-to-point sends by the framework's own name: pipeline
           // stages' activations, whose schedule is the lever.
           std::string(k == "send_recv" ? " For pipeline parallelism, overlap each send/recv with the next "
                                          "micro-batch (interleaved schedules)."
                                        : "") +
           (quantized.empty() ? std::string() : " Its embeddings' exchange is quantized already (" + quantized + ").");
  if (k == "all_gather" || k == "reduce_scatter")
    return "Overlap the all-gathers and reduce-scatters with compute: prefetch the next layer's parameters while "
           "this one computes (FSDP forward_prefetch/backward_prefetch, limit_all_gathers; ZeRO-3 prefetch "
           "buckets), fuse small gathers into larger ones, and overlap tensor-parallel collectives with the GEMMs "
           "around them (asynchronous tensor parallelism).";
  if (k == "broadcast")
    return "Broadcast less: broadcast parameters once at the start, not every step (PyTorch DDP: "
           "broadcast_buffers=False when the buffers need no sync each step), and run what stays on a communication "
           "stream alongside compute.";
  if (w.phase == "inference")
    return "Overlap the collectives with compute: in tensor-parallel inference, overlap each layer's all-reduce or "
           "all-gather with the next GEMMs (asynchronous tensor parallelism, fused GEMM + collective kernels, NCCL "
           "user buffers), or use fewer GPUs per model replica when communication outweighs the compute it spreads.";
  if (const std::string each = per_parameter_all_reduce(p); !each.empty()) return per_parameter_fix(p, each);
  if (const std::string each = per_tensor_all_reduce(p); !each.empty())
    return "The gradients are all-reduced a tensor at a time (" + each +
           "): small messages, each paying the collective's latency, and not DDP's buckets (25 MB by default)" +
           (w.data_parallel == "ddp" ? ", although the trace also shows " + w.data_parallel_evidence : "") +
           ". Bucket them: DistributedDataParallel's reducer all-reduces buckets as their gradients are ready, under "
           "the rest of the backward pass (bucket_cap_mb), or flatten the gradients into a few buffers before "
           "all-reducing them (torch.distributed's all_reduce_coalesced); then fewer, larger messages move at the "
           "link's bandwidth instead of its latency.";
  if (const std::optional<DdpOneBucket> one = ddp_one_bucket(p))
    return "This run already uses DDP (" + w.data_parallel_evidence +
           "), which launches each gradient bucket's all-reduce as soon as its gradients are ready: here " +
           one->words() +
           ". Splitting it (a smaller bucket_cap_mb, where the bucket holds many parameters) would start part of it "
           "under the backward pass, but what that saves the trace cannot tell: it does not show when each "
           "gradient is ready. What shortens it for certain is sending less (a DDP communication hook compressing "
           "gradients to bf16/fp16, or PowerSGD), or all-reducing less often (gradients accumulated over "
           "micro-batches under no_sync()).";
  // DDP's 25 MB buckets make a few all-reduces a step; a hundred or more
  // that are not all small (per_tensor_all_reduce above) may be its buckets
  // made small, or a compiler's split of them: the trace cannot tell.
  if (const std::uint64_t n = all_reduces_per_step(p); w.data_parallel == "ddp" && n >= 100)
    return "The trace shows DDP (" + w.data_parallel_evidence + "), yet " + count(n) +
           " all-reduces run in each step, far more than DDP's 25 MB buckets make: whether they are its buckets "
           "(a small bucket_cap_mb, or a compiler splitting them per graph) the trace cannot tell. What stays "
           "exposed is what the backward pass leaves nothing to hide under, or a slow link: send less (a DDP "
           "communication hook compressing gradients to bf16/fp16), or accumulate gradients over micro-batches "
           "under no_sync() so fewer steps all-reduce.";
  if (w.data_parallel == "ddp")
    return "This run already uses DDP (" + w.data_parallel_evidence +
           "), which buckets gradients and overlaps their all-reduce with the backward pass: what stays exposed is "
           "the buckets the backward pass leaves nothing to hide under (the last ones), or a slow link. Tune the "
           "buckets (bucket_cap_mb: smaller buckets start communicating sooner, larger ones cost fewer launches; "
           "static_graph=True, gradient_as_bucket_view=True), send less (a DDP communication hook compressing "
           "gradients to bf16/fp16, or PowerSGD), or accumulate gradients over micro-batches under no_sync() so "
           "fewer steps all-reduce.";
  return "Overlap the gradient all-reduce with the backward pass: bucket gradients and launch each bucket's "
         "all-reduce on a communication stream as soon as its gradients are ready (PyTorch DDP does this; tune "
         "bucket_cap_mb, gradient_as_bucket_view=True), not one all-reduce per tensor after the whole backward. Small "
         "gradients are latency-bound: fewer, larger buckets help. Bundled workload: --allreduce bucketed.";
}
}  // namespace

namespace {
// A kind's exposed time launched mostly inside the optimizer's step: the
// optimizer's own exchange (a sharded optimizer gathering its updates or
// preconditioners: ZeRO, distributed Shampoo), after the backward pass, not
// a layer's: FSDP's layer-by-layer prefetch and DDP's buckets do not apply,
// and what the optimizer can overlap the trace cannot tell.
bool launched_by_optimizer(const CollectiveKind& k) {
  return k.exposed_ns > 0 && 2 * k.optimizer_exposed_ns >= k.exposed_ns;
}

// `lead`: how the kind is named ("Its all_gather", "The all_gather (31% of the exposed time)").
std::string optimizer_exchange_fix(const CollectiveKind& k, const std::string& lead) {
  return lead + " is launched inside the optimizer's step (" + k.optimizer +
         "): the optimizer's own exchange (a sharded optimizer gathering its updated parameters or state), after the "
         "backward pass, not a layer's, so layer-by-layer prefetching and gradient buckets do not reach it. Whether "
         "that optimizer can start it under the next forward pass, or send it at a lower precision, depends on its "
         "options, which the trace does not show: look there first.";
}

// The fix for the dominant kind, then for each other kind that holds a fifth
// of the exposed time or more and has a fix of its own (two kinds, two
// fixes: an all-gather in the optimizer's step is no all-to-all).
std::string kinds_fix(const Profile& p, std::string_view dominant) {
  const CollectiveSummary& c = p.collective_summary;
  std::string out;
  for (const CollectiveKind& k : c.kinds) {
    if (k.kind == dominant) {
      out = launched_by_optimizer(k) ? optimizer_exchange_fix(k, "Its " + k.kind) : communication_fix(dominant, p);
      break;
    }
  }
  if (out.empty()) out = communication_fix(dominant, p);
  for (const CollectiveKind& k : c.kinds) {
    if (k.kind == dominant || 5 * k.exposed_ns < c.exposed_ns) continue;
    const bool own = launched_by_optimizer(k);
    // The other kinds' general fixes; a reduce or an unnamed collective has none.
    if (!own && k.kind != "all_to_all" && k.kind != "send_recv" && k.kind != "all_gather" &&
        k.kind != "reduce_scatter" && k.kind != "broadcast" && k.kind != "all_reduce")
      continue;
    const std::string share = pct(ratio(k.exposed_ns, c.exposed_ns)) + " of the exposed time";
    out += ' ';
    out += own ? optimizer_exchange_fix(k, "The " + k.kind + " (" + share + ")")
               : "The " + k.kind + " holds " + share + ". " + communication_fix(k.kind, p);
  }
  return out;
}

// Per GPU, the exposed communication that compute could cover: at most its
// compute not yet beside communication (|compute| - |communication ∩
// compute|). Summed over the GPUs.
TimeNs hideable_communication(const Profile& p) {
  TimeNs out = 0;
  for (const DeviceSummary& d : p.devices) {
    const TimeNs beside = d.communication_ns - d.exposed_communication_ns;  // communication under compute
    out += std::min(d.exposed_communication_ns, std::max<TimeNs>(0, d.compute_ns - beside));
  }
  return out;
}

// DDP's one bucket ready at the end of the backward pass: nothing is left to
// hide it under, and what splitting it saves the trace cannot tell. The rest
// of the exposed time keeps its rule of thumb. False where that is not so.
bool one_bucket_saving(const Profile& p, const Totals& t, const CollectiveMix& mix, Finding* f) {
  if (mix.dominant != "all_reduce" || mix.variant == "waiting") return false;
  const std::optional<DdpOneBucket> one = ddp_one_bucket(p);
  if (!one) return false;
  const TimeNs rest = std::max<TimeNs>(
      0, std::min(t.exposed_comm - std::min(one->exposed_ns, t.exposed_comm), hideable_communication(p)));
  f->saving_ns = t.per_device(rest);
  f->saving_note =
      "at most the exposed time of the communication other than DDP's largest bucket; what hiding "
      "that bucket's " +
      dur(t.per_device(one->exposed_ns)) +
      " would save is unknown: the trace does not show what splitting it would start earlier";
  f->recommendation += " Estimated saving: unknown for the bucket's " + dur(t.per_device(one->exposed_ns)) +
                       "; at most " + dur(t.per_device(rest)) + " for the rest, were all of it hidden under compute.";
  return true;
}
}  // namespace

namespace {
// An all-reduce slow for its size (slow_all_reduce(): `slow`): what it needs
// is a faster transfer, whose gain the trace cannot size.
void say_slow(const Builder& b, const std::string& slow, Finding& f) {
  // Too slow to hide: what it needs is a faster transfer, whose gain
  // the trace cannot size (the link, a late rank, the transport).
  f.variant = "slow";
  f.title += ", and slow for its size";
  f.evidence += " Slow for its size: " + slow +
                " (nccl-tests' busbw: algorithm bandwidth x 2(n-1)/n), below PCIe, NVLink, xGMI and "
                "InfiniBand, as slow as Ethernet of 40 Gb/s or less.";
  f.recommendation =
      "Find why the all-reduce is this slow before overlapping it: overlap hides at most the compute beside "
      "it. A rank that arrives late makes every rank's collective wait" +
      (b.p.files.size() > 1 ? std::string(" (the Stragglers table)")
                            : std::string(" (open the whole job: gpuscope report DIR with every rank's trace)")) +
      "; NCCL_DEBUG=INFO prints the transport each channel uses (P2P, NVLink or xGMI, IB, or NET/Socket, "
      "Ethernet through the host), and a job whose GPUs share a node or an InfiniBand fabric should not fall "
      "back to sockets. Where the ranks do talk over Ethernet, send less: a larger batch per GPU, or "
      "gradients accumulated over micro-batches under no_sync(), all-reduce less often; a communication "
      "hook that compresses the gradients (to bf16 where they are fp32, or PowerSGD) sends fewer bytes. "
      "Estimated saving: unknown; what a faster "
      "transfer saves depends on the link and the ranks, which the trace does not show.";
  f.saving_ns = 0;
  f.saving_note =
      "unknown: the transfer is slow for its size; what a faster one saves depends on the link and "
      "the ranks, which the trace does not show";
}

// An all-reduce whose time does not grow with its size
// (all_reduce_fixed_cost(): `fixed`).
void say_fixed_cost(const Builder& b, const std::string& fixed, Finding& f) {
  // Slow, but not for its size: a cost each call pays whatever it
  // moves, which neither overlap nor a faster link removes.
  f.variant = "fixed-cost";
  f.title += ", mostly a cost each call pays whatever its size";
  f.evidence += " Not the link: " + fixed + ".";
  f.recommendation =
      "Most of each all-reduce's time does not grow with its size: find what every call waits "
      "for before overlapping it or changing the link." +
      waiting_for(b.p) +
      " A rank late at every step (more work, a slower GPU or input) makes every call wait the "
      "same; so does a cost of its own in each call (NCCL_DEBUG=INFO shows the transport and "
      "its set-up), which the trace cannot tell apart from the wait. Then: " +
      f.recommendation;
  f.saving_ns = 0;
  f.saving_note =
      "unknown: most of the time is a cost each call pays whatever its size, which the trace does not "
      "explain";
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
      // Held gaps at communication the trace did not record (gpu-idle-gaps
      // counts their time): exposed communication too, most likely.
      const TimeNs unrecorded = b.ev.idle_gaps_comm_ns;
      f.title = "Communication is exposed " + pct1(share) + " of the run (" +
                (unrecorded > 0 ? "at least " + dur(t.per_device(t.exposed_comm)) + ", and up to " +
                                      dur(t.per_device(unrecorded)) + " more the trace likely did not record"
                                : dur(t.per_device(t.exposed_comm))) +
                "): only " + pct(overlapped) + " of communication time overlaps compute";
      f.evidence = "Communication kernels run " + dur(t.comm) + " (summed over GPUs), " + dur(t.exposed_comm) +
                   " of it with no compute kernel alongside: " + pct1(share) + " of the run vs xprof's anchors (" +
                   pct(th.exposed_comm_moderate) + " moderate, " + pct(th.exposed_comm_high) +
                   " high). Top: " + top_kernels_text(b.p, KernelCategory::communication, 2) + ".";
      const CollectiveMix mix = collective_mix(b.p);
      if (!mix.said.empty()) f.evidence += " By collective (of the exposed time): " + mix.said + ".";
      if (!mix.named.empty()) f.evidence += " " + mix.named;
      if (!mix.sites.empty()) f.evidence += " " + mix.sites;
      if (unrecorded > 0)
        f.evidence +=
            " Not recorded, most likely: " + dur(unrecorded) + " of GPU idle in " +
            count(b.ev.comm_gaps, "gap", "gaps") + " held at ops launched in host ranges named for communication (" +
            b.ev.comm_gap_range + " the largest) for which the trace records no communication kernel" +
            (b.p.workload.host_filtered.empty() ? std::string() : " (the trace was filtered to its launches)") +
            ": the collective ran, unrecorded, while the GPU waited (gpu-idle-gaps counts that time).";
      f.variant = mix.variant;
      f.recommendation = kinds_fix(b.p, mix.dominant);
      if (mix.variant == "waiting") {
        const std::string who = waited_for(b.p);
        f.title += ", likely waiting for another " + who;
        f.recommendation = "Most of this is likely waiting for another " + who +
                           ", not data moving: the same collective at the same place takes far longer in some steps "
                           "than in others, and overlapping or a faster link does not shorten a wait for a late " +
                           who + "." + waiting_for(b.p) + " Then: " + f.recommendation;
      }
      if (const std::string slow = mix.dominant == "all_reduce" ? slow_all_reduce(b.p) : std::string();
          !slow.empty() && mix.variant != "waiting") {
        say_slow(b, slow, f);
      } else if (const std::string fixed =
                     mix.dominant == "all_reduce" && mix.variant != "waiting" ? all_reduce_fixed_cost(b.p) : "";
                 !fixed.empty()) {
        say_fixed_cost(b, fixed, f);
      } else if (one_bucket_saving(b.p, t, mix, &f)) {
        // DDP's one bucket: its saving is set there.
      } else if (const TimeNs hideable = hideable_communication(b.p); hideable < t.exposed_comm) {
        // Overlap hides communication only under compute that exists: the
        // compute not yet beside communication bounds what it can save.
        f.saving_ns = t.per_device(hideable);
        f.saving_note = "at most the compute not yet beside communication (" + dur(t.per_device(hideable)) +
                        "), under which overlap could hide the exposed time";
        f.recommendation += " Estimated saving: at most " + dur(t.per_device(hideable)) +
                            ", the compute kernels' time not yet beside communication, under which overlap could "
                            "hide it; the other " +
                            dur(t.per_device(t.exposed_comm - hideable)) +
                            " of exposed time has no compute to hide under: only less communication (fewer bytes, "
                            "fewer or shorter waits) shortens it.";
      } else {
        f.recommendation += " Estimated saving: at most the exposed time, were all of it hidden under compute.";
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
    if (is_optimizer_step(r.name) && r.calls > 0) rows.push_back(&r);
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
    // Per step by what the optimizer's steps launched, where the trace names
    // them: kernels by name alone include those of a step launched before
    // the recording (a backlog the first recorded step runs).
    const std::uint64_t of_steps = b.ev.optimizer_op_kernels ? b.ev.optimizer_op_kernels : b.ev.optimizer_kernels;
    f.title = "The weight update runs alone: " + pct1(opt_share) + " of kernel time in " +
              count(b.ev.optimizer_kernels) + " optimizer kernels" +
              (steps ? " (" + count(of_steps / steps) +
                           (b.ev.optimizer_op_kernels ? " per step launched by the optimizer's step)" : " per step)")
                     : std::string()) +
              ", " + pct(opt_overlap) + " of it overlapped";
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
    // Optimizer kernel time already in multi-tensor or fused kernels: then
    // fusing is done, and overlap is what is left to advise.
    TimeNs opt_ns = 0, fused_ns = 0;
    for (const Hotspot& h : b.p.hotspots) {
      if (h.category != KernelCategory::optimizer) continue;
      opt_ns += h.stats.total;
      if (contains_nocase(h.name, "multi_tensor") || contains_nocase(h.name, "fused")) fused_ns += h.stats.total;
    }
    // The workload's kind where it is known (from the kernels inside the
    // optimizer's steps), else the optimizer kernels' time by name.
    const std::string& kind = b.p.workload.optimizer;
    const bool fused = kind == "foreach" || kind == "fused" ||
                       (kind != "per-parameter" && opt_ns > 0 && ratio(fused_ns, opt_ns) >= 0.5);
    if (kind == "foreach" || kind == "fused")
      f.evidence += " The optimizer is already " + kind + ": " + b.p.workload.optimizer_evidence + ".";
    else if (fused)
      f.evidence += " " + pct(ratio(fused_ns, opt_ns)) +
                    " of the optimizer's kernel time is already in multi-tensor or fused kernels.";
    f.recommendation =
        (fused ? std::string("The optimizer is already multi-tensor or fused: overlap the update instead, ")
               : std::string("Use a fused multi-tensor optimizer (one kernel for all parameters: "
                             "torch.optim.SGD/Adam(foreach=True or fused=True), apex FusedSGD/FusedAdam) and overlap "
                             "the update ")) +
        "with communication and the next forward: update each gradient bucket as soon as its all-reduce completes, "
        "on a separate stream. Bundled workload: --update overlapped. The saving is an upper bound: the update's "
        "time alone, if all of it ran beside other work without slowing it (kernels that share the SMs each run "
        "slower, so less is saved).";
    // One DDP bucket holds nearly every gradient: the update waits for its
    // all-reduce, and no bucket finishes early enough to update under the
    // others' communication.
    if (const std::optional<DdpOneBucket> one = ddp_one_bucket(b.p))
      f.recommendation =
          (fused ? std::string("The optimizer is already multi-tensor or fused. ")
                 : std::string("Use a fused multi-tensor optimizer (one kernel for all parameters: "
                               "torch.optim.SGD/Adam(foreach=True or fused=True), apex FusedSGD/FusedAdam). ")) +
          "Updating each gradient bucket as its all-reduce completes gains little here: " + one->words() +
          ", and the update needs its gradients. What overlapping the update with the next forward would save the "
          "trace cannot tell.";
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
  // The kind is the workload's (recognise_optimizer: the same thresholds).
  if (b.p.workload.optimizer != "per-parameter") return;
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
      "step. Estimated saving: the host time of the optimizer step beyond its GPU work, at most what waited for "
      "it: the GPU idle its launches ended, or, after the replay, its host time on the critical path (the next "
      "step's work waiting for the update to finish on the host).";
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

namespace gpuscope::detail {

std::optional<DdpOneBucket> ddp_one_bucket(const Profile& p) {
  if (p.workload.data_parallel != "ddp") return std::nullopt;
  // The all-reduce sites seen in two steps or more, pooled over GPUs and
  // ranks by size and place in the step: DDP's buckets, one site each.
  struct Bucket {
    TimeNs time = 0, exposed = 0;
  };
  std::map<std::pair<std::uint64_t, std::int32_t>, Bucket> buckets;
  for (const CollectiveSite& s : p.collective_sites) {
    if (s.kind != "all_reduce" || s.ordinal < 0 || s.bytes == 0 || s.durations.count < 2) continue;
    Bucket& b = buckets[{s.bytes, s.ordinal}];
    b.time += s.durations.total, b.exposed += s.exposed_ns;
  }
  if (buckets.empty()) return std::nullopt;
  std::uint64_t total = 0;
  const std::pair<const std::pair<std::uint64_t, std::int32_t>, Bucket>* largest = nullptr;
  DdpOneBucket out;
  for (const auto& entry : buckets) {
    total += entry.first.first;
    out.sizes.push_back(entry.first.first);
    if (!largest || entry.first.first > largest->first.first) largest = &entry;
  }
  std::sort(out.sizes.begin(), out.sizes.end(), std::greater<>());
  const Bucket& b = largest->second;
  out.share = double(largest->first.first) / double(total);
  out.under_compute = b.time > 0 ? 1.0 - double(std::min(b.exposed, b.time)) / double(b.time) : 0.0;
  out.exposed_ns = b.exposed;
  // Most of the bytes, and (almost) nothing computed beside it.
  constexpr double kMostBytes = 0.75, kAlone = 0.05;
  if (out.share < kMostBytes || out.under_compute > kAlone) return std::nullopt;
  return out;
}

std::string DdpOneBucket::words() const {
  std::string list;
  for (std::size_t i = 0; i < sizes.size() && i < 4; ++i) list += (i ? ", " : "") + rules::bytes(sizes[i]);
  if (sizes.size() > 4) list += ", …";
  return rules::pct1(share) + " of the bytes all-reduced per step are in one " + rules::bytes(sizes.front()) +
         " bucket (" + rules::count(sizes.size(), "bucket", "buckets") + " per step, by the all-reduce calls " +
         "seen at the same place in each step: " + list + "), with " +
         (under_compute > 0 ? "a compute kernel beside it " + rules::pct1(under_compute) + " of its time"
                            : std::string("no compute kernel beside it")) +
         ": nothing was left to hide it under";
}

}  // namespace gpuscope::detail
