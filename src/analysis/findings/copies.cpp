// Copies: overlap with kernels, pageable host memory, copies that block the host.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "analysis/findings/rules.h"

namespace gpuscope::detail::rules {

namespace {

// Copies by kind (MemcpyStats::groups): host-to-device copies from pinned
// memory on a stream of their own are done right; the others each have their fix.
bool copies_done_right(const CopyGroup& g) { return g.direction == "HtoD" && g.memory == "pinned" && g.own_stream; }

std::string copy_kind_words(const CopyGroup& g) {
  std::string s = g.direction;
  if (g.memory == "pinned" || g.memory == "pageable")
    s += (g.direction == "DtoH" ? " to " : " from ") + g.memory + " memory";
  return s + (g.own_stream ? " on a copy stream" : " on a compute stream");
}

std::string copy_group_words(const CopyGroup& g) {
  return copy_kind_words(g) + " (" + count(g.count, "copy", "copies") + ", " + bytes(g.bytes) + ", " + dur(g.time_ns) +
         ")";
}

// The group with the most time of those `keep` accepts; null when none.
template <class Keep>
const CopyGroup* heaviest_copies(const MemcpyStats& m, Keep&& keep) {
  const CopyGroup* best = nullptr;
  for (const CopyGroup& g : m.groups)
    if (keep(g) && (!best || g.time_ns > best->time_ns)) best = &g;
  return best;
}

// Pageable copies in a program that already pins host memory: the pinned
// buffers are not the ones these copies use, and advice to pin says so.
std::string pinned_elsewhere(const Profile& p) {
  const WorkloadKind& w = p.workload;
  if (w.pinning_calls == 0) return {};
  return "The program already pins host memory (" + count(w.pinning_calls, "call", "calls") + " of " +
         "cudaHostAlloc/cudaMallocHost/cudaHostRegister, " + dur(w.pinning_ns) +
         "), yet these copies' host side is pageable: they do not use the pinned buffers. ";
}

// How often to read results back: a training loop reads its metrics every
// N steps; an inference run needs its outputs, so it launches the next
// batch's work before it waits for them.
std::string read_back_words(const Profile& p) {
  if (p.workload.phase == "inference")
    return "launch the next batch's work before the host waits for these outputs, so the GPU has it queued.";
  return "read results (.item(), .cpu(), print(loss)) every N steps rather than every step.";
}

// Copies with a pageable host side: pin, then copy asynchronously.
std::string pageable_copy_fix(const Profile& p, const CopyGroup& g) {
  if (g.direction == "DtoH")
    return for_framework(p,
                         "Copy into pinned host memory (a buffer allocated with pin_memory=True, filled by "
                         ".copy_(src, non_blocking=True)) on a side stream and wait for it with an event only where "
                         "the host reads it; " +
                             read_back_words(p),
                         "Read results back less often: keep metrics on the GPU and fetch them (.numpy(), "
                         "printing a tensor) every N steps rather than every step.",
                         "Copy into pinned host memory (cudaMallocHost, or cudaHostRegister on the existing buffer) "
                         "with cudaMemcpyAsync on a side stream, and wait for it with an event only where the host "
                         "reads it; read results back every N iterations rather than every one.");
  // A DataLoader only where the trace shows one feeding the run.
  const bool loader = loader_workers(p) != LoaderWorkers::unknown;
  return for_framework(p,
                       loader
                           ? "Copy from pinned memory, asynchronously: DataLoader(pin_memory=True) and .to(device, "
                             "non_blocking=True) (cudaHostAlloc + cudaMemcpyAsync), on a copy stream that "
                             "prefetches batch i+1 during step i."
                           : "Copy from pinned memory, asynchronously: fill a pinned buffer that is reused from input "
                             "to input (torch.empty(..., pin_memory=True); DataLoader(pin_memory=True) where a "
                             "DataLoader makes the input) and copy it with .to(device, non_blocking=True) "
                             "(cudaHostAlloc + cudaMemcpyAsync); with several inputs, on a copy stream that uploads "
                             "input i+1 while the GPU runs input i.",
                       "Let the input pipeline stage batches into pinned memory and onto the GPU ahead of the "
                       "step: dataset.prefetch and tf.data.experimental.prefetch_to_device, so the copy of batch "
                       "i+1 runs during step i.",
                       "Copy from pinned memory, asynchronously: allocate the host buffers with cudaMallocHost "
                       "(or pin existing ones once with cudaHostRegister) and copy with cudaMemcpyAsync on a "
                       "stream of its own, so the copy overlaps the host and the GPU's work.");
}

// Device-to-device copies mostly made by autograd's gradient accumulation
// or by DDP (of those launched outside compiled regions, where the
// compiler's copies are not the most): copy_fix names their fixes, which
// remove them only.
bool gradient_copies(const CopyGroup& g) {
  if (g.direction != "DtoD" || 2 * g.compiled >= g.count) return false;
  // Of the eager copies whose launch the trace holds, most are autograd's
  // or DDP's (copies queued before the recording: origin unknown).
  const std::uint64_t eager = g.count - g.compiled - std::min(g.count - g.compiled, g.unlaunched);
  return eager > 0 && 2 * (g.gradient + g.buffers) >= eager;
}

// The fix for copies made by autograd's gradient accumulation and by DDP
// (gradient_copies): the gradient copies', the buffer broadcast's, and what
// the trace cannot place.
std::string gradient_copy_fix(const Profile& p, const CopyGroup& g) {
  const bool ddp = p.workload.data_parallel == "ddp";
  std::string out;
  if (g.gradient > 0)
    out = count(g.gradient, "copy", "copies") + " of these " + count(g.count) +
          " were launched inside autograd's AccumulateGrad or DDP's copy_bucket_to_grad, where gradients are "
          "accumulated: " +
          (ddp ? "under DDP these are most likely its copies of each gradient into its all-reduce bucket and back, "
                 "which DistributedDataParallel(..., gradient_as_bucket_view=True) avoids by making the gradients "
                 "views of the buckets (PyTorch's DDP documentation; the default is False, and the trace does not "
                 "show the setting). Compiling the model's forward does not remove them."
               : "a gradient copied into .grad (a fresh .grad each step, or one of another layout or dtype "
                 "than the parameter's); compiling the model's forward does not remove them.");
  if (g.buffers > 0) {
    const std::string of = out.empty() ? " of these " + count(g.count) : std::string();
    if (!out.empty()) out += ' ';
    out += count(g.buffers, "copy", "copies") + of +
           " were launched by ops directly under a DistributedDataParallel.forward that also broadcasts: DDP's "
           "broadcast of the module's buffers (such as BatchNorm's running statistics) from rank 0 at each forward "
           "(broadcast_buffers=True, the default), which broadcast_buffers=False skips where the buffers need no "
           "sync across ranks.";
  }
  if (g.ddp_forward > 0) {
    // Under a DDP forward that broadcasts nothing: not its buffer sync (the
    // trace would show the broadcast), so the ops that made them are named.
    const std::string of = out.empty() ? " of these " + count(g.count) : std::string();
    if (!out.empty()) out += ' ';
    const bool all = g.ddp_forward_op_count == g.ddp_forward;
    out += count(g.ddp_forward, "copy", "copies") + of + " (" + bytes(g.ddp_forward_bytes) +
           (g.ddp_forward == 1 ? ") was" : ") were") + " launched " + (all ? "by " : "mostly by ") + g.ddp_forward_op +
           (all ? "" : " (" + count(g.ddp_forward_op_count) + ")") +
           " directly under DistributedDataParallel.forward, which broadcasts nothing here: not DDP's buffer "
           "sync; what they copy, and so what removes them, the trace does not show.";
  }
  if (g.unlaunched > 0) {
    out += ' ';
    out += count(g.unlaunched, "copy was", "copies were");
    out +=
        " queued before the recording began (no launch in the trace): where they come from, the trace does not "
        "show.";
  }
  out += " Pinned memory does not apply.";
  return out;
}

// What to change for copies of this kind.
std::string copy_fix(const Profile& p, const CopyGroup& g) {
  if (g.memory == "pageable" && (g.direction == "DtoH" || g.direction == "HtoD"))
    return pinned_elsewhere(p) + pageable_copy_fix(p, g);
  if (g.direction == "DtoD" || g.direction == "peer") {
    // Made by the compiler, not by the model's code: removing clone() or
    // .contiguous() from it does not apply.
    // Graph replays copy their inputs in only where graphs replay: a trace
    // with no graph launch has none to blame.
    if (g.direction == "DtoD" && 2 * g.compiled >= g.count) {
      const std::string made = count(g.compiled, "copy", "copies") + " of these " + count(g.count) +
                               " were launched inside torch.compile's compiled regions: the compiler made them, so "
                               "the model's own clone() or .contiguous() calls are not where they come from. ";
      if (p.workload.graph_launches == 0)
        return made +
               "No CUDA graph is launched in this trace, so they are not a graph replay's input copies: the "
               "compiled code copies tensors itself (a clone() or a layout change the compiler kept, in the "
               "compiled forward or backward). TORCH_LOGS=output_code shows the generated code that makes them; "
               "what removes them depends on why it copies, which the trace does not show.";
      return made +
             "Under mode='reduce-overhead' CUDA graphs copy each input that is not at a fixed address into the "
             "graph's buffer on every replay: keep inputs in the same tensors from step to step (copy_ into them), "
             "or mark them static (torch._dynamo.mark_static_address). Otherwise the compiled code's layout changes "
             "make them: TORCH_LOGS=output_code shows which; the trace does not tell which of these it is.";
    }
    // A run that compiles part of itself: the copies are mostly the eager
    // part's, so compiling is not news, compiling that part is.
    const std::string compile =
        p.workload.execution == "eager"
            ? "torch.compile fuses most of them away."
            : count(g.count - g.compiled, "copy", "copies") + " of these " + count(g.count) +
                  " ran outside the compiled regions: the code that makes them runs eagerly (graph breaks: "
                  "TORCH_LOGS=graph_breaks), and compiling it fuses most of them away.";
    // Most of the eager ones made by autograd's gradient accumulation: not
    // the model's code, and no compiling of the model removes them.
    if (gradient_copies(g)) return gradient_copy_fix(p, g);
    if (g.direction == "DtoD" && !g.own_stream)
      return for_framework(
          p,
          "These are device-to-device copies on the compute stream: tensors copied by clone(), copy_(), "
          ".contiguous() or .to(dtype) between kernels. Remove the copies rather than speed them up: keep "
          "tensors contiguous in the layout the next op wants (or let it take a strided view), use in-place "
          "ops, and avoid clone() of tensors that are not written to; " +
              compile + " Pinned memory does not apply.",
          "These are device-to-device copies on the compute stream between kernels (transposes, casts, "
          "identity copies): let XLA fuse them away (tf.function(jit_compile=True)) or keep tensors in the layout "
          "the next op wants. Pinned memory does not apply.",
          "These are device-to-device copies on the compute stream between kernels: remove them where the next "
          "kernel can read the data where it is (in place, or through a strided index), or overlap them on a "
          "stream of their own. Pinned memory does not apply.");
    return "These are device-to-device (or peer) copies: overlap them with compute on a stream of their own, or "
           "avoid them (peer access or NCCL instead of staged copies, keep data on the GPU that uses it).";
  }
  if (g.direction == "DtoH")
    return for_framework(p,
                         "Issue the copy asynchronously on a side stream and wait for it with an event only where the "
                         "host reads it; " +
                             read_back_words(p),
                         "Read results back less often: keep metrics on the GPU and fetch them every N steps.",
                         "Issue the copy asynchronously (cudaMemcpyAsync) on a side stream and wait for it with an "
                         "event only where the host reads it; read results back every N iterations rather than every "
                         "one.");
  if (g.direction == "HtoD") {
    if (!g.own_stream)
      return for_framework(p,
                           "The copies are pinned but run on the compute stream, so kernels wait for them: issue "
                           "them on a dedicated copy stream (torch.cuda.Stream, with wait_stream/record_stream "
                           "before use) that prefetches the next batch during the current step.",
                           "The copies are pinned but run on the compute stream, so kernels wait for them: prefetch "
                           "the next batch to the GPU during the current step (tf.data.experimental."
                           "prefetch_to_device).",
                           "The copies are pinned but run on the compute stream, so kernels wait for them: issue "
                           "them on a dedicated copy stream (cudaStreamCreate; cudaEventRecord and "
                           "cudaStreamWaitEvent before use) that copies the next data while the current kernels run.");
  }
  return for_framework(p,
                       "Copy while computing: cudaMemcpyAsync from pinned memory on a dedicated copy stream, "
                       "prefetching batch i+1 during step i (PyTorch: pin_memory=True and .to(device, "
                       "non_blocking=True) with a prefetching loader).",
                       "Copy while computing: prefetch the next batch to the GPU during the current step "
                       "(tf.data.experimental.prefetch_to_device).",
                       "Copy while computing: cudaMemcpyAsync from pinned memory on a dedicated copy stream, copying "
                       "the next data while the current kernels run.");
}

}  // namespace

// Whether pageable-memcpy fires: then the pageable copies' time is its own
// (pinning them is the fix that also lets them overlap), and
// low-memcpy-overlap counts only the others.
bool pageable_fires(const Builder& b) {
  const MemcpyStats& m = b.p.memcpys;
  return m.pageable > 0 && ratio(m.pageable_ns, b.t.span) >= b.opt.thresholds.pageable_min_share;
}

// Copies that nothing overlaps: except those done right (pinned HtoD on their
// own stream), and the pageable ones when pageable-memcpy has them.
void low_memcpy_overlap(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  const MemcpyStats& m = b.p.memcpys;
  if (t.memcpy <= 0) return;
  // The share of copy time in kinds that want this fix (all of it where the kinds are unknown).
  const bool pageable_elsewhere = pageable_fires(b);
  TimeNs all = 0, to_fix = 0, pageable = 0;
  for (const CopyGroup& g : m.groups) {
    all += g.time_ns;
    if (pageable_elsewhere && g.memory == "pageable")
      pageable += g.time_ns;
    else if (!copies_done_right(g))
      to_fix += g.time_ns;
  }
  const double fix_part = m.groups.empty() ? 1.0 : ratio(to_fix, all);
  const double overlap = ratio(t.memcpy - t.memcpy_exposed, t.memcpy);
  const double copy_share = ratio(t.memcpy, t.span) * fix_part;
  if (copy_share < th.memcpy_min_share || overlap >= th.low_memcpy_overlap) return;
  const TimeNs exposed = static_cast<TimeNs>(static_cast<double>(t.memcpy_exposed) * fix_part);
  Finding& f = b.add(Severity::warning, overlap, th.low_memcpy_overlap, t.per_device(exposed));
  f.share = copy_share;
  const CopyGroup* top = heaviest_copies(
      m, [&](const CopyGroup& g) { return !copies_done_right(g) && !(pageable_elsewhere && g.memory == "pageable"); });
  f.title = "Only " + pct1(overlap) + " of copy time overlaps kernels: " + dur(t.per_device(exposed)) + " of " +
            (pageable > 0 ? "copies other than the pageable ones" : std::string("copies")) +
            " run with the GPU otherwise idle" + (top ? ", mostly " + copy_kind_words(*top) : "");
  f.evidence = "Copies take " + pct1(ratio(t.memcpy, t.span)) + " of the run (" + dur(t.memcpy) + "); " +
               pct1(overlap) + " of it overlaps kernels vs a " + pct(th.low_memcpy_overlap) +
               " threshold (nvvp's Low Memcpy/Compute Overlap).";
  if (top) f.evidence += " Heaviest kind: " + copy_group_words(*top) + ".";
  if (pageable > 0)
    f.evidence += " Pageable copies (" + pct(ratio(pageable, all)) +
                  " of copy time) are the pageable-memcpy finding's and left out here.";
  if (all - to_fix - pageable > 0)
    f.evidence += " Pinned host-to-device copies on a copy stream (" + pct(ratio(all - to_fix - pageable, all)) +
                  " of copy time) are done right and left out of the saving.";
  f.recommendation = top ? copy_fix(b.p, *top) : copy_fix(b.p, CopyGroup{});
  // The fix named removes the gradient-accumulation copies only: the saving
  // is their time with no kernel beside them; the rest's origin is unknown.
  if (top && gradient_copies(*top)) {
    const TimeNs named = std::min(exposed, top->gradient_exposed_ns + top->buffers_exposed_ns);
    const std::uint64_t others = top->count - top->gradient - top->buffers - top->unlaunched - top->ddp_forward;
    f.saving_ns = t.per_device(named);
    f.saving_note = "what the fixes named remove: the time the " + count(top->gradient + top->buffers) +
                    " copies launched inside AccumulateGrad or by DDP ran with no kernel beside them; the other "
                    "copies' is not counted: where they come from, and so what removes them, the trace does not show";
    if (others > 0)
      f.recommendation +=
          " The other " + count(others, "copy", "copies") + " of this kind" +
          (top->buffers == 0 && top->unlaunched == 0 && top->ddp_forward == 0
               ? " (" + bytes(top->bytes - std::min(top->bytes, top->gradient_bytes)) + ", " +
                     dur(t.per_device(std::max<TimeNs>(0, top->exposed_ns - top->gradient_exposed_ns))) +
                     " with no kernel beside them)"
               : std::string()) +
          " were launched elsewhere: where they come from, and so their fix, the trace does not show.";
  }
  f.ranges = b.ev.memcpy_exposed.ranges();
}

namespace {

// What pinning the pageable copies saves: per direction, their time beyond
// the same bytes at the bandwidth the trace's own pinned copies of that
// direction reached (1 MiB or more of them); where it has none to measure the
// bus by, half their time (a rule of thumb). `measured`: every pageable group
// had its reference; `reference`: the pinned bandwidth used, GB/s (the last).
TimeNs pinning_saving(const MemcpyStats& m, bool* measured, double* reference) {
  TimeNs saving = 0;
  *measured = true;
  for (const CopyGroup& g : m.groups) {
    if (g.memory != "pageable") continue;
    std::uint64_t bytes = 0;
    TimeNs ns = 0;
    for (const CopyGroup& h : m.groups)
      if (h.memory == "pinned" && h.direction == g.direction) bytes += h.bytes, ns += h.time_ns;
    if (bytes >= (1u << 20) && ns > 0) {
      *reference = double(bytes) / double(ns);  // bytes/ns = GB/s
      saving += std::max<TimeNs>(0, g.time_ns - static_cast<TimeNs>(double(g.bytes) / *reference));
    } else {
      *measured = false;
      saving += g.time_ns / 2;
    }
  }
  return saving;
}

}  // namespace

void pageable_memcpy(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const MemcpyStats& m = b.p.memcpys;
  const Totals& t = b.t;
  const double pageable_share = ratio(m.pageable_ns, t.span);
  if (pageable_fires(b)) {
    bool measured = false;
    double reference = 0;
    // Pinned, a copy needs no staging: the GPU's wait for it goes (measured),
    // besides what the pinned copies' rate saves of the copies' own time.
    const TimeNs staging = b.ev.staging_idle_ns;
    const TimeNs pinning = pinning_saving(m, &measured, &reference);
    const TimeNs saving = staging > 0 ? staging + (measured ? pinning : 0) : pinning;
    Finding& f = b.add(pageable_share >= 0.05 ? Severity::warning : Severity::info, pageable_share,
                       th.pageable_min_share, t.per_device(saving));
    f.share = pageable_share;
    const double gbps = m.pageable_ns ? double(m.pageable_bytes) / double(m.pageable_ns) : 0;  // bytes/ns = GB/s
    const CopyGroup* top = heaviest_copies(m, [](const CopyGroup& g) { return g.memory == "pageable"; });
    const bool one = m.pageable == 1;
    f.title = count(m.pageable, "copy", "copies") + " (" + bytes(m.pageable_bytes) + ", " + dur(m.pageable_ns) +
              (one ? ") uses" : ") use") + " pageable host memory, at " + format::bandwidth(gbps * 1e9) +
              (top ? (one ? ", " : ", mostly ") + copy_kind_words(*top) : "");
    f.evidence =
        "Copies with a pageable host side are staged through a driver buffer and cannot overlap the host "
        "(nsys rule cuda_memcpy_async); they take " +
        pct1(pageable_share) + " of the run vs a " + pct1(th.pageable_min_share) + " threshold.";
    std::string kinds;
    for (const CopyGroup& g : m.groups)
      if (g.memory == "pageable") kinds += (kinds.empty() ? "" : "; ") + copy_group_words(g);
    if (!kinds.empty()) f.evidence += " By kind: " + kinds + ".";
    if (staging > 0)
      f.evidence += " Before " + count(b.ev.staging_gaps, "host-to-device copy", "host-to-device copies") +
                    " the GPU sat idle " + dur(t.per_device(staging)) +
                    " while the driver staged their bytes (their call had begun and not yet returned, their copy "
                    "had not begun): from pinned memory a copy needs no staging.";
    const std::string estimate =
        measured ? "their time beyond the same bytes at the " + format::bandwidth(reference * 1e9) +
                       " this trace's pinned copies of that direction reached; overlapping them with compute "
                       "(asynchronous copies on a copy stream) can hide the rest"
                 : "half the copy time, a rule of thumb: the trace has no pinned copy of that direction to measure "
                   "the bus by. These ran at " +
                       format::bandwidth(gbps * 1e9) +
                       ": where that is near the bus's pinned rate (about 12 GB/s on PCIe 3 x16, 25 on PCIe 4, 50 "
                       "on PCIe 5), pinning alone saves little, and what it buys is overlap with compute "
                       "(an asynchronous copy: non_blocking=True, cudaMemcpyAsync), which can hide all of it";
    // Measured staging and no pinned copy to measure the bus by: the copies'
    // own time is left out (at a bus's pinned rate, pinning saves little of it).
    f.recommendation =
        (top ? copy_fix(b.p, *top) : copy_fix(b.p, CopyGroup{"HtoD", false, "pageable"})) + " Estimated saving: " +
        (staging > 0
             ? "the GPU's idle time while the driver staged them (" + dur(t.per_device(staging)) + ", measured)" +
                   (measured ? ", plus " + estimate
                             : std::string("; what pinning does to the copies' own time (they ran at ") +
                                   format::bandwidth(gbps * 1e9) +
                                   ") the trace has no pinned copy of that direction to tell: asynchronous "
                                   "copies on a copy stream can hide it")
             : estimate) +
        ".";
    f.ranges = b.ev.pageable.ranges();
  }
}

// Copies that block the host, charged as synchronizations: rated by the host
// time blocked plus the GPU idle that follows, not by the copies' duration.
void sync_memcpy(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const MemcpyStats& m = b.p.memcpys;
  const SyncStats& y = b.p.syncs;
  const Totals& t = b.t;
  if (!sync_memcpy_fires(b)) return;
  const double share = blocking_copy_share(b);
  Finding& f = b.add(share >= 0.05 ? Severity::warning : Severity::info, share, th.sync_memcpy_share,
                     t.per_device(y.gpu_idle_after_copies_ns));
  // The kind that held the host longest (a count would name 2 small
  // input copies over the one read-back that waited for the whole forward).
  const CopyGroup* top = nullptr;
  for (const CopyGroup& g : m.groups)
    if (g.blocking && (!top || g.blocking_ns > top->blocking_ns)) top = &g;
  const bool one = m.synchronous == 1;
  f.title = count(m.synchronous, "copy blocks", "copies block") + " the host " + dur(m.synchronous_ns) +
            (y.gpu_idle_after_copies_ns > 0 ? std::string(one ? " and is" : " and are") + " charged " +
                                                  dur(t.per_device(y.gpu_idle_after_copies_ns)) +
                                                  " of the GPU's idle after " + (one ? "it" : "them")
             : y.readback_gaps > 0
                 ? std::string(", and the GPU's idle after ") + (one ? "it" : "them") +
                       " is charged to the host's work that follows, which most likely uses the results read back"
                 : std::string(", but the GPU is not left idle after ") + (one ? "it" : "them")) +
            (top ? (one ? ", " : ", mostly ") + copy_kind_words(*top) : "");
  f.evidence =
      "A copy blocks the calling thread until the GPU's queue drains and the copy is done when it is launched by a "
      "blocking call (cudaMemcpy; nsys rule cuda_memcpy_sync), has a pageable host side, or reads a value back "
      "(.item(), a small .to('cpu'): aten::_local_scalar_dense); host-to-device copies <= " +
      bytes(std::uint64_t(th.sync_memcpy_htod_exempt_bytes)) +
      " are staged and excluded (unless a synchronous call's copy began on the GPU over a launch's latency after "
      "the call, which returned only after that: it waited for the work queued ahead). Like a host synchronization it "
      "is charged the host time blocked (" +
      dur(m.synchronous_ns) + ") plus the GPU idle in the gap it leaves (" +
      dur(t.per_device(y.gpu_idle_after_copies_ns)) + "): " + pct1(share) + " of the run vs a " +
      pct1(th.sync_memcpy_share) +
      " threshold. Of that gap each copy is charged at most how long it held the host (had it not blocked, the "
      "host's next launch would have come that much earlier, though part of that time the GPU was still busy "
      "with the copy and the work ahead of it); the rest of the gap is the host's own work, a late launch.";
  if (y.readback_gaps > 0)
    f.evidence += " Not charged: " + count(y.readback_gaps, "gap", "gaps") +
                  " after a read-back of results (device to host, 1 MiB or more) in which the host then worked "
                  "longer than the copy held it: that work most likely uses the results, so the copy did not put the "
                  "next launch off (the gap is the host's work, a late launch).";
  if (top)
    f.evidence += " The kind that held the host longest: " + copy_group_words(*top) + ", " + count(top->blocking) +
                  " blocking it " + dur(top->blocking_ns) + ".";
  // Small device-to-host copies read values back (.item(), a loss to print).
  const bool scalar = top && top->direction == "DtoH" && top->bytes <= 65536 * top->count;
  f.recommendation =
      (scalar
           ? for_framework(b.p,
                           b.p.workload.phase == "inference"
                               ? "Reading values back (.item(), .tolist(), .cpu()) waits for the GPU: copy them into "
                                 "pinned memory with non_blocking=True and wait on an event just before they are "
                                 "used, launching the next step's work first."
                               : "Reading values back (.item(), .cpu(), print(loss)) waits for the GPU: keep metrics "
                                 "on the GPU and read them every N steps, or copy them into pinned memory with "
                                 "non_blocking=True and wait on an event where they are needed.",
                           "Reading values back (.numpy(), printing a tensor) waits for the GPU: keep metrics on "
                           "the GPU and read them every N steps.",
                           "Reading values back with a blocking cudaMemcpy waits for the GPU: read them every N "
                           "iterations, or copy them with cudaMemcpyAsync into pinned memory and wait on an event "
                           "where they are needed.")
           : (top ? copy_fix(b.p, *top) + " " : std::string("Use cudaMemcpyAsync on a stream with pinned memory. ")) +
                 "Wait for the data only where it is needed (an event), so the host keeps launching work "
                 "meanwhile.") +
      " Estimated saving: at most the GPU idle after the copies: the host's work after a copy may need its data, "
      "which the trace does not show.";
  f.ranges = b.ev.sync_memcpy.ranges();
}

}  // namespace gpuscope::detail::rules
