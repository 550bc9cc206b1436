// The op table: GPU time per framework op, per name and per name × shapes,
// with FLOPs, bytes and roofline figures (docs/ops.md).
//
// [SECTION] Groups
// [SECTION] Per op call
// [SECTION] Rows and roofline
// [SECTION] The kernels under the top rows
// [SECTION] Pooling a job's tables
// [SECTION] The pass
//
// A thread's op ranges come in start order with every parent before its
// children, and its launch calls in start order, as attribution took them
// (TraceBuilder::attribute_ops). So the table is one sweep per thread over
// both with the open ops on a stack — each range's group (name × shapes ×
// types) looked up once, each GPU op added to the op on top, a range's totals
// handed to its parent as it closes — and one pass over the kernels for the
// top rows' kernels. No per-range sums; strings are read once per group,
// never per call. A job's table pools its ranks' tables (pool_op_tables).
#include <algorithm>
#include <bit>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/ops/roofline.h"
#include "analysis/util/scratch.h"

namespace gpuscope::detail {

namespace {

constexpr std::string_view kNoOp = "(no op)";
constexpr std::uint32_t kNone = 0xffffffffu;

// [SECTION] Groups ------------------------------------------------------------------------------

struct GroupKey {
  StringId name = 0, dims = 0, types = 0;
  friend bool operator==(const GroupKey&, const GroupKey&) = default;
};

// GroupKey -> dense group index: open addressing over a power-of-two table
// (a trace has hundreds to thousands of groups: the table stays in cache),
// behind the last group of each op name (most names are called with one or
// a few shapes, in runs).
class GroupIndex {
 public:
  explicit GroupIndex(std::size_t strings) : slots_(64, kNone), last_of_name_(strings, kNone) {}
  std::uint32_t find_or_add(const GroupKey& k) {
    std::uint32_t& last = last_of_name_[k.name];
    if (last != kNone && keys_[last] == k) return last;
    std::size_t at = hash(k) & (slots_.size() - 1);
    for (;; at = (at + 1) & (slots_.size() - 1)) {
      const std::uint32_t g = slots_[at];
      if (g == kNone) break;
      if (keys_[g] == k) return last = g;
    }
    const auto g = static_cast<std::uint32_t>(keys_.size());
    keys_.push_back(k);
    slots_[at] = g;
    if (keys_.size() * 2 > slots_.size()) grow();
    return last = g;
  }
  const std::vector<GroupKey>& keys() const { return keys_; }

 private:
  static std::size_t hash(const GroupKey& k) {
    const std::uint64_t h = (std::uint64_t{k.name} * 0x9E3779B97F4A7C15ull) ^
                            (std::uint64_t{k.dims} * 0xC2B2AE3D27D4EB4Full) ^ (std::uint64_t{k.types} * 0x165667B1ull);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
  void grow() {
    std::vector<std::uint32_t> bigger(slots_.size() * 2, kNone);
    for (std::uint32_t g = 0; g < keys_.size(); ++g) {
      std::size_t at = hash(keys_[g]) & (bigger.size() - 1);
      while (bigger[at] != kNone) at = (at + 1) & (bigger.size() - 1);
      bigger[at] = g;
    }
    slots_ = std::move(bigger);
  }
  std::vector<std::uint32_t> slots_;
  std::vector<GroupKey> keys_;
  std::vector<std::uint32_t> last_of_name_;  // per StringId
};

// The totals of calls, for folding those inside a call of the same op.
struct CallTotals {
  std::uint64_t calls = 0, gpu_calls = 0, kernels_total = 0;
  TimeNs cpu_total = 0, gpu_total = 0;
};

// The sums of one group's calls. A call inside a call of the same group (an
// op that calls itself: aten::upsample_nearest1d inside
// aten::upsample_nearest1d, aten::div on a scalar calling aten::div) is part
// of the outer call: not a call of its own, its totals already in the
// outer's; its self times are its own. `in_name`: of the calls counted, those
// inside a call of the same name with other shapes, which the per-name row
// folds the same way.
struct GroupSums {
  std::uint64_t calls = 0, kernels = 0, kernels_total = 0;
  TimeNs cpu_total = 0, cpu_self = 0, gpu_self = 0, gpu_total = 0, launch = 0;
  TimeNs copy_call = 0, starved = 0, starved_total = 0;
  std::uint64_t gpu_calls = 0;     // calls that launched GPU work, themselves or through the ops inside
  std::uint64_t nested_calls = 0;  // calls inside a call of the same group (folded into it)
  CallTotals in_name;
  RowIndex first = kNoRow;  // its first call
};

// PyTorch's profiler step ranges, ProfilerStep#1, #2, …, are one op, named
// as PyTorch's own op table names it (key_averages: "ProfilerStep*"), not a
// row per step.
constexpr std::string_view kProfilerStep = "ProfilerStep*";
std::string_view op_name(std::string_view name) { return is_profiler_step(name) ? kProfilerStep : name; }

// [SECTION] Per op call -----------------------------------------------------------------------

// Calls range(row) and call(row) for every range and API call of each track
// in the order attribution took them (TraceBuilder::attribute_ops): the
// ranges that start at or before a call first; done() after each track.
template <class Range, class Call, class Done>
void in_launch_order(const Trace& t, Range&& range, Call&& call, Done&& done) {
  const TimeNs* const range_start = t.ranges().start.data();
  const TimeNs* const call_start = t.api_calls().start.data();
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    const RowRange ranges = t.rows_of(TableId::ranges, tr), calls = t.rows_of(TableId::api_calls, tr);
    RowIndex next = ranges.begin;
    // The next range's start in a local: most calls open no range.
    TimeNs next_start = next < ranges.end ? range_start[next] : 0;
    for (RowIndex a = calls.begin; a < calls.end; ++a) {
      for (const TimeNs s = call_start[a]; next < ranges.end && next_start <= s;) {
        range(next);
        if (++next < ranges.end) next_start = range_start[next];
      }
      call(a);
    }
    for (; next < ranges.end; ++next) range(next);
    done();
  }
}

// Each GPU op an API call launched (most launch one).
template <class F>
void each_op_of(const Trace& t, RowIndex a, F&& f) {
  if (!t.has_extra_ops()) {
    f(OpRef{static_cast<OpTable>(t.api_calls().op_table[a]), t.api_calls().op_row[a]});
    return;
  }
  t.for_each_op_of(a, f);
}

TimeNs duration(const Trace& t, OpRef op) {
  switch (op.table) {
    case OpTable::kernel: return t.kernels().end[op.row] - t.kernels().start[op.row];
    case OpTable::memcpy: return t.memcpys().end[op.row] - t.memcpys().start[op.row];
    case OpTable::memset: return t.memsets().end[op.row] - t.memsets().start[op.row];
    case OpTable::none: break;
  }
  return 0;
}

struct Calls {
  GroupIndex index;
  std::vector<GroupSums> groups;
  ScratchArray<std::uint32_t> group_of;  // per range row: its group, kNone if it is not an op
  TimeNs no_op_ns = 0;
  std::uint64_t no_op_count = 0;
  std::vector<std::uint8_t> profiler_step;  // by name id: 2 not known yet, 1 a ProfilerStep#N, 0 not
  StringId first_step_name = StringTable::kNoString;
  explicit Calls(const Trace& t)
      : index(t.strings().size()), group_of(t.ranges().size()), profiler_step(t.strings().size(), 2) {}
};

// Every op range into its group, and every GPU op into the op that launched
// it, in one sweep per thread: the open ops are a stack that is always the
// chain of the innermost one's parents (a range's parent and a call's
// launching op are on it), and a range's totals — CPU time of the ranges
// directly inside, GPU time and ops with the ranges inside — are complete
// when it leaves the stack, which hands them to its parent below. No
// per-range sums are kept.
using LateLaunches = std::vector<std::pair<RowIndex, TimeNs>>;

// The walk in launch order, its state and its three steps: a range opens
// (closing the ranges it is not inside), a call charges its GPU work to the
// innermost open op, and a range closes into its parent.
class OpCallWalk {
 public:
  OpCallWalk(const Trace& t, OpSummary& s, Calls& c, LateLaunches& late)
      : t_(t), s_(s), c_(c), late_(late), open_in_name_(t.strings().size(), 0) {
    // Idle gaps ended by late launches, by launching call: charged to the op
    // that made the call as `call` passes it (calls come in row order).
    std::sort(late_.begin(), late_.end());
    next_late_call_ = late_.empty() ? kNoRow : late_.front().first;
  }

