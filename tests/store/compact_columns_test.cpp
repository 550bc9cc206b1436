// Compact columns through the file: a loaded trace keeps no per-row track
// column and the callback ids per call name where they are a function of it;
// files keep every row's value; memory after load per kernel of the
// synthetic trace (docs/PERFORMANCE.md, "Store").
#include <gtest/gtest.h>

#include "import/open_trace.h"
#include "import/synthetic.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "store/trace_equal.h"
#include "support/api_call_row.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

// Memory after load of a synthetic trace (the 10M-kernel figure's trace, at
// 200,000 kernels): 101.7 B/kernel with a track column per kernel and per
// call and a callback id per call; 89.7 without.
TEST(CompactColumns, SyntheticTraceLoadsInAtMost90BytesPerKernel) {
  SyntheticOptions o;
  o.kernels = 200'000;
  testing::TempDir tmp;
  const std::string path = tmp.file("synth.gscope");
  write_gscope(make_synthetic_trace(o), path);
  const Trace t = read_gscope(path);
  ASSERT_EQ(t.kernels().size(), o.kernels);
  EXPECT_TRUE(t.kernels().track.compacted());
  EXPECT_TRUE(t.api_calls().track.compacted());
  EXPECT_TRUE(t.api_calls().cbid.compacted());
  const double per_kernel = static_cast<double>(t.memory_bytes()) / static_cast<double>(t.kernels().size());
  EXPECT_LE(per_kernel, 90.0);
}

ApiCallRow call(TrackId track, TimeNs start, StringId name, std::uint32_t cbid) {
  return testing::api_call_row(track, start, name, cbid);
}

// Callback ids round-trip in both forms: per name, and per row where one
// name has two ids (a Chrome trace that gave some calls none).
TEST(CompactColumns, CallbackIdsRoundTripWhetherOrNotAFunctionOfTheName) {
  for (const bool function_of_name : {true, false}) {
    TraceBuilder b;
    const TrackId c = b.cpu_track(1, 1);
    const StringId launch = b.intern("cudaLaunchKernel"), sync = b.intern("cudaStreamSynchronize");
    for (TimeNs i = 0; i < 1000; ++i) {
      b.add_api_call(call(c, 2 * i, launch, !function_of_name && i % 7 == 3 ? 0 : 211));
      b.add_api_call(call(c, 2 * i + 1, sync, 131));
    }
    const Trace t = b.freeze();
    EXPECT_EQ(t.api_calls().cbid.compacted(), function_of_name);
    testing::TempDir tmp;
    const std::string path = tmp.file("calls.gscope");
    write_gscope(t, path, GscopeWriteOptions{.rows_per_chunk = 300});
    const Trace back = read_gscope(path);
    testing::expect_traces_equal(t, back);
    EXPECT_EQ(back.api_calls().cbid.compacted(), function_of_name);
    for (std::size_t i = 0; i < back.api_calls().size(); ++i) {
      const bool is_launch = back.api_calls().name[i] == launch;
      const std::uint32_t want = !is_launch ? 131 : (!function_of_name && (i / 2) % 7 == 3 ? 0 : 211);
      ASSERT_EQ(back.api_calls().cbid_at(i), want) << "call " << i << (function_of_name ? "" : ", per row");
    }
  }
}

// On every real trace: each table's rows on a track name that track, and
// the rows a builder gets from the loaded trace (compact columns expanded)
// are those the file holds.
class CompactColumnsReal : public ::testing::TestWithParam<std::string> {};

TEST_P(CompactColumnsReal, TrackOfEachRowIsItsTracksIndex) {
  const Trace t = open_trace(testing::real_trace(GetParam()));
  t.tables().for_each_table([&](TableId id, const auto& table) {
    if constexpr (requires { table.track; }) {
      EXPECT_TRUE(table.size() == 0 || table.track.compacted()) << to_string(id);
      std::size_t seen = 0;
      for (TrackId track = 0; track < t.tracks().size(); ++track) {
        const RowRange r = t.rows_of(id, track);
        seen += r.size();
        for (RowIndex i = r.begin; i < r.end; ++i) ASSERT_EQ(table.track_at(i), track) << to_string(id) << " row " << i;
      }
      EXPECT_EQ(seen, table.size()) << to_string(id);
    }
  });
  testing::TempDir tmp;
  const std::string path = tmp.file("real.gscope");
  write_gscope(t, path);
  testing::expect_traces_equal(t, read_gscope(path));
}

INSTANTIATE_TEST_SUITE_P(RealTraces, CompactColumnsReal, ::testing::ValuesIn(testing::real_trace_files()),
                         testing::TraceFileName());

}  // namespace
}  // namespace gpuscope
