// The op table: GPU time per framework op, per name and per name × shapes,
// with FLOPs, bytes and roofline figures (docs/ops.md).
//
// [SECTION] Per op call
// [SECTION] Groups
// [SECTION] Roofline
// [SECTION] The pass
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/detail/context.h"
#include "analysis/roofline.h"

namespace gpuscope::detail {

namespace {

constexpr std::string_view kNoOp = "(no op)";
constexpr std::size_t kTopKernelRows = 20, kKernelsPerRow = 5;

// [SECTION] Per op call -----------------------------------------------------------------------

// Per range row: GPU time of what it launched itself and with its children,
// its children's CPU time, its own launch calls.
struct CallTimes {
  std::vector<TimeNs> gpu_self, gpu_total, child_cpu, launch;
  std::vector<std::uint32_t> kernels, kernels_total;
};

template <class Table>
void add_gpu_ops(const Trace& t, const Table& table, CallTimes& c, OpSummary& s, TimeNs* no_op_ns,
                 std::uint64_t* no_op_count) {
  const auto& api = t.api_calls();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const TimeNs d = table.end[i] - table.start[i];
    const RowIndex a = table.api[i];
    const RowIndex r = a == kNoRow ? kNoRow : api.op_range[a];
    ++s.gpu_ops;
    if (r == kNoRow) {
      if (a == kNoRow) ++(table.correlation[i] == 0 ? s.no_correlation : s.unmatched_correlation);
      ++s.unattributed;
      s.unattributed_ns += d;
      *no_op_ns += d;
      ++*no_op_count;
      continue;
    }
    ++s.attributed;
    c.gpu_self[r] += d;
    ++c.kernels[r];
  }
}

CallTimes call_times(const Trace& t, OpSummary& s, TimeNs* no_op_ns, std::uint64_t* no_op_count) {
  const RangeTable& g = t.ranges();
  const std::size_t n = g.size();
  CallTimes c{std::vector<TimeNs>(n, 0),        {}, std::vector<TimeNs>(n, 0), std::vector<TimeNs>(n, 0),
              std::vector<std::uint32_t>(n, 0), {}};
  add_gpu_ops(t, t.kernels(), c, s, no_op_ns, no_op_count);
  add_gpu_ops(t, t.memcpys(), c, s, no_op_ns, no_op_count);
  add_gpu_ops(t, t.memsets(), c, s, no_op_ns, no_op_count);
  const ApiCallTable& api = t.api_calls();
  for (std::size_t a = 0; a < api.size(); ++a)
    if (api.op_range[a] != kNoRow && api.op_table[a] != static_cast<std::uint8_t>(OpTable::none))
      c.launch[api.op_range[a]] += api.end[a] - api.start[a];
  c.gpu_total = c.gpu_self;
  c.kernels_total = c.kernels;
  // A parent precedes its children (rows are in start order on a track).
  for (std::size_t i = n; i-- > 0;) {
    const RowIndex p = g.parent[i];
    if (p == kNoRow) continue;
    c.gpu_total[p] += c.gpu_total[i];
    c.kernels_total[p] += c.kernels_total[i];
    c.child_cpu[p] += g.end[i] - g.start[i];
  }
  return c;
}

// [SECTION] Groups ------------------------------------------------------------------------------

struct GroupKey {
  StringId name, dims, types;
  friend bool operator==(const GroupKey&, const GroupKey&) = default;
};
struct GroupKeyHash {
  std::size_t operator()(const GroupKey& k) const {
    return (std::size_t{k.name} * 0x9E3779B97F4A7C15ull) ^ (std::size_t{k.dims} * 0xC2B2AE3D27D4EB4Full) ^ k.types;
  }
};

struct Group {
  OpRow row;
  RowIndex first = kNoRow;  // its first call
  StringId concrete = 0;
};

// PyTorch's profiler step ranges, ProfilerStep#1, #2, …, are one op, named
// as PyTorch's own op table names it (key_averages: "ProfilerStep*"), not a
// row per step.
constexpr std::string_view kProfilerStep = "ProfilerStep*";
std::string_view op_name(std::string_view name) { return name.starts_with("ProfilerStep#") ? kProfilerStep : name; }

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

void add_call(Group& g, const CallTimes& c, const RangeTable& rg, RowIndex r) {
  OpRow& row = g.row;
  ++row.calls;
  const TimeNs d = rg.end[r] - rg.start[r];
  row.cpu_total_ns += d;
  row.cpu_self_ns += std::max<TimeNs>(0, d - c.child_cpu[r]);
  row.gpu_self_ns += c.gpu_self[r];
  row.gpu_total_ns += c.gpu_total[r];
  row.kernels += c.kernels[r];
  row.kernels_total += c.kernels_total[r];
  row.launch_ns += c.launch[r];
}

void add_row(OpRow& into, const OpRow& from) {
  into.calls += from.calls;
  into.cpu_self_ns += from.cpu_self_ns;
  into.cpu_total_ns += from.cpu_total_ns;
  into.gpu_self_ns += from.gpu_self_ns;
  into.gpu_total_ns += from.gpu_total_ns;
  into.kernels += from.kernels;
  into.kernels_total += from.kernels_total;
  into.launch_ns += from.launch_ns;
  if (into.path.empty()) into.path = from.path;
}

// [SECTION] Roofline ----------------------------------------------------------------------------

// Known cost of a row's calls (the same shapes each call) and its rates.
void roofline(OpRow& row, const OpCost& cost, const std::optional<DevicePeaks>& peaks) {
  row.family = std::string(to_string(cost.family));
  row.math = std::string(to_string(cost.math));
  row.dims = cost.dims;
  row.aligned8 = cost.aligned8;
  const double calls = static_cast<double>(row.calls);
  if (cost.flops) row.flops = *cost.flops * calls;
  if (cost.bytes) row.bytes = *cost.bytes * calls;
  if (row.gpu_total_ns <= 0) return;
  const double seconds = static_cast<double>(row.gpu_total_ns) * 1e-9;
  if (row.flops) row.achieved_tflops = *row.flops / seconds / 1e12;
  if (row.bytes) row.achieved_tbps = *row.bytes / seconds / 1e12;
  if (row.flops && row.bytes && *row.bytes > 0) row.intensity = *row.flops / *row.bytes;
  if (!peaks) return;
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
    if (auto p = peaks_for_device(d.name)) return p;
  }
  return std::nullopt;
}

