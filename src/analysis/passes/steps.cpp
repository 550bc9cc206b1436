// Steps (training iterations) and what each one spent its time on.
//
// [SECTION] Where steps come from (ProfilerStep#N, NVTX/annotation ranges, the kernel pattern, bursts)
// [SECTION] From a CPU range to a GPU step
// [SECTION] The repeating kernel pattern
// [SECTION] Bursts of GPU work between host gaps
// [SECTION] Entry point
//
// A step found on the CPU (a range on the thread that launches the work)
// becomes, on each device it launched work to, the range from the CPU range's
// start to the end of the last GPU op it launched — GPU work runs behind the
// CPU — clipped so consecutive steps of a device never overlap. Where the CPU
// range outlasts the GPU work it launched, the difference is the step's host
// tail, stated apart (Step::host_tail_ns). A device's first step starts no
// earlier than the work queued ahead of it was done (backlog_end). The device pass fills in
// their breakdown.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <iterator>
#include <limits>
#include <map>
#include <string>

#include "analysis/detail/context.h"
#include "analysis/util/search.h"
#include "analysis/util/stats.h"
#include "trace/fresh_memory.h"
#include "words/format.h"

namespace gpuscope::detail {

namespace {

// [SECTION] Where steps come from ----------------------------------------------------------------

// "step", "Step 3", "step#3", "train_step", "iteration 12", "iter_5", and a
// serving engine's "step[DECODE bs=32]" (a bracketed description) …
bool is_step_name(std::string_view name) {
  std::string s;
  for (char c : name) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (std::string_view prefix :
       {"train_step", "training_step", "train step", "training step", "step", "iteration", "iter"}) {
    if (!std::string_view(s).starts_with(prefix)) continue;
    const std::string_view rest = std::string_view(s).substr(prefix.size());
    if (rest.empty()) return true;
    const char c = rest.front();
    if (c == '[' && rest.back() == ']' && prefix == "step") return true;
    if (std::isdigit(static_cast<unsigned char>(c)) || c == ' ' || c == '#' || c == '_' || c == ':' || c == '-' ||
        c == '=')
      return rest.find_first_not_of(" #_:-=0123456789") == std::string_view::npos;
  }
  return false;
}

std::int32_t trailing_number(std::string_view name, std::int32_t fallback) {
  std::size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  std::int32_t v = fallback;
  if (i < name.size()) std::from_chars(name.data() + i, name.data() + name.size(), v);
  return v;
}

struct CpuStep {
  TimeRange range;
  TrackId track;
  StringId name;  // a string per step only once it is a Step
  std::int32_t index;
};

std::vector<CpuStep> cpu_steps(const Trace& t, StepSource* source) {
  const RangeTable& r = t.ranges();
  std::vector<CpuStep> profiler, named;
  std::map<TrackId, std::size_t> named_per_track;
  // What each range name is, decided once per name (a big trace has 10^5
  // ranges and few names): 0 not decided, 1 neither, 2 ProfilerStep#N, 3 a step name.
  std::vector<std::uint8_t> kind(t.strings().size(), 0);
  // Room for every range up front: only what is used is ever touched, and
  // growing by doubling would touch (and copy) twice as much fresh memory.
  profiler.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (t.tracks()[r.track_at(i)].kind != TrackKind::cpu || r.kind_at(i) == RangeKind::mark) continue;
    std::uint8_t& k = kind[r.name[i]];
    if (k == 0) {
      const std::string_view n = t.str(r.name[i]);
      k = is_profiler_step(n) ? 2 : is_step_name(n) ? 3 : 1;
    }
    if (k == 1) continue;
    const std::string_view name = t.str(r.name[i]);
    if (k == 2) {
      profiler.push_back({{r.start[i], r.end[i]}, r.track_at(i), r.name[i], trailing_number(name, 0)});
    } else {
      named.push_back({{r.start[i], r.end[i]}, r.track_at(i), r.name[i], -1});
      ++named_per_track[r.track_at(i)];
    }
  }
  std::vector<CpuStep> out;
  if (!profiler.empty()) {
    *source = StepSource::profiler_step;
    out = std::move(profiler);
  } else if (!named.empty()) {
    // The threads with at least two step ranges (one per GPU when a process
    // drives several GPUs from one thread each); where no thread marked two,
    // the one step each marked (a serving engine's trace of one step).
    *source = StepSource::nvtx;
    for (CpuStep& s : named)
      if (named_per_track[s.track] >= 2) out.push_back(s);
    if (out.empty()) out = std::move(named);
  }
  std::sort(out.begin(), out.end(), [](const CpuStep& a, const CpuStep& b) {
    return a.track != b.track ? a.track < b.track : a.range.start < b.range.start;
  });
  return out;
}

// [SECTION] From a CPU range to a GPU step -----------------------------------------------------------

struct Extent {
  TimeNs end = 0;
  std::uint64_t ops = 0;
};

// The analysed device of each track (kNoDevice: not a GPU track, or filtered out).
std::vector<std::uint32_t> device_of_tracks(const Trace& t, std::uint32_t device_filter) {
  std::vector<std::uint32_t> out(t.tracks().size(), kNoDevice);
  for (TrackId i = 0; i < t.tracks().size(); ++i)
    if (on_device(t, i, device_filter)) out[i] = t.tracks()[i].device;
  return out;
}

// Devices the step's thread launched work to, and the end of that work. This
// visits every API call of every step (10^7 of them in a big trace): the
// per-call work is a few array reads.
std::map<std::uint32_t, Extent> launched_in(const Trace& t, const CpuStep& s,
                                            const std::vector<std::uint32_t>& device_of, RowIndex* cursor) {
  std::vector<std::pair<std::uint32_t, Extent>> found;  // few devices: a flat list
  // The thread's calls that start within the step (those are all the loop
  // below looks at).
  const RowRange all = t.rows_of(TableId::api_calls, s.track);
  const TimeNs* starts = t.api_calls().start.data();
  RowRange rows;
  rows.begin = detail::first_at_or_after(starts, all.begin, all.end, *cursor, s.range.start);
  rows.end = std::max(rows.begin, detail::first_at_or_after(starts, all.begin, all.end, rows.begin, s.range.end));
  *cursor = rows.end;
  const ApiCallTable& a = t.api_calls();
  // Calls launch to one device at a time, for long stretches: its extent and
  // how far it reaches are kept in locals while that lasts.
  std::uint32_t dev = kNoDevice;
  TimeNs reach = 0;
  std::uint64_t ops = 0;
  auto flush = [&] {
    if (dev == kNoDevice) return;
    Extent* e = nullptr;
    for (auto& [d, x] : found)
      if (d == dev) e = &x;
    if (!e) e = &found.emplace_back(dev, Extent{}).second;
    e->end = std::max(e->end, reach);
    e->ops += ops;
  };
  // Inlined into the loop below: a call per GPU op (10^7) cost a third of this pass.
  auto add = [&](TrackId track, TimeNs end) __attribute__((always_inline)) {
    const std::uint32_t d = device_of[track];
    if (d == kNoDevice) return;
    if (d != dev) {
      flush();
      dev = d, reach = end, ops = 0;
    }
    reach = std::max(reach, end);
    ++ops;
  };
  const KernelTable& k = t.kernels();
  const MemcpyTable& m = t.memcpys();
  const MemsetTable& z = t.memsets();
  auto visit = [&](OpRef op) {
    switch (op.table) {
      case OpTable::kernel: add(k.track_at(op.row), k.end[op.row]); break;
      case OpTable::memcpy: add(m.track_at(op.row), m.end[op.row]); break;
      case OpTable::memset: add(z.track_at(op.row), z.end[op.row]); break;
      default: break;
    }
  };
  const TimeNs from = s.range.start, to = s.range.end;
  if (t.has_extra_ops()) {
    for (RowIndex i = rows.begin; i < rows.end; ++i)
      if (a.start[i] >= from && a.start[i] < to) t.for_each_op_of(i, visit);
  } else {
    const TimeNs* start = a.start.data();
    const auto* table = a.op_table.data();
    const RowIndex* row = a.op_row.data();
    for (RowIndex i = rows.begin; i < rows.end; ++i) {
      if (start[i] < from || start[i] >= to) continue;
      const RowIndex op = row[i];
      const auto kind = static_cast<OpTable>(table[i]);
      if (kind == OpTable::kernel)
        add(k.track_at(op), k.end[op]);  // tests, not a jump table: kernels are most calls
      else if (kind == OpTable::memcpy)
        add(m.track_at(op), m.end[op]);
      else if (kind == OpTable::memset)
        add(z.track_at(op), z.end[op]);
    }
  }
  flush();
  return {found.begin(), found.end()};
}

// When the work queued ahead of a device's first step was done: the ops
// launched before the step began (and the ops with no launch ahead of them),
// and the ops with no launch in the trace that the step's first op on a
// stream queued behind (launched before they were done: work queued before
// the trace began), where that work runs at the step's start (or begins
// within `slack` of it). A first step would otherwise absorb that backlog: a
// GPU 155 ms behind its host at the trace's start made a 210 ms step 372 ms.
// Queued work that does not run then — the GPU idle from the step's start,
// the ops held by a dependency — is no backlog: that wait is the step's.
// The step's own ops that ran beside the backlog, on another stream, before
// it was done are counted (`early`), not taken in: they would bring the
// backlog back into the step. (Later steps start where the one before them
// ended: order_steps.)
// `step`: from the host's start of the step to the end of its work.
constexpr std::uint8_t kNotAKernel = 0xff;  // a backlog op's category when it is a copy

struct Backlog {
  TimeNs end = std::numeric_limits<TimeNs>::min();  // min(): none
  std::uint64_t early_ops = 0;                      // the step's own ops that started before `end`
  TimeNs early_ns = 0;                              // Σ their durations
  std::uint64_t ops = 0;                            // the backlog's ops
  TimeNs ns = 0;                                    // Σ their durations
  // The backlog's kernels by category: time and count (EarlyOps).
  std::array<TimeNs, kKernelCategoryCount> category_ns{};
  std::array<std::uint64_t, kKernelCategoryCount> category_count{};
};

// Whether a host synchronization that began before `before` waited for the
// work that ended last (`last`): it was blocking while that work ran, and a
// synchronization returns only once the work queued before it is done. One
// that returns a little before the work's recorded end is the host's and
// the GPU's clocks apart by that much (7.5 µs in an MI300 trace), not a sync
// that did not wait; one that returned before the work began did not wait.
bool sync_waited(const Trace& t, TimeRange last, TimeNs before) {
  const ApiCallTable& a = t.api_calls();
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (t.tracks()[tr].kind != TrackKind::cpu) continue;
    const RowRange r = t.rows_overlapping(TableId::api_calls, tr, last.start, last.end);
    for (RowIndex k = r.begin; k < r.end; ++k)
      if (a.start[k] < before && a.start[k] <= last.end && a.end[k] >= last.start && is_sync_api(t.str(a.name[k])))
        return true;
  }
  return false;
}

