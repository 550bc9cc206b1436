// Runs a program the way `gpuscope capture` needs: with extra environment
// variables, with the signals someone sends to gpuscope passed on to it, and
// with its exit status (or the signal that killed it) reported back.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpuscope::capture {

struct LaunchResult {
  bool started = false;  // false: the program could not be executed (see error)
  std::string error;     // "no such file or directory", …
  bool signaled = false;
  int exit_code = 0;  // its exit status, or the signal number when signaled
  // What a shell would return for it: the status, 128 + signal, or 127/126
  // when it could not be executed.
  int shell_status() const;
};

// Runs argv[0] (searched in PATH) with `env` added to (or replacing entries
// of) this process's environment, and waits for it. SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGUSR1 and SIGUSR2 sent to this process by another process are
// forwarded; those the terminal sends reach the program directly (it is in
// the same process group), so they are not sent twice.
LaunchResult run_program(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);

}  // namespace gpuscope::capture
