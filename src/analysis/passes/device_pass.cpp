// The device pass: one sweep over a GPU's ops in time order that measures
// everything about it at once — busy time, kernels in flight, copy/compute
// and communication/compute overlap, idle gaps and their causes, GPU idle
// after host synchronizations, and each step's breakdown.
//
// [SECTION] Runs and the in-flight set
// [SECTION] Step accounting
// [SECTION] The sweep
// [SECTION] Helpers
// [SECTION] Entry point
//
// Why a sweep and not interval sets: a 10M-kernel trace would need several
// 160 MB sets, and fresh memory is the dominant cost of a pass over it (page
// faults). The sweep keeps O(streams) state: the rows of a track are in start
// order, so a device is a merge of a few sorted runs (one per track and
// table), and the ops in flight at any time are few.
#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/ops/occupancy.h"
#include "analysis/ops/roofline.h"
#include "analysis/passes/hta.h"
#include "analysis/passes/hta_rules.h"
#include "analysis/util/intervals.h"

namespace gpuscope::detail {

namespace {

using namespace intervals;

// [SECTION] Runs and the in-flight set ----------------------------------------------------------

enum OpClass : std::uint8_t {
  kKernel = 1,
  kCompute = 2,       // a non-communication kernel
  kComm = 4,          // a communication kernel
  kOptimizer = 8,     // an optimizer kernel (also kCompute)
  kCopy = 16,         // memcpy
  kFill = 32,         // memset
  kHta = 64,          // an op HTA counts (its ProfilerStep filter; syncs with a stream)
  kHtaCompute = 128,  // … that HTA counts as compute
};

// A kernel's class bits by category: communication or compute, optimizer.
struct ClassOfCategory {
  std::uint8_t of[256];
  constexpr ClassOfCategory() : of{} {
    for (unsigned c = 0; c < 256; ++c) {
      const auto cat = static_cast<KernelCategory>(c);
      of[c] = static_cast<std::uint8_t>((cat == KernelCategory::communication ? kComm : kCompute) |
                                        (cat == KernelCategory::optimizer ? kOptimizer : 0));
    }
  }
};
constexpr ClassOfCategory kClassOfCategory{};

// The rows of one table on one track, in start order.
struct Run {
  const TimeNs* start;
  const TimeNs* end;
  const RowIndex* api;           // null for syncs
  const std::uint8_t* category;  // kernels only
  const std::uint32_t* correlation;
  const StringId* name;  // kernels only
  // Kernels only, null when the trace has no optimizer op: per row, bit 1 if
  // an optimizer op launched it, plus kOptimizer unless it communicates.
  const std::uint8_t* optimizer_op;
  std::uint8_t table;  // kKernel, kCopy, kFill, or 0 for host syncs (seen by HTA only)
  RowIndex row, last;
  TrackId track = 0;
  // Ops of this stream with no launch in the trace that start before this
  // (its first launched op's start) were queued before the recording began
  // (LaunchStats::backlog_ops): the gaps they end are no late launches.
  TimeNs backlog_until = 0;
  // Summed by the sweep for the occupancy's side work: the time of this
  // run's communication kernels and copies, and whether it has a compute kernel.
  TimeNs side = 0;
  bool compute = false;
};

// The end of a host synchronization, or of a copy call that blocks the host.
struct SyncEnd {
  TimeNs end;
  bool copy;
  TimeNs blocked;      // how long the call held the host (end - start)
  bool setup = false;  // of CUDA graphs' one-time set-up (GraphSetup): the idle after it is warm-up
  // A read-back of results (device to host, kReadbackBytes or more): the
  // host's work after it most likely uses them.
  bool readback = false;
};

// A device-to-host copy this large reads back results, not a value checked
// in passing (.item(), a metric): 1 MiB.
constexpr std::uint64_t kReadbackBytes = 1u << 20;

struct Flight {
  TimeNs end;
  std::uint8_t cls;
};

// Per op class, what it adds to each of Counts' four packed words.
struct CountDeltas {
  std::uint64_t delta[256][4];
  constexpr CountDeltas() : delta{} {
    for (unsigned c = 0; c < 256; ++c) {
      auto bit = [&](unsigned flag, int shift) { return (c & flag) ? std::uint64_t{1} << shift : 0; };
      delta[c][0] = bit(kKernel, 0) | bit(kCompute, 32);
      delta[c][1] = bit(kComm, 0) | bit(kOptimizer, 32);
      delta[c][2] = bit(kCopy, 0) | bit(kFill, 32);
      delta[c][3] = bit(kHta, 0) | bit(kHtaCompute, 32);
    }
  }
};
inline constexpr CountDeltas kCountDeltas{};

// Ops in flight by class: eight 32-bit counters packed two to a word, so
// that adding or removing an op is four adds of a per-class table entry
// instead of eight tests. A lane never borrows from its neighbour: it never
// goes below zero, and a device has fewer than 2^32 ops.
class Counts {
 public:
  constexpr void add(std::uint8_t cls) {
    const auto& d = kCountDeltas.delta[cls];
    for (int i = 0; i < 4; ++i) w_[i] += d[i];
  }
  constexpr void remove(std::uint8_t cls) {
    const auto& d = kCountDeltas.delta[cls];
    for (int i = 0; i < 4; ++i) w_[i] -= d[i];
  }
  std::uint32_t kernels() const { return lo(0); }
  std::uint32_t compute() const { return hi(0); }
  std::uint32_t comm() const { return lo(1); }
  std::uint32_t optimizer() const { return hi(1); }
  std::uint32_t copies() const { return lo(2); }
  std::uint32_t fills() const { return hi(2); }
  std::uint32_t hta() const { return lo(3); }
  std::uint32_t hta_compute() const { return hi(3); }
  bool any() const { return lo(0) != 0 || w_[2] != 0; }  // kernels, copies or fills
  // The sweep's state key (Sweep::KeyBit), straight from the packed words.
  constexpr unsigned key() const {
    const std::uint64_t w0 = w_[0], w1 = w_[1], w2 = w_[2], w3 = w_[3];
    const auto nz = [](std::uint64_t x) { return unsigned{x != 0}; };
    const std::uint32_t kernels = static_cast<std::uint32_t>(w0), optimizer = static_cast<std::uint32_t>(w1 >> 32);
    return nz(w3 & 0xffffffffu) | nz(w3 >> 32) << 1 | nz(kernels | w2) << 2 | nz(kernels) << 3 |
           unsigned{kernels >= 2} << 4 | nz(w0 >> 32) << 5 | nz(w1 & 0xffffffffu) << 6 | nz(w2 & 0xffffffffu) << 7 |
           nz(optimizer) << 8 | unsigned{kernels > optimizer} << 9;
  }

 private:
  constexpr std::uint32_t lo(int i) const { return static_cast<std::uint32_t>(w_[i]); }
  constexpr std::uint32_t hi(int i) const { return static_cast<std::uint32_t>(w_[i] >> 32); }
  std::uint64_t w_[4] = {};
};

// The state key of the ops in flight with one more op of class `cls`, from
// their key alone (no counts, no cache): each bit of Counts::key() says
// whether a count is non-zero, which one more op can only set, but for the
// two that compare counts. Two kernels or more: a kernel added to a base
// with one. More kernels than optimizer kernels: a kernel that is not an
// optimizer kernel makes it so (kernels never number fewer than optimizer
// kernels), an optimizer kernel leaves it as it was.
// The bits an op of class `cls` sets whatever the base: one table entry per
// class (the sweep computes a key per op; the tests below cost ~40
// instructions each time).
constexpr unsigned bits_of_class(unsigned cls) {
  const unsigned kernel = (cls & kKernel) ? 1u : 0u;
  return ((cls & kHta) ? 1u : 0u) | ((cls & kHtaCompute) ? 2u : 0u) | ((cls & (kKernel | kCopy | kFill)) ? 4u : 0u) |
         kernel << 3 | ((cls & kCompute) ? 32u : 0u) | ((cls & kComm) ? 64u : 0u) | ((cls & kCopy) ? 128u : 0u) |
         ((cls & kOptimizer) ? 256u : 0u) | (kernel & ((cls & kOptimizer) ? 0u : 1u)) << 9;
}
struct ClassBits {
  std::uint16_t of[256];
  constexpr ClassBits() : of{} {
    for (unsigned c = 0; c < 256; ++c) of[c] = static_cast<std::uint16_t>(bits_of_class(c));
  }
};
inline constexpr ClassBits kClassBits{};
constexpr unsigned key_with(unsigned base, std::uint8_t cls) {
  static_assert(kKernel == 1);  // the kernel bit of `cls` is its lowest
  return base | kClassBits.of[cls] | ((cls & base >> 3) & 1u) << 4;
}

// key_with() is Counts::key() after Counts::add(), for every class an op
// can have on every base of up to two ops (a class: one table or a sync;
// compute or communication for a kernel; optimizer only for compute; HTA's
// compute bit only with HTA's).
constexpr bool valid_class(unsigned c) {
  const unsigned table = c & (kKernel | kCopy | kFill);
  if (table == 0) return c == kHta;
  if (table != kKernel && table != kCopy && table != kFill) return false;
  if ((c & kHtaCompute) && !((c & kHta) && table == kKernel)) return false;
  if (table != kKernel) return (c & (kCompute | kComm | kOptimizer)) == 0;
  if (((c & kCompute) != 0) == ((c & kComm) != 0)) return false;
  return !(c & kOptimizer) || (c & kCompute);
}
constexpr bool key_with_agrees() {
  std::uint8_t classes[256] = {};
  int n = 0;
  for (unsigned c = 0; c < 256; ++c)
    if (valid_class(c)) classes[n++] = static_cast<std::uint8_t>(c);
  for (int a = -1; a < n; ++a)
    for (int b = -1; b < n; ++b)
      for (int c = 0; c < n; ++c) {
        Counts base;
        if (a >= 0) base.add(classes[a]);
        if (b >= 0) base.add(classes[b]);
        Counts with = base;
        with.add(classes[c]);
        if (key_with(base.key(), classes[c]) != with.key()) return false;
      }
  return n == 14;
}
static_assert(key_with_agrees());

// Follows a condition over time and records the ranges where it held.
class Spans {
 public:
  // `merge_below`: ranges closer than this are joined (0: only touching ones).
  explicit Spans(TopRanges* out, const RankedTrace& rt, TimeNs merge_below = 0)
      : out_(out), rt_(rt), merge_(merge_below) {}
  // Every range, on the trace's clock and in time order, besides the longest
  // kept in `out` (null: none).
  void keep_all(std::vector<TimeRange>* all) { all_ = all; }
  void set(bool on, TimeNs t) {
    if (on == on_) return;
    on_ = on;
    if (on) {
      if (pending_ && t - pending_end_ <= merge_) {
        pending_ = false;  // continue the pending range
      } else {
        flush();
        begin_ = t;
      }
    } else {
      pending_ = true;
      pending_end_ = t;
    }
  }
  void flush() {
    if (!pending_) return;
    out_->add(rt_.shift({begin_, pending_end_}), pending_end_ - begin_);
    if (all_) all_->push_back({begin_, pending_end_});
    pending_ = false;
  }

