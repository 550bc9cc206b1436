// Per stream and per host thread: idle time by cause, host synchronizations,
// copies.
//
// [SECTION] Idle by cause per stream
// [SECTION] Host synchronizations
// [SECTION] Copies
// [SECTION] Blocking copies (shared with the device pass)
// [SECTION] Entry point
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analysis/detail/context.h"
#include "analysis/util/intervals.h"

namespace gpuscope::detail {

namespace {

// [SECTION] Idle by cause per stream ---------------------------------------------------------

// The ops of one stream (kernels, memcpys, memsets) in start order: a 3-way
// merge of the tables' rows on the track.
template <class F>
void for_each_op_in_order(const Trace& t, TrackId track, F&& f) {
  struct Cur {
    const TimeNs* start;
    const TimeNs* end;
    const RowIndex* api;
    RowRange rows;
  };
  Cur c[3] = {
      {t.kernels().start.data(), t.kernels().end.data(), t.kernels().api.data(), t.rows_of(TableId::kernels, track)},
      {t.memcpys().start.data(), t.memcpys().end.data(), t.memcpys().api.data(), t.rows_of(TableId::memcpys, track)},
      {t.memsets().start.data(), t.memsets().end.data(), t.memsets().api.data(), t.rows_of(TableId::memsets, track)}};
  // One table only (most streams): no merge.
  for (int i = 0; i < 3; ++i) {
    if (c[(i + 1) % 3].rows.empty() && c[(i + 2) % 3].rows.empty()) {
      for (RowIndex r = c[i].rows.begin; r < c[i].rows.end; ++r) f(c[i].start[r], c[i].end[r], c[i].api[r]);
      return;
    }
  }
  for (;;) {
    int best = -1;
    for (int i = 0; i < 3; ++i)
      if (!c[i].rows.empty() && (best < 0 || c[i].start[c[i].rows.begin] < c[best].start[c[best].rows.begin])) best = i;
    if (best < 0) return;
    // The earliest next start of the other tables: `best` goes on until it,
    // and through it on a tie if `best` is the lower table (the choice the
    // scan above makes).
    TimeNs limit = std::numeric_limits<TimeNs>::max();
    int limit_table = 3;
    for (int i = 0; i < 3; ++i) {
      if (i == best || c[i].rows.empty()) continue;
      const TimeNs h = c[i].start[c[i].rows.begin];
      if (h < limit) limit = h, limit_table = i;
    }
    Cur& b = c[best];
    do {
      const RowIndex r = b.rows.begin++;
      f(b.start[r], b.end[r], b.api[r]);
    } while (!b.rows.empty() &&
             (b.start[b.rows.begin] < limit || (b.start[b.rows.begin] == limit && best < limit_table)));
  }
}

// HTA's queue length on one stream, +1 when an op is launched and -1 when it
// starts, the most at any launch; fed the stream's ops in start order (ops
// run in launch order on a stream, so that is launch order too). The ops
// launched and not started yet wait in a FIFO of their start times; an op
// whose GPU start precedes its own launch call (clock skew) counts as
// started. add() returns false once launches come out of order (calls from
// several threads): then general_queue_depth() sorts the launch times.
class QueueDepth {
 public:
  bool add(TimeNs start, TimeNs launch) {
    if (launch < previous_) return false;
    previous_ = launch;
    pending_.push_back(start);
    // The queue is at most pending_.size() - head_ long: only when that could
    // beat the longest so far are the ops started by now taken off (launches
    // only grow, so taking them off later takes off as many or more). How
    // many ops each launch saw start is as good as random; this way the loop
    // runs (and mispredicts its end) once in a while, not at every op.
    if (pending_.size() - head_ > best_) {
      while (head_ < pending_.size() && pending_[head_] <= launch) ++head_;  // started by this launch
      best_ = std::max<std::uint64_t>(best_, pending_.size() - head_);
      if (head_ == pending_.size()) {
        pending_.clear(), head_ = 0;
      } else if (head_ > 4096 && head_ * 2 > pending_.size()) {  // keep the FIFO as long as the queue
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }
    return true;
  }
  std::uint32_t max_depth() const { return static_cast<std::uint32_t>(best_); }

 private:
  std::vector<TimeNs> pending_;
  std::size_t head_ = 0;
  TimeNs previous_ = std::numeric_limits<TimeNs>::min();
  std::uint64_t best_ = 0;
};

std::uint32_t general_queue_depth(const Trace& t, TrackId track) {
  std::vector<TimeNs> ls, ss;
  for_each_op_in_order(t, track, [&](TimeNs start, TimeNs, RowIndex api) {
    if (api != kNoRow) ls.push_back(t.api_calls().start[api]), ss.push_back(start);
  });
  std::sort(ls.begin(), ls.end());
  std::size_t j = 0;
  std::uint64_t best = 0;
  for (std::size_t k = 0; k < ls.size(); ++k) {
    while (j < ss.size() && ss[j] <= ls[k]) ++j;
    best = std::max<std::uint64_t>(best, k + 1 > j ? k + 1 - j : 0);
  }
  return static_cast<std::uint32_t>(best);
}

// The launch statistics' values (CPU launch time, GPU time, launch delay),
// gathered in chunks and then added up quantity by quantity: a loop per
// quantity keeps its bracket and totals in registers, which one loop over
// all three could not.
class LaunchValues {
 public:
  explicit LaunchValues(OpTotals& totals) : totals_(totals), values_(std::make_unique<Chunk>()) {}
  void add(TimeNs cpu, TimeNs gpu, TimeNs delay) {
    Chunk& c = *values_;
    c.v[0][n_] = cpu, c.v[1][n_] = gpu, c.v[2][n_] = delay;
    if (++n_ == kChunk) flush();
  }
  void flush() {
    add_up<OpTotals::kCpu>(values_->v[OpTotals::kCpu], n_);
    add_up<OpTotals::kGpu>(values_->v[OpTotals::kGpu], n_);
    add_up<OpTotals::kDelay>(values_->v[OpTotals::kDelay], n_);
    n_ = 0;
  }

