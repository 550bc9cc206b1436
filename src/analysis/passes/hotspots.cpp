// Where kernel time goes, by kernel name and by category, and how ops were
// launched — pooled over every trace of a job, with exact medians.
//
// [SECTION] Naming GPU ops across traces
// [SECTION] Categories and hotspots
// [SECTION] Python frames
// [SECTION] Launch statistics
//
// Exact medians without sorting 10^7 durations: count per name first, lay the
// durations out grouped by name (and the names grouped by category), then
// select the middle of each group (stats.h's histogram select).
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/util/scratch.h"
#include "analysis/util/stats.h"
#include "trace/kernel_category.h"

namespace gpuscope::detail {

namespace {

// [SECTION] Naming GPU ops across traces -------------------------------------------------------

// One id per distinct kernel name over all traces, with its category.
class NameIds {
 public:
  // rule: what placed the kernels of this name in `cat` (CategoryRuleKind:
  // a name can have kernels of several categories, one row per rule).
  std::uint32_t of(std::string_view name, KernelCategory cat, std::size_t rule = 0) {
    auto [it, added] = ids_[rule].emplace(name, static_cast<std::uint32_t>(names_.size()));
    if (added) {
      names_.push_back(name);
      cats_.push_back(cat);
    }
    return it->second;
  }
  std::size_t size() const { return names_.size(); }
  std::string_view name(std::uint32_t id) const { return names_[id]; }
  KernelCategory category(std::uint32_t id) const { return cats_[id]; }

 private:
  std::array<std::unordered_map<std::string_view, std::uint32_t>, kCategoryRuleKinds> ids_;
  std::vector<std::string_view> names_;
  std::vector<KernelCategory> cats_;
};

// Global ids of every kernel name the device passes counted, trace by trace
// (kernel_ids[trace][StringId], kUnset for strings that name no kernel).
constexpr std::uint32_t kUnset = ~0u;

void name_ids(const std::vector<RankedTrace>& traces, const OpTotals& totals, NameIds& ids,
              std::vector<std::vector<std::uint32_t>>& kernel_ids) {
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const Trace& t = *traces[ti].trace;
    const std::vector<OpTotals::Name>& names = totals.by_name[ti];
    std::vector<std::uint32_t>& by_string = kernel_ids[ti];
    by_string.assign(names.size(), kUnset);
    const std::size_t nstr = t.strings().size();
    for (std::size_t s = 0; s < names.size(); ++s)
      if (names[s].count)
        by_string[s] =
            ids.of(t.str(static_cast<StringId>(s % nstr)), static_cast<KernelCategory>(names[s].category), s / nstr);
  }
}

// Calls f(global id, duration) for every kernel of the job on the analysed devices.
template <class F>
void for_each_op(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt,
                 const std::vector<std::vector<std::uint32_t>>& kernel_ids, F&& f) {
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const Trace& t = *traces[ti].trace;
    const std::uint32_t* by_string = kernel_ids[ti].data();
    const KernelTable& k = t.kernels();
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (!on_device(t, tr, opt.device)) continue;
      const RowRange r = t.rows_of(TableId::kernels, tr);
      const TimeNs* start = k.start.data();
      const TimeNs* end = k.end.data();
      const StringId* name = k.name.data();
      if (!k.category_rule.empty()) {  // names split by what placed their kernels (name_ids)
        const std::uint8_t* rule = k.category_rule.data();
        const std::size_t nstr = t.strings().size();
        for (RowIndex i = r.begin; i < r.end; ++i) f(by_string[name[i] + rule[i] * nstr], end[i] - start[i]);
        continue;
      }
      for (RowIndex i = r.begin; i < r.end; ++i) f(by_string[name[i]], end[i] - start[i]);
    }
  }
}

}  // namespace

// [SECTION] Categories and hotspots ---------------------------------------------------------------