Backlog backlog_end(const Trace& t, const std::vector<TrackId>& device_tracks, TimeRange step, TimeNs slack) {
  const ApiCallTable& a = t.api_calls();
  std::vector<TimeRange> backlog;      // the ops queued ahead of the step
  std::vector<std::uint8_t> category;  // per backlog op: its kernel category, kNotAKernel for copies
  std::vector<TimeRange>
      own;  // the step's own ops: on each stream, from its first launched in the step to the step's end
  auto ahead = [&](TableId id, const TimeNs* start, const TimeNs* end, const RowIndex* api, const std::uint8_t* cat,
                   TrackId track) {
    const RowRange rows = t.rows_of(id, track);
    std::size_t unlaunched = backlog.size();  // ops with no launch since the last launched one, from here
    for (RowIndex i = rows.begin; i < rows.end && start[i] < step.end; ++i) {
      category.resize(backlog.size());
      if (api[i] == kNoRow) {
        backlog.push_back({start[i], end[i]});
        category.push_back(cat ? cat[i] : kNotAKernel);
        continue;
      }
      if (a.start[api[i]] >= step.start) {
        // The step's own ops from here on this stream, while they may start
        // beside the backlog (which ends before the step's host range does).
        for (RowIndex j = i; j < rows.end && start[j] < step.end; ++j) own.push_back({start[j], end[j]});
        // Ops with no launch ahead of the step's first op count where the
        // host had launched that op before they were done: it queued behind
        // them; or where a host synchronization that began before that
        // launch waited for them (it returned when they were done: they
        // were queued before it, and the step launched nothing before it).
        // Else they may be the step's own, with their launches lost.
        TimeRange last{std::numeric_limits<TimeNs>::min(), std::numeric_limits<TimeNs>::min()};
        for (std::size_t j = unlaunched; j < backlog.size(); ++j)
          if (backlog[j].end > last.end) last = backlog[j];
        if (a.start[api[i]] >= last.end && !sync_waited(t, last, a.start[api[i]])) backlog.resize(unlaunched);
        return;
      }
      backlog.push_back({start[i], end[i]});  // queued before the step began
      category.push_back(cat ? cat[i] : kNotAKernel);
      unlaunched = backlog.size();
    }
    backlog.resize(unlaunched);  // no op of the step queued behind them
  };
  const KernelTable& k = t.kernels();
  const MemcpyTable& m = t.memcpys();
  const MemsetTable& z = t.memsets();
  for (TrackId track : device_tracks) {
    ahead(TableId::kernels, k.start.data(), k.end.data(), k.api.data(), k.category.data(), track);
    ahead(TableId::memcpys, m.start.data(), m.end.data(), m.api.data(), nullptr, track);
    ahead(TableId::memsets, z.start.data(), z.end.data(), z.api.data(), nullptr, track);
  }
  category.resize(backlog.size());
  // The backlog still running at the step's start, or starting within
  // `slack` of it: the GPU was behind. Else it was held (and idle) first.
  TimeNs first = std::numeric_limits<TimeNs>::max(), done = std::numeric_limits<TimeNs>::min();
  for (const TimeRange& r : backlog)
    if (r.end > step.start) first = std::min(first, r.start), done = std::max(done, r.end);
  Backlog out;
  if (first > step.start + slack) return out;
  out.end = done;
  out.ops = backlog.size();
  for (std::size_t i = 0; i < backlog.size(); ++i) {
    out.ns += backlog[i].duration();
    if (category[i] < kKernelCategoryCount)
      out.category_ns[category[i]] += backlog[i].duration(), ++out.category_count[category[i]];
  }
  for (const TimeRange& r : own)
    if (r.start < done) ++out.early_ops, out.early_ns += r.end - r.start;
  return out;
}

// One table of one of a device's tracks, and where its previous step's
// search ended (steps come in order).
struct OpCursor {
  const TimeNs* start;
  const TimeNs* end;
  RowRange rows;
  RowIndex hint;
};

std::vector<OpCursor> op_cursors(const Trace& t, const std::vector<TrackId>& device_tracks) {
  std::vector<OpCursor> out;
  const KernelTable& k = t.kernels();
  const MemcpyTable& m = t.memcpys();
  const MemsetTable& z = t.memsets();
  auto add = [&](TableId id, const TimeNs* start, const TimeNs* end, TrackId track) {
    const RowRange rows = t.rows_of(id, track);
    if (rows.begin < rows.end) out.push_back({start, end, rows, rows.begin});
  };
  for (TrackId track : device_tracks) {
    add(TableId::kernels, k.start.data(), k.end.data(), track);
    add(TableId::memcpys, m.start.data(), m.end.data(), track);
    add(TableId::memsets, z.start.data(), z.end.data(), track);
  }
  return out;
}

