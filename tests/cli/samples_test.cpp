// The bundled sample traces in assets/, which scripts/demo.sh (the README's
// first command) analyses on machines without a GPU: they must keep loading
// with the current reader, say they are synthetic, reproduce the report's
// numbers (utilization ~35% over the run and ~50% inside the steps, 21.4%
// padding, 20% broadcast, no kernel concurrency) with its causes, answer its
// four questions, and the tuned one must show all of it resolved. They must
// also be what `gpuscope synth` makes now (assets/README.md).
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
const std::string kTunedJob = std::string(GPUSCOPE_SOURCE_DIR) + "/assets/sample-clean-job.gscope";

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
  static std::set<std::string> ids(const nlohmann::json& findings) {
    std::set<std::string> out;
    for (const auto& f : findings) out.insert(f.at("id").get<std::string>());
    return out;
  }
  static double share(const nlohmann::json& report, const std::string& category) {
    for (const auto& c : report.at("categories"))
      if (c.at("name") == category) return c.at("share").get<double>();
    return 0;
  }
  static nlohmann::json answer(const nlohmann::json& report, const std::string& id) {
    for (const auto& a : report.at("helps"))
      if (a.at("id") == id) return a;
    ADD_FAILURE() << "no answer " << id;
    return nlohmann::json::object();
  }
  static bool contains(const nlohmann::json& list, const std::string& what) {
    for (const auto& x : list)
      if (x == what) return true;
    return false;
  }
  fs::path dir_;
};

// The report's four numbers, and the causes it names.
TEST_F(Samples, TheReportJobHasTheReportsNumbers) {
  const nlohmann::json r = json_of({"report", "--json", kReportJob});
  EXPECT_EQ(r.at("source"), "synthetic");
  ASSERT_EQ(r.at("devices").size(), 4u);
  for (const auto& d : r.at("devices")) {
    EXPECT_NEAR(d.at("utilization").get<double>(), 0.35, 0.03) << d.at("id");  // over the run
    EXPECT_EQ(d.at("kernel_concurrency").get<double>(), 0.0) << d.at("id");
  }
  EXPECT_NEAR(share(r, "padding"), 0.214, 0.01);
  EXPECT_NEAR(share(r, "broadcast"), 0.20, 0.01);
  // Inside the steps (the framework's view) the GPUs are busy about half the time.
  const nlohmann::json& s = r.at("step_summary");
  EXPECT_EQ(s.at("source"), "nvtx");
  EXPECT_EQ(s.at("count"), 80);
  const double busy_in_steps = 1.0 - s.at("idle_ns").get<double>() / s.at("total_ns").get<double>();
  EXPECT_NEAR(busy_in_steps, 0.50, 0.05);
  // The causes: Python between steps (idle gaps ended by late launches), the
  // input prepared in the step and copied from pageable memory, blocking, the
  // weight update running alone, the padding and broadcast kernels.
  const auto numbered = ids(r.at("findings"));
  for (const char* id :
       {"gpu-idle-gaps", "input-bound", "serialized-weight-update", "padding-hotspot", "broadcast-hotspot"})
    EXPECT_TRUE(numbered.count(id)) << id;
  for (const auto& f : r.at("findings"))
    if (f.at("id") == "gpu-idle-gaps") {
      EXPECT_NE(f.at("title").get<std::string>().find("mostly ended by late host launches"), std::string::npos) << f;
    }
  auto all = ids(r.at("minor_findings"));
  all.insert(numbered.begin(), numbered.end());
  EXPECT_TRUE(all.count("pageable-memcpy"));
  EXPECT_TRUE(all.count("sync-memcpy"));
  EXPECT_FALSE(all.count("low-concurrency"));
}

