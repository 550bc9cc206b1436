// The bundled sample traces in assets/, which scripts/demo.sh (the README's
// first command) analyses on machines without a GPU: they must keep loading
// with the current reader, say they are synthetic, and keep showing what the
// README and the demo promise — the report's padding and broadcast findings in
// one, none of them in the other, and a diff that says they were resolved.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/run.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using testing::run_gpuscope;
using testing::RunResult;

const std::string kReportJob = std::string(GPUSCOPE_SOURCE_DIR) + "/assets/sample-report-job.gscope";
const std::string kCleanJob = std::string(GPUSCOPE_SOURCE_DIR) + "/assets/sample-clean-job.gscope";

class Samples : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-samples-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  nlohmann::json json_of(const std::vector<std::string>& args) {
    const RunResult r = run_gpuscope(args, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  static std::set<std::string> finding_ids(const nlohmann::json& report) {
    std::set<std::string> ids;
    for (const auto& f : report.at("findings")) ids.insert(f.at("id").get<std::string>());
    return ids;
  }
  fs::path dir_;
};

TEST_F(Samples, TheReportJobShowsThePaddingAndBroadcastOfTheReport) {
  const nlohmann::json r = json_of({"report", "--json", kReportJob});
  EXPECT_EQ(r.at("source"), "synthetic");
  EXPECT_EQ(r.at("devices").size(), 4u);
  const auto ids = finding_ids(r);
  EXPECT_TRUE(ids.count("padding-hotspot"));
  EXPECT_TRUE(ids.count("broadcast-hotspot"));
  for (const auto& c : r.at("categories")) {
    if (c.at("name") == "padding") {
      EXPECT_NEAR(c.at("share").get<double>(), 0.214, 0.002);
    }
    if (c.at("name") == "broadcast") {
      EXPECT_NEAR(c.at("share").get<double>(), 0.200, 0.002);
    }
  }
  for (const auto& d : r.at("devices")) EXPECT_EQ(d.at("kernel_concurrency").get<double>(), 0.0);
}

TEST_F(Samples, TheCleanJobHasNoneOfThem) {
  const nlohmann::json r = json_of({"report", "--json", kCleanJob});
  EXPECT_EQ(r.at("source"), "synthetic");
  const auto ids = finding_ids(r);
  EXPECT_FALSE(ids.count("padding-hotspot"));
  EXPECT_FALSE(ids.count("broadcast-hotspot"));
  EXPECT_FALSE(ids.count("low-concurrency"));
}

TEST_F(Samples, TheDiffSaysTheyWereResolvedAndTheStepGotFaster) {
  const nlohmann::json d = json_of({"diff", "--json", kReportJob, kCleanJob});
  std::set<std::string> resolved;
  for (const auto& f : d.at("findings"))
    if (f.at("change") == "resolved") resolved.insert(f.at("id").get<std::string>());
  EXPECT_TRUE(resolved.count("padding-hotspot"));
  EXPECT_TRUE(resolved.count("broadcast-hotspot"));
  const auto& step = d.at("step_time_ns");
  EXPECT_LT(step.at("after").get<double>(), 0.6 * step.at("before").get<double>()) << step;
}

}  // namespace
}  // namespace gpuscope