 private:
  TopRanges* out_;
  std::vector<TimeRange>* all_ = nullptr;
  const RankedTrace& rt_;
  TimeNs merge_;
  bool on_ = false, pending_ = false;
  TimeNs begin_ = 0, pending_end_ = 0;
};

// [SECTION] Step accounting ------------------------------------------------------------------------

// The steps of one device, in time order and non-overlapping; time is added
// to them in non-decreasing order.
class StepAccount {
 public:
  explicit StepAccount(std::vector<Step*> steps) : steps_(std::move(steps)) {}
  void add(TimeNs a, TimeNs b, TimeNs Step::*field) {
    // Most pieces fall inside the step the previous one fell in.
    if (a >= cur_start_ && b <= cur_end_) {
      steps_[i_]->*field += b - a;
      return;
    }
    while (i_ < steps_.size() && steps_[i_]->range.end <= a) ++i_;
    for (std::size_t j = i_; j < steps_.size() && steps_[j]->range.start < b; ++j) {
      const TimeNs s = std::max(a, steps_[j]->range.start), e = std::min(b, steps_[j]->range.end);
      if (s < e) steps_[j]->*field += e - s;
    }
    if (i_ < steps_.size()) cur_start_ = steps_[i_]->range.start, cur_end_ = steps_[i_]->range.end;
  }
  void finish() {
    for (Step* s : steps_) s->idle_ns = s->range.duration() - s->compute_ns - s->communication_ns - s->memcpy_ns;
  }
  // The range of the step the last piece fell in (empty before the first):
  // pieces inside it may be summed by the caller and handed over with
  // deposit() (compute, communication, copies) before the next add().
  void window(TimeNs* lo, TimeNs* hi) const { *lo = cur_start_, *hi = cur_end_; }
  void deposit(const TimeNs (&time)[3]) {
    if (i_ >= steps_.size()) return;  // nothing was inside a window (see window())
    Step* s = steps_[i_];
    s->compute_ns += time[0];
    s->communication_ns += time[1];
    s->memcpy_ns += time[2];
  }

 private:
  std::vector<Step*> steps_;
  std::size_t i_ = 0;
  TimeNs cur_start_ = 0, cur_end_ = -1;  // steps_[i_]'s range once a piece has been placed
};

// 128-bit sums: a duration (< 2^63 ns) times a count of SMs cannot overflow them.
__extension__ typedef unsigned __int128 Wide;

// [SECTION] The sweep --------------------------------------------------------------------------------

// The runs of a device ordered by their next start (ties: lower index first,
// the order a linear scan would pick). The sweep reads these few values
// instead of chasing each run's columns; after a start only that run moves.
class RunOrder {
 public:
  static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

  explicit RunOrder(const std::vector<Run>& runs) : heads_(runs.size()), order_(runs.size()) {
    nruns_ = static_cast<int>(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i)
      heads_[i] = runs[i].row < runs[i].last ? runs[i].start[runs[i].row] : kNever;
    for (int i = 0; i < nruns_; ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(), [&](int a, int b) { return before(a, b); });
    find_next();
  }
  int size() const { return nruns_; }
  int next() const { return s_; }              // the run with the next start, -1 when none is left
  TimeNs next_start() const { return next_; }  // its start, kNever when none is left
  TimeNs second_start() const { return nruns_ > 1 ? heads_[order_[1]] : kNever; }  // the next start of any other run
  // The run at place k (0: next()), and its next start.
  int at(int k) const { return order_[k]; }
  TimeNs head_at(int k) const { return heads_[order_[k]]; }
  // Run `run` (== next()) moved on to its row `row`: sift it back into place.
  [[gnu::always_inline]] void advanced(int run, const Run& r) {
    heads_[run] = r.row < r.last ? r.start[r.row] : kNever;
    int j = 0;
    while (j + 1 < nruns_ && before(order_[j + 1], run)) {
      order_[j] = order_[j + 1];
      ++j;
    }
    order_[j] = run;
    find_next();
  }

 private:
  bool before(int a, int b) const { return heads_[a] < heads_[b] || (heads_[a] == heads_[b] && a < b); }
  void find_next() {
    if (nruns_ == 0 || heads_[order_[0]] == kNever) {
      s_ = -1;
      next_ = kNever;
    } else {
      s_ = order_[0];
      next_ = heads_[s_];
    }
  }
  std::vector<TimeNs> heads_;
  std::vector<int> order_;
  int nruns_ = 0, s_ = -1;
  TimeNs next_ = kNever;
};

struct Sweep {
  const RankedTrace& rt;
  const Trace& t;
  const AnalysisOptions& opt;
  DeviceSummary& d;
  Evidence& ev;
  Profile& p;
  StepAccount steps;
  ForwardLength input;
  const IntervalSet& input_set;
  std::vector<SyncEnd> sync_ends;  // host synchronizations that concern this device, sorted
  std::size_t next_sync = 0;
  TimeNs first_step_end = RunOrder::kNever;    // the end of this device's first step (none: kNever)
  const std::uint8_t* optimizer_op = nullptr;  // Run::optimizer_op

  std::vector<Run> runs;
  std::vector<Flight> flying;
  Counts n;
  const HtaOpFilter& hta_filter;
  HtaComputeNames& hta_compute;
  std::vector<TimeNs> sync_start, sync_end;  // HTA's GPU-op syncs of this device, by start
  std::vector<std::uint32_t> sync_correlation;
  TimeNs hta_busy = 0, hta_compute_ns = 0;
  TimeNs hta_first = std::numeric_limits<TimeNs>::max(), hta_last = std::numeric_limits<TimeNs>::min();
  bool hta_any() const { return hta_first <= hta_last; }
  Spans exposed_comm, copy_alone, optimizer_alone;
  std::uint32_t sms = 0;
  std::vector<OpTotals::Name>& names;
  OccupancySums occupancy;
  // (launching call, gap) of each idle gap a late launch ended, when the
  // trace has framework ops to charge them to (the op table's starved_ns).
  std::vector<std::pair<RowIndex, TimeNs>>* late_launches = nullptr;
  // The idle time's pieces by cause, when the trace has host samples.
  std::vector<IdlePiece>* idle_pieces = nullptr;
  // (launching thread, gap) of each idle gap of gpu-idle-gaps' size a late
  // launch ended: where that thread was meanwhile (host_in_gaps).
  std::vector<std::pair<TrackId, TimeRange>> late_gaps;
  void piece(TimeNs a, TimeNs b, IdleCause cause, TrackId thread = IdlePiece::kNone) {
    if (idle_pieces && b > a) idle_pieces->push_back({a, b, thread, d.id, cause});
  }

  Sweep(const RankedTrace& r, const AnalysisOptions& o, DeviceSummary& ds, Evidence& e, Profile& prof,
        std::vector<Step*> device_steps, const IntervalSet& inputs, const HtaOpFilter& filter,
        HtaComputeNames& compute_names, std::vector<OpTotals::Name>& by_name, const Device* device)
      : rt(r),
        t(*r.trace),
        opt(o),
        d(ds),
        ev(e),
        p(prof),
        steps(std::move(device_steps)),
        input(inputs),
        input_set(inputs),
        hta_filter(filter),
        hta_compute(compute_names),
        exposed_comm(&e.exposed_comm, r),
        copy_alone(&e.memcpy_exposed, r),
        optimizer_alone(&e.optimizer, r, o.consecutive_kernel_delay_ns),
        names(by_name),
        occupancy(device, ds.sm_count) {}

  // `flying` is kept sorted by end, latest first: the next op to end is the last.
  void fly(TimeNs end, std::uint8_t cls) {
    flying.push_back({end, cls});
    std::size_t j = flying.size() - 1;
    while (j > 0 && flying[j - 1].end < end) {
      flying[j] = flying[j - 1];
      --j;
    }
    flying[j] = {end, cls};
  }

  // The start of the first op in `rows` with a launch in the trace (kNever: none).
  static TimeNs first_launched(const std::vector<TimeNs>& start, const std::vector<RowIndex>& api, RowRange rows) {
    for (RowIndex i = rows.begin; i < rows.end; ++i)
      if (api[i] != kNoRow) return start[i];
    return RunOrder::kNever;
  }
  // Ops in `rows` (by start) that start before `until`: before their table's
  // first launched op too, so with no launch in the trace.
  static std::uint64_t starting_before(const std::vector<TimeNs>& start, RowRange rows, TimeNs until) {
    return static_cast<std::uint64_t>(std::lower_bound(start.begin() + rows.begin, start.begin() + rows.end, until) -
                                      (start.begin() + rows.begin));
  }
  std::uint64_t backlog_ops = 0;  // LaunchStats::backlog_ops, this device's

  void add_runs(const std::vector<TrackId>& tracks) {
    const KernelTable& k = t.kernels();
    const MemcpyTable& m = t.memcpys();
    const MemsetTable& z = t.memsets();
    for (TrackId tr : tracks) {
      const RowRange kr = t.rows_of(TableId::kernels, tr), cr = t.rows_of(TableId::memcpys, tr),
                     zr = t.rows_of(TableId::memsets, tr);
      if (kr.empty() && cr.empty() && zr.empty()) continue;
      ++d.streams;
      const TimeNs backlog_until = std::min(
          {first_launched(k.start, k.api, kr), first_launched(m.start, m.api, cr), first_launched(z.start, z.api, zr)});
      const std::size_t first_run = runs.size();
      if (!kr.empty())
        runs.push_back({k.start.data(), k.end.data(), k.api.data(), k.category.data(), k.correlation.data(),
                        k.name.data(), optimizer_op, kKernel, kr.begin, kr.end, tr});
      if (!cr.empty())
        runs.push_back({m.start.data(), m.end.data(), m.api.data(), nullptr, m.correlation.data(), nullptr, nullptr,
                        kCopy, cr.begin, cr.end, tr});
      if (!zr.empty())
        runs.push_back({z.start.data(), z.end.data(), z.api.data(), nullptr, z.correlation.data(), nullptr, nullptr,
                        kFill, zr.begin, zr.end, tr});
      for (std::size_t i = first_run; i < runs.size(); ++i)
        runs[i].backlog_until = backlog_until == RunOrder::kNever ? 0 : backlog_until;
      if (backlog_until != RunOrder::kNever)
        backlog_ops += starting_before(k.start, kr, backlog_until) + starting_before(m.start, cr, backlog_until) +
                       starting_before(z.start, zr, backlog_until);
      d.kernels += kr.size();
      d.memcpys += cr.size();
      d.memsets += zr.size();
    }
    // HTA counts host syncs that carry a stream (Kineto's "Stream Sync") as
    // GPU ops; they take part in the sweep for HTA's numbers only.
    const SyncTable& y = t.syncs();
    std::vector<std::pair<TimeNs, TimeNs>> found;
    std::vector<std::uint32_t> corr;
    for (std::size_t i = 0; i < y.size(); ++i)
      if (y.stream[i] != kNoId && y.device[i] == d.id && hta_filter.keep_sync(y.correlation[i]))
        found.push_back({y.start[i], y.end[i]});
    if (found.empty()) return;
    std::sort(found.begin(), found.end());
    for (const auto& [a, b] : found) sync_start.push_back(a), sync_end.push_back(b);
    runs.push_back({sync_start.data(), sync_end.data(), nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0,
                    static_cast<RowIndex>(found.size())});
  }