// The GPU's idle time from a step's start to its first op there: 0 where an
// op is still running at the start.
TimeNs lead_idle(std::vector<OpCursor>& cursors, TimeRange step) {
  TimeNs first = step.end;
  bool busy = false;
  for (OpCursor& c : cursors) {
    const RowIndex i = detail::first_at_or_after(c.start, c.rows.begin, c.rows.end, c.hint, step.start);
    c.hint = i;
    busy = busy || (i > c.rows.begin && c.end[i - 1] > step.start);
    if (i < c.rows.end) first = std::min(first, c.start[i]);
  }
  return busy ? 0 : std::clamp<TimeNs>(first - step.start, 0, step.duration());
}

// [SECTION] The repeating kernel pattern --------------------------------------------------------------

// On the device's busiest stream, a kernel name that occurs once per
// iteration shows up at a constant distance (in kernels) from its previous
// occurrence. Among the names with at least 3 such evenly spaced occurrences,
// the most common occurrence count is the number of iterations; the name of
// that count seen earliest marks where each iteration starts.
std::vector<TimeRange> pattern_steps(const Trace& t, const std::vector<TrackId>& tracks, TrackId* main_track,
                                     bool* last_complete, std::vector<RowIndex>* anchors) {
  TrackId main = 0;
  RowIndex most = 0;
  for (TrackId tr : tracks) {
    const RowRange r = t.rows_of(TableId::kernels, tr);
    if (r.size() > most) most = r.size(), main = tr;
  }
  if (most < 6) return {};
  *main_track = main;
  *last_complete = false;
  const RowRange rows = t.rows_of(TableId::kernels, main);
  const KernelTable& k = t.kernels();
  struct Seen {
    std::uint32_t count = 0, first = 0, last = 0, min_gap = ~0u, max_gap = 0;
  };
  std::vector<Seen> seen(t.strings().size());
  for (RowIndex i = rows.begin; i < rows.end; ++i) {
    Seen& s = seen[k.name[i]];
    const std::uint32_t pos = i - rows.begin;
    if (s.count) {
      const std::uint32_t gap = pos - s.last;
      s.min_gap = std::min(s.min_gap, gap);
      s.max_gap = std::max(s.max_gap, gap);
    } else {
      s.first = pos;
    }
    s.last = pos;
    ++s.count;
  }
  std::map<std::uint32_t, std::uint32_t> names_with_count;
  // Evenly spaced, and over at least half of the stream: a name repeating
  // only inside part of it (the layers of the first step, with its
  // autotuning kernels between them) marks no iteration of the whole.
  const RowIndex stream_kernels = rows.size();
  auto evenly = [stream_kernels](const Seen& s) {
    return s.count >= 3 && s.min_gap >= 2 && s.max_gap <= s.min_gap + std::max<std::uint32_t>(1, s.min_gap / 10) &&
           2 * (std::uint64_t{s.last - s.first} + s.max_gap) >= stream_kernels;
  };
  for (const Seen& s : seen)
    if (evenly(s)) ++names_with_count[s.count];
  if (names_with_count.empty()) return {};
  std::uint32_t iterations = 0, votes = 0;
  for (const auto& [count, n] : names_with_count)
    if (n > votes) iterations = count, votes = n;  // ties: fewer, longer iterations
  StringId anchor = 0;
  std::uint32_t earliest = ~0u;
  for (StringId id = 0; id < seen.size(); ++id)
    if (evenly(seen[id]) && seen[id].count == iterations && seen[id].first < earliest)
      earliest = seen[id].first, anchor = id;
  std::vector<RowIndex> at;
  for (RowIndex i = rows.begin; i < rows.end; ++i)
    if (k.name[i] == anchor) at.push_back(i);
  *anchors = at;
  std::vector<TimeRange> out;
  for (std::size_t j = 0; j + 1 < at.size(); ++j) out.push_back({k.start[at[j]], k.start[at[j + 1]]});
  // The last iteration is complete if the stream has as many kernels after it
  // as the iterations before had.
  const RowIndex period = at.back() - at[at.size() - 2];
  if (at.back() + period <= rows.end) {
    const RowIndex last = at.back() + period - 1;
    out.push_back({k.start[at.back()], *std::max_element(k.end.begin() + at.back(), k.end.begin() + last + 1)});
    *last_complete = true;
  }
  return out;
}

// A model's repeating layers (or an RNN's time steps) repeat the same
// kernels evenly, like iterations do, but inside one call: one forward pass
// of a 12-layer model is not 12 steps. The repetition is inside one call when
// a range on the launching thread encloses the launches of consecutive
// anchors and is one call by its nature: a framework op (aten::lstm, a
// cpu_op), a module's forward ("nn.Module: Bert", "Model.forward", NVTX
// "forward"). A range of another name (a user's "train" around the loop) says
// nothing.
bool one_call_by_name(std::string_view name, std::string_view domain) {
  if (domain == "cpu_op") return true;
  std::string s;
  for (char c : name) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return s.starts_with("nn.module:") || s.starts_with("aten::") || s.find("forward") != std::string::npos;
}

// The innermost such call around the anchors' launches (the ops that begin
// each repetition); empty when the repetition is not inside one.
std::string repeats_inside_one_call(const Trace& t, const std::vector<OpRef>& anchors) {
  if (anchors.size() < 2) return {};
  const ApiCallTable& a = t.api_calls();
  const RangeTable& r = t.ranges();
  // The launch call of the first and the last anchor: a range enclosing both
  // encloses every anchor's launch between them (one thread launches them).
  const RowIndex first = t.launching_api(anchors.front());
  const RowIndex last = t.launching_api(anchors.back());
  if (first == kNoRow || last == kNoRow || a.track_at(first) != a.track_at(last)) return {};
  const TimeNs from = a.start[first], to = a.start[last];
  std::string found;
  TimeNs shortest = 0;
  const RowRange rows = t.rows_overlapping(TableId::ranges, a.track_at(first), from, to);
  for (RowIndex i = rows.begin; i < rows.end; ++i) {
    if (r.kind_at(i) == RangeKind::mark || r.start[i] > from || r.end[i] < to) continue;
    if (!one_call_by_name(t.str(r.name[i]), t.str(r.domain[i]))) continue;
    // The innermost such call names the repetition best.
    if (found.empty() || r.end[i] - r.start[i] < shortest)
      found = std::string(t.str(r.name[i])), shortest = r.end[i] - r.start[i];
  }
  return found;
}

// [SECTION] Bursts of GPU work between host gaps ---------------------------------------------------------

// Without step markers and without a kernel order that repeats (TensorFlow's
// executor launches independent ops in a different order each step, and
// reuses each kernel name many times a step), the steps still show on the
// GPU: bursts of work with the GPU idle between them, waiting for the host
// (Python between steps). A gap is a host gap when the op after it was
// launched (its API call started) after the GPU had run out of work (HTA's
// host wait). The step gaps are the longest gaps of the device: all host
// gaps, each at least kMinStepGap and at least twice as long as every other
// gap. A step runs from the start of a burst to the start of the next, so
// the last burst, which no next one ends, is none. The bursts are steps when
// there are at least three steps and each step but the first (warm-up:
// autotuning, first calls) has as many GPU ops as the median step, within a
// quarter, and lasts within half to twice the median step.
constexpr TimeNs kMinStepGap = 100'000;

struct Bursts {
  std::vector<TimeRange> steps;            // from a burst's first op to the next burst's
  std::vector<OpRef> first;                // each burst's first op (one more than steps) …
  std::vector<TrackId> first_track;        // … and its stream
  std::uint64_t min_ops = 0, max_ops = 0;  // GPU ops of the steps after the first
  TimeNs min_gap = 0, max_gap = 0;         // the host gaps between bursts
  TimeNs inside_gap = 0;                   // the longest gap inside a burst
};

