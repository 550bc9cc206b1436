// `gpuscope capture` end to end, on a machine without a GPU: exit statuses,
// signals, the injection environment, errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "capture/driver_probe.h"

namespace {

namespace fs = std::filesystem;
const std::string kGpuscope = GPUSCOPE_BINARY_DIR "/bin/gpuscope";
const std::string kSmoke = GPUSCOPE_BINARY_DIR "/tests/capture_smoke";

struct Outcome {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CaptureCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string p = (fs::temp_directory_path() / "gpuscope-cli-XXXXXX").string();
    dir_ = ::mkdtemp(p.data());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Starts gpuscope with `args`; stdout/stderr go to files in dir_.
  pid_t spawn(const std::vector<std::string>& args) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int out = ::open((dir_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open((dir_ / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(err, 2);
      if (::chdir(dir_.c_str()) != 0) ::_exit(99);
      std::vector<char*> argv;
      std::vector<std::string> all = {kGpuscope};
      all.insert(all.end(), args.begin(), args.end());
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(98);
    }
    return pid;
  }
  Outcome wait(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    Outcome r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(dir_ / "out");
    r.err = slurp(dir_ / "err");
    return r;
  }
  Outcome run(const std::vector<std::string>& args) { return wait(spawn(args)); }

  fs::path dir_;
};

bool have_gpu() {
  return gpuscope::capture::probe_cuda_driver().result == gpuscope::capture::DriverProbe::Result::devices;
}

TEST_F(CaptureCli, ReturnsTheProgramsExitStatus) {
  EXPECT_EQ(run({"capture", "--", "/bin/sh", "-c", "exit 3"}).status, 3);
  EXPECT_EQ(run({"capture", "--", "/bin/sh", "-c", "exit 0"}).status, 0);
  EXPECT_EQ(run({"capture", "/bin/sh", "-c", "exit 42"}).status, 42);  // "--" is optional
}

TEST_F(CaptureCli, ACudaProgramWithoutAGpuRunsToItsOwnEndAndGpuscopeSaysWhy) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU: tests/gpu/capture_check.sh covers it";
  const Outcome r = run({"capture", "-o", "smoke-%p.gscope", "--", kSmoke});
  EXPECT_EQ(r.status, 7) << r.err;  // capture_smoke's own "no device" status
  EXPECT_NE(r.out.find("capture_smoke: no CUDA device"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("gpuscope: no CUDA device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was captured"), std::string::npos) << r.err;
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_NE(e.path().extension(), ".gscope") << e.path();
}

TEST_F(CaptureCli, SetsUpTheInjectionEnvironment) {
  const Outcome r =
      run({"capture", "--trace", "kernel,api", "-o", "sub/run-%p.gscope", "--delay", "1.5", "--", "/bin/sh", "-c",
           "echo \"$CUDA_INJECTION64_PATH|$NVTX_INJECTION64_PATH|$GPUSCOPE_CAPTURE_TRACE|"
           "$GPUSCOPE_CAPTURE_OUTPUT|$GPUSCOPE_CAPTURE_DELAY|$GPUSCOPE_CAPTURE_REPORT_DIR\""});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> f;
  std::stringstream ss(r.out.substr(0, r.out.find('\n')));
  for (std::string item; std::getline(ss, item, '|');) f.push_back(item);
  ASSERT_EQ(f.size(), 6u) << r.out;
  EXPECT_TRUE(f[0].ends_with("/libgpuscope_inject.so")) << f[0];
  EXPECT_TRUE(fs::exists(f[0]));
  EXPECT_EQ(f[1], "");  // no nvtx asked: NVTX is left alone
  EXPECT_EQ(f[2], "kernel,api");
  EXPECT_EQ(f[3], (fs::canonical(dir_) / "sub/run-%p.gscope").string());  // absolute: the program may chdir
  EXPECT_EQ(f[4], "1.5");
  EXPECT_FALSE(f[5].empty());
  EXPECT_FALSE(fs::exists(f[5]));  // the private report directory is cleaned up

  const Outcome nvtx =
      run({"capture", "--capture-range", "nvtx:step", "--", "/bin/sh", "-c", "echo $NVTX_INJECTION64_PATH"});
  EXPECT_NE(nvtx.out.find("libgpuscope_inject.so"), std::string::npos);

  const Outcome metrics = run({"capture", "--gpu-metrics", "none", "--gpu-metrics-hz", "500", "--", "/bin/sh", "-c",
                               "echo \"$GPUSCOPE_CAPTURE_GPU_METRICS|$GPUSCOPE_CAPTURE_GPU_METRICS_HZ\""});
  ASSERT_EQ(metrics.status, 0) << metrics.err;
  EXPECT_EQ(metrics.out.substr(0, metrics.out.find('\n')), "none|500");
}

// The end-of-run summary, from the reports the injected library writes into
// GPUSCOPE_CAPTURE_REPORT_DIR (here written by a shell, as three processes
// of one run would: one finished, one refused by CUPTI, one that died).
TEST_F(CaptureCli, PrintsWhatEachCudaProcessCapturedAndWhere) {
  const std::string script =
      "d=$GPUSCOPE_CAPTURE_REPORT_DIR; printf x > out.gscope; "
      "printf 'pid=101\\nstate=finished\\nok=1\\ncommand=python train.py\\noutput=%s/out.gscope\\nmessage=wrote it\\n"
      "kernels=12345\\nmemcpys=6\\nmemsets=1\\napi_calls=12400\\nranges=3\\nsyncs=2\\noverheads=4\\n"
      "dropped_records=0\\ninvalid_timestamps=5\\noverhead_ns=1500000\\nbytes_written=1\\npool_peak_bytes=8388608\\n' "
      "\"$PWD\" > $d/101.report; "
      "printf 'pid=102\\nstate=failed\\nok=0\\ncommand=helper\\noutput=\\n"
      "message=CUPTI is already in use by another profiler (nsys)\\n' > $d/102.report; "
      "printf 'pid=103\\nstate=recording\\nok=1\\ncommand=worker\\noutput=%s/died.gscope\\nkernels=7\\n' \"$PWD\" "
      "> $d/103.report; exit 4";
  const Outcome r = run({"capture", "--", "/bin/sh", "-c", script});
  EXPECT_EQ(r.status, 4) << r.err;
  const std::string here = fs::canonical(dir_).string();
  for (const std::string& want : {
           std::string("gpuscope: /bin/sh exited with status 4"),
           std::string("gpuscope: 3 CUDA processes:"),
           "gpuscope:   pid 101 (python train.py) -> " + here + "/out.gscope (1 B)",
           std::string("kernels 12,345, memcpys 6, memsets 1, API calls 12,400, NVTX ranges 3, syncs 2"),
           std::string(
               "dropped records 0, invalid timestamps 5, profiler overhead 1.500 ms, buffer memory peak 8.0 MiB"),
           std::string("pid 102 (helper): nothing captured: CUPTI is already in use by another profiler (nsys)"),
           "pid 103 (worker) -> " + here + "/died.gscope (missing)  [process ended before finishing",
       })
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n---\n" << r.err;
  EXPECT_LT(r.err.find("pid 101"), r.err.find("pid 102"));  // in pid order
  EXPECT_EQ(r.err.find("no GPU work was captured"), std::string::npos) << r.err;
}

TEST_F(CaptureCli, ProcessesThatRecordedNothingAreExplainedByTheDriver) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU: tests/gpu/capture_check.sh covers CUDA_VISIBLE_DEVICES=\"\"";
  const Outcome r = run({"capture", "--", "/bin/sh", "-c",
                         "printf 'pid=5\\nstate=finished\\nok=1\\ncommand=x\\noutput=/nonexistent.gscope\\n' "
                         "> $GPUSCOPE_CAPTURE_REPORT_DIR/5.report"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("gpuscope: 1 CUDA process:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpuscope: no CUDA device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no GPU work was captured"), std::string::npos) << r.err;
}

TEST_F(CaptureCli, ForwardsSignalsSentToIt) {
  const fs::path ready = dir_ / "ready";
  const pid_t pid = spawn({"capture", "--", "/bin/sh", "-c",
                           "trap 'exit 42' TERM; touch " + ready.string() + "; while :; do sleep 0.05; done"});
  for (int i = 0; i < 1000 && !fs::exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(ready));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const Outcome r = wait(pid);
  EXPECT_EQ(r.status, 42) << r.err;  // the program got SIGTERM and exited its own way
  EXPECT_NE(r.err.find("exited with status 42"), std::string::npos) << r.err;
}

TEST_F(CaptureCli, AProgramKilledByASignalGives128PlusIt) {
  const Outcome r = run({"capture", "--", "/bin/sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.status, 128 + SIGKILL);
  EXPECT_NE(r.err.find("killed by signal 9"), std::string::npos) << r.err;
}

TEST_F(CaptureCli, CommandsThatCannotRunAndBadFlags) {
  Outcome r = run({"capture", "--", "/no/such/program"});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("gpuscope: error: /no/such/program: No such file or directory"), std::string::npos) << r.err;
  r = run({"capture", "--trace", "kernel,gpu", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("gpuscope: error: capture: --trace: unknown trace kind 'gpu'"), std::string::npos) << r.err;
  r = run({"capture", "--capture-range", "nvtx:", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("capture range"), std::string::npos) << r.err;
  r = run({"capture", "--delay", "-1", "--", "true"});
  EXPECT_EQ(r.status, 2);
  r = run({"capture", "--gpu-metrics", "sm__x;y", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("gpuscope: error: capture: --gpu-metrics: 'sm__x;y' is not a metric name"), std::string::npos)
      << r.err;
  r = run({"capture", "--gpu-metrics-hz", "5", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--gpu-metrics-hz"), std::string::npos) << r.err;
  r = run({"capture"});
  EXPECT_EQ(r.status, 2);
  r = run({"capture", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* flag : {"--output", "--trace", "--capture-range", "--delay", "--duration", "--buffer-kb",
                           "--pool-mb", "--gpu-metrics", "--gpu-metrics-hz"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

}  // namespace