  // What the time between two events adds up to depends on the ops in
  // flight only through a few yes/no facts: the state key below. The sweep
  // adds each stretch of time to its key's total (and to the step it falls
  // in), and add_up() turns the totals into the summary once, at the end:
  // a few instructions per event instead of a dozen tests.
  enum KeyBit : unsigned {
    kHtaBusy = 1,
    kHtaComputeBusy = 2,
    kAny = 4,
    kKernels = 8,
    kTwoKernels = 16,
    kComputeBusy = 32,
    kCommBusy = 64,
    kCopyBusy = 128,
    kOptimizerBusy = 256,
    kOtherThanOptimizer = 512,
  };
  static constexpr unsigned kKeys = 1024;
  static unsigned key_of(const Counts& c) { return c.key(); }
  // The conditions the evidence follows: exposed communication, a copy with
  // no kernel alongside, optimizer kernels running alone.
  static constexpr unsigned mask_rule(unsigned k) {
    return unsigned{(k & kCommBusy) && !(k & kComputeBusy)} | unsigned{(k & kCopyBusy) && !(k & kKernels)} << 1 |
           unsigned{(k & kOptimizerBusy) && !(k & kOtherThanOptimizer)} << 2;
  }
  // Priority order so a step's parts add up: compute, then communication, then copies.
  static constexpr unsigned field_rule(unsigned k) { return (k & kComputeBusy) ? 0 : (k & kCommBusy) ? 1 : 2; }
  // Both as tables over the keys: one load per event instead of the tests.
  struct KeyTables {
    std::uint8_t mask[kKeys], field[kKeys];
    constexpr KeyTables() : mask{}, field{} {
      for (unsigned k = 0; k < kKeys; ++k)
        mask[k] = static_cast<std::uint8_t>(mask_rule(k)), field[k] = static_cast<std::uint8_t>(field_rule(k));
    }
  };
  static const KeyTables& key_tables() {
    static constexpr KeyTables tables;
    return tables;
  }
  static unsigned mask_of(unsigned k) { return key_tables().mask[k]; }
  static unsigned field_index(unsigned k) { return key_tables().field[k]; }  // 0 compute, 1 communication, 2 copies
  static TimeNs Step::*field_of(unsigned k) {
    static constexpr TimeNs Step::*kFields[3] = {&Step::compute_ns, &Step::communication_ns, &Step::memcpy_ns};
    return kFields[key_tables().field[k]];
  }
  std::array<TimeNs, kKeys> time_in_{};  // time spent in each state key

  void add_up() {
    for (unsigned k = 0; k < kKeys; ++k) {
      const TimeNs dt = time_in_[k];
      if (dt == 0) continue;
      if (k & kHtaBusy) hta_busy += dt;
      if (k & kHtaComputeBusy) hta_compute_ns += dt;
      if (!(k & kAny)) continue;  // idle: accounted when the gap closed
      d.busy_ns += dt;
      if (k & kKernels) d.kernel_busy_ns += dt;
      if (k & kTwoKernels) multi_ += dt;
      if (k & kComputeBusy) d.compute_ns += dt;
      // Time busy with `what`: in all, and split by whether `other` ran alongside.
      auto split = [&](unsigned what, unsigned other, TimeNs& total, TimeNs& alongside, TimeNs& alone) {
        if (!(k & what)) return;
        total += dt;
        (k & other ? alongside : alone) += dt;
      };
      split(kCommBusy, kComputeBusy, d.communication_ns, comm_with_compute_, d.exposed_communication_ns);
      split(kCopyBusy, kKernels, d.memcpy_ns, copy_with_kernels_, d.memcpy_exposed_ns);
      if (k & kOptimizerBusy) {
        ev.optimizer_ns += dt;
        if (k & kOtherThanOptimizer) ev.optimizer_overlapped_ns += dt;
      }
    }
  }

  // Sums over every op, kept by run() in a local (registers) and added to
  // the summary at its end: added to in memory, each kernel's add would wait
  // for the previous one's store.
  struct OpSums {
    TimeNs kernel_time = 0;
    Wide sm_time = 0;
    TimeNs grid_time = 0;  // of kernels whose grid the trace records
    std::uint64_t optimizer_kernels = 0;
    TimeNs optimizer_time = 0;
    std::uint64_t op_kernels = 0, op_named_kernels = 0;  // launched by an optimizer op, of them named optimizer kernels
    TimeNs op_time = 0;
    TimeNs hta_first = std::numeric_limits<TimeNs>::max(), hta_last = std::numeric_limits<TimeNs>::min();
    void note_hta(TimeNs a, TimeNs b) {
      hta_first = std::min(hta_first, a);
      hta_last = std::max(hta_last, b);
    }
  };
  // The op's own share of the sweep (HTA's filter, per-name totals, category
  // evidence, SM time) and its class for the in-flight counts.
  [[gnu::always_inline]] std::uint8_t account(Run& r, RowIndex i, TimeNs at, TimeNs end, RowIndex api, OpSums& sums) {
    std::uint8_t cls = r.table;
    const bool hta = hta_filter.keep(r.correlation[i], api);
    if (hta) {
      cls |= kHta;
      sums.note_hta(at, end);
    }
    if (r.table == kKernel) {
      const KernelTable& k = t.kernels();
      const auto cat = static_cast<KernelCategory>(r.category[i]);
      cls |= kClassOfCategory.of[r.category[i]];
      const TimeNs dur = end - at;
      if (r.optimizer_op) [[unlikely]] {
        const std::uint8_t o = r.optimizer_op[i];
        cls |= o & kOptimizer;
        if (o) {
          ++sums.op_kernels;
          sums.op_named_kernels += cat == KernelCategory::optimizer;
          sums.op_time += dur;
        }
      }
      const StringId name = r.name[i];
      if (hta && hta_compute(name)) cls |= kHtaCompute;
      sums.kernel_time += dur;
      ev.ops_by_category[static_cast<int>(cat)].offer(dur, [&] { return rt.shift({at, end}); });
      OpTotals::Name& nm = names[k.category_rule.empty() ? name : name + k.category_rule[i] * t.strings().size()];
      nm.category = r.category[i];
      nm.min = std::min(nm.min, dur);
      nm.max = std::max(nm.max, dur);
      nm.total += dur;
      ++nm.count;
      // Duration times the SMs the grid can occupy (at most all of them), in
      // integers: exact, and no conversion or floating-point chain per kernel.
      const std::uint64_t blocks = std::uint64_t{k.grid_x[i]} * std::uint64_t{k.grid_y[i]} * std::uint64_t{k.grid_z[i]};
      sums.sm_time += static_cast<Wide>(static_cast<std::uint64_t>(dur)) * std::min<std::uint64_t>(blocks, sms);
      sums.grid_time += blocks ? dur : 0;
      const bool optimizer = (cls & kOptimizer) != 0;
      sums.optimizer_kernels += optimizer;
      sums.optimizer_time += optimizer ? dur : 0;
      const bool comm = (cls & kComm) != 0;
      r.side += comm ? dur : 0;
      r.compute |= !comm;
      occupancy.add(std::uint64_t{k.block_x[i]} * k.block_y[i] * k.block_z[i], k.registers[i],
                    std::uint64_t{k.static_smem[i]} + k.dynamic_smem[i], blocks, dur);
    } else if (r.table == kCopy) {
      r.side += end - at;
    }
    return cls;
  }

  unsigned state_mask = 0;
  void set_states(unsigned mask, TimeNs at) {
    state_mask = mask;
    exposed_comm.set(mask & 1, at);
    copy_alone.set(mask & 2, at);
    optimizer_alone.set(mask & 4, at);
  }

  // Input wait in [a, b), a stretch with nothing running on this GPU.
  void idle_input(TimeNs a, TimeNs b, IdleCause cause = IdleCause::input_wait) {
    input.pieces(a, b, [&](TimeNs s, TimeNs e) {
      ev.input_wait.add(rt.shift({s, e}), e - s);
      steps.add(s, e, &Step::input_wait_ns);
      piece(s, e, cause);
    });
  }

  // What a gap's time that neither input nor a sync explains is charged to
  // (the same split as close_gap's). A long gap that ops with no launch in
  // the trace ended may have waited for their launch or for a dependency:
  // unknown, not queued work.
  static IdleCause gap_cause(bool short_gap, bool late, bool warm_up, bool linked, bool unrecorded) {
    if (short_gap) return late ? IdleCause::late_launch : IdleCause::other;
    return warm_up      ? IdleCause::warm_up
           : late       ? IdleCause::late_launch_gap
           : unrecorded ? IdleCause::unrecorded_gap
           : linked     ? IdleCause::queued_gap
                        : IdleCause::unlaunched_gap;
  }

  // Whether copy j, starting at `at`, waited for the driver to stage it:
  // host-to-device from pageable memory, above the inline size
  // (thresholds.sync_memcpy_htod_exempt_bytes), its call still running then
  // or returned within a launch's latency (consecutive_kernel_delay_ns).
  bool staged_copy(RowIndex j, RowIndex api, TimeNs at) const {
    const MemcpyTable& m = t.memcpys();
    return m.kind_at(j) == CopyKind::htod && m.src_kind_at(j) == MemoryKind::pageable &&
           m.bytes[j] > static_cast<std::uint64_t>(opt.thresholds.sync_memcpy_htod_exempt_bytes) &&
           t.api_calls().end[api] + opt.consecutive_kernel_delay_ns >= at;
  }

  // Whether op j of run r is the first op of its stream the trace records
  // (no kernel, copy or fill of its stream starts before it).
  [[gnu::noinline]] bool first_on_stream(const Run& r, RowIndex j) const {
    const TableId own = r.table == kKernel ? TableId::kernels : r.table == kCopy ? TableId::memcpys : TableId::memsets;
    if (t.rows_of(own, r.track).begin != j) return false;
    auto earlier = [&](TableId table, const std::vector<TimeNs>& start) {
      const RowRange rows = t.rows_of(table, r.track);
      return table != own && !rows.empty() && start[rows.begin] < r.start[j];
    };
    return !earlier(TableId::kernels, t.kernels().start) && !earlier(TableId::memcpys, t.memcpys().start) &&
           !earlier(TableId::memsets, t.memsets().start);
  }

  // The first host synchronization that returned during the gap [g0, g1):
  // the GPU had drained its queue and waited for the host from then on
  // (input wait aside). The sync is charged what it held the host back, at
  // most: had it not blocked, the host's work after it would have begun that
  // much earlier, and the next launch with it. A sync that returns at once on
  // an idle GPU leaves the gap to the host's late launch. A sync of CUDA
  // graphs' set-up is charged as warm-up (`setup`), not as a sync.
  // A sync's return stamped up to kSyncSkewNs before the GPU's last op ended
  // returned with it: the host's and the GPU's clocks disagree by that much
  // (an MI300X device sync 7.5 µs "before" the op it waited for).
  static constexpr TimeNs kSyncSkewNs = 10'000;
  [[gnu::always_inline]] void charge_sync(TimeNs g0, TimeNs g1, TimeNs* explained, TimeNs* setup, TimeNs* rest_from) {
    while (next_sync < sync_ends.size() && sync_ends[next_sync].end < g0 - kSyncSkewNs) ++next_sync;
    if (next_sync < sync_ends.size() && sync_ends[next_sync].end < g1) {
      const SyncEnd& sync = sync_ends[next_sync];
      // A sync the host was already blocked in when the GPU ran dry holds the gap from its start: nothing
      // could be queued meanwhile (its return's latency included: a loop syncing after each kernel).
      const bool blocked_at_start = sync.end - sync.blocked <= g0;
      const TimeNs from = blocked_at_start ? g0 : sync.end;
      // A read-back of results followed by host work longer than the copy
      // held the host: that work most likely uses them, so the copy's wait
      // did not put the next launch off; the gap is the host's work.
      const bool consumed = sync.readback && g1 - sync.end > sync.blocked;
      const TimeNs blamed = consumed ? 0 : std::min((g1 - from) - length_within(input_set, {from, g1}), sync.blocked);
      if (consumed) p.syncs.readback_gaps += 1;
      if (blamed > 0 && sync.setup) {
        // CUDA graphs' one-time set-up: warm-up, no sync's to remove.
        p.syncs.setup_idle_ns += blamed;
        *setup = blamed;
        piece(from, std::min(g1, from + blamed), IdleCause::warm_up);
        if (blocked_at_start) *rest_from = std::min(g1, g0 + blamed);
      } else if (blamed > 0) {
        p.syncs.gpu_idle_after_ns += blamed;
        if (sync.copy) p.syncs.gpu_idle_after_copies_ns += blamed;
        ev.sync_idle.add(rt.shift({from, g1}), blamed);
        *explained += blamed;
        piece(from, std::min(g1, from + blamed), sync.copy ? IdleCause::blocking_copy : IdleCause::host_sync);
        if (blocked_at_start) *rest_from = std::min(g1, g0 + blamed);
      }
      while (next_sync < sync_ends.size() && sync_ends[next_sync].end < g1) ++next_sync;
    }
  }

