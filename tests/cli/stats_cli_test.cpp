// `gpuscope stats` as a user runs it: the default summaries, one report as
// CSV on standard output, JSON, the steps, OS runtime calls (nsys' osrt_sum)
// and why a trace has none, and clear errors for reports it does not have and
// GPUs the trace lacks.
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
  EXPECT_NE(r.err.find("import.skipped.table.SCHED_EVENTS 1254"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("OSRT_API"), std::string::npos) << r.err;  // OS runtime calls are read
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  for (const char* title :
       {"CUDA kernels, by name\n", "CUDA API calls, by name\n", "Memory copies, by kind (time and bytes)\n",
        "Memsets, by memory kind", "Synchronizations (host waits for the GPU)", "NVTX and framework ranges",
        "OS runtime calls, by function\n"})
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
  EXPECT_EQ(names, (std::vector<std::string>{"kernels", "api", "memcpy", "memset", "sync", "ranges", "osrt", "steps"}));
  const auto& steps = j["reports"][7];
  EXPECT_GE(steps["rows"].size(), 2u);
  EXPECT_GT(steps["rows"][0]["duration_ns"].get<long long>(), 0);
}

TEST_F(Stats, ClearErrors) {
  expect_error(stats({clover(), "--report", "kernel"}), "--report: unknown report 'kernel' (one of kernels, api,");
  expect_error(stats({clover(), "--device", "7"}), "no GPU 7 (GPUs with activity: 0)");
  expect_error(stats({clover(), "--format", "xml"}), "--format");
  expect_error(stats({"missing.gscope"}), "missing.gscope: cannot open");
  expect_error(stats({clover(), "-o", ""}), "-o");
}

// nsys' osrt_sum by either name, as CSV with nsys' columns; a trace without
// OS runtime calls says why rather than printing an empty table.
TEST_F(Stats, OsRuntimeCallsAsNsysOsrtSum) {
  const RunResult r = stats({clover(), "--report", "osrt_sum", "--format", "csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("share,total_ns,calls,mean_ns,median_ns,min_ns,max_ns,stddev_ns,name\n", 0), 0u) << r.out;
  // SELECT sum(end - start), count(*) FROM OSRT_API WHERE eventClass = 27 AND nameId = (SELECT id FROM StringIds
  // WHERE value = 'poll') -> 500924932, 18: the largest total, first.
  const std::size_t first = r.out.find('\n') + 1;
  const std::string row = r.out.substr(first, r.out.find('\n', first) - first);
  EXPECT_NE(row.find(",500924932,18,"), std::string::npos) << row;
  EXPECT_EQ(row.substr(row.size() - 5), ",poll") << row;
  const RunResult text = stats({clover(), "--report", "osrt"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("OS runtime calls, by function\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" 1,253 "), std::string::npos) << "ioctl's calls";

  const RunResult empty =
      stats({testing::real_trace("nsys/nsys2022-saxpy-mpi-openacc.sqlite"), "--report", "osrt", "--format", "json"});
  ASSERT_EQ(empty.status, 0) << empty.err;
  const auto j = nlohmann::json::parse(empty.out);
  EXPECT_TRUE(j["reports"][0]["rows"].empty());
  EXPECT_EQ(j["reports"][0]["note"], "no OS runtime calls recorded: the export's OSRT_API table holds no calls");
  const RunResult kineto = stats({testing::real_trace("kineto-resnet50-v100-workers0.json.gz"), "--report", "osrt"});
  ASSERT_EQ(kineto.status, 0) << kineto.err;
  EXPECT_NE(kineto.out.find("(no OS runtime calls: Chrome/Kineto JSON traces do not record them"), std::string::npos)
      << kineto.out;
}

// `gpuscope import` counts the OS runtime calls as imported (and the OSRT_API
// table no longer as skipped), and the saved .gscope gives the same osrt_sum.
TEST_F(Stats, ImportedOsCallsAreCountedAndSaved) {
  const RunResult imported = run_gpuscope({"import", clover(), "-o", (dir_ / "clover.gscope").string()}, dir_);
  ASSERT_EQ(imported.status, 0) << imported.err;
  const std::string said = imported.out + imported.err;
  EXPECT_NE(said.find("1828 OS runtime calls"), std::string::npos) << said;
  EXPECT_NE(said.find("skipped osrt_start_marks: 1"), std::string::npos) << said;
  EXPECT_EQ(said.find("OSRT_API"), std::string::npos) << said;
  const RunResult from_sqlite = stats({clover(), "--report", "osrt", "--format", "csv"});
  const RunResult from_gscope = stats({(dir_ / "clover.gscope").string(), "--report", "osrt", "--format", "csv"});
  ASSERT_EQ(from_gscope.status, 0) << from_gscope.err;
  EXPECT_EQ(from_gscope.out, from_sqlite.out);
}

}  // namespace
}  // namespace gpuscope