// Calls f(start, end, launch, op, track) for each GPU op of the device in
// start order (launch: its launch call's start, INT64_MIN without one): a
// merge of its streams' tables, each in start order, so that a trace of
// 10^7 ops needs no copy of them.
template <class F>
void each_device_op(const Trace& t, const std::vector<TrackId>& tracks, F&& f) {
  struct Cursor {
    TimeNs start;
    RowIndex at, end;
    OpTable table;
    TrackId track;
  };
  const TimeNs* api_start = t.api_calls().start.data();
  auto start_of = [&](OpTable table, RowIndex i) {
    return table == OpTable::kernel   ? t.kernels().start[i]
           : table == OpTable::memcpy ? t.memcpys().start[i]
                                      : t.memsets().start[i];
  };
  std::vector<Cursor> heap;
  for (TrackId tr : tracks)
    for (const auto& [id, table] :
         {std::pair{TableId::kernels, OpTable::kernel}, std::pair{TableId::memcpys, OpTable::memcpy},
          std::pair{TableId::memsets, OpTable::memset}})
      if (const RowRange r = t.rows_of(id, tr); !r.empty())
        heap.push_back({start_of(table, r.begin), r.begin, r.end, table, tr});
  const auto later = [](const Cursor& a, const Cursor& b) { return a.start > b.start; };
  std::make_heap(heap.begin(), heap.end(), later);
  auto visit = [&](const auto& table, const Cursor& c) {
    const RowIndex a = table.api[c.at];
    f(table.start[c.at], table.end[c.at], a == kNoRow ? INT64_MIN : api_start[a], OpRef{c.table, c.at}, c.track);
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Cursor& c = heap.back();
    if (c.table == OpTable::kernel)
      visit(t.kernels(), c);
    else if (c.table == OpTable::memcpy)
      visit(t.memcpys(), c);
    else
      visit(t.memsets(), c);
    if (++c.at == c.end) {
      heap.pop_back();
    } else {
      c.start = start_of(c.table, c.at);
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
}

// Within a quarter (at least 1) of the median / within half to twice it.
bool alike_count(std::uint64_t n, std::uint64_t median) {
  const std::uint64_t slack = std::max<std::uint64_t>(1, median / 4);
  return n + slack >= median && n <= median + slack;
}
bool alike_time(TimeNs d, TimeNs median) { return 2 * d >= median && d <= 2 * median; }

// The steps that bursts beginning at `begins` (the starts of the ops after
// the step gaps, in time order) cut the device's ops into, if they look
// alike; empty otherwise.
Bursts split_bursts(const Trace& t, const std::vector<TrackId>& tracks, const std::vector<TimeNs>& begins) {
  Bursts b;
  std::vector<std::uint64_t> counts;  // GPU ops per burst
  std::size_t next = 0;               // the next burst's begin
  each_device_op(t, tracks, [&](TimeNs start, TimeNs, TimeNs, OpRef op, TrackId track) {
    if (counts.empty() || (next < begins.size() && start >= begins[next])) {
      if (!counts.empty()) ++next;
      b.first.push_back(op);
      b.first_track.push_back(track);
      counts.push_back(0);
      if (b.first.size() > 1) b.steps.back().end = start;
      b.steps.push_back({start, start});
    }
    ++counts.back();
  });
  // Burst j's step runs to burst j+1's first op: the last burst is none.
  if (!b.steps.empty()) b.steps.pop_back(), counts.pop_back();
  if (b.steps.size() < 3) return {};
  std::vector<TimeNs> durations;
  for (const TimeRange& r : b.steps) durations.push_back(r.duration());
  const std::uint64_t ops_median = lower_median(counts);
  const TimeNs time_median = lower_median(durations);
  if (ops_median < 2) return {};
  b.min_ops = ~std::uint64_t{0};
  for (std::size_t i = 1; i < b.steps.size(); ++i) {
    if (!alike_count(counts[i], ops_median) || !alike_time(durations[i], time_median)) return {};
    b.min_ops = std::min(b.min_ops, counts[i]);
    b.max_ops = std::max(b.max_ops, counts[i]);
  }
  return b;
}

Bursts burst_steps(const Trace& t, const std::vector<TrackId>& tracks) {
  // The gaps that could be step gaps (at least kMinStepGap), and the longest
  // of the others, which every step gap must be twice as long as.
  struct Gap {
    TimeNs length;
    TimeNs next_start;  // where the op after it starts
    bool host;
  };
  std::vector<Gap> long_gaps;
  TimeNs reach = INT64_MIN, longest_short = 0;
  each_device_op(t, tracks, [&](TimeNs start, TimeNs end, TimeNs launch, OpRef, TrackId) {
    if (reach != INT64_MIN && start > reach) {
      if (start - reach >= kMinStepGap)
        long_gaps.push_back({start - reach, start, launch >= reach});
      else
        longest_short = std::max(longest_short, start - reach);
    }
    reach = std::max(reach, end);
  });
  if (long_gaps.size() < 3) return {};
  std::sort(long_gaps.begin(), long_gaps.end(), [](const Gap& a, const Gap& b) { return a.length > b.length; });
  // The longest k gaps, for each k where they stand apart from the rest,
  // most apart first.
  std::vector<std::pair<double, std::size_t>> cuts;  // (longest other gap / shortest step gap, k)
  for (std::size_t k = 3; k <= long_gaps.size(); ++k) {
    const Gap& shortest = long_gaps[k - 1];
    if (!shortest.host) break;
    const TimeNs next = k < long_gaps.size() ? long_gaps[k].length : longest_short;
    if (2 * next <= shortest.length) cuts.push_back({static_cast<double>(next) / shortest.length, k});
  }
  std::sort(cuts.begin(), cuts.end());
  if (cuts.size() > 3) cuts.resize(3);  // each try is a pass over the device's ops
  for (const auto& [apart, k] : cuts) {
    std::vector<TimeNs> begins;
    for (std::size_t j = 0; j < k; ++j) begins.push_back(long_gaps[j].next_start);
    std::sort(begins.begin(), begins.end());
    Bursts b = split_bursts(t, tracks, begins);
    if (b.steps.empty()) continue;
    b.min_gap = long_gaps[k - 1].length, b.max_gap = long_gaps[0].length;
    b.inside_gap = k < long_gaps.size() ? long_gaps[k].length : longest_short;
    return b;
  }
  return {};
}

// [SECTION] Entry point ---------------------------------------------------------------------------------

// A step the GPU's work marked (pattern or bursts): "step N" on the device.
Step gpu_step(const RankedTrace& rt, std::uint32_t device, std::int32_t n, TimeRange r) {
  Step st;
  st.index = n;
  st.name = "step " + std::to_string(n);
  st.device = device;
  st.rank = rt.rank;
  st.range = r;
  return st;
}

// "29 steps per GPU (4 GPUs), each a burst of GPU work (165–175 GPU ops
// after the first step) and the host gap after it (3.0 ms to 4.0 ms; the
// longest gap inside a burst: 2.4 µs)".
std::string bursts_said(const std::vector<std::pair<std::uint32_t, Bursts>>& per_device) {
  std::size_t fewest = ~std::size_t{0}, most = 0;
  std::uint64_t min_ops = ~std::uint64_t{0}, max_ops = 0;
  TimeNs min_gap = INT64_MAX, max_gap = 0, inside = 0;
  for (const auto& [dev, b] : per_device) {
    fewest = std::min(fewest, b.steps.size()), most = std::max(most, b.steps.size());
    min_ops = std::min(min_ops, b.min_ops), max_ops = std::max(max_ops, b.max_ops);
    min_gap = std::min(min_gap, b.min_gap), max_gap = std::max(max_gap, b.max_gap);
    inside = std::max(inside, b.inside_gap);
  }
  auto span = [](const std::string& lo, const std::string& hi, const char* between) {
    return lo == hi ? lo : lo + between + hi;
  };
  return span(format::count(fewest), format::count(most), "–") + " steps" +
         (per_device.size() > 1 ? " per GPU (" + std::to_string(per_device.size()) + " GPUs)"
                                : " on GPU " + std::to_string(per_device.front().first)) +
         ", each a burst of GPU work (" + span(format::count(min_ops), format::count(max_ops), "–") +
         " GPU ops after the first step) and the host gap after it (" +
         span(format::duration(min_gap), format::duration(max_gap), " to ") +
         "; the longest gap inside a burst: " + format::duration(inside) + ")";
}

bool device_busy_during(const Trace& t, const std::vector<TrackId>& tracks, TimeRange r) {
  for (TrackId tr : tracks)
    for (TableId table : {TableId::kernels, TableId::memcpys, TableId::memsets})
      if (!t.rows_overlapping(table, tr, r.start, r.end).empty()) return true;
  return false;
}

using DeviceTracks = std::map<std::uint32_t, std::vector<TrackId>>;

// The steps found, and (when the caller asks, `origins`) where each came from.
struct Found {
  std::vector<Step> steps;
  std::vector<StepOrigin> from;
  bool origins = false;
};

// Steps the host marked (ProfilerStep ranges, NVTX, …): one per device the
// step launched to (or, when its thread launched nothing, each device busy
// during it).
void cpu_marked_steps(const RankedTrace& rt, const AnalysisOptions& opt, const DeviceTracks& tracks, Found& f,
                      StepSource* source) {
  const Trace& t = *rt.trace;
  const std::vector<std::uint32_t> device_of = device_of_tracks(t, opt.device);
  const std::vector<CpuStep> cpu = cpu_steps(t, source);
  f.steps.reserve(cpu.size() * tracks.size());
  // Most steps launch to one device: map the memory of that many at once
  // (a page fault apiece costs as much as filling the page here).
  detail::advise_huge_pages(f.steps.data(), f.steps.capacity() * sizeof(Step));
  detail::populate(f.steps.data(), cpu.size() * sizeof(Step));
  RowIndex cursor = 0;  // where the previous step's calls ended
  for (const CpuStep& cs : cpu) {
    auto launched = launched_in(t, cs, device_of, &cursor);
    const bool own = !launched.empty();
    if (launched.empty()) {
      // The step's own thread launched nothing: every device busy during it.
      for (const auto& [dev, trs] : tracks)
        if (device_busy_during(t, trs, cs.range)) launched[dev] = {cs.range.end, 1};
    }
    for (const auto& [dev, e] : launched) {
      if (!tracks.count(dev)) continue;
      Step st;
      st.name = t.str(cs.name);
      st.index = cs.index;
      st.device = dev;
      st.rank = rt.rank;
      st.range = {cs.range.start, std::max(cs.range.end, e.end)};
      if (own) st.host_tail_ns = std::max<TimeNs>(0, cs.range.end - std::max(e.end, cs.range.start));
      f.steps.push_back(std::move(st));
      if (f.origins) f.from.push_back({false, cs.track, cs.range, own, false});
    }
  }
}

// Steps of a kernel pattern that repeats, per device; `not_steps` says why a
// pattern was not taken.
void pattern_steps_per_device(const RankedTrace& rt, const DeviceTracks& tracks, Found& f, StepSource* source,
                              std::string* how, std::string* not_steps) {
  const Trace& t = *rt.trace;
  for (const auto& [dev, trs] : tracks) {
    TrackId main = 0;
    bool last_complete = false;
    std::vector<RowIndex> anchors;
    const std::vector<TimeRange> ranges = pattern_steps(t, trs, &main, &last_complete, &anchors);
    if (ranges.empty()) continue;
    std::vector<OpRef> begins;
    for (RowIndex a : anchors) begins.push_back({OpTable::kernel, a});
    if (const std::string call = repeats_inside_one_call(t, begins); !call.empty()) {
      if (not_steps->empty())
        *not_steps = "the kernel pattern repeats " + std::to_string(anchors.size()) + " times inside one call (" +
                     call + "): layers of one pass, not steps";
      continue;
    }
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      f.steps.push_back(gpu_step(rt, dev, static_cast<std::int32_t>(i), ranges[i]));
      if (f.origins) f.from.push_back({true, main, ranges[i], true, last_complete && i + 1 == ranges.size()});
    }
    if (how && how->empty()) {
      const RowIndex period = anchors[1] - anchors[0];
      *how = "kernel " + format::short_kernel_name(t.str(t.kernels().name[anchors[0]]), 60) + " begins each of " +
             std::to_string(ranges.size()) + " iterations, every " + format::count(period) + " kernels (GPU " +
             std::to_string(dev) + ")";
    }
    *source = StepSource::pattern;
  }
}

// Steps of bursts of GPU work between long host gaps, per device.
void burst_steps_per_device(const RankedTrace& rt, const DeviceTracks& tracks, Found& f, StepSource* source,
                            std::string* how, std::string* not_steps) {
  const Trace& t = *rt.trace;
  std::vector<std::pair<std::uint32_t, Bursts>> per_device;
  for (const auto& [dev, trs] : tracks) {
    Bursts b = burst_steps(t, trs);
    if (b.steps.empty()) continue;
    if (const std::string call = repeats_inside_one_call(t, b.first); !call.empty()) {
      if (not_steps->empty())
        *not_steps = "the GPU's work comes in " + std::to_string(b.first.size()) + " bursts inside one call (" + call +
                     "): layers of one pass, not steps";
      continue;
    }
    for (std::size_t i = 0; i < b.steps.size(); ++i) {
      f.steps.push_back(gpu_step(rt, dev, static_cast<std::int32_t>(i), b.steps[i]));
      if (f.origins) f.from.push_back({true, b.first_track[i], b.steps[i], true, false});
    }
    per_device.emplace_back(dev, std::move(b));
    *source = StepSource::bursts;
  }
  if (how && !per_device.empty()) *how = bursts_said(per_device);
}

// Per device in time order; no overlap between consecutive steps; numbered
// in order where the source gave no number.
void order_steps(Found& f) {
  std::vector<Step>& found = f.steps;
  // Usually in that order already (one launching thread per device): then no
  // sort, and no copy of every step into its buffer.
  const auto before = [](const Step& a, const Step& b) {
    return a.device != b.device ? a.device < b.device : a.range.start < b.range.start;
  };
  if (!std::is_sorted(found.begin(), found.end(), before)) {
    if (f.origins) {  // the origins follow their steps
      std::vector<std::size_t> order(found.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return before(found[a], found[b]); });
      std::vector<Step> sorted_steps;
      std::vector<StepOrigin> sorted_from;
      sorted_steps.reserve(found.size());
      sorted_from.reserve(found.size());
      for (std::size_t i : order) sorted_steps.push_back(std::move(found[i])), sorted_from.push_back(f.from[i]);
      found = std::move(sorted_steps);
      f.from = std::move(sorted_from);
    } else {
      std::stable_sort(found.begin(), found.end(), before);
    }
  }
  std::map<std::uint32_t, std::int32_t> next_index;
  for (std::size_t i = 0; i < found.size(); ++i) {
    Step& st = found[i];
    if (i > 0 && found[i - 1].device == st.device) {
      st.range.start = std::max(st.range.start, found[i - 1].range.end);
      st.range.end = std::max(st.range.end, st.range.start);
      st.host_tail_ns = std::min(st.host_tail_ns, st.range.duration());
    }
    if (st.index < 0) st.index = next_index[st.device]++;
  }
}

}  // namespace

