// `gpuscope report` and `gpuscope diff` as a user runs them: exit codes,
// one-line errors naming the file, no partial output files, JSON that parses,
// and the ResNet-50 DataLoader story told end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/real_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope";
// The ResNet-50 traces with 0 and 4 DataLoader workers (a missing one fails the test, naming it).
std::string workers0() { return testing::real_trace("kineto-resnet50-v100-workers0.json.gz"); }
std::string workers4() { return testing::real_trace("kineto-resnet50-v100-workers4.json.gz"); }

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

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kBinary)) << "gpuscope binary not built: " << kBinary;
    dir_ = fs::temp_directory_path() / ("gpuscope-cli-test-" + std::to_string(::getpid()) + "-" +
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
  fs::path dir_;
};

void expect_one_line_error(const Result& r, const std::string& mentions) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_TRUE(r.err.starts_with("gpuscope: error: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
}

// Input-bound leads: findings are ordered by saving, simulated or not. The
// idle gaps the loading leaves are input wait (input-bound's), so no
// gpu-idle-gaps or low-utilization finding reports them again; the pageable
// input copies are one finding (pinning them is also what lets them
// overlap), a minor one: they take 1.2 % of the run, but what pinning is
// measured to save, the GPU's idle while the driver staged them, is 0.8 ms;
// tensor cores are numbered by their share, with no saving (the
// replay of halving the math time gives no shorter median step). Launch-bound
// (the GPU waits for launches 9.3 % of the time) is second: its replay with
// CUDA graphs gains more, because the freed host then loads the input while
// the GPU computes, but that input wait is input-bound's, so its saving is
// capped at the 92.8 ms its own late launches left idle. The per-parameter
// SGD is second: the GPU waited only 5 ms for its launches, but the host's
// 16 ms per step in it lies on the replayed critical path (the next batch's
// loading waits for it). Under 1 % of the run, minor: the blocking copies
// (no GPU idle after them). The exact order.
TEST_F(ReportCli, ReportOfTheInputBoundTraceLeadsWithInputBound) {
  const Result r = run("report " + workers0());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  1. [critical] Highly input-bound"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(run("report --json " + workers0()).out);
  std::vector<std::string> ids, sources, minor;
  for (const auto& f : j["findings"]) {
    ids.push_back(f["id"]);
    sources.push_back(f["saving_source"]);
  }
  for (const auto& f : j["minor_findings"]) minor.push_back(f["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"input-bound", "unfused-optimizer", "launch-bound", "no-tensor-cores"}));
  EXPECT_EQ(sources, (std::vector<std::string>{"simulated", "rule_of_thumb", "simulated", "simulated"}));
  const auto& update = j["findings"][1];
  EXPECT_NE(update["saving_note"].get<std::string>().find("its host time on the replayed critical path"),
            std::string::npos)
      << update.dump();
  const auto& launch = j["findings"][2];
  // The GPU idle its late launches ended (after a sync, the part beyond
  // what the sync held the host is a late launch's too; from the GPU's last
  // op to a blocking call's return, the call's).
  EXPECT_EQ(launch["saving_ns"].get<long long>(), 94'868'000) << launch.dump();
  EXPECT_NE(launch["saving_note"].get<std::string>().find("capped at the GPU idle its late launches ended"),
            std::string::npos);
  EXPECT_EQ(minor, (std::vector<std::string>{"pageable-memcpy", "sync-memcpy"}));
  for (std::size_t i = 1; i < j["findings"].size(); ++i)
    EXPECT_GE(j["findings"][i - 1]["saving_ns"].get<long long>(), j["findings"][i]["saving_ns"].get<long long>());
  EXPECT_EQ(j["findings"].back()["saving_ns"].get<long long>(), 0);
  const auto& copies = j["minor_findings"].back();
  EXPECT_EQ(copies["saving_ns"].get<long long>(), 0);
  EXPECT_NE(copies["title"].get<std::string>().find("HtoD from pageable memory"), std::string::npos);
  EXPECT_NE(r.out.find("num_workers"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << r.err;
  // The usual questions: more workers is the answer for 0 workers, not for 4.
  const auto yes = r.out.find("more data-loader workers?");
  ASSERT_NE(yes, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find_first_not_of(' ', yes + 25), 3), "YES") << r.out;
  const Result w4 = run("report " + workers4());
  const auto no = w4.out.find("more data-loader workers?");
  ASSERT_NE(no, std::string::npos) << w4.out;
  EXPECT_EQ(w4.out.substr(w4.out.find_first_not_of(' ', no + 25), 3), "no ") << w4.out;
}

TEST_F(ReportCli, JsonReportParsesAndHonoursTopAndDevice) {
  const Result r = run("report --json --top 3 --device 0 " + workers0());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "gpuscope.report/1");
  EXPECT_EQ(j["hotspots"].size(), 3u);
  EXPECT_EQ(j["devices"].size(), 1u);
}

// The input-bound finding's saving is the replayed saving of --no-input-wait,
// with its predicted step; the critical path is in the text and the JSON;
// --no-simulation keeps the rule of thumb.
TEST_F(ReportCli, InputBoundSavingIsSimulatedAndThePathIsShown) {
  const Result r = run("report --json " + workers0());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["simulation"]["status"], "simulated");
  EXPECT_LE(j["simulation"]["replay_error"].get<double>(), 0.02);
  const nlohmann::json* input = nullptr;
  for (const auto& f : j["findings"])
    if (f["id"] == "input-bound") input = &f;
  ASSERT_NE(input, nullptr) << r.out;
  EXPECT_EQ((*input)["saving_source"], "simulated");
  EXPECT_EQ((*input)["fix"], "--no-input-wait");
  const double replayed = j["simulation"]["replayed_step_ns"].get<double>();
  const double predicted = (*input)["predicted_step_ns"].get<double>();
  EXPECT_LT(predicted, replayed * 0.8);  // 0 workers: the loading is a big part of each step
  EXPECT_GT(j["critical_path"]["length_ns"].get<double>(), 0);
  EXPECT_GT(j["critical_path"]["input_wait_ns"].get<double>(), 0);
  const Result text = run("report " + workers0());
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("Critical path (what decided the step time"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("simulated saving"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("all of them together?"), std::string::npos) << text.out;
  const Result plain = run("report --json --no-simulation " + workers0());
  ASSERT_EQ(plain.status, 0) << plain.err;
  const nlohmann::json pj = nlohmann::json::parse(plain.out);
  for (const auto& f : pj["findings"]) EXPECT_EQ(f["saving_source"], "rule_of_thumb") << f["id"];
  EXPECT_EQ(pj["simulation"]["status"], "");
}

TEST_F(ReportCli, ErrorsAreOneLineAndNameTheFile) {
  expect_one_line_error(run("report " + (dir_ / "missing.gscope").string()), "missing.gscope");
  {
    std::ofstream(dir_ / "junk.json") << "{\"traceEvents\": [ {\"ph\": \"X\", ";
    expect_one_line_error(run("report " + (dir_ / "junk.json").string()), "junk.json");
  }
  expect_one_line_error(run("report --device 9 " + workers0()), "no GPU 9");
  // Usage errors: exit 2 and say what is wrong (main.cpp formats them).
  for (const char* bad : {"report --top -1 x", "diff onlyone"}) {
    const Result r = run(bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_FALSE(r.err.empty()) << bad;
  }
  std::ofstream(dir_ / "cut.json") << "{\"schema\": \"gpuscope.report/1\", \"devices\": [";
  expect_one_line_error(run("diff " + (dir_ / "cut.json").string() + " " + workers4()), "cut.json");
}

TEST_F(ReportCli, OutputFilesAreWholeOrAbsent) {
  const fs::path out = dir_ / "report.txt";
  ASSERT_EQ(run("report -o " + out.string() + " " + workers4()).status, 0);
  EXPECT_NE(slurp(out).find("gpuscope report"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  const fs::path nowhere = dir_ / "no-such-dir" / "r.txt";
  expect_one_line_error(run("report -o " + nowhere.string() + " " + workers4()), "r.txt");
  EXPECT_FALSE(fs::exists(nowhere));
  // A bad input never leaves a file behind either.
  const fs::path not_written = dir_ / "never.txt";
  EXPECT_EQ(run("report -o " + not_written.string() + " " + (dir_ / "missing.json").string()).status, 2);
  EXPECT_FALSE(fs::exists(not_written));
}

TEST_F(ReportCli, DiffOfZeroAndFourWorkersSaysTheInputBoundIsGone) {
  const Result r = run("diff " + workers0() + " " + workers4());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Resolved input-bound"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Step time"), std::string::npos);
  // The same from a saved report, as JSON.
  const fs::path saved = dir_ / "before.json";
  ASSERT_EQ(run("report --json -o " + saved.string() + " " + workers0()).status, 0);
  const Result j = run("diff --json " + saved.string() + " " + workers4());
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json d = nlohmann::json::parse(j.out);
  EXPECT_EQ(d["schema"], "gpuscope.diff/1");
  bool resolved = false;
  for (const auto& f : d["findings"]) resolved = resolved || (f["id"] == "input-bound" && f["change"] == "resolved");
  EXPECT_TRUE(resolved) << j.out;
}

TEST_F(ReportCli, ADirectoryOfRanksIsOneJob) {
  const fs::path r0 = testing::real_trace("hta-sampled-rank0.json.gz");
  const fs::path r1 = testing::real_trace("hta-sampled-rank1.json.gz");
  const fs::path job = dir_ / "job";
  fs::create_directories(job);
  fs::create_symlink(r0, job / "rank0.json.gz");
  fs::create_symlink(r1, job / "rank1.json.gz");
  const Result r = run("report " + job.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Ranks and GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Clocks: "), std::string::npos);
  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  expect_one_line_error(run("report " + empty.string()), "no trace files");
}

TEST_F(ReportCli, HelpIsTrue) {
  for (const char* cmd : {"report --help", "diff --help"}) {
    const Result r = run(cmd);
    EXPECT_EQ(r.status, 0) << cmd;
    for (const char* flag : {"--json", "--top", "--device", "--output"})
      EXPECT_NE(r.out.find(flag), std::string::npos) << cmd << " " << flag;
  }
}

}  // namespace
}  // namespace gpuscope
