#include "viewer/op_table.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <unordered_map>

#include "viewer/text.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {

constexpr std::string_view kNoOpRow = "(no op)";

bool contains_nocase(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  const auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

std::string_view text_value(const OpRow& r, OpColumn c) {
  switch (c) {
    case OpColumn::name: return r.name;
    case OpColumn::shapes: return r.shapes;
    case OpColumn::bound: return r.bound;
    default: return {};
  }
}

std::string optional_fixed(const std::optional<double>& v, int decimals) {
  return v ? format::fixed(*v, decimals) : kUnknownCell;
}

}  // namespace

const char* op_column_label(OpColumn c) {
  static constexpr const char* kLabels[] = {"op",        "shapes",   "calls",        "GPU total",   "GPU self",
                                            "CPU total", "CPU self", "kernels/call", "launch/call", "TFLOP/s",
                                            "TB/s",      "roofline", "bound"};
  static_assert(std::size(kLabels) == kOpColumnCount);
  const auto i = static_cast<std::size_t>(c);
  return i < std::size(kLabels) ? kLabels[i] : "";
}

bool op_column_is_text(OpColumn c) { return c == OpColumn::name || c == OpColumn::shapes || c == OpColumn::bound; }

std::optional<double> op_sort_value(const OpRow& r, OpColumn c) {
  // The "(no op)" row has no calls: nothing per call, no CPU side.
  const bool calls = r.calls > 0;
  const double n = calls ? static_cast<double>(r.calls) : 1;
  switch (c) {
    case OpColumn::calls: return calls ? std::optional<double>(n) : std::nullopt;
    case OpColumn::gpu_total: return static_cast<double>(r.gpu_total_ns);
    case OpColumn::gpu_self: return static_cast<double>(r.gpu_self_ns);
    case OpColumn::cpu_total: return calls ? std::optional<double>(static_cast<double>(r.cpu_total_ns)) : std::nullopt;
    case OpColumn::cpu_self: return calls ? std::optional<double>(static_cast<double>(r.cpu_self_ns)) : std::nullopt;
    case OpColumn::kernels_per_call:
      return calls ? std::optional<double>(static_cast<double>(r.kernels_total) / n) : std::nullopt;
    case OpColumn::launch_per_call:
      return calls ? std::optional<double>(static_cast<double>(r.launch_ns) / n) : std::nullopt;
    case OpColumn::tflops: return r.achieved_tflops;
    case OpColumn::tbps: return r.achieved_tbps;
    case OpColumn::roofline: return r.roofline_fraction;
    case OpColumn::name:
    case OpColumn::shapes:
    case OpColumn::bound: break;
  }
  return std::nullopt;
}

std::string op_cell(const OpRow& r, OpColumn c) {
  switch (c) {
    case OpColumn::name: return r.name;
    case OpColumn::shapes: return r.shapes.empty() ? kUnknownCell : r.shapes;
    case OpColumn::bound: return r.bound.empty() ? kUnknownCell : r.bound;
    case OpColumn::gpu_total:
    case OpColumn::gpu_self:
    case OpColumn::cpu_total:
    case OpColumn::cpu_self:
    case OpColumn::launch_per_call: {
      const std::optional<double> v = op_sort_value(r, c);
      return v ? format::duration(static_cast<TimeNs>(*v + 0.5)) : kUnknownCell;
    }
    case OpColumn::calls: return r.calls ? format::count(r.calls) : kUnknownCell;
    case OpColumn::kernels_per_call: return optional_fixed(op_sort_value(r, c), 1);
    case OpColumn::tflops: return optional_fixed(r.achieved_tflops, 1);
    case OpColumn::tbps: return optional_fixed(r.achieved_tbps, 2);
    case OpColumn::roofline: return r.roofline_fraction ? format::percent1(*r.roofline_fraction) : kUnknownCell;
  }
  return kUnknownCell;
}

