// Golden round trips on the real profiler traces in tests/data/traces: each is
// imported (Chrome/Kineto JSON), written as .gscope, read back, and must be
// identical — real names, real timestamps, real id distributions.
#include <gtest/gtest.h>

#include <filesystem>

#include "import/chrome_json.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "store/trace_equal.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

class GscopeGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GscopeGolden, RealTraceRoundTrips) {
  const std::string in = testing::real_trace(GetParam());
  const Trace t = import_chrome_json(in);
  testing::TempDir tmp;
  const std::string out = tmp.file(GetParam() + ".gscope");
  write_gscope(t, out);
  GscopeReadReport rep;
  const Trace back = read_gscope(out, &rep);
  EXPECT_TRUE(rep.complete);
  testing::expect_traces_equal(t, back);
  // Much smaller than the compressed JSON it came from.
  EXPECT_LT(std::filesystem::file_size(out), std::filesystem::file_size(in));
}

INSTANTIATE_TEST_SUITE_P(RealTraces, GscopeGolden, ::testing::ValuesIn(testing::real_trace_files()),
                         testing::TraceFileName());

}  // namespace
}  // namespace gpuscope
