// The host's synchronizations with the GPU between the steps' launches,
// which a CUDA graph capture of the step cannot hold, and where they are
// (SyncStats::mid_step…); the named ranges directly under the steps, which
// could be captured apart.
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analysis/detail/context.h"

namespace gpuscope::detail {

namespace {

constexpr std::size_t kKeep = 8;                   // sites and parts kept
constexpr int kFrameScan = 1024;                   // ranges before a call looked at for its Python frame
constexpr std::uint64_t kFrameBudget = 4'000'000;  // ranges the frame look-ups scan in all

// A step looked in (without steps, the recording), on the job's clock: the
// host times of its first and last launch.
struct Window {
  TimeRange range;
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = std::numeric_limits<TimeNs>::min();
};
// A named range directly under a step.
struct Part {
  TimeRange range;  // job clock
  StringId name;
};

// The steps of the GPU with the most steps (the lowest such ordinal), in
// time order; the recording where there are no steps. `device`: their GPU
// (kNoDevice: every GPU).
std::vector<Window> windows_of(const Profile& p, std::uint32_t* device) {
  std::vector<Window> out;
  *device = kNoDevice;
  const std::vector<Step>& steps = p.steps.steps;
  if (steps.empty()) {
    if (p.window.duration() > 0) out.push_back({p.window});
    return out;
  }
  std::map<std::uint32_t, std::size_t> per_device;
  for (const Step& s : steps) ++per_device[s.device];
  std::size_t most = 0;
  for (const auto& [d, n] : per_device)
    if (n > most) most = n, *device = d;
  for (const Step& s : steps)
    if (s.device == *device) out.push_back({s.range});
  std::sort(out.begin(), out.end(), [](const Window& a, const Window& b) { return a.range.start < b.range.start; });
  return out;
}

// The window holding host time `at`, or -1.
std::ptrdiff_t window_at(const std::vector<Window>& w, TimeNs at) {
  auto it = std::upper_bound(w.begin(), w.end(), at, [](TimeNs x, const Window& y) { return x < y.range.start; });
  if (it == w.begin()) return -1;
  --it;
  return it->range.end >= at ? it - w.begin() : -1;
}
// The part of `parts` (one window's, in time order) holding `at`, or nullptr.
const Part* part_at(const std::vector<Part>& parts, TimeNs at) {
  auto it = std::upper_bound(parts.begin(), parts.end(), at, [](TimeNs x, const Part& y) { return x < y.range.start; });
  if (it == parts.begin()) return nullptr;
  --it;
  return it->range.end >= at ? &*it : nullptr;
}

// Per string: whether it names a step (a step's own range is no part and no place).
std::vector<char> step_names(const Trace& t, const Profile& p) {
  std::vector<char> out(t.strings().size(), 0);
  for (const Step& s : p.steps.steps)
    if (const StringId id = t.strings().find(s.name); id != StringTable::kNoString) out[id] = 1;
  for (StringId id = 0; id < out.size(); ++id) out[id] = out[id] || is_profiler_step(t.str(id));
  return out;
}

// The named ranges (record_function, NVTX: op ranges that are no framework
// op) whose parent is a step's range, per window in time order.
std::vector<std::vector<Part>> parts_of(const RankedTrace& rt, const std::vector<Window>& w,
                                        const std::vector<char>& is_step, StringId cpu_op) {
  const Trace& t = *rt.trace;
  const RangeTable& rg = t.ranges();
  std::vector<std::vector<Part>> out(w.size());
  for (std::size_t r = 0; r < rg.size(); ++r) {
    const RowIndex q = rg.parent[r];
    if (q == kNoRow || !is_step[rg.name[q]] || rg.domain[r] == cpu_op || is_step[rg.name[r]]) continue;
    if (!t.is_op_range(static_cast<RowIndex>(r))) continue;
    const TimeRange at = rt.shift({rg.start[r], rg.end[r]});
    if (const std::ptrdiff_t i = window_at(w, at.start); i >= 0) out[i].push_back({at, rg.name[r]});
  }
  for (std::vector<Part>& v : out)
    std::sort(v.begin(), v.end(), [](const Part& a, const Part& b) { return a.range.start < b.range.start; });
  return out;
}

// Calls f(launch call row) for every GPU op on the windows' GPU(s) that has one.
template <class F>
void for_each_launch(const Trace& t, std::uint32_t filter, std::uint32_t device, F&& f) {
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (!on_device(t, tr, filter) || (device != kNoDevice && t.tracks()[tr].device != device)) continue;
    auto rows = [&](TableId table, const std::vector<RowIndex>& api) {
      const RowRange r = t.rows_of(table, tr);
      for (RowIndex i = r.begin; i < r.end; ++i)
        if (api[i] != kNoRow) f(api[i]);
    };
    rows(TableId::kernels, t.kernels().api);
    rows(TableId::memcpys, t.memcpys().api);
    rows(TableId::memsets, t.memsets().api);
  }
}

// The innermost Python frame outside torch's modules around [start, end]
// on `track`, kNoString where none is found (`budget`: ranges left to scan).
StringId python_frame(const Trace& t, TrackId track, TimeNs start, TimeNs end, StringId python, std::uint64_t& budget) {
  const RangeTable& g = t.ranges();
  const RowRange rows = t.rows_of(TableId::ranges, track);
  const TimeNs* begin = g.start.data() + rows.begin;
  RowIndex i = rows.begin + static_cast<RowIndex>(std::upper_bound(begin, begin + rows.size(), start) - begin);
  for (int n = 0; i > rows.begin && n < kFrameScan && budget > 0; ++n, --budget) {
    --i;
    if (g.domain[i] != python || g.end[i] < end) continue;
    if (!torch_frame(t.str(g.name[i]))) return g.name[i];
  }
  return StringId(StringTable::kNoString);
}

// The API call on `thread` around host time `at` that synchronizes
// (a synchronization record's call), or kNoRow.
RowIndex sync_call_at(const Trace& t, TrackId thread, TimeNs at) {
  if (thread >= t.tracks().size()) return kNoRow;
  const ApiCallTable& a = t.api_calls();
  const RowRange r = t.rows_overlapping(TableId::api_calls, thread, at, at);
  for (RowIndex k = r.begin; k < r.end; ++k)
    if (a.start[k] <= at && a.end[k] >= at && is_sync_api(t.str(a.name[k]))) return k;
  return kNoRow;
}

// One synchronization between a window's launches, with where it is.
struct Point {
  TrackId thread;
  TimeNs start, end;  // the trace's own clock
  RowIndex api;
  std::ptrdiff_t window;
  TimeNs blocked;  // host time blocked in its calls
};

// The points' places, grouped: `where`, `op`, `part` of each (SyncSite).
std::vector<SyncSite> sites_of(const RankedTrace& rt, const std::vector<Point>& points,
                               const std::vector<std::vector<Part>>& parts, const std::vector<char>& is_step,
                               StringId cpu_op) {
  const Trace& t = *rt.trace;
  const RangeTable& rg = t.ranges();
  const ApiCallTable& a = t.api_calls();
  const StringId python = t.strings().find("python_function");
  std::uint64_t budget = kFrameBudget;
  std::unordered_map<std::string, SyncSite> by_place;
  for (const Point& x : points) {
    SyncSite s;
    std::string named;
    for (RowIndex r = x.api == kNoRow ? kNoRow : a.op_range_at(x.api), depth = 0; r != kNoRow && depth < 64;
         r = t.parent_op(r), ++depth) {
      if (is_step[rg.name[r]]) continue;  // a step's range (a cpu_op in older traces)
      if (rg.domain[r] == cpu_op)
        s.op = std::string(t.str(rg.name[r]));  // the outermost wins
      else if (named.empty())
        named = std::string(t.str(rg.name[r]));
    }
    const StringId frame = python == StringTable::kNoString ? StringId(StringTable::kNoString)
                                                            : python_frame(t, x.thread, x.start, x.end, python, budget);
    s.where = frame != StringTable::kNoString ? std::string(t.str(frame))
              : !named.empty()                ? named
              : !s.op.empty()                 ? s.op
              : x.api != kNoRow               ? std::string(t.str(a.name[x.api]))
                                              : std::string("a synchronization");
    if (const Part* part = part_at(parts[x.window], x.start + rt.offset)) s.part = std::string(t.str(part->name));
    SyncSite& into = by_place[s.where + '\x1f' + s.part];
    if (into.count == 0) {
      into = s;
    } else if (!s.op.empty() && (", " + into.op + ", ").find(", " + s.op + ", ") == std::string::npos) {
      into.op += (into.op.empty() ? "" : ", ") + s.op;  // the ops there, in order of their first sync
    }
    ++into.count;
    into.blocked_ns += x.blocked;
  }
  std::vector<SyncSite> out;
  for (auto& [key, s] : by_place) out.push_back(std::move(s));
  sort_sync_sites(out);
  return out;
}

}  // namespace

