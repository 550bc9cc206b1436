// Capture options: --trace lists, capture ranges, environment round trips,
// output name patterns and claiming output files.
#include "capture/options.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

namespace gpuscope::capture {
namespace {

namespace fs = std::filesystem;

TEST(CaptureOptions, TraceListsParseAndPrint) {
  std::string error;
  EXPECT_EQ(parse_trace_list("kernel,memcpy,api,nvtx,sync", &error), kAllTraces);
  EXPECT_EQ(parse_trace_list("kernel", &error), kKernel);
  EXPECT_EQ(parse_trace_list(" api , kernel ", &error), kApi | kKernel);
  EXPECT_EQ(trace_list(kKernel | kNvtx), "kernel,nvtx");
  EXPECT_EQ(parse_trace_list(trace_list(kMemcpy | kSync), &error), kMemcpy | kSync);
  EXPECT_FALSE(parse_trace_list("kernel,gpu", &error));
  EXPECT_NE(error.find("'gpu'"), std::string::npos);
  EXPECT_FALSE(parse_trace_list("kernel,,api", &error));
  EXPECT_FALSE(parse_trace_list("", &error));
}

TEST(CaptureOptions, CaptureRanges) {
  std::string error;
  EXPECT_EQ(parse_capture_range("", &error)->kind, CaptureRange::Kind::whole_run);
  EXPECT_EQ(parse_capture_range("cuda-profiler-api", &error)->kind, CaptureRange::Kind::cuda_profiler_api);
  auto nvtx = parse_capture_range("nvtx:train step", &error);
  ASSERT_TRUE(nvtx);
  EXPECT_EQ(nvtx->kind, CaptureRange::Kind::nvtx);
  EXPECT_EQ(nvtx->nvtx_name, "train step");
  EXPECT_FALSE(parse_capture_range("nvtx:", &error));
  EXPECT_FALSE(parse_capture_range("profiler", &error));
  EXPECT_NE(error.find("cuda-profiler-api"), std::string::npos);
}

TEST(CaptureOptions, ValidateNamesTheProblem) {
  Options o;
  EXPECT_EQ(validate(o), "");
  o.delay_s = -1;
  EXPECT_NE(validate(o).find("delay"), std::string::npos);
  o = Options{};
  o.duration_s = std::nan("");
  EXPECT_NE(validate(o).find("duration"), std::string::npos);
  o = Options{};
  o.trace = 0;
  EXPECT_NE(validate(o), "");
  o = Options{};
  o.buffer_kb = 1;
  EXPECT_NE(validate(o).find("buffer"), std::string::npos);
  o = Options{};
  o.pool_mb = 4;  // one 4 MiB buffer is not a pool
  EXPECT_NE(validate(o).find("pool"), std::string::npos);
  o = Options{};
  o.gpu_metrics = "sm__cycles_active.avg,,dram__bytes.sum";
  EXPECT_NE(validate(o).find("gpu metrics: empty item"), std::string::npos) << validate(o);
  o = Options{};
  o.gpu_metrics_hz = 5;
  EXPECT_NE(validate(o).find("gpu metrics rate"), std::string::npos);
  o.gpu_metrics_hz = 200001;
  EXPECT_NE(validate(o).find("gpu metrics rate"), std::string::npos);
  o.gpu_metrics_hz = 200000;
  EXPECT_EQ(validate(o), "");
}

class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
    for (auto& [k, v] : vars) {
      names_.push_back(k);
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto& [k, v] : vars) {
      names_.push_back(k);
      ::setenv(k, v, 1);
    }
  }
  ~ScopedEnv() {
    for (auto& k : names_) ::unsetenv(k.c_str());
  }

 private:
  std::vector<std::string> names_;
};