StepSource find_steps(const RankedTrace& rt, const AnalysisOptions& opt, std::vector<Step>* steps,
                      std::vector<StepOrigin>* origins, std::string* why_none, std::string* how, EarlyOps* early) {
  const Trace& t = *rt.trace;
  DeviceTracks tracks;
  for (TrackId i = 0; i < t.tracks().size(); ++i)
    if (on_device(t, i, opt.device)) tracks[t.tracks()[i].device].push_back(i);
  if (tracks.empty()) return StepSource::none;

  StepSource source = StepSource::none;
  Found f;
  f.origins = origins != nullptr;
  cpu_marked_steps(rt, opt, tracks, f, &source);
  std::string not_steps;  // why a pattern that repeats was not taken for steps
  if (f.steps.empty()) {
    source = StepSource::none;
    f.from.clear();
    pattern_steps_per_device(rt, tracks, f, &source, how, &not_steps);
  }
  if (f.steps.empty()) {
    f.from.clear();
    burst_steps_per_device(rt, tracks, f, &source, how, &not_steps);
  }
  if (f.steps.empty() && why_none && why_none->empty()) *why_none = not_steps;
  order_steps(f);
  // A device's first step found on the CPU starts when the work queued ahead
  // of it was done (later ones where the step before them ended).
  std::vector<OpCursor> cursors;
  if (source == StepSource::profiler_step || source == StepSource::nvtx)
    for (std::size_t i = 0; i < f.steps.size(); ++i) {
      Step& st = f.steps[i];
      const std::vector<TrackId>& device_tracks = tracks.at(st.device);
      if (i == 0 || f.steps[i - 1].device != st.device) {
        cursors = op_cursors(t, device_tracks);
        const Backlog behind = backlog_end(t, device_tracks, st.range, opt.thresholds.idle_gap_ns);
        if (behind.end > st.range.start && behind.end < st.range.end) {
          st.range.start = behind.end;
          st.host_tail_ns = std::min(st.host_tail_ns, st.range.duration());
          if (early) {
            early->ops += behind.early_ops, early->ns += behind.early_ns, early->backlog_ops += behind.ops,
                early->backlog_ns += behind.ns;
            for (int c = 0; c < kKernelCategoryCount; ++c)
              early->category_ns[c] += behind.category_ns[c], early->category_count[c] += behind.category_count[c];
          }
        }
      }
      st.lead_idle_ns = lead_idle(cursors, st.range);
    }
  // Hand the steps over without copying them into a vector that grows as it
  // goes: a 10M-kernel trace has ~250k of them, and fresh memory is costly.
  if (origins) origins->insert(origins->end(), f.from.begin(), f.from.end());
  if (steps->empty()) {
    *steps = std::move(f.steps);
  } else {
    steps->reserve(steps->size() + f.steps.size());
    std::move(f.steps.begin(), f.steps.end(), std::back_inserter(*steps));
  }
  return source;
}