  // A gap [g0, g1) ends with ops starting at g1; `launch` is the earliest of
  // their launching calls' starts (`linked` false if none is linked);
  // (r, j): the op ending it.
  [[gnu::always_inline]] void close_gap(TimeNs g0, TimeNs g1, bool linked, TimeNs launch, RowIndex launch_api,
                                        const Run& r, RowIndex j) {
    const TimeNs gap = g1 - g0;
    const TimeNs big = opt.thresholds.idle_gap_ns;
    const bool late = linked && launch > g0;
    // A long gap ended by the first op of its stream in the trace, held
    // after its launch: the stream may have been running work queued before
    // the recording began (the GPU busy, not idle), or waited for another
    // process; what the held part was, the trace cannot tell.
    const bool unrecorded = gap >= big && linked && first_on_stream(r, j);
    // A late launch holds the GPU up until it returns and its work can start
    // (a launch's latency, well under consecutive_kernel_delay_ns on every
    // GPU measured); work that starts later than that waited for something
    // else as well (an event, another stream, a dependency the trace does not
    // record): that part of the gap is not the host's.
    // A host-to-device copy from pageable memory starts only once the driver
    // has staged its bytes (the call, in progress, copies them into a pinned
    // buffer first): from the call's start, or the gap's, the GPU waits for
    // that staging, which pinned memory removes (pageable-memcpy's). Only
    // where the call was still running when the copy began (or returned
    // within a launch's latency of it: a call that returned long before
    // queued a copy that waited for something else), and for copies above
    // the size the driver passes inline (whose wait is a launch's latency).
    const TimeNs staging_from = linked && launch_api != kNoRow && r.table == kCopy && staged_copy(j, launch_api, g1)
                                    ? std::clamp(t.api_calls().start[launch_api], g0, g1)
                                    : g1;
    const TimeNs host_returned =
        !late                  ? g0
        : launch_api == kNoRow ? g1
                               : std::clamp(t.api_calls().end[launch_api] + opt.consecutive_kernel_delay_ns, g0, g1);
    const TimeNs other = g1 - host_returned;
    if (late) {  // the staging is the host's too (the driver's copy on the CPU)
      d.idle_host_wait_ns += host_returned - g0;
      steps.add(g0, host_returned, &Step::host_wait_ns);
    }
    const TimeNs host_until = std::min(host_returned, staging_from);
    if (gap < opt.consecutive_kernel_delay_ns) {
      d.idle_kernel_wait_ns += other;
    } else {
      d.idle_other_ns += other;
    }
    if (gap >= big) ev.idle_gaps.add(rt.shift({g0, g1}), gap);
    // The part after a host synchronization that returned during the gap.
    TimeNs explained = 0, setup = 0;
    TimeNs rest_from = g0;  // where the parts after the sync's begin
    charge_sync(g0, g1, &explained, &setup, &rest_from);
    // The gap's parts, each charged once: after a sync, input wait, and the
    // rest by what ended it.
    // (The input cursor, not a search: idle_input() below walks the same pieces from g0.)
    const TimeNs input_part = input.length(g0, g1);
    const TimeNs all_rest = std::max<TimeNs>(0, gap - explained - setup - input_part);
    // The staging's part of that rest (input wait or a sync explains the
    // time they overlap), then what the late launch holds (the gap's start
    // up to host_until) and the part its work waited beyond that.
    const TimeNs staging = std::clamp<TimeNs>(g1 - std::max(staging_from, rest_from), 0, all_rest);
    const TimeNs rest = all_rest - staging;
    const TimeNs rest_host = late ? std::clamp<TimeNs>(host_until - rest_from, 0, rest) : 0,
                 rest_other = rest - rest_host;
    if (staging > 0) {
      ev.staging_idle_ns += staging;
      ++ev.staging_gaps;
      if (gap >= big) ev.idle_gaps_explained_ns += staging, ev.idle_gaps_staging_ns += staging;
      piece(g1 - staging, g1, IdleCause::pageable_staging,
            launch_api != kNoRow ? t.api_calls().track_at(launch_api) : IdlePiece::kNone);
    }
    const TrackId thread = linked && launch_api != kNoRow ? t.api_calls().track_at(launch_api) : IdlePiece::kNone;
    // Warm-up is the host's first call of a kernel (loading, autotuning)
    // holding the GPU up: not where that kernel was queued before the gap
    // began (it waited for something else: an event, a dependency). Where
    // steps ran before the recording, a first call in the trace is warm-up
    // only if its launching call itself shows setup: a launch call of
    // launch_setup_ns or more (loading the kernel's module; a launch into a
    // full queue blocks too, but never while the GPU idles).
    const bool setup_call =
        late && launch_api != kNoRow &&
        t.api_calls().end[launch_api] - t.api_calls().start[launch_api] >= opt.thresholds.launch_setup_ns;
    const bool one_time = late && gap >= big && one_time_host_work(thread, launch_api, g0, host_until);
    const bool warm_up = (first_call(r, j) && (g0 < first_step_end || setup_call) && (late || !linked)) || one_time;
    // Said warm-up only as a first call in a trace without steps.
    const bool unsure = warm_up && !one_time && !setup_call && first_step_end == RunOrder::kNever;
    if (idle_pieces) {  // only where the trace has host samples
      if (rest_host > 0) piece(rest_from, host_until, gap_cause(gap < big, true, warm_up, linked, false), thread);
      if (rest_other > 0)
        piece(std::max(host_until, rest_from), g1 - staging,
              gap_cause(gap < big, false, warm_up && !late, linked, unrecorded), thread);
    }
    if (gap < big) {
      // A short gap a late launch ended is launch overhead (launch_gaps), less
      // what a synchronization or input loading before it explains; a longer
      // one is gpu-idle-gaps' (by what ended it).
      if (rest_host > 0) {
        if (late_launches && launch_api != kNoRow) late_launches->push_back({launch_api, rest_host});
        ev.launch_gaps.add(rt.shift({rest_from, host_until}), rest_host);
      }
    } else {
      long_gap({g0, g1, explained, setup, input_part, rest, rest_host, rest_from, host_until, thread, launch_api, late,
                linked, warm_up, unsure, unrecorded},
               r);
    }
    idle_input(g0, g1);
  }

  // A gap of idle_gap_ns or more, split by close_gap(): its parts into the
  // evidence gpu-idle-gaps reads.
  struct LongGap {
    TimeNs g0, g1, explained, setup, input_part, rest, rest_host, rest_from, host_until;
    TrackId thread;
    RowIndex launch_api;
    bool late, linked, warm_up, unsure, unrecorded;
  };
  // Where the launching thread was while a late launch held the GPU up: the
  // gap's part before the launch returned, less the input wait in it (the
  // input-bound finding's, said there): each wait is charged once.
  void late_gap(const LongGap& x) {
    TimeNs from = x.rest_from;
    if (x.input_part > 0)  // from g0: the cursor must not pass what idle_input() walks next
      input.pieces(x.g0, x.g1, [&](TimeNs s, TimeNs e) {
        s = std::max(s, x.rest_from), e = std::min(e, x.host_until);
        if (s >= e) return;
        if (s > from) late_gaps.push_back({x.thread, {from, s}});
        from = std::max(from, e);
      });
    if (x.host_until > from) late_gaps.push_back({x.thread, {from, x.host_until}});
  }
  [[gnu::noinline]] void long_gap(const LongGap& x, const Run& r) {
    const TimeNs rest_other = x.rest - x.rest_host;
    ev.idle_gaps_explained_ns += x.explained + x.input_part;
    ev.idle_gaps_sync_ns += x.explained;
    // After a sync of CUDA graphs' set-up: warm-up, whatever ended the gap.
    ev.idle_gaps_warmup_ns += x.setup;
    ev.idle_gaps_warmup += x.setup > 0 && !x.warm_up;
    if (x.warm_up) {
      ev.idle_gaps_warmup_ns += x.late ? x.rest_host : x.rest;
      if (x.unsure) ev.idle_gaps_warmup_unsure_ns += x.late ? x.rest_host : x.rest;
      ++ev.idle_gaps_warmup;
      if (in_capture(x.g0, x.g1))
        ++ev.idle_gaps_capture, ev.idle_gaps_capture_ns += length_within(captures, {x.g0, x.g1});
    } else if (x.late) {
      ev.idle_gaps_launch_ns += x.rest_host;
      if (x.thread != IdlePiece::kNone && x.rest_host > 0) late_gap(x);
    }
    const bool held = !(x.warm_up && !x.late) && rest_other > 0;
    const StringId comm = held && x.linked && !x.unrecorded ? comm_hold(x.g0, x.g1) : kNoComm;
    (x.unrecorded      ? ev.idle_gaps_unrecorded_ns
     : comm != kNoComm ? ev.idle_gaps_comm_ns
     : x.linked        ? ev.idle_gaps_queued_ns
                       : ev.idle_gaps_unlaunched_ns) += held ? rest_other : 0;
    if (held && x.unrecorded) note_unrecorded(r, rt.shift({x.g0, x.g1}));
    if (comm != kNoComm) {
      ++ev.comm_gaps;
      if (rest_other > ev.comm_gap_largest_ns)
        ev.comm_gap_largest_ns = rest_other, ev.comm_gap_range = std::string(t.str(comm));
    } else if (held && x.linked && !x.unrecorded) {
      note_stream_wait(x.launch_api, rest_other);
    }
  }

