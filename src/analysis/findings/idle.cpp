// Why the GPU is idle: utilization, busy-but-not-working, idle gaps and what
// ended them, input, host time around steps, launches, host synchronizations.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "analysis/findings/rules.h"

namespace gpuscope::detail::rules {

namespace {

// The idle rules need a span to be idle in.
bool has_span(const Totals& t) { return t.devices > 0 && t.span > 0; }

// Whether the idle rules below fire (their conditions, shared with
// low-utilization, which leaves out the idle time they count).
bool input_bound_fires(const Builder& b) {
  if (!has_span(b.t) || !b.ev.has_input_ranges || b.ev.input_wait.total() <= 0) return false;
  const bool by_step = b.p.steps.total_ns > 0;
  const double share =
      by_step ? ratio(b.p.steps.input_wait_ns, b.p.steps.total_ns) : ratio(b.ev.input_wait.total(), b.t.span);
  return share >= b.opt.thresholds.input_moderate;
}
// GPU idle after host synchronizations proper, and after blocking copies.
TimeNs sync_idle_ns(const Profile& p) { return p.syncs.gpu_idle_after_ns - p.syncs.gpu_idle_after_copies_ns; }
bool host_sync_fires(const Builder& b) {
  return has_span(b.t) && b.p.syncs.count > 0 && ratio(sync_idle_ns(b.p), b.t.span) >= b.opt.thresholds.host_sync_share;
}
}  // namespace

// sync-memcpy rates blocking copies by the host time blocked plus the GPU idle after them.
bool launch_bound_fires(const Builder& b) {
  const LaunchStats& l = b.p.launches;
  return has_span(b.t) && l.launches > 0 &&
         ratio(b.ev.launch_gaps.total(), b.t.span) >= b.opt.thresholds.launch_host_wait_share;
}

double blocking_copy_share(const Builder& b) {
  return ratio(b.p.memcpys.synchronous_ns + b.p.syncs.gpu_idle_after_copies_ns, b.t.span);
}
bool sync_memcpy_fires(const Builder& b) {
  return has_span(b.t) && b.p.memcpys.synchronous > 0 && blocking_copy_share(b) >= b.opt.thresholds.sync_memcpy_share;
}

namespace {

// The idle gaps' time that gpu-idle-gaps counts itself: what neither input
// wait nor a host synchronization explains (warm-up, late launches, queued work).
TimeNs idle_gaps_own_ns(const Evidence& ev) {
  return std::max<TimeNs>(
      0, ev.idle_gaps.total() - std::min(ev.idle_gaps_explained_ns, ev.idle_gaps.total()) - ev.idle_gaps_unrecorded_ns);
}
// The gaps' time but those before a stream's first recorded op (whether the
// GPU idled in them, the trace cannot tell).
TimeNs idle_gaps_known_ns(const Evidence& ev) {
  return std::max<TimeNs>(0, ev.idle_gaps.total() - ev.idle_gaps_unrecorded_ns);
}
// The gaps take the threshold's share of the run, and not only as input wait
// or idle after synchronizations (which input-bound, host-sync and
// sync-memcpy report).
bool idle_gaps_fire(const Builder& b) {
  const double th = b.opt.thresholds.idle_gaps_share;
  return has_span(b.t) && b.ev.idle_gaps.count() > 0 && ratio(idle_gaps_known_ns(b.ev), b.t.span) >= th &&
         ratio(idle_gaps_own_ns(b.ev), b.t.span) >= th;
}

// The idle time (summed over devices) the other idle findings count, each
// only if it fires, so that no idle time is reported twice.
struct IdleClaims {
  TimeNs input = 0, sync = 0, copies = 0, launch = 0, gaps = 0;
  TimeNs total() const { return input + sync + copies + launch + gaps; }
};
IdleClaims idle_claims(const Builder& b) {
  IdleClaims c;
  if (input_bound_fires(b)) c.input = b.ev.input_wait.total();
  if (host_sync_fires(b)) c.sync = sync_idle_ns(b.p);
  if (sync_memcpy_fires(b)) c.copies = b.p.syncs.gpu_idle_after_copies_ns;
  if (launch_bound_fires(b)) c.launch = b.ev.launch_gaps.total();
  if (idle_gaps_fire(b)) c.gaps = idle_gaps_own_ns(b.ev);
  return c;
}
}  // namespace

namespace {

// low-utilization's idle time by cause: the parts of "Where the idle time
// went" (charge_idle below) that no firing finding counts, largest first.
struct IdlePart {
  std::string what;
  TimeNs ns;
};
std::vector<IdlePart> unclaimed_parts(const Builder& b, TimeNs rest) {
  const Evidence& ev = b.ev;
  const bool gaps = idle_gaps_fire(b);
  std::vector<IdlePart> parts;
  auto add = [&](bool claimed, std::string what, TimeNs ns) {
    if (!claimed && ns > 0) parts.push_back({std::move(what), ns});
  };
  add(input_bound_fires(b), "input loading", ev.input_wait.total() - ev.input_wait_before_start_ns);
  add(host_sync_fires(b), "after host synchronizations", sync_idle_ns(b.p));
  add(sync_memcpy_fires(b), "after blocking copies", b.p.syncs.gpu_idle_after_copies_ns);
  add(pageable_fires(b), "the driver staging pageable copies", ev.staging_idle_ns);
  add(launch_bound_fires(b), "late launches", ev.launch_gaps.total());
  add(gaps, "late launches", ev.idle_gaps_launch_ns);
  add(gaps, "queued work or dependencies", ev.idle_gaps_queued_ns);
  add(gaps, "communication the trace did not record", ev.idle_gaps_comm_ns);
  add(gaps, "ops with no launch in the trace", ev.idle_gaps_unlaunched_ns);
  add(gaps, "warm-up", ev.idle_gaps_warmup_ns);
  // Merge the two late-launch parts, then what no part explains.
  std::vector<IdlePart> merged;
  TimeNs named = 0;
  for (const IdlePart& x : parts) {
    named += x.ns;
    auto same = std::find_if(merged.begin(), merged.end(), [&](const IdlePart& m) { return m.what == x.what; });
    if (same != merged.end())
      same->ns += x.ns;
    else
      merged.push_back(x);
  }
  // What no part names: gaps under a kernel switch with the next kernel
  // queued (the GPU's own time between kernels), and longer ones ended by
  // queued work or an op whose launch the trace does not link.
  const TimeNs other = std::max<TimeNs>(0, rest - named);
  const TimeNs tiny = std::min(other, b.t.kernel_wait);
  if (tiny > 0)
    merged.push_back({"gaps under " + dur(b.opt.consecutive_kernel_delay_ns) + " between queued kernels", tiny});
  if (other > tiny) merged.push_back({"short gaps ended by queued work or dependencies", other - tiny});
  std::stable_sort(merged.begin(), merged.end(), [](const IdlePart& a, const IdlePart& c) { return a.ns > c.ns; });
  return merged;
}

// The advice for low-utilization's idle time, by its largest cause: the
// trace says what ended each gap, so the advice follows it, never a guess.
std::string unclaimed_fix(const Profile& p, std::string_view largest, const std::string& saving) {
  if (largest == "late launches")
    return "The host does not keep the GPU fed: the CPU launches work later than the GPU could run it, in gaps "
           "shorter than the idle-gap rule's. " +
           for_framework(p,
                         "Profile the host side (py-spy, the trace's CPU ops) for Python overhead between launches; "
                         "a larger batch per GPU also gives the GPU more work per launch.",
                         "Profile the host side (the trace's CPU ops, py-spy) for Python and op overhead between "
                         "launches, or compile the step (tf.function(jit_compile=True)); a larger batch per GPU also "
                         "gives the GPU more work per launch.",
                         "Look at what the host does between launches (a sampling profiler, the trace's CPU ranges) "
                         "and launch the next kernels before it, or give each kernel more work.") +
           saving;
  if (largest == "input loading")
    return "Most of it waits for input, each wait under input-bound's threshold: " +
           for_framework(p,
                         "prefetch the next batch (DataLoader num_workers, pin_memory=True, a copy stream) so it is "
                         "ready when the step starts.",
                         "prefetch the next batch (dataset.prefetch, prefetch_to_device) so it is ready when the "
                         "step starts.",
                         "load and copy the next input while the current one is computed (a loader thread, pinned "
                         "buffers, cudaMemcpyAsync on a copy stream).") +
           saving;
  if (largest == "after host synchronizations" || largest == "after blocking copies")
    return "Most of it follows host synchronizations or blocking copies, each under its own finding's threshold: " +
           for_framework(p,
                         "read results back every N steps instead of every step, and copy with non_blocking=True "
                         "from pinned memory.",
                         "read results back (.numpy(), printing tensors) every N steps instead of every step.",
                         "synchronize only where the host needs the result, and copy asynchronously "
                         "(cudaMemcpyAsync from pinned memory) instead of with blocking calls.") +
           saving;
  if (largest == "the driver staging pageable copies")
    return "Most of it waits for the driver to stage host-to-device copies from pageable memory, under "
           "pageable-memcpy's threshold: copy from pinned memory (cudaMallocHost, cudaHostRegister; "
           "pin_memory=True in PyTorch), where a copy starts at its call." +
           saving;
  if (largest.starts_with("gaps under "))
    return "Most of it is the GPU's own switch from one kernel to the next, already queued: many short kernels in a "
           "row. Fewer, larger kernels leave fewer switches: fuse elementwise chains (" +
           fuser(p) + "), give each kernel more work (a larger batch)." + saving;
  if (largest == "communication the trace did not record")
    return "Most of it ends at ops held after their launch in host ranges named for communication that launched "
           "no communication kernel the trace records: most likely the collective the trace did not record. Record "
           "it (an unfiltered, unsampled trace) before acting on it; see the findings on communication." +
           saving;
  if (largest == "warm-up")
    return "Most of it is warm-up (first calls: module loading, allocation, autotuning): profile steady-state "
           "steps before acting on it. No saving is claimed for warm-up.";
  return "Most of it ends with work held by a dependency (queued before the gap, or started long after its launch "
         "returned): the GPU waited for something other than the host (an event "
         "from another stream, a copy, a collective's peer, another process); the trace does not say which. Look "
         "at what the next op on each stream waits on (its stream's previous work, an event, a peer), then overlap "
         "it or wait on finer-grained events." +
         saving;
}

// Whether the fix given for a part of low-utilization's idle time removes
// that part: input loading (prefetch), the idle after synchronizations and
// blocking copies (read back less often), the driver's staging (pin) and late
// launches (the host's own work between launches) end where their fix is
// made. Work held by a dependency the trace does not show, the GPU's own
// switch between queued kernels, unrecorded communication, ops with no launch
// and warm-up have no fix here whose effect the trace can size.
bool removed_by_its_fix(std::string_view what) {
  return what == "input loading" || what == "after host synchronizations" || what == "after blocking copies" ||
         what == "the driver staging pageable copies" || what == "late launches";
}
// Why a part's time is not claimed as a saving.
std::string unclaimed_why(std::string_view what) {
  if (what == "short gaps ended by queued work or dependencies" || what == "queued work or dependencies")
    return "a dependency the trace does not show";
  if (what.starts_with("gaps under ")) return "fewer, larger kernels remove an unknown share";
  if (what == "communication the trace did not record") return "the communication's, not the idle time's";
  if (what == "ops with no launch in the trace") return "a late launch or a dependency: unknown";
  if (what == "warm-up") return "a one-time cost";
  return "under its own finding's threshold; the advice here is about the largest part";
}

// low-utilization's saving: only the part its fix (the largest part's)
// removes; the rest, and all of it when that fix's effect is unknown, is
// said as not claimed, with why. Never the whole rest as a proxy.
struct UnclaimedSaving {
  TimeNs ns = 0;         // summed over GPUs
  std::string note;      // why the rest is not claimed
  std::string sentence;  // the fix's "Estimated saving" sentence
};
UnclaimedSaving unclaimed_saving(const Totals& t, const std::vector<IdlePart>& parts) {
  UnclaimedSaving u;
  if (parts.empty()) return u;
  const bool known = removed_by_its_fix(parts.front().what);
  if (known) u.ns = parts.front().ns;
  std::string rest;
  for (std::size_t i = known ? 1 : 0; i < parts.size(); ++i)
    rest += (rest.empty() ? "" : "; ") + dur(t.per_device(parts[i].ns)) +
            (parts[i].what.starts_with("after ") ? " idle " : " of ") + parts[i].what + " (" +
            unclaimed_why(parts[i].what) + ")";
  if (known) {
    u.sentence = " Estimated saving: the " + parts.front().what + " part (" + dur(t.per_device(u.ns)) +
                 "), which the fix removes" + (rest.empty() ? "." : "; what the rest saves is unknown.");
    if (!rest.empty()) u.note = "its " + parts.front().what + " part; not claimed: " + rest;
  } else {
    u.sentence = " What it saves is unknown: the trace does not show what ended most of it, so no saving is claimed.";
    u.note = "what fixing it saves is unknown, so none is claimed: " + rest;
  }
  return u;
}
}  // namespace

void low_utilization(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!has_span(t)) return;
  const double util = ratio(t.busy, t.span);
  if (util >= th.low_utilization) return;
  // Gaps before a stream's first recorded op may have been busy: judged
  // without them.
  const TimeNs unknown = std::min(b.ev.idle_gaps_unrecorded_ns, t.idle);
  if (unknown > 0 && ratio(t.busy, t.span - unknown) >= th.low_utilization) return;
  // The idle time no other finding counts: reported here only when it matters.
  const IdleClaims c = idle_claims(b);
  const TimeNs rest = std::max<TimeNs>(0, t.idle - unknown - c.total());
  if (ratio(rest, t.span) < th.low_utilization_rest_share) return;
  const std::vector<IdlePart> parts = unclaimed_parts(b, rest);
  const UnclaimedSaving saving = unclaimed_saving(t, parts);
  Finding& f = b.add(util < 0.6 * th.low_utilization ? Severity::critical : Severity::warning, util, th.low_utilization,
                     t.per_device(saving.ns));
  f.saving_note = saving.note;
  f.share = ratio(rest, t.span);
  std::string range =
      t.devices > 1 ? " (" + pct(t.min_util) + "–" + pct(t.max_util) + " across " + std::to_string(t.devices) + " GPUs)"
                    : "";
  f.title = "GPU utilization is " + pct1(util) + range + ": " + device_words(t) + " idle " + pct(1 - util) +
            " of the time (" + dur(t.per_device(t.idle)) + "), " + dur(t.per_device(rest)) +
            " of it not counted by another finding";
  f.evidence = "Busy (any kernel, copy or fill running) " + dur(t.per_device(t.busy)) + " of a " +
               dur(t.per_device(t.span)) + " span, vs a " + pct(th.low_utilization) +
               " threshold. Idle time by what ended each gap: host wait (the next op was not launched yet) " +
               pct(ratio(t.host_wait, t.idle)) + ", kernel wait (gaps < " + dur(b.opt.consecutive_kernel_delay_ns) +
               ") " + pct(ratio(t.kernel_wait, t.idle)) + ", other " + pct(ratio(t.other_idle, t.idle)) + ".";
  std::string counted;
  auto part = [&](TimeNs ns, const char* id) {
    if (ns <= 0) return;
    counted += (counted.empty() ? "" : ", ") + std::string(id) + " " + dur(t.per_device(ns));
  };
  part(c.gaps, "gpu-idle-gaps");
  part(c.input, "input-bound");
  part(c.sync, "host-sync");
  part(c.copies, "sync-memcpy");
  part(c.launch, "launch-bound");
  if (!counted.empty())
    f.evidence += " Counted by other findings (not here): " + counted + "; the rest, " + dur(t.per_device(rest)) +
                  " (" + pct1(ratio(rest, t.span)) + " of the run, threshold " + pct1(th.low_utilization_rest_share) +
                  "), is this finding's.";
  std::string of_rest;
  for (const IdlePart& x : parts) of_rest += (of_rest.empty() ? "" : ", ") + x.what + " " + dur(t.per_device(x.ns));
  if (!of_rest.empty()) f.evidence += " That rest by cause: " + of_rest + ".";
  f.recommendation = unclaimed_fix(b.p, parts.empty() ? "" : parts.front().what, saving.sentence);
  f.ranges = b.ev.idle_gaps.ranges();
}