  // GPU ops without a launch call.
  template <class Table>
  void unlaunched(const Table& table) {
    s_.gpu_ops += table.size();
    for (std::size_t i = 0; i < table.size(); ++i)
      if (table.api[i] == kNoRow) {
        ++(table.correlation[i] == 0 ? s_.no_correlation : s_.unmatched_correlation);
        unattributed(table.end[i] - table.start[i]);
      }
  }

  void range(RowIndex r) {
    const RangeTable& rg = t_.ranges();
    if (!t_.is_op_range(r)) {
      c_.group_of[r] = kNone;
      return;
    }
    const RowIndex p = rg.parent[r];
    while (!open_.empty() && open_.back().row != p) close();
    const TimeNs d = rg.end[r] - rg.start[r];
    if (!open_.empty()) open_.back().children += d;
    if (p != kNoRow && rg.end[r] > rg.end[p]) ++s_.overlapping;
    ++s_.op_calls;
    StringId name = rg.name[r];
    if (std::uint8_t& step = c_.profiler_step[name]; step == 2) step = op_name(t_.str(name)) == kProfilerStep ? 1 : 0;
    if (c_.profiler_step[name]) {  // every ProfilerStep#N groups under the first one's id
      if (c_.first_step_name == StringTable::kNoString) c_.first_step_name = name;
      name = c_.first_step_name;
    }
    const GroupKey key{name, rg.input_dims_at(r), rg.input_types_at(r)};
    if (key.dims) ++s_.with_shapes;
    const std::uint32_t g = c_.index.find_or_add(key);
    if (g == c_.groups.size()) c_.groups.emplace_back().first = r, open_in_group_.push_back(0);  // its first call
    GroupSums& sums = c_.groups[g];
    const bool in_group = open_in_group_[g] > 0, in_name = open_in_name_[name] > 0;
    ++open_in_group_[g], ++open_in_name_[name];
    if (in_group) {
      ++sums.nested_calls;
    } else {
      ++sums.calls;
      sums.cpu_total += d;
      if (in_name) ++sums.in_name.calls, sums.in_name.cpu_total += d;
    }
    c_.group_of[r] = g;
    open_.push_back({r, g, name, d, in_group, in_name});
  }

