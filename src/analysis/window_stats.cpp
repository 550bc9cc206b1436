// Statistics of one time window of a trace (window_stats.h).
//
// [SECTION] Runs merged by start
// [SECTION] Per GPU: the sweep
// [SECTION] Per name, category and framework op
// [SECTION] Entry point
//
// The GPU ops of a track are sorted by start in each table, so a GPU's ops in
// time order are a merge of a few sorted runs (per track and table); the
// sweep keeps the ops in flight in a heap of their ends, as the device pass
// does, so memory stays O(streams + ops in flight) whatever the window holds.
#include "analysis/window_stats.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <unordered_map>
#include <vector>

namespace gpuscope {

namespace {

constexpr std::string_view kNoOp = "(no op)";  // the op table's row of GPU work launched outside every op
// PyTorch's ProfilerStep#1, #2, … are one op of the op table, "ProfilerStep*"
// (ops.cpp names them as PyTorch's key_averages does).
constexpr std::string_view kProfilerStep = "ProfilerStep*";

// [SECTION] Runs merged by start ------------------------------------------------------------------

// The rows of one table on one track that the window holds.
struct Run {
  TableId table;
  const TimeNs* start;
  const TimeNs* end;
  RowIndex row, last;
};

// Whether an op [s, e) counts in the window: it overlaps it, or (zero length) starts inside it.
bool in_window(TimeNs s, TimeNs e, TimeRange w) {
  return s == e ? s >= w.start && s < w.end : s < w.end && e > w.start;
}

// The run of `table` on `track` inside the window, its first and last rows trimmed to ops that count.
Run run_of(const Trace& t, TableId table, TrackId track, TimeRange w) {
  const auto& tables = t.tables();
  const TimeNs* start = table == TableId::kernels   ? tables.kernels.start.data()
                        : table == TableId::memcpys ? tables.memcpys.start.data()
                                                    : tables.memsets.start.data();
  const TimeNs* end = table == TableId::kernels   ? tables.kernels.end.data()
                      : table == TableId::memcpys ? tables.memcpys.end.data()
                                                  : tables.memsets.end.data();
  const RowRange r = t.rows_overlapping(table, track, w.start, w.end);
  return Run{table, start, end, r.begin, r.end};
}

// Calls f(table, row, start, end) for every op of `runs` that counts in the
// window, in start order (ties: in run order), with its times clipped to it.
template <class F>
void merge_by_start(std::vector<Run> runs, TimeRange w, F&& f) {
  using Head = std::pair<TimeNs, std::size_t>;  // next start, run
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  auto push_next = [&](std::size_t i) {
    Run& r = runs[i];
    while (r.row < r.last && !in_window(r.start[r.row], r.end[r.row], w)) ++r.row;
    if (r.row < r.last) heads.push({r.start[r.row], i});
  };
  for (std::size_t i = 0; i < runs.size(); ++i) push_next(i);
  while (!heads.empty()) {
    const std::size_t i = heads.top().second;
    heads.pop();
    Run& r = runs[i];
    const RowIndex row = r.row++;
    f(r.table, row, std::max(r.start[row], w.start), std::min(r.end[row], w.end));
    push_next(i);
  }
}

// [SECTION] Per GPU: the sweep --------------------------------------------------------------------

// Busy time, kernel-busy time and time with >= 2 kernels in flight of one
// GPU's ops (clipped), from a sweep over their starts and ends. At equal
// times ends come first: a kernel that starts as another ends is not concurrent with it.
class Sweep {
 public:
  void add(TimeNs s, TimeNs e, bool kernel) {
    drain(s);
    advance(s);
    ++ops_;
    kernels_ += kernel;
    ends_.push({e, kernel});
  }
  void finish() { drain(std::numeric_limits<TimeNs>::max()); }
  TimeNs busy = 0, kernel_busy = 0, concurrent = 0;