// Busy but not working: the GPU is busy most of its window, yet its SMs are
// mostly idle in the samples taken while kernels ran (hw.sm_active). The work
// is too small for the GPU: the measured version of "low compute utilization".
void busy_not_working(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  for (const DeviceSummary& d : b.p.devices) {
    const DeviceHw& hw = d.hw;
    if (hw.busy_samples < th.hw_min_samples || !hw.busy_sm_active || d.utilization < th.hw_busy_utilization) continue;
    const double low = ratio(static_cast<double>(hw.low_busy_samples), static_cast<double>(hw.busy_samples));
    if (low < th.hw_not_working_share) continue;
    // Upper bound: the busy time the idle SMs leave, were the work spread over them.
    const TimeNs saving = static_cast<TimeNs>(static_cast<double>(d.busy_ns) * low * (1 - *hw.busy_sm_active) / 2);
    Finding& f = b.add(low >= 0.8 ? Severity::critical : Severity::warning, low, th.hw_not_working_share, saving);
    f.share = low;
    f.device = d.id;
    f.title = "Busy but not working: GPU " + std::to_string(d.id) + " is busy " + pct(d.utilization) +
              " of the time, but its SMs were active only " + pct(*hw.busy_sm_active) +
              " while kernels ran (measured, " + count(hw.busy_samples) + " samples)";
    std::string kernels;
    for (const std::string& k :
         format::short_kernel_names(std::vector<std::string_view>(hw.low_kernels.begin(), hw.low_kernels.end())))
      kernels += (kernels.empty() ? "" : "; ") + k;
    f.evidence =
        "Measured by the GPU's counters (hw.sm_active, CUPTI PM sampling), not derived from when kernels ran: " +
        count(hw.low_busy_samples) + " of " + count(hw.busy_samples) + " samples taken while a kernel ran (" +
        pct(low) + ") show fewer than " + pct(th.hw_low_sm_active) + " of SM cycles active, vs a threshold of " +
        pct(th.hw_not_working_share) + " of the samples. Kernels running during those samples, most first: " +
        (kernels.empty() ? std::string("none recorded") : kernels) +
        ". The saving is an upper bound (the idle SMs' share of the busy time, halved).";
    f.recommendation =
        "The kernels are too small for the GPU: grids of a few blocks, a small batch per GPU, or chains of tiny "
        "launches. Give each kernel more work (a larger batch per GPU, fewer GPUs for this model size), fuse the small "
        "kernels (" +
        fuser(b.p) +
        "), run independent small kernels on separate streams, or pick library "
        "algorithms that split the work across more blocks (split-K GEMMs).";
    f.kernels = hw.low_kernels;
  }
}

