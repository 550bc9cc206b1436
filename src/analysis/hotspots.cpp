// Where kernel time goes, by kernel name and by category, and how ops were
// launched — pooled over every trace of a job, with exact medians.
//
// [SECTION] Naming GPU ops across traces
// [SECTION] Categories and hotspots
// [SECTION] Launch statistics
//
// Exact medians without sorting 10^7 durations: count per name first, lay the
// durations out grouped by name (and the names grouped by category), then
// select the middle of each group (stats.h's histogram select).
#include <algorithm>
#include <string>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/stats.h"

namespace gpuscope::detail {

namespace {

// [SECTION] Naming GPU ops across traces -------------------------------------------------------

// One id per distinct kernel name over all traces, with its category.
class NameIds {
 public:
  std::uint32_t of(std::string_view name, KernelCategory cat) {
    auto [it, added] = ids_.emplace(name, static_cast<std::uint32_t>(names_.size()));
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
  std::unordered_map<std::string_view, std::uint32_t> ids_;
  std::vector<std::string_view> names_;
  std::vector<KernelCategory> cats_;
};

// Calls f(global id, duration) for every kernel of the job on the analysed devices.
template <class F>
void for_each_op(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, NameIds& ids,
                 std::vector<std::vector<std::uint32_t>>& kernel_ids, F&& f) {
  constexpr std::uint32_t kUnset = ~0u;
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    const Trace& t = *traces[ti].trace;
    std::vector<std::uint32_t>& by_string = kernel_ids[ti];
    if (by_string.empty()) by_string.assign(t.strings().size(), kUnset);
    const KernelTable& k = t.kernels();
    for (std::size_t i = 0; i < k.size(); ++i) {
      if (!on_device(t, k.track[i], opt.device)) continue;
      std::uint32_t& id = by_string[k.name[i]];
      if (id == kUnset) id = ids.of(t.str(k.name[i]), k.category_at(i));
      f(id, k.end[i] - k.start[i]);
    }
  }
}

}  // namespace

// [SECTION] Categories and hotspots ---------------------------------------------------------------

void hotspot_pass(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, Profile* p, Evidence*) {
  NameIds ids;
  std::vector<std::vector<std::uint32_t>> kernel_ids(traces.size());
  struct Acc {
    std::uint64_t count = 0;
    TimeNs total = 0, min = 0, max = 0;
  };
  std::vector<Acc> acc;
  for_each_op(traces, opt, ids, kernel_ids, [&](std::uint32_t id, TimeNs dur) {
    if (id >= acc.size()) acc.resize(id + 1);
    Acc& a = acc[id];
    if (a.count == 0) a.min = a.max = dur;
    a.min = std::min(a.min, dur);
    a.max = std::max(a.max, dur);
    a.total += dur;
    ++a.count;
  });
  acc.resize(ids.size());

  // Lay out durations grouped by name, names grouped by category.
  std::vector<std::size_t> offset(ids.size() + 1, 0);
  std::array<std::size_t, kKernelCategoryCount + 1> cat_begin{};
  {
    std::size_t pos = 0;
    for (int c = 0; c < kKernelCategoryCount; ++c) {
      cat_begin[c] = pos;
      for (std::uint32_t id = 0; id < ids.size(); ++id)
        if (static_cast<int>(ids.category(id)) == c) offset[id] = pos, pos += acc[id].count;
    }
    cat_begin[kKernelCategoryCount] = pos;
  }
  std::vector<TimeNs> durations(cat_begin[kKernelCategoryCount]);
  {
    std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
    for_each_op(traces, opt, ids, kernel_ids, [&](std::uint32_t id, TimeNs dur) { durations[fill[id]++] = dur; });
  }

  TimeNs gpu_time = 0;
  for (const Acc& a : acc) gpu_time += a.total;
  p->kernel_time_ns = gpu_time;

  std::vector<Hotspot> hot;
  hot.reserve(ids.size());
  for (std::uint32_t id = 0; id < ids.size(); ++id) {
    const Acc& a = acc[id];
    if (a.count == 0) continue;
    Hotspot h;
    h.name = std::string(ids.name(id));
    h.category = ids.category(id);
    h.stats.count = a.count;
    h.stats.total = a.total;
    h.stats.min = a.min;
    h.stats.max = a.max;
    h.stats.mean = a.total / static_cast<TimeNs>(a.count);
    h.stats.median = select_kth(std::span<TimeNs>(durations.data() + offset[id], a.count), (a.count - 1) / 2);
    h.share = ratio(a.total, gpu_time);
    h.tensor_cores = is_tensor_core_kernel(h.name);
    hot.push_back(std::move(h));
  }
  // Per-name selects are done: a category's block may now be reordered.
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    const std::size_t n = cat_begin[c + 1] - cat_begin[c];
    if (n == 0) continue;
    CategoryTime ct;
    ct.category = static_cast<KernelCategory>(c);
    ct.stats = summarize(std::span<TimeNs>(durations.data() + cat_begin[c], n));
    ct.time_ns = ct.stats.total;
    ct.count = ct.stats.count;
    ct.share = ratio(ct.time_ns, gpu_time);
    p->categories.push_back(ct);
  }
  std::stable_sort(p->categories.begin(), p->categories.end(),
                   [](const CategoryTime& a, const CategoryTime& b) { return a.time_ns > b.time_ns; });
  std::stable_sort(hot.begin(), hot.end(), [](const Hotspot& a, const Hotspot& b) {
    return a.stats.total != b.stats.total ? a.stats.total > b.stats.total : a.name < b.name;
  });
  if (opt.max_hotspots && hot.size() > opt.max_hotspots) hot.resize(opt.max_hotspots);
  p->hotspots = std::move(hot);
}