 private:
  static constexpr std::size_t kChunk = 2048;
  struct Chunk {
    TimeNs v[3][kChunk];
  };
  // One quantity's values: its sums and their places against its bracket,
  // in one loop; outliers counted for the CPU launch time and the delay only.
  template <int q>
  void add_up(const TimeNs* v, std::size_t n) {
    if (n == 0) return;
    BracketMedian::Placer place(totals_.launch[q]);
    TimeNs sum = 0, lo = std::numeric_limits<TimeNs>::max(), hi = std::numeric_limits<TimeNs>::min();
    std::uint64_t outliers = 0;
    constexpr TimeNs outlier = q == OpTotals::kCpu ? 50'000 : 100'000;
    place.place(v, n, [&](TimeNs x) {
      sum += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      if constexpr (q != OpTotals::kGpu) outliers += x > outlier;
    });
    place.done();
    totals_.launch[q].add_totals(n, sum, lo, hi);
    if constexpr (q == OpTotals::kCpu) totals_.runtime_outliers += outliers;
    if constexpr (q == OpTotals::kDelay) totals_.launch_delay_outliers += outliers;
  }
  OpTotals& totals_;
  std::unique_ptr<Chunk> values_;
  std::size_t n_ = 0;
};

// Per stream, ops in start order: idle by cause, HTA's queue depth, and the
// launch statistics' full scan (OpTotals::launch, bracketed by the device
// passes' sample).
void per_stream(const RankedTrace& rt, const AnalysisOptions& opt, OpTotals& totals, Profile* p) {
  const Trace& t = *rt.trace;
  const TimeNs* call_starts = t.api_calls().start.data();
  const TimeNs* call_ends = t.api_calls().end.data();
  const TimeNs short_gap = opt.consecutive_kernel_delay_ns;
  const LaunchCalls launch_kind(t);
  LaunchValues values(totals);
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (!on_device(t, tr, opt.device)) continue;
    bool first = true, any = false, in_order = true;
    TimeNs busy_until = 0, host_wait = 0, kernel_wait = 0, other = 0;
    QueueDepth queue;
    std::uint64_t short_kernels = 0, graph_ops = 0, synchronous_copies = 0;
    for_each_op_in_order(t, tr, [&](TimeNs start, TimeNs end, RowIndex api) {
      any = true;
      const bool linked = api != kNoRow;
      const TimeNs call_start = linked ? call_starts[api] : 0, call_end = linked ? call_ends[api] : 0;
      if (!first) {
        // Whether there is a gap, and its cause, are as good as random from
        // one op to the next: added up without branches (a gap of 0 adds 0).
        const TimeNs gap = start > busy_until ? start - busy_until : 0;
        const bool host = linked && call_start > busy_until;
        const TimeNs not_host = host ? 0 : gap;
        const bool is_short = not_host < short_gap;
        host_wait += host ? gap : 0;
        kernel_wait += is_short ? not_host : 0;
        other += is_short ? 0 : not_host;
      }
      busy_until = first ? end : std::max(busy_until, end);
      first = false;
      if (!linked) return;
      in_order = in_order && queue.add(start, call_start);
      if (const LaunchCalls::Kind k = launch_kind(api); k != LaunchCalls::kAsync) {
        graph_ops += k == LaunchCalls::kGraph;
        synchronous_copies += k == LaunchCalls::kSynchronousCopy;
        return;
      }
      short_kernels += end - start < call_end - call_start;
      values.add(call_end - call_start, end - start, start - call_end);
    });
    totals.short_kernels += short_kernels;
    totals.graph_ops += graph_ops;
    totals.synchronous_copies += synchronous_copies;
    if (any) {
      IdleByCause row;
      row.rank = rt.rank;
      row.device = t.tracks()[tr].device;
      row.stream = t.tracks()[tr].stream;
      row.host_wait_ns = host_wait;
      row.kernel_wait_ns = kernel_wait;
      row.other_ns = other;
      p->idle.push_back(row);
    }
    p->launches.max_queue_depth =
        std::max(p->launches.max_queue_depth, in_order ? queue.max_depth() : general_queue_depth(t, tr));
  }
  values.flush();
}

// [SECTION] Host synchronizations -----------------------------------------------------------

}  // namespace

LaunchCalls::LaunchCalls(const Trace& t) : name_(t.api_calls().name.data()) {
  for (StringId id = 0; id < t.strings().size(); ++id) {
    const std::string_view n = t.str(id);
    const Kind k = is_graph_launch_name(n) ? kGraph : is_synchronous_copy_name(n) ? kSynchronousCopy : kAsync;
    if (k == kAsync) continue;
    if (by_name_.empty()) by_name_.assign(t.strings().size(), kAsync);
    by_name_[id] = k;
  }
}

bool is_sync_api(std::string_view name) {
  // CUDA's runtime and driver (cudaStreamSynchronize, cuCtxSynchronize) and
  // HIP's (hipDeviceSynchronize, hipEventSynchronize).
  return name.find("Synchronize") != std::string_view::npos && (name.starts_with("cu") || name.starts_with("hip"));
}

bool is_poll_sync(const Trace& t, std::size_t i) {
  const SyncTable& y = t.syncs();
  const TrackId track = y.track_at(i);
  if (track >= t.tracks().size()) return false;
  const ApiCallTable& a = t.api_calls();
  const RowRange r = t.rows_overlapping(TableId::api_calls, track, y.start[i], y.start[i]);
  for (RowIndex k = r.begin; k < r.end; ++k)
    if (a.start[k] <= y.start[i] && a.end[k] >= y.start[i] && t.str(a.name[k]).find("Query") != std::string_view::npos)
      return true;
  return false;
}

namespace {

// One host synchronization of `type` lasting `ns` (one of no known type
// counts in the totals only).
void count_sync(SyncStats& out, SyncType type, TimeNs ns) {
  ++out.count;
  out.total_ns += ns;
  switch (type) {
    case SyncType::context: ++out.device_syncs; break;
    case SyncType::stream: ++out.stream_syncs; break;
    case SyncType::event: ++out.event_syncs; break;
    default: break;
  }
}

// What a synchronizing API call waits for, by its name; unknown for a call
// that does not synchronize.
SyncType api_sync_type(std::string_view n) {
  if (!is_sync_api(n)) return SyncType::unknown;
  if (n.find("Device") != std::string_view::npos || n.find("Ctx") != std::string_view::npos) return SyncType::context;
  return n.find("Stream") != std::string_view::npos ? SyncType::stream : SyncType::event;
}

// The host time blocked in `syncs` (in the shifted clock) inside the steps:
// per device in time order, none overlapping the one before (find_steps).
TimeNs blocked_in_steps(const std::vector<Step>& steps, std::vector<TimeRange> syncs) {
  if (syncs.empty() || steps.empty()) return 0;
  std::sort(syncs.begin(), syncs.end(), [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  TimeNs out = 0;
  for (std::size_t b = 0, e = 0; b < steps.size(); b = e) {
    while (e < steps.size() && steps[e].device == steps[b].device) ++e;
    const auto first = steps.begin() + static_cast<std::ptrdiff_t>(b),
               last = steps.begin() + static_cast<std::ptrdiff_t>(e);
    for (const TimeRange& y : syncs)
      for (auto s = std::partition_point(first, last, [&](const Step& x) { return x.range.end <= y.start; });
           s != last && s->range.start < y.end; ++s)
        out += std::min(y.end, s->range.end) - std::max(y.start, s->range.start);
  }
  return out;
}

// Counts the host synchronizations; `held`: the host time in them (also
// the steps' share of it, StepSummary::sync_blocked_ns).
void host_syncs(const RankedTrace& rt, const AnalysisOptions& opt, const GraphSetup& setup, Profile* p,
                std::vector<TimeRange>* held, std::vector<HostSyncCall>* calls) {
  const Trace& t = *rt.trace;
  SyncStats& out = p->syncs;
  const SyncTable& y = t.syncs();
  // A sync of CUDA graphs' one-time set-up counts apart (GraphSetup).
  auto count = [&](SyncType type, TrackId thread, TimeNs a, TimeNs b, RowIndex api) {
    held->push_back(rt.shift({a, b}));
    if (setup.any() && setup.holds(thread, a)) {
      ++out.setup_syncs, out.setup_ns += b - a;
      return;
    }
    count_sync(out, type, b - a);
    calls->push_back({thread, a, b, api});
  };
  if (y.size()) {
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (opt.device != kNoDevice && y.device[i] != kNoDevice && y.device[i] != opt.device) continue;
      // Stream-wait-event is a GPU-side dependency, not the host waiting.
      if (y.type_at(i) == SyncType::stream_wait_event) continue;
      if (y.type_at(i) == SyncType::event && is_poll_sync(t, i)) continue;  // a poll: the host did not wait
      count(y.type_at(i), y.track_at(i), y.start[i], y.end[i], kNoRow);
    }
  } else {
    // Traces without synchronization records (Kineto's 2021 schema): the API calls.
    const ApiCallTable& a = t.api_calls();
    std::vector<std::int8_t> type(t.strings().size(), -1);  // per name: its SyncType, -1 not decided yet
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::int8_t& k = type[a.name[i]];
      if (k < 0) k = static_cast<std::int8_t>(api_sync_type(t.str(a.name[i])));
      if (k != static_cast<std::int8_t>(SyncType::unknown))
        count(static_cast<SyncType>(k), a.track_at(i), a.start[i], a.end[i], static_cast<RowIndex>(i));
    }
  }
  p->steps.sync_blocked_ns = blocked_in_steps(p->steps.steps, *held);
}

// The host time over the steps (without steps, the recorded window) in
// which it issued no launches: CUDA graph captures up to their graphs' first
// runs, host synchronizations and blocking copies (`held`, on the shifted
// clock), and kernel launch calls that took launch_setup_ns or more (loading the
// kernel's module on its first launch, or a launch into a full queue
// waiting for the GPU): not the host's own time between launches.
void host_not_launching(const RankedTrace& rt, const AnalysisOptions& opt, const GraphSetup& setup,
                        std::vector<TimeRange> held, Profile* p) {
  for (const TimeRange& w : setup.windows(true)) held.push_back(rt.shift(w));
  const ApiCallTable& a = rt.trace->api_calls();
  std::vector<TimeRange> long_launches;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a.end[i] - a.start[i] >= opt.thresholds.launch_setup_ns &&
        a.op_table[i] == static_cast<std::uint8_t>(OpTable::kernel))
      long_launches.push_back(rt.shift({a.start[i], a.end[i]}));
  auto within = [&](std::vector<TimeRange> ranges) {
    const std::vector<TimeRange> u = intervals::union_of(std::move(ranges));
    TimeNs n = 0;
    for (const Step& s : p->steps.steps) n += intervals::length_within(u, s.range);
    return p->steps.steps.empty() ? intervals::length_within(u, p->window) : n;
  };
  if (!long_launches.empty()) p->launches.long_launch_ns = within(long_launches);
  held.insert(held.end(), long_launches.begin(), long_launches.end());
  if (held.empty()) return;
  p->launches.host_not_launching_ns = within(std::move(held));
}

// [SECTION] Copies ------------------------------------------------------------------------------

// A group's key: direction (5) × stream (2) × host memory (4).
constexpr const char* kDirections[] = {"HtoD", "DtoH", "DtoD", "peer", "other"};
constexpr const char* kMemories[] = {"pinned", "pageable", "device", "unknown"};

int direction_of(CopyKind k) {
  switch (k) {
    case CopyKind::htod: return 0;
    case CopyKind::dtoh: return 1;
    case CopyKind::dtod: return 2;
    case CopyKind::ptop: return 3;
    default: return 4;
  }
}

// The host side's memory of a copy (the source of HtoD, the destination of
// DtoH); "device" for copies with no host side.
int memory_of(const MemcpyTable& m, std::size_t i) {
  const CopyKind k = m.kind_at(i);
  const MemoryKind host = k == CopyKind::htod   ? m.src_kind_at(i)
                          : k == CopyKind::dtoh ? m.dst_kind_at(i)
                          : m.src_kind_at(i) == MemoryKind::pageable || m.src_kind_at(i) == MemoryKind::pinned
                              ? m.src_kind_at(i)
                              : m.dst_kind_at(i);
  if (host == MemoryKind::pinned) return 0;
  if (host == MemoryKind::pageable) return 1;
  if (k == CopyKind::dtod || k == CopyKind::ptop) return 2;
  return 3;
}

// A broadcast collective: DDP's sync of the module's buffers broadcasts
// them from rank 0 (_broadcast_coalesced, recorded as c10d::broadcast_ and
// nccl:broadcast); aten::broadcast_tensors is no collective.
bool broadcast_collective(std::string_view n) {
  return n == "nccl:broadcast" || n.starts_with("c10d::broadcast") || n.find("_broadcast_coalesced") != n.npos;
}

// The DistributedDataParallel.forward a copy's launching op runs directly
// under (no op between them), or kNoRow: DDP's own work before or around
// the model's forward.
RowIndex ddp_forward_of(const Trace& t, RowIndex api) {
  if (api == kNoRow || t.api_calls().op_range.empty()) return kNoRow;
  const RowIndex op = t.api_calls().op_range_at(api);
  if (op == kNoRow) return kNoRow;
  const RowIndex parent = t.parent_op(op);
  return parent != kNoRow && t.str(t.ranges().name[parent]) == "DistributedDataParallel.forward" ? parent : kNoRow;
}

// The DistributedDataParallel.forward ranges that hold a broadcast
// collective: there DDP broadcasts the module's buffers (broadcast_buffers),
// and a copy directly under one is that sync's; under one without, a copy
// is not (the trace would show the broadcast).
std::unordered_set<RowIndex> ddp_forwards_broadcasting(const Trace& t) {
  std::unordered_set<RowIndex> out;
  if (!any_string(t, broadcast_collective)) return out;
  const RangeTable& rg = t.ranges();
  for (RowIndex r = 0; r < rg.size(); ++r) {
    if (!t.is_op_range(r) || !broadcast_collective(t.str(rg.name[r]))) continue;
    for (RowIndex q = t.parent_op(r), depth = 0; q != kNoRow && depth < 64; q = t.parent_op(q), ++depth)
      if (t.str(rg.name[q]) == "DistributedDataParallel.forward") {
        out.insert(q);
        break;
      }
  }
  return out;
}

// The op that launched the most of a group's copies directly under a
// DistributedDataParallel.forward without a broadcast, with how many.
void name_ddp_forward_op(const Trace& t, const std::unordered_map<StringId, std::uint64_t>& by_op, CopyGroup* g) {
  for (const auto& [name, n] : by_op)
    if (n > g->ddp_forward_op_count || (n == g->ddp_forward_op_count && t.str(name) < g->ddp_forward_op))
      g->ddp_forward_op = std::string(t.str(name)), g->ddp_forward_op_count = n;
}

// Each copy's time with no kernel running on its GPU (`alone`: those
// pieces per device, in time order), added to its group's.
struct CopyAlone {
  std::uint32_t device;
  TimeNs start, end;
  std::uint16_t group;
  bool gradient, buffers;
};
template <class Group>
void add_alone(std::vector<CopyAlone>& copies, const ExposedCommunication& alone, Group* groups) {
  const auto earlier = [](const CopyAlone& a, const CopyAlone& b) {
    return std::tie(a.device, a.start, a.end) < std::tie(b.device, b.start, b.end);
  };
  if (!std::is_sorted(copies.begin(), copies.end(), earlier)) std::sort(copies.begin(), copies.end(), earlier);
  static const intervals::IntervalSet kNone;
  std::optional<intervals::ForwardLength> on;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const CopyAlone& c = copies[i];
    if (i == 0 || c.device != copies[i - 1].device) {
      const auto found = alone.find(c.device);
      on.emplace(found == alone.end() ? kNone : found->second);
    }
    const TimeNs ns = on->length(c.start, c.end);
    groups[c.group].exposed_ns += ns;
    if (c.gradient) groups[c.group].gradient_exposed_ns += ns;
    if (c.buffers) groups[c.group].buffers_exposed_ns += ns;
  }
}