namespace {

// What ended the gaps, by cause; the one with the most time decides the advice.
enum Cause { kWarmup, kLaunch, kQueued, kSync, kInput, kUnlaunched, kComm, kStaging };
// The title's words for the cause with the most time, by Cause.
constexpr const char* kGapCauseWords[] = {"warm-up (first calls and set-up)",
                                          "ended by late host launches",
                                          "ended by work held by a dependency (launched in time, started late)",
                                          "after host synchronizations and blocking copies",
                                          "waiting for input",
                                          "ended by ops with no launch in the trace (cause unknown)",
                                          "held at communication the trace likely did not record",
                                          "waiting for the driver to stage pageable copies"};

// Where the launching thread was during the gaps late launches ended, most
// time first (at most five; "" if the trace recorded nothing there).
std::string host_in_late_gaps(const Builder& b, const std::vector<std::pair<std::string, TimeNs>>& by_name) {
  std::vector<std::pair<std::string, TimeNs>> where;
  for (const auto& x : by_name)
    if (x.second > 0) where.push_back(x);
  std::sort(where.begin(), where.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string out;
  for (std::size_t i = 0; i < where.size() && i < 5; ++i)
    out += (i ? "; " : "") + (where[i].first.empty() ? std::string("no recorded op or call") : where[i].first) + " " +
           dur(b.t.per_device(where[i].second));
  return out;
}

// The same time by the innermost range the program named around it, where
// that adds to the innermost list (not ranges that were leaves there).
std::string named_ranges_words(const Builder& b) {
  const Evidence& ev = b.ev;
  const bool adds = std::any_of(ev.idle_gaps_host_named.begin(), ev.idle_gaps_host_named.end(), [&](const auto& x) {
    return x.second > 0 && std::find(ev.idle_gaps_host.begin(), ev.idle_gaps_host.end(), x) == ev.idle_gaps_host.end();
  });
  const std::string named = host_in_late_gaps(b, ev.idle_gaps_host_named);
  return adds && !named.empty() ? " By the innermost range the program named around it: " + named + "." : "";
}

// Where the launching thread was during the late-launch gaps is known when
// recorded ops or calls cover at least half the gaps' time; else the advice
// names the usual suspects, and the saving is an upper bound.
bool late_host_known(const Builder& b) {
  TimeNs named = 0, all = 0;
  for (const auto& [name, ns] : b.ev.idle_gaps_host) all += ns, named += name.empty() ? 0 : ns;
  return all > 0 && 2 * named >= all;
}

// DDP's buffer broadcast, where it holds a fifth of the late-launch gaps:
// under DDP (broadcast_buffers=True, the default) every forward first sends
// rank 0's buffers (batch norm's running statistics) to all ranks, flattened
// into one tensor and unflattened back (nccl:broadcast between the two).
std::string ddp_buffer_broadcast(const Builder& b) {
  if (b.p.workload.data_parallel != "ddp") return {};
  bool broadcast = false;
  for (const OpRow& r : b.p.ops) broadcast = broadcast || r.name == "nccl:broadcast" || r.name == "c10d::broadcast_";
  TimeNs flat = 0, all = 0;
  for (const auto& [name, ns] : b.ev.idle_gaps_host_ops) {
    all += ns;
    if (name == "aten::flatten_dense_tensors" || name == "aten::unflatten_dense_tensors") flat += ns;
  }
  if (!broadcast || all == 0 || 5 * flat < all) return {};
  return "Of those gaps, " + dur(b.t.per_device(flat)) +
         " were spent flattening and unflattening tensors around a broadcast: DDP's broadcast of the module's "
         "buffers (batch norm's running statistics) from rank 0 at the start of every forward "
         "(broadcast_buffers=True, the default). Where the buffers need not match across ranks every step, "
         "DistributedDataParallel(model, broadcast_buffers=False) removes it (SyncBatchNorm keeps the statistics "
         "in step instead).";
}

// What the gaps ended by held work waited for: a stream wait where the
// launching thread called one just before, else what the trace cannot show
// (a collective's peer only where the trace has communication).
std::string queued_advice(const Builder& b) {
  const std::string held =
      "The next op was queued before the GPU ran it (before the gap began, or its launch returned long before it "
      "started): ";
  // Most of the held time ended by a graph's replayed ops: the wait is the graph's.
  if (2 * b.ev.held_graph_ns >= b.ev.idle_gaps_queued_ns && b.ev.held_graph_ns > 0)
    return held + "of the gaps' held time, " + dur(b.t.per_device(b.ev.held_graph_ns)) +
           " ended at ops a CUDA graph replayed, launched long before they ran: the wait is at the graph's head or "
           "between its nodes (a dependency captured into it: an event wait, a collective, a host node, or a node "
           "the recording does not show). Look at the graph's nodes and their edges (cudaGraphDebugDotPrint, or "
           "the capture's eager run), then overlap what they wait for or split the graph there.";
  // Most of the held time behind a stream wait the launching thread made.
  if (!b.ev.held_wait_call.empty() && 2 * b.ev.held_wait_ns >= b.ev.idle_gaps_queued_ns)
    return held + "of the gaps' held time, " + dur(b.t.per_device(b.ev.held_wait_ns)) + " waited behind a " +
           b.ev.held_wait_call +
           " that the launching thread called since its previous launch: the stream waited for an event (recorded "
           "on another stream, or by another process), and no GPU op the trace records ran on that GPU meanwhile, "
           "so what the event waited for (work outside the recording, another device or process) is unknown from "
           "this trace. Record the producing stream's work (an earlier or longer capture window), then overlap it "
           "or wait on finer-grained events.";
  return held + "the GPU waited for a dependency the trace does not show (an event from another stream or process" +
         (b.t.comm > 0 ? ", a collective's peer" : "") +
         ", a graph launch). Find what the waiting stream depends on and overlap it, or remove the wait "
         "(cudaStreamWaitEvent on finer-grained events).";
}

// What the gaps held at communication the trace did not record waited for:
// the collective of the range their ops were launched in, dropped from the
// trace; not a dependency to split into finer-grained events.
std::string comm_gap_advice(const Builder& b) {
  const Evidence& ev = b.ev;
  return "The ops that ended them were launched in host ranges named for communication (" + ev.comm_gap_range +
         " held the largest, " + dur(ev.comm_gap_largest_ns) +
         ") and held after their launch with the whole GPU idle, while the trace records no communication kernel "
         "for those ranges" +
         (b.p.workload.host_filtered.empty() ? std::string()
                                             : " (the trace was filtered to its launches: see Recording)") +
         ": most likely the GPU waited for that collective (its transfer or its peers), communication the trace did "
         "not record, not a dependency that finer-grained events would remove. See the findings on communication; "
         "profile without filtering or sampling to record it.";
}

// Whether a host frame is torch.compile's generated wrapper: Inductor's
// compiled module (written under its cache directory, torchinductor_<user>),
// its output-code runner, or the input checks the module calls.
bool inductor_wrapper_frame(std::string_view name) {
  return name.find("torchinductor_") != std::string_view::npos ||
         name.find("torch/_inductor/") != std::string_view::npos ||
         name.find("assert_size_stride") != std::string_view::npos;
}

// Of the host time in the gaps late launches ended (by innermost name), the
// part in names `of` accepts, the whole, and the name with the most of it.
struct HostShare {
  TimeNs in = 0, all = 0;
  std::string top;
};
template <class Pred>
HostShare host_share(const Builder& b, Pred&& of) {
  HostShare s;
  TimeNs top_ns = 0;
  for (const auto& [name, ns] : b.ev.idle_gaps_host) {
    s.all += ns;
    if (!of(name)) continue;
    s.in += ns;
    if (ns > top_ns) s.top = name, top_ns = ns;
  }
  return s;
}

// torch.compile's generated wrapper, where it holds half of the late-launch
// gaps' host time: the Python that runs at each call of a compiled graph
// before and between its kernels (input size and stride checks, output
// allocation, one launch per kernel). CUDA graphs replay the kernels without
// running it (mode="reduce-overhead"); Inductor's size_asserts switch drops
// the checks.
std::string inductor_wrapper_in_gaps(const Builder& b) {
  const HostShare s = host_share(b, inductor_wrapper_frame);
  if (s.all == 0 || 2 * s.in < s.all) return {};
  return "Of those gaps, " + dur(b.t.per_device(s.in)) + " were spent in torch.compile's generated wrapper (" + s.top +
         " the most): the Python Inductor runs at each call of a compiled graph, before and between its kernels "
         "(checking its inputs' sizes and strides, allocating outputs, launching one kernel at a time). " +
         graph_words(b.p) +
         "s replay the graph's kernels without running it (torch.compile(mode=\"reduce-overhead\")), and "
         "torch._inductor.config.size_asserts=False drops the input checks; under the Python tracer "
         "(with_stack=True) every Python call it makes is traced too, so profile without it before sizing this.";
}

// The device allocator's calls, where they hold a fifth of the late-launch
// gaps: a caching allocator (PyTorch's, TensorFlow's BFC) calls cudaMalloc
// in a steady loop only when its cache was emptied or new sizes appear.
std::string allocator_in_gaps(const Builder& b) {
  const HostShare s = host_share(b, [](const std::string& name) { return is_allocator_call(name); });
  const TimeNs alloc = s.in;
  if (s.all == 0 || 5 * alloc < s.all) return {};
  // The program's own range that holds most of those calls (a benchmark's
  // timed region, a phase it named), where one holds half of them or more.
  std::string where;
  for (const auto& [name, ns] : b.ev.idle_gaps_allocator_named)
    if (2 * ns >= alloc) where = ", " + dur(b.t.per_device(ns)) + " of them inside the program's range " + name;
  const std::string spent = "Of those gaps, " + dur(b.t.per_device(alloc)) +
                            " were spent in the device allocator's own calls (cudaMalloc, cudaFree)" + where;
  // The program empties the cache itself (a benchmark's cold-cache set-up):
  // the iteration after it allocates anew by design.
  for (const OpRow& r : b.p.op_names)
    if (is_cache_flush_name(r.name))
      return spent + ": the program empties the caches itself (" + r.name +
             "), so the iteration after it allocates anew: a cold-cache measurement by design, not a cost of a loop "
             "that keeps its allocator's cache. Measure warm iterations (without the flush) to see the steady state.";
  // A program of its own allocates in its loop; a framework's caching
  // allocator only where its cache was emptied or new sizes appear.
  if (b.p.workload.framework == "unknown")
    return spent +
           ": the program allocates and frees device memory between its launches. Allocate the buffers once and "
           "reuse them, or use the stream-ordered allocator (cudaMallocAsync with a memory pool).";
  return spent + ": a caching allocator makes them in a steady loop only where its cache was emptied" +
         for_framework(b.p, " (torch.cuda.empty_cache() between iterations, or a retry after an out-of-memory error)",
                       " (a new session, or a memory limit reached)", "") +
         " or new tensor sizes appear: keep the cache warm between iterations, keep shapes stable, and time "
         "iterations after the first.";
}

// The CUDA (HIP) graph captures among the warm-up gaps, said as what they
// are: the host recording launches into a graph, the GPU running none.
std::string graph_word(const Profile& p) { return for_vendor(p, "CUDA graph", "HIP graph", "CUDA (HIP) graph"); }
std::string capture_words(const Builder& b) {
  const Evidence& ev = b.ev;
  if (ev.idle_gaps_capture == 0) return "";
  const bool one = ev.idle_gaps_capture == 1;
  return " Of the warm-up, " + count(ev.idle_gaps_capture, "gap", "gaps") + (one ? " lies" : " lie") + " mostly in " +
         (one ? "a " : "") + graph_word(b.p) + (one ? " capture (" : " captures (") +
         for_vendor(b.p, "cudaStreamBeginCapture to cudaStreamEndCapture",
                    "hipStreamBeginCapture to hipStreamEndCapture", "BeginCapture to EndCapture") +
         ", " + dur(b.t.per_device(ev.idle_gaps_capture_ns)) +
         " of the gaps' time): the host recorded launches into a graph, which run nothing until the graph is "
         "launched, a one-time set-up.";
}
// Whether the graph captures hold at least half the warm-up gaps' time.
bool capture_mostly(const Builder& b) {
  return b.ev.idle_gaps_capture_ns > 0 && 2 * b.ev.idle_gaps_capture_ns >= b.ev.idle_gaps_warmup_ns;
}

// The advice for the gaps' largest cause, then a line for each other fixable
// cause (late launches, queued work) that holds a tenth of them or more.
// The advice for gaps mostly warm-up: a graph capture (with its replay where
// the trace holds it), first calls before the first step, or first calls in a
// trace without steps.
std::string warm_up_advice(Builder& b, bool stepped) {
  if (capture_mostly(b) && b.p.workload.replay_kernels > 0) {
    // The trace holds the capture and the graph's replay: the gap is the
    // capture, and the replay is what a later call runs.
    const WorkloadKind& w = b.p.workload;
    return "Most of the idle time is the " + graph_word(b.p) +
           " capture: the host records the launches into a graph and the GPU runs none of them until the "
           "graph is launched. The replay after it (" +
           count(w.replay_launches, "graph launch", "graph launches") + ", " + count(w.replay_kernels) + " kernels, " +
           dur(w.replay_kernel_ns) + " of kernel time, " + w.replay_top +
           ") is what each later call runs: profile a later call, the same one again (a second generate() or "
           "forward), which replays the graph without capturing it. No saving is claimed for warm-up.";
  }
  return std::string(capture_mostly(b)
                         ? "Most of the idle time is the " + graph_word(b.p) +
                               " capture: the host records the launches into a graph and the GPU runs none "
                               "of them until the graph is launched, once; replays skip it. "
                     : stepped ? "Most of the idle time is warm-up: first calls that load modules, allocate "
                                 "memory or autotune (cudnn.benchmark, cuBLAS heuristics) before the first "
                                 "step. "
                               : "Most of the idle time ends at a kernel's first call: warm-up (loading its "
                                 "module, allocating memory, autotuning), which a trace without steps cannot "
                                 "tell from the program's own pauses. ") +
         for_framework(b.p,
                       "Profile steady-state steps instead: torch.profiler.schedule(wait=1, warmup=2, "
                       "active=3), or run a few iterations before the capture starts.",
                       "Profile steady-state steps instead: start the profiler after a few steps "
                       "(tf.profiler.experimental.start later, or the TensorBoard callback's profile_batch).",
                       "Profile steady-state work instead: run a few iterations before the capture starts.") +
         " No saving is claimed for warm-up.";
}

std::string gap_advice(Builder& b, Cause top, TimeNs launch, TimeNs queued, TimeNs unlaunched, bool stepped) {
  const Totals& t = b.t;
  const TimeNs comm = b.ev.idle_gaps_comm_ns;
  const TimeNs fixable = launch + queued + unlaunched + comm;
  const bool host_known = late_host_known(b);
  // A training or serving loop (a framework's, or one the trace shows by its
  // backward or optimizer), or a program of its own (an HPC code with MPI
  // between its GPU phases): the words of the advice differ.
  const bool framework = b.p.workload.framework != "unknown" || b.p.workload.phase != "unknown";
  const char* const kLaunchAdvice =
      !b.p.workload.host_filtered.empty()
          ? "The next op was launched late, and the trace keeps only the launch calls (see Recording): what the "
            "launching thread did meanwhile, syncs and waits included, was filtered out, so the cause is unknown. "
            "Profile again without filtering the trace (Python stacks: with_stack=True, or NVTX ranges around the "
            "loop's phases) to see it."
      : host_known ? "The next op was launched late: the host was busy with the work the evidence names (where the "
                     "launching thread was during these gaps). Make that work cheaper, or do it while the GPU still "
                     "has work queued, so that the next launch comes before the GPU runs dry."
      : framework  ? "The next op was launched late, and the trace records nothing the launching thread did for most "
                     "of these gaps: what the host did is unknown. Record it first (Python stacks: with_stack=True, "
                     "or NVTX ranges around the loop's phases; the viewer jumps to the gaps); in a training loop the "
                     "usual causes are logging, checkpointing, evaluation and Python overhead, moved off the "
                     "critical path by asynchronous checkpointing and metrics read every N steps."
                   : "The next kernel was launched late: the host worked between the GPU's phases (the viewer jumps "
                     "to the gaps; host samples, where recorded, say where). Give the GPU work to do meanwhile: "
                     "launch the next kernels (asynchronously, on streams) before the host computes or communicates, "
                     "use non-blocking MPI and asynchronous copies, or move that host computation to the GPU.";
  const std::string kQueuedAdvice = queued_advice(b);
  static constexpr const char* kUnlaunchedAdvice =
      "Their launch records were not kept (a sampled or filtered trace, or work queued before the capture "
      "began), so whether the GPU waited for the host's launch or for a dependency the trace cannot tell. "
      "Capture with the CUDA runtime calls (torch.profiler's CUDA activity, gpuscope capture) to find out.";
  std::string advice;
  switch (top) {
    case kUnlaunched:
      advice = std::string("The ops that ended most of these gaps have no launch in the trace. ") + kUnlaunchedAdvice;
      break;
    case kWarmup: advice = warm_up_advice(b, stepped); break;
    case kLaunch: advice = kLaunchAdvice; break;
    case kQueued: advice = kQueuedAdvice; break;
    case kComm: advice = comm_gap_advice(b); break;
    case kSync:
      advice =
          "The gaps follow host synchronizations and blocking copies: see the host-sync and sync-memcpy findings "
          "(their fixes remove them).";
      break;
    case kInput: advice = "The gaps are input wait: see the input-bound finding (its fix removes them)."; break;
    case kStaging:
      advice =
          "The gaps wait for the driver to stage host-to-device copies from pageable memory: see the "
          "pageable-memcpy finding (pinned memory removes them).";
      break;
  }
  // The fixable gaps have two causes with two fixes: each one that holds a
  // tenth of them or more gets its own advice, with its time.
  auto lower_first = [](std::string text) {
    text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    return text;
  };
  std::string ddp = ddp_buffer_broadcast(b);  // and the allocator's calls
  if (const std::string alloc = allocator_in_gaps(b); !alloc.empty()) ddp += (ddp.empty() ? "" : " ") + alloc;
  if (const std::string wrapper = inductor_wrapper_in_gaps(b); !wrapper.empty())
    ddp += (ddp.empty() ? "" : " ") + wrapper;
  if (top == kLaunch && !ddp.empty()) advice += " " + ddp;
  if (top != kLaunch && launch > 0 && launch * 10 >= fixable)
    advice += " Gaps ended by late launches (" + dur(t.per_device(launch)) + "): " + lower_first(kLaunchAdvice) +
              (ddp.empty() ? "" : " " + ddp);
  if (top != kQueued && queued > 0 && queued * 10 >= fixable)
    advice +=
        " Gaps ended by work held by a dependency (" + dur(t.per_device(queued)) + "): " + lower_first(kQueuedAdvice);
  if (top != kComm && comm > 0 && comm * 10 >= fixable)
    advice += " Gaps held at communication the trace did not record (" + dur(t.per_device(comm)) +
              "): " + lower_first(comm_gap_advice(b));
  if (top != kUnlaunched && unlaunched > 0 && unlaunched * 10 >= fixable)
    advice += " Gaps ended by ops with no launch in the trace (" + dur(t.per_device(unlaunched)) +
              "): " + lower_first(kUnlaunchedAdvice);  // "their launch records were not kept …"
  return advice;
}

// Why the gaps ended by held work and by ops with no launch are no saving.
std::string unknown_gaps_note(const Totals& t, TimeNs queued, TimeNs unlaunched, TimeNs comm) {
  std::string note;
  if (queued > 0)
    note = "the " + dur(t.per_device(queued)) +
           " of gaps ended by work held by a dependency are not counted: the trace does not show what that work "
           "waited for, so what removing the wait saves is unknown";
  if (unlaunched > 0)
    note += note.empty() ? "the " + dur(t.per_device(unlaunched)) +
                               " of gaps ended by ops with no launch in the trace are not counted: what they waited "
                               "for (their launch or a dependency) is unknown"
                         : ", nor the " + dur(t.per_device(unlaunched)) + " ended by ops with no launch in the trace";
  if (comm > 0)
    note += (note.empty() ? "the " : ", nor the ") + dur(t.per_device(comm)) +
            " held at communication the trace did not record (the communication's, not the host's)";
  return note;
}

// The gaps before a stream's first recorded op, left out of the finding's
// figures; empty if none.
std::string unrecorded_words(const Builder& b) {
  const Evidence& ev = b.ev;
  if (ev.idle_gaps_unrecorded_ns <= 0) return {};
  return " Not counted: " + dur(b.t.per_device(ev.idle_gaps_unrecorded_ns)) + " of " +
         count(ev.unrecorded_gaps, "gap", "gaps") +
         " ended by a stream's first op in the trace, queued before the gap (the stream may have run work queued "
         "before the recording began: whether the GPU idled, the trace cannot tell).";
}

// The gaps held at communication the trace did not record, for the
// evidence; empty if none.
std::string comm_gap_words(const Builder& b) {
  const Evidence& ev = b.ev;
  if (ev.idle_gaps_comm_ns <= 0) return {};
  return ", work held at communication the trace likely did not record " + dur(b.t.per_device(ev.idle_gaps_comm_ns)) +
         " (" + count(ev.comm_gaps, "gap", "gaps") +
         " ended by ops launched in host ranges named for communication, such as " + ev.comm_gap_range +
         ", for which the trace records no communication kernel)";
}

// What counts as warm-up, for the evidence.
std::string warm_up_words(const Profile& p, bool stepped) {
  return std::string(" ended by the first call of a kernel or of the framework op that launched it") +
         (stepped ? " before the first step ended" : ", where with no steps in the trace any first call counts") +
         ", or by a launch the host made after set-up calls such as creating streams or handles and loading "
         "modules, inside a range the program named warm-up or for emptying caches, inside an op's first call that "
         "took ten times its "
         "slowest later call or more, or while the host captured a " +
         std::string(graph_word_of(p.devices)) + "), a late host launch ";
}

}  // namespace

// The gaps' parts other findings count (their fixes remove them).
std::string explained_words(const Totals& t, TimeNs sync, TimeNs staging, TimeNs input) {
  return "; GPU idle after host synchronizations or blocking copies " + dur(t.per_device(sync)) +
         (staging > 0 ? ", while the driver staged pageable copies " + dur(t.per_device(staging)) + "," : "") +
         " and input wait " + dur(t.per_device(input)) + " are the host-sync, sync-memcpy" +
         (staging > 0 ? ", pageable-memcpy" : "") + " and input-bound findings' (not counted here).";
}

namespace {
// The device allocator's calls in late-launch gaps after the program empties
// the caches itself (a benchmark's cold-cache set-up, is_cache_flush_name):
// re-allocation by design, no saving of the program it measures.
TimeNs flushed_allocation(const Builder& b) {
  bool flushes = false;
  for (const OpRow& r : b.p.op_names) flushes = flushes || is_cache_flush_name(r.name);
  if (!flushes) return 0;
  TimeNs alloc = 0;
  for (const auto& [name, ns] : b.ev.idle_gaps_host)
    if (is_allocator_call(name)) alloc += ns;
  return alloc;
}

// The finding's saving, said: the gaps ended by late launches, less the
// re-allocation after the program's own cache flush.
std::string gap_saving_words(const Builder& b, TimeNs launch, TimeNs flushed, TimeNs queued, TimeNs unlaunched,
                             TimeNs comm) {
  const Totals& t = b.t;
  const TimeNs unknown = queued + unlaunched;
  const bool bound = launch > 0 && !late_host_known(b);
  return " Estimated saving: " + std::string(bound ? "at most " : "") + "the gaps ended by late launches (" +
         dur(t.per_device(launch)) + (bound ? ": an upper bound, since what the host did in them is unknown" : "") +
         ")" +
         (flushed > 0 ? " less the " + dur(t.per_device(flushed)) +
                            " of them in the allocator's calls, in a program that empties its caches itself"
                      : std::string()) +
         ", not warm-up, input wait or the idle after synchronizations" +
         (unknown > 0 ? "; the gaps ended by " +
                            std::string(queued > 0 && unlaunched > 0 ? "queued work or ops with no launch"
                                        : queued > 0                 ? "queued work"
                                                                     : "ops with no launch") +
                            " (" + dur(t.per_device(unknown)) +
                            ") save an unknown share of their time, by what their wait turns out to be"
                      : "") +
         (comm > 0 ? "; those held at communication the trace did not record (" + dur(t.per_device(comm)) +
                         ") are the communication's to hide"
                   : "") +
         ".";
}
}  // namespace

void gpu_idle_gaps(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!idle_gaps_fire(b)) return;
  const Evidence& ev = b.ev;
  const double gap_share = ratio(idle_gaps_known_ns(ev), t.span);
  // The gaps' parts: input wait and the idle after host synchronizations are
  // the input-bound and host-sync findings' (their fixes remove it); warm-up
  // is a one-time cost at the start of the capture (no fix of the program
  // saves it); the rest is this finding's saving.
  const TimeNs explained = std::min(ev.idle_gaps_explained_ns, ev.idle_gaps.total());
  const TimeNs sync = std::min(ev.idle_gaps_sync_ns, explained);
  const TimeNs staging = std::min(ev.idle_gaps_staging_ns, explained - sync), input = explained - sync - staging;
  const TimeNs warmup = ev.idle_gaps_warmup_ns, launch = ev.idle_gaps_launch_ns, queued = ev.idle_gaps_queued_ns;
  const TimeNs unlaunched = ev.idle_gaps_unlaunched_ns, comm = ev.idle_gaps_comm_ns;
  // Late launches have a known fix (the host's work between them); what
  // queued work waited for the trace does not show, nor whether ops with no
  // launch in it waited for their launch or for a dependency, so those gaps
  // are no estimated saving: unknown, said with their time.
  const TimeNs flushed = std::min(flushed_allocation(b), launch);
  const TimeNs saving = launch - flushed;
  // The gaps a fix of the program may remove (warm-up aside): they decide
  // the severity, and which causes get advice of their own.
  const TimeNs fixable = launch + queued + unlaunched + comm;
  const Severity sev = ratio(fixable, t.span) >= 0.25 ? Severity::critical : Severity::warning;
  Finding& f = b.add(sev, gap_share, th.idle_gaps_share, t.per_device(saving));
  // Its own share, the one that numbers it, is what a fix of the program may
  // remove: warm-up is a one-time cost (unless only a first call in a trace
  // without steps says so), the idle after syncs and input wait are other
  // findings', and a harness's own re-allocation is by design. A trace that
  // is mostly warm-up gets a minor line, not a numbered finding.
  f.share = ratio(fixable - flushed + std::min(ev.idle_gaps_warmup_unsure_ns, warmup), t.span);
  f.saving_note = unknown_gaps_note(t, queued, unlaunched, comm);
  if (launch > 0 && !late_host_known(b))
    f.saving_note = "an upper bound: the trace does not record what the host did in most of these gaps" +
                    (f.saving_note.empty() ? std::string() : "; " + f.saving_note);
  const std::vector<TimeRange> r = ev.idle_gaps.ranges();
  // The cause with the most time decides the title's words and the advice.
  const std::array<TimeNs, 8> by_cause = {warmup, launch, queued, sync, input, unlaunched, comm, staging};
  const auto top = static_cast<Cause>(std::max_element(by_cause.begin(), by_cause.end()) - by_cause.begin());
  // "mostly" only where the cause holds half the gaps' time or more.
  const TimeNs all_causes = warmup + launch + queued + sync + input + unlaunched + comm + staging;
  const std::string most = 2 * by_cause[top] >= all_causes
                               ? std::string("mostly ")
                               : "the largest part (" + pct(ratio(by_cause[top], all_causes)) + ") ";
  // Without steps every kernel's first call in the trace counts as warm-up:
  // said as first calls, not as the start of a capture.
  const bool stepped = !b.p.steps.steps.empty();
  const std::uint64_t gaps = ev.idle_gaps.count() - std::min(ev.unrecorded_gaps, ev.idle_gaps.count());
  f.title = count(gaps) + (gaps == 1 ? " GPU idle gap of at least " : " GPU idle gaps of at least ") +
            dur(th.idle_gap_ns) + " total " + dur(t.per_device(idle_gaps_known_ns(ev))) + " (" + pct1(gap_share) +
            " of the run), " + most +
            (top == kWarmup && capture_mostly(b) ? "warm-up: the " + graph_word(b.p) + " capture"
             : top == kWarmup && !stepped        ? std::string("ended by kernels' first calls (warm-up)")
                                                 : std::string(kGapCauseWords[top]));
  f.evidence = "Largest gap " + (r.empty() ? std::string("-") : dur(r.front().duration())) +
               "; gaps >= " + dur(th.idle_gap_ns) + " (nsys flags 500 ms; training steps are millisecond-scale) take " +
               pct1(gap_share) + " of the devices' time vs a " + pct1(th.idle_gaps_share) +
               " threshold. By what ended them: warm-up " + dur(t.per_device(warmup)) + " (" +
               count(ev.idle_gaps_warmup, "gap", "gaps") + warm_up_words(b.p, stepped) + dur(t.per_device(launch)) +
               (launch > 0 ? " (until " + dur(b.opt.consecutive_kernel_delay_ns) + " after the launch returned)" : "") +
               ", work held by a dependency " + dur(t.per_device(queued)) +
               (queued > 0 ? " (queued before the gap, or waiting after its launch returned)" : "") +
               comm_gap_words(b) +
               (unlaunched > 0 ? ", ops with no launch in the trace " + dur(t.per_device(unlaunched)) +
                                     " (a late launch or held work: the trace cannot tell)"
                               : "") +
               explained_words(t, sync, staging, input) +
               " Communication is never in a gap "
               "(a gap has no op running), so exposed communication does not overlap it." +
               capture_words(b) + unrecorded_words(b);
  if (const std::string where = host_in_late_gaps(b, ev.idle_gaps_host); launch > 0 && !where.empty()) {
    f.evidence +=
        " During the gaps late launches ended, the launching thread was in (the innermost op, range or "
        "CUDA call, by time): " +
        where + ".";
    if (const std::string ops = host_in_late_gaps(b, ev.idle_gaps_host_ops); !ops.empty())
      f.evidence += " By the outermost framework op: " + ops + ".";
    f.evidence += named_ranges_words(b);
  }
  const std::string advice = gap_advice(b, top, launch, queued, unlaunched, stepped);
  f.recommendation = advice + gap_saving_words(b, launch, flushed, queued, unlaunched, comm);
  f.ranges = r;
}

