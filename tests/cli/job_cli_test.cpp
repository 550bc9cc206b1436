// `gpuscope synth --ranks` and `gpuscope report` on a job of many files: the
// same bytes whatever -j, the slow rank named, files that disagree named.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope";

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

class JobCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kBinary)) << "gpuscope binary not built: " << kBinary;
    dir_ = fs::temp_directory_path() / ("gpuscope-job-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
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
  // A synthetic job of `ranks` files in dir_/name.
  fs::path synth_job(const std::string& name, int ranks, int slow, int seed) {
    const fs::path job = dir_ / name;
    const Result r =
        run("synth --ranks " + std::to_string(ranks) + " --kernels 1000 --slow-rank " + std::to_string(slow) +
            " --slowdown 1.2 --seed " + std::to_string(seed) + " -o " + job.string());
    EXPECT_EQ(r.status, 0) << r.err;
    return job;
  }
  fs::path dir_;
};

TEST_F(JobCli, SynthWritesOneFilePerRankOnItsOwnClock) {
  const fs::path job = synth_job("job", 6, 2, 3);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(job)) files += e.path().extension() == ".gscope";
  EXPECT_EQ(files, 6u);
  const Result info = run("info " + (job / "rank-00004.gscope").string());
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("rank         4 of 6"), std::string::npos) << info.out;
  // A folder that holds files already is refused.
  const Result again = run("synth --ranks 6 --kernels 1000 -o " + job.string());
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("not empty"), std::string::npos) << again.err;
  EXPECT_EQ(run("synth --slow-rank 1 --kernels 100 -o " + (dir_ / "x.gscope").string()).status, 2);
  // The hardware series are for a single trace: with --ranks, an error naming the flag.
  const Result hw = run("synth --ranks 2 --kernels 1000 --hw -o " + (dir_ / "hw").string());
  EXPECT_EQ(hw.status, 2);
  EXPECT_NE(hw.err.find("--hw is for a single trace"), std::string::npos) << hw.err;
  const Result tc = run("synth --kernels 100 --tensor-cores -o " + (dir_ / "tc.gscope").string());
  EXPECT_EQ(tc.status, 2);
  EXPECT_NE(tc.err.find("--tensor-cores needs --hw"), std::string::npos) << tc.err;
  // A single trace with them: its hardware series, shown by info.
  const fs::path one = dir_ / "hw.gscope";
  const Result made = run("synth --kernels 2000 --gpus 1 --hw --tensor-cores --throttle-share 0.5 -o " + one.string());
  ASSERT_EQ(made.status, 0) << made.err;
  const Result shown = run("info " + one.string());
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find("synthetic.throttle_share"), std::string::npos) << shown.out;
  const Result report = run("report " + one.string());
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("clocks-throttled"), std::string::npos) << report.out;
}

TEST_F(JobCli, ReportIsTheSameWhateverJobsAndNamesTheSlowRank) {
  const fs::path job = synth_job("job", 7, 5, 11);
  const Result one = run("report --json -j 1 " + job.string());
  ASSERT_EQ(one.status, 0) << one.err;
  for (const char* j : {"2", "3", "8"}) {
    const Result other = run(std::string("report --json -j ") + j + " " + job.string());
    ASSERT_EQ(other.status, 0) << other.err;
    EXPECT_TRUE(other.out == one.out) << "-j " << j << " gives other bytes than -j 1";
  }
  const Result text1 = run("report -j 1 " + job.string()), text2 = run("report -j 2 " + job.string());
  EXPECT_EQ(text1.out, text2.out);
  EXPECT_NE(text1.out.find("Stragglers ("), std::string::npos) << text1.out;
  const nlohmann::json j = nlohmann::json::parse(one.out);
  ASSERT_TRUE(j.contains("stragglers"));
  EXPECT_EQ(j["stragglers"][0]["rank"], 5);
  EXPECT_EQ(j["ranks"].size(), 7u);
  EXPECT_FALSE(j["collectives"].empty());
  EXPECT_EQ(j["collectives"][0]["last_rank"], 5);
  bool named = false;
  for (const auto& f : j["findings"])
    named = named || (f["id"] == "straggler" && f["title"].get<std::string>().find("Rank 5 ") != std::string::npos);
  EXPECT_TRUE(named) << j["findings"].dump();
}

