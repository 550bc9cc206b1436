// Every command under hostile input (docs/robustness.md): endless streams,
// small files that declare or expand to far more than they hold, names long
// enough to break a backtracking regex engine, times that overflow a span,
// job directories full of things that are not traces. Each is refused with
// one line naming the file, or read within the memory budget; the peak
// memory of the process (its maximum resident set, from wait4) stays within
// twice the budget; nothing crashes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/run.h"
#include "support/hostile_files.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using testing::RunResult;

struct Measured {
  RunResult r;
  std::uint64_t peak_bytes = 0;  // the child's maximum resident set
};

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(testing::gpuscope_binary())) << "gpuscope binary not built";
    dir_ = fs::temp_directory_path() / ("gpuscope-hostile-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (const std::string keep = testing::hostile_copy_dir(); !keep.empty())
      for (const auto& e : fs::directory_iterator(dir_))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.')
          fs::copy_file(e.path(), fs::path(keep) / e.path().filename(), fs::copy_options::overwrite_existing);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // run_gpuscope() with the child's peak memory.
  Measured run(const std::vector<std::string>& args) const {
    const RunResult r = testing::run_gpuscope(args, dir_);
    return {r, r.peak_bytes};
  }

  // `args` exits 2 with one line on stderr naming `file` and containing `what`.
  void expect_refused(const std::vector<std::string>& args, const std::string& file, const std::string& what,
                      std::uint64_t peak_limit) const {
    const Measured m = run(args);
    EXPECT_EQ(m.r.status, 2) << args[0] << ": " << m.r.err;
    ASSERT_EQ(m.r.err_lines().size(), 1u) << args[0] << ": " << m.r.err;
    EXPECT_EQ(m.r.err.rfind("gpuscope: error: " + file, 0), 0u) << m.r.err;
    EXPECT_NE(m.r.err.find(what), std::string::npos) << args[0] << ": " << m.r.err;
    EXPECT_LE(m.peak_bytes, peak_limit) << args[0] << " peaked at " << m.peak_bytes << " bytes";
  }

  fs::path dir_;
};

constexpr std::uint64_t kMiB = 1u << 20;

// /dev/zero, and every command: refused at its first bytes (no trace starts
// with a NUL), not copied into memory until the machine runs out of it.
TEST_F(Hostile, DevZeroIsRefusedByEveryCommandAtItsFirstBytes) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"info", "/dev/zero"},
                                             {"report", "/dev/zero"},
                                             {"whatif", "/dev/zero", "--remove", "gemm"},
                                             {"export", "/dev/zero", "-o", path("x.json")},
                                             {"stats", "/dev/zero"},
                                             {"import", "/dev/zero", "-o", path("x.gscope")},
                                             {"diff", "/dev/zero", "/dev/zero"}})
    expect_refused(args, "/dev/zero", "not a trace file gpuscope reads", 64 * kMiB);
  EXPECT_FALSE(fs::exists(path("x.json")));
  EXPECT_FALSE(fs::exists(path("x.gscope")));
}

// A stream that looks like JSON and never ends is read up to the budget.
TEST_F(Hostile, AnEndlessStreamIsReadUpToTheBudgetAndRefused) {
  ::signal(SIGPIPE, SIG_IGN);
  const std::string fifo = path("endless.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string chunk(1 << 16, '[');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  });
  expect_refused({"info", fifo, "--max-memory", "16M"}, fifo, "did not end within the memory budget of 16 MiB",
                 64 * kMiB);
  writer.join();
}

// procfs files say they are empty but are not: the message says what they are.
TEST_F(Hostile, AProcFileIsNotCalledEmpty) {
  expect_refused({"import", "/proc/self/status", "-o", path("x.gscope")}, "/proc/self/status",
                 "not a trace file gpuscope reads", 64 * kMiB);
}

// 20M identical kernels in ~64 KB: refused by every command before the
// memory is taken (it was 1.2 GB for info, 3 GB for whatif).
TEST_F(Hostile, TwentyMillionDeclaredKernelsAreRefusedBeforeAllocating) {
  const std::string file = path("kernels-20m.gscope");
  testing::write_identical_kernels_gscope(file, 20'000'000);
  EXPECT_LT(fs::file_size(file), 200'000u);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"info", file},
                                             {"report", file},
                                             {"whatif", file, "--remove", "gemm"},
                                             {"export", file, "-o", path("x.json")},
                                             {"stats", file},
                                             {"diff", file, file}})
    expect_refused(
        [&] {
          std::vector<std::string> a = args;
          a.insert(a.end(), {"--max-memory", "256M"});
          return a;
        }(),
        file, "the footer index declares 20000000 rows (kernels 20000000)", 512 * kMiB);
}

