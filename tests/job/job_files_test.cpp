// analyze_job over synthetic jobs written to disk (import/synthetic_job.h):
// what a caller that shows each rank receives while the rank is open, which
// files the profile was made of, cancellation, and a rank given twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include <unistd.h>

#include "import/synthetic_job.h"
#include "job/job_files.h"
#include "store/gscope.h"

namespace gpuscope::job {
namespace {

namespace fs = std::filesystem;

class JobFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-jobfiles-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the rank files of a job of `ranks` (rank 1 slow); returns them in order.
  std::vector<std::string> write_job(std::uint32_t ranks) {
    SyntheticJobOptions o;
    o.ranks = ranks;
    o.kernels = 1'000;
    o.slow_rank = 1;
    o.command_line = "train.py";
    const SyntheticJob job(o);
    std::vector<std::string> files;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      files.push_back((dir_ / ("rank-" + std::to_string(r) + ".gscope")).string());
      write_gscope(job.rank_trace(r), files.back());
    }
    return files;
  }

  fs::path dir_;
};

TEST_F(JobFilesTest, EachRankIsVisitedWhileOpenAndTheKeptFilesAreNamed) {
  std::vector<std::string> files = write_job(4);
  fs::copy_file(files[0], dir_ / "junk.gscope");
  fs::resize_file(dir_ / "junk.gscope", 64);  // cannot be read: left out
  files.insert(files.begin() + 2, (dir_ / "junk.gscope").string());
  std::mutex m;
  std::map<std::size_t, std::pair<std::size_t, std::string>> seen;  // file -> kernels, digest's host
  std::atomic<std::uint64_t> read{0};
  JobRanks ranks;
  JobOptions o;
  o.jobs = 2;
  o.files_read = &read;
  o.ranks = &ranks;
  o.on_rank = [&](std::size_t i, const Trace& t, const RankDigest* d) {
    ASSERT_NE(d, nullptr);
    std::lock_guard<std::mutex> lock(m);
    seen[i] = {t.kernels().size(), d->host};
  };
  const Profile p = analyze_job(files, o);
  EXPECT_EQ(read.load(), files.size());
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_FALSE(seen.count(2));  // the junk file is never visited
  for (const auto& [i, v] : seen) {
    EXPECT_GT(v.first, 0u);
    EXPECT_FALSE(v.second.empty());
  }
  EXPECT_EQ(ranks.files, (std::vector<std::size_t>{0, 1, 3, 4}));
  ASSERT_EQ(p.ranks.size(), 4u);
  for (std::size_t k = 0; k < ranks.files.size(); ++k) EXPECT_EQ(p.ranks[k].source_file, files[ranks.files[k]]);
  ASSERT_FALSE(p.collectives.empty());
  ASSERT_EQ(ranks.parts.size(), p.collectives.size());
  for (const std::vector<std::uint32_t>& inst : ranks.parts) EXPECT_EQ(inst.size(), 4u);
  ASSERT_EQ(p.left_out.size(), 1u);
  EXPECT_EQ(p.left_out[0].file, files[2]);
}

TEST_F(JobFilesTest, AJobOfOneFileIsVisitedWithoutADigest) {
  const std::vector<std::string> files = write_job(2);
  JobRanks ranks;
  int visits = 0;
  JobOptions o;
  o.ranks = &ranks;
  o.on_rank = [&](std::size_t i, const Trace&, const RankDigest* d) {
    EXPECT_EQ(i, 0u);
    EXPECT_EQ(d, nullptr);
    ++visits;
  };
  analyze_job({files[0]}, o);
  EXPECT_EQ(visits, 1);
  EXPECT_EQ(ranks.files, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(ranks.parts.empty());
}

TEST_F(JobFilesTest, ACancelledJobOpensNoMoreFilesAndSaysSo) {
  const std::vector<std::string> files = write_job(6);
  std::atomic<bool> cancel{false};
  std::atomic<int> visits{0};
  JobOptions o;
  o.jobs = 1;
  o.cancel = &cancel;
  o.on_rank = [&](std::size_t, const Trace&, const RankDigest*) {
    if (++visits == 2) cancel = true;
  };
  EXPECT_THROW(analyze_job(files, o), Cancelled);
  EXPECT_EQ(visits.load(), 2);
  cancel = false;
  EXPECT_NO_THROW(analyze_job(files, o));
}

// A rank given twice is left out by check_job(): the simulation replays the
// ranks kept, not the duplicate, and the report is the job's without it.
TEST_F(JobFilesTest, ARankGivenTwiceIsNotSimulatedTwice) {
  const std::vector<std::string> files = write_job(4);
  const fs::path again = dir_ / "again.gscope";
  fs::copy_file(files[1], again);
  std::vector<std::string> with = files;
  with.insert(with.begin() + 2, again.string());
  JobRanks ranks;
  JobOptions o;
  o.ranks = &ranks;
  const Profile p = analyze_job(with, o);
  const Profile want = analyze_job(files, JobOptions{});
  EXPECT_EQ(ranks.files, (std::vector<std::size_t>{0, 1, 3, 4}));
  ASSERT_EQ(p.left_out.size(), 1u);
  EXPECT_EQ(p.left_out[0].file, again.string());
  EXPECT_EQ(p.simulation.scope, want.simulation.scope);
  EXPECT_EQ(p.simulation.steps, want.simulation.steps);
  EXPECT_EQ(p.critical_path.length_ns, want.critical_path.length_ns);
}

}  // namespace
}  // namespace gpuscope::job
