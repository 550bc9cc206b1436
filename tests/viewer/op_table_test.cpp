// The Ops tab's logic (viewer/op_table.h): sorting with unknown values last,
// the filter, the cells as written, and the kernels an op row stands for —
// the latter checked against the analysis' own op table (kernels_total).
#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_traces.h"
#include "viewer/document.h"
#include "viewer/op_table.h"
#include "words/format.h"

namespace gpuscope::viewer {
namespace {

using testing::TraceFactory;

OpRow row(std::string name, TimeNs gpu_total, std::uint64_t calls, std::optional<double> tflops = std::nullopt,
          std::string shapes = "") {
  OpRow r;
  r.name = std::move(name);
  r.shapes = std::move(shapes);
  r.gpu_total_ns = r.gpu_self_ns = gpu_total;
  r.calls = calls;
  r.cpu_total_ns = r.cpu_self_ns = 1000 * static_cast<TimeNs>(calls);
  r.kernels = r.kernels_total = 3 * calls;
  r.launch_ns = 500 * static_cast<TimeNs>(calls);
  r.achieved_tflops = tflops;
  return r;
}

std::vector<std::string> names(const std::vector<OpRow>& rows, const std::vector<std::uint32_t>& order) {
  std::vector<std::string> out;
  for (std::uint32_t i : order) out.push_back(rows[i].name);
  return out;
}

// [SECTION] Order and filter ------------------------------------------------------------------

TEST(OpTable, UnknownValuesSortLastInBothDirections) {
  const std::vector<OpRow> rows = {row("a", 40, 1, 2.0), row("b", 30, 1), row("c", 20, 1, 5.0), row("d", 10, 1, 1.0)};
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::tflops, false)),
            (std::vector<std::string>{"c", "a", "d", "b"}));
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::tflops, true)),
            (std::vector<std::string>{"d", "a", "c", "b"}));
  EXPECT_EQ(op_cell(rows[1], OpColumn::tflops), "–");
  EXPECT_EQ(op_cell(rows[1], OpColumn::roofline), "–");
  EXPECT_EQ(op_cell(rows[1], OpColumn::bound), "–");
  EXPECT_EQ(op_cell(rows[0], OpColumn::tflops), "2.0");
}

TEST(OpTable, NumericColumnsSortByTheirValueTiesInProfileOrder) {
  std::vector<OpRow> rows = {row("x", 40, 1), row("y", 30, 4), row("z", 20, 4), row("w", 10, 2)};
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::calls, false)),
            (std::vector<std::string>{"y", "z", "w", "x"}));
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::calls, true)),
            (std::vector<std::string>{"x", "w", "y", "z"}));
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::gpu_total, true)),
            (std::vector<std::string>{"w", "z", "y", "x"}));
  rows[3].launch_ns = 1'000'000;  // 500 µs per call: the largest launch overhead
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::launch_per_call, false)).front(), "w");
  EXPECT_EQ(op_cell(rows[3], OpColumn::launch_per_call), format::duration(500'000));
  EXPECT_EQ(op_cell(rows[1], OpColumn::kernels_per_call), "3.0");
}

TEST(OpTable, TextColumnsSortByTextEmptyLast) {
  std::vector<OpRow> rows = {row("beta", 1, 1), row("Alpha", 2, 1), row("gamma", 3, 1)};
  rows[0].bound = "memory";
  rows[2].bound = "compute";
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::name, true)),
            (std::vector<std::string>{"Alpha", "beta", "gamma"}));
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::bound, true)),
            (std::vector<std::string>{"gamma", "beta", "Alpha"}));
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::bound, false)),
            (std::vector<std::string>{"beta", "gamma", "Alpha"}));
}

TEST(OpTable, FilterMatchesNameOrShapesIgnoringCase) {
  const std::vector<OpRow> rows = {row("aten::addmm", 4, 1, std::nullopt, "[[8,16],[16,32]]"),
                                   row("aten::conv2d", 3, 1), row("stage1.block0.conv1", 2, 1),
                                   row("aten::mm", 1, 1, std::nullopt, "[[4,4],[4,4]]")};
  EXPECT_EQ(names(rows, op_table_order(rows, "CONV", OpColumn::gpu_total, false)),
            (std::vector<std::string>{"aten::conv2d", "stage1.block0.conv1"}));
  EXPECT_EQ(names(rows, op_table_order(rows, "[16,32]", OpColumn::gpu_total, false)),
            (std::vector<std::string>{"aten::addmm"}));
  EXPECT_TRUE(op_table_order(rows, "nothing like it", OpColumn::gpu_total, false).empty());
  EXPECT_EQ(op_table_order(rows, "", OpColumn::gpu_total, false).size(), rows.size());
}

TEST(OpTable, TheNoOpRowHasNoCpuSide) {
  OpRow none;
  none.name = "(no op)";
  none.gpu_total_ns = none.gpu_self_ns = 2'500'000;
  none.kernels = none.kernels_total = 7;
  for (OpColumn c : {OpColumn::calls, OpColumn::cpu_total, OpColumn::cpu_self, OpColumn::kernels_per_call,
                     OpColumn::launch_per_call, OpColumn::shapes})
    EXPECT_EQ(op_cell(none, c), kUnknownCell) << op_column_label(c);
  EXPECT_EQ(op_cell(none, OpColumn::gpu_total), format::duration(2'500'000));
  const std::vector<OpRow> rows = {none, row("a", 1, 2)};
  EXPECT_EQ(names(rows, op_table_order(rows, "", OpColumn::cpu_total, true)),
            (std::vector<std::string>{"a", "(no op)"}));
}