// [SECTION] Launch statistics -----------------------------------------------------------------

void launch_pass(const std::vector<RankedTrace>& traces, const AnalysisOptions& opt, Profile* p) {
  LaunchStats& out = p->launches;
  std::vector<TimeNs> cpu, gpu, delay;
  std::vector<TimeNs> launches, starts;  // one stream at a time, for the queue depth
  for (const RankedTrace& rt : traces) {
    const Trace& t = *rt.trace;
    const ApiCallTable& a = t.api_calls();
    auto add = [&](const std::vector<TimeNs>& s, const std::vector<TimeNs>& e, const std::vector<RowIndex>& api,
                   RowIndex i) {
      const RowIndex c = api[i];
      if (c == kNoRow) return;
      const TimeNs launch = a.end[c] - a.start[c], run = e[i] - s[i];
      cpu.push_back(launch);
      gpu.push_back(run);
      delay.push_back(s[i] - a.end[c]);
      if (run < launch) ++out.short_kernels;
      if (launch > 50'000) ++out.runtime_outliers;
      if (s[i] - a.end[c] > 100'000) ++out.launch_delay_outliers;
      launches.push_back(a.start[c]);
      starts.push_back(s[i]);
    };
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (!on_device(t, tr, opt.device)) continue;
      launches.clear();
      starts.clear();
      std::vector<std::size_t> runs{0};  // each table's rows on the track are in start order
      for (TableId table : {TableId::kernels, TableId::memcpys, TableId::memsets}) {
        const RowRange rows = t.rows_of(table, tr);
        for (RowIndex i = rows.begin; i < rows.end; ++i) {
          if (table == TableId::kernels) add(t.kernels().start, t.kernels().end, t.kernels().api, i);
          else if (table == TableId::memcpys) add(t.memcpys().start, t.memcpys().end, t.memcpys().api, i);
          else add(t.memsets().start, t.memsets().end, t.memsets().api, i);
        }
        if (starts.size() > runs.back()) runs.push_back(starts.size());
      }
      // HTA's queue length: +1 when an op is launched, -1 when it starts.
      if (!std::is_sorted(starts.begin(), starts.end())) intervals::merge_sorted_runs(starts, runs);
      if (!std::is_sorted(launches.begin(), launches.end())) std::sort(launches.begin(), launches.end());
      std::size_t started = 0;
      for (std::size_t k = 0; k < launches.size(); ++k) {
        while (started < starts.size() && starts[started] <= launches[k]) ++started;
        const std::size_t depth = k + 1 > started ? k + 1 - started : 0;
        out.max_queue_depth = std::max<std::uint32_t>(out.max_queue_depth, static_cast<std::uint32_t>(depth));
      }
    }
  }
  out.launches = cpu.size();
  out.cpu_launch = summarize(cpu);
  out.gpu_duration = summarize(gpu);
  out.launch_delay = summarize(delay);
  out.short_kernel_share = out.launches ? double(out.short_kernels) / double(out.launches) : 0.0;
}

}  // namespace gpuscope::detail