  void call(RowIndex a) {
    const ApiCallTable& api = t_.api_calls();
    if (api.op_table[a] == static_cast<std::uint8_t>(OpTable::none)) return;
    const RowIndex r = api.op_range_at(a);
    if (r == kNoRow) {
      each_op_of(t_, a, [&](OpRef op) { unattributed(duration(t_, op)); });
      return;
    }
    while (!open_.empty() && open_.back().row != r) close();
    if (open_.empty()) return;  // not reached: the launching op is open
    Open& top = open_.back();
    GroupSums& g = c_.groups[top.group];
    if (next_late_call_ <= a) {  // one test for most calls
      while (next_late_ < late_.size() && late_[next_late_].first < a) ++next_late_;
      for (; next_late_ < late_.size() && late_[next_late_].first == a; ++next_late_) {
        g.starved += late_[next_late_].second;
        top.starved += late_[next_late_].second;
      }
      next_late_call_ = next_late_ < late_.size() ? late_[next_late_].first : kNoRow;
    }
    bool copy = false;
    // A copy that ended before its call returned held the call until then:
    // the call waited for it and the work queued ahead (a blocking
    // read-back), which is no launch overhead.
    const TimeNs s0 = api.start[a], e0 = api.end[a];
    TimeNs waited = 0;
    each_op_of(t_, a, [&](OpRef op) {
      copy = copy || op.table != OpTable::kernel;
      if (op.table == OpTable::memcpy && t_.memcpys().end[op.row] <= e0)
        waited = std::max(waited, t_.memcpys().end[op.row] - s0);
      const TimeNs d = duration(t_, op);
      ++s_.attributed;
      top.gpu += d;
      ++top.ops;
      g.gpu_self += d;
      ++g.kernels;
    });
    const TimeNs own = (e0 - s0) - std::clamp<TimeNs>(waited, 0, e0 - s0);
    g.launch += own;
    if (copy) g.copy_call += own;
  }

  void finish() {
    while (!open_.empty()) close();
  }

 private:
  struct Open {
    RowIndex row;
    std::uint32_t group;
    StringId name;
    TimeNs duration;
    bool in_group, in_name;        // inside an open call of the same group / of the same name
    TimeNs children = 0, gpu = 0;  // CPU time of the ranges directly inside; GPU time with them
    TimeNs starved = 0;            // GPU idle its launches and those of the ops inside it ended
    std::uint64_t ops = 0;
  };

  void unattributed(TimeNs d) {
    ++s_.unattributed;
    s_.unattributed_ns += d;
    c_.no_op_ns += d;
    ++c_.no_op_count;
  }

  void close() {
    const Open o = open_.back();
    open_.pop_back();
    --open_in_group_[o.group], --open_in_name_[o.name];
    GroupSums& g = c_.groups[o.group];
    g.cpu_self += std::max<TimeNs>(0, o.duration - o.children);
    if (!o.in_group) {  // a call inside one of its own group is in that one's totals
      g.gpu_total += o.gpu;
      g.kernels_total += o.ops;
      g.gpu_calls += o.ops > 0;
      g.starved_total += o.starved;
      if (o.in_name) g.in_name.gpu_total += o.gpu, g.in_name.kernels_total += o.ops, g.in_name.gpu_calls += o.ops > 0;
    }
    if (!open_.empty()) open_.back().gpu += o.gpu, open_.back().ops += o.ops, open_.back().starved += o.starved;
  }