 private:
  void drain(TimeNs until) {
    while (!ends_.empty() && ends_.top().first <= until) {
      const auto [e, kernel] = ends_.top();
      ends_.pop();
      advance(e);
      --ops_;
      kernels_ -= kernel;
    }
  }
  void advance(TimeNs t) {
    if (t <= now_) return;
    const TimeNs dt = t - now_;
    if (ops_ > 0) busy += dt;
    if (kernels_ > 0) kernel_busy += dt;
    if (kernels_ > 1) concurrent += dt;
    now_ = t;
  }
  using End = std::pair<TimeNs, bool>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  TimeNs now_ = std::numeric_limits<TimeNs>::min();
  std::uint64_t ops_ = 0, kernels_ = 0;
};

// One GPU's streams and the GPU itself.
void device_stats(const Trace& t, std::uint32_t device, TimeRange w, WindowStats* out) {
  constexpr std::array<TableId, 3> kTables = {TableId::kernels, TableId::memcpys, TableId::memsets};
  const double length = static_cast<double>(std::max<TimeNs>(1, w.duration()));
  WindowDevice d;
  d.device = device;
  std::vector<Run> all;
  for (TrackId track = 0; track < t.tracks().size(); ++track) {
    const Track& tr = t.tracks()[track];
    if (tr.kind != TrackKind::gpu || tr.device != device) continue;
    std::vector<Run> mine;
    for (TableId table : kTables) mine.push_back(run_of(t, table, track, w));
    WindowStream s;
    s.track = track;
    s.device = device;
    s.stream = tr.stream;
    TimeNs run_start = 0, run_end = std::numeric_limits<TimeNs>::min();  // the union, one run at a time
    merge_by_start(mine, w, [&](TableId table, RowIndex, TimeNs a, TimeNs b) {
      (table == TableId::kernels ? s.kernels : table == TableId::memcpys ? s.memcpys : s.memsets) += 1;
      if (table == TableId::kernels) s.kernel_ns += b - a;
      if (a > run_end) {
        if (run_end > run_start) s.busy_ns += run_end - run_start;
        run_start = a;
        run_end = b;
      } else {
        run_end = std::max(run_end, b);
      }
    });
    if (run_end > run_start) s.busy_ns += run_end - run_start;
    if (s.kernels + s.memcpys + s.memsets == 0) continue;
    s.idle_ns = w.duration() - s.busy_ns;
    s.busy_share = static_cast<double>(s.busy_ns) / length;
    d.kernels += s.kernels, d.memcpys += s.memcpys, d.memsets += s.memsets;
    d.kernel_time_ns += s.kernel_ns;
    out->streams.push_back(s);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  if (d.kernels + d.memcpys + d.memsets == 0) return;
  Sweep sweep;
  merge_by_start(std::move(all), w,
                 [&](TableId table, RowIndex, TimeNs a, TimeNs b) { sweep.add(a, b, table == TableId::kernels); });
  sweep.finish();
  d.busy_ns = sweep.busy;
  d.kernel_busy_ns = sweep.kernel_busy;
  d.concurrent_ns = sweep.concurrent;
  d.idle_ns = w.duration() - d.busy_ns;
  d.utilization = static_cast<double>(d.busy_ns) / length;
  if (d.kernel_busy_ns > 0) {
    d.kernel_concurrency = static_cast<double>(d.concurrent_ns) / static_cast<double>(d.kernel_busy_ns);
    d.mean_kernels_in_flight = static_cast<double>(d.kernel_time_ns) / static_cast<double>(d.kernel_busy_ns);
  }
  out->devices.push_back(d);
}

// [SECTION] Per name, category and framework op ---------------------------------------------------

// Sums per kernel name, category and op name over the GPU ops of the window.
class Sums {
 public:
  explicit Sums(const Trace& t) : t_(t), names_(t.strings().size()) {}

  void add(TableId table, RowIndex row, TimeNs a, TimeNs b) {
    const TimeNs d = b - a;
    if (table == TableId::kernels) {
      const KernelTable& k = t_.kernels();
      // Per name and category, as the hotspots are: a name's kernels may sit in
      // two categories (the op that launched a cuDNN GEMM decides).
      Acc* n = &names_[k.name[row]];
      if (n->count == 0) n->category = k.category[row];
      if (n->category != k.category[row]) {
        n = &other_categories_[std::uint64_t{k.name[row]} << 8 | k.category[row]];
        n->category = k.category[row];
      }
      ++n->count, n->ns += d;
      Acc& c = categories_[k.category[row]];
      ++c.count, c.ns += d;
    }
    const RowIndex api = table == TableId::kernels   ? t_.kernels().api[row]
                         : table == TableId::memcpys ? t_.memcpys().api[row]
                                                     : t_.memsets().api[row];
    RowIndex op = api == kNoRow ? kNoRow : t_.api_calls().op_range_at(api);
    if (op == kNoRow) {
      ++no_op_.count, no_op_.ns += d;
      ++no_op_.count_total, no_op_.ns_total += d;
      return;
    }
    OpAcc& self = ops_[t_.ranges().name[op]];
    ++self.count, self.ns += d;
    // The op and every op around it: GPU total (with the ops inside), as the
    // op table sums it: each name once (a call inside a call of its own op is part of it).
    names_around_.clear();
    for (; op != kNoRow; op = t_.parent_op(op)) {
      const StringId name = t_.ranges().name[op];
      if (std::find(names_around_.begin(), names_around_.end(), name) != names_around_.end()) continue;
      names_around_.push_back(name);
      OpAcc& o = ops_[name];
      ++o.count_total, o.ns_total += d;
    }
  }

  void finish(WindowStats* out) const {
    const double length = static_cast<double>(std::max<TimeNs>(1, out->window.duration()));
    auto share = [](TimeNs v, TimeNs of) { return of > 0 ? static_cast<double>(v) / static_cast<double>(of) : 0.0; };
    auto name_row = [&](StringId id, const Acc& n) {
      out->kernel_names.push_back({std::string(t_.str(id)), static_cast<KernelCategory>(n.category), n.count, n.ns, 0,
                                   0, share(n.ns, out->kernel_time_ns), static_cast<double>(n.ns) / length});
    };
    for (StringId id = 0; id < names_.size(); ++id)
      if (names_[id].count > 0) name_row(id, names_[id]);
    for (const auto& [key, n] : other_categories_) name_row(static_cast<StringId>(key >> 8), n);
    for (int c = 0; c < kKernelCategoryCount; ++c) {
      const Acc& a = categories_[static_cast<std::size_t>(c)];
      if (a.count == 0) continue;
      const auto cat = static_cast<KernelCategory>(c);
      out->categories.push_back({std::string(to_string(cat)), cat, a.count, a.ns, 0, 0,
                                 share(a.ns, out->kernel_time_ns), static_cast<double>(a.ns) / length});
    }
    auto op_row = [&](std::string name, const OpAcc& o) {
      WindowRow r{std::move(name), KernelCategory::other, o.count, o.ns, o.ns_total, o.count_total, 0, 0};
      r.share = share(o.ns, out->gpu_op_time_ns);
      r.of_window = static_cast<double>(o.ns) / length;
      return r;
    };
    std::map<std::string_view, OpAcc> by_name;  // ProfilerStep#N pooled into one row
    for (const auto& [id, o] : ops_) {
      const std::string_view name = t_.str(id).starts_with("ProfilerStep#") ? kProfilerStep : t_.str(id);
      OpAcc& into = by_name[name];
      into.count += o.count, into.count_total += o.count_total, into.ns += o.ns, into.ns_total += o.ns_total;
    }
    for (const auto& [name, o] : by_name) out->ops.push_back(op_row(std::string(name), o));
    if (no_op_.count_total > 0) out->ops.push_back(op_row(std::string(kNoOp), no_op_));
    auto by_time = [](const WindowRow& a, const WindowRow& b) {
      if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
      return a.name != b.name ? a.name < b.name : a.category < b.category;
    };
    std::sort(out->kernel_names.begin(), out->kernel_names.end(), by_time);
    std::sort(out->categories.begin(), out->categories.end(), by_time);
    std::sort(out->ops.begin(), out->ops.end(), [](const WindowRow& a, const WindowRow& b) {
      return a.with_children_ns != b.with_children_ns ? a.with_children_ns > b.with_children_ns : a.name < b.name;
    });
  }

 private:
  struct Acc {
    std::uint64_t count = 0;
    TimeNs ns = 0;
    std::uint8_t category = 0;  // kernel names: the category of their kernels
  };
  struct OpAcc {
    std::uint64_t count = 0, count_total = 0;
    TimeNs ns = 0, ns_total = 0;
  };
  const Trace& t_;
  std::vector<Acc> names_;                                   // by kernel name id, in the category its first kernel has
  std::unordered_map<std::uint64_t, Acc> other_categories_;  // by name id << 8 | category: the others
  std::array<Acc, kKernelCategoryCount> categories_{};
  std::unordered_map<StringId, OpAcc> ops_;  // by op name id
  std::vector<StringId> names_around_;       // of the op being added and those around it (reused)
  OpAcc no_op_;
};

}  // namespace

// [SECTION] Entry point ---------------------------------------------------------------------------

WindowStats window_stats(const Trace& trace, TimeRange window, std::uint32_t device) {
  WindowStats out;
  out.window = window;
  if (window.end <= window.start) return out;
  std::vector<std::uint32_t> devices;
  for (const Track& tr : trace.tracks())
    if (tr.kind == TrackKind::gpu && (device == kNoDevice || tr.device == device)) devices.push_back(tr.device);
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  for (std::uint32_t d : devices) device_stats(trace, d, window, &out);

  Sums sums(trace);
  for (const WindowStream& s : out.streams) {
    for (TableId table : {TableId::kernels, TableId::memcpys, TableId::memsets}) {
      const Run r = run_of(trace, table, s.track, window);
      for (RowIndex row = r.row; row < r.last; ++row) {
        if (!in_window(r.start[row], r.end[row], window)) continue;
        const TimeNs a = std::max(r.start[row], window.start), b = std::min(r.end[row], window.end);
        sums.add(table, row, a, b);
        out.gpu_op_time_ns += b - a;
        if (table == TableId::kernels) out.kernel_time_ns += b - a;
      }
    }
    out.kernels += s.kernels, out.memcpys += s.memcpys, out.memsets += s.memsets;
  }
  sums.finish(&out);
  return out;
}

}  // namespace gpuscope
