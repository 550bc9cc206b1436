// Runs the built `gpuscope` binary from a test and captures what it did.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace gpuscope::testing {

struct RunResult {
  int status = -1;  // exit code, or 128 + signal
  std::string out, err;
  std::uint64_t peak_bytes = 0;  // the child's maximum resident set (wait4)
  // The stderr lines (without their newline).
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < err.size()) {
      const std::size_t nl = err.find('\n', at);
      lines.push_back(err.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
    return lines;
  }
};

inline std::string gpuscope_binary() { return std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope"; }

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs gpuscope with `args` in `cwd`; stdout and stderr go through files, so
// neither can fill a pipe and block the child.
inline RunResult run_gpuscope(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  const std::filesystem::path out = cwd / ".run-stdout", err = cwd / ".run-stderr";
  std::vector<std::string> argv_s = {gpuscope_binary()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  RunResult r;
  if (rc != 0) {
    ADD_FAILURE() << "cannot run " << argv[0];
    return r;
  }
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.peak_bytes = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace gpuscope::testing