namespace {

// Per-name totals of every trace of the job, by job-wide name id.
struct NameAcc {
  std::uint64_t count = 0;
  TimeNs total = 0, min = 0, max = 0;
};

std::vector<NameAcc> accumulate_names(const std::vector<RankedTrace>& traces, const OpTotals& totals,
                                      const std::vector<std::vector<std::uint32_t>>& kernel_ids, std::size_t n_ids) {
  std::vector<NameAcc> acc(n_ids);
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const std::vector<OpTotals::Name>& names = totals.by_name[ti];
    for (StringId s = 0; s < names.size(); ++s) {
      const OpTotals::Name& n = names[s];
      if (!n.count) continue;
      NameAcc& a = acc[kernel_ids[ti][s]];
      if (a.count == 0) a.min = n.min, a.max = n.max;
      a.min = std::min(a.min, n.min);
      a.max = std::max(a.max, n.max);
      a.total += n.total;
      a.count += n.count;
    }
  }
  return acc;
}

// Where each name's durations go in one array: grouped by name, names
// grouped by category (so a category's durations are one block too).
struct DurationLayout {
  std::vector<std::size_t> offset;                                // by name id; [n] = total
  std::array<std::size_t, kKernelCategoryCount + 1> cat_begin{};  // by category; [count] = total
};

DurationLayout lay_out(const NameIds& ids, const std::vector<NameAcc>& acc) {
  DurationLayout l;
  l.offset.assign(ids.size() + 1, 0);
  std::size_t pos = 0;
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    l.cat_begin[c] = pos;
    for (std::uint32_t id = 0; id < ids.size(); ++id)
      if (static_cast<int>(ids.category(id)) == c) l.offset[id] = pos, pos += acc[id].count;
  }
  l.cat_begin[kKernelCategoryCount] = pos;
  return l;
}

// Per category: count, total, min and max from the per-name totals (the
// median comes from the durations).
std::array<DurationStats, kKernelCategoryCount> category_totals(const NameIds& ids, const std::vector<NameAcc>& acc) {
  std::array<DurationStats, kKernelCategoryCount> by_category{};
  for (std::uint32_t id = 0; id < ids.size(); ++id) {
    const NameAcc& a = acc[id];
    if (a.count == 0) continue;
    DurationStats& cs = by_category[static_cast<int>(ids.category(id))];
    cs.min = cs.count ? std::min(cs.min, a.min) : a.min;
    cs.max = cs.count ? std::max(cs.max, a.max) : a.max;
    cs.count += a.count;
    cs.total += a.total;
  }
  return by_category;
}

// Exact medians per name (returned) and per category (into by_category),
// from every duration laid out in one array of T (32-bit when every kernel is
// shorter than 4.29 s: half the memory, and fresh memory is most of the cost).
template <class T>
std::vector<TimeNs> select_medians(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt,
                                   const std::vector<std::vector<std::uint32_t>>& kernel_ids, const NameIds& ids,
                                   const std::vector<NameAcc>& acc, const DurationLayout& layout,
                                   std::array<DurationStats, kKernelCategoryCount>& by_category) {
  std::vector<TimeNs> medians(ids.size());
  ScratchArray<T> durations(layout.cat_begin[kKernelCategoryCount]);
  {
    std::vector<std::size_t> fill(layout.offset.begin(), layout.offset.end() - 1);
    for_each_op(traces, opt, kernel_ids,
                [&](std::uint32_t id, TimeNs dur) { durations[fill[id]++] = static_cast<T>(dur); });
  }
  for (std::uint32_t id = 0; id < ids.size(); ++id) {
    const NameAcc& a = acc[id];
    if (a.count)
      medians[id] = static_cast<TimeNs>(select_kth(durations.span(layout.offset[id], a.count), (a.count - 1) / 2,
                                                   static_cast<T>(a.min), static_cast<T>(a.max)));
  }
  // Per-name selects are done: a category's block may now be reordered.
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    DurationStats& cs = by_category[c];
    if (cs.count == 0) continue;
    cs.median = static_cast<TimeNs>(select_kth(durations.span(layout.cat_begin[c], cs.count), (cs.count - 1) / 2,
                                               static_cast<T>(cs.min), static_cast<T>(cs.max)));
  }
  return medians;
}