void sort_sync_sites(std::vector<SyncSite>& sites) {
  std::sort(sites.begin(), sites.end(), [](const SyncSite& x, const SyncSite& y) {
    if (x.count != y.count) return x.count > y.count;
    if (x.blocked_ns != y.blocked_ns) return x.blocked_ns > y.blocked_ns;
    return std::tie(x.where, x.part) < std::tie(y.where, y.part);
  });
}

void sort_step_parts(std::vector<StepPart>& parts) {
  std::sort(parts.begin(), parts.end(), [](const StepPart& x, const StepPart& y) {
    return x.launches != y.launches ? x.launches > y.launches : x.name < y.name;
  });
}

void sync_site_pass(const RankedTrace& rt, const AnalysisOptions& opt, const std::vector<HostSyncCall>& calls,
                    Profile* p) {
  const Trace& t = *rt.trace;
  std::uint32_t device = kNoDevice;
  std::vector<Window> windows = windows_of(*p, &device);
  if (windows.empty()) return;
  const StringId cpu_op = t.strings().find("cpu_op");
  const std::vector<char> is_step = step_names(t, *p);
  const std::vector<std::vector<Part>> parts = parts_of(rt, windows, is_step, cpu_op);
  const ApiCallTable& a = t.api_calls();
  SyncStats& out = p->syncs;
  std::unordered_map<StringId, StepPart> by_part;
  // Launches per part (parts[i][k]), summed by name after: one launch per GPU
  // op, and a track's launches come in time order, so the last window and
  // part found are tried first.
  std::vector<std::vector<std::uint64_t>> part_launches(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) part_launches[i].assign(parts[i].size(), 0);
  std::ptrdiff_t last_window = -1;
  const Part* last_part = nullptr;
  std::ptrdiff_t last_part_window = -1;
  auto holds = [](const TimeRange& r, TimeNs at) { return r.start <= at && at <= r.end; };
  for_each_launch(t, opt.device, device, [&](RowIndex api) {
    const TimeNs at = a.start[api] + rt.offset;
    // window_at gives the latest-starting window that starts at or before
    // `at`; the cached one is that window only while the next has not begun.
    const std::ptrdiff_t i = last_window >= 0 && holds(windows[last_window].range, at) &&
                                     (static_cast<std::size_t>(last_window) + 1 == windows.size() ||
                                      windows[last_window + 1].range.start > at)
                                 ? last_window
                                 : (last_window = window_at(windows, at));
    if (i < 0) return;
    windows[i].first = std::min(windows[i].first, at);
    windows[i].last = std::max(windows[i].last, at);
    ++out.step_launches;
    const std::vector<Part>& mine = parts[i];
    const Part* part = last_part_window == i && last_part && holds(last_part->range, at) &&
                               (last_part + 1 == mine.data() + mine.size() || (last_part + 1)->range.start > at)
                           ? last_part
                           : part_at(mine, at);
    last_part = part, last_part_window = i;
    if (part) ++part_launches[i][static_cast<std::size_t>(part - mine.data())];
  });
  for (std::size_t i = 0; i < parts.size(); ++i)
    for (std::size_t k = 0; k < parts[i].size(); ++k)
      if (part_launches[i][k]) by_part[parts[i][k].name].launches += part_launches[i][k];
  // The synchronizations, then the blocking copies; a copy and a
  // synchronization inside one framework op are one point.
  std::vector<HostSyncCall> all = calls;
  for (const BlockingCopy& b : blocking_copies(t, opt)) {
    const TrackId track = t.memcpys().track_at(b.row);
    if (device == kNoDevice || t.tracks()[track].device == device)
      all.push_back({a.track_at(b.api), a.start[b.api], a.end[b.api], b.api});
  }
  std::sort(all.begin(), all.end(), [](const HostSyncCall& x, const HostSyncCall& y) { return x.start < y.start; });
  std::vector<Point> points;
  // A part's synchronizations: all of those inside it, the ones before the
  // step's first launch too (a capture of the part would hold them).
  std::unordered_map<RowIndex, std::ptrdiff_t> by_op;  // a framework op's point (-1: none, not mid-step)
  for (const HostSyncCall& c : all) {
    const TimeNs at = c.start + rt.offset;
    const std::ptrdiff_t i = window_at(windows, at);
    if (i < 0) continue;
    const bool mid = at > windows[i].first && at < windows[i].last;
    const RowIndex api = c.api != kNoRow ? c.api : mid ? sync_call_at(t, c.thread, c.start) : kNoRow;
    const RowIndex op = api == kNoRow ? kNoRow : a.op_range_at(api);
    if (op != kNoRow && t.ranges().domain[op] == cpu_op) {
      const auto [it, fresh] = by_op.emplace(op, mid ? static_cast<std::ptrdiff_t>(points.size()) : -1);
      if (!fresh) {  // counted with the op's first call
        if (it->second >= 0) points[it->second].blocked += c.end - c.start, out.mid_step_ns += c.end - c.start;
        continue;
      }
    }
    if (const Part* part = part_at(parts[i], at)) ++by_part[part->name].syncs;
    if (!mid) continue;
    ++out.mid_step;
    out.mid_step_ns += c.end - c.start;
    points.push_back({c.thread, c.start, c.end, api, i, c.end - c.start});
  }
  std::vector<SyncSite> sites = sites_of(rt, points, parts, is_step, cpu_op);
  if (sites.size() > kKeep) sites.resize(kKeep);
  out.mid_step_sites = std::move(sites);
  out.mid_step_steps = p->steps.steps.empty() ? 0 : windows.size();
  for (auto& [id, part] : by_part) {
    part.name = std::string(t.str(id));
    out.step_parts.push_back(part);
  }
  sort_step_parts(out.step_parts);
  if (out.step_parts.size() > kKeep) out.step_parts.resize(kKeep);
}

}  // namespace gpuscope::detail