using Merged = std::map<std::tuple<std::string, std::string, std::string>, OpRow>;

// Every op call of one trace into groups by (name, shapes, types), then into `merged`.
void group_trace(const Trace& t, OpSummary& s, Merged& merged, std::vector<std::pair<OpRow*, RowIndex>>* firsts) {
  TimeNs no_op_ns = 0;
  std::uint64_t no_op_count = 0;
  const CallTimes c = call_times(t, s, &no_op_ns, &no_op_count);
  const RangeTable& rg = t.ranges();
  std::unordered_map<GroupKey, Group, GroupKeyHash> groups;
  StringId first_step_name = StringTable::kNoString;  // every ProfilerStep#N groups under the first one's id
  std::vector<std::uint8_t> profiler_step(t.strings().size(), 2);  // by name id: 2 not known yet, 1 yes, 0 no
  for (RowIndex r = 0; r < rg.size(); ++r) {
    if (!t.is_op_range(r)) continue;
    ++s.op_calls;
    StringId name = rg.name[r];
    if (profiler_step[name] == 2) profiler_step[name] = op_name(t.str(name)) == kProfilerStep ? 1 : 0;
    if (profiler_step[name]) {
      if (first_step_name == StringTable::kNoString) first_step_name = name;
      name = first_step_name;
    }
    const GroupKey key{name, rg.input_dims_at(r), rg.input_types_at(r)};
    Group& g = groups[key];
    if (g.first == kNoRow) {
      g.first = r;
      g.concrete = rg.concrete_inputs_at(r);
    }
    if (key.dims) ++s.with_shapes;
    add_call(g, c, rg, r);
  }
  for (RowIndex r = 0; r < rg.size(); ++r)
    if (rg.parent[r] != kNoRow && rg.end[r] > rg.end[rg.parent[r]]) ++s.overlapping;
  const std::optional<DevicePeaks> peaks = trace_peaks(t);
  for (auto& [key, g] : groups) {
    OpRow row = std::move(g.row);
    row.name = std::string(op_name(t.str(key.name)));
    row.shapes = std::string(t.str(key.dims));
    row.dtypes = std::string(t.str(key.types));
    row.path = call_path(t, g.first);
    OpInputs in;
    if (key.dims || key.types || g.concrete) {
      if (!parse_op_inputs(row.shapes, row.dtypes, t.str(g.concrete), &in)) {
        s.malformed_shapes += row.calls;
        in = {};
      }
    }
    if (op_family(row.name) != OpFamily::none) roofline(row, op_cost(row.name, in), peaks);
    auto [it, fresh] = merged.try_emplace({row.name, row.shapes, row.dtypes}, row);
    if (!fresh) {
      add_row(it->second, row);
      if (row.flops) it->second.flops = it->second.flops.value_or(0) + *row.flops;
    }
    if (fresh && firsts) firsts->push_back({&it->second, g.first});
  }
  if (no_op_count) {
    OpRow& none = merged[{std::string(kNoOp), "", ""}];
    none.name = std::string(kNoOp);
    none.kernels += no_op_count;
    none.kernels_total += no_op_count;
    none.gpu_self_ns += no_op_ns;
    none.gpu_total_ns += no_op_ns;
  }
}