std::vector<Hotspot> hotspot_rows(const NameIds& ids, const std::vector<NameAcc>& acc,
                                  const std::vector<TimeNs>& medians, TimeNs gpu_time, std::size_t max_rows) {
  std::vector<Hotspot> hot;
  hot.reserve(ids.size());
  for (std::uint32_t id = 0; id < ids.size(); ++id) {
    const NameAcc& a = acc[id];
    if (a.count == 0) continue;
    Hotspot h;
    h.name = std::string(ids.name(id));
    h.category = ids.category(id);
    h.stats.count = a.count;
    h.stats.total = a.total;
    h.stats.min = a.min;
    h.stats.max = a.max;
    h.stats.mean = a.total / static_cast<TimeNs>(a.count);
    h.stats.median = medians[id];
    h.share = ratio(a.total, gpu_time);
    h.tensor_cores = is_tensor_core_kernel(h.name, h.category);
    h.category_rule = category_rule_text(h.name, h.category);
    hot.push_back(std::move(h));
  }
  std::stable_sort(hot.begin(), hot.end(), [](const Hotspot& a, const Hotspot& b) {
    return a.stats.total != b.stats.total ? a.stats.total > b.stats.total : a.name < b.name;
  });
  if (max_rows && hot.size() > max_rows) hot.resize(max_rows);
  return hot;
}

std::vector<CategoryTime> category_rows(std::array<DurationStats, kKernelCategoryCount>& by_category, TimeNs gpu_time) {
  std::vector<CategoryTime> rows;
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    DurationStats& cs = by_category[c];
    if (cs.count == 0) continue;
    cs.mean = cs.total / static_cast<TimeNs>(cs.count);
    CategoryTime ct;
    ct.category = static_cast<KernelCategory>(c);
    ct.stats = cs;
    ct.time_ns = cs.total;
    ct.count = cs.count;
    ct.share = ratio(ct.time_ns, gpu_time);
    rows.push_back(ct);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const CategoryTime& a, const CategoryTime& b) { return a.time_ns > b.time_ns; });
  return rows;
}

// [SECTION] Python frames --------------------------------------------------------------------

}  // namespace

bool torch_frame(std::string_view f) {
  return f.starts_with("torch/") || f.find("/torch/") != std::string_view::npos || f.starts_with("<built-in method") ||
         f.starts_with("<built-in function");
}

namespace {

constexpr std::size_t kFramedHotspots = 16;      // the heaviest names given a frame
constexpr std::uint64_t kFramedLaunches = 2000;  // launches of one name looked at, at most (evenly spread)
constexpr int kFrameScan = 1024;                 // ranges before a call looked at for its frames

// The innermost Python frame around [start, end) on `track` outside
// torch's modules, kNoString where none is found within kFrameScan ranges.
StringId launching_frame(const Trace& t, TrackId track, TimeNs start, TimeNs end, StringId python) {
  const RangeTable& g = t.ranges();
  const RowRange rows = t.rows_of(TableId::ranges, track);
  const TimeNs* begin = g.start.data() + rows.begin;
  RowIndex i = rows.begin + static_cast<RowIndex>(std::upper_bound(begin, begin + rows.size(), start) - begin);
  for (int n = 0; i > rows.begin && n < kFrameScan; ++n) {
    --i;
    if (g.domain[i] != python || g.end[i] < end) continue;
    if (!torch_frame(t.str(g.name[i]))) return g.name[i];
  }
  return StringId(StringTable::kNoString);
}

// Hotspot::python_frame of the heaviest rows, on traces with Python frames.
void python_frames(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt,
                   const std::vector<std::vector<std::uint32_t>>& kernel_ids, const NameIds& ids,
                   std::vector<Hotspot>& hot) {
  const std::size_t n = std::min(hot.size(), kFramedHotspots);
  std::vector<std::uint32_t> slot(ids.size(), kUnset);  // global name id -> hot row
  for (std::uint32_t id = 0; id < ids.size(); ++id)
    for (std::size_t h = 0; h < n; ++h)
      if (hot[h].category == ids.category(id) && hot[h].name == ids.name(id)) slot[id] = static_cast<std::uint32_t>(h);
  std::vector<std::unordered_map<std::string, TimeNs>> by_frame(n);
  std::vector<TimeNs> looked(n, 0);
  std::vector<std::uint64_t> seen(n, 0);
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const Trace& t = *traces[ti].trace;
    const StringId python = t.strings().find("python_function");
    if (python == StringTable::kNoString) continue;
    const KernelTable& k = t.kernels();
    const ApiCallTable& api = t.api_calls();
    const std::size_t nstr = t.strings().size();
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (!on_device(t, tr, opt.device)) continue;
      const RowRange r = t.rows_of(TableId::kernels, tr);
      for (RowIndex i = r.begin; i < r.end; ++i) {
        const std::size_t rule = k.category_rule.empty() ? 0 : k.category_rule[i];
        const std::uint32_t id = kernel_ids[ti][k.name[i] + rule * nstr];
        if (id == kUnset || slot[id] == kUnset || k.api[i] == kNoRow) continue;
        const std::uint32_t h = slot[id];
        const std::uint64_t stride = std::max<std::uint64_t>(1, hot[h].stats.count / kFramedLaunches);
        if (seen[h]++ % stride) continue;
        const RowIndex a = k.api[i];
        const TimeNs d = k.end[i] - k.start[i];
        looked[h] += d;
        const StringId f = launching_frame(t, api.track_at(a), api.start[a], api.end[a], python);
        if (f != StringTable::kNoString) by_frame[h][std::string(t.str(f))] += d;
      }
    }
  }
  for (std::size_t h = 0; h < n; ++h) {
    const auto best = std::max_element(by_frame[h].begin(), by_frame[h].end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second < y.second : x.first > y.first;
    });
    if (best == by_frame[h].end() || looked[h] <= 0) continue;
    hot[h].python_frame = best->first;
    hot[h].python_frame_share = ratio(best->second, looked[h]);
  }
}

}  // namespace