// [SECTION] The kernels of an op --------------------------------------------------------------

// layer [0, 100 µs] > conv [10, 50 µs] on thread 1; kernels launched inside
// conv (2), inside layer outside conv (1), outside every op (1), and on
// thread 2 inside another "layer" call (1).
Trace nested_ops_trace() {
  TraceFactory f;
  f.device(0);
  f.range("layer", 0, 100'000);
  f.range("conv", 10'000, 50'000);
  f.range("layer", 0, 100'000, 2);
  f.kernel(0, 7, "conv_kernel", 200'000, 210'000, 12'000);
  f.kernel(0, 7, "conv_kernel", 210'000, 230'000, 20'000);
  f.kernel(0, 7, "bias_kernel", 230'000, 235'000, 60'000);
  f.kernel(0, 7, "stray_kernel", 240'000, 245'000, 150'000);
  f.kernel(0, 8, "other_thread_kernel", 250'000, 251'000, 30'000, 5'000, 1000, 2);
  return f.build();
}

TEST(OpKernels, AnOpsKernelsIncludeThoseOfTheOpsInsideIt) {
  const Trace t = nested_ops_trace();
  OpRow layer, conv, none;
  layer.name = "layer";
  layer.calls = 2;
  conv.name = "conv";
  conv.calls = 1;
  none.name = "(no op)";
  EXPECT_EQ(op_kernels(t, layer, false).size(), 4u);
  EXPECT_EQ(op_kernels(t, conv, false).size(), 2u);
  const MatchSet stray = op_kernels(t, none, false);
  ASSERT_EQ(stray.size(), 1u);
  const auto first = stray.next(t, std::nullopt);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(t.str(t.kernels().name[first->row]), "stray_kernel");
  OpRow absent;
  absent.name = "not in this trace";
  absent.calls = 1;
  EXPECT_TRUE(op_kernels(t, absent, false).empty());

  // The side panel's list: by name, most time first.
  const std::vector<OpRowKernel> top = op_top_kernels(t, op_kernels(t, layer, false), 10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(t.str(top[0].name), "conv_kernel");
  EXPECT_EQ(top[0].count, 2u);
  EXPECT_EQ(top[0].time_ns, 30'000);
  EXPECT_EQ(t.str(top[1].name), "bias_kernel");
  EXPECT_EQ(op_top_kernels(t, op_kernels(t, layer, false), 1).size(), 1u);
}

TEST(OpKernels, AgreeWithTheAnalysisOpTable) {
  const Trace t = nested_ops_trace();
  const Profile p = compute_profile(t);
  ASSERT_FALSE(p.op_names.empty());
  for (const OpRow& r : p.op_names) EXPECT_EQ(op_kernels(t, r, false).size(), r.kernels_total) << r.name;
  for (const OpRow& r : p.ops) EXPECT_EQ(op_kernels(t, r, true).size(), r.kernels_total) << r.name;
}

TEST(OpKernels, PerShapesOnlyTheCallsWithThoseShapes) {
  TraceFactory f;
  f.device(0);
  auto op = [&](TimeNs start, const char* dims) {
    f.cpu_op("aten::mm", start, start + 50'000, dims, "[\"float\",\"float\"]");
  };
  op(0, "[[8,8],[8,8]]");
  op(100'000, "[[64,64],[64,64]]");
  op(200'000, "[[64,64],[64,64]]");
  f.kernel(0, 7, "gemm_small", 500'000, 501'000, 10'000);
  f.kernel(0, 7, "gemm_big", 510'000, 530'000, 110'000);
  f.kernel(0, 7, "gemm_big", 530'000, 550'000, 210'000);
  const Trace t = f.build();
  const Profile p = compute_profile(t);
  ASSERT_EQ(p.ops.size(), 2u);
  ASSERT_EQ(p.op_names.size(), 1u);
  EXPECT_EQ(op_kernels(t, p.op_names[0], false).size(), 3u);
  for (const OpRow& r : p.ops) {
    const MatchSet m = op_kernels(t, r, true);
    EXPECT_EQ(m.size(), r.shapes == "[[8,8],[8,8]]" ? 1u : 2u) << r.shapes;
    EXPECT_EQ(m.size(), r.kernels_total);
  }
}

TEST(OpTable, ATraceWithoutOpsSaysWhatWouldGiveThem) {
  TraceFactory f;
  f.device(0);
  f.kernel(0, 7, "k", 100'000, 110'000);
  const Trace t = f.build();
  const Profile p = compute_profile(t);
  EXPECT_TRUE(p.op_names.empty());
  const std::string m = no_ops_message(t, p.op_summary);
  EXPECT_TRUE(m.starts_with("no framework ops in this trace: it has no CPU ranges")) << m;
  EXPECT_NE(m.find("record_shapes=True"), std::string::npos) << m;
  EXPECT_NE(m.find("NVTX"), std::string::npos) << m;
  EXPECT_NE(m.find("1 GPU op has no launching op"), std::string::npos) << m;
}

}  // namespace
}  // namespace gpuscope::viewer