TEST(CaptureOptions, EnvironmentRoundTrip) {
  Options o;
  o.output = "/tmp/run-%r-%p.gscope";
  o.trace = kKernel | kApi;
  o.capture_range = "nvtx:step";
  o.delay_s = 1.5;
  o.duration_s = 30;
  o.buffer_kb = 8192;
  o.pool_mb = 128;
  o.flush_ms = 250;
  o.gpu_metrics = "default,pcie__read_bytes.sum";
  o.gpu_metrics_hz = 2000;
  const auto env = to_environment(o);
  ScopedEnv scoped(env);
  std::string warnings;
  const Options back = from_environment(&warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_EQ(back.output, o.output);
  EXPECT_EQ(back.trace, o.trace);
  EXPECT_EQ(back.capture_range, o.capture_range);
  EXPECT_DOUBLE_EQ(back.delay_s, 1.5);
  EXPECT_DOUBLE_EQ(back.duration_s, 30);
  EXPECT_EQ(back.buffer_kb, 8192u);
  EXPECT_EQ(back.pool_mb, 128u);
  EXPECT_EQ(back.flush_ms, 250u);
  EXPECT_EQ(back.gpu_metrics, o.gpu_metrics);
  EXPECT_EQ(back.gpu_metrics_hz, 2000u);
  EXPECT_EQ(to_environment(Options{}).count(kEnvGpuMetrics), 0u);  // defaults are not passed on
}

TEST(CaptureOptions, MalformedEnvironmentIsIgnoredWithAWarning) {
  ScopedEnv scoped{{kEnvTrace, "kernel,bogus"},
                   {kEnvDelay, "soon"},
                   {kEnvBufferKb, "12x"},
                   {kEnvGpuMetrics, "a b"},
                   {kEnvGpuMetricsHz, "fast"}};
  std::string warnings;
  const Options o = from_environment(&warnings);
  EXPECT_EQ(o.trace, kAllTraces);
  EXPECT_EQ(o.delay_s, 0);
  EXPECT_EQ(o.buffer_kb, Options{}.buffer_kb);
  EXPECT_NE(warnings.find(kEnvTrace), std::string::npos);
  EXPECT_NE(warnings.find(kEnvDelay), std::string::npos);
  EXPECT_NE(warnings.find(kEnvBufferKb), std::string::npos);
  EXPECT_EQ(o.gpu_metrics, "default");
  EXPECT_EQ(o.gpu_metrics_hz, 10000u);
  EXPECT_NE(warnings.find(kEnvGpuMetrics), std::string::npos);
  EXPECT_NE(warnings.find(kEnvGpuMetricsHz), std::string::npos);
}

TEST(CaptureOptions, RankComesFromTheLaunchersVariables) {
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ::unsetenv("RANK");
  ::unsetenv("SLURM_PROCID");
  ::unsetenv("PMI_RANK");
  EXPECT_EQ(rank_from_environment(), -1);
  {
    ScopedEnv e{{"SLURM_PROCID", "5"}};
    EXPECT_EQ(rank_from_environment(), 5);
    ScopedEnv f{{"RANK", "3"}};
    EXPECT_EQ(rank_from_environment(), 3);  // torchrun's RANK before SLURM's
    ScopedEnv g{{"OMPI_COMM_WORLD_RANK", "2"}};
    EXPECT_EQ(rank_from_environment(), 2);
  }
  ScopedEnv bad{{"RANK", "two"}};
  EXPECT_EQ(rank_from_environment(), -1);
}

TEST(CaptureOptions, PatternExpansion) {
  EXPECT_EQ(expand_output_pattern("t-%p.gscope", 123, "h", 0, 1), "t-123.gscope");
  EXPECT_EQ(expand_output_pattern("%h/%r/%n-%p", 7, "node1", 3, 2), "node1/3/2-7");
  EXPECT_EQ(expand_output_pattern("rank%r", 7, "h", -1, 1), "rank0");
  EXPECT_EQ(expand_output_pattern("100%%-%x-%", 1, "h", 0, 1), "100%-%x-%");
}

class ClaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-claim-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ClaimTest, CounterTakesTheFirstFreeNumber) {
  std::string error;
  const std::string pattern = (dir_ / "run-%n.gscope").string();
  EXPECT_EQ(claim_output_file(pattern, 1, "", &error), (dir_ / "run-1.gscope").string());
  EXPECT_EQ(claim_output_file(pattern, 2, "", &error), (dir_ / "run-2.gscope").string());
  EXPECT_TRUE(fs::exists(dir_ / "run-2.gscope"));
}

TEST_F(ClaimTest, EarlierRunsAreReplacedSiblingsAreNot) {
  std::string error;
  const std::string name = (dir_ / "out.gscope").string();
  const std::string claims = (dir_ / "claims").string();
  { std::ofstream(name) << "an earlier run"; }
  // First process of this run: the file is from an earlier run, so it is replaced.
  EXPECT_EQ(claim_output_file(name, 100, claims, &error), name);
  EXPECT_EQ(fs::file_size(name), 0u);
  // A second process of the same run must not clobber the first one's file.
  EXPECT_EQ(claim_output_file(name, 200, claims, &error), (dir_ / "out.200.gscope").string());
  // Without a run (in-process use), the name is simply reused.
  EXPECT_EQ(claim_output_file(name, 300, "", &error), name);
}

TEST_F(ClaimTest, ConcurrentClaimsNeverShareAFile) {
  const std::string name = (dir_ / "shared.gscope").string();
  const std::string claims = (dir_ / "claims").string();
  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      std::string error;
      got[i] = claim_output_file(name, 1000 + i, claims, &error);
    });
  for (auto& t : threads) t.join();
  std::set<std::string> unique(got.begin(), got.end());
  EXPECT_EQ(unique.size(), 8u);
  EXPECT_TRUE(unique.count(name));
}

TEST_F(ClaimTest, UnwritableDirectoryIsAClearError) {
  std::string error;
  EXPECT_EQ(claim_output_file((dir_ / "missing" / "x.gscope").string(), 1, "", &error), "");
  EXPECT_NE(error.find("missing"), std::string::npos);
  EXPECT_NE(error.find("output directory"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::capture
