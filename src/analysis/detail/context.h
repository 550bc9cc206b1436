// Internal to analysis/: what the passes of analyze() hand each other.
//
// analyze_job() runs, per trace: the device pass (unions, concurrency, gaps),
// the step pass, the stream/launch/copy/sync pass and HTA's breakdown; then
// across traces: categories, hotspots and launch statistics (exact medians
// over the pooled durations), skew, and finally the findings, which read the
// Profile plus the Evidence gathered on the way (time ranges to point at).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/profile.h"
#include "analysis/util/stats.h"
#include "trace/kernel_category.h"
#include "trace/trace.h"

namespace gpuscope::detail {

// One trace of a job, with its place on the job's clock.
struct RankedTrace {
  const Trace* trace = nullptr;
  std::string file;
  std::int32_t rank = 0;
  TimeNs offset = 0;  // added to this trace's times to put them on the job clock
  TimeRange shift(TimeRange r) const { return {r.start + offset, r.end + offset}; }
};

// The heaviest few time ranges of some kind, for the viewer to jump to.
class TopRanges {
 public:
  explicit TopRanges(std::size_t keep = 10) : keep_(keep) { update_bar(); }
  void set_keep(std::size_t k) {
    keep_ = k;
    update_bar();
  }
  void add(TimeRange r, TimeNs weight) {
    total_ += weight;
    ++count_;
    // Most ops are lighter than the lightest kept one: decided here, inline.
    if (weight <= bar_) return;
    push(r, weight);
  }
  // A range to keep if it is heavy enough, without counting it in total()
  // and count() (for callers that only want the ranges); the range, which
  // costs something to make, is made only if kept.
  template <class MakeRange>
  void offer(TimeNs weight, MakeRange&& make) {
    if (weight <= bar_) return;
    push(make(), weight);
  }
  void merge(const TopRanges& o) {
    for (const auto& [w, r] : o.items_) push(r, w);
    total_ += o.total_;
    count_ += o.count_;
  }
  // Heaviest first.
  std::vector<TimeRange> ranges() const {
    auto v = items_;
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<TimeRange> out;
    out.reserve(v.size());
    for (const auto& item : v) out.push_back(item.second);
    return out;
  }
  // Moves every kept range by `by` (a rank's clock offset).
  void shift(TimeNs by) {
    for (auto& item : items_) item.second = {item.second.start + by, item.second.end + by};
  }
  TimeNs total() const { return total_; }  // of every range added, kept or not
  std::uint64_t count() const { return count_; }

  // Its whole state, for a digest's binary form (analysis/job/digest_codec.h):
  // the kept (weight, range) pairs in their heap order, which decides the
  // order of equal weights in ranges().
  using Item = std::pair<TimeNs, TimeRange>;
  std::size_t keep() const { return keep_; }
  const std::vector<Item>& items() const { return items_; }
  // Nullopt when `items` is not a heap of at most `keep` items.
  static std::optional<TopRanges> restore(std::size_t keep, std::vector<Item> items, TimeNs total,
                                          std::uint64_t count) {
    if (items.size() > keep || !std::is_heap(items.begin(), items.end(), lighter)) return std::nullopt;
    TopRanges t(keep);
    t.items_ = std::move(items);
    t.total_ = total;
    t.count_ = count;
    t.update_bar();
    return t;
  }