// --json formats its long lists (steps: 400 per rank here) in ranges of
// items on the -j threads: a job whose steps fill several ranges prints the
// same bytes with any -j, to stdout or to a file.
TEST_F(JobCli, JsonOfAJobWhoseListsAreSplitIsTheSameWhateverJobs) {
  const fs::path job = dir_ / "long";
  const Result w = run("synth --ranks 4 --kernels 20000 --slow-rank 2 --seed 5 -o " + job.string());
  ASSERT_EQ(w.status, 0) << w.err;
  const Result one = run("report --json --no-simulation -j 1 " + job.string());
  ASSERT_EQ(one.status, 0) << one.err;
  const nlohmann::json j = nlohmann::json::parse(one.out);
  ASSERT_GT(j["steps"].size(), 3 * 512u) << "too few steps to be split into several ranges";
  for (const char* n : {"2", "3"}) {
    const Result other = run(std::string("report --json --no-simulation -j ") + n + " " + job.string());
    ASSERT_EQ(other.status, 0) << other.err;
    EXPECT_TRUE(other.out == one.out) << "-j " << n << " gives other bytes than -j 1";
  }
  const fs::path saved = dir_ / "long.json";
  const Result to_file = run("report --json --no-simulation -j 2 -o " + saved.string() + " " + job.string());
  ASSERT_EQ(to_file.status, 0) << to_file.err;
  std::ifstream in(saved, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(text == one.out) << "-o gives other bytes than stdout";
}

TEST_F(JobCli, FilesOfDifferentRunsAreRefusedNamingEach) {
  // The two bundled samples are two unrelated runs, not one 8-GPU job.
  const std::string assets = std::string(GPUSCOPE_SOURCE_DIR) + "/assets";
  const Result r = run("report " + assets);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("different runs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sample-clean-job.gscope"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sample-report-job.gscope"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(JobCli, CorruptDuplicateAndMissingFilesAreNamedAndTheRestAnalysed) {
  const fs::path job = synth_job("job", 5, 1, 4);
  // A corrupt file among the good ones, a rank given twice, a rank missing.
  { std::ofstream(job / "rank-00009.gscope") << "not a trace at all"; }
  fs::copy_file(job / "rank-00002.gscope", job / "rank-00002b.gscope");
  fs::remove(job / "rank-00003.gscope");
  const Result r = run("report --json " + job.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"].size(), 4u);  // 0, 1, 2, 4
  ASSERT_EQ(j["left_out"].size(), 3u) << j["left_out"].dump();
  std::string all;
  for (const auto& l : j["left_out"])
    all += l["file"].get<std::string>() + ": " + l["problem"].get<std::string>() + "\n";
  EXPECT_NE(all.find("rank-00002b.gscope: rank 2 again"), std::string::npos) << all;
  EXPECT_NE(all.find("rank-00009.gscope: "), std::string::npos) << all;
  EXPECT_NE(all.find("1 of the job's 5 ranks have no file (rank 3)"), std::string::npos) << all;
  EXPECT_EQ(j["stragglers"][0]["rank"], 1);
  const Result text = run("report " + job.string());
  EXPECT_NE(text.out.find("Left out: " + (job / "rank-00009.gscope").string()), std::string::npos) << text.out;
  // Nothing left to analyse: one error naming the files.
  const fs::path bad = dir_ / "bad";
  fs::create_directories(bad);
  { std::ofstream(bad / "a.gscope") << "junk"; }
  { std::ofstream(bad / "b.gscope") << "junk"; }
  const Result none = run("report " + bad.string());
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("none of the 2 files can be analysed"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("b.gscope"), std::string::npos) << none.err;
}

// `synth --ranks N --ops`: the job's op table counts every rank's calls (N ×
// one rank's, the ranks running the same ops), the text report shows it and
// its roofline rows, and the bytes do not depend on -j.
TEST_F(JobCli, OpTableOfAJobCountsEveryRanksCalls) {
  const fs::path job = dir_ / "ops";
  const Result w = run("synth --ranks 3 --kernels 1000 --ops --slow-rank 1 -o " + job.string());
  ASSERT_EQ(w.status, 0) << w.err;
  const std::string flags = "report --json --no-simulation --top 1000 ";
  const Result one = run(flags + "-j 1 " + job.string()), two = run(flags + "-j 2 " + job.string());
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_TRUE(one.out == two.out) << "-j 2 gives other bytes than -j 1";
  const Result rank = run(flags + (job / "rank-00000.gscope").string());
  ASSERT_EQ(rank.status, 0) << rank.err;
  const nlohmann::json j = nlohmann::json::parse(one.out), r = nlohmann::json::parse(rank.out);
  ASSERT_FALSE(r["ops"].empty());
  ASSERT_EQ(j["ops"].size(), r["ops"].size());
  std::size_t with_flops = 0;
  for (const auto& row : r["ops"]) {
    const auto it = std::find_if(j["ops"].begin(), j["ops"].end(), [&](const nlohmann::json& x) {
      return x["name"] == row["name"] && x["shapes"] == row["shapes"] && x["dtype"] == row["dtype"];
    });
    ASSERT_NE(it, j["ops"].end()) << row["name"];
    EXPECT_EQ((*it)["calls"].get<std::uint64_t>(), 3 * row["calls"].get<std::uint64_t>()) << row["name"];
    if (row["flops"].is_null()) continue;
    ++with_flops;
    EXPECT_NEAR((*it)["flops"].get<double>(), 3 * row["flops"].get<double>(), 1e-6 * row["flops"].get<double>());
  }
  EXPECT_EQ(with_flops, 3u);  // conv2d, mm, add (cudnn_batch_norm: bytes only)
  EXPECT_EQ(j["op_summary"]["op_calls"].get<std::uint64_t>(), 3 * r["op_summary"]["op_calls"].get<std::uint64_t>());
  const Result text1 = run("report --no-simulation -j 1 " + job.string()),
               text2 = run("report --no-simulation -j 2 " + job.string());
  ASSERT_EQ(text1.status, 0) << text1.err;
  EXPECT_EQ(text1.out, text2.out);
  EXPECT_NE(text1.out.find("framework ops of"), std::string::npos) << text1.out;
  EXPECT_NE(text1.out.find("aten::conv2d"), std::string::npos) << text1.out;
  EXPECT_NE(text1.out.find("Roofline of the heaviest ops"), std::string::npos) << text1.out;
}

}  // namespace
}  // namespace gpuscope