// The user's own questions: more streams (no: the GPUs wait for the host),
// overlapping the weight update with the next forward (yes), more input
// workers (yes), a different data layout (yes: padding + broadcast), each
// with the number that says so and, for a yes, the replay's faster step.
TEST_F(Samples, TheReportJobAnswersTheReportsFourQuestions) {
  const nlohmann::json r = json_of({"report", "--json", kReportJob});
  const double now = r.at("simulation").at("replayed_step_ns").get<double>();
  ASSERT_GT(now, 0);

  const nlohmann::json streams = answer(r, "more-streams");
  EXPECT_EQ(streams.at("verdict"), "no");
  const std::string why = streams.at("reason");
  EXPECT_NE(why.find("waits for the host or for dependencies"), std::string::npos) << why;
  EXPECT_NE(why.find("(for the host 98%)"), std::string::npos) << why;
  EXPECT_NE(why.find("nothing is ready to run beside them"), std::string::npos) << why;

  const nlohmann::json layout = answer(r, "data-layout");
  EXPECT_EQ(layout.at("verdict"), "yes");
  EXPECT_NE(layout.at("reason").get<std::string>().find("(padding 21.4%, broadcast 20.0%)"), std::string::npos)
      << layout;
  EXPECT_TRUE(contains(layout.at("findings"), "padding-hotspot"));
  EXPECT_TRUE(contains(layout.at("findings"), "broadcast-hotspot"));

  for (const auto& [id, finding] :
       {std::pair{"overlap-weight-update", "serialized-weight-update"}, std::pair{"input-workers", "input-bound"}}) {
    const nlohmann::json a = answer(r, id);
    EXPECT_EQ(a.at("verdict"), "yes") << a;
    EXPECT_TRUE(contains(a.at("findings"), finding)) << a;
    const double predicted = a.at("predicted_step_ns").get<double>();
    EXPECT_GT(predicted, 0) << a;
    EXPECT_LT(predicted, now) << a;
  }
}

TEST_F(Samples, TheTunedJobHasNoneOfThem) {
  const nlohmann::json r = json_of({"report", "--json", kTunedJob});
  EXPECT_EQ(r.at("source"), "synthetic");
  EXPECT_TRUE(r.at("findings").empty()) << r.at("findings");
  for (const auto& d : r.at("devices")) EXPECT_GT(d.at("utilization").get<double>(), 0.9);
  EXPECT_EQ(share(r, "padding"), 0.0);
  EXPECT_EQ(share(r, "broadcast"), 0.0);
  for (const char* id : {"more-streams", "data-layout", "overlap-weight-update", "input-workers"})
    EXPECT_EQ(answer(r, id).at("verdict"), "no") << id;
}

TEST_F(Samples, TheDiffSaysTheyWereResolvedAndTheStepGotFaster) {
  const nlohmann::json d = json_of({"diff", "--json", kReportJob, kTunedJob});
  std::set<std::string> resolved, other;
  for (const auto& f : d.at("findings"))
    (f.at("change") == "resolved" ? resolved : other).insert(f.at("id").get<std::string>());
  EXPECT_EQ(resolved, (std::set<std::string>{"gpu-idle-gaps", "input-bound", "padding-hotspot", "broadcast-hotspot",
                                             "serialized-weight-update"}));
  EXPECT_TRUE(other.empty()) << d.at("findings");
  const auto& step = d.at("step_time_ns");
  EXPECT_LT(step.at("after").get<double>(), 0.6 * step.at("before").get<double>()) << step;
}

// assets/README.md says how each sample was made: the same command now makes
// the same trace (regenerate them when the generator changes).
TEST_F(Samples, AreWhatTheGeneratorMakesNow) {
  for (const auto& [asset, args] :
       {std::pair{kReportJob, std::vector<std::string>{"--preset", "report", "--gpus", "4", "--kernels", "45840"}},
        std::pair{kTunedJob, std::vector<std::string>{"--preset", "tuned", "--gpus", "4", "--kernels", "15600"}}}) {
    std::vector<std::string> synth{"synth", "-o", "fresh.gscope"};
    synth.insert(synth.end(), args.begin(), args.end());
    ASSERT_EQ(run_gpuscope(synth, dir_).status, 0);
    const nlohmann::json made = json_of({"report", "--json", "--no-simulation", "fresh.gscope"});
    const nlohmann::json bundled = json_of({"report", "--json", "--no-simulation", asset});
    for (const char* key : {"kernel_time_ns", "categories", "step_summary", "hotspots"})
      EXPECT_EQ(made.at(key), bundled.at(key)) << asset << ": " << key << " differs; regenerate it (assets/README.md)";
    fs::remove(dir_ / "fresh.gscope");
  }
}

}  // namespace
}  // namespace gpuscope
