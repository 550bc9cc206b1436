// `gpuscope check` as a CI job runs it, on traces made by `gpuscope synth`: a
// planted regression fails (exit 1), noise alone passes (exit 0), a new
// critical finding fails with --fail-on new-critical, bad input exits 2; and
// on the real traces of tests/data/traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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
using testing::slurp;

// The traces every test compares, made once: 2 GPUs, 60 steps each.
class Check : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("gpuscope-check-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::vector<std::string> common = {"--kernels", "24000", "--gpus", "2"};
    synth("base.gscope", common, {});
    synth("noise.gscope", common, {"--seed", "2"});
    synth("slow.gscope", common, {"--bn-slowdown", "1.6"});
    synth("padded.gscope", common, {"--padding-share", "0.25"});
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static void synth(const std::string& name, std::vector<std::string> args, const std::vector<std::string>& extra) {
    args.insert(args.begin(), {"synth", "-o", name});
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = run_gpuscope(args, dir_);
    ASSERT_EQ(r.status, 0) << r.err;
  }

  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static RunResult check(std::vector<std::string> args) {
    args.insert(args.begin(), "check");
    return run_gpuscope(args, dir_);
  }
  static nlohmann::json check_json(std::vector<std::string> args, int status) {
    args.push_back("--json");
    const RunResult r = check(args);
    EXPECT_EQ(r.status, status) << r.out << r.err;
    return nlohmann::json::parse(r.out);
  }
  static const nlohmann::json& named(const nlohmann::json& checks, const std::string& name) {
    for (const auto& c : checks)
      if (c["name"] == name) return c;
    ADD_FAILURE() << "no check " << name;
    return checks;
  }
  static void expect_one_line_error(const RunResult& r, const std::string& what) {
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("gpuscope: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(what), std::string::npos) << lines[0];
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  static fs::path dir_;
};

fs::path Check::dir_;

TEST_F(Check, APlantedRegressionFails) {
  const RunResult r = check({"base.gscope", "slow.gscope", "--junit", "report.xml"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(r.out.rfind("gpuscope check: FAILED — 1 of 1 checks failed\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  FAIL  step-time  mean step time "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step-time threshold 5.0%: the larger of the limit (5.0%) and the baseline's step-to-step "
                       "spread ("),
            std::string::npos)
      << r.out;
  const std::string xml = slurp(dir_ / "report.xml");
  EXPECT_NE(xml.find("<testsuites name=\"gpuscope check\" tests=\"1\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"step-time\" time=\"0\">\n      <failure message=\"mean step time "), std::string::npos)
      << xml;
  const nlohmann::json j = check_json({"base.gscope", "slow.gscope"}, 1);
  const auto& step = named(j["checks"], "step-time");
  EXPECT_EQ(step["outcome"], "failed");
  EXPECT_GT(step["value"].get<double>(), 0.05);
  EXPECT_GT(step["value"].get<double>(), j["baseline_step_noise"]["spread"].get<double>());
  // A limit above the slowdown lets it through.
  EXPECT_EQ(check({"base.gscope", "slow.gscope", "--max-step-regression", "50%"}).status, 0);
}

TEST_F(Check, NoiseAlonePassesEvenWithoutALimit) {
  // Another seed: the same job, other timing noise. With a limit of 0% only
  // the baseline's own spread decides; one of the two directions is slower.
  double slower = 0;
  for (const auto& [a, b] : {std::pair{"base.gscope", "noise.gscope"}, std::pair{"noise.gscope", "base.gscope"}}) {
    const nlohmann::json j = check_json({a, b, "--max-step-regression", "0%"}, 0);
    const auto& step = named(j["checks"], "step-time");
    EXPECT_EQ(step["outcome"], "passed") << step["message"];
    const double spread = j["baseline_step_noise"]["spread"];
    EXPECT_GT(spread, 0);
    EXPECT_EQ(j["step_threshold"].get<double>(), spread);
    EXPECT_NE(step["message"].get<std::string>().find("limit 0.0%, baseline step-to-step spread"), std::string::npos)
        << step["message"];
    slower = std::max(slower, step["value"].get<double>());
  }
  EXPECT_GT(slower, 0) << "neither run is slower: the noise was not tested";
  const RunResult r = check({"base.gscope", "noise.gscope"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("gpuscope check: PASSED — every check within its limit\n", 0), 0u) << r.out;
}

TEST_F(Check, ANewCriticalFindingFailsWithFailOnNewCritical) {
  const std::vector<std::string> base = {"base.gscope", "padded.gscope", "--max-step-regression", "off"};
  EXPECT_EQ(check(base).status, 0);  // nothing asked: nothing fails
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--fail-on", "new-critical"});
  const nlohmann::json j = check_json(args, 1);
  const auto& c = named(j["checks"], "new-critical");
  EXPECT_EQ(c["outcome"], "failed");
  EXPECT_EQ(c["findings"], nlohmann::json::array({"padding-hotspot"}));
  EXPECT_NE(c["message"].get<std::string>().find("1 new critical finding: padding-hotspot: "), std::string::npos)
      << c["message"];
  // The same run against itself has nothing new.
  EXPECT_EQ(check({"padded.gscope", "padded.gscope", "--fail-on", "new-critical", "--fail-on", "new-finding"}).status,
            0);
}

TEST_F(Check, ShareIncreaseLimits) {
  const nlohmann::json j = check_json({"base.gscope", "padded.gscope", "--max-step-regression", "off",
                                       "--max-share-increase", "padding=2", "--max-share-increase", "broadcast=0"},
                                      1);
  ASSERT_EQ(j["checks"].size(), 2u);
  const auto& padding = named(j["checks"], "share:padding");
  EXPECT_EQ(padding["outcome"], "failed");
  EXPECT_NEAR(padding["value"].get<double>(), 0.25, 0.01);
  EXPECT_DOUBLE_EQ(padding["threshold"].get<double>(), 0.02);
  EXPECT_EQ(named(j["checks"], "share:broadcast")["outcome"], "passed");
  EXPECT_EQ(
      check({"base.gscope", "padded.gscope", "--max-step-regression", "off", "--max-share-increase", "padding=30%"})
          .status,
      0);
}

TEST_F(Check, BadInputExitsTwo) {
  expect_one_line_error(check({"base.gscope", "missing.gscope"}), "missing.gscope: cannot open");
  {
    std::ofstream(dir_ / "garbage.bin") << "not a trace";
    expect_one_line_error(check({"garbage.bin", "base.gscope"}), "garbage.bin: not a trace file");
  }
  expect_one_line_error(check({"base.gscope", "slow.gscope", "--max-share-increase", "paddin=2"}),
                        "--max-share-increase: unknown category 'paddin' (one of padding, broadcast");
  expect_one_line_error(check({"base.gscope", "slow.gscope", "--max-share-increase", "padding"}),
                        "is not CATEGORY=POINTS");
  expect_one_line_error(check({"base.gscope", "slow.gscope", "--max-step-regression", "five"}),
                        "--max-step-regression: 'five' is not a percentage");
  expect_one_line_error(check({"base.gscope", "slow.gscope", "--max-step-regression=-5%"}), "is not a percentage");
  expect_one_line_error(check({"base.gscope", "slow.gscope", "--fail-on", "new-warning"}), "--fail-on");
  // An output that is an input is refused, and the input is untouched.
  const std::string before = slurp(dir_ / "slow.gscope");
  expect_one_line_error(check({"base.gscope", "slow.gscope", "--junit", "slow.gscope"}),
                        "slow.gscope: is also an input of this command; refusing to overwrite it");
  EXPECT_EQ(slurp(dir_ / "slow.gscope"), before);
}

TEST_F(Check, StepsMissingAreAnErrorOnlyWhenTheStepLimitWasAskedFor) {
  std::ofstream(dir_ / "one-kernel.json")
      << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 5,)"
      << R"( "args": {"device": 0, "stream": 7}}]})";
  const RunResult skipped = check({"one-kernel.json", "one-kernel.json"});
  EXPECT_EQ(skipped.status, 0) << skipped.out << skipped.err;
  EXPECT_NE(skipped.out.find("  skip  step-time  no steps in either run"), std::string::npos) << skipped.out;
  expect_one_line_error(check({"one-kernel.json", "base.gscope", "--max-step-regression", "5%"}),
                        "one-kernel.json: --max-step-regression needs steps in both runs: no steps in the baseline");
}

TEST_F(Check, ASavedReportIsABaseline) {
  const RunResult saved = run_gpuscope({"report", "--json", "base.gscope", "-o", "base-report.json"}, dir_);
  ASSERT_EQ(saved.status, 0) << saved.err;
  const nlohmann::json from_report = check_json({"base-report.json", "slow.gscope"}, 1);
  const nlohmann::json from_trace = check_json({"base.gscope", "slow.gscope"}, 1);
  EXPECT_EQ(from_report["checks"][0]["value"], from_trace["checks"][0]["value"]);
  EXPECT_EQ(from_report["baseline_step_noise"], from_trace["baseline_step_noise"]);
}

// The real ResNet-50 runs: with 4 data loader workers (baseline) and without
// (candidate) the job is input-bound, its steps 26% longer. The baseline's own
// steps spread 18%, which raises the threshold above the 5% limit; the slowdown
// still exceeds it.
TEST_F(Check, RealTracesLosingTheDataLoaderWorkersFails) {
  const std::string workers4 = testing::real_trace("kineto-resnet50-v100-workers4.json.gz");
  const std::string workers0 = testing::real_trace("kineto-resnet50-v100-workers0.json.gz");
  const nlohmann::json j = check_json({workers4, workers0, "--fail-on", "new-critical"}, 1);
  const auto& step = named(j["checks"], "step-time");
  EXPECT_EQ(step["outcome"], "failed") << step["message"];
  EXPECT_NEAR(step["value"].get<double>(), 0.259, 0.005);
  EXPECT_NEAR(j["step_threshold"].get<double>(), 0.180, 0.005);
  EXPECT_EQ(j["step_threshold"], j["baseline_step_noise"]["spread"]);
  const auto& critical = named(j["checks"], "new-critical");
  EXPECT_EQ(critical["outcome"], "failed");
  EXPECT_NE(std::find(critical["findings"].begin(), critical["findings"].end(), "input-bound"),
            critical["findings"].end())
      << critical["findings"];
  // The other way round the job got faster: within the limit.
  EXPECT_EQ(check({workers0, workers4, "--fail-on", "new-critical"}).status, 0);
}

TEST_F(Check, ARealNsysExportAgainstItselfPassesEveryCheck) {
  const std::string nsys = testing::real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite");
  const nlohmann::json j = check_json({nsys, nsys, "--max-share-increase", "gemm=0", "--fail-on", "new-finding"}, 0);
  ASSERT_EQ(j["checks"].size(), 3u);
  for (const auto& c : j["checks"]) EXPECT_EQ(c["outcome"], "passed") << c["message"];
  EXPECT_EQ(named(j["checks"], "step-time")["value"].get<double>(), 0.0);
  EXPECT_GE(j["baseline_step_noise"]["steps"].get<int>(), 2);
}

}  // namespace
}  // namespace gpuscope