bool heavier(const OpRow& a, const OpRow& b) {
  if (a.gpu_total_ns != b.gpu_total_ns) return a.gpu_total_ns > b.gpu_total_ns;
  if (a.cpu_total_ns != b.cpu_total_ns) return a.cpu_total_ns > b.cpu_total_ns;
  return std::tie(a.name, a.shapes, a.dtypes) < std::tie(b.name, b.shapes, b.dtypes);
}

// Per name: the rows of every shape summed; FLOPs and bytes known only if known for every shape.
std::vector<OpRow> by_name(const std::vector<OpRow>& rows) {
  std::map<std::string, OpRow> names;
  std::map<std::string, bool> all_flops, all_bytes;
  for (const OpRow& r : rows) {
    auto [it, fresh] = names.try_emplace(r.name);
    OpRow& n = it->second;
    if (fresh) {
      n.name = r.name;
      n.family = r.family;
      n.path = r.path;
      all_flops[r.name] = all_bytes[r.name] = true;
    }
    add_row(n, r);
    if (r.flops)
      n.flops = n.flops.value_or(0) + *r.flops;
    else
      all_flops[r.name] = false;
    if (r.bytes)
      n.bytes = n.bytes.value_or(0) + *r.bytes;
    else
      all_bytes[r.name] = false;
  }
  std::vector<OpRow> out;
  for (auto& [name, n] : names) {
    if (!all_flops[name]) n.flops.reset();
    if (!all_bytes[name]) n.bytes.reset();
    const double seconds = static_cast<double>(n.gpu_total_ns) * 1e-9;
    if (seconds > 0 && n.flops) n.achieved_tflops = *n.flops / seconds / 1e12;
    if (seconds > 0 && n.bytes) n.achieved_tbps = *n.bytes / seconds / 1e12;
    if (n.flops && n.bytes && *n.bytes > 0) n.intensity = *n.flops / *n.bytes;
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), heavier);
  return out;
}