void hotspot_pass(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, const OpTotals& totals,
                  Profile* p) {
  NameIds ids;
  std::vector<std::vector<std::uint32_t>> kernel_ids(traces.size());
  name_ids(traces, totals, ids, kernel_ids);
  const std::vector<NameAcc> acc = accumulate_names(traces, totals, kernel_ids, ids.size());
  const DurationLayout layout = lay_out(ids, acc);
  std::array<DurationStats, kKernelCategoryCount> by_category = category_totals(ids, acc);
  TimeNs gpu_time = 0;
  bool fits_32_bits = true;
  for (const DurationStats& cs : by_category) {
    gpu_time += cs.total;
    if (cs.count)
      fits_32_bits = fits_32_bits && cs.min >= 0 && cs.max <= TimeNs{std::numeric_limits<std::uint32_t>::max()};
  }
  p->kernel_time_ns = gpu_time;
  const std::vector<TimeNs> medians =
      fits_32_bits ? select_medians<std::uint32_t>(traces, opt, kernel_ids, ids, acc, layout, by_category)
                   : select_medians<TimeNs>(traces, opt, kernel_ids, ids, acc, layout, by_category);
  p->hotspots = hotspot_rows(ids, acc, medians, gpu_time, opt.max_hotspots);
  python_frames(traces, opt, kernel_ids, ids, p->hotspots);
  for (CategoryTime& ct : category_rows(by_category, gpu_time)) p->categories.push_back(ct);
}

// [SECTION] Launch statistics -----------------------------------------------------------------

namespace {

// Calls f(launch call row, op start, op end) for every op with a launching
// call but a graph launch or a synchronous copy call, per stream and table (the device filter is
// checked once per stream).
template <class F>
void for_each_launch(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, F&& f) {
  for (const RankedTrace& rt : traces) {
    const Trace& t = *rt.trace;
    const ApiCallTable& a = t.api_calls();
    const LaunchCalls launch_kind(t);
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (!on_device(t, tr, opt.device)) continue;
      auto rows = [&](TableId table, const std::vector<TimeNs>& s, const std::vector<TimeNs>& e,
                      const std::vector<RowIndex>& api) {
        const RowRange r = t.rows_of(table, tr);
        for (RowIndex i = r.begin; i < r.end; ++i)
          if (api[i] != kNoRow && launch_kind(api[i]) == LaunchCalls::kAsync) f(a, api[i], s[i], e[i]);
      };
      rows(TableId::kernels, t.kernels().start, t.kernels().end, t.kernels().api);
      rows(TableId::memcpys, t.memcpys().start, t.memcpys().end, t.memcpys().api);
      rows(TableId::memsets, t.memsets().start, t.memsets().end, t.memsets().api);
    }
  }
}

}  // namespace