  // Whether a held long gap [g0, g1) most likely waited for communication
  // the trace did not record: an op starting at g1 (or within a kernel
  // switch of it, consecutive_kernel_delay_ns) was launched inside a
  // host range named for communication (is_comm_range_name), or in one its
  // launching thread entered during the gap before that launch, and that
  // range launched no communication kernel the trace records (a filtered or
  // sampled trace that dropped the collective, whose wait the next op
  // shows). The range's name, or kNoComm.
  static constexpr StringId kNoComm = ~StringId{0};
  NameMemo<bool (*)(std::string_view)> comm_range_name{t, is_comm_range_name};
  [[gnu::noinline]] StringId comm_hold(TimeNs g0, TimeNs g1) {
    const ApiCallTable& c = t.api_calls();
    const RangeTable& rg = t.ranges();
    if (rg.size() == 0) return kNoComm;
    // Ops starting within a kernel switch of the gap's end were released with
    // the op that ended it (an NCCL kernel 3 µs before the op it held up).
    const TimeNs released = g1 + opt.consecutive_kernel_delay_ns;
    for (const Run& q : runs) {
      if (!q.api) continue;
      const TableId table = q.table == kKernel ? TableId::kernels
                            : q.table == kCopy ? TableId::memcpys
                                               : TableId::memsets;
      const RowRange rows = t.rows_of(table, q.track);
      const TimeNs* at = std::lower_bound(q.start + rows.begin, q.start + rows.end, g1);
      for (RowIndex j = static_cast<RowIndex>(at - q.start); j < rows.end && q.start[j] <= released; ++j) {
        const RowIndex api = q.api[j];
        if (api == kNoRow) continue;
        const TrackId thread = c.track_at(api);
        const TimeNs lo = std::min(g0, c.start[api]), hi = c.end[api];
        const RowRange in = t.rows_overlapping(TableId::ranges, thread, lo, hi);
        RowIndex found = kNoRow;  // the innermost (latest-starting) such range
        for (RowIndex i = in.begin; i < in.end; ++i)
          if (rg.start[i] <= hi && rg.end[i] >= lo && comm_range_name(rg.name[i]) &&
              (found == kNoRow || rg.start[i] >= rg.start[found]) &&
              !launched_comm_kernel(thread, rg.start[i], rg.end[i]))
            found = i;
        if (found != kNoRow) return rg.name[found];
      }
    }
    return kNoComm;
  }
  // Whether a call on `thread` in [a, b] launched a communication kernel.
  bool launched_comm_kernel(TrackId thread, TimeNs a, TimeNs b) const {
    const ApiCallTable& c = t.api_calls();
    const RowRange calls = t.rows_overlapping(TableId::api_calls, thread, a, b);
    for (RowIndex k = calls.begin; k < calls.end; ++k)
      if (c.start[k] >= a && c.start[k] <= b && c.op_table[k] == static_cast<std::uint8_t>(OpTable::kernel) &&
          c.op_row[k] != kNoRow &&
          t.kernels().category[c.op_row[k]] == static_cast<std::uint8_t>(KernelCategory::communication))
        return true;
    return false;
  }

  // Whether the launching thread spent [a, b), the host part of a long gap a
  // late launch ended, on one-time work: set-up calls, a range named
  // warm-up, the first call of the launching op before the first step ended,
  // or an op's first call much slower than its later ones.
  bool one_time_host_work(TrackId thread, RowIndex launch_api, TimeNs a, TimeNs b) {
    return setup_in(thread, a, b) || in_warm_up_range(thread, a, b) ||
           (a < first_step_end && in_first_op_call(launch_api, a, b)) || in_slow_first_call(thread, a, b);
  }

  // Whether at least half of [a, b) lies inside CUDA graph captures (any
  // thread's): the host records launches into a graph and the GPU gets none
  // of them, set-up like a module load.
  std::vector<TimeRange> captures;
  int captures_state = -1;  // -1 not looked for yet, 0 none, 1 some
  [[gnu::noinline]] bool in_capture(TimeNs a, TimeNs b) {
    if (b <= a || captures_state == 0) return false;
    if (captures_state < 0) {
      captures = graph_captures(t).windows;
      captures_state = captures.empty() ? 0 : 1;
      if (captures_state == 0) return false;
    }
    return 2 * intervals::length_within(captures, {a, b}) >= b - a;
  }

  // Whether the launching thread spent at least half of [a, b) in set-up
  // calls (is_setup_api: creating streams, loading modules, creating a
  // context), or inside graph captures: a one-time cost, warm-up like a
  // kernel's first call.
  NameMemo<bool (*)(std::string_view)> setup_api{t, is_setup_api};
  [[gnu::noinline]] bool setup_in(TrackId thread, TimeNs a, TimeNs b) {
    if (in_capture(a, b)) return true;
    if (thread == IdlePiece::kNone || b <= a) return false;
    const ApiCallTable& api = t.api_calls();
    const RowRange r = t.rows_overlapping(TableId::api_calls, thread, a, b);
    TimeNs in = 0;
    for (RowIndex k = r.begin; k < r.end; ++k)
      if (setup_api(api.name[k])) in += std::max<TimeNs>(0, std::min(b, api.end[k]) - std::max(a, api.start[k]));
    return 2 * in >= b - a;
  }

  // A name that marks a warm-up phase: "warmup", "warm_up" or "warm-up" as a
  // word of its own ("[param|…|warmup|forward]", "warmup_iter"), not inside
  // an identifier ("WarmupLR.step"), nor a learning-rate schedule's warm-up
  // (a name that also says "lr" or "sched"), which runs in every step. Or
  // one that names emptying caches ("[param|clear_cache]", "flush_l2"): a
  // benchmark's cold-cache set-up before what it measures, no cost of the
  // program it measures.
  static bool warm_up_name(std::string_view n) {
    if (contains_nocase(n, "lr") || contains_nocase(n, "sched")) return false;
    if (is_cache_flush_name(n)) return true;
    for (std::string_view w : {"warmup", "warm_up", "warm-up"})
      for (std::size_t at = 0; at + w.size() <= n.size(); ++at) {
        bool same = true;
        for (std::size_t i = 0; same && i < w.size(); ++i)
          same = std::tolower(static_cast<unsigned char>(n[at + i])) == w[i];
        if (!same) continue;
        const bool open = at == 0 || !std::isalpha(static_cast<unsigned char>(n[at - 1]));
        const bool close = at + w.size() == n.size() || !std::isalpha(static_cast<unsigned char>(n[at + w.size()]));
        if (open && close) return true;
      }
    return false;
  }

  // Whether the launching thread spent at least half of [a, b) inside a
  // range the program named as warm-up (warm_up_name: a benchmark's or a
  // training loop's iterations before it measures).
  std::vector<std::pair<TrackId, TimeRange>> warm_up_ranges;
  int warm_up_ranges_state = -1;  // -1 not looked for yet, 0 none, 1 some
  [[gnu::noinline]] bool in_warm_up_range(TrackId thread, TimeNs a, TimeNs b) {
    if (thread == IdlePiece::kNone || b <= a || warm_up_ranges_state == 0) return false;
    if (warm_up_ranges_state < 0) {
      std::vector<std::int8_t> named(t.strings().size(), 0);
      bool any = false;
      for (StringId id = 0; id < t.strings().size(); ++id) {
        const std::string_view n = t.str(id);
        named[id] = warm_up_name(n);
        any = any || named[id];
      }
      const RangeTable& r = t.ranges();
      if (any)
        for (RowIndex i = 0; i < r.size(); ++i)
          if (named[r.name[i]] && t.tracks()[r.track_at(i)].kind == TrackKind::cpu)
            warm_up_ranges.push_back({r.track_at(i), {r.start[i], r.end[i]}});
      warm_up_ranges_state = warm_up_ranges.empty() ? 0 : 1;
      if (warm_up_ranges_state == 0) return false;
    }
    TimeNs in = 0;
    for (const auto& [track, range] : warm_up_ranges)
      if (track == thread) in = std::max(in, std::min(b, range.end) - std::max(a, range.start));
    return 2 * in >= b - a;
  }

  // Whether the launching thread spent at least half of [a, b) inside the
  // first call in the trace of the op that launched the work (its innermost
  // framework op): a library's first call creates its handles, loads its
  // kernels and picks its algorithms there, warm-up like a kernel's first
  // call, whichever of its ops (a workspace's memset) ends the gap.
  std::vector<RowIndex> first_op_of_name;  // per name: the earliest op range (kNoRow: none)
  void first_ops() {
    const RangeTable& r = t.ranges();
    first_op_of_name.assign(t.strings().size(), kNoRow);
    for (RowIndex i = 0; i < r.size(); ++i) {
      RowIndex& f = first_op_of_name[r.name[i]];
      if ((f == kNoRow || r.start[i] < r.start[f]) && t.is_op_range(i)) f = i;
    }
  }
  [[gnu::noinline]] bool in_first_op_call(RowIndex api, TimeNs a, TimeNs b) {
    if (api == kNoRow || b <= a || t.api_calls().op_range.empty()) return false;
    const RowIndex op = t.api_calls().op_range_at(api);
    if (op == kNoRow) return false;
    const RangeTable& r = t.ranges();
    if (first_op_of_name.empty()) first_ops();
    if (first_op_of_name[r.name[op]] != op) return false;
    // A range over half the recording or more is the run's (a harness's or
    // a loop's own range around everything), not an op's first call.
    if (2 * (r.end[op] - r.start[op]) >= t.end_time() - t.begin_time()) return false;
    return 2 * (std::min(b, r.end[op]) - std::max(a, r.start[op])) >= b - a;
  }

  // Whether the launching thread spent at least half of [a, b) inside the
  // first call in the trace of an op (any framework op around that time)
  // that took kSlowFirstCall times its slowest later call or more: that
  // first call did one-time set-up (loading, compiling, allocating), warm-up
  // whenever it runs, where the op's later calls show what it costs once
  // set up (an MI300 norm test's first aten::arange: 28.6 ms, every later
  // one 0.03 ms at most). An op with no later call shows nothing.
  static constexpr TimeNs kSlowFirstCall = 10;
  std::vector<TimeNs> later_max_of_name;  // per name: its slowest call after the first ended (-1: none)
  [[gnu::noinline]] bool in_slow_first_call(TrackId thread, TimeNs a, TimeNs b) {
    if (thread == IdlePiece::kNone || b <= a) return false;
    const RangeTable& r = t.ranges();
    if (later_max_of_name.empty()) {
      if (first_op_of_name.empty()) first_ops();
      later_max_of_name.assign(t.strings().size(), -1);
      for (RowIndex i = 0; i < r.size(); ++i) {
        const RowIndex f = first_op_of_name[r.name[i]];
        // Calls inside the first call (an op that calls itself) are part of it.
        if (f != kNoRow && i != f && r.start[i] >= r.end[f] && t.is_op_range(i))
          later_max_of_name[r.name[i]] = std::max(later_max_of_name[r.name[i]], r.end[i] - r.start[i]);
      }
    }
    const RowRange rows = t.rows_overlapping(TableId::ranges, thread, a, b);
    for (RowIndex i = rows.begin; i < rows.end; ++i) {
      if (2 * (std::min(b, r.end[i]) - std::max(a, r.start[i])) < b - a) continue;
      if (first_op_of_name[r.name[i]] == i) {
        const TimeNs later = later_max_of_name[r.name[i]];
        if (later >= 0 && r.end[i] - r.start[i] >= kSlowFirstCall * std::max<TimeNs>(later, 1)) return true;
      }
      if (slow_first_of_shapes(i)) return true;
    }
    return false;
  }