  const Trace& t_;
  OpSummary& s_;
  Calls& c_;
  LateLaunches& late_;
  std::size_t next_late_ = 0;
  RowIndex next_late_call_ = kNoRow;  // late_[next_late_]'s call (kNoRow: none left)
  std::vector<Open> open_;
  // Open calls per group and per name: is a new call inside one of its own?
  std::vector<std::uint32_t> open_in_group_, open_in_name_;
};

void op_calls(const Trace& t, OpSummary& s, Calls& c, LateLaunches& late) {
  OpCallWalk walk(t, s, c, late);
  walk.unlaunched(t.kernels());
  walk.unlaunched(t.memcpys());
  walk.unlaunched(t.memsets());
  in_launch_order(
      t, [&](RowIndex r) { walk.range(r); }, [&](RowIndex a) { walk.call(a); }, [&] { walk.finish(); });
}

// [SECTION] Rows and roofline -------------------------------------------------------------------

std::string call_path(const Trace& t, RowIndex r) {
  std::vector<std::string_view> names;
  for (RowIndex p = t.parent_op(r); p != kNoRow && names.size() < 64; p = t.parent_op(p))
    names.push_back(op_name(t.str(t.ranges().name[p])));
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (!path.empty()) path += " > ";
    path += *it;
  }
  return path;
}

void add_row(OpRow& into, const OpRow& from) {
  into.calls += from.calls;
  into.gpu_calls += from.gpu_calls;
  into.nested_calls += from.nested_calls;
  into.cpu_self_ns += from.cpu_self_ns;
  into.cpu_total_ns += from.cpu_total_ns;
  into.gpu_self_ns += from.gpu_self_ns;
  into.gpu_total_ns += from.gpu_total_ns;
  into.kernels += from.kernels;
  into.kernels_total += from.kernels_total;
  into.launch_ns += from.launch_ns;
  into.copy_call_ns += from.copy_call_ns;
  into.starved_ns += from.starved_ns;
  into.starved_total_ns += from.starved_total_ns;
  if (into.path.empty()) into.path = from.path;
}

// Achieved rates and intensity from a row's sums.
void rates(OpRow& row) {
  row.achieved_tflops.reset(), row.achieved_tbps.reset(), row.intensity.reset();
  const double seconds = static_cast<double>(row.gpu_total_ns) * 1e-9;
  if (seconds > 0 && row.flops) row.achieved_tflops = *row.flops / seconds / 1e12;
  if (seconds > 0 && row.bytes) row.achieved_tbps = *row.bytes / seconds / 1e12;
  if (row.flops && row.bytes && *row.bytes > 0) row.intensity = *row.flops / *row.bytes;
}

// Known cost of a row's calls that launched GPU work (the same shapes each
// call), and its rates: the work of the calls whose GPU time they divide by.
// A call that launched nothing (one recorded into a CUDA graph capture, its
// work run where the graph is launched; one on the CPU) adds no FLOPs.
// Returns false where those rates exceed the GPU's peak: the formula
// overcounts (an input broadcast from fewer elements, or the same tensor
// twice, which the shapes do not show), so the row gets no cost or roofline.
bool roofline(OpRow& row, const OpCost& cost, const std::optional<DevicePeaks>& peaks) {
  row.family = std::string(to_string(cost.family));
  row.math = std::string(to_string(cost.math));
  row.dims = cost.dims;
  row.aligned8 = cost.aligned8;
  const double calls = static_cast<double>(row.gpu_calls);
  if (cost.flops) row.flops = *cost.flops * calls;
  if (cost.bytes) row.bytes = *cost.bytes * calls;
  if (row.gpu_total_ns <= 0) return true;
  rates(row);
  if (!peaks) return true;
  const double peak_flops = peaks->flops(cost.math), peak_bw = peaks->memory_bandwidth;
  if (row.intensity && peak_flops > 0 && peak_bw > 0) {
    // The roofline at this intensity: min(peak FLOP/s, intensity × bandwidth).
    const double ridge = peak_flops / peak_bw;
    row.bound = *row.intensity >= ridge ? "compute" : "memory";
    const double attainable = std::min(peak_flops, *row.intensity * peak_bw);
    row.roofline_fraction = *row.achieved_tflops * 1e12 / attainable;
  } else if (!row.flops && row.bytes && peak_bw > 0) {
    row.bound = "memory";
    row.roofline_fraction = *row.achieved_tbps * 1e12 / peak_bw;
  }
  if (!row.roofline_fraction || *row.roofline_fraction <= 1) return true;
  row.flops.reset(), row.bytes.reset(), row.roofline_fraction.reset(), row.bound.clear();
  rates(row);
  return false;
}

std::optional<DevicePeaks> trace_peaks(const Trace& t) {
  for (const Device& d : t.devices()) {
    if (d.peak_memory_bandwidth > 0 && d.peak_fp32_flops > 0) {
      DevicePeaks p;
      p.model = d.name;
      p.source = "the trace's device properties";
      p.fp32 = d.peak_fp32_flops;
      p.fp16 = p.bf16 = d.peak_tensor_flops;
      p.memory_bandwidth = d.peak_memory_bandwidth;
      return p;
    }
    if (auto p = peaks_for_device(device_model_name(d))) return p;
  }
  return std::nullopt;
}

// One row per group (its strings read and its shapes parsed once), and the
// "(no op)" row. Unsorted; rows[g] is group g's.
std::vector<OpRow> group_rows(const Trace& t, const Calls& c, OpSummary& s) {
  const std::optional<DevicePeaks> peaks = trace_peaks(t);
  const RangeTable& rg = t.ranges();
  std::vector<OpRow> rows(c.groups.size());
  for (std::size_t g = 0; g < c.groups.size(); ++g) {
    const GroupKey& key = c.index.keys()[g];
    const GroupSums& gs = c.groups[g];
    OpRow& row = rows[g];
    row.calls = gs.calls;
    row.cpu_total_ns = gs.cpu_total;
    row.cpu_self_ns = gs.cpu_self;
    row.gpu_self_ns = gs.gpu_self;
    row.gpu_total_ns = gs.gpu_total;
    row.kernels = gs.kernels;
    row.kernels_total = gs.kernels_total;
    row.launch_ns = gs.launch;
    row.copy_call_ns = gs.copy_call;
    row.starved_ns = gs.starved;
    row.starved_total_ns = gs.starved_total;
    row.gpu_calls = gs.gpu_calls;
    row.nested_calls = gs.nested_calls;
    row.name = std::string(op_name(t.str(key.name)));
    row.shapes = std::string(t.str(key.dims));
    row.dtypes = std::string(t.str(key.types));
    row.path = call_path(t, gs.first);
    const StringId concrete = rg.concrete_inputs_at(gs.first);
    OpInputs in;
    if (key.dims || key.types || concrete) {
      if (!parse_op_inputs(row.shapes, row.dtypes, t.str(concrete), &in)) {
        s.malformed_shapes += row.calls;
        in = {};
      }
    }
    if (op_family(row.name) != OpFamily::none && !roofline(row, op_cost(row.name, in), peaks))
      s.above_peak += row.calls;
  }
  if (c.no_op_count) {
    auto none = std::find_if(rows.begin(), rows.end(),
                             [](const OpRow& r) { return r.name == kNoOp && r.shapes.empty() && r.dtypes.empty(); });
    if (none == rows.end()) {
      none = rows.emplace(rows.end());
      none->name = std::string(kNoOp);
    }
    none->kernels += c.no_op_count;
    none->kernels_total += c.no_op_count;
    none->gpu_self_ns += c.no_op_ns;
    none->gpu_total_ns += c.no_op_ns;
  }
  return rows;
}

bool heavier(const OpRow& a, const OpRow& b) {
  if (a.gpu_total_ns != b.gpu_total_ns) return a.gpu_total_ns > b.gpu_total_ns;
  if (a.cpu_total_ns != b.cpu_total_ns) return a.cpu_total_ns > b.cpu_total_ns;
  return std::tie(a.name, a.shapes, a.dtypes) < std::tie(b.name, b.shapes, b.dtypes);
}

// Per name: the rows of every shape summed; FLOPs and bytes known only if known for every shape.
// `folded[i]` (when given): of rows[i]'s calls, those inside a call of the
// same name with other shapes, which the outer call already holds: counted
// once, as nested calls.
std::vector<OpRow> by_name(const std::vector<OpRow>& rows, const std::vector<CallTotals>& folded = {}) {
  std::vector<OpRow> out;
  std::vector<std::uint8_t> all_known;  // per row of out: 1 all FLOPs known, 2 all bytes known
  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(rows.size());
  for (const OpRow& r : rows) {
    auto [it, fresh] = index.try_emplace(r.name, out.size());
    if (fresh) {
      OpRow& n = out.emplace_back();
      n.name = r.name;
      n.family = r.family;
      n.path = r.path;
      all_known.push_back(3);
    }
    OpRow& n = out[it->second];
    add_row(n, r);
    const std::size_t at = static_cast<std::size_t>(&r - rows.data());
    const CallTotals fold = at < folded.size() ? folded[at] : CallTotals{};
    n.calls -= fold.calls, n.nested_calls += fold.calls, n.gpu_calls -= fold.gpu_calls;
    n.cpu_total_ns -= fold.cpu_total, n.gpu_total_ns -= fold.gpu_total, n.kernels_total -= fold.kernels_total;
    // A row's FLOPs and bytes are its GPU calls' (the same shapes each call): the folded ones' share goes.
    const double kept = r.gpu_calls ? static_cast<double>(r.gpu_calls - std::min(fold.gpu_calls, r.gpu_calls)) /
                                          static_cast<double>(r.gpu_calls)
                                    : 1.0;
    if (r.flops)
      n.flops = n.flops.value_or(0) + *r.flops * kept;
    else
      all_known[it->second] &= 2;
    if (r.bytes)
      n.bytes = n.bytes.value_or(0) + *r.bytes * kept;
    else
      all_known[it->second] &= 1;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!(all_known[i] & 1)) out[i].flops.reset();
    if (!(all_known[i] & 2)) out[i].bytes.reset();
    rates(out[i]);
  }
  // heavier() orders rows of distinct names totally: the order they were met in does not matter.
  std::sort(out.begin(), out.end(), heavier);
  return out;
}

// [SECTION] The kernels under the top rows ------------------------------------------------------

// The kernels under the heaviest rows of both tables (launched by a call of
// the row's op or by an op inside one). The top rows of both tables are
// "slots" (at most 64 bits); the slots above an op range form a set, the same
// for most ranges, so each range gets a small set id in one forward pass
// (parents first) and each kernel adds to a dense (set × kernel name) table:
// no walk up the chain and no hashing per kernel. Each set's sums then go to
// its slots.
class TopKernels {
 public:
  TopKernels(const Trace& t, Calls& c, Profile* p, std::size_t rows, std::size_t kernels,
             const std::vector<OpTotals::Name>* counted)
      : t_(t), c_(c), p_(p), rows_(rows), kernels_(kernels), counted_(counted) {}

  void run() {
    const KernelTable& k = t_.kernels();
    // Dense ids of the kernel names (their order changes nothing below: the
    // cells' sums go to maps by name).
    name_id_.assign(t_.strings().size(), kNone);
    if (!names_from_counts())
      for (RowIndex i = 0; i < k.size(); ++i)
        if (name_id_[k.name[i]] == kNone) {
          name_id_[k.name[i]] = static_cast<std::uint32_t>(names_.size());
          names_.push_back(k.name[i]);
        }
    if (names_.empty()) return;
    // A table's top rows take part unless rows × names would be too large.
    const auto top = [&](const std::vector<OpRow>& rows) {
      const std::size_t n = std::min(rows_, rows.size());
      return n * names_.size() > (std::size_t{1} << 24) ? 0 : n;
    };
    top_names_ = top(p_->op_names);
    top_ops_ = top(p_->ops);
    if (top_names_ + top_ops_ == 0) return;
    const std::uint64_t no_op_bits = slot_bits();
    sets_.push_back(0);  // set 0: no slot
    const std::uint32_t no_op_set = no_op_bits ? intern(no_op_bits) : 0;
    dense_ = sets_.size() * names_.size() <= (std::size_t{1} << 21);
    cells_.resize(dense_ ? sets_.size() * names_.size() : 0);
    // Each op range's group becomes the set of slots of it and its parents
    // (parents come first), then each kernel adds to its launching op's set.
    const RangeTable& rg = t_.ranges();
    for (RowIndex r = 0; r < rg.size(); ++r) {
      std::uint32_t& g = c_.group_of[r];
      if (g == kNone) continue;
      const RowIndex p = rg.parent[r];
      g = next_set(p == kNoRow ? 0 : c_.group_of[p], g);
    }
    const std::vector<RowIndex>& op_range = t_.api_calls().op_range;
    if (dense_ && !op_range.empty()) {
      add_dense(no_op_set);
    } else {
      for (RowIndex i = 0; i < k.size(); ++i) {
        const RowIndex a = k.api[i];
        const RowIndex r = a == kNoRow || op_range.empty() ? kNoRow : op_range[a];
        const std::uint32_t set = r == kNoRow ? no_op_set : c_.group_of[r];
        if (set) add(set, i);
      }
    }
    spread();
  }

 private:
  struct Cell {
    std::uint64_t count = 0;
    TimeNs time = 0;
    RowIndex first = 0;  // its first kernel (lowest row), whose category the row shows
    std::uint8_t category = 0;
  };

  void add(std::uint32_t set, RowIndex i) {
    const KernelTable& k = t_.kernels();
    const std::uint32_t name = name_id_[k.name[i]];
    Cell& cell = dense_ ? cells_[set * names_.size() + name] : sparse_[(std::uint64_t{set} << 32) | name];
    if (cell.count++ == 0 || i < cell.first) cell.first = i, cell.category = k.category[i];
    cell.time += k.end[i] - k.start[i];
  }

  // The kernel names from the device pass's per-name counts (a slot per name,
  // or two: name + strings), when they count every kernel of the trace: no
  // scan of the name column. False when there are none or some kernel is not
  // in them (a device filter).
  bool names_from_counts() {
    if (!counted_) return false;
    const std::size_t nstr = t_.strings().size();
    std::uint64_t kernels = 0;
    for (const OpTotals::Name& n : *counted_) kernels += n.count;
    if (kernels != t_.kernels().size() || counted_->size() % std::max<std::size_t>(nstr, 1) != 0) return false;
    for (std::size_t s = 0; s < counted_->size(); ++s) {
      const std::size_t name = s % nstr;
      if ((*counted_)[s].count && name_id_[name] == kNone) {
        name_id_[name] = static_cast<std::uint32_t>(names_.size());
        names_.push_back(static_cast<StringId>(name));
      }
    }
    return true;
  }

  // add() for every kernel into the dense table, the columns and the table
  // in locals: the loop reads five columns of every kernel, and add()'s
  // members reloaded per kernel were as many loads again.
  void add_dense(std::uint32_t no_op_set) {
    const KernelTable& k = t_.kernels();
    const RowIndex* api = k.api.data();
    const RowIndex* op_range = t_.api_calls().op_range.data();
    const std::uint32_t* group_of = c_.group_of.data();
    const std::uint32_t* name_id = name_id_.data();
    const StringId* name = k.name.data();
    const TimeNs* start = k.start.data();
    const TimeNs* end = k.end.data();
    Cell* cells = cells_.data();
    const std::size_t names = names_.size();
    const RowIndex n = static_cast<RowIndex>(k.size());
    for (RowIndex i = 0; i < n; ++i) {
      const RowIndex a = api[i];
      const std::uint32_t set = a == kNoRow || op_range[a] == kNoRow ? no_op_set : group_of[op_range[a]];
      if (!set) continue;
      Cell& cell = cells[set * names + name_id[name[i]]];
      if (cell.count++ == 0 || i < cell.first) cell.first = i, cell.category = k.category[i];
      cell.time += end[i] - start[i];
    }
  }

  // Per group, the slot bits of its rows; returns the "(no op)" rows' bits.
  std::uint64_t slot_bits() {
    std::map<std::tuple<std::string_view, std::string_view, std::string_view>, std::uint64_t> bits_of;
    for (std::size_t i = 0; i < top_names_; ++i) bits_of[{p_->op_names[i].name, "", ""}] |= std::uint64_t{1} << i;
    for (std::size_t i = 0; i < top_ops_; ++i) {
      const OpRow& r = p_->ops[i];
      bits_of[{r.name, r.shapes, r.dtypes}] |= std::uint64_t{1} << (top_names_ + i);
    }
    const std::uint64_t name_mask = (std::uint64_t{1} << top_names_) - 1;
    auto bits = [&](std::string_view name, std::string_view shapes, std::string_view types) {
      std::uint64_t b = 0;
      if (auto it = bits_of.find({name, "", ""}); it != bits_of.end()) b |= it->second & name_mask;
      if (auto it = bits_of.find({name, shapes, types}); it != bits_of.end()) b |= it->second & ~name_mask;
      return b;
    };
    group_bits_.resize(c_.groups.size());
    with_slots_.assign(c_.groups.size(), kNone);
    for (std::size_t g = 0; g < c_.groups.size(); ++g) {
      const GroupKey& key = c_.index.keys()[g];
      group_bits_[g] = bits(t_.str(key.name), t_.str(key.dims), t_.str(key.types));
      if (group_bits_[g]) with_slots_[g] = n_with_++;
    }
    return bits(kNoOp, "", "");
  }

  std::uint32_t intern(std::uint64_t bits) {
    auto [it, fresh] = set_of_.try_emplace(bits, static_cast<std::uint32_t>(sets_.size()));
    if (fresh) sets_.push_back(bits);
    return it->second;
  }

  // The set of an op range of group g inside ops whose set is `above`;
  // transitions memoized in a dense (set × groups with slots) table.
  std::uint32_t next_set(std::uint32_t above, std::uint32_t g) {
    const std::uint32_t w = with_slots_[g];
    if (w == kNone) return above;
    const std::size_t at = std::size_t{above} * n_with_ + w;
    if (at >= next_.size()) next_.resize(sets_.size() * n_with_, kNone);
    if (next_[at] == kNone) {
      const std::uint32_t set = intern(sets_[above] | group_bits_[g]);
      if (dense_ && sets_.size() * names_.size() > cells_.size()) {
        if (sets_.size() * names_.size() <= (std::size_t{1} << 21))
          cells_.resize(sets_.size() * names_.size());
        else
          to_sparse();
      }
      next_[at] = set;
    }
    return next_[at];
  }

  void to_sparse() {
    for (std::size_t at = 0; at < cells_.size(); ++at)
      if (cells_[at].count) sparse_[((at / names_.size()) << 32) | (at % names_.size())] = cells_[at];
    std::vector<Cell>().swap(cells_);
    dense_ = false;
  }

  // Each set's cells to its slots' rows.
  void spread() {
    std::vector<std::map<std::string, std::pair<OpKernel, RowIndex>>> acc(top_names_ + top_ops_);
    auto to_slots = [&](std::uint64_t set, std::uint64_t name, const Cell& cell) {
      for (std::uint64_t bits = sets_[set]; bits; bits &= bits - 1) {
        auto& [ok, first] = acc[static_cast<std::size_t>(std::countr_zero(bits))][std::string(t_.str(names_[name]))];
        if (ok.count == 0 || cell.first < first) {
          ok.category = static_cast<KernelCategory>(cell.category);
          first = cell.first;
        }
        ok.count += cell.count;
        ok.time_ns += cell.time;
      }
    };
    if (dense_) {
      for (std::size_t at = 0; at < cells_.size(); ++at)
        if (cells_[at].count) to_slots(at / names_.size(), at % names_.size(), cells_[at]);
    } else {
      for (const auto& [key, cell] : sparse_) to_slots(key >> 32, key & 0xffffffffu, cell);
    }
    for (std::size_t slot = 0; slot < acc.size(); ++slot) {
      OpRow& row = slot < top_names_ ? p_->op_names[slot] : p_->ops[slot - top_names_];
      const KernelTable& k = t_.kernels();
      for (auto& [name, entry] : acc[slot]) {
        entry.first.name = name;
        const RowIndex i = entry.second;
        entry.first.blocks = std::uint64_t{k.grid_x[i]} * k.grid_y[i] * k.grid_z[i];
        row.top_kernels.push_back(entry.first);
      }
      std::sort(row.top_kernels.begin(), row.top_kernels.end(),
                [](const OpKernel& a, const OpKernel& b) { return a.time_ns > b.time_ns; });
      if (row.top_kernels.size() > kernels_) row.top_kernels.resize(kernels_);
    }
  }

  const Trace& t_;
  Calls& c_;
  Profile* p_;
  std::size_t rows_, kernels_;
  const std::vector<OpTotals::Name>* counted_;  // the device pass's per-name counts, or null
  std::vector<std::uint32_t> name_id_;
  std::vector<StringId> names_;
  std::size_t top_names_ = 0, top_ops_ = 0;
  std::vector<std::uint64_t> group_bits_;
  std::vector<std::uint32_t> with_slots_;  // per group: its index among the groups with slots, or kNone
  std::uint32_t n_with_ = 0;
  std::vector<std::uint32_t> next_;
  std::vector<std::uint64_t> sets_;  // set id -> slot bits
  std::unordered_map<std::uint64_t, std::uint32_t> set_of_;
  bool dense_ = true;
  std::vector<Cell> cells_;
  std::unordered_map<std::uint64_t, Cell> sparse_;
};

// [SECTION] Pooling a job's tables --------------------------------------------------------------

// The kernels of the same row on several ranks, summed by name: most time
// first (then by name), the top few. Empty when some rank's row was not
// among the rows whose kernels it kept (its kernels there are not known).
struct Part {
  const OpRow* row;
  bool kernels_kept;  // the row was among its rank's top rows (it has its kernels)
};
void merge_kernels(OpRow& into, const std::vector<Part>& from, std::size_t keep) {
  into.top_kernels.clear();
  std::map<std::string, OpKernel> by_name;
  for (const Part& part : from) {
    if (!part.kernels_kept) return;
    for (const OpKernel& k : part.row->top_kernels) {
      auto [it, fresh] = by_name.try_emplace(k.name, k);
      if (fresh) continue;
      it->second.count += k.count, it->second.time_ns += k.time_ns;
      if (!it->second.blocks) it->second.blocks = k.blocks;
    }
  }
  for (auto& [name, k] : by_name) into.top_kernels.push_back(std::move(k));
  std::stable_sort(into.top_kernels.begin(), into.top_kernels.end(),
                   [](const OpKernel& a, const OpKernel& b) { return a.time_ns > b.time_ns; });
  if (into.top_kernels.size() > keep) into.top_kernels.resize(keep);
}

}  // namespace

void pool_op_tables(const std::vector<const Profile*>& ranks, const OpKernelLimits& kept, Profile* job) {
  OpSummary& s = job->op_summary;
  bool any_op = false;
  for (const Profile* r : ranks) {
    const OpSummary& o = r->op_summary;
    s.op_calls += o.op_calls, s.gpu_ops += o.gpu_ops, s.attributed += o.attributed;
    s.unattributed += o.unattributed, s.unattributed_ns += o.unattributed_ns;
    s.no_correlation += o.no_correlation, s.unmatched_correlation += o.unmatched_correlation;
    s.with_shapes += o.with_shapes, s.malformed_shapes += o.malformed_shapes, s.overlapping += o.overlapping;
    s.above_peak += o.above_peak;
    any_op = any_op || !r->ops.empty();
  }
  s.shapes_recorded = s.with_shapes > 0;
  if (!any_op) return;
  // Per (name, shapes, types): the sums over the ranks; FLOPs and bytes known
  // only if known on every rank with the row. The roofline fraction is the
  // ranks' fractions weighted by their GPU time (= the pooled achieved rate
  // over the roofline at the row's intensity, each rank against its own GPU's
  // peaks), known only if known on every rank with GPU time in the row.
  struct Pooled {
    OpRow row;
    std::vector<Part> parts;
    bool flops = true, bytes = true, fraction = true, one_bound = true;
    double weighted_fraction = 0;
    TimeNs fraction_time = 0;
  };
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, Pooled> pooled;
  for (const Profile* r : ranks)
    for (std::size_t i = 0; i < r->ops.size(); ++i) {
      const OpRow& row = r->ops[i];
      auto [it, fresh] = pooled.try_emplace(Key{row.name, row.shapes, row.dtypes});
      Pooled& x = it->second;
      if (fresh) {
        x.row = row;
        x.row.top_kernels.clear();
      } else {
        add_row(x.row, row);
        if (x.row.flops && row.flops) *x.row.flops += *row.flops;
        if (x.row.bytes && row.bytes) *x.row.bytes += *row.bytes;
        if (row.bound != x.row.bound) x.one_bound = false;
      }
      x.flops = x.flops && row.flops.has_value();
      x.bytes = x.bytes && row.bytes.has_value();
      if (row.gpu_total_ns > 0) {
        if (row.roofline_fraction) {
          x.weighted_fraction += *row.roofline_fraction * static_cast<double>(row.gpu_total_ns);
          x.fraction_time += row.gpu_total_ns;
        } else {
          x.fraction = false;
        }
      }
      x.parts.push_back({&row, i < kept.rows});
    }
  std::map<Key, std::vector<Part>> op_parts, name_parts;
  for (auto& [key, x] : pooled) {
    OpRow& row = x.row;
    if (!x.flops) row.flops.reset();
    if (!x.bytes) row.bytes.reset();
    rates(row);
    if (row.gpu_total_ns <= 0) row.intensity.reset();  // as one trace's rows: no rates without GPU time
    row.roofline_fraction.reset();
    if (x.fraction && x.fraction_time > 0)
      row.roofline_fraction = x.weighted_fraction / static_cast<double>(x.fraction_time);
    if (!x.one_bound) row.bound.clear();
    op_parts[key] = std::move(x.parts);
    job->ops.push_back(std::move(row));
  }
  std::sort(job->ops.begin(), job->ops.end(), heavier);
  // Per name, the ranks' per-name rows (each has its calls inside calls of
  // the same name folded), summed.
  std::vector<OpRow> names;
  for (const Profile* r : ranks) names.insert(names.end(), r->op_names.begin(), r->op_names.end());
  for (OpRow& n : names) n.top_kernels.clear();
  job->op_names = by_name(names);
  // The top rows' kernels: each rank's kernels of the same row, merged.
  for (const Profile* r : ranks)
    for (std::size_t i = 0; i < r->op_names.size(); ++i)
      name_parts[Key{r->op_names[i].name, "", ""}].push_back({&r->op_names[i], i < kept.rows});
  const OpKernelLimits shown;
  for (std::size_t i = 0; i < job->ops.size() && i < shown.rows; ++i) {
    OpRow& row = job->ops[i];
    merge_kernels(row, op_parts[Key{row.name, row.shapes, row.dtypes}], shown.kernels);
  }
  for (std::size_t i = 0; i < job->op_names.size() && i < shown.rows; ++i)
    merge_kernels(job->op_names[i], name_parts[Key{job->op_names[i].name, "", ""}], shown.kernels);
}

// [SECTION] The pass ----------------------------------------------------------------------------

OpSummary trace_op_summary(const Trace& t) {
  OpSummary s;
  Calls c(t);
  LateLaunches none;
  op_calls(t, s, c, none);
  group_rows(t, c, s);
  s.shapes_recorded = s.with_shapes > 0;
  return s;
}

void op_pass(const Trace& t, Profile* p, const OpKernelLimits& limits, LateLaunches late_launches,
             const std::vector<OpTotals::Name>* kernel_names) {
  OpSummary& s = p->op_summary;
  Calls c(t);
  op_calls(t, s, c, late_launches);
  std::vector<OpRow> rows = group_rows(t, c, s);
  s.shapes_recorded = s.with_shapes > 0;
  if (s.op_calls == 0) return;     // no framework ops: no table (and no "(no op)" row covering everything)
  std::vector<CallTotals> folded;  // per group (rows[g]); the "(no op)" row folds nothing
  for (const GroupSums& g : c.groups) folded.push_back(g.in_name);
  p->op_names = by_name(rows, folded);
  p->ops = std::move(rows);
  std::sort(p->ops.begin(), p->ops.end(), heavier);
  TopKernels(t, c, p, std::min<std::size_t>(limits.rows, 32), limits.kernels, kernel_names).run();
  // The devices' achieved rate: Σ known FLOPs of the matrix, convolution and
  // attention ops not inside another such op / Σ their GPU time.
  double flops = 0;
  TimeNs time = 0;
  for (const OpRow& r : p->ops) {
    if (!r.flops || r.family == "elementwise") continue;
    if (path_has(r.path, [](std::string_view n) {
          const OpFamily f = op_family(n);
          return f == OpFamily::gemm || f == OpFamily::convolution || f == OpFamily::attention;
        }))
      continue;
    flops += *r.flops;
    time += r.gpu_total_ns;
  }
  if (time > 0 && flops > 0)
    for (DeviceSummary& d : p->devices) d.achieved_tflops = flops / (static_cast<double>(time) * 1e-9) / 1e12;
  if (const auto peaks = trace_peaks(t))
    for (DeviceSummary& d : p->devices) d.peaks_source = peaks->source + " (" + peaks->model + ")";
}

}  // namespace gpuscope::detail