bool is_step_range_name(std::string_view name) { return is_profiler_step(name) || is_step_name(name); }

std::uint64_t step_ranges_on_host(const Trace& t) {
  const RangeTable& r = t.ranges();
  NameMemo<bool (*)(std::string_view)> step_named(t, &is_step_range_name);
  std::uint64_t n = 0;
  for (RowIndex i = 0; i < r.size(); ++i)
    n += t.tracks()[r.track_at(i)].kind == TrackKind::cpu && r.kind_at(i) != RangeKind::mark && step_named(r.name[i]);
  return n;
}

void steps_outside_gpu(const RankedTrace& rt, const std::vector<DeviceSummary>& devices, const std::vector<Step>& steps,
                       StepSummary* out) {
  const Trace& t = *rt.trace;
  std::vector<TimeRange> outside;  // in the trace's own clock
  for (const Step& st : steps) {
    const auto d =
        std::find_if(devices.begin(), devices.end(), [&](const DeviceSummary& x) { return x.id == st.device; });
    if (d == devices.end() || d->window.end <= d->window.start) continue;
    const TimeRange w = d->window;
    const TimeNs before = std::max<TimeNs>(0, std::min(st.range.end, w.start) - st.range.start);
    const TimeNs after = std::max<TimeNs>(0, st.range.end - std::max(st.range.start, w.end));
    out->before_gpu_ns += before;
    out->outside_gpu_ns += before + after;
    if (before > 0) outside.push_back({st.range.start - rt.offset, st.range.start + before - rt.offset});
    if (after > 0) outside.push_back({st.range.end - after - rt.offset, st.range.end - rt.offset});
  }
  if (outside.empty()) return;
  // Host ranges wholly inside those stretches, by name (not the steps' own ranges).
  std::map<StringId, HostRange> by_name;
  const RangeTable& r = t.ranges();
  NameMemo<bool (*)(std::string_view)> step_named(t, &is_step_range_name);
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (t.tracks()[tr].kind != TrackKind::cpu) continue;
    for (const TimeRange& o : outside) {
      const RowRange rows = t.rows_overlapping(TableId::ranges, tr, o.start, o.end);
      for (RowIndex i = rows.begin; i < rows.end; ++i) {
        if (r.kind_at(i) == RangeKind::mark || r.start[i] < o.start || r.end[i] > o.end) continue;
        if (step_named(r.name[i])) continue;
        HostRange& h = by_name[r.name[i]];
        h.ns += r.end[i] - r.start[i];
        ++h.count;
      }
    }
  }
  std::vector<HostRange> found;
  for (auto& entry : by_name) {
    entry.second.name = std::string(t.str(entry.first));
    found.push_back(std::move(entry.second));
  }
  merge_host_ranges(found, &out->outside_ranges);
}

