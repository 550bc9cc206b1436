// The viewer's job load keeps to the report's memory: on a synthetic job of
// 256 ranks, the load alone (job_load_probe: load_job, what the job view's
// worker runs) peaks within `gpuscope report --json`'s peak for the same
// folder, plus 5 % and the lanes it keeps (job_lane_bytes: per GPU a
// 128 KiB histogram and its communication kernels). Holding every rank's
// trace at once would need about 1.3 times the report's peak.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Measured {
  int status = -1;
  long peak_kib = 0;  // the process's peak resident memory
  std::string out;    // its standard output
};

// Runs `args` in a process of its own; its peak memory from wait4().
Measured run_measured(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  Measured m;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) m.out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.peak_kib = ru.ru_maxrss;
  return m;
}

TEST(JobMemory, TheViewersJobLoadStaysWithinTheReportsPeak) {
  const fs::path dir = fs::temp_directory_path() / ("gpuscope-jobmemory-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string job = (dir / "job").string();
  ASSERT_EQ(run_measured({GPUSCOPE_CLI_BIN, "synth", "--ranks", "256", "--kernels", "6000", "-o", job}).status, 0);
  const Measured cli = run_measured({GPUSCOPE_CLI_BIN, "report", "--json", job, "-o", (dir / "report.json").string()});
  ASSERT_EQ(cli.status, 0);
  const Measured view = run_measured({GPUSCOPE_JOB_LOAD_PROBE, job});
  ASSERT_EQ(view.status, 0);
  std::size_t ranks = 0, collectives = 0, lane_bytes = 0;
  std::istringstream(view.out) >> ranks >> collectives >> lane_bytes;
  EXPECT_EQ(ranks, 256u) << view.out;
  EXPECT_GT(collectives, 0u) << view.out;
  const double allowed_kib = 1.05 * static_cast<double>(cli.peak_kib) + static_cast<double>(lane_bytes) / 1024;
  EXPECT_LE(static_cast<double>(view.peak_kib), allowed_kib)
      << "the viewer's job load peaked at " << view.peak_kib << " KiB; the report at " << cli.peak_kib
      << " KiB; its lanes hold " << lane_bytes / 1024 << " KiB";
  std::printf("job of 256 ranks: report %ld KiB, the viewer's job load %ld KiB (lanes %zu KiB)\n", cli.peak_kib,
              view.peak_kib, lane_bytes / 1024);
  fs::remove_all(dir);
}

}  // namespace