  // The same per input shapes: an op's first call with shapes it has not run
  // before (cuBLAS choosing a GEMM's algorithm for each new shape: a B200's
  // first aten::addmm of each shape 1.5-2.5 ms, every later one under
  // 0.1 ms) that took kSlowFirstCall times the slowest later call of those
  // shapes or more.
  struct ShapeCalls {
    RowIndex first = kNoRow;
    TimeNs later_max = -1;
  };
  std::unordered_map<std::uint64_t, ShapeCalls> shape_calls;
  int shape_calls_state = -1;  // -1 not made yet, 0 no op records shapes, 1 made
  [[gnu::noinline]] bool slow_first_of_shapes(RowIndex op) {
    const RangeTable& r = t.ranges();
    auto key = [&](RowIndex i) { return (std::uint64_t{r.name[i]} << 32) | r.input_dims_at(i); };
    if (shape_calls_state < 0) {
      for (RowIndex i = 0; i < r.size(); ++i)
        if (r.input_dims_at(i) != StringTable::kNoString && t.is_op_range(i)) {
          ShapeCalls& s = shape_calls[key(i)];
          if (s.first == kNoRow || r.start[i] < r.start[s.first]) s.first = i;
        }
      for (RowIndex i = 0; i < r.size(); ++i) {
        if (r.input_dims_at(i) == StringTable::kNoString || !t.is_op_range(i)) continue;
        ShapeCalls& s = shape_calls[key(i)];
        if (i != s.first && r.start[i] >= r.end[s.first]) s.later_max = std::max(s.later_max, r.end[i] - r.start[i]);
      }
      shape_calls_state = shape_calls.empty() ? 0 : 1;
    }
    if (shape_calls_state == 0 || r.input_dims_at(op) == StringTable::kNoString) return false;
    const auto it = shape_calls.find(key(op));
    if (it == shape_calls.end() || it->second.first != op || it->second.later_max < 0) return false;
    return r.end[op] - r.start[op] >= kSlowFirstCall * std::max<TimeNs>(it->second.later_max, 1);
  }

  // The held work's launching thread: a stream-wait call among its calls
  // since its previous launch (at most 64 calls back) is what held the work
  // (the stream waits for an event recorded on another stream).
  static bool is_stream_wait(std::string_view name) { return name.find("StreamWaitEvent") != std::string_view::npos; }
  NameMemo<bool (*)(std::string_view)> stream_wait_api{t, is_stream_wait};
  NameMemo<bool (*)(std::string_view)> graph_launch_api{t, is_graph_launch_name};
  [[gnu::noinline]] void note_stream_wait(RowIndex api, TimeNs held) {
    if (api == kNoRow) return;
    const ApiCallTable& a = t.api_calls();
    // Held work a graph launch queued: it waited inside the graph or at its head.
    if (graph_launch_api(a.name[api])) ev.held_graph_ns += held;
    const TrackId track = a.track_at(api);
    for (RowIndex k = api, n = 0; k > 0 && n < 64; ++n) {
      --k;
      if (a.track_at(k) != track || a.op_table[k] != static_cast<std::uint8_t>(OpTable::none)) return;
      if (stream_wait_api(a.name[k])) {
        if (ev.held_wait_call.empty()) ev.held_wait_call = std::string(t.str(a.name[k]));
        ev.held_wait_ns += held;
        return;
      }
    }
  }

  // The largest gap before a stream's first recorded op (idle_gaps_unrecorded_ns).
  [[gnu::noinline]] void note_unrecorded(const Run& r, TimeRange gap) {
    ++ev.unrecorded_gaps;
    if (gap.duration() <= ev.unrecorded_largest.duration()) return;
    ev.unrecorded_largest = gap;
    ev.unrecorded_device = t.tracks()[r.track].device;
    ev.unrecorded_stream = t.tracks()[r.track].stream;
  }

  // Input wait before this GPU's first op counts too: a GPU that has not
  // started because the first batch is still loading waits for input.
  // False when the device has no op at all.
  bool wait_before_first_op() {
    TimeNs head = RunOrder::kNever;
    for (const Run& r : runs)
      if (r.table) head = std::min(head, r.start[r.row]);
    if (head == RunOrder::kNever) return false;
    if (t.begin_time() < head) {
      const TimeNs before = ev.input_wait.total();
      idle_input(t.begin_time(), head, IdleCause::input_before_start);
      ev.input_wait_before_start_ns += ev.input_wait.total() - before;
    }
    return true;
  }

  // Which launch ended the gap before `a`: the earliest-launched op starting
  // at `a` (op j of run r, the next of its run, and, when a is the stretch's
  // first instant `at`, other runs' ops starting then). Sets `linked` false
  // when none of them has a launching call.
  TimeNs launch_ending_gap(const Run& r, RowIndex j, TimeNs a, TimeNs at, const RunOrder& order, bool& linked,
                           RowIndex& api_out) const {
    const RowIndex api = r.api[j];
    // An op queued before the recording began ended the gap: linked, with no
    // launch to wait for.
    linked = api != kNoRow || a < r.backlog_until;
    api_out = api;
    TimeNs launch = api != kNoRow ? t.api_calls().start[api] : 0;
    auto consider = [&](const Run& q, RowIndex from) {
      for (RowIndex x = from; x < q.last && q.start[x] == a; ++x)
        if (q.api[x] != kNoRow) {
          const TimeNs l = t.api_calls().start[q.api[x]];
          if (!linked || l < launch) launch = l, linked = true, api_out = q.api[x];
        }
    };
    if (j + 1 < r.last && r.start[j + 1] == a) consider(r, j + 1);
    if (a == at)  // later ops of the stretch start before any other run's
      for (int oj = 1; oj < order.size() && order.head_at(oj) == a; ++oj)
        if (runs[order.at(oj)].api) consider(runs[order.at(oj)], runs[order.at(oj)].row);
    return launch;
  }

  // Whether op j of run r is the first kernel of its name in the trace.
  bool first_call(const Run& r, RowIndex j) const {
    if (r.table != kKernel) return false;
    const KernelTable& k = t.kernels();
    return names[k.category_rule.empty() ? r.name[j] : r.name[j] + k.category_rule[j] * t.strings().size()].count == 0;
  }

  // The device's figures once the sweep has passed its last op at `last`.
  void finish(TimeNs first, TimeNs last, const OpSums& sums) {
    add_up();
    exposed_comm.flush();
    copy_alone.flush();
    optimizer_alone.flush();
    d.window = rt.shift({first, last});
    d.span_ns = last - first;
    d.idle_ns = d.span_ns - d.busy_ns;
    d.utilization = ratio(d.busy_ns, d.span_ns);
    d.kernel_concurrency = ratio(multi_, d.kernel_busy_ns);
    // Kernels in flight integrated over time: the sum of kernel durations.
    d.mean_kernels_in_flight = ratio(d.kernel_time_ns, d.kernel_busy_ns);
    d.communication_compute_overlap = ratio(comm_with_compute_, d.communication_ns);
    d.memcpy_compute_overlap = ratio(copy_with_kernels_, d.memcpy_ns);
    // Over the kernels whose grid is recorded (a graph replay's may not be):
    // a kernel without one is unknown, not a kernel of no blocks.
    if (sms && sums.grid_time > 0)
      d.sm_efficiency = static_cast<double>(sums.sm_time) / double(sms) / double(sums.grid_time);
    d.sm_efficiency_known = ratio(sums.grid_time, d.kernel_time_ns);
    if (t.end_time() > last) idle_input(last, t.end_time());
    steps.finish();
  }

  // Where the sweep stands: its clock, the state key of the ops in flight,
  // and the current step's share of busy time. Kept by run() in a local
  // (registers), like OpSums: the step's share is summed while pieces fall
  // in its window (added to the step in memory, each piece would wait for
  // the previous one's store) and handed over by settle_steps() before
  // anything else adds to steps.
  struct Cursor {
    TimeNs now = 0, first = 0, busy_until = 0;
    bool started = false;
    unsigned key = 0;  // of the ops in flight now
    TimeNs step_lo = 0, step_hi = -1, step_time[3] = {0, 0, 0};
  };
  void settle_steps(Cursor& c) {
    if (c.step_time[0] | c.step_time[1] | c.step_time[2]) {
      steps.deposit(c.step_time);
      c.step_time[0] = c.step_time[1] = c.step_time[2] = 0;
    }
  }
  // The conditions the evidence follows, for the ops in flight with state key `key` from `at` on.
  [[gnu::always_inline]] void enter_state(unsigned key, TimeNs at) {
    const unsigned mask = mask_of(key);
    if (mask != state_mask) set_states(mask, at);
  }
  // Moves the sweep to `at`: everything that happens at `now` has happened,
  // so the conditions the evidence follows are evaluated once per instant,
  // not per event; the time in between goes to the state key's total.
  [[gnu::always_inline]] void move_to(Cursor& c, TimeNs at) {
    if (at > c.now) {
      enter_state(c.key, c.now);
      if (c.started) {
        time_in_[c.key] += at - c.now;
        if (c.key & kAny) {
          if (c.now >= c.step_lo && at <= c.step_hi) {
            c.step_time[field_index(c.key)] += at - c.now;
          } else {
            settle_steps(c);
            steps.add(c.now, at, field_of(c.key));
            steps.window(&c.step_lo, &c.step_hi);
          }
        }
      }
      c.now = at;
    }
  }

  // The host sync starting at `at`, next of run s (table 0): in flight for HTA's figures only.
  [[gnu::always_inline]] void take_sync(Cursor& c, Run& r, int s, TimeNs at, RunOrder& order, OpSums& sums) {
    const RowIndex i = r.row++;
    order.advanced(s, r);
    sums.note_hta(at, r.end[i]);
    n.add(kHta);
    c.key = key_of(n);
    fly(r.end[i], kHta);
  }

  // A stretch of run s from its op starting at `at`: its ops one after the
  // other, for as long as nothing else happens on the device (no other run
  // starts, no op in flight ends). The ops in flight stay as they are
  // (`base_key`) throughout, apart from the run's own current op, so the
  // order of events is known without the merge: most of a stream's ops are
  // taken here, a few instructions each. Event for event what a merge of
  // every start and end would do.
  [[gnu::always_inline]] void take_stretch(Cursor& c, Run& r, int s, TimeNs at, RunOrder& order, OpSums& sums) {
    const unsigned base_key = c.key;
    const TimeNs limit = std::min(flying.empty() ? RunOrder::kNever : flying.back().end, order.second_start());
    RowIndex j = r.row;
    TimeNs a = at;
    for (;;) {
      const TimeNs e = r.end[j];
      if (!c.started) {
        c.started = true;
        c.first = a;
      } else if (!(base_key & kAny) && a > c.busy_until) {
        bool linked = false;
        RowIndex launch_api = kNoRow;
        const TimeNs launch = launch_ending_gap(r, j, a, at, order, linked, launch_api);
        settle_steps(c);  // close_gap() adds idle pieces to the steps (and may move on to a later one)
        close_gap(c.busy_until, a, linked, launch, launch_api, r, j);
        steps.window(&c.step_lo, &c.step_hi);
      }
      const std::uint8_t cls = account(r, j, a, e, r.api[j], sums);
      c.busy_until = std::max(c.busy_until, e);
      const unsigned last_key = key_with(base_key, cls);
      ++j;
      const TimeNs next = j < r.last ? r.start[j] : RunOrder::kNever;
      if (e >= limit || next < e) {  // something else happens first: the op stays in flight
        n.add(cls);
        c.key = last_key;
        fly(e, cls);
        break;
      }
      c.key = last_key;
      move_to(c, e);  // the op ends
      c.key = base_key;
      if (next >= limit) break;
      a = next;
      move_to(c, a);  // the next one starts
    }
    r.row = j;
    order.advanced(s, r);
  }