// The kernels under the heaviest rows (launched by a call of the row's op or
// by an op inside one): one pass over the kernels of each trace, walking up
// each kernel's chain of ops, into a dense table (top rows × distinct kernel
// names) — no hashing per kernel.
void top_kernels(const std::vector<RankedTrace>& traces, std::vector<OpRow>& rows, bool by_name) {
  const std::size_t top = std::min(kTopKernelRows, rows.size());
  if (top == 0) return;
  std::map<std::tuple<std::string, std::string, std::string>, std::uint32_t> index;
  for (std::size_t i = 0; i < top; ++i)
    index[{rows[i].name, rows[i].shapes, rows[i].dtypes}] = static_cast<std::uint32_t>(i);
  constexpr std::uint32_t kNotTop = 0xffffffffu;
  const auto no_op = index.find({std::string(kNoOp), "", ""});
  const std::uint32_t no_op_row = no_op == index.end() ? kNotTop : no_op->second;
  std::vector<std::map<std::string, OpKernel>> acc(top);
  for (const RankedTrace& rt : traces) {
    const Trace& t = *rt.trace;
    const RangeTable& rg = t.ranges();
    const KernelTable& k = t.kernels();
    // Each op range's top row (kNotTop if none), each group looked up once.
    std::vector<std::uint32_t> row_of(rg.size(), kNotTop);
    std::unordered_map<GroupKey, std::uint32_t, GroupKeyHash> by_key;
    for (RowIndex r = 0; r < rg.size(); ++r) {
      if (!t.is_op_range(r)) continue;
      const GroupKey key{rg.name[r], rg.input_dims_at(r), rg.input_types_at(r)};
      auto [it, fresh] = by_key.try_emplace(key, kNotTop);
      if (fresh) {
        auto found = index.find({std::string(t.str(key.name)), by_name ? "" : std::string(t.str(key.dims)),
                                 by_name ? "" : std::string(t.str(key.types))});
        if (found != index.end()) it->second = found->second;
      }
      row_of[r] = it->second;
    }
    // Dense ids of the kernel names.
    std::vector<std::uint32_t> name_id(t.strings().size(), kNotTop);
    std::vector<StringId> names;
    for (RowIndex i = 0; i < k.size(); ++i)
      if (name_id[k.name[i]] == kNotTop) {
        name_id[k.name[i]] = static_cast<std::uint32_t>(names.size());
        names.push_back(k.name[i]);
      }
    if (names.empty() || top * names.size() > (std::size_t{1} << 24)) continue;
    std::vector<std::uint64_t> count(top * names.size(), 0);
    std::vector<TimeNs> time(top * names.size(), 0);
    std::vector<std::uint8_t> category(top * names.size(), 0);  // of the first such kernel
    const ApiCallTable& api = t.api_calls();
    std::uint32_t seen[64];
    for (RowIndex i = 0; i < k.size(); ++i) {
      const RowIndex a = k.api[i];
      RowIndex r = a == kNoRow ? kNoRow : api.op_range[a];
      std::size_t n = 0;
      if (r == kNoRow && no_op_row != kNotTop) seen[n++] = no_op_row;
      for (; r != kNoRow && n < 64; r = rg.parent[r]) {
        const std::uint32_t row = row_of[r];
        if (row != kNotTop && std::find(seen, seen + n, row) == seen + n) seen[n++] = row;
      }
      const std::size_t id = name_id[k.name[i]];
      const TimeNs d = k.end[i] - k.start[i];
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t at = seen[j] * names.size() + id;
        if (count[at]++ == 0) category[at] = k.category[i];
        time[at] += d;
      }
    }
    for (std::size_t row = 0; row < top; ++row)
      for (std::size_t id = 0; id < names.size(); ++id) {
        const std::size_t at = row * names.size() + id;
        if (!count[at]) continue;
        OpKernel& ok = acc[row][std::string(t.str(names[id]))];
        if (ok.count == 0) ok.category = static_cast<KernelCategory>(category[at]);
        ok.count += count[at];
        ok.time_ns += time[at];
      }
  }
  for (std::size_t i = 0; i < top; ++i) {
    for (auto& [name, ok] : acc[i]) {
      ok.name = name;
      rows[i].top_kernels.push_back(ok);
    }
    std::sort(rows[i].top_kernels.begin(), rows[i].top_kernels.end(),
              [](const OpKernel& a, const OpKernel& b) { return a.time_ns > b.time_ns; });
    if (rows[i].top_kernels.size() > kKernelsPerRow) rows[i].top_kernels.resize(kKernelsPerRow);
  }
}

}  // namespace

// [SECTION] The pass ----------------------------------------------------------------------------

OpSummary trace_op_summary(const Trace& t) {
  OpSummary s;
  Merged merged;
  group_trace(t, s, merged, nullptr);
  s.shapes_recorded = s.with_shapes > 0;
  return s;
}

void op_pass(const std::vector<RankedTrace>& traces, Profile* p) {
  OpSummary& s = p->op_summary;
  Merged merged;
  bool any_op = false;
  for (const RankedTrace& rt : traces) {
    group_trace(*rt.trace, s, merged, nullptr);
    any_op = any_op || s.op_calls > 0;
  }
  s.shapes_recorded = s.with_shapes > 0;
  if (!any_op) return;  // no framework ops: no table (and no "(no op)" row covering everything)
  for (auto& [key, row] : merged) p->ops.push_back(std::move(row));
  std::sort(p->ops.begin(), p->ops.end(), heavier);
  p->op_names = by_name(p->ops);
  top_kernels(traces, p->op_names, true);
  top_kernels(traces, p->ops, false);
  // The devices' achieved rate: Σ known FLOPs of the matrix, convolution and
  // attention ops not inside another such op / Σ their GPU time.
  double flops = 0;
  TimeNs time = 0;
  for (const OpRow& r : p->ops) {
    if (!r.flops || r.family == "elementwise") continue;
    bool nested = false;
    for (std::size_t at = 0; at < r.path.size() && !nested;) {
      std::size_t end = r.path.find(" > ", at);
      if (end == std::string::npos) end = r.path.size();
      const OpFamily f = op_family(std::string_view(r.path).substr(at, end - at));
      nested = f == OpFamily::gemm || f == OpFamily::convolution || f == OpFamily::attention;
      at = end + 3;
    }
    if (nested) continue;
    flops += *r.flops;
    time += r.gpu_total_ns;
  }
  if (time > 0 && flops > 0 && traces.size() == 1)
    for (DeviceSummary& d : p->devices) d.achieved_tflops = flops / (static_cast<double>(time) * 1e-9) / 1e12;
  if (!traces.empty())
    if (const auto peaks = trace_peaks(*traces[0].trace))
      for (DeviceSummary& d : p->devices) d.peaks_source = peaks->source + " (" + peaks->model + ")";
}

}  // namespace gpuscope::detail