namespace {

// Step time outside the GPU's work: before its first op or after its last,
// the GPU has nothing at all, and the span-based figures (utilization, idle
// gaps) cannot see that time. What input-bound counts (data-loading ranges)
// is left to it.
bool preprocessing_name(std::string_view n) {
  for (std::string_view w : {"preprocess", "read_video", "decode", "image_processing", "tokeniz", "transform",
                             "collate", "augment", "load_image", "feature_extraction"})
    if (contains_nocase(n, w)) return true;
  return false;
}

// Whether a host range's name says it decodes its input (images, video,
// audio): only then do the vendor's decoders belong in the fix. Preprocessing
// named otherwise (resizing, rescaling, normalizing arrays) is array work
// that moves to GPU tensors, not to a decoder.
bool decoding_name(std::string_view n) {
  for (std::string_view w : {"decode", "read_video", "read_image", "imread", "image.open", "jpeg", "pyav", "av.open",
                             "videoreader", "video_reader", "load_image", "pil/image", "imagefile", "audio"})
    if (contains_nocase(n, w)) return true;
  return false;
}

// Where preprocessing moves to the GPU, from the names of its longest host
// ranges: the vendor's decoders where one of them decodes, and the array
// work (resize, rescale, normalize) on GPU tensors after an upload of the
// raw 8-bit input, a quarter of float32's bytes (half of a 16-bit
// float's), in every case.
std::string preprocessing_to_gpu(const Profile& p, bool decodes) {
  return std::string("move it to the GPU: ") + (decodes ? "decoding on " + gpu_decoders(p) + "; " : "") +
         "upload the raw 8-bit input (a quarter of float32's bytes, half of a 16-bit float's) and resize, rescale and "
         "normalize GPU tensors "
         "(torchvision transforms v2 on CUDA tensors; Hugging Face's fast image processors, use_fast=True)";
}

// The input-bound fix's GPU side: the vendor's decoders only where the
// loading's ranges decode, or where no range says what the loading does.
// `said`: the fix already moves the preprocessing onto GPU tensors.
std::string input_on_gpu(const Profile& p, bool said) {
  bool decodes = p.workload.input_work.empty();
  for (const HostRange& h : p.workload.input_work) decodes = decodes || decoding_name(h.name);
  if (!decodes && said) return "a small dataset can also stay resident on the GPU.";
  return decodes ? "decode and augment on the GPU (" +
                       for_vendor(p, "NVIDIA DALI", "ROCm's rocDecode and rocJPEG",
                                  "NVIDIA DALI, or rocDecode and rocJPEG on AMD") +
                       ") or keep a small dataset resident on the GPU."
                 : "augment GPU tensors (torchvision transforms v2" + for_vendor(p, ", NVIDIA DALI", "", "") +
                       ") or keep a small dataset resident on the GPU.";
}

// The innermost few ranges of the path down the data loading's host time
// (WorkloadKind::input_work): where the input time goes.
std::vector<const HostRange*> input_hot(const WorkloadKind& w) {
  std::vector<const HostRange*> hot;
  for (std::size_t i = w.input_work.size() > 3 ? w.input_work.size() - 3 : 0; i < w.input_work.size(); ++i)
    hot.push_back(&w.input_work[i]);
  return hot;
}
}  // namespace