namespace {

// Σ of the union of `pieces` (sorted here).
TimeNs union_length(std::vector<TimeRange>& pieces) {
  std::sort(pieces.begin(), pieces.end(), [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  TimeNs total = 0, at = std::numeric_limits<TimeNs>::min();
  for (const TimeRange& p : pieces) {
    const TimeNs from = std::max(at, p.start);
    if (p.end > from) total += p.end - from;
    at = std::max(at, p.end);
  }
  return total;
}

// Adds to `by_name` the outermost of `named` (clipped ranges of one thread):
// each not inside one taken before it, by start, the longer first. A range
// one of whose direct children covers 90 % of it or more is a wrapper (a
// harness's entry point, a module's call into its forward): the child is
// named instead, down to the first range whose time is spread over its
// children or is its own.
constexpr double kWrapperShare = 0.9;
void outermost(std::vector<std::pair<TimeRange, StringId>>& named, std::map<StringId, HostRange>& by_name) {
  std::sort(named.begin(), named.end(), [](const auto& a, const auto& b) {
    return a.first.start != b.first.start ? a.first.start < b.first.start : a.first.end > b.first.end;
  });
  // The longest direct child of named[i] (inside it, not inside an earlier
  // child), or i itself where none covers kWrapperShare of it.
  auto dominant_child = [&](std::size_t i) {
    const TimeRange& p = named[i].first;
    std::size_t best = i;
    TimeNs reach = std::numeric_limits<TimeNs>::min();
    for (std::size_t j = i + 1; j < named.size() && named[j].first.start < p.end; ++j) {
      const TimeRange& c = named[j].first;
      if (c.start < reach || c.end > p.end) continue;
      reach = c.end;
      if (double(c.duration()) >= kWrapperShare * double(p.duration()) &&
          (best == i || c.duration() > named[best].first.duration()))
        best = j;
    }
    return best;
  };
  TimeNs reach = std::numeric_limits<TimeNs>::min();
  for (std::size_t i = 0; i < named.size(); ++i) {
    const TimeRange& c = named[i].first;
    if (c.start < reach) continue;
    reach = c.end;
    std::size_t at = i;
    for (std::size_t child = dominant_child(at); child != at; child = dominant_child(at)) at = child;
    HostRange& h = by_name[named[at].second];
    h.ns += named[at].first.duration();
    ++h.count;
  }
}

// Ranges of each CPU thread whose name passes `named` and not `unless` (not
// marks): few (a step's data loading), so a step finds its own among these,
// not among every op of the thread.
struct NamedRows {
  std::vector<std::vector<RowIndex>> rows;  // by track, in start order
  std::vector<TimeNs> longest;              // by track

  // Calls f(row) for the rows of `tr` that overlap [from, to].
  template <class F>
  void overlapping(const RangeTable& r, TrackId tr, TimeNs from, TimeNs to, F&& f) const {
    const std::vector<RowIndex>& of = rows[tr];
    auto i = std::lower_bound(of.begin(), of.end(), from - longest[tr],
                              [&](RowIndex row, TimeNs at) { return r.start[row] < at; });
    for (; i != of.end() && r.start[*i] <= to; ++i)
      if (r.end[*i] >= from) f(*i);
  }
};

NamedRows named_rows(const Trace& t, NameMemo<bool (*)(std::string_view)>& named,
                     NameMemo<bool (*)(std::string_view)>& unless) {
  NamedRows out;
  out.rows.resize(t.tracks().size());
  out.longest.assign(t.tracks().size(), 0);
  // Per string: 1 a range's name, 2 one that passes; each name tested once.
  const RangeTable& r = t.ranges();
  std::vector<std::uint8_t> flag(t.strings().size(), 0);
  for (std::size_t i = 0; i < r.size(); ++i) flag[r.name[i]] = 1;
  bool any = false;
  for (StringId id = 0; id < flag.size(); ++id)
    if (flag[id] == 1) {
      flag[id] = named(id) && !unless(id) ? 2 : 0;
      any = any || flag[id] == 2;
    }
  if (!any) return out;
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (t.tracks()[tr].kind != TrackKind::cpu) continue;
    const RowRange rows = t.rows_of(TableId::ranges, tr);
    for (RowIndex i = rows.begin; i < rows.end; ++i)
      if (flag[r.name[i]] == 2 && r.kind_at(i) != RangeKind::mark) {
        out.rows[tr].push_back(i);
        out.longest[tr] = std::max(out.longest[tr], r.end[i] - r.start[i]);
      }
  }
  return out;
}

// The CPU track holding a step's range at `at` (trace clock), the step's
// start: the loop's thread; kNoTrack where no step-named range is there. A
// range that ends at `at` is the step before. The step's range starts at
// `at` where the steps are ranges: found by the rows starting there first.
// `hints`: per track, where its last search landed (RangeHints), for steps
// looked up in time order.
struct RangeHints {
  std::vector<RowIndex> at, overlapping;  // by track
  explicit RangeHints(const Trace& t) : at(t.tracks().size(), 0), overlapping(t.tracks().size(), 0) {}
};
TrackId step_thread(const Trace& t, TimeNs at, NameMemo<bool (*)(std::string_view)>& step_named, RangeHints& hints) {
  const RangeTable& r = t.ranges();
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (t.tracks()[tr].kind != TrackKind::cpu) continue;
    const RowRange all = t.rows_of(TableId::ranges, tr);
    const RowIndex from = detail::first_at_or_after(r.start.data(), all.begin, all.end, hints.at[tr], at);
    hints.at[tr] = from;
    for (RowIndex i = from; i < all.end && r.start[i] == at; ++i)
      if (r.end[i] > at && step_named(r.name[i])) return tr;
  }
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (t.tracks()[tr].kind != TrackKind::cpu) continue;
    const RowRange rows = t.rows_overlapping(TableId::ranges, tr, at + 1, at + 1, &hints.overlapping[tr]);
    for (RowIndex i = rows.begin; i < rows.end; ++i)
      if (r.start[i] <= at && r.end[i] > at && step_named(r.name[i])) return tr;
  }
  return std::numeric_limits<TrackId>::max();
}

}  // namespace

void steps_lead_host(const RankedTrace& rt, const std::vector<Step>& steps, StepSummary* out) {
  const Trace& t = *rt.trace;
  const RangeTable& r = t.ranges();
  const ApiCallTable& api = t.api_calls();
  NameMemo<bool (*)(std::string_view)> step_named(t, &is_step_range_name);
  NameMemo<bool (*)(std::string_view)> loading(t, &is_data_loading_frame);
  const NamedRows loaders = named_rows(t, loading, step_named);
  std::map<StringId, HostRange> by_name;
  std::vector<TimeRange> covered, input;
  std::vector<std::pair<TimeRange, StringId>> named;
  RangeHints hints(t);
  std::vector<RowIndex> call_hints(t.tracks().size(), 0);
  for (const Step& st : steps) {
    if (st.lead_idle_ns <= 0) continue;
    named.clear();
    const TimeRange w{st.range.start - rt.offset, st.range.start + st.lead_idle_ns - rt.offset};
    const TimeNs step_end = st.range.end - rt.offset;
    const TrackId thread = step_thread(t, w.start, step_named, hints);
    covered.clear(), input.clear();
    // A range that began before the step and outlasts it encloses the loop
    // (the harness's function): it says nothing of what the step did.
    auto inside = [&](TimeNs a, TimeNs b) { return !(a <= w.start && b >= step_end); };
    auto clipped = [&](RowIndex i) { return TimeRange{std::max(r.start[i], w.start), std::min(r.end[i], w.end)}; };
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (t.tracks()[tr].kind != TrackKind::cpu) continue;
      if (tr != thread) {
        // Other threads: only their data loading counts (a worker's fetch).
        loaders.overlapping(r, tr, w.start + 1, w.end, [&](RowIndex i) {
          if (const TimeRange c = clipped(i); c.end > c.start && inside(r.start[i], r.end[i])) input.push_back(c);
        });
        continue;
      }
      // From w.start + 1: a row that ends at the window's start (the step
      // before) has nothing in it.
      const RowRange rows = t.rows_overlapping(TableId::ranges, tr, w.start + 1, w.end, &hints.overlapping[tr]);
      for (RowIndex i = rows.begin; i < rows.end; ++i) {
        if (r.kind_at(i) == RangeKind::mark || !inside(r.start[i], r.end[i]) || step_named(r.name[i])) continue;
        const TimeRange c = clipped(i);
        if (c.end <= c.start) continue;
        if (loading(r.name[i])) input.push_back(c);
        covered.push_back(c);
        named.push_back({c, r.name[i]});
      }
      const RowRange calls = t.rows_overlapping(TableId::api_calls, tr, w.start + 1, w.end, &call_hints[tr]);
      for (RowIndex i = calls.begin; i < calls.end; ++i)
        if (api.end[i] > w.start && api.start[i] < w.end)
          covered.push_back({std::max(api.start[i], w.start), std::min(api.end[i], w.end)});
    }
    out->lead_recorded_ns += union_length(covered);
    out->lead_input_ns += union_length(input);
    outermost(named, by_name);
  }
  std::vector<HostRange> found;
  for (auto& entry : by_name) {
    entry.second.name = std::string(t.str(entry.first));
    found.push_back(std::move(entry.second));
  }
  merge_host_ranges(found, &out->lead_ranges);
}

namespace {
// Each thread's synchronizing calls (start, end), in start order, and the
// longest: the few calls among every API call that the host's issue time
// leaves out.
struct SyncCalls {
  std::vector<std::vector<TimeRange>> calls;  // by track
  std::vector<TimeNs> longest;                // by track
};
SyncCalls sync_calls(const Trace& t) {
  const ApiCallTable& api = t.api_calls();
  std::vector<std::int8_t> sync(t.strings().size(), -1);  // per name: -1 not decided
  SyncCalls out;
  out.calls.resize(t.tracks().size());
  out.longest.assign(t.tracks().size(), 0);
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    const RowRange rows = t.rows_of(TableId::api_calls, tr);
    for (RowIndex i = rows.begin; i < rows.end; ++i) {
      std::int8_t& is = sync[api.name[i]];
      if (is < 0) is = is_sync_api(t.str(api.name[i])) ? 1 : 0;
      if (!is) continue;
      out.calls[tr].push_back({api.start[i], api.end[i]});
      out.longest[tr] = std::max(out.longest[tr], api.end[i] - api.start[i]);
    }
  }
  return out;
}
}  // namespace