// 300 names of 100,000 characters: cut to 16 KiB each, counted, and the
// report runs within the budget.
TEST_F(Hostile, LongNamesAreCutAndTheReportSaysSo) {
  const std::string file = path("long-names.gscope");
  testing::write_long_names_gscope(file, 300, 100'000);
  const Measured m = run({"report", file, "--max-memory", "256M"});
  ASSERT_EQ(m.r.status, 0) << m.r.err;
  EXPECT_NE(m.r.out.find("trace.truncated_names = 300"), std::string::npos) << m.r.out;
  EXPECT_LE(m.peak_bytes, 512 * kMiB);
}

// A .json.gz that expands a thousandfold: read until the trace would pass
// the budget, then refused.
TEST_F(Hostile, ACompressedTraceThatExpandsPastTheBudgetIsRefused) {
  const std::string file = path("expands.json.gz");
  testing::write_kernel_events_json_gz(file, 1'500'000);
  EXPECT_LT(fs::file_size(file), 1'000'000u);
  expect_refused({"report", file, "--max-memory", "64M"}, file, "over the memory budget of 64 MiB", 128 * kMiB);
}

// A trace with a 50,000-character kernel name: std::regex overflowed the
// stack on it (a segmentation fault). The name is cut to 16 KiB when read
// (counted), and RE2 does not recurse whatever the length (graph_test and
// budget_test match 50,000 characters).
TEST_F(Hostile, RegexesOverFiftyThousandCharacterNamesDoNotCrash) {
  const std::string name = "gemm_" + std::string(49'995, 'x');
  std::ofstream(path("long.json"))
      << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":")" << name
      << R"(","pid":0,"tid":7,"ts":10,"dur":5,"args":{"device":0,"stream":7,"correlation":1}},)"
      << R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":0,"tid":1,"ts":1,"dur":2,)"
      << R"("args":{"correlation":1}}]})";
  const Measured ok = run({"whatif", path("long.json"), "--remove", "/gemm.*x$/"});
  EXPECT_EQ(ok.r.status, 0) << ok.r.err;
  const Measured info = run({"info", path("long.json")});
  EXPECT_NE(info.r.out.find("trace.truncated_names"), std::string::npos) << info.r.out;
  const Measured bad = run({"whatif", path("long.json"), "--remove", "/[/"});
  EXPECT_EQ(bad.r.status, 2) << bad.r.err;
  EXPECT_NE(bad.r.err.find("not a regular expression: missing ]: [ (at character 1)"), std::string::npos) << bad.r.err;
  const Measured find = run({"view", path("long.json"), "--find", "[", "--regex"});
  EXPECT_EQ(find.r.status, 2) << find.r.err;
  EXPECT_NE(find.r.err.find("--find '[': not a regular expression"), std::string::npos) << find.r.err;
}

// Kernels at ±9e15 µs: the span was printed as -446744073.7 s. They are
// dropped and counted; the span is the plausible kernel's.
TEST_F(Hostile, TimesOutsideThePlausibleWindowNeverMakeANegativeSpan) {
  std::ofstream(path("span.json"))
      << R"({"traceEvents":[)"
      << R"({"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":9e15,"dur":1,"args":{"device":0,"stream":7}},)"
      << R"({"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":-9e15,"dur":1,"args":{"device":0,"stream":7}},)"
      << R"({"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":100,"dur":5,"args":{"device":0,"stream":7}}]})";
  const Measured info = run({"info", path("span.json")});
  ASSERT_EQ(info.r.status, 0) << info.r.err;
  EXPECT_NE(info.r.out.find("time span    0.000005000 s"), std::string::npos) << info.r.out;
  EXPECT_NE(info.r.out.find("trace.out_of_window.kernels"), std::string::npos) << info.r.out;
  const Measured report = run({"report", path("span.json")});
  ASSERT_EQ(report.r.status, 0) << report.r.err;
  EXPECT_EQ(report.r.out.find(" -4"), std::string::npos) << report.r.out;
  EXPECT_NE(report.r.out.find("trace.out_of_window.kernels = 2"), std::string::npos) << report.r.out;
}

// A job directory with a FIFO, a symbolic link loop, a link to /dev/zero and
// a stray file: each is listed under "Left out" with what it is, and the
// ranks are reported.
TEST_F(Hostile, AJobDirectoryListsWhatItCannotRead) {
  const fs::path job = dir_ / "job";
  const Measured synth = run({"synth", "--ranks", "2", "--kernels", "1000", "-o", job.string()});
  ASSERT_EQ(synth.r.status, 0) << synth.r.err;
  ASSERT_EQ(::mkfifo((job / "rank-fifo.gscope").c_str(), 0600), 0);
  fs::create_symlink("loop.json", job / "loop.json");
  fs::create_symlink("/dev/zero", job / "zero.json");
  std::ofstream(job / "notes.txt") << "not a trace";
  const Measured m = run({"report", job.string(), "--no-simulation"});
  ASSERT_EQ(m.r.status, 0) << m.r.err;
  for (const std::string& line :
       {"Left out: " + (job / "loop.json").string() + ": a symbolic link loop",
        "Left out: " + (job / "notes.txt").string() + ": not named like a trace file",
        "Left out: " + (job / "rank-fifo.gscope").string() + ": a FIFO (named pipe), not a regular file",
        "Left out: " + (job / "zero.json").string() + ": a character device, not a regular file"})
    EXPECT_NE(m.r.out.find(line), std::string::npos) << line << "\n" << m.r.out;
  EXPECT_NE(m.r.out.find("2 ranks"), std::string::npos) << m.r.out;
}

}  // namespace
}  // namespace gpuscope