  // The sums over every op, into the summary and the evidence.
  void hand_over(const OpSums& sums) {
    d.kernel_time_ns += sums.kernel_time;
    ev.optimizer_kernels += sums.optimizer_kernels;
    ev.optimizer_kernel_ns += sums.optimizer_time;
    ev.optimizer_op_kernels += sums.op_kernels;
    ev.optimizer_op_named_kernels += sums.op_named_kernels;
    ev.optimizer_op_kernel_ns += sums.op_time;
    hta_first = sums.hta_first, hta_last = sums.hta_last;
  }

  // The sweep: every start and end of the device's ops in time order. Most
  // ops are taken in stretches of one run (take_stretch()); the merge of
  // runs and the ops in flight handles the rest.
  void run() {
    if (!wait_before_first_op()) return;
    Cursor c;
    OpSums sums;
    RunOrder order(runs);
    c.key = key_of(n);
    for (;;) {
      // Ends before starts at the same instant: touching ops do not overlap.
      while (!flying.empty() && flying.back().end <= order.next_start()) {
        move_to(c, flying.back().end);
        n.remove(flying.back().cls);
        c.key = key_of(n);
        flying.pop_back();
      }
      const int s = order.next();
      if (s < 0) break;
      const TimeNs at = order.next_start();
      move_to(c, at);
      Run& r = runs[s];
      if (r.table == 0)
        take_sync(c, r, s, at, order, sums);
      else
        take_stretch(c, r, s, at, order, sums);
    }
    enter_state(c.key, c.now);
    settle_steps(c);
    hand_over(sums);
    if (c.started) finish(c.first, c.now, sums);
  }

 private:
  TimeNs multi_ = 0, comm_with_compute_ = 0, copy_with_kernels_ = 0;
};

// [SECTION] Helpers ------------------------------------------------------------------------------------

}  // namespace

bool is_comm_range_name(std::string_view name) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (std::string_view marker : {"all_to_all", "alltoall", "all2all", "a2a", "all_gather", "allgather",
                                  "reduce_scatter", "reducescatter", "all_reduce", "allreduce"})
    if (lower.find(marker) != std::string::npos) return true;
  // send and recv as words of the name (letters and digits between separators).
  for (std::size_t i = 0; i < lower.size();) {
    std::size_t e = i;
    while (e < lower.size() && std::isalnum(static_cast<unsigned char>(lower[e]))) ++e;
    const std::string_view word = std::string_view(lower).substr(i, e - i);
    if (word == "send" || word == "recv" || word == "isend" || word == "irecv" || word == "sendrecv") return true;
    i = e + 1;
  }
  return false;
}

namespace {

// Launch statistics: one op in BracketMedian::kStride of the device's
// streams, taken by row (the stream passes then see every op against the
// range this sample brackets).
// Where a thread was during some gaps: the innermost op, range or API call
// recorded over each instant, its time summed by name ("" where it recorded
// nothing), and the same time by the outermost framework op (cpu_op) around
// it, and by the innermost range the program named around it (NVTX, a
// record_function or user annotation: the program's own words for its
// phases), that of the device allocator's calls apart. Each instant goes to
// the latest-started piece still open over it: ranges that do not nest
// exactly (a Python frame ending after the op inside it began) give each
// instant to one name, never two.
// `recorded`: the time some op, range or call was open with no data-loading
// range (is_data_loading_frame) open around it; a step's range, or one over
// half the recording (a harness's around the run), is no work of its own.
struct HostInGaps {
  std::map<std::string, TimeNs> innermost, outermost_op, named, allocator_named;
  TimeNs recorded = 0;
};
void host_in_gaps(const Trace& t, const std::vector<std::pair<TrackId, TimeRange>>& gaps, HostInGaps* out) {
  constexpr StringId kNone = ~StringId{0};
  struct Piece {
    TimeNs start, end, own;      // own: the instants it is the innermost open piece over
    StringId name, top = kNone;  // top: the outermost framework op around it (itself included)
    StringId named = kNone;      // the innermost range the program named around it (itself included)
    bool loading = false;        // a data-loading range, or inside one
    bool around = false;         // a step's range, or one over half the recording: no work of its own
  };
  const StringId cpu_op = t.strings().find("cpu_op");
  const StringId python = t.strings().find("python_function");
  NameMemo<bool (*)(std::string_view)> step_named(t, &is_step_range_name);
  NameMemo<bool (*)(std::string_view)> loading(t, &is_data_loading_frame);
  constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
  std::vector<Piece> pieces;
  std::vector<std::size_t> open_rows;
  const RangeTable& rg = t.ranges();
  const ApiCallTable& api = t.api_calls();
  // A range the program named: an annotation or NVTX range, not a framework
  // op, a Python function, a mark or a step's range, nor one over half the
  // recording or more (a harness's range around the whole run says nothing
  // of where in it the host was).
  const TimeNs half = (t.end_time() - t.begin_time()) / 2;
  auto program_named = [&](RowIndex r) {
    const StringId d = rg.domain[r];
    return (d != cpu_op || cpu_op == StringTable::kNoString) && (d != python || python == StringTable::kNoString) &&
           rg.kind_at(r) != RangeKind::mark && rg.end[r] - rg.start[r] < half && !step_named(rg.name[r]);
  };
  for (const auto& thread_gap : gaps) {
    const TrackId thread = thread_gap.first;  // not bindings: lambdas below capture them (clang 14)
    const TimeRange gap = thread_gap.second;
    pieces.clear();
    auto add = [&](TimeNs s, TimeNs e, StringId name, bool op, bool named, bool input, bool around) {
      s = std::max(s, gap.start), e = std::min(e, gap.end);
      if (e > s) pieces.push_back({s, e, 0, name, op ? name : kNone, named ? name : kNone, input, around});
    };
    const RowRange ranges = t.rows_overlapping(TableId::ranges, thread, gap.start, gap.end);
    for (RowIndex r = ranges.begin; r < ranges.end; ++r)
      add(rg.start[r], rg.end[r], rg.name[r], rg.domain[r] == cpu_op && cpu_op != StringTable::kNoString,
          program_named(r), loading(rg.name[r]), step_named(rg.name[r]) || rg.end[r] - rg.start[r] >= half);
    const RowRange calls = t.rows_overlapping(TableId::api_calls, thread, gap.start, gap.end);
    for (RowIndex r = calls.begin; r < calls.end; ++r)
      add(api.start[r], api.end[r], api.name[r], false, false, false, false);
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    // `stack`: indices of the pieces begun, in start order; those ended are
    // dropped from its top as time passes them, so its top is the innermost.
    TimeNs covered = 0, now = gap.start;
    std::vector<std::size_t>& stack = open_rows;
    stack.clear();
    std::size_t next = 0;
    for (;;) {
      while (!stack.empty() && pieces[stack.back()].end <= now) stack.pop_back();
      const TimeNs starts = next < pieces.size() ? pieces[next].start : kNever;
      const TimeNs ends = stack.empty() ? kNever : pieces[stack.back()].end;
      if (starts == kNever && ends == kNever) break;
      const TimeNs to = std::min(starts, ends);
      if (!stack.empty() && to > now) {
        pieces[stack.back()].own += to - now, covered += to - now;
        if (!pieces[stack.back()].loading && !pieces[stack.back()].around) out->recorded += to - now;
      }
      now = std::max(now, to);
      if (starts <= ends) {
        // One that ended as this one begins is not around it.
        while (!stack.empty() && pieces[stack.back()].end <= now) stack.pop_back();
        Piece& p = pieces[next];
        if (!stack.empty()) {
          const Piece& around = pieces[stack.back()];
          if (around.top != kNone) p.top = around.top;
          if (p.named == kNone) p.named = around.named;
          p.loading = p.loading || around.loading;
        }
        stack.push_back(next++);
      }
    }
    for (const Piece& p : pieces) {
      if (p.own <= 0) continue;
      const std::string name(t.str(p.name));
      out->innermost[name] += p.own;
      if (p.top != kNone) out->outermost_op[std::string(t.str(p.top))] += p.own;
      if (p.named != kNone) out->named[std::string(t.str(p.named))] += p.own;
      if (p.named != kNone && is_allocator_call(name)) out->allocator_named[std::string(t.str(p.named))] += p.own;
    }
    if (gap.duration() > covered) out->innermost[""] += gap.duration() - covered;
  }
}

void sample_launches(const Trace& t, const std::vector<TrackId>& tracks, OpTotals& totals) {
  const ApiCallTable& a = t.api_calls();
  const LaunchCalls launch_kind(t);
  auto rows = [&](TableId table, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                  const std::vector<RowIndex>& api, TrackId tr) {
    const RowRange r = t.rows_of(table, tr);
    // The countdown carries over from the previous rows (64-bit: no wrap at the end of a 32-bit row range).
    std::uint64_t i = std::uint64_t{r.begin} + totals.countdown - 1;
    for (; i < r.end; i += BracketMedian::kStride) {
      if (api[i] == kNoRow || launch_kind(api[i]) != LaunchCalls::kAsync) continue;
      const TimeNs call_end = a.end[api[i]];
      totals.launch[OpTotals::kCpu].sample(call_end - a.start[api[i]]);
      totals.launch[OpTotals::kGpu].sample(end[i] - start[i]);
      totals.launch[OpTotals::kDelay].sample(start[i] - call_end);
    }
    totals.countdown = static_cast<std::uint32_t>(i - r.end + 1);
  };
  for (TrackId tr : tracks) {
    rows(TableId::kernels, t.kernels().start, t.kernels().end, t.kernels().api, tr);
    rows(TableId::memcpys, t.memcpys().start, t.memcpys().end, t.memcpys().api, tr);
    rows(TableId::memsets, t.memsets().start, t.memsets().end, t.memsets().api, tr);
  }
}

// A data-loading range that fetches a batch: not a Python frame of the
// loader's set-up ("dataloader.py(478): __iter__", "…: __len__"), only one
// whose function fetches ("…: __next__").
bool is_fetch_name(std::string_view name) {
  const std::size_t frame = name.find(".py(");
  if (frame == std::string_view::npos) return true;
  const std::size_t colon = name.find("): ", frame);
  return colon != std::string_view::npos && name.substr(colon).find("next") != std::string_view::npos;
}

// Union of the trace's data-loading CPU ranges; `fetches`: the union of
// those that fetch a batch (is_fetch_name).
IntervalSet input_ranges(const Trace& t, IntervalSet* fetches) {
  const RangeTable& r = t.ranges();
  std::vector<std::uint8_t> is_input(t.strings().size(), 3);  // 3 = not decided yet; 2 = fetches
  std::vector<TimeRange> found, fetching;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (t.tracks()[r.track_at(i)].kind != TrackKind::cpu || r.kind_at(i) == RangeKind::mark) continue;
    std::uint8_t& decided = is_input[r.name[i]];
    if (decided == 3) {
      const std::string_view name = t.str(r.name[i]);
      decided = !is_input_range_name(name) ? 0 : is_fetch_name(name) ? 2 : 1;
    }
    if (decided) found.push_back({r.start[i], r.end[i]});
    if (decided == 2) fetching.push_back({r.start[i], r.end[i]});
  }
  *fetches = union_of(std::move(fetching));
  return union_of(std::move(found));
}

// The pieces of `fetches` that begin inside a step (of any device: a step's
// range is the same host time on each).
std::uint64_t fetches_in_steps(const IntervalSet& fetches, const std::vector<Step>& steps) {
  if (fetches.empty() || steps.empty()) return 0;
  std::vector<TimeRange> ranges;
  for (const Step& s : steps) ranges.push_back(s.range);
  const IntervalSet in_steps = union_of(std::move(ranges));
  std::uint64_t n = 0;
  for (const TimeRange& piece : fetches) {
    auto after = std::upper_bound(in_steps.begin(), in_steps.end(), piece.start,
                                  [](TimeNs at, const TimeRange& r) { return at < r.start; });
    n += after != in_steps.begin() && std::prev(after)->end > piece.start;
  }
  return n;
}