void steps_host_issue(const RankedTrace& rt, const std::vector<Step>& steps, StepSummary* out) {
  const Trace& t = *rt.trace;
  const ApiCallTable& api = t.api_calls();
  const SyncCalls syncs = sync_calls(t);
  // Per track and table, where the last step's rows ended: the steps come
  // in time order per device, so each search starts near its answer.
  std::vector<RowIndex> hints(3 * t.tracks().size(), 0);
  for (const Step& st : steps) {
    const TimeRange w{st.range.start - rt.offset, st.range.end - rt.offset};
    TimeNs first = std::numeric_limits<TimeNs>::max(), last = std::numeric_limits<TimeNs>::min();
    RowIndex last_call = kNoRow;
    auto add = [&](const auto& table, TableId id, TrackId tr, int k) {
      // The rows that start in the window: of the rows overlapping it, the
      // ones the test below may keep.
      const RowRange all = t.rows_of(id, tr);
      RowIndex& hint = hints[3 * tr + k];
      RowIndex i = detail::first_at_or_after(table.start.data(), all.begin, all.end, hint, w.start);
      for (; i < all.end && table.start[i] <= w.end; ++i) {
        const RowIndex a = table.api[i];
        // Launched in the step: work launched before it ran there as its backlog.
        if (a == kNoRow || api.start[a] < w.start) continue;
        first = std::min(first, api.start[a]);
        if (api.end[a] > last) last = api.end[a], last_call = a;
      }
      hint = i;
    };
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (t.tracks()[tr].kind != TrackKind::gpu || t.tracks()[tr].device != st.device) continue;
      add(t.kernels(), TableId::kernels, tr, 0);
      add(t.memcpys(), TableId::memcpys, tr, 1);
      add(t.memsets(), TableId::memsets, tr, 2);
    }
    if (last <= first) continue;
    // Time the launching thread spent blocked in synchronizations meanwhile
    // is waiting, not issuing (a loss read with .item() mid-step).
    TimeNs blocked = 0;
    if (last_call != kNoRow) {
      const TrackId thread = api.track_at(last_call);
      const std::vector<TimeRange>& calls = syncs.calls[thread];
      auto i = std::lower_bound(calls.begin(), calls.end(), first - syncs.longest[thread],
                                [](const TimeRange& c, TimeNs at) { return c.start < at; });
      for (; i != calls.end() && i->start <= last; ++i)
        blocked += std::max<TimeNs>(0, std::min(i->end, last) - std::max(i->start, first));
    }
    out->host_issue_ns += std::max<TimeNs>(0, last - first - blocked);
  }
}

namespace {

// The outermost ops wholly inside each step on its thread, host time by name.
std::vector<std::map<StringId, TimeNs>> step_ops(const RankedTrace& rt, const std::vector<const Step*>& list) {
  const Trace& t = *rt.trace;
  const RangeTable& r = t.ranges();
  NameMemo<bool (*)(std::string_view)> step_named(t, &is_step_range_name);
  std::vector<std::map<StringId, TimeNs>> ops(list.size());
  RangeHints hints(t);
  for (std::size_t k = 0; k < list.size(); ++k) {
    const TimeRange w{list[k]->range.start - rt.offset, list[k]->range.end - rt.offset};
    const TrackId thread = step_thread(t, w.start, step_named, hints);
    if (thread == std::numeric_limits<TrackId>::max()) continue;
    const RowRange rows = t.rows_overlapping(TableId::ranges, thread, w.start + 1, w.end, &hints.overlapping[thread]);
    TimeNs reach = std::numeric_limits<TimeNs>::min();
    for (RowIndex i = rows.begin; i < rows.end; ++i) {
      if (r.start[i] < w.start || r.end[i] > w.end || r.start[i] < reach) continue;
      if (r.kind_at(i) == RangeKind::mark || step_named(r.name[i])) continue;
      reach = r.end[i];
      ops[k][r.name[i]] += r.end[i] - r.start[i];
    }
  }
  return ops;
}

// The slow steps of one GPU's steps (in time order), slowest first. A step
// that began before the GPU's first recorded op says how long before: what
// the GPU did then (idle, or work queued before the recording) is unknown.
void slow_steps_of(const RankedTrace& rt, TimeNs first_op, const std::vector<const Step*>& list, StepSummary* out) {
  constexpr std::size_t kMinSteps = 4, kMost = 3, kOps = 3;
  if (list.size() < kMinSteps) return;
  std::vector<TimeNs> time, idle, compute;
  for (const Step* s : list)
    time.push_back(s->range.duration()), idle.push_back(s->idle_ns), compute.push_back(s->compute_ns);
  const TimeNs median = lower_median(time);
  std::vector<std::size_t> slow;
  for (std::size_t k = 0; k < list.size(); ++k)
    if (median > 0 && time[k] > median && time[k] - median >= median / 5) slow.push_back(k);
  if (slow.empty()) return;
  std::stable_sort(slow.begin(), slow.end(), [&](std::size_t a, std::size_t b) { return time[a] > time[b]; });
  if (slow.size() > kMost) slow.resize(kMost);
  const std::vector<std::map<StringId, TimeNs>> ops = step_ops(rt, list);
  for (std::size_t k : slow) {
    SlowStep s;
    s.name = list[k]->name, s.rank = list[k]->rank, s.device = list[k]->device;
    s.ns = time[k], s.median_ns = median;
    s.idle_ns = idle[k], s.median_idle_ns = lower_median(idle);
    s.compute_ns = compute[k], s.median_compute_ns = lower_median(compute);
    s.before_gpu_ns = std::max<TimeNs>(0, first_op - list[k]->range.start);
    for (const auto& [name, ns] : ops[k]) {
      std::vector<TimeNs> across;
      for (const auto& m : ops) {
        const auto it = m.find(name);
        across.push_back(it == m.end() ? 0 : it->second);
      }
      const TimeNs typical = lower_median(std::move(across));
      if (ns > typical) s.ops.push_back({std::string(rt.trace->str(name)), ns, typical});
    }
    std::stable_sort(s.ops.begin(), s.ops.end(), [](const OpGrowth& a, const OpGrowth& b) {
      return a.ns - a.median_ns != b.ns - b.median_ns ? a.ns - a.median_ns > b.ns - b.median_ns : a.name < b.name;
    });
    if (s.ops.size() > kOps) s.ops.resize(kOps);
    out->slow_steps.push_back(std::move(s));
  }
}

}  // namespace

void steps_slow(const RankedTrace& rt, const std::vector<DeviceSummary>& devices, const std::vector<Step>& steps,
                StepSummary* out) {
  std::map<std::uint32_t, std::vector<const Step*>> by_device;
  for (const Step& st : steps) by_device[st.device].push_back(&st);
  for (const auto& entry : by_device) {  // not bindings: the lambda captures the ordinal (clang 14)
    const std::uint32_t device = entry.first;
    // Its first recorded op: where its window begins (no window: no op).
    const auto d = std::find_if(devices.begin(), devices.end(), [&](const DeviceSummary& x) { return x.id == device; });
    if (d != devices.end() && d->window.end > d->window.start) slow_steps_of(rt, d->window.start, entry.second, out);
  }
}

void merge_host_ranges(const std::vector<HostRange>& add, std::vector<HostRange>* into) {
  for (const HostRange& h : add) {
    const auto same = std::find_if(into->begin(), into->end(), [&](const HostRange& x) { return x.name == h.name; });
    if (same != into->end())
      same->ns += h.ns, same->count += h.count;
    else
      into->push_back(h);
  }
  std::sort(into->begin(), into->end(),
            [](const HostRange& a, const HostRange& b) { return a.ns != b.ns ? a.ns > b.ns : a.name < b.name; });
  if (into->size() > 5) into->resize(5);
}

}  // namespace gpuscope::detail
