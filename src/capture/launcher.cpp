#include "capture/launcher.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace gpuscope::capture {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
std::atomic<pid_t> g_child{0};

void forward(int sig, siginfo_t* info, void*) {
  // si_code <= 0: sent by a process (kill, sigqueue, tgkill). The kernel's
  // own (terminal) signals have si_code > 0 and already reached the child.
  const pid_t child = g_child.load();
  if (child > 0 && info && info->si_code <= 0) ::kill(child, sig);
}

// Forwards the signals a user sends to gpuscope to the program it runs. They
// stay blocked from before fork until the child's pid is known, so one that
// arrives in between is delivered (and forwarded) then, never dropped.
class ForwardSignals {
 public:
  ForwardSignals() {
    struct sigaction sa {};
    sa.sa_sigaction = &forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigset_t forwarded;
    sigemptyset(&forwarded);
    for (int sig : kForwarded) sigaddset(&forwarded, sig);
    ::pthread_sigmask(SIG_BLOCK, &forwarded, &mask_);
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &sa, &previous_[i]);
  }
  ~ForwardSignals() {
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &previous_[i], nullptr);
    g_child.store(0);
    ::pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

  // In the parent, once the child's pid is stored: signals flow (and are forwarded).
  void child_started(pid_t child) {
    g_child.store(child);
    ::pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
  }

  // In the child, before exec (async-signal-safe calls only): the dispositions
  // exec would give (a caught signal is reset to its default, an ignored one
  // stays ignored), then the mask the program should start with.
  void in_child() const {
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) {
      struct sigaction sa = previous_[i];
      if (sa.sa_handler != SIG_IGN) {
        sa = {};
        sa.sa_handler = SIG_DFL;
      }
      ::sigaction(kForwarded[i], &sa, nullptr);
    }
    ::pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
  }

 private:
  struct sigaction previous_[std::size(kForwarded)]{};
  sigset_t mask_{};
};

}  // namespace

int LaunchResult::shell_status() const {
  if (!started) return error.find("ermission") != std::string::npos ? 126 : 127;
  return signaled ? 128 + exit_code : exit_code;
}

LaunchResult run_program(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  LaunchResult result;
  if (argv.empty()) {
    result.error = "no program given";
    return result;
  }
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string key(entry.substr(0, entry.find('=')));
    if (!env.count(key)) env_strings.emplace_back(entry);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  ForwardSignals forwarding;
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    return result;
  }
  if (pid == 0) {
    ::close(status_pipe[0]);
    forwarding.in_child();
    ::execvpe(args[0], args.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] ssize_t n = ::write(status_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  forwarding.child_started(pid);
  ::close(status_pipe[1]);
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(status_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(status_pipe[0]);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    result.error = std::strerror(exec_errno);
    return result;
  }
  result.started = true;
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.exit_code = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace gpuscope::capture
