// A job's files are read twice (the digests, then the simulation): a file
// that disappears, shrinks or is rewritten in between is left out with the
// reason, and the report goes on with the others (job/job_files.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/job.h"
#include "import/synthetic_job.h"
#include "store/gscope.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

std::string problem_for(const Profile& p, const std::string& file) {
  for (const LeftOut& l : p.left_out)
    if (l.file == file) return l.problem;
  return "(not left out)";
}

TEST(JobFiles, FilesChangedBetweenTheirTwoReadsAreLeftOutWithTheReason) {
  const fs::path dir = fs::temp_directory_path() / ("gpuscope-job-changes-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  SyntheticJobOptions so;
  so.ranks = 4;
  so.kernels = 400;
  so.slow_rank = 3;
  so.slowdown = 1.5;
  const SyntheticJob job(so);
  std::vector<std::string> files;
  for (std::uint32_t r = 0; r < job.ranks(); ++r) {
    files.push_back((dir / ("rank-" + std::to_string(r) + ".gscope")).string());
    write_gscope(job.rank_trace(r), files.back(), GscopeWriteOptions{.sync = false});
  }
  cli::JobOptions o;
  o.jobs = 1;
  bool called = false;
  o.after_digests = [&] {
    called = true;
    fs::resize_file(files[1], fs::file_size(files[1]) / 2);  // shrinks
    fs::remove(files[2]);                                    // disappears
    // rewritten: the same size, other bytes, a later modification time
    std::string bytes;
    {
      std::ifstream in(files[0], std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes[bytes.size() / 2] ^= 0x5a;
    ::usleep(20'000);  // a modification time the filesystem can tell apart
    std::ofstream(files[0], std::ios::binary) << bytes;
  };
  const Profile p = cli::analyze_files(files, o);
  EXPECT_TRUE(called);
  EXPECT_NE(problem_for(p, files[1]).find("shrank during the run"), std::string::npos) << problem_for(p, files[1]);
  EXPECT_EQ(problem_for(p, files[2]), "disappeared during the run");
  EXPECT_EQ(problem_for(p, files[0]), "was rewritten during the run");
  EXPECT_EQ(p.files, std::vector<std::string>{files[3]});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuscope
