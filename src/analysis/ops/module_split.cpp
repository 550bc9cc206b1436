// Forward and backward GPU time per nn.Module (Profile::module_split,
// docs/ops.md "Forward and backward per module").
//
// [SECTION] Backward ops and their forward ops
// [SECTION] Modules around launches and forward ops
// [SECTION] The pass
// [SECTION] Pooling a job's splits
//
// PyTorch numbers each autograd node as it creates it (a per-thread counter)
// and records that number on the forward ops that created the node and on
// the backward ops that ran it; a backward op also names the forward op's
// thread, by PyTorch's own thread number (Kineto's "Fwd thread id", 0 on a
// forward op), which is not the OS thread id the trace's tracks carry. So a
// backward op links to the forward ops of its number in its process when
// they are all on one thread; of those, as Kineto's forward-backward flows
// do, to the one that started last (the op that created the node). A trace
// without sequence numbers costs one test here.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/detail/context.h"

namespace gpuscope::detail {

namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";
constexpr std::string_view kNoModule = "(no module)";
constexpr std::uint32_t kNone = 0xffffffffu;

// [SECTION] Backward ops and their forward ops ---------------------------------------------------

bool is_backward(const RangeTable& rg, RowIndex r) { return rg.fwd_thread_at(r) != 0 && sequence_number(rg, r) >= 0; }

// Autograd's engine runs every node in a range of this name; a node with no
// forward op (AccumulateGrad, which adds a leaf's gradient, and the hooks it
// runs: DDP's all-reduce) names no forward thread, but is backward work.
constexpr std::string_view kEvaluate = "autograd::engine::evaluate_function:";

// Per range row: the outermost backward op it is (or is inside), kNoRow if
// none. Parents come before their children in row order.
std::vector<RowIndex> outermost_backward(const Trace& t) {
  const RangeTable& rg = t.ranges();
  std::vector<RowIndex> out(rg.size(), kNoRow);
  NameMemo evaluate(t, [](std::string_view n) { return n.starts_with(kEvaluate); });
  for (RowIndex r = 0; r < rg.size(); ++r) {
    if (!t.is_op_range(r)) continue;
    const RowIndex p = rg.parent[r];
    out[r] = p != kNoRow && out[p] != kNoRow ? out[p] : is_backward(rg, r) || evaluate(rg.name[r]) ? r : kNoRow;
  }
  return out;
}

// Per range row: the outermost forward op inside a backward op it is (or is
// inside), kNoRow if none: the forward pass recomputed for the gradients.
std::vector<RowIndex> recomputed_forward(const Trace& t, const std::vector<RowIndex>& backward) {
  const RangeTable& rg = t.ranges();
  std::vector<RowIndex> out(rg.size(), kNoRow);
  for (RowIndex r = 0; r < rg.size(); ++r) {
    if (backward[r] == kNoRow || backward[r] == r) continue;
    const RowIndex p = rg.parent[r];
    if (p != kNoRow && out[p] != kNoRow)
      out[r] = out[p];
    else if (sequence_number(rg, r) >= 0 && rg.fwd_thread_at(r) == 0 && t.is_op_range(r))
      out[r] = r;
  }
  return out;
}

struct ForwardOp {
  std::uint32_t pid;
  std::int64_t sequence;
  TimeNs start;
  TrackId track;
  RowIndex row;
  friend bool operator<(const ForwardOp& a, const ForwardOp& b) {
    return std::tie(a.pid, a.sequence, a.start, a.row) < std::tie(b.pid, b.sequence, b.start, b.row);
  }
};

// The forward op a backward op links to, kNoRow when none does: no forward
// op of its number in its process, or such ops on more than one thread.
RowIndex forward_op(const Trace& t, const std::vector<ForwardOp>& forward, RowIndex b) {
  const RangeTable& rg = t.ranges();
  const ForwardOp key{t.tracks()[rg.track_at(b)].pid, sequence_number(rg, b), 0, 0, 0};
  auto it = std::lower_bound(forward.begin(), forward.end(), key, [](const ForwardOp& x, const ForwardOp& k) {
    return std::tie(x.pid, x.sequence) < std::tie(k.pid, k.sequence);
  });
  RowIndex last = kNoRow;
  for (auto at = it; at != forward.end() && at->pid == key.pid && at->sequence == key.sequence; ++at) {
    if (at->track != it->track) return kNoRow;
    last = at->row;
  }
  return last;
}

// [SECTION] Modules around launches and forward ops ----------------------------------------------

// Dense module ids by name id; "(no module)" is kNone until first used.
class Modules {
 public:
  explicit Modules(const Trace& t) : t_(t), is_module_(t.strings().size(), 2) {}
  bool is_module(StringId name) {
    std::uint8_t& m = is_module_[name];
    if (m == 2) m = t_.str(name).starts_with(kModulePrefix) ? 1 : 0;
    return m == 1;
  }
  std::uint32_t id(StringId name) {  // kNone: "(no module)"
    auto [it, fresh] = ids_.try_emplace(name, static_cast<std::uint32_t>(rows.size()));
    if (fresh) rows.push_back(ModuleTime{std::string(t_.str(name).substr(kModulePrefix.size()))});
    return it->second;
  }
  ModuleTime& row(std::uint32_t id) {
    if (id != kNone) return rows[id];
    if (none_ == kNone) {
      none_ = static_cast<std::uint32_t>(rows.size());
      rows.push_back(ModuleTime{std::string(kNoModule)});
    }
    return rows[none_];
  }
  std::vector<ModuleTime> rows;

 private:
  const Trace& t_;
  std::vector<std::uint8_t> is_module_;  // by name id: 2 not known yet, 1 an nn.Module range, 0 not
  std::unordered_map<StringId, std::uint32_t> ids_;
  std::uint32_t none_ = kNone;
};

TimeNs gpu_time(const Trace& t, RowIndex a) {
  TimeNs d = 0;
  t.for_each_op_of(a, [&](OpRef op) {
    switch (op.table) {
      case OpTable::kernel: d += t.kernels().end[op.row] - t.kernels().start[op.row]; break;
      case OpTable::memcpy: d += t.memcpys().end[op.row] - t.memcpys().start[op.row]; break;
      case OpTable::memset: d += t.memsets().end[op.row] - t.memsets().start[op.row]; break;
      case OpTable::none: break;
    }
  });
  return d;
}

// One sweep per thread over its ranges and launch calls in start order, the
// open nn.Module ranges on a stack: each forward op with a sequence number
// gets the innermost module open at its start (module_of), and each launch
// outside backward ops adds its GPU time to the module open at the call.
void forward_sweep(const Trace& t, const std::vector<RowIndex>& backward, Modules& m,
                   std::vector<std::uint32_t>& module_of) {
  const RangeTable& rg = t.ranges();
  const ApiCallTable& api = t.api_calls();
  std::vector<RowIndex> open;
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (t.tracks()[tr].kind != TrackKind::cpu) continue;
    const RowRange ranges = t.rows_of(TableId::ranges, tr), calls = t.rows_of(TableId::api_calls, tr);
    open.clear();
    auto close_before = [&](TimeNs at) {
      while (!open.empty() && rg.end[open.back()] <= at) open.pop_back();
    };
    auto top = [&](TimeNs at) {
      close_before(at);
      return open.empty() ? kNone : m.id(rg.name[open.back()]);
    };
    auto range = [&](RowIndex r) {
      if (sequence_number(rg, r) >= 0 && rg.fwd_thread_at(r) == 0 && t.is_op_range(r)) module_of[r] = top(rg.start[r]);
      if (m.is_module(rg.name[r]) && rg.end[r] > rg.start[r]) {
        close_before(rg.start[r]);
        open.push_back(r);
      }
    };
    RowIndex next = ranges.begin;
    for (RowIndex a = calls.begin; a < calls.end; ++a) {
      for (; next < ranges.end && rg.start[next] <= api.start[a]; ++next) range(next);
      if (api.op_table[a] == static_cast<std::uint8_t>(OpTable::none)) continue;
      const RowIndex r = api.op_range_at(a);
      if (r != kNoRow && backward[r] != kNoRow) continue;  // the backward walk takes it
      m.row(top(api.start[a])).forward_gpu_ns += gpu_time(t, a);
    }
    for (; next < ranges.end; ++next) range(next);
  }
}

}  // namespace

// [SECTION] The pass -----------------------------------------------------------------------------

void module_pass(const Trace& t, Profile* p) {
  const RangeTable& rg = t.ranges();
  if (rg.sequence.empty()) return;  // no sequence numbers: the split is unknown
  ModuleSplit& s = p->module_split;
  s.known = true;
  const std::vector<RowIndex> backward = outermost_backward(t);
  std::vector<ForwardOp> forward;
  for (RowIndex r = 0; r < rg.size(); ++r)
    if (sequence_number(rg, r) >= 0 && rg.fwd_thread_at(r) == 0 && t.is_op_range(r))
      forward.push_back({t.tracks()[rg.track_at(r)].pid, sequence_number(rg, r), rg.start[r], rg.track_at(r), r});
  std::sort(forward.begin(), forward.end());
  Modules m(t);
  std::vector<std::uint32_t> module_of(rg.size(), kNone);
  forward_sweep(t, backward, m, module_of);
  // Each outermost backward op linked, counted where its forward op's module is.
  std::vector<RowIndex> linked_to(rg.size(), kNoRow);
  for (RowIndex r = 0; r < rg.size(); ++r) {
    if (backward[r] != r) continue;
    ++s.backward_ops;
    const RowIndex f = forward_op(t, forward, r);
    if (f == kNoRow) {
      ++s.unlinked;
      continue;
    }
    ++s.linked;
    linked_to[r] = f;
    ++m.row(module_of[f]).backward_ops;
  }
  const std::vector<RowIndex> recomputed = recomputed_forward(t, backward);
  for (RowIndex r = 0; r < rg.size(); ++r) s.recomputed_ops += recomputed[r] == r;
  const ApiCallTable& api = t.api_calls();
  for (RowIndex a = 0; a < api.size(); ++a) {
    const RowIndex r = api.op_range_at(a);
    if (r == kNoRow || backward[r] == kNoRow || api.op_table[a] == static_cast<std::uint8_t>(OpTable::none)) continue;
    const TimeNs d = gpu_time(t, a);
    s.backward_gpu_ns += d;
    if (recomputed[r] != kNoRow) s.recomputed_gpu_ns += d;
    const RowIndex f = linked_to[backward[r]];
    if (f == kNoRow)
      s.unlinked_gpu_ns += d;
    else
      m.row(module_of[f]).backward_gpu_ns += d;
  }
  s.modules = std::move(m.rows);
  sort_modules(s.modules);
}

void sort_modules(std::vector<ModuleTime>& modules) {
  std::erase_if(modules, [](const ModuleTime& x) {
    return x.forward_gpu_ns == 0 && x.backward_gpu_ns == 0 && x.backward_ops == 0;
  });
  std::sort(modules.begin(), modules.end(), [](const ModuleTime& a, const ModuleTime& b) {
    const TimeNs x = a.forward_gpu_ns + a.backward_gpu_ns, y = b.forward_gpu_ns + b.backward_gpu_ns;
    return x != y ? x > y : a.name < b.name;
  });
}

// [SECTION] Pooling a job's splits ---------------------------------------------------------------

void pool_module_splits(const std::vector<const Profile*>& ranks, Profile* job) {
  ModuleSplit& s = job->module_split;
  std::map<std::string, ModuleTime> by_name;
  for (const Profile* r : ranks) {
    const ModuleSplit& o = r->module_split;
    if (!o.known) continue;
    s.known = true;
    s.backward_ops += o.backward_ops, s.linked += o.linked, s.unlinked += o.unlinked;
    s.backward_gpu_ns += o.backward_gpu_ns, s.unlinked_gpu_ns += o.unlinked_gpu_ns;
    s.recomputed_gpu_ns += o.recomputed_gpu_ns, s.recomputed_ops += o.recomputed_ops;
    for (const ModuleTime& x : o.modules) {
      ModuleTime& into = by_name.try_emplace(x.name, ModuleTime{x.name}).first->second;
      into.forward_gpu_ns += x.forward_gpu_ns, into.backward_gpu_ns += x.backward_gpu_ns;
      into.backward_ops += x.backward_ops;
    }
  }
  for (auto& [name, x] : by_name) s.modules.push_back(std::move(x));
  sort_modules(s.modules);
}

}  // namespace gpuscope::detail