 private:
  static bool lighter(const Item& a, const Item& b) { return a.first > b.first; }  // min-heap on weight
  [[gnu::noinline]] void push(TimeRange r, TimeNs w) {
    if (keep_ == 0) return;
    if (items_.size() < keep_) {
      items_.push_back({w, r});
      std::push_heap(items_.begin(), items_.end(), lighter);
    } else if (w > items_.front().first) {
      std::pop_heap(items_.begin(), items_.end(), lighter);
      items_.back() = {w, r};
      std::push_heap(items_.begin(), items_.end(), lighter);
    }
    update_bar();
  }
  // What a weight must exceed to be kept: anything while there is room (but
  // INT64_MIN, never a duration), else the lightest kept one's; nothing with
  // keep_ 0.
  void update_bar() {
    bar_ = keep_ == 0              ? std::numeric_limits<TimeNs>::max()
           : items_.size() < keep_ ? std::numeric_limits<TimeNs>::min()
                                   : items_.front().first;
  }
  std::size_t keep_;
  TimeNs bar_ = 0;
  std::vector<Item> items_;
  TimeNs total_ = 0;
  std::uint64_t count_ = 0;
};

// Everything findings need beyond the Profile's numbers: the members, an
// aggregate (the digest codec counts them, src/analysis/job/digest_codec.cpp),
// and Evidence, which sets how many ranges each list keeps.
struct EvidenceFields {
  std::array<TopRanges, kKernelCategoryCount> ops_by_category;  // longest single ops (ranges only: offer())
  TopRanges idle_gaps;                                          // device gaps >= thresholds.idle_gap_ns
  // The part of those gaps that input wait or the idle after a host
  // synchronization explains (what the input-bound and host-sync findings save).
  TimeNs idle_gaps_explained_ns = 0;
  TopRanges exposed_comm;              // pieces of communication nothing hides
  TopRanges memcpy_exposed;            // copies with no kernel alongside
  TopRanges launch_gaps;               // host-wait gaps shorter than idle_gap_ns (launch latency)
  TopRanges input_wait;                // GPU idle while the host loads data
  TopRanges sync_idle;                 // GPU idle right after a host synchronization
  TopRanges pageable;                  // copies with a pageable host side
  TopRanges sync_memcpy;               // blocking copy calls (their API call's range)
  TopRanges optimizer;                 // optimizer kernels running alone
  bool has_input_ranges = false;       // some trace has data-loader ranges
  TimeNs optimizer_ns = 0;             // |union of optimizer kernels|
  TimeNs optimizer_overlapped_ns = 0;  // … overlapped with other kernels or communication
  std::uint64_t optimizer_kernels = 0;
  std::uint64_t steps_with_optimizer = 0;
  // Calls that allocate or free device memory directly (cudaMalloc, cudaFree,
  // cuMemAlloc, cuMemFree and their variants; not the stream-ordered
  // …Async ones); a caching allocator makes few.
  std::uint64_t allocator_calls = 0;
  TimeNs allocator_call_ns = 0;  // time hosts spent in them
  TopRanges allocator;           // those calls
  // The idle gaps (idle_gaps) split so that the parts add up to their total:
  // the GPU idle after a host synchronization or blocking copy (host-sync's),
  // input wait (input-bound's: idle_gaps_explained_ns less the sync part),
  // and the rest by what ended the gap: warm-up (the first call of a kernel
  // before the first step ends: lazy loading, autotuning, first allocations),
  // a late host launch, work already queued (a dependency, an event wait, a
  // graph replay), or ops with no launch in the trace (which of the others
  // it was, the trace cannot tell).
  TimeNs idle_gaps_sync_ns = 0, idle_gaps_warmup_ns = 0, idle_gaps_launch_ns = 0, idle_gaps_queued_ns = 0;
  TimeNs idle_gaps_unlaunched_ns = 0;
  // Long gaps ended by work queued before them that is the first op of its
  // stream in the trace (not in idle_gaps_queued_ns): the stream may have run
  // work queued before the recording began, so whether the GPU idled is
  // unknown. How many, and the largest (its device and stream).
  TimeNs idle_gaps_unrecorded_ns = 0;
  std::uint64_t unrecorded_gaps = 0;
  // The held parts of long gaps (not in idle_gaps_queued_ns) whose ending op
  // was launched in a host range named for communication (is_comm_range_name)
  // that launched no communication kernel the trace records, or in one the
  // launching thread entered during the gap: most likely communication the
  // trace did not record. How many gaps, the largest held part and its
  // range's name.
  TimeNs idle_gaps_comm_ns = 0;
  std::uint64_t comm_gaps = 0;
  TimeNs comm_gap_largest_ns = 0;
  std::string comm_gap_range;
  TimeRange unrecorded_largest{0, 0};
  std::uint32_t unrecorded_device = 0, unrecorded_stream = 0;
  // The part of input_wait before a GPU's first op (outside its span, so
  // outside its idle time).
  TimeNs input_wait_before_start_ns = 0;
  std::uint64_t idle_gaps_warmup = 0;  // gaps ended by warm-up
  // Of the warm-up gaps, those at least half inside CUDA graph captures (the
  // host recording launches into a graph): how many, their time in captures.
  std::uint64_t idle_gaps_capture = 0;
  TimeNs idle_gaps_capture_ns = 0;
  // Of the warm-up gaps' time, the part said warm-up only because a kernel's
  // first call in a trace without steps ended it: such a trace cannot tell
  // warm-up from the program's own pauses, so gpu-idle-gaps keeps it in the
  // share that numbers it.
  TimeNs idle_gaps_warmup_unsure_ns = 0;
  // Where the launching thread was during the gaps late launches ended: the
  // innermost op, range or API call over each instant, Σ by name, sorted by
  // name ("": nothing recorded).
  std::vector<std::pair<std::string, TimeNs>> idle_gaps_host;
  std::vector<std::pair<std::string, TimeNs>> idle_gaps_host_ops;  // the same by the outermost framework op
  // Of that time, the part inside recorded host work (an op, a range, a
  // runtime call) with no data-loading range open around it: the host's own
  // work, not a wait for input.
  TimeNs idle_gaps_host_recorded_ns = 0;
  // … by the innermost range the program named around it (an NVTX range, a
  // record_function or user annotation; not a framework op, a Python
  // function or a step's range), and of that the device allocator's calls.
  std::vector<std::pair<std::string, TimeNs>> idle_gaps_host_named, idle_gaps_allocator_named;
  // Kernels counted as the weight update: optimizer kernels by name, and the
  // kernels launched inside the optimizer's ops (PyTorch's
  // "Optimizer.step#SGD.step"), communication aside.
  TimeNs optimizer_kernel_ns = 0;  // Σ their durations
  // Kernels launched inside the optimizer's ops, of them named optimizer
  // kernels (foreach/fused: multi_tensor_apply, fused Adam), Σ their durations.
  std::uint64_t optimizer_op_kernels = 0, optimizer_op_named_kernels = 0;
  TimeNs optimizer_op_kernel_ns = 0;
  // Attention done eagerly (attention_pass): a softmax kernel with a GEMM
  // among the few kernels before it and among the few after it on its stream.
  std::uint64_t attention_chains = 0;
  TimeNs attention_chain_ns = 0;       // Σ durations of the chains' kernels, GEMM to GEMM
  TimeNs attention_chain_gemm_ns = 0;  // … of which their GEMMs
  // The held parts of gaps (of idle_gaps_queued_ns) whose op's launching
  // thread called a stream-wait (cudaStreamWaitEvent, hipStreamWaitEvent)
  // since its previous launch, Σ, and that call's name (the first seen; ""
  // if none).
  std::string held_wait_call;
  TimeNs held_wait_ns = 0;
  // … of which ended by ops a graph launch (cudaGraphLaunch) queued.
  TimeNs held_graph_ns = 0;
  // GPU idle while the driver staged the bytes of the host-to-device copy
  // from pageable memory that ended the gap (from its call's start, or the
  // gap's, to the copy's start; input wait and syncs aside), in gaps of any
  // length, and how many gaps. In long gaps it counts as explained
  // (idle_gaps_explained_ns): pageable-memcpy's, not gpu-idle-gaps'.
  TimeNs staging_idle_ns = 0;
  std::uint64_t staging_gaps = 0;
  TimeNs idle_gaps_staging_ns = 0;  // … of which in long gaps (idle_gaps)
};
// Adds `from` to `into`, both sorted by name, summing the times of a name.
inline void merge_by_name(std::vector<std::pair<std::string, TimeNs>>* into,
                          const std::vector<std::pair<std::string, TimeNs>>& from) {
  std::vector<std::pair<std::string, TimeNs>> out;
  std::merge(into->begin(), into->end(), from.begin(), from.end(), std::back_inserter(out),
             [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t n = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (n > 0 && out[n - 1].first == out[i].first) {
      out[n - 1].second += out[i].second;
      continue;
    }
    if (n != i) out[n] = std::move(out[i]);
    ++n;
  }
  out.resize(n);
  *into = std::move(out);
}

struct Evidence : EvidenceFields {
  explicit Evidence(std::size_t keep = 10) {
    for (auto& t : ops_by_category) t.set_keep(keep);
    for (TopRanges* t : {&idle_gaps, &exposed_comm, &memcpy_exposed, &launch_gaps, &input_wait, &sync_idle, &pageable,
                         &sync_memcpy, &optimizer, &allocator})
      t->set_keep(keep);
  }
  // Calls f on every TopRanges of `e`, in one fixed order.
  template <class Self, class F>
  static void each_ranges(Self& e, F&& f) {
    for (auto& t : e.ops_by_category) f(t);
    f(e.idle_gaps), f(e.exposed_comm), f(e.memcpy_exposed), f(e.launch_gaps), f(e.input_wait), f(e.sync_idle);
    f(e.pageable), f(e.sync_memcpy), f(e.optimizer), f(e.allocator);
  }
  void shift(TimeNs by) {
    each_ranges(*this, [&](TopRanges& t) { t.shift(by); });
    if (unrecorded_gaps) unrecorded_largest = {unrecorded_largest.start + by, unrecorded_largest.end + by};
  }
  // Adds another trace's evidence (on the same clock).
  void merge(const Evidence& o) {
    std::vector<const TopRanges*> theirs;
    each_ranges(o, [&](const TopRanges& t) { theirs.push_back(&t); });
    std::size_t i = 0;
    each_ranges(*this, [&](TopRanges& t) { t.merge(*theirs[i++]); });
    has_input_ranges = has_input_ranges || o.has_input_ranges;
    optimizer_ns += o.optimizer_ns;
    optimizer_overlapped_ns += o.optimizer_overlapped_ns;
    optimizer_kernels += o.optimizer_kernels;
    steps_with_optimizer += o.steps_with_optimizer;
    allocator_calls += o.allocator_calls;
    allocator_call_ns += o.allocator_call_ns;
    idle_gaps_sync_ns += o.idle_gaps_sync_ns, idle_gaps_warmup_ns += o.idle_gaps_warmup_ns;
    idle_gaps_launch_ns += o.idle_gaps_launch_ns, idle_gaps_queued_ns += o.idle_gaps_queued_ns;
    idle_gaps_unlaunched_ns += o.idle_gaps_unlaunched_ns;
    idle_gaps_unrecorded_ns += o.idle_gaps_unrecorded_ns;
    staging_idle_ns += o.staging_idle_ns, staging_gaps += o.staging_gaps;
    idle_gaps_staging_ns += o.idle_gaps_staging_ns;
    unrecorded_gaps += o.unrecorded_gaps;
    idle_gaps_comm_ns += o.idle_gaps_comm_ns, comm_gaps += o.comm_gaps;
    if (o.comm_gap_largest_ns > comm_gap_largest_ns)
      comm_gap_largest_ns = o.comm_gap_largest_ns, comm_gap_range = o.comm_gap_range;
    if (o.unrecorded_largest.duration() > unrecorded_largest.duration())
      unrecorded_largest = o.unrecorded_largest, unrecorded_device = o.unrecorded_device,
      unrecorded_stream = o.unrecorded_stream;
    idle_gaps_warmup += o.idle_gaps_warmup;
    idle_gaps_capture += o.idle_gaps_capture, idle_gaps_capture_ns += o.idle_gaps_capture_ns;
    idle_gaps_warmup_unsure_ns += o.idle_gaps_warmup_unsure_ns;
    merge_by_name(&idle_gaps_host, o.idle_gaps_host);
    merge_by_name(&idle_gaps_host_ops, o.idle_gaps_host_ops);
    idle_gaps_host_recorded_ns += o.idle_gaps_host_recorded_ns;
    merge_by_name(&idle_gaps_host_named, o.idle_gaps_host_named);
    merge_by_name(&idle_gaps_allocator_named, o.idle_gaps_allocator_named);
    input_wait_before_start_ns += o.input_wait_before_start_ns;
    optimizer_kernel_ns += o.optimizer_kernel_ns;
    optimizer_op_kernels += o.optimizer_op_kernels, optimizer_op_named_kernels += o.optimizer_op_named_kernels;
    optimizer_op_kernel_ns += o.optimizer_op_kernel_ns;
    attention_chains += o.attention_chains;
    attention_chain_ns += o.attention_chain_ns;
    attention_chain_gemm_ns += o.attention_chain_gemm_ns;
    if (held_wait_call.empty()) held_wait_call = o.held_wait_call;
    held_wait_ns += o.held_wait_ns;
    held_graph_ns += o.held_graph_ns;
  }
};

// What a rank's digest keeps beyond its Profile (job/job.h): the findings'
// evidence (own clock) and the durations as mergeable sketches.
struct RankParts {
  Evidence evidence;
  struct Name {
    std::string name;
    KernelCategory category = KernelCategory::other;
    DurationSketch durations;
  };
  std::vector<Name> names;               // kernels on the analysed GPUs, by name (sorted)
  std::array<DurationSketch, 3> launch;  // CPU launch time, GPU time, launch delay (OpTotals' order)
};

// analyze.cpp: the Profile's sums over steps, its skew, and the traces'
// statistics added to it (for one trace or a job's digests).
void summarize_steps(Profile* p);
void compute_skew(Profile* p);
void add_stats(const NamedCounts& stats, Profile* p);

// The op table's kernels (ops/op_table.cpp): the heaviest `rows` rows of each table
// (at most 32) get their `kernels` heaviest kernels.
struct OpKernelLimits {
  std::size_t rows = 20, kernels = 5;  // what reports show
};
// What a rank's digest keeps, so that a job's top rows are the sum of its ranks' rows.
inline constexpr OpKernelLimits kDigestOpKernels{32, 16};

// analyze.cpp: one trace's Profile (rank and clock offset as `rt` says),
// with the evidence its findings came from.
Profile analyze_trace(const RankedTrace& rt, const AnalysisOptions& opt, Evidence* evidence,
                      const OpKernelLimits& op_kernels = {});

// The causes of a GPU's idle time, as IdleCharge names them (idle_cause_name).
enum class IdleCause : std::uint8_t {
  input_wait,
  host_sync,
  blocking_copy,
  late_launch,
  late_launch_gap,
  queued_gap,
  unlaunched_gap,
  unrecorded_gap,
  warm_up,
  other,
  input_before_start,
  pageable_staging,
};
inline constexpr int kIdleCauseCount = 12;
std::string_view idle_cause_name(IdleCause c);
// Whether a host range's name marks communication (case-insensitive):
// all_to_all / alltoall / all2all / a2a, all_gather / allgather,
// reduce_scatter / reducescatter, all_reduce / allreduce, and send or recv
// as a word (sendrecv, isend, irecv, send_recv). The held-gap rule reads it
// (docs/findings.md, gpu-idle-gaps).
bool is_comm_range_name(std::string_view name);
// A stretch [start, end) of a device's idle time and what it waited for.
// `thread`: the CPU track whose launch ended it (kNone: none known). The
// pieces of one gap can overlap (input loading during a gap after a sync):
// input wait comes first, then the sync, then what ended the gap.
struct IdlePiece {
  static constexpr TrackId kNone = ~TrackId{0};
  TimeNs start = 0, end = 0;
  TrackId thread = kNone;
  std::uint32_t device = 0;
  IdleCause cause = IdleCause::other;
};

// What the device sweep gathers op by op for the job-wide passes (hotspots,
// launch statistics), so that those do not scan every op again: one pass
// over the columns instead of three.
struct OpTotals {
  struct Name {
    std::uint64_t count = 0;
    TimeNs total = 0, min = 0, max = 0;
    std::uint8_t category = 0;  // KernelCategory
  };
  // Per trace of the job, per StringId of a kernel name: its kernels' durations.
  std::vector<std::vector<Name>> by_name;
  // CPU launch time, GPU time and launch delay of every op with a launching
  // call but a graph launch or a synchronous copy call: the device passes sample one op in BracketMedian::kStride, the
  // stream passes add every op, launch_pass() finishes.
  enum { kCpu, kGpu, kDelay };
  std::array<BracketMedian, 3> launch;
  std::uint32_t countdown = 1;  // ops until the next sampled one
  std::uint64_t short_kernels = 0, runtime_outliers = 0, launch_delay_outliers = 0;
  // Ops replayed by a graph launch, and copies by a synchronous copy call:
  // left out of the launch statistics.
  std::uint64_t graph_ops = 0, synchronous_copies = 0;
  std::uint64_t backlog_ops = 0;  // LaunchStats::backlog_ops
  // (launching API call, GPU idle it ended) of each idle gap shorter than
  // the idle-gap threshold that a late launch ended, in no particular order:
  // the op table charges them to the op that launched (OpRow::starved_ns).
  std::vector<std::pair<RowIndex, TimeNs>> late_launches;
  // The pieces of each GPU's idle time by cause, kept only when the trace
  // has host samples (host_where_pass reads where the host was in them).
  std::vector<IdlePiece> idle_pieces;
};

// [SECTION] Passes (one .cpp each)

// Where a step of find_steps() came from, so that the same rule can be
// applied to other timings of the same trace (the dependency graph's replay):
// a CPU range on a thread, ended by the GPU work its calls launched to the
// step's device (or, when that thread launched nothing, by the range itself);
// or, for steps found from the kernel pattern, the kernels that begin it and
// the next one on the device's busiest stream (`pattern` is also set for
// steps from bursts: the first op of the burst, on its stream, and the start
// of the next burst's).
struct StepOrigin {
  bool pattern = false;
  TrackId track = 0;         // the CPU range's thread, or (pattern) the GPU stream of the anchors
  TimeRange range;           // the CPU range, or (pattern) the anchors' starts, before any clipping
  bool own_launches = true;  // CPU: the step ends with the ops its thread launched (false: with the range)
  bool last = false;         // pattern: the last step, ended by the end of its kernels, not by a next anchor
};

// passes/steps.cpp: the steps of one trace (ranges, names, devices; in the trace's
// own clock, no breakdown yet), non-overlapping per device. With `origins`,
// also where each step came from (origins[i] for (*steps)[i] of the steps added).
// With `why_none`, why a repeating kernel pattern was not taken for steps
// (it repeats inside one call: a model's layers), when that is so; with
// `how`, how steps found on the GPU (pattern, bursts) were found.
// With `early`, the ops of the devices' first steps that started before
// the step did on the GPU, beside the work queued ahead of it (left out of
// the step's time: StepSummary::early_ops), and the work queued ahead of
// those steps (StepSummary::backlog_ops).
struct EarlyOps {
  std::uint64_t ops = 0;
  TimeNs ns = 0;  // Σ their durations
  std::uint64_t backlog_ops = 0;
  TimeNs backlog_ns = 0;  // Σ their durations
  // The backlog's kernels by category (StepSummary::backlog_categories).
  std::array<TimeNs, kKernelCategoryCount> category_ns{};
  std::array<std::uint64_t, kKernelCategoryCount> category_count{};
};
StepSource find_steps(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<Step>* steps,
                      std::vector<StepOrigin>* origins = nullptr, std::string* why_none = nullptr,
                      std::string* how = nullptr, EarlyOps* early = nullptr);
// passes/steps.cpp: the host's step ranges (ProfilerStep#N, NVTX step ranges).
std::uint64_t step_ranges_on_host(const Trace& t);

// passes/steps.cpp: the steps' time outside their GPU's work (before its first op,
// after its last; all in the shifted clock) and the longest host ranges
// wholly inside it, added to `out`.
void steps_outside_gpu(const RankedTrace& rt, const std::vector<DeviceSummary>& devices, const std::vector<Step>& steps,
                       StepSummary* out);
// passes/steps.cpp: what the host did in the GPU idle before each step's
// first op (Step::lead_idle_ns; steps in the shifted clock): the time its
// thread's recorded ranges and runtime calls cover, the part in ranges
// named as data loading, and the outermost ranges by name
// (StepSummary::lead_recorded_ns, lead_input_ns, lead_ranges), added to `out`.
void steps_lead_host(const RankedTrace& rt, const std::vector<Step>& steps, StepSummary* out);
// passes/steps.cpp: for the steps from ranges (in the shifted clock), the
// host's time issuing each one's GPU work (StepSummary::host_issue_ns),
// added to `out`.
void steps_host_issue(const RankedTrace& rt, const std::vector<Step>& steps, StepSummary* out);
// The steps a fifth slower than their GPU's median step or more, and what
// grew (StepSummary::slow_steps); for steps from ranges.
void steps_slow(const RankedTrace& rt, const std::vector<DeviceSummary>& devices, const std::vector<Step>& steps,
                StepSummary* out);
// names.cpp: whether a host range's name is data loading, widely: an input
// range (is_input_range_name), or a Python frame of torch.utils.data, a
// dataset, collation, a fetch, tokenizing or a file read (a bare __getitem__
// is no dataset's: os.environ has one).
bool is_data_loading_frame(std::string_view name);
// findings/helps.cpp: the `gpuscope whatif` change whose replay the
// "mixed precision?" answer quotes (fp32 math on the tensor cores, TF32: the
// no-tensor-cores rule's fix, narrowed to the trace's categories), where it
// needs one; empty otherwise. simulation_plan() replays it.
std::string precision_replay_change(const Profile& p);
// Adds `add` to `into` by name (times and counts summed), keeping the
// longest 5 names, most first (a job's ranks, one after another).
void merge_host_ranges(const std::vector<HostRange>& add, std::vector<HostRange>* into);
inline constexpr std::size_t kInputWorkNames = 16;  // WorkloadKind::input_work
// Python function ranges from which a trace counts as recorded under
// PyTorch's Python tracer (a few stray ones are not a tracer's).
inline constexpr std::uint64_t kTracedPythonRanges = 100;
// A first GPU op this long after its launch, with nothing recorded on the
// GPU before it, is no launch delay (LaunchStats::first_op_delay_ns).
inline constexpr TimeNs kClockDisagreeNs = 1'000'000;

// passes/device_pass.cpp: a DeviceSummary and HTA's temporal breakdown per GPU, the
// breakdown of `steps`, GPU idle after host synchronizations, and evidence;
// per-name and launch totals into `totals` (this trace's by_name is `names`);
// with `exposed_comm`, every piece of communication no compute kernel hides,
// per device, on the trace's clock, in time order and disjoint; with
// `copies_alone`, the same of the copies no kernel runs beside.
using ExposedCommunication = std::map<std::uint32_t, std::vector<TimeRange>>;
void device_pass(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<Step>& steps, Profile* p,
                 std::vector<DeviceSummary>* summaries, std::vector<TemporalBreakdown>* hta, Evidence* ev,
                 OpTotals* totals, std::vector<OpTotals::Name>* names, ExposedCommunication* exposed_comm = nullptr,
                 ExposedCommunication* copies_alone = nullptr);

// passes/host_samples.cpp: where the host was during each cause's idle time
// (Profile::host_while_idle), from the trace's host samples and the device
// pass's idle pieces. Nothing when the trace has no host samples.
bool has_host_samples(const Trace& t);
void host_where_pass(const RankedTrace& rt, std::vector<IdlePiece> pieces, Profile* p);

// passes/attention.cpp: eager attention chains (softmax between two GEMMs on a
// stream) into ev's attention_chain* sums.
void attention_pass(const RankedTrace& rt, const AnalysisOptions& opt, Evidence* ev);

// passes/streams.cpp: idle by cause and queue depth per stream, host synchronization
// counts, copies; every launched op into totals.launch (bracket() called).
// `copies_alone` (device_pass's): each copy group's time with no kernel beside it.
void stream_pass(const RankedTrace& rt, const AnalysisOptions& opt, OpTotals& totals, Profile* p, Evidence* ev,
                 const ExposedCommunication& copies_alone = {});

// A synchronization stream_pass counted (no CUDA graph set-up's): its host
// thread, its times on the trace's own clock, and its API call (kNoRow:
// unknown).
struct HostSyncCall {
  TrackId thread;
  TimeNs start, end;
  RowIndex api;
};
// passes/sync_sites.cpp: of those and the blocking copies, the ones between
// the steps' launches, where they are, and the named ranges under the steps
// (SyncStats::mid_step…).
void sync_site_pass(const RankedTrace& rt, const AnalysisOptions& opt, const std::vector<HostSyncCall>& calls,
                    Profile* p);
// Their order in SyncStats (a job's merge keeps it): sites by count, then
// blocked time; parts by launches.
void sort_sync_sites(std::vector<SyncSite>& sites);
void sort_step_parts(std::vector<StepPart>& parts);

// passes/hotspots.cpp: a Python frame of torch's own modules (nn.Module
// plumbing, functional wrappers): not where the program decided to launch.
bool torch_frame(std::string_view f);

// How a copy blocks the host: its launching call returns only once the GPU's
// queue has drained (and the copy is done), like a synchronization.
enum class CopyBlock : std::uint8_t {
  none,
  call,      // a blocking copy call (cudaMemcpy, not …Async)
  pageable,  // a copy to or from pageable host memory
  scalar,    // the device-to-host copy of .item() (aten::_local_scalar_dense)
};
struct BlockingCopy {
  RowIndex row = kNoRow;  // the memcpy row
  RowIndex api = kNoRow;  // its launching call
  CopyBlock how = CopyBlock::none;
};
// passes/streams.cpp: the copies of a trace that block the host, in row order
// (host-to-device copies <= thresholds.sync_memcpy_htod_exempt_bytes are
// staged by the driver and exempt); copy groups by most time first.
std::vector<BlockingCopy> blocking_copies(const Trace& t, const AnalysisOptions& opt);
void sort_copy_groups(std::vector<CopyGroup>& groups);
// passes/streams.cpp: whether an API call synchronizes the host with the GPU
// (cu…Synchronize…, hip…Synchronize…), for traces without synchronization
// records.
bool is_sync_api(std::string_view name);
// passes/streams.cpp: whether sync record `i` was made by a call that polls
// and returns at once (cudaEventQuery, cudaStreamQuery: CUPTI files them as
// event synchronizations), so the host never waited in it.
bool is_poll_sync(const Trace& t, std::size_t i);
// Calls that replay a CUDA or HIP graph (cudaGraphLaunch, cuGraphLaunch,
// hipGraphLaunch): one call starts every op of the graph, so its duration
// and the delay from its end to each op are not per-launch figures.
inline bool is_graph_launch_name(std::string_view n) {
  return n.starts_with("cudaGraphLaunch") || n.starts_with("cuGraphLaunch") || n.starts_with("hipGraphLaunch");
}
// A synchronous copy call (cudaMemcpy, cuMemcpyDtoH_v2, hipMemcpyWithStream:
// a CUDA or HIP call with "emcpy" and without "Async" in its name): the host waits in it for its stream and the copy,
// so it is not an asynchronous launch, and its duration and delay are not
// launch figures (nsys's cuda_memcpy_sync rule looks for the same calls).
inline bool is_synchronous_copy_name(std::string_view n) {
  return (n.starts_with("cu") || n.starts_with("hip")) && n.find("emcpy") != std::string_view::npos &&
         n.find("Async") == std::string_view::npos;
}
// What kind of launch each API call of a trace is, by its name: a graph
// launch, a synchronous copy call, or any other (an asynchronous launch).
// Nothing to test (and no cost per call) where the trace names neither.
class LaunchCalls {
 public:
  enum Kind : std::uint8_t { kAsync = 0, kGraph = 1, kSynchronousCopy = 2 };
  explicit LaunchCalls(const Trace& t);
  Kind operator()(RowIndex call) const { return by_name_.empty() ? kAsync : Kind(by_name_[name_[call]]); }

 private:
  const StringId* name_ = nullptr;
  std::vector<std::uint8_t> by_name_;  // Kind per StringId; empty: all kAsync
};

// passes/hotspots.cpp: categories, hotspots and launch statistics over all traces,
// from the totals the device passes gathered (plus the scans exact medians need).
void hotspot_pass(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, const OpTotals& totals,
                  Profile* p);
// The op table (ops/op_table.cpp): Profile::ops, op_names, op_summary, devices' achieved_tflops.
// `kernel_names`: the device pass's per-name counts of this trace
// (OpTotals::by_name), where the kernels under the top rows take the trace's
// kernel names from when they count every kernel (else a scan finds them).
void op_pass(const Trace& trace, Profile* p, const OpKernelLimits& limits = {},
             std::vector<std::pair<RowIndex, TimeNs>> late_launches = {},
             const std::vector<OpTotals::Name>* kernel_names = nullptr);
// A job's op table from its ranks' tables (in rank order; their kernels kept
// as `kept` says): rows of the same name (and shapes and types) summed, rates
// recomputed, the top rows' kernels merged (none for a row that some rank
// had outside its kept rows).
void pool_op_tables(const std::vector<const Profile*>& ranks, const OpKernelLimits& kept, Profile* job);
// The op summary of one trace alone (gpuscope::op_summary).
OpSummary trace_op_summary(const Trace& t);
// Forward and backward GPU time per nn.Module (ops/module_split.cpp):
// Profile::module_split, left unknown for a trace without sequence numbers.
void module_pass(const Trace& t, Profile* p);
// A job's split from its ranks' (summed by module name); its rows ordered as one trace's.
void pool_module_splits(const std::vector<const Profile*>& ranks, Profile* job);
void sort_modules(std::vector<ModuleTime>& modules);

void launch_pass(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, OpTotals& totals, Profile* p);

// passes/memory.cpp: memory peaks per device (`devices`, this trace's) and per step
// (`steps`, in the trace's own clock), from the memory series; allocator
// calls into `ev`.
void memory_pass(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<DeviceSummary>& devices,
                 std::vector<Step>& steps, Evidence* ev);

// passes/hardware.cpp: DeviceSummary::hw from the trace's hardware series (steps and
// windows before the rank's clock shift is applied to the steps).
void hardware_pass(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<DeviceSummary>& devices,
                   std::vector<Step>& steps);

// findings/registry.cpp
std::vector<Finding> find_problems(const Profile& p, const Evidence& ev, const AnalysisOptions& opt);
// Whether a finding's fix saves time that matters (kMaterialShare): a
// simulated one makes the median step that much shorter, a rule of thumb
// saves that share of the run.
bool saves_materially(const Profile& p, const Finding& f);
// findings/idle.cpp: the GPUs' idle time by cause, each part with the finding
// of p.findings that charges it (Profile::idle_charges).
std::vector<IdleCharge> charge_idle(const Profile& p, const Evidence& ev, const AnalysisOptions& opt);
// Adds to each finding charged a part of the idle time where the host was
// then, when the host samples can say (Profile::host_while_idle).
void quote_host_where(Profile* p);

// passes/workload.cpp: what the traced program is (from its ops' and kernels'
// names, its graph ids and its metadata), a job's from its ranks', and the
// findings' advice fitted to it.
WorkloadKind recognise_workload(const Trace& t);
WorkloadKind pool_workloads(const std::vector<const WorkloadKind*>& ranks);
// The optimizer's kind (WorkloadKind::optimizer), from the op table, the
// hotspots and the kernels counted inside the optimizer's steps.
void recognise_optimizer(const Profile& p, const Evidence& ev, const FindingThresholds& th, WorkloadKind* w);
// Copies launched inside compiled regions, said with the execution's evidence.
void note_compiled_copies(const MemcpyStats& m, WorkloadKind* w);
// `graph`: the vendor's word for a captured graph ("CUDA graph", "HIP graph": graph_word_of()).
void fit_to_workload(const WorkloadKind& w, std::vector<Finding>& findings, std::string_view graph = "CUDA graph");
// "HIP graph" where a GPU of the profile is plainly not NVIDIA's, else "CUDA graph".
std::string_view graph_word_of(const std::vector<DeviceSummary>& devices);
// The CUDA (HIP) graph captures of a trace: each thread's
// cudaStreamBeginCapture (cuStreamBeginCapture, hipStreamBeginCapture) to
// its next EndCapture. The launches between them record into the graph and
// run nothing then: its work runs where the graph is launched.
struct GraphCaptures {
  std::vector<TimeRange> windows;  // their union, in time order (an intervals::IntervalSet)
  std::uint64_t captures = 0;      // begin-end pairs
  std::uint64_t launches = 0;      // launch and async copy calls inside them, on the capturing thread
  TimeNs last_end = 0;             // where the last one ends
  StringId begin = StringTable::kNoString, end = StringTable::kNoString;  // the calls' names, as recorded
  std::vector<std::pair<TrackId, TimeRange>> each;                        // each capture: its thread and window
  // The graphs' instantiation (cudaGraphInstantiate, hipGraphInstantiateWithFlags, …): calls, host time, a name.
  std::uint64_t instantiates = 0;
  TimeNs instantiate_ns = 0;
  StringId instantiate = StringTable::kNoString;
};
GraphCaptures graph_captures(const Trace& t);
// The one-time set-up of CUDA (HIP) graphs: each capture from its
// BeginCapture to the end of the graph's first run (the GPU work of its
// thread's first graph launch after the EndCapture, which a recorder such as
// torch's cudagraph trees runs once and synchronises after), or to the
// EndCapture where no launch follows; and the ranges of torch's cudagraph
// trees recording a graph. A synchronization the host makes in it waits for
// set-up, once, not for a step; nothing a user changes removes it.
class GraphSetup {
 public:
  explicit GraphSetup(const Trace& t);
  bool any() const { return !phases_.empty(); }
  // Whether a host call on `thread` that begins at `at` lies in the set-up.
  bool holds(TrackId thread, TimeNs at) const;
  // The set-up of every thread, its union in time order; `captures_only`:
  // the captures up to their graphs' first runs, not the recorder's ranges
  // (which may hold the recorder's own launches).
  std::vector<TimeRange> windows(bool captures_only = false) const;

 private:
  struct Phase {
    TrackId thread;
    TimeRange range;
    bool capture;  // a capture up to its graph's first run, not a recording range
  };
  std::vector<Phase> phases_;  // in no order
};
// torch's cudagraph trees recording a graph: its Python frames
// ("torch/_inductor/cudagraph_trees.py(2205): record_function", "…: _record")
// and its timed range ("CUDAGraphNode.record (dynamo_timed)").
bool cudagraph_recording_name(std::string_view n);

// [SECTION] Small shared helpers

inline bool on_device(const Trace& t, TrackId track, std::uint32_t device_filter) {
  const Track& tr = t.tracks()[track];
  return tr.kind == TrackKind::gpu && (device_filter == kNoDevice || tr.device == device_filter);
}

// Case-insensitive substring search: gpuscope::contains_nocase (trace/kernel_category.h).

// PyTorch's profiler's step ranges ("ProfilerStep#12").
inline bool is_profiler_step(std::string_view name) { return name.starts_with("ProfilerStep#"); }
// A step's range by its name: ProfilerStep#N, or a loop's own ("step 3",
// "train_step", "iteration 12": passes/steps.cpp).
bool is_step_range_name(std::string_view name);
// PyTorch's optimizer step ranges ("Optimizer.step#SGD.step"); with
// `phase`, any of its phases ("Optimizer.zero_grad#SGD.zero_grad" too).
inline bool is_optimizer_step(std::string_view name) { return name.starts_with("Optimizer.step#"); }
// torch.compile's regions: the ops inside ran compiled code ("Torch-Compiled
// Region: 0/0", CompiledFunction, CompiledFxGraph).
inline bool is_compiled_region(std::string_view name) {
  return name.find("Torch-Compiled Region") != std::string_view::npos ||
         name.find("CompiledFunction") != std::string_view::npos ||
         name.find("CompiledFxGraph") != std::string_view::npos || name.find("torch_compile") != std::string_view::npos;
}
inline bool is_optimizer_phase(std::string_view name) { return name.starts_with("Optimizer."); }
// Whether an op row's path (OpRow::path: the ops around its first call,
// outermost first, " > " between) names an op that passes `pred`.
template <class Pred>
bool path_has(std::string_view path, Pred&& pred) {
  for (std::size_t at = 0; at < path.size();) {
    const std::size_t end = std::min(path.find(" > ", at), path.size());
    if (pred(path.substr(at, end - at))) return true;
    at = end + 3;
  }
  return false;
}

// DDP's gradient all-reduce as its buckets, from the collective sites (the
// same all-reduce, by size and place in the step, seen in two steps or
// more): where DDP is recognised and one bucket holds most of the bytes
// all-reduced per step with no compute kernel beside it, DDP already
// launched it when its gradients were ready and nothing was left to hide it
// under (findings/overlap.cpp).
struct DdpOneBucket {
  std::vector<std::uint64_t> sizes;  // the buckets' bytes per step, largest first
  double share = 0;                  // the largest's share of the bytes all-reduced per step
  double under_compute = 0;          // the share of its time a compute kernel ran beside it
  TimeNs exposed_ns = 0;             // its exposed time, Σ instances and GPUs
  // "99.9% of the bytes all-reduced per step are in one 1.67 GiB bucket (2
  // buckets per step, …: 1.67 GiB, 1.4 MiB), with no compute kernel beside
  // it: nothing was left to hide it under".
  std::string words() const;
};
std::optional<DdpOneBucket> ddp_one_bucket(const Profile& p);

// Whether a CPU range is the host loading input (PyTorch's
// "enumerate(DataLoader)#…", NVTX "data"/"load batch", …).
bool is_input_range_name(std::string_view name);
// names.cpp: whether an API call starts what only a program's start makes
// (initialising CUDA, creating a context, loading a module).
bool is_start_api(std::string_view name);
// names.cpp: whether an API call sets up what a program uses from then on
// (initialising CUDA, creating a context, loading a module, creating a
// stream or a library's handle): a one-time cost, not the program's steady work.
bool is_setup_api(std::string_view name);
// passes/memory.cpp: cudaMalloc, cudaFree, cuMemAlloc_v2, cuMemFree,
// cudaMallocManaged, hipMalloc, … but not the stream-ordered (…Async) calls,
// nor pinned host memory (…Host).
bool is_allocator_call(std::string_view name);
// passes/memory.cpp: a range the program named for emptying caches
// ("[param|clear_cache]", "flush_l2", "empty_cache"): a benchmark's
// cold-cache set-up before the iteration it measures.
bool is_cache_flush_name(std::string_view name);

// Whether some string of the trace passes `pred`: a pass that reads every
// row for the rows of a few names can be skipped when no name is one of
// them (strings are far fewer than rows).
template <class Pred>
bool any_string(const Trace& t, Pred&& pred) {
  for (StringId id = 0; id < t.strings().size(); ++id)
    if (pred(t.str(id))) return true;
  return false;
}

inline double ratio(TimeNs a, TimeNs b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

// A test of names, made once per string of the trace and kept: a pass over
// rows asks about far fewer names than rows. The table is made on the first
// question only.
template <class Named>
class NameMemo {
 public:
  NameMemo(const Trace& t, Named named) : t_(t), named_(named) {}
  bool operator()(StringId name) {
    if (is_.empty()) is_.assign(t_.strings().size(), -1);
    std::int8_t& s = is_[name];
    if (s < 0) s = named_(t_.str(name)) ? 1 : 0;
    return s != 0;
  }

 private:
  const Trace& t_;
  Named named_;
  std::vector<std::int8_t> is_;  // per string: -1 not decided, 0 no, 1 yes
};

// Whether an API call ran inside an op whose name passes `named`: its
// launching op or one around it (at most 64 levels up), each name tested once.
template <class Named>
class InsideOpNamed {
 public:
  InsideOpNamed(const Trace& t, Named named) : t_(t), named_(t, named) {}
  bool operator()(RowIndex call) {
    const RangeTable& rg = t_.ranges();
    for (RowIndex r = t_.api_calls().op_range_at(call), depth = 0; r != kNoRow && depth < 64;
         r = t_.parent_op(r), ++depth)
      if (named_(rg.name[r])) return true;
    return false;
  }

 private:
  const Trace& t_;
  NameMemo<Named> named_;
};

}  // namespace gpuscope::detail
