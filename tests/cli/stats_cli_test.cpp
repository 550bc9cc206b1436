// `gpuscope stats` as a user runs it: the default summaries, one report as
// CSV on standard output, JSON, the steps, and clear errors for reports it
// does not have, OS runtime calls it does not read and GPUs the trace lacks.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using testing::run_gpuscope;
using testing::RunResult;

class Stats : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-stats-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  RunResult stats(std::vector<std::string> args) {
    args.insert(args.begin(), "stats");
    return run_gpuscope(args, dir_);
  }
  static std::string clover() { return testing::real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite"); }
  void expect_error(const RunResult& r, const std::string& what) {
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("gpuscope: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  }
  fs::path dir_;
};

TEST_F(Stats, PrintsTheDefaultSummaries) {
  const RunResult r = stats({clover()});
  ASSERT_EQ(r.status, 0) << r.err;
  // One note: the Nsight Systems tables the reader leaves out, as export says it.
  EXPECT_EQ(r.err.rfind("gpuscope: note: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("import.skipped.table.OSRT_API 1831"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  for (const char* title :
       {"CUDA kernels, by name\n", "CUDA API calls, by name\n", "Memory copies, by kind (time and bytes)\n",
        "Memsets, by memory kind", "Synchronizations (host waits for the GPU)", "NVTX and framework ranges"})
    EXPECT_NE(r.out.find(title), std::string::npos) << title;
  EXPECT_EQ(r.out.find("Steps\n"), std::string::npos) << "steps only when asked";
  EXPECT_NE(r.out.find("  cudaLaunchKernel\n"), std::string::npos);
  EXPECT_NE(r.out.find(" 1,312 "), std::string::npos) << "1312 kernel launches, thousands separated";
}

TEST_F(Stats, OneReportAsCsvOnStandardOutput) {
  const RunResult r = stats({clover(), "--report", "cuda_api_sum", "--format", "csv", "-o", "-"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("share,total_ns,calls,mean_ns,median_ns,min_ns,max_ns,stddev_ns,name\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(",cudaLaunchKernel\n"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  const RunResult file = stats({clover(), "--report", "kernels", "--format", "csv", "-o", "k.csv"});
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_TRUE(file.out.empty()) << file.out;
  EXPECT_GT(fs::file_size(dir_ / "k.csv"), 1000u);
}

TEST_F(Stats, JsonWithEveryReportAndTheSteps) {
  const RunResult r = stats({clover(), "--report", "all", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "gpuscope.stats/1");
  std::vector<std::string> names;
  for (const auto& x : j["reports"]) names.push_back(x["report"]);
  EXPECT_EQ(names, (std::vector<std::string>{"kernels", "api", "memcpy", "memset", "sync", "ranges", "steps"}));
  const auto& steps = j["reports"][6];
  EXPECT_GE(steps["rows"].size(), 2u);
  EXPECT_GT(steps["rows"][0]["duration_ns"].get<long long>(), 0);
}

TEST_F(Stats, ClearErrors) {
  expect_error(stats({clover(), "--report", "kernel"}), "--report: unknown report 'kernel' (one of kernels, api,");
  expect_error(stats({clover(), "--report", "osrt_sum"}), "OS runtime calls are not read");
  expect_error(stats({clover(), "--device", "7"}), "no GPU 7 (GPUs with activity: 0)");
  expect_error(stats({clover(), "--format", "xml"}), "--format");
  expect_error(stats({"missing.gscope"}), "missing.gscope: cannot open");
  expect_error(stats({clover(), "-o", ""}), "-o");
}

}  // namespace
}  // namespace gpuscope