// End times of the host synchronizations that concern `device`: sync records
// for it or for no particular device, else (traces without sync records) the
// synchronizing API calls; and the launching calls of its copies that block
// the host (`blocking`).
std::vector<SyncEnd> sync_ends(const Trace& t, std::uint32_t device, const std::vector<BlockingCopy>& blocking,
                               std::optional<GraphSetup>& setup) {
  std::vector<SyncEnd> out;
  auto add = [&](TrackId thread, TimeNs a, TimeNs b) {
    if (!setup) setup.emplace(t);
    out.push_back({b, false, b - a, setup->any() && setup->holds(thread, a)});
  };
  const SyncTable& y = t.syncs();
  if (y.size()) {
    for (std::size_t i = 0; i < y.size(); ++i)
      if (y.type_at(i) != SyncType::stream_wait_event && (y.device[i] == device || y.device[i] == kNoDevice) &&
          !(y.type_at(i) == SyncType::event && is_poll_sync(t, i)))
        add(y.track_at(i), y.start[i], y.end[i]);
  } else {
    const ApiCallTable& a = t.api_calls();
    std::vector<std::int8_t> is_sync(t.strings().size(), -1);
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::int8_t& s = is_sync[a.name[i]];
      if (s < 0) s = is_sync_api(t.str(a.name[i])) ? 1 : 0;
      if (s) add(a.track_at(i), a.start[i], a.end[i]);
    }
  }
  // A blocking copy's call that returned before its own copy began (a
  // pageable host-to-device copy returns once staged) drained nothing: the
  // GPU idle until that copy is the copy's own wait, not the idle after a sync.
  for (const BlockingCopy& b : blocking)
    if (t.tracks()[t.memcpys().track_at(b.row)].device == device &&
        t.api_calls().end[b.api] >= t.memcpys().start[b.row])
      out.push_back({t.api_calls().end[b.api], true, t.api_calls().end[b.api] - t.api_calls().start[b.api], false,
                     t.memcpys().kind_at(b.row) == CopyKind::dtoh && t.memcpys().bytes[b.row] >= kReadbackBytes});
  std::sort(out.begin(), out.end(), [](const SyncEnd& a, const SyncEnd& b) { return a.end < b.end; });
  return out;
}

// Per kernel row: 1 | kOptimizer if an optimizer op (PyTorch's
// "Optimizer.step#…" range, or an op inside one) launched it, 1 if that
// kernel communicates, else 0; empty when no optimizer op launched any.
std::vector<std::uint8_t> optimizer_op_kernels(const Trace& t) {
  const RangeTable& rg = t.ranges();
  const ApiCallTable& a = t.api_calls();
  const KernelTable& k = t.kernels();
  std::vector<std::uint8_t> out;
  if (rg.size() == 0 || a.op_range.empty()) return out;
  std::vector<std::int8_t> named(t.strings().size(), -1);  // per name: an optimizer op's
  // No optimizer op among the ranges (most traces but PyTorch's): no kernel is
  // inside one, and the kernels need not be read. Each name is tested once.
  bool any = false;
  for (RowIndex r = 0; r < rg.size() && !any; ++r) {
    std::int8_t& n = named[rg.name[r]];
    if (n < 0) n = is_optimizer_step(t.str(rg.name[r])) ? 1 : 0;
    any = n == 1;
  }
  if (!any) return out;
  std::vector<std::int8_t> under(rg.size(), -1);  // per range: inside an optimizer op
  auto inside = [&](RowIndex r) {
    // Up to the first range decided (or the top), then every range on the way gets the answer.
    RowIndex x = r;
    int depth = 0;
    std::int8_t found = 0;
    for (; x != kNoRow && depth < 256; x = t.parent_op(x), ++depth) {
      if (under[x] >= 0) {
        found = under[x];
        break;
      }
      std::int8_t& n = named[rg.name[x]];
      if (n < 0) n = is_optimizer_step(t.str(rg.name[x])) ? 1 : 0;
      if (n) {
        found = 1;
        break;
      }
    }
    for (RowIndex y = r; y != x && y != kNoRow; y = t.parent_op(y)) under[y] = found;
    return found == 1;
  };
  for (std::size_t i = 0; i < k.size(); ++i) {
    const RowIndex api = k.api[i];
    if (api == kNoRow || a.op_range_at(api) == kNoRow || !inside(a.op_range_at(api))) continue;
    if (out.empty()) out.assign(k.size(), 0);
    out[i] = static_cast<std::uint8_t>(
        1 | (k.category_at(i) == KernelCategory::communication ? 0 : static_cast<unsigned>(kOptimizer)));
  }
  return out;
}

}  // namespace

// [SECTION] Entry point ----------------------------------------------------------------------------

void device_pass(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<Step>& steps, Profile* p,
                 std::vector<DeviceSummary>* summaries, std::vector<TemporalBreakdown>* hta, Evidence* ev,
                 OpTotals* totals, std::vector<OpTotals::Name>* names, ExposedCommunication* exposed_comm,
                 ExposedCommunication* copies_alone) {
  const Trace& t = *rt.trace;
  // Per name and rule that placed its kernels (CategoryRuleKind: slot name +
  // rule × strings), so a name's kernels of several categories stay apart;
  // as many slots per name as the highest rule in the trace needs.
  const std::vector<std::uint8_t>& rules = t.kernels().category_rule;
  const std::size_t slots =
      t.strings().size() * (rules.empty() ? 1 : 1 + std::size_t{*std::max_element(rules.begin(), rules.end())});
  names->assign(slots, {0, 0, std::numeric_limits<TimeNs>::max(), std::numeric_limits<TimeNs>::min(), 0});
  std::map<std::uint32_t, std::vector<TrackId>> by_device;
  for (TrackId i = 0; i < t.tracks().size(); ++i)
    if (on_device(t, i, opt.device)) by_device[t.tracks()[i].device].push_back(i);
  IntervalSet fetches;
  const IntervalSet inputs = input_ranges(t, &fetches);
  if (!inputs.empty()) ev->has_input_ranges = true;
  p->steps.input_fetches += fetches_in_steps(fetches, steps);
  const std::vector<BlockingCopy> blocking = blocking_copies(t, opt);
  std::optional<GraphSetup> setup;  // made at the first sync
  const std::vector<std::uint8_t> optimizer_op = optimizer_op_kernels(t);
  const HtaOpFilter hta_filter(t);
  HtaComputeNames hta_compute(t);
  const bool samples = has_host_samples(t);
  const bool hta_rounds = has_sub_us_timestamps(t);
  HostInGaps host_in_late_gaps;
  {
    std::size_t ops = 0;
    for (const auto& [device, tracks] : by_device)
      for (TrackId tr : tracks)
        ops += t.rows_of(TableId::kernels, tr).size() + t.rows_of(TableId::memcpys, tr).size() +
               t.rows_of(TableId::memsets, tr).size();
    for (auto& q : totals->launch) q.reserve_sample(ops / BracketMedian::kStride + by_device.size() + 1);
  }

  for (const auto& [device, tracks] : by_device) {
    DeviceSummary d;
    d.id = device;
    d.rank = rt.rank;
    const Device* info = t.device(device);
    if (info)
      d.name = device_model_name(*info), d.compute_major = info->compute_major, d.compute_minor = info->compute_minor,
      d.sm_count = info->sm_count;
    std::vector<Step*> mine;
    TimeNs first_step_end = RunOrder::kNever;
    std::int32_t first_index = std::numeric_limits<std::int32_t>::max();
    for (Step& s : steps)
      if (s.device == device)
        mine.push_back(&s), first_step_end = std::min(first_step_end, s.range.end),
                            first_index = std::min(first_index, s.index);
    // The profiler numbers its steps from the program's first (ProfilerStep#0):
    // a first recorded step past it means steps ran before the recording, so a
    // kernel's first call in the trace is not its first call, and no warm-up.
    if (p->steps.source == StepSource::profiler_step && !mine.empty() && first_index > 0)
      first_step_end = std::numeric_limits<TimeNs>::min();

    sample_launches(t, tracks, *totals);
    Sweep sweep(rt, opt, d, *ev, *p, std::move(mine), inputs, hta_filter, hta_compute, *names, info);
    sweep.sms = d.sm_count;
    if (exposed_comm) sweep.exposed_comm.keep_all(&(*exposed_comm)[device]);
    if (copies_alone) sweep.copy_alone.keep_all(&(*copies_alone)[device]);
    sweep.sync_ends = sync_ends(t, device, blocking, setup);
    sweep.first_step_end = first_step_end;
    sweep.optimizer_op = optimizer_op.empty() ? nullptr : optimizer_op.data();
    if (!t.api_calls().op_range.empty()) sweep.late_launches = &totals->late_launches;
    if (samples) sweep.idle_pieces = &totals->idle_pieces;
    sweep.add_runs(tracks);
    totals->backlog_ops += sweep.backlog_ops;
    sweep.run();
    host_in_gaps(t, sweep.late_gaps, &host_in_late_gaps);
    if (d.kernels + d.memcpys + d.memsets == 0) continue;
    // The side work per stream (a stream's runs are next to each other).
    for (std::size_t i = 0; i < sweep.runs.size();) {
      const Run& first = sweep.runs[i];
      TimeNs side = 0;
      bool compute = false;
      for (; i < sweep.runs.size() && sweep.runs[i].table && sweep.runs[i].track == first.track; ++i)
        side += sweep.runs[i].side, compute = compute || sweep.runs[i].compute;
      if (!first.table) ++i;  // HTA's syncs
      sweep.occupancy.add_side_work(side, compute);
    }
    d.occupancy = sweep.occupancy.figures(d.kernel_time_ns);
    // A GPU its kernels leave mostly empty: how much of that is grids too
    // small for it (one more pass over its kernels, only then).
    if (d.occupancy.gpu_fill && *d.occupancy.gpu_fill < 0.25) small_grids(t, tracks, d.sm_count, &d.occupancy);
    // HTA's breakdown of this device: from the sweep, except on sub-µs traces,
    // where HTA's rounding needs the reference emulation.
    if (hta_rounds)
      hta->push_back(hta_temporal_breakdown(t, device));
    else if (sweep.hta_any())
      hta->push_back(
          make_temporal_breakdown(0, device, sweep.hta_last - sweep.hta_first, sweep.hta_busy, sweep.hta_compute_ns));
    if (!hta->empty()) hta->back().rank = rt.rank;
    summaries->push_back(std::move(d));
  }
  for (auto& [name, ns] : host_in_late_gaps.innermost) ev->idle_gaps_host.emplace_back(name, ns);
  for (auto& [name, ns] : host_in_late_gaps.outermost_op) ev->idle_gaps_host_ops.emplace_back(name, ns);
  for (auto& [name, ns] : host_in_late_gaps.named) ev->idle_gaps_host_named.emplace_back(name, ns);
  for (auto& [name, ns] : host_in_late_gaps.allocator_named) ev->idle_gaps_allocator_named.emplace_back(name, ns);
  ev->idle_gaps_host_recorded_ns += host_in_late_gaps.recorded;
}

}  // namespace gpuscope::detail
