// Golden round trips on the real profiler traces in ../shared/traces: each is
// imported (Chrome/Kineto JSON), written as .gscope, read back, and must be
// identical — real names, real timestamps, real id distributions.
#include <gtest/gtest.h>

#include <filesystem>

#include "import/chrome_json.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "store/trace_equal.h"

namespace gpuscope {
namespace {

TEST(GscopeGolden, RealTracesRoundTrip) {
  const std::filesystem::path dir = GPUSCOPE_TRACES_DIR;
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is missing";
  testing::TempDir tmp;
  int traces = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".json.gz")) continue;  // the traces (hta-reference.json holds numbers, not a trace)
    SCOPED_TRACE(name);
    const Trace t = import_chrome_json(e.path().string());
    const std::string out = tmp.file(name + ".gscope");
    write_gscope(t, out);
    GscopeReadReport rep;
    const Trace back = read_gscope(out, &rep);
    EXPECT_TRUE(rep.complete);
    testing::expect_traces_equal(t, back);
    // Much smaller than the compressed JSON it came from.
    EXPECT_LT(std::filesystem::file_size(out), std::filesystem::file_size(e.path()));
    ++traces;
  }
  EXPECT_GE(traces, 5);
}

}  // namespace
}  // namespace gpuscope