// Input: GPU idle while the host runs data-loading ranges.
void input_bound(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!has_span(t)) return;
  if (b.ev.has_input_ranges && b.ev.input_wait.total() > 0) {
    const bool by_step = b.p.steps.total_ns > 0;
    const TimeNs input = by_step ? b.p.steps.input_wait_ns : b.ev.input_wait.total();
    const double share = by_step ? ratio(input, b.p.steps.total_ns) : ratio(input, t.span);
    if (share >= th.input_moderate) {
      Finding& f = b.add(share >= th.input_high ? Severity::critical : Severity::warning, share, th.input_moderate,
                         t.per_device(b.ev.input_wait.total()));
      f.share = share;
      f.title = std::string(share >= th.input_high ? "Highly" : "Moderately") +
                " input-bound: the GPU waits for input " + pct1(share) + " of " + (by_step ? "step time" : "the run") +
                " (" + dur(t.per_device(input)) +
                (by_step ? " over " + std::to_string(b.p.steps.steps.size()) + " steps" : std::string()) + ")";
      f.evidence = "GPU idle while data-loading ranges run on the host: " + dur(b.ev.input_wait.total()) +
                   "; xprof's anchors: >= " + pct(th.input_moderate) + " moderately, >= " + pct(th.input_high) +
                   " highly input-bound. Host-wait idle overall: " + pct(ratio(t.host_wait, t.span)) + " of the run.";
      const LoaderWorkers workers = loader_workers(b.p);
      if (workers != LoaderWorkers::unknown)
        f.evidence += workers == LoaderWorkers::none
                          ? " The DataLoader loads in the main process (_SingleProcessDataLoaderIter: "
                            "num_workers=0)."
                          : " The DataLoader already loads in worker processes (_MultiProcessingDataLoaderIter), "
                            "and they do not keep up.";
      const WorkloadKind& w = b.p.workload;
      const std::vector<const HostRange*> hot = input_hot(w);
      const HostRange* preprocessing = nullptr;  // the innermost range on the path named for it
      if (!hot.empty()) {
        f.evidence += " Of the data-loading ranges' " + dur(w.data_loading_ns) +
                      " on the host, most is in (innermost last, each inside the one before): ";
        for (std::size_t i = 0; i < hot.size(); ++i) {
          f.evidence += (i ? " > " : "") + hot[i]->name + " " + dur(std::min(hot[i]->ns, w.data_loading_ns)) + " (" +
                        count(hot[i]->count, "call", "calls") + ")";
        }
        for (const HostRange& h : w.input_work)
          if (preprocessing_name(h.name)) preprocessing = &h;
        f.evidence += ".";
      }
      // pin_memory=True only where input copies come from pageable memory
      // (or the trace has none to tell).
      std::uint64_t htod = 0, pageable_htod = 0;
      for (const CopyGroup& g : b.p.memcpys.groups)
        if (g.direction == "HtoD") htod += g.count, pageable_htod += g.memory == "pageable" ? g.count : 0;
      const std::string pin = htod > 0 && pageable_htod == 0 ? "" : ", pin_memory=True";
      const std::string torch_fix =
          workers == LoaderWorkers::some
              ? "Make the workers keep up: more of them where the host has idle cores (num_workers), a deeper "
                "prefetch_factor, persistent_workers=True" +
                    pin + ", and cheaper decoding and augmentation per sample; "
          : workers == LoaderWorkers::none
              ? "Load the next batch while the GPU computes: give the DataLoader worker processes (num_workers >= 4 "
                "per GPU, it has none)" +
                    pin + ", prefetch_factor and persistent_workers; "
              : "Load the next batch while the GPU computes: more DataLoader workers (num_workers >= 4 per GPU)" + pin +
                    ", prefetch_factor and persistent_workers; ";
      // Preprocessing on the loading thread: cheaper or elsewhere, not only
      // more of it in parallel.
      const std::string cheaper =
          preprocessing ? "The input time is preprocessing on the host (" + preprocessing->name +
                              (preprocessing != hot.back() ? ", most of it in " + hot.back()->name : std::string()) +
                              "): make it cheaper or move it off the loading thread, onto the GPU (torchvision "
                              "transforms v2 on CUDA tensors; Hugging Face's fast image processors, use_fast=True) or "
                              "done once ahead of time. "
                        : "";
      const std::string gpu_side = input_on_gpu(b.p, !cheaper.empty());
      f.recommendation =
          cheaper +
          for_framework(
              b.p, torch_fix + gpu_side,
              "Load the next batch while the GPU computes: dataset.prefetch(tf.data.AUTOTUNE), map(..., "
              "num_parallel_calls=tf.data.AUTOTUNE), dataset.cache() for a dataset that fits; " +
                  gpu_side,
              "Load the next batch while the GPU computes: more DataLoader workers (num_workers >= 4 per GPU), "
              "pin_memory=True, prefetch_factor and persistent_workers; " +
                  gpu_side + " In TensorFlow dataset.prefetch(tf.data.AUTOTUNE) and num_parallel_calls.");
      f.ranges = b.ev.input_wait.ranges();
    }
  }
}