std::vector<std::uint32_t> op_table_order(std::span<const OpRow> rows, std::string_view filter, OpColumn c,
                                          bool ascending) {
  std::vector<std::uint32_t> order;
  order.reserve(rows.size());
  for (std::uint32_t i = 0; i < rows.size(); ++i)
    if (contains_nocase(rows[i].name, filter) || contains_nocase(rows[i].shapes, filter)) order.push_back(i);
  if (op_column_is_text(c)) {
    // Empty text (not recorded) goes last, as unknown numbers do.
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const std::string_view x = text_value(rows[a], c), y = text_value(rows[b], c);
      if (x.empty() != y.empty()) return y.empty();
      return ascending ? x < y : y < x;
    });
    return order;
  }
  std::vector<std::optional<double>> key(rows.size());
  for (std::uint32_t i : order) key[i] = op_sort_value(rows[i], c);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::optional<double>&x = key[a], &y = key[b];
    if (x.has_value() != y.has_value()) return x.has_value();
    if (!x) return false;
    return ascending ? *x < *y : *x > *y;
  });
  return order;
}

MatchSet op_kernels(const Trace& t, const OpRow& row, bool by_shapes) {
  const RangeTable& rg = t.ranges();
  const KernelTable& k = t.kernels();
  const ApiCallTable& api = t.api_calls();
  std::vector<RowIndex> rows;
  if (row.name == kNoOpRow && row.calls == 0) {
    for (RowIndex i = 0; i < k.size(); ++i) {
      const RowIndex a = k.api[i];
      if (a == kNoRow || api.op_range_at(a) == kNoRow) rows.push_back(i);
    }
    return MatchSet::of_rows(t, TableId::kernels, std::move(rows));
  }
  const StringId name = t.strings().find(row.name);
  if (name == StringTable::kNoString) return {};
  // under[r]: range r is a call of the op or lies inside one. A parent op is
  // on the same track and starts no later, so it has the smaller row: one
  // forward pass settles every range.
  std::vector<std::uint8_t> under(rg.size(), 0);
  for (RowIndex r = 0; r < rg.size(); ++r) {
    const RowIndex p = rg.parent[r];
    if (p != kNoRow && p < r && under[p]) {
      under[r] = 1;
      continue;
    }
    if (rg.name[r] != name || !t.is_op_range(r)) continue;
    if (by_shapes && (t.str(rg.input_dims_at(r)) != row.shapes || t.str(rg.input_types_at(r)) != row.dtypes)) continue;
    under[r] = 1;
  }
  for (RowIndex i = 0; i < k.size(); ++i) {
    const RowIndex a = k.api[i];
    if (a == kNoRow) continue;
    const RowIndex r = api.op_range_at(a);
    if (r != kNoRow && under[r]) rows.push_back(i);
  }
  return MatchSet::of_rows(t, TableId::kernels, std::move(rows));
}

std::vector<OpRowKernel> op_top_kernels(const Trace& t, const MatchSet& kernels, std::size_t top) {
  const KernelTable& k = t.kernels();
  std::unordered_map<StringId, OpRowKernel> by_name;
  for (TrackId track = 0; track < t.tracks().size(); ++track)
    for (RowIndex i : kernels.on_track(TableId::kernels, track)) {
      OpRowKernel& e = by_name[k.name[i]];
      if (e.count++ == 0) {
        e.name = k.name[i];
        e.category = k.category_at(i);
      }
      e.time_ns += k.end[i] - k.start[i];
    }
  std::vector<OpRowKernel> out;
  out.reserve(by_name.size());
  for (auto& [id, e] : by_name) out.push_back(e);
  std::sort(out.begin(), out.end(), [&](const OpRowKernel& a, const OpRowKernel& b) {
    if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
    return t.str(a.name) < t.str(b.name);
  });
  if (out.size() > top) out.resize(top);
  return out;
}

std::string no_ops_message(const Trace& t, const OpSummary& s) {
  const std::string why = t.ranges().size() == 0
                              ? std::string("it has no CPU ranges")
                              : cat("none of its ", format::count(t.ranges().size()),
                                    " ranges is an op (only marks, Python frames or GPU-side annotations)");
  return cat("no framework ops in this trace: ", why, "; ", format::count(s.gpu_ops),
             s.gpu_ops == 1 ? " GPU op has" : " GPU ops have",
             " no launching op. Ops come from PyTorch's profiler (cpu_op events; record_shapes=True "
             "adds shapes, FLOPs and the roofline) or from NVTX ranges around each layer (nvtxRangePush/Pop, "
             "torch.cuda.nvtx.range) captured by gpuscope or Nsight Systems.");
}

}  // namespace gpuscope::viewer