namespace {

// A trace's first GPU op (each GPU track's first row) that started long
// after its launch call returned, with nothing recorded running before it
// on the GPU: not a queue it waited in, but clocks that disagree or GPU
// work the trace does not hold.
void note_clock_disagreement(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, LaunchStats* out) {
  for (const RankedTrace& rt : traces) {
    const Trace& t = *rt.trace;
    TimeNs first = std::numeric_limits<TimeNs>::max();
    RowIndex api = kNoRow;
    auto consider = [&](TableId table, const std::vector<TimeNs>& start, const std::vector<RowIndex>& apis,
                        TrackId tr) {
      const RowRange rows = t.rows_of(table, tr);
      if (!rows.empty() && start[rows.begin] < first) first = start[rows.begin], api = apis[rows.begin];
    };
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (!on_device(t, tr, opt.device)) continue;
      consider(TableId::kernels, t.kernels().start, t.kernels().api, tr);
      consider(TableId::memcpys, t.memcpys().start, t.memcpys().api, tr);
      consider(TableId::memsets, t.memsets().start, t.memsets().api, tr);
    }
    if (api == kNoRow) continue;
    const TimeNs delay = first - t.api_calls().end[api];
    if (delay < kClockDisagreeNs) continue;
    out->first_op_delay_ns = delay;
    if (traces.size() > 1) out->first_op_delay_rank = rt.rank;
    // No op starts before its launch call begins: the least time from a
    // call's start to its op's (a graph's kernels included) bounds how far
    // the clocks can disagree.
    TimeNs bound = std::numeric_limits<TimeNs>::max();
    const std::vector<TimeNs>& call_start = t.api_calls().start;
    auto least = [&](TableId table, const std::vector<TimeNs>& start, const std::vector<RowIndex>& apis, TrackId tr) {
      const RowRange rows = t.rows_of(table, tr);
      for (RowIndex i = rows.begin; i < rows.end; ++i)
        if (apis[i] != kNoRow) bound = std::min(bound, start[i] - call_start[apis[i]]);
    };
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (!on_device(t, tr, opt.device)) continue;
      least(TableId::kernels, t.kernels().start, t.kernels().api, tr);
      least(TableId::memcpys, t.memcpys().start, t.memcpys().api, tr);
      least(TableId::memsets, t.memsets().start, t.memsets().api, tr);
    }
    if (bound >= 0 && bound < delay) out->clock_offset_bound_ns = bound;
    return;
  }
}

}  // namespace

void launch_pass(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, OpTotals& totals, Profile* p) {
  LaunchStats& out = p->launches;
  // CPU launch time, GPU time and launch delay of every launched op, exact,
  // without storing 3 x 10^7 values: the stream passes counted them against
  // the range the device passes' sample bracketed. If a median fell outside
  // its range (rare), StreamingStats settles it in two or three more scans.
  enum { kCpu = OpTotals::kCpu, kGpu = OpTotals::kGpu, kDelay = OpTotals::kDelay };
  std::array<DurationStats, 3> stats;
  bool settled = true;
  for (int q = 0; q < 3; ++q) {
    settled = totals.launch[q].finish() && settled;
    stats[q] = totals.launch[q].stats();
  }
  if (!settled) {
    StreamingStats again(3);
    do {
      for_each_launch(traces, opt, [&](const ApiCallTable& a, RowIndex c, TimeNs s, TimeNs e) {
        const TimeNs call_end = a.end[c];
        again.add(kCpu, call_end - a.start[c]);
        again.add(kGpu, e - s);
        again.add(kDelay, s - call_end);
      });
      again.end_pass();
    } while (!again.done());
    for (int q = 0; q < 3; ++q) stats[q] = again.stats(q);
  }
  out.short_kernels = totals.short_kernels;
  out.graph_ops = totals.graph_ops;
  out.synchronous_copies = totals.synchronous_copies;
  out.backlog_ops = totals.backlog_ops;
  out.runtime_outliers = totals.runtime_outliers;
  out.launch_delay_outliers = totals.launch_delay_outliers;
  out.cpu_launch = stats[kCpu];
  out.gpu_duration = stats[kGpu];
  out.launch_delay = stats[kDelay];
  out.launches = out.cpu_launch.count;
  out.short_kernel_share = out.launches ? double(out.short_kernels) / double(out.launches) : 0.0;
  note_clock_disagreement(traces, opt, &out);
}

}  // namespace gpuscope::detail