void step_host_time(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const StepSummary& s = b.p.steps;
  if (!has_span(b.t) || s.total_ns <= 0 || s.outside_gpu_ns <= 0) return;
  const TimeNs input = input_bound_fires(b) ? std::min(s.input_wait_ns, s.outside_gpu_ns) : 0;
  const TimeNs own = s.outside_gpu_ns - input;
  const double share = ratio(own, s.total_ns);
  if (share < th.step_host_share) return;
  const bool warmup = s.steps.size() <= 2;
  const bool compiled = b.p.workload.execution == "compiled";
  std::string ranges;
  TimeNs named = 0;
  bool preprocessing = false, decodes = false;
  for (const HostRange& h : s.outside_ranges) {
    ranges +=
        (ranges.empty() ? "" : "; ") + h.name + " " + dur(h.ns) + (h.count > 1 ? " (" + count(h.count) + "x)" : "");
    named = std::max(named, h.ns);
    preprocessing = preprocessing || preprocessing_name(h.name);
    decodes = decodes || decoding_name(h.name);
  }
  // A first call that compiles (a compiled program, few steps, most of the
  // time before the GPU starts and in no recorded range): the steady state
  // does not pay it.
  const bool compiling = warmup && compiled && ratio(named, own) < 0.5 && s.before_gpu_ns >= own / 2;
  Finding& f = b.add(share >= 0.5 ? Severity::critical : Severity::warning, share, th.step_host_share,
                     compiling ? 0 : b.t.per_device(own));
  f.share = share;
  const TimeNs after = s.outside_gpu_ns - s.before_gpu_ns;
  // "The host works" only where recorded host work covers half of that time
  // or more (the longest range wholly inside it, the ranges and calls before
  // the first op); else what the host did is not in the trace.
  const bool recorded = 2 * std::max(named, s.lead_recorded_ns) >= own;
  f.title = pct1(share) + " of step time (" + dur(b.t.per_device(own)) +
            ") passes before the GPU's first op or after its last: " +
            (recorded ? "the host works, the GPU has nothing to do"
                      : "the GPU has nothing to do, and what the host does then the trace mostly does not record");
  f.evidence = "Of " + dur(s.total_ns) + " of step time (" + count(s.steps.size()) + " step" +
               (s.steps.size() == 1 ? "" : "s") + "), " + dur(s.outside_gpu_ns) +
               " lies outside the GPU's work: " + dur(s.before_gpu_ns) + " before its first op, " + dur(after) +
               " after its last. The GPU's span, and so its utilization and idle gaps, leave that time out. " +
               (input > 0 ? dur(input) + " of it is input-bound's (data-loading ranges), not counted here. " : "") +
               (ranges.empty() ? std::string("No recorded host range lies inside it: the host's work there (Python, "
                                             "compilation, profiler start-up) was not recorded.")
                               : "Longest host ranges inside it: " + ranges + ".") +
               " The saving is an upper bound: the step's host time if none of it held the GPU up.";
  f.variant = compiling ? "compiling" : preprocessing ? "preprocessing" : warmup ? "few-steps" : "host-work";
  if (compiling) {
    f.saving_note = "a first call that compiles (torch.compile): the steady state does not pay it";
    f.recommendation =
        "This capture holds torch.compile's first call, which compiles the model (Dynamo and Inductor) before it "
        "runs: profile the steady state instead — a few untimed iterations first, or torch.profiler.schedule(wait=1, "
        "warmup=1, active=3) — and judge the GPU by those steps.";
  } else if (preprocessing) {
    f.recommendation =
        "Preprocessing on the host holds the GPU up: prepare the next input while the GPU runs this one (a "
        "DataLoader with num_workers and prefetch_factor, a preprocessing thread or process, batched requests in a "
        "serving engine), or " +
        preprocessing_to_gpu(b.p, decodes) + ".";
  } else {
    f.recommendation =
        std::string(warmup ? "With so few steps this may be warm-up (first-call allocation, autotuning, lazy "
                             "loading): profile a few steps after warm-up before acting on it. "
                           : "") +
        "Otherwise take the host work out of the step's critical path: do it before the step or overlap it with the "
        "GPU's work of the previous one (prefetch, precompute, asynchronous logging), and profile the host side "
        "(the trace's CPU ops, py-spy) for what it is.";
  }
}

namespace {
// PyTorch's Optimizer.zero_grad that launches kernels writes zeros into every
// gradient (set_to_none=False: one fill per parameter); with set_to_none=True
// (the default from PyTorch 2.0) it launches none (PyTorch's performance
// tuning guide). Said first when the GPU waited for its launches at least 1 %
// of the run; empty otherwise, and never where zero_grad launched nothing.
std::string zero_grad_fix(const Builder& b, const std::vector<const OpRow*>& phases) {
  for (const OpRow* r : phases) {
    if (!r->name.starts_with("Optimizer.zero_grad#") || r->kernels_total == 0 || r->calls == 0) continue;
    const TimeNs waited = b.t.per_device(r->starved_total_ns);
    if (ratio(r->starved_total_ns, b.t.span) < 0.01) continue;
    return r->name + " launches " + fmt("%.0f", double(r->kernels_total) / double(r->calls)) +
           " kernels per call to write zeros into the gradients (" + count(r->kernels_total) + " in " +
           count(r->calls, "call", "calls") + "), and the GPU waited " + dur(waited) +
           " for their launches: zero_grad(set_to_none=True), the default from PyTorch 2.0, sets the gradients to "
           "None instead and launches none.";
  }
  return {};
}
}  // namespace

namespace {
// How many of the steps' synchronizations: "2 per step", "3 in 6 steps";
// without steps "3 times".
std::string sync_rate(std::uint64_t n, std::uint64_t steps) {
  if (steps <= 1) return n == 1 ? "once" : count(n) + " times";
  if (n % steps == 0) return count(n / steps) + " per step";
  return count(n) + " in " + count(steps, "step", "steps");
}
// A framework op's read back in the program's words, where PyTorch fixes it.
std::string read_back_words(const std::string& op) {
  if (op == "aten::is_nonzero") return op + ": a tensor's truth value read on the host";
  if (op == "aten::_local_scalar_dense") return op + ": .item()";
  return op;
}
// "`place` (op, 2 per step, 13.2 ms blocked)".
std::string site_words(const SyncSite& s, std::uint64_t steps) {
  std::string x = "`" + s.where + "` (";
  if (!s.op.empty() && s.op != s.where) x += read_back_words(s.op) + ", ";
  return x + sync_rate(s.count, steps) + ", " + dur(s.blocked_ns) + " blocked)";
}
// The parts that hold no synchronization and issue the most launches, while
// they issue half the steps' launches or more: "## backward ## and ## forward ##"
// and their share; empty otherwise.
struct FreeParts {
  std::vector<std::string> names;
  double share = 0;
};
// "a, b and c" (`last`: " and ", " or ").
std::string listed(const std::vector<std::string>& names, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? std::string(last) : std::string(", ")) + names[i];
  return out;
}
FreeParts sync_free_parts(const SyncStats& y) {
  std::uint64_t free = 0;
  for (const StepPart& s : y.step_parts)
    if (s.syncs == 0) free += s.launches;
  if (y.step_launches == 0 || 2 * free < y.step_launches) return {};
  std::vector<std::string> names;
  std::uint64_t named = 0;
  for (const StepPart& s : y.step_parts) {  // most launches first
    if (s.syncs || s.launches == 0) continue;
    if (names.size() == 3 || (!names.empty() && 10 * named >= 9 * free)) break;
    names.push_back(s.name), named += s.launches;
  }
  return {names, ratio(named, y.step_launches)};
}
}  // namespace

std::string CapturePlan::lead() const {
  if (blocked.empty()) return {};
  return std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(blocked[0])))) + blocked.substr(1) +
         "; " + then + ". ";
}

CapturePlan capture_plan(const Profile& p) {
  const SyncStats& y = p.syncs;
  CapturePlan plan;
  if (y.mid_step == 0 || y.mid_step_sites.empty() || !p.workload.engine.empty() || p.workload.framework == "tensorflow")
    return plan;
  const std::uint64_t steps = y.mid_step_steps;
  const bool one = steps == 1;
  const std::string whose = steps == 0 ? "the recording" : one ? "the step" : "the steps";
  const bool several = y.mid_step_sites.size() > 1;
  plan.blocked = "a " + graph_words(p) + " capture cannot hold a synchronization with the host, and " + whose +
                 (steps > 1 ? " synchronize" : " synchronizes") + " with it " + sync_rate(y.mid_step, steps) +
                 " between " + (steps > 1 ? "their" : "its") + " launches" +
                 (several ? " (" + dur(y.mid_step_ns) + " blocked in all)" : "") + ": ";
  std::uint64_t shown = 0;
  std::size_t i = 0;
  for (; i < y.mid_step_sites.size() && i < 3; ++i) {
    plan.blocked += (i ? ", " : "") + site_words(y.mid_step_sites[i], steps);
    shown += y.mid_step_sites[i].count;
  }
  if (shown < y.mid_step)
    plan.blocked +=
        ", and " + count(y.mid_step - shown) +
        (y.mid_step_sites.size() > i ? " more in " + count(y.mid_step_sites.size() - i, "other place", "other places")
                                     : " more");
  const FreeParts free = sync_free_parts(y);
  if (!free.names.empty()) {
    plan.parts = listed(free.names, " and ");
    plan.then = "none lies in " + listed(free.names, " or ") + ", which issue " + pct(free.share) + " of " +
                (one ? "its" : "the steps'") + " launches: capture those rather than the whole step";
  } else if (std::all_of(y.mid_step_sites.begin(), y.mid_step_sites.end(), [](const SyncSite& x) {
               return x.where == "aten::to" || x.where == "aten::copy_" || x.where == "aten::_to_copy";
             })) {
    // Copies of the input to the GPU, blocking: kept out of the graph, not removed.
    plan.then = std::string(y.mid_step == 1 ? "keep it" : "keep them") +
                " out of the capture: copy each batch into the graph's static input tensors before its replay "
                "(from pinned memory, non_blocking=True)";
  } else {
    plan.then = y.mid_step == 1 ? "remove it before capturing" : "remove them before capturing";
  }
  return plan;
}

