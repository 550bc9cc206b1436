// The framework-op table of the viewer, apart from drawing it: which rows
// (per op name, or per name × recorded shapes), which of them a filter keeps,
// their order under a column's sort, each cell as written, and the kernels
// an op row stands for. The Ops tab (view_ops.cpp) draws what this computes;
// the order is computed when the sort, the filter or the mode changes, never
// per frame.
//
// Unknown figures (no shapes recorded, no cost formula, no peaks, the "(no
// op)" row's CPU side) are null in the Profile: they are written "–", never
// 0, and sort after every known value in both directions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/profile.h"
#include "viewer/match_set.h"

namespace gpuscope::viewer {

enum class OpColumn : std::uint8_t {
  name,
  shapes,
  calls,
  gpu_total,
  gpu_self,
  cpu_total,
  cpu_self,
  kernels_per_call,
  launch_per_call,
  tflops,
  tbps,
  roofline,
  bound,
};
inline constexpr int kOpColumnCount = 13;

// The header of a column ("GPU total", "kernels/call", …).
const char* op_column_label(OpColumn c);
// Text columns sort by text (name, shapes, bound); the others by number.
bool op_column_is_text(OpColumn c);
// A numeric column's value for a row; null when unknown (and for text columns).
std::optional<double> op_sort_value(const OpRow& row, OpColumn c);
// The cell as drawn: the report's formatter for the number, "–" when unknown.
std::string op_cell(const OpRow& row, OpColumn c);
inline constexpr const char* kUnknownCell = "–";

// Rows whose name or shapes contain `filter` (case-insensitive; empty keeps
// all), ordered by column `c` (ascending or not), unknown values last, ties in
// the Profile's order (most GPU time first). Indices into `rows`.
std::vector<std::uint32_t> op_table_order(std::span<const OpRow> rows, std::string_view filter, OpColumn c,
                                          bool ascending);

// The kernels of an op row: launched by a call of the op (by_shapes: a call
// with the row's recorded shapes and types) or by an op inside one, on every
// thread; "(no op)": the kernels launched outside every op. One pass over the
// ranges and one over the kernels.
MatchSet op_kernels(const Trace& trace, const OpRow& row, bool by_shapes);

// A kernel under an op row, from its matched kernels.
struct OpRowKernel {
  StringId name = 0;
  KernelCategory category = KernelCategory::other;
  std::uint64_t count = 0;
  TimeNs time_ns = 0;
};
// Kernels of `kernels` (an op_kernels() set) by name, most time first, at most `top`.
std::vector<OpRowKernel> op_top_kernels(const Trace& trace, const MatchSet& kernels, std::size_t top);

// What the Ops tab says when the analysis found no framework ops, and what
// would give them.
std::string no_ops_message(const Trace& trace, const OpSummary& s);

}  // namespace gpuscope::viewer