// `held`: the host time in the copies that block it (on the shifted clock).
void copies(const RankedTrace& rt, const AnalysisOptions& opt, Profile* p, Evidence* ev,
            const ExposedCommunication& copies_alone, std::vector<TimeRange>* held) {
  const Trace& t = *rt.trace;
  const MemcpyTable& m = t.memcpys();
  MemcpyStats& out = p->memcpys;
  // By direction × stream × host memory (their names set when kept).
  std::vector<CopyAlone> alone;
  std::array<CopyGroup, 5 * 2 * 4> groups{};
  std::vector<CopyBlock> blocks(m.size(), CopyBlock::none);
  // Whether a copy's launching call ran inside a compiled region (nothing
  // walked when the trace has no such region).
  const bool any_compiled = any_string(t, is_compiled_region);
  InsideOpNamed inside_compiled(t, is_compiled_region);
  auto in_compiled = [&](RowIndex api) -> std::uint64_t {
    return any_compiled && api != kNoRow && inside_compiled(api) ? 1 : 0;
  };
  // Inside autograd's gradient accumulation (and the hooks DDP hangs on it),
  // or DDP's copy of the all-reduced buckets back into the gradients.
  InsideOpNamed in_accumulate(t, [](std::string_view n) {
    return n.ends_with("torch::autograd::AccumulateGrad") || n.ends_with("copy_bucket_to_grad");
  });
  for (const BlockingCopy& b : blocking_copies(t, opt)) blocks[b.row] = b.how;
  const std::unordered_set<RowIndex> broadcasting = ddp_forwards_broadcasting(t);
  std::array<std::unordered_map<StringId, std::uint64_t>, 5 * 2 * 4> ddp_forward_ops;
  std::uint64_t* const count_of[] = {&out.htod, &out.dtoh, &out.dtod, &out.other, &out.other};  // by direction_of()
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (!on_device(t, m.track_at(i), opt.device)) continue;
    const TimeNs dur = m.end[i] - m.start[i];
    const CopyKind kind = m.kind_at(i);
    ++out.count;
    out.bytes += m.bytes[i];
    out.time_ns += dur;
    const int direction = direction_of(kind);
    ++*count_of[direction];
    if (m.src_kind_at(i) == MemoryKind::pageable || m.dst_kind_at(i) == MemoryKind::pageable) {
      ++out.pageable;
      out.pageable_ns += dur;
      out.pageable_bytes += m.bytes[i];
      ev->pageable.add(rt.shift({m.start[i], m.end[i]}), dur);
    }
    const bool own_stream = t.rows_of(TableId::kernels, m.track_at(i)).empty();
    const int key = (direction * 2 + (own_stream ? 1 : 0)) * 4 + memory_of(m, i);
    CopyGroup& g = groups[key];
    ++g.count;
    g.bytes += m.bytes[i];
    g.time_ns += dur;
    g.compiled += in_compiled(m.api[i]);
    const bool gradient = kind == CopyKind::dtod && m.api[i] != kNoRow && in_accumulate(m.api[i]);
    g.gradient += gradient;
    g.gradient_bytes += gradient ? m.bytes[i] : 0;
    const RowIndex ddp = kind == CopyKind::dtod && !gradient ? ddp_forward_of(t, m.api[i]) : kNoRow;
    const bool buffers = ddp != kNoRow && broadcasting.contains(ddp);
    g.buffers += buffers;
    if (ddp != kNoRow && !buffers) {
      ++g.ddp_forward;
      g.ddp_forward_bytes += m.bytes[i];
      ++ddp_forward_ops[key][t.ranges().name[t.api_calls().op_range_at(m.api[i])]];
    }
    g.unlaunched += m.api[i] == kNoRow;
    if (!copies_alone.empty())
      alone.push_back(
          {t.tracks()[m.track_at(i)].device, m.start[i], m.end[i], static_cast<std::uint16_t>(key), gradient, buffers});
    if (blocks[i] == CopyBlock::none) continue;
    // A copy that blocks the host: charged as a host synchronization.
    ++g.blocking;
    const RowIndex api = m.api[i];
    const TimeRange call_range{t.api_calls().start[api], t.api_calls().end[api]};
    ++out.synchronous;
    out.synchronous_ns += call_range.duration();
    g.blocking_ns += call_range.duration();
    ++p->syncs.copies;
    p->syncs.copy_ns += call_range.duration();
    ev->sync_memcpy.add(rt.shift(call_range), call_range.duration());
    held->push_back(rt.shift(call_range));
  }
  add_alone(alone, copies_alone, groups.data());
  for (std::size_t k = 0; k < groups.size(); ++k) name_ddp_forward_op(t, ddp_forward_ops[k], &groups[k]);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const CopyGroup& g = groups[k];
    if (g.count == 0) continue;
    const std::string direction = kDirections[k / 8], memory = kMemories[k % 4];
    const bool own = (k / 4) % 2 == 1;
    auto it = std::find_if(out.groups.begin(), out.groups.end(), [&](const CopyGroup& c) {
      return c.direction == direction && c.own_stream == own && c.memory == memory;
    });
    if (it == out.groups.end()) {
      out.groups.push_back({direction, own, memory});
      it = out.groups.end() - 1;
    }
    it->add(g);
  }
  sort_copy_groups(out.groups);
  const MemsetTable& z = t.memsets();
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (!on_device(t, z.track_at(i), opt.device)) continue;
    ++out.memsets;
    out.memset_ns += z.end[i] - z.start[i];
  }
}

}  // namespace