namespace {
// Launch-bound's advice, for what the run already does: a run that replays
// CUDA graphs is told to capture what still runs eagerly, a compiled one to
// add CUDA graphs rather than to compile, an inference run nothing about
// optimizers or a training loop.
// The runtime calls that capture and replay a graph, in the vendor's API.
std::string capture_calls(const Profile& p) {
  return gpu_vendor(p) == GpuVendor::amd ? "hipStreamBeginCapture, hipGraphLaunch"
                                         : "cudaStreamBeginCapture, cudaGraphLaunch";
}

// In a compiled run, the part of the GPU's wait for late launches that
// the code around torch.compile's regions caused (eager ops before, between
// and after them: a pipeline's text encoders around its compiled
// transformer), where it is a tenth of the wait or more: graphs of the
// compiled regions do not remove it. From the ops' own waits (OpRow's
// starved time): the outermost compiled regions' with the ops inside them,
// against every op's. Empty otherwise.
std::string eager_around_compiled(const Profile& p) {
  TimeNs all = 0, compiled = 0;
  for (const OpRow& r : p.op_names) {
    all += r.starved_ns;
    if (!detail::is_compiled_region(r.name)) continue;
    if (!detail::path_has(r.path, detail::is_compiled_region)) compiled += r.starved_total_ns;
  }
  const TimeNs eager = all - std::min(all, compiled);
  if (compiled == 0 || 10 * eager < all) return {};
  const auto gpus = static_cast<TimeNs>(std::max<std::size_t>(1, p.devices.size()));
  return " But " + dur(eager / gpus) + " of the GPU's wait (" + pct(ratio(eager, all)) +
         ") is for ops outside the compiled regions, which run eagerly around them and which graphs of the "
         "compiled regions leave as they are: compile or capture that code too (torch.compile on the modules it "
         "calls).";
}

std::string launch_fix(const Profile& p, bool short_ops) {
  const WorkloadKind& w = p.workload;
  // Synchronizations between the steps' launches come first: no capture holds them.
  const CapturePlan plan = capture_plan(p);
  const bool training = w.phase == "training", inference = w.phase == "inference";
  std::string graphs;
  const std::string graph = graph_words(p);
  const std::string already = (w.graph_kernels ? "already replays " : "already captures ") + graph + "s";
  if (w.engine == "vllm")
    graphs = std::string(w.execution == "cuda graphs"
                             ? "vLLM " + already + ", so these launches are of batches it did not capture: "
                             : "vLLM replays " + graph +
                                   "s only for the batch sizes it captured, and for none under "
                                   "--enforce-eager: run without --enforce-eager, and ") +
             "capture this batch's size (the cudagraph capture sizes of its compilation config)";
  else if (w.engine == "sglang")
    graphs = std::string(w.execution == "cuda graphs"
                             ? "SGLang " + already + ", so these launches are of batches it did not capture: "
                             : "SGLang replays " + graph +
                                   "s only up to its largest captured batch, and for none under "
                                   "--disable-cuda-graph: run without --disable-cuda-graph, and ") +
             "raise --cuda-graph-max-bs to this batch's size";
  else if (w.execution == "cuda graphs")
    graphs = for_framework(p,
                           "the run " + already +
                               ", so these launches are of what still runs eagerly: "
                               "capture more of the step (fewer graph breaks, torch.compile(mode='reduce-overhead') on "
                               "the eager parts)",
                           "the run " + already +
                               ", so these launches are of what still runs eagerly: "
                               "compile more of the step",
                           "the run " + already +
                               ", so these launches are of what still runs eagerly: "
                               "capture more of the launch sequence in the graphs");
  else if (w.execution == "compiled")
    graphs = for_framework(p,
                           "the model is compiled but still launches kernel by kernel: add " + graph +
                               "s (torch.compile(mode='reduce-overhead'), or mode='max-autotune')",
                           "compile the whole step (tf.function(jit_compile=True)) so it launches as few, larger "
                           "programs",
                           "capture the repeated launch sequence in a " + graph + " (" + capture_calls(p) + ")");
  else
    graphs = for_framework(
        p,
        (plan.parts.empty()
             ? std::string(inference ? "capture the forward pass" : "capture the step") + " in a " + graph
             : "capture " + plan.parts + " in " + graph + "s") +
            (gpu_vendor(p) == GpuVendor::amd ? " (torch.cuda.CUDAGraph, which captures HIP graphs on ROCm, "
                                             : " (torch.cuda.CUDAGraph, ") +
            "torch.compile(mode='reduce-overhead'))",
        "compile the step (tf.function(jit_compile=True), XLA) so it launches as few, larger programs",
        "capture the repeated launch sequence in a " + graph + " (" + capture_calls(p) + ")");
  // A serving engine's kernels are its own to fuse.
  const bool compiled = (w.execution != "eager" && !w.execution.empty()) || !w.engine.empty();
  const std::string fuse =
      compiled ? ""
               : for_framework(p,
                               // A weight update of a few kernels per parameter is many launches;
                               // a foreach or fused one is already few.
                               training && w.optimizer == "per-parameter"
                                   ? ", fuse small elementwise kernels (torch.compile, a fused optimizer: fused=True)"
                                   : ", fuse small elementwise kernels (torch.compile)",
                               ", fuse small ops (XLA)", ", fuse small kernels");
  const std::string loop = inference ? "the serving loop" : training ? "the training loop" : "the loop";
  // .item() named only where the trace has reads back (aten::item, its
  // aten::_local_scalar_dense).
  bool reads_back = false;
  for (const OpRow& r : p.op_names)
    reads_back = reads_back || r.name == "aten::item" || r.name == "aten::_local_scalar_dense";
  if (short_ops && !w.engine.empty())
    return "Launch less: " + graphs + ". More requests batched together also give each kernel more work.";
  const std::string eager =
      w.execution == "compiled" && w.framework == "pytorch" ? eager_around_compiled(p) : std::string();
  if (short_ops)
    return plan.lead() + "Launch less: " + graphs + fuse + ", and give each kernel more work (a larger batch)." +
           eager + " Bundled workload: --graphs on.";
  return plan.lead() + "Take host time out of the launch path: " + graphs + " so the host no longer runs each op, " +
         for_framework(p,
                       "move work out of " + loop + "'s Python (logging, " + (reads_back ? ".item(), " : "") +
                           "per-step bookkeeping), ",
                       "move work out of " + loop + "'s Python (logging, per-step bookkeeping), ",
                       "move other host work out of the loop that launches the kernels, ") +
         "and give each kernel more work so it outlasts the host's time per launch." + eager +
         " Bundled workload: --graphs on.";
}

// Of the host's time over the steps (or the recording), what it spent in
// CUDA graph captures or blocked in synchronizations: it issued no launches
// then (none where under kMaterialShare of that time).
TimeNs host_away(const LaunchStats& l, TimeNs recorded) {
  if (double(l.host_not_launching_ns) < kMaterialShare * double(recorded)) return 0;
  return std::clamp<TimeNs>(l.host_not_launching_ns, 0, recorded);
}
}  // namespace

// Launch-bound: the GPU sits idle in short gaps that late launches end. Sized
// by that idle time alone (the issue is the GPU waiting, however long its
// kernels); whether most ops are shorter than their launch call (HTA's
// short-kernel rule) says what the host's time goes to, not whether it costs.
// The ops whose late launches the GPU waited for most (at most five), each
// with its calls, or how many of them launched GPU work where some did not:
// one recorded into a graph capture (or run on the CPU) launched nothing the
// GPU could wait for. Empty without such ops.
std::string waited_ops_words(const Builder& b, std::vector<const OpRow*> ops) {
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpRow* x, const OpRow* y) { return x->starved_ns > y->starved_ns; });
  auto calls = [](const OpRow& r) {
    return r.gpu_calls > 0 && r.gpu_calls < r.calls
               ? count(r.gpu_calls) + " of its " + count(r.calls) + " calls launched GPU work"
               : count(r.calls, "call", "calls");
  };
  std::string ranked;
  for (std::size_t i = 0; i < ops.size() && i < 5; ++i)
    ranked +=
        (i ? "; " : "") + ops[i]->name + " " + dur(b.t.per_device(ops[i]->starved_ns)) + " (" + calls(*ops[i]) + ")";
  return ranked.empty() ? std::string() : " The GPU waited longest for the launches of: " + ranked + ".";
}

namespace {
// Where the host issued no launches (LaunchStats::host_not_launching_ns).
std::string away_words(const Profile& p) {
  std::vector<std::string> in;
  const std::string copies = p.syncs.copies > 0 ? " and blocking copies" : "";
  // Time besides the long launch calls: graph captures, syncs and copies.
  if (p.launches.host_not_launching_ns > p.launches.long_launch_ns)
    in.push_back(p.workload.graph_captures
                     ? "in " + std::string(graph_word_of(p.devices)) + " captures, synchronizations" + copies
                     : "blocked in synchronizations" + copies);
  if (p.launches.long_launch_ns > 0)
    in.push_back("in kernel launch calls of 1 ms or more (" +
                 (in.empty() ? std::string() : dur(p.launches.long_launch_ns) + ": ") +
                 "loading a kernel's module on its first launch, or a launch into a full queue)");
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) out += (i == 0 ? "" : i + 1 == in.size() ? " and " : ", ") + in[i];
  return out;
}

// What the host's time per op is, where the trace records the host's side.
std::string host_work_words(const Profile& p) {
  if (!host_side_recorded(p))
    return " (what it did between launches the trace does not record: it holds only the GPU's ops and the runtime's "
           "calls).";
  return for_framework(p, " (Python, the framework's dispatch per op).", " (Python, the framework's dispatch per op).",
                       ".");
}
}  // namespace

void launch_bound(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!launch_bound_fires(b)) return;
  const double launch_share = ratio(b.ev.launch_gaps.total(), t.span);
  const LaunchStats& l = b.p.launches;
  // The host's time per launch over the steps (step time / launches: the
  // host decides a launch-bound step) against its launch call: three times
  // the call or more, its own time per op (Python, dispatch), not the
  // launch calls, is what the GPU waits for, short kernels or not.
  // The host's data loading inside the steps is not time per launch, nor
  // its time blocked in synchronizations (it waited for the GPU then).
  // Without steps, the recording up to its last GPU op is the host's time
  // (one pass, a serving engine's batch): what the host did after it
  // launched nothing the GPU waited for, and a profiler's end-of-window
  // marker can lie well after the last event.
  const bool stepped = b.p.steps.total_ns > 0;
  TimeNs gpu_end = b.p.window.start;
  for (const DeviceSummary& d : b.p.devices) gpu_end = std::max(gpu_end, d.window.end);
  const TimeNs recorded =
      stepped ? b.p.steps.total_ns
              : std::min(b.p.window.end, gpu_end > b.p.window.start ? gpu_end : b.p.window.end) - b.p.window.start;
  const TimeNs away = host_away(l, recorded);
  const TimeNs host_time = recorded - away;
  const TimeNs loading = b.p.workload.data_loading_ns < host_time ? b.p.workload.data_loading_ns : 0;
  const double host_per_launch =
      host_time > 0 && l.launches > 0 ? double(host_time - loading) / double(l.launches) : 0.0;
  const bool host_dominates = l.cpu_launch.median > 0 && host_per_launch >= 3.0 * double(l.cpu_launch.median);
  const bool short_ops = l.short_kernel_share >= th.launch_short_kernel_share && !host_dominates;
  const std::string host_work = host_work_words(b.p);
  {
    Finding& f = b.add(launch_share >= 0.25 ? Severity::critical : Severity::warning, launch_share,
                       th.launch_host_wait_share, t.per_device(b.ev.launch_gaps.total()));
    f.share = launch_share;
    f.variant = short_ops ? "short-ops" : "host-per-op";
    // Most kernels outlasting their launch call: the host's own time per op
    // (Python, dispatch), not the launch calls, is what the GPU waits for.
    f.title = (short_ops ? "Launch-bound: the GPU waits for launches "
                         : "Host-bound between launches: the GPU waits for the host's next launch ") +
              pct1(launch_share) + " of the time, in gaps under " + dur(th.idle_gap_ns) + " (" +
              pct(l.short_kernel_share) + " of GPU ops run shorter than their launch call: median " +
              dur(l.gpu_duration.median) + " on the GPU vs " + dur(l.cpu_launch.median) + " on the CPU)";
    f.evidence = count(b.ev.launch_gaps.count()) + " idle gaps shorter than " + dur(th.idle_gap_ns) +
                 " ended by an op launched after the gap began total " + dur(b.ev.launch_gaps.total()) + " (" +
                 pct1(launch_share) + " vs a " + pct1(th.launch_host_wait_share) +
                 " threshold, xprof's kernel-launch levels 3 % and 15 %); short ops " + pct(l.short_kernel_share) +
                 (short_ops ? " (HTA's short-kernel rule: most kernels take less time than launching them)."
                  : host_dominates
                      ? ", but the host spends " + dur(static_cast<TimeNs>(host_per_launch)) + " per launch over the " +
                            (stepped ? "steps (step time" : "recording (its time to the last GPU op") +
                            (away > 0 ? " less the " + dur(away) + " it spent " + away_words(b.p) + "," : "") +
                            (loading > 0 ? (away > 0 ? " and" : " less") + std::string(" its data loading, ") +
                                               dur(loading) + ", / launches"
                                         : " / launches") +
                            "), " + fmt("%.0f", host_per_launch / double(l.cpu_launch.median)) +
                            "x its launch call's median: its own time per op, not the launch calls, is what the "
                            "GPU waits for" +
                            host_work
                      : ": most kernels outlast their launch, so the host's own time between launches is "
                        "what the GPU waits for" +
                            host_work);
    if (!host_side_recorded(b.p))
      f.recommendation =
          "Record the host side first (torch.profiler with ProfilerActivity.CPU, or NVTX ranges): "
          "what the host does between launches is not in this trace. Then: ";

    f.recommendation += launch_fix(b.p, short_ops);
    // vLLM's default graphs are piecewise: attention stays eager between them.
    if (b.p.workload.engine == "vllm") {
      TimeNs attention = 0;
      for (const OpRow& r : b.p.op_names)
        if (r.name.find("unified_attention") != std::string::npos) attention += r.starved_ns;
      if (attention > 0)
        f.recommendation +=
            " vLLM's default CUDA graphs are piecewise: attention runs eagerly between them, and its "
            "launches held the GPU " +
            dur(t.per_device(attention)) +
            " here, which they do not remove (full graphs do, where its attention backend supports "
            "them); the replay graphs every launch, so its prediction is an upper bound.";
    }
    // The ops whose late launches the GPU waited for most, by name, and the
    // optimizer's phases around them (op-launch-overhead leaves its ops to
    // this finding when it fires: the same idle time).
    std::vector<const OpRow*> ops, phases;
    for (const OpRow& r : b.p.op_names) {
      if (r.starved_ns > 0) ops.push_back(&r);
      if (is_optimizer_phase(r.name) && r.starved_total_ns > 0) phases.push_back(&r);
    }
    f.evidence += waited_ops_words(b, std::move(ops));
    std::string in_phases;
    for (const OpRow* r : phases)
      in_phases += (in_phases.empty() ? "" : ", ") + r->name + " " + dur(t.per_device(r->starved_total_ns));
    if (!in_phases.empty()) f.evidence += " Of the wait, inside the optimizer's ops: " + in_phases + ".";
    if (const std::string z = zero_grad_fix(b, phases); !z.empty()) f.recommendation = z + " " + f.recommendation;
    f.ranges = b.ev.launch_gaps.ranges();
  }
}

