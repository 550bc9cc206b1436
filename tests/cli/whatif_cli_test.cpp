// `gpuscope whatif` as a user runs it: the JSON schema's fields, the text's
// sections, what it says about a trace without steps or without correlations,
// and bad changes (exit 2, one line naming the file and the change).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/real_traces.h"

namespace {

namespace fs = std::filesystem;

const std::string kBinary = std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope";
// A missing trace fails the test that needs it, naming the file.
std::string workers0() { return gpuscope::testing::real_trace("kineto-resnet50-v100-workers0.json.gz"); }
std::string no_steps() { return gpuscope::testing::real_trace("hta-alexnet.json.gz"); }

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class WhatIfCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-whatif-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  Result run(const std::string& args) {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd = kBinary + " " + args + " >" + out.string() + " 2>" + err.string();
    const int raw = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  // A small synthetic job written to the test's folder.
  std::string synth(const std::string& name, const std::string& flags) {
    const std::string path = (dir_ / name).string();
    EXPECT_EQ(run("synth -o " + path + " --kernels 3000 " + flags).status, 0);
    return path;
  }
  fs::path dir_;
};

TEST_F(WhatIfCli, JsonHasTheSchemaFields) {
  const std::string before = synth("before.gscope", "--padding-share 0.2");
  const Result r = run("whatif " + before + " --remove padding --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "gpuscope.whatif/1");
  EXPECT_EQ(j["scope"], "steps");
  EXPECT_GT(j["measured"]["step_ns"].get<long long>(), 0);
  EXPECT_GT(j["replayed"]["step_ns"].get<long long>(), 0);
  EXPECT_LE(j["replayed"]["error"].get<double>(), 0.02);
  EXPECT_LT(j["predicted"]["step_ns"].get<long long>(), j["measured"]["step_ns"].get<long long>());
  EXPECT_GT(j["predicted"]["speedup"].get<double>(), 1.1);
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["change"], "--remove padding");
  EXPECT_GT(j["changes"][0]["matched"].get<long long>(), 0);
  EXPECT_TRUE(j["critical_path"]["by_kind_ns"].contains("gpu_compute"));
  EXPECT_GT(j["critical_path"]["length_ns"].get<long long>(), 0);
  EXPECT_FALSE(j["critical_path"]["by_category_ns"].contains("padding"));  // removed: not on the path any more
  EXPECT_TRUE(j["replayed_critical_path"]["by_category_ns"].contains("padding"));
  EXPECT_GT(j["graph"]["edges"]["launch"].get<long long>(), 0);
}

TEST_F(WhatIfCli, TextShowsMeasuredReplayedAndPredicted) {
  const std::string before = synth("before.gscope", "--no-overlap");
  const Result r = run("whatif " + before + " --overlap-allreduce --scale convolution=0.5");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* part : {"measured", "replayed", "predicted", "replay error", "speedup",
                           "--overlap-allreduce:", "--scale convolution=0.5:", "Critical path (replayed)",
                           "Critical path (predicted)", "SYNTHETIC"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST_F(WhatIfCli, WritesToAFile) {
  const std::string before = synth("before.gscope", "");
  const fs::path out = dir_ / "whatif.json";
  const Result r = run("whatif " + before + " --cuda-graphs --json -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(nlohmann::json::parse(slurp(out))["schema"], "gpuscope.whatif/1");
  // Never over its input.
  EXPECT_EQ(run("whatif " + before + " -o " + before).status, 2);
}

TEST_F(WhatIfCli, BadChangesExitTwoNamingTheChange) {
  const std::string before = synth("before.gscope", "");
  Result r = run("whatif " + before + " --remove paddding");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("gpuscope: error: " + before + ": --remove paddding: unknown category 'paddding' (valid: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("padding, broadcast"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  r = run("whatif " + before + " --remove /no_such_kernel/");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--remove /no_such_kernel/: matches no op"), std::string::npos) << r.err;
  r = run("whatif " + before + " --remove padding");  // a clean job has no padding
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--remove padding: matches no op"), std::string::npos) << r.err;
  r = run("whatif " + before + " --scale normalization=fast");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--scale normalization=fast"), std::string::npos) << r.err;
  r = run("whatif " + (dir_ / "missing.gscope").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing.gscope"), std::string::npos) << r.err;
}

TEST_F(WhatIfCli, WithoutStepsTheWholeTraceIsPredicted) {
  Result r = run("whatif " + no_steps() + " --scale convolution=0.5");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("no steps: the whole trace is predicted"), std::string::npos) << r.out;
  r = run("whatif " + no_steps() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["scope"], "trace");
  EXPECT_EQ(j["measured"]["step_ns"], j["measured"]["span_ns"]);
}

TEST_F(WhatIfCli, WithoutCorrelationsItSaysStreamOrderOnly) {
  // Two kernels and a launch call, nothing linking them.
  const fs::path trace = dir_ / "uncorrelated.json";
  std::ofstream(trace) << R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"stream": 7, "device": 0}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 40, "dur": 20, "args": {"stream": 7, "device": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {}}
  ]})";
  const Result r = run("whatif " + trace.string() + " --remove /k1/");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("stream-order replay only"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay error"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(run("whatif " + trace.string() + " --json").out);
  EXPECT_TRUE(j["graph"]["stream_order_only"].get<bool>());
}

TEST_F(WhatIfCli, ResNetWithoutInputWait) {
  const Result r = run("whatif " + workers0() + " --no-input-wait --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["step_source"], "profiler_step");
  EXPECT_GT(j["predicted"]["speedup"].get<double>(), 1.3);
  EXPECT_GT(j["changes"][0]["matched_ns"].get<long long>(), 300'000'000);  // ~350 ms of data loading
}

}  // namespace