// [SECTION] Blocking copies ----------------------------------------------------------------------

void sort_copy_groups(std::vector<CopyGroup>& groups) {
  std::stable_sort(groups.begin(), groups.end(),
                   [](const CopyGroup& a, const CopyGroup& b) { return a.time_ns > b.time_ns; });
}

std::vector<BlockingCopy> blocking_copies(const Trace& t, const AnalysisOptions& opt) {
  std::vector<BlockingCopy> out;
  const MemcpyTable& m = t.memcpys();
  const ApiCallTable& a = t.api_calls();
  // Per call name: -1 not decided, 0 no, 1 yes (a blocking copy call).
  std::vector<std::int8_t> blocking_call(t.strings().size(), -1);
  InsideOpNamed in_scalar_op(t,
                             [](std::string_view n) { return n == "aten::_local_scalar_dense" || n == "aten::item"; });
  const auto exempt = static_cast<std::uint64_t>(opt.thresholds.sync_memcpy_htod_exempt_bytes);
  for (std::size_t i = 0; i < m.size(); ++i) {
    const RowIndex api = m.api[i];
    if (api == kNoRow) continue;
    const CopyKind kind = m.kind_at(i);
    std::int8_t& b = blocking_call[a.name[api]];
    if (b < 0) {
      b = is_synchronous_copy_name(t.str(a.name[api])) ? 1 : 0;
    }
    // Small host-to-device copies are staged by the driver, which returns at
    // once (nsys's cuda_memcpy_sync exempts them); but a synchronous copy
    // call waits for its stream first: one whose copy began on the GPU
    // longer than a launch takes after the call started, and that returned
    // only after that, waited for the work queued ahead of it (ROCm's
    // hipMemcpyWithStream of 60 bytes, 493 ms).
    if (kind == CopyKind::htod && m.bytes[i] <= exempt &&
        !(b && a.end[api] >= m.start[i] && m.start[i] - a.start[api] > opt.consecutive_kernel_delay_ns))
      continue;
    CopyBlock how = CopyBlock::none;
    if (b)
      how = CopyBlock::call;
    else if (m.src_kind_at(i) == MemoryKind::pageable || m.dst_kind_at(i) == MemoryKind::pageable)
      how = CopyBlock::pageable;
    else if (kind == CopyKind::dtoh && in_scalar_op(api))
      how = CopyBlock::scalar;
    if (how != CopyBlock::none) out.push_back({static_cast<RowIndex>(i), api, how});
  }
  return out;
}

// [SECTION] Entry point ---------------------------------------------------------------------------

void stream_pass(const RankedTrace& rt, const AnalysisOptions& opt, OpTotals& totals, Profile* p, Evidence* ev,
                 const ExposedCommunication& copies_alone) {
  per_stream(rt, opt, totals, p);
  GraphSetup setup(*rt.trace);
  std::vector<TimeRange> held;
  std::vector<HostSyncCall> calls;
  host_syncs(rt, opt, setup, p, &held, &calls);
  // The host issues no launch while a copy blocks it either.
  copies(rt, opt, p, ev, copies_alone, &held);
  host_not_launching(rt, opt, setup, std::move(held), p);
  sync_site_pass(rt, opt, calls, p);
}

}  // namespace gpuscope::detail