// Host synchronizations that drain the GPU's queue.
void host_sync(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const Totals& t = b.t;
  if (!has_span(t)) return;
  const TimeNs idle = sync_idle_ns(b.p);
  const double sync_share = ratio(idle, t.span);
  if (host_sync_fires(b)) {
    const SyncStats& s = b.p.syncs;
    Finding& f = b.add(sync_share >= 0.10 ? Severity::critical : Severity::warning, sync_share, th.host_sync_share,
                       t.per_device(idle));
    f.share = sync_share;
    f.title = count(s.count) + " host synchronizations leave the GPU idle " + dur(t.per_device(idle)) + " (" +
              pct1(sync_share) + " of the run)";
    f.evidence = count(s.device_syncs) + " device, " + count(s.stream_syncs) + " stream and " + count(s.event_syncs) +
                 " event synchronizations held the host " + dur(s.total_ns) +
                 "; after they returned the GPU had nothing queued until the host launched again (" + pct1(sync_share) +
                 " vs a " + pct1(th.host_sync_share) +
                 " threshold). Of each gap a synchronization is charged at most how long it held the host (had it "
                 "not blocked, the host's next launch would have come that much earlier); the rest of the gap is the "
                 "host's own work, a late launch.";
    if (s.copies)
      f.evidence += " Copies that block the host (" + count(s.copies) + ") leave it idle another " +
                    dur(t.per_device(s.gpu_idle_after_copies_ns)) + ": the sync-memcpy finding's, not counted here.";
    if (s.setup_syncs)
      f.evidence += " Not counted either: " + count(s.setup_syncs, "synchronization", "synchronizations") + " of " +
                    std::string(graph_word_of(b.p.devices)) +
                    "s' one-time set-up (from a capture to the graph's first run, or inside torch's "
                    "cudagraph trees recording one), which held the host " +
                    dur(s.setup_ns) + ": the GPU idle after them (" + dur(t.per_device(s.setup_idle_ns)) +
                    ") is warm-up, which no change of the program removes.";
    f.recommendation = for_framework(
        b.p,
        b.p.workload.phase == "inference"
            ? "Keep the host ahead of the GPU: launch the next batch's (or token's) work before waiting for this "
              "one's outputs (copy them with non_blocking=True and wait on an event where they are read), avoid "
              "torch.cuda.synchronize() between steps, and order streams with events (cudaStreamWaitEvent) instead "
              "of host synchronizations."
            : "Keep the host ahead of the GPU: avoid .item(), .cpu(), print(loss) and torch.cuda.synchronize() "
              "inside the step (accumulate metrics on the GPU, read them every N steps), and order streams with "
              "events (cudaStreamWaitEvent) instead of host synchronizations.",
        "Keep the host ahead of the GPU: avoid .numpy() and printing tensors inside the step (accumulate metrics on "
        "the GPU, read them every N steps).",
        "Keep the host ahead of the GPU: synchronize (cudaDeviceSynchronize, cudaStreamSynchronize) only where the "
        "host needs the results, read results back every N iterations rather than every one, and order streams "
        "with events (cudaEventRecord, cudaStreamWaitEvent) instead of host synchronizations.");
    // A sync after nearly every kernel (a launch wrapper that checks each
    // launch by synchronizing): the host never runs ahead, so every launch's
    // latency lies on the GPU's timeline; removing that sync is the fix.
    const std::uint64_t waits = s.device_syncs + s.stream_syncs;
    if (t.kernels >= 100 && 10 * waits >= 9 * t.kernels) {
      f.evidence += " That is a sync for nearly every kernel (" + count(waits) + " device and stream syncs for " +
                    count(t.kernels) +
                    " kernels): the host never queues work ahead, so each launch's latency and the sync's return "
                    "lie on the GPU's timeline.";
      f.recommendation =
          "Synchronize once where the host reads results, not after every kernel: a launch wrapper that checks "
          "each launch by synchronizing serialises the host with the GPU (check launches with "
          "cudaGetLastError(), which does not wait, and keep a synchronizing check for debug builds). " +
          f.recommendation;
    }
    f.ranges = b.ev.sync_idle.ranges();
  }
}

}  // namespace gpuscope::detail::rules

namespace gpuscope::detail {

std::vector<IdleCharge> charge_idle(const Profile& p, const Evidence& ev, const AnalysisOptions& opt) {
  using namespace rules;
  std::vector<Finding> unused;
  const Totals t(p);
  const Builder b{p, ev, opt, t, &unused, {}};
  std::vector<IdleCharge> out;
  if (!has_span(t) || t.idle <= 0) return out;
  auto found = [&](std::string_view id) {
    return std::any_of(p.findings.begin(), p.findings.end(), [&](const Finding& f) { return f.id == id; });
  };
  const bool low_util = found("low-utilization");
  TimeNs charged = 0;
  // A part whose own finding does not fire is low-utilization's (it counts
  // the idle time no other finding does) when that fires, else no one's.
  auto add = [&](std::string_view cause, TimeNs ns, bool fires, std::string_view id, std::string none) {
    if (ns <= 0) return;
    IdleCharge c;
    c.cause = std::string(cause);
    c.ns = ns;
    if (fires) {
      c.finding = std::string(id);
    } else if (low_util && cause != "unrecorded-gap") {
      c.finding = "low-utilization";
      c.note = id.empty() ? std::string("idle time no other finding explains")
                          : "under " + std::string(id) + "'s threshold: idle time no other finding counts";
    } else {
      c.note = std::move(none);
    }
    charged += ns;
    out.push_back(std::move(c));
  };
  const bool input = input_bound_fires(b);
  add("input-wait", ev.input_wait.total() - ev.input_wait_before_start_ns, input, "input-bound",
      "under input-bound's threshold");
  add("host-sync", sync_idle_ns(p), host_sync_fires(b), "host-sync", "under host-sync's threshold");
  add("blocking-copy", p.syncs.gpu_idle_after_copies_ns, sync_memcpy_fires(b), "sync-memcpy",
      "under sync-memcpy's threshold");
  add("pageable-staging", ev.staging_idle_ns, pageable_fires(b), "pageable-memcpy",
      "under pageable-memcpy's threshold");
  {
    const bool lb = launch_bound_fires(b);
    const std::string_view ops = found("op-launch-overhead")  ? "op-launch-overhead"
                                 : found("unfused-optimizer") ? "unfused-optimizer"
                                                              : "";
    add("late-launch", ev.launch_gaps.total(), lb || (!low_util && !ops.empty()),
        lb || ops.empty() ? "launch-bound" : ops,
        "under launch-bound's threshold (" + pct(opt.thresholds.launch_host_wait_share) + " of the run)");
    if (!lb && !ops.empty() && !out.empty() && out.back().cause == "late-launch")
      out.back().note = low_util ? "under launch-bound's threshold; " + std::string(ops) + " names the ops behind it"
                                 : "the part its ops' late launches left idle; under launch-bound's threshold";
  }
  const bool gaps = idle_gaps_fire(b);
  add("late-launch-gap", ev.idle_gaps_launch_ns, gaps, "gpu-idle-gaps", "under gpu-idle-gaps' threshold");
  if (!out.empty() && out.back().cause == "late-launch-gap")
    out.back().host_recorded_ns = std::min(ev.idle_gaps_host_recorded_ns, out.back().ns);
  add("queued-gap", ev.idle_gaps_queued_ns, gaps, "gpu-idle-gaps", "under gpu-idle-gaps' threshold");
  add("comm-gap", ev.idle_gaps_comm_ns, gaps, "gpu-idle-gaps", "under gpu-idle-gaps' threshold");
  if (!out.empty() && out.back().cause == "comm-gap")
    out.back().note = "probably communication the trace did not record (held at " + ev.comm_gap_range +
                      ", no communication kernel recorded for it)" +
                      (out.back().note.empty() ? std::string() : "; " + out.back().note);
  add("unlaunched-gap", ev.idle_gaps_unlaunched_ns, gaps, "gpu-idle-gaps", "under gpu-idle-gaps' threshold");
  add("unrecorded-gap", ev.idle_gaps_unrecorded_ns, false, "",
      "ended by a stream's first op in the trace, queued before the gap (the largest " +
          dur(ev.unrecorded_largest.duration()) + ", stream " + std::to_string(ev.unrecorded_stream) + " of GPU " +
          std::to_string(ev.unrecorded_device) +
          "): the stream may have run work queued before the recording began, so whether the GPU idled is "
          "unknown; no finding");
  add("warm-up", ev.idle_gaps_warmup_ns, gaps, "gpu-idle-gaps", "a one-time cost (first calls): no finding charges it");
  if (gaps && !out.empty() && out.back().cause == "warm-up") out.back().note = "no saving claimed: a one-time cost";
  add("other", std::max<TimeNs>(0, t.idle - charged), false, "",
      "short gaps ended by queued work or dependencies, or what no part explains: no finding");
  // Input loading before a GPU's first op is no idle time of its span, but
  // the same wait: input-bound's too.
  if (const TimeNs before = ev.input_wait_before_start_ns; before > 0) {
    IdleCharge c;
    c.cause = "input-before-start";
    c.ns = before;
    if (input) c.finding = "input-bound";
    c.note = "before the GPU's first op: outside its span";
    out.push_back(std::move(c));
  }
  return out;
}

// The sentence a finding quotes for where the host was in the idle time it
// is charged ("While the GPU waited, … was in `a` → `b` in 71% of 420 host
// samples"); empty when the samples cannot say.
std::string host_where_sentence(const HostWhere& w) {
  using format::count, format::percent;
  if (w.samples < kHostWhereMinSamples || (w.path.empty() && w.leaves.empty())) return {};
  auto share = [&](std::uint64_t n) { return percent(static_cast<double>(n) / static_cast<double>(w.samples)); };
  const std::string on =
      count(w.samples) + (w.threads > 1 ? " samples on " + count(w.threads) + " threads (most on " + w.thread + ")"
                                        : " samples on " + w.thread);
  std::string leaves;
  for (std::size_t i = 0; i < w.leaves.size(); ++i)
    leaves += (i ? ", `" : "`") + w.leaves[i].frame + "` " + share(w.leaves[i].samples);
  if (w.path.empty())
    return "Host samples in that idle time show no one place (no frame is in more than half of the " + on +
           "); innermost frames: " + leaves + ".";
  std::string path = w.path_depth > w.path.size() ? "… → " : "";
  for (std::size_t i = 0; i < w.path.size(); ++i) path += (i ? " → `" : "`") + w.path[i] + "`";
  std::string s =
      "Host samples in that idle time: the host was in " + path + " in " + share(w.path_samples) + " of " + on;
  if (w.leaves.size() > 1 || (w.leaves.size() == 1 && w.leaves[0].frame != w.path.back()))
    s += " (innermost frames: " + leaves + ")";
  return s + ".";
}

void quote_host_where(Profile* p) {
  for (const HostWhere& w : p->host_while_idle) {
    const std::string sentence = host_where_sentence(w);
    if (sentence.empty()) continue;
    const auto charge = std::find_if(p->idle_charges.begin(), p->idle_charges.end(),
                                     [&](const IdleCharge& c) { return c.cause == w.cause; });
    if (charge == p->idle_charges.end() || charge->finding.empty()) continue;
    for (auto* list : {&p->findings, &p->minor_findings})
      for (Finding& f : *list)
        if (f.id == charge->finding) f.evidence += " " + sentence;
  }
}

}  // namespace gpuscope::detail
