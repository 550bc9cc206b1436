// The in-process API and the injection library on a machine without a GPU:
// capture must refuse clearly, leave no file and never harm the program.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <cupti.h>

#include "capture/buffer_pool.h"
#include "capture/cupti_tracer.h"
#include "capture/driver_probe.h"
#include "capture/options.h"
#include "capture/process_report.h"
#include "gpuscope/capture.h"

namespace gpuscope::capture {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string p = (fs::temp_directory_path() / "gpuscope-session-XXXXXX").string();
    path_ = ::mkdtemp(p.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::size_t files() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(path_), {})); }

 private:
  fs::path path_;
};

bool have_gpu() { return probe_cuda_driver().result == DriverProbe::Result::devices; }

TEST(InProcessCapture, WithoutAGpuStartRefusesClearlyAndWritesNothing) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU; tests/gpu/capture_check.sh covers it";
  TempDir dir;
  Options o;
  o.output = (dir.path() / "run-%p.gscope").string();
  const Summary s = start(o);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("no CUDA device"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("nothing was captured"), std::string::npos) << s.message;
  EXPECT_EQ(s.output, "");
  EXPECT_EQ(dir.files(), 0u);  // no empty or partial file left behind
  EXPECT_FALSE(running());
  const Summary stopped = stop();  // harmless
  EXPECT_FALSE(stopped.ok);
  EXPECT_EQ(stopped.message, "no capture is running");
  // A second attempt behaves the same (no half-initialized state left).
  EXPECT_FALSE(start(o).ok);
  EXPECT_EQ(dir.files(), 0u);
}

TEST(InProcessCapture, InvalidOptionsAreRefusedBeforeAnythingStarts) {
  Options o;
  o.trace = 0;
  Summary s = start(o);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("invalid options"), std::string::npos);
  o = Options{};
  o.capture_range = "sometimes";
  s = start(o);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("capture range"), std::string::npos);
}

TEST(InProcessCapture, ScopedCaptureOnlyStopsWhatItStarted) {
  if (have_gpu()) GTEST_SKIP() << "needs a machine without a GPU";
  ScopedCapture c;
  EXPECT_FALSE(c.started().ok);
  EXPECT_FALSE(running());
}

TEST(CuptiFailures, MessagesSayWhatHappened) {
  bool check = false;
  std::string m = cupti::explain_failure("cuptiSubscribe", 39, "Nsight Systems", &check);
  EXPECT_NE(m.find("another profiler (Nsight Systems)"), std::string::npos) << m;
  EXPECT_NE(m.find("captured nothing"), std::string::npos);
  EXPECT_FALSE(check);
  m = cupti::explain_failure("cuptiActivityEnable", 35, "", &check);
  EXPECT_NE(m.find("insufficient privileges"), std::string::npos) << m;
  EXPECT_NE(m.find("NVreg_RestrictProfilingToAdminUsers"), std::string::npos);
  m = cupti::explain_failure("cuptiSubscribe", 999, "", &check);
  EXPECT_TRUE(check);  // maybe no driver: the caller asks it
  EXPECT_NE(m.find("CUPTI_ERROR_UNKNOWN"), std::string::npos) << m;
}

// What enable() asks CUPTI for (it cannot be observed without a GPU).
TEST(CuptiActivityKinds, ConcurrentKernelNeverKernelAndMarkerBeforeItsData) {
  auto kinds_of = [](unsigned trace) {
    std::vector<std::uint32_t> k;
    for (const auto& p : cupti::activity_kinds(trace)) k.push_back(p.kind);
    return k;
  };
  auto has = [](const std::vector<std::uint32_t>& k, CUpti_ActivityKind x) {
    return std::find(k.begin(), k.end(), static_cast<std::uint32_t>(x)) != k.end();
  };
  for (unsigned trace = 1; trace <= kAllTraces; ++trace) {
    const auto k = kinds_of(trace);
    EXPECT_FALSE(has(k, CUPTI_ACTIVITY_KIND_KERNEL)) << trace;  // it serializes the GPU
    EXPECT_EQ(has(k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), (trace & kKernel) != 0) << trace;
    EXPECT_EQ(has(k, CUPTI_ACTIVITY_KIND_MEMCPY) && has(k, CUPTI_ACTIVITY_KIND_MEMSET), (trace & kMemcpy) != 0);
    EXPECT_EQ(has(k, CUPTI_ACTIVITY_KIND_MEMORY2) && has(k, CUPTI_ACTIVITY_KIND_MEMORY_POOL), (trace & kMemcpy) != 0);
    EXPECT_EQ(has(k, CUPTI_ACTIVITY_KIND_RUNTIME) && has(k, CUPTI_ACTIVITY_KIND_DRIVER), (trace & kApi) != 0);
    EXPECT_EQ(has(k, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), (trace & kSync) != 0);
    EXPECT_EQ(has(k, CUPTI_ACTIVITY_KIND_MARKER), (trace & kNvtx) != 0);
    // Always: properties and CUPTI's own overhead; devices/contexts/streams dumped for late attach.
    for (CUpti_ActivityKind always : {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
                                      CUPTI_ACTIVITY_KIND_STREAM, CUPTI_ACTIVITY_KIND_OVERHEAD})
      EXPECT_TRUE(has(k, always)) << trace;
    const auto marker = std::find(k.begin(), k.end(), std::uint32_t{CUPTI_ACTIVITY_KIND_MARKER});
    const auto data = std::find(k.begin(), k.end(), std::uint32_t{CUPTI_ACTIVITY_KIND_MARKER_DATA});
    if (data != k.end()) {
      EXPECT_LT(marker, data) << "CUPTI needs MARKER enabled before MARKER_DATA";
    }
  }
  // Only what the capture cannot do without is essential.
  for (const auto& p : cupti::activity_kinds(kAllTraces)) {
    const bool essential = p.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || p.kind == CUPTI_ACTIVITY_KIND_MEMCPY ||
                           p.kind == CUPTI_ACTIVITY_KIND_RUNTIME;
    EXPECT_EQ(p.essential, essential) << p.kind;
  }
}

TEST(CuptiActivityKinds, NoisyCallsAreTrimmedLaunchesAndCopiesAreNot) {
  const auto runtime = cupti::trimmed_callbacks(false);
  const auto driver = cupti::trimmed_callbacks(true);
  auto in = [](const std::vector<std::uint32_t>& v, std::uint32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  EXPECT_TRUE(in(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  EXPECT_TRUE(in(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020));
  EXPECT_TRUE(in(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020));
  EXPECT_TRUE(in(driver, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
  EXPECT_TRUE(in(driver, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2));
  for (std::uint32_t kept :
       {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
        CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020})
    EXPECT_FALSE(in(runtime, kept)) << kept;
  for (std::uint32_t kept : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                             CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize})
    EXPECT_FALSE(in(driver, kept)) << kept;
}

TEST(DriverProbe, DescribesWhatItFound) {
  const DriverProbe p = probe_cuda_driver();
  const std::string d = describe(p);
  if (p.result == DriverProbe::Result::devices)
    EXPECT_NE(d.find("CUDA device(s)"), std::string::npos);
  else
    EXPECT_EQ(d.rfind("no CUDA device", 0), 0u) << d;
}

// A child forked (without exec) from a captured process must be inert:
// CUPTI's inherited state may still ask for buffers, and gets none.
TEST(ForkedChild, BufferRequestsAreDeclinedAndBuffersRecycled) {
  BufferPool pool(64 * 1024, 4);
  pool.reserve(4);
  cupti::set_buffer_pool(&pool);
  std::uint8_t* held = pool.acquire();  // CUPTI held this buffer at fork time
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    cupti::make_inert();  // what the pthread_atfork child handler does
    std::uint8_t* b = nullptr;
    std::size_t size = 1, max = 1;
    cupti::detail::buffer_requested(&b, &size, &max);
    int failures = (b != nullptr) + (size != 0);
    const std::size_t free_before = pool.free_count();
    cupti::detail::buffer_completed(nullptr, 0, held, pool.buffer_bytes(), 100);
    failures += pool.free_count() != free_before + 1;  // recycled, not queued for a consumer
    BufferPool::Completed c;
    failures += pool.pop_completed(&c);
    ::_exit(failures);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The parent is unaffected.
  std::uint8_t* b = nullptr;
  std::size_t size = 0, max = 0;
  cupti::detail::buffer_requested(&b, &size, &max);
  EXPECT_NE(b, nullptr);
  pool.recycle(b);
  pool.recycle(held);
  cupti::set_buffer_pool(nullptr);
}

// The injection library as CUDA would use it (dlopen + InitializeInjection).
class InjectionLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = ::dlopen(GPUSCOPE_BINARY_DIR "/lib/gpuscope/libgpuscope_inject.so", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << ::dlerror();
  }
  void* handle_ = nullptr;  // left loaded: CUDA never unloads it either
};

TEST_F(InjectionLibrary, ExportsOnlyTheEntryPoints) {
  EXPECT_NE(::dlsym(handle_, "InitializeInjection"), nullptr);
  EXPECT_NE(::dlsym(handle_, "InitializeInjectionNvtx2"), nullptr);
  EXPECT_NE(::dlsym(handle_, "InitializeInjectionNvtxExtension"), nullptr);
  // Our C++ code stays private (no clash with the program's own copies).
  EXPECT_EQ(::dlsym(handle_, "_ZN8gpuscope7capture5startERKNS0_7OptionsE"), nullptr);
  EXPECT_EQ(::dlsym(handle_, "_ZN8gpuscope12TraceBuilder5freezeEv"), nullptr);
  EXPECT_EQ(::dlsym(handle_, "InitializeInjectionNvtx2_fnptr"), nullptr);
}

TEST_F(InjectionLibrary, WithoutAGpuItReportsAndLetsTheProgramRun) {
  if (have_gpu()) GTEST_SKIP() << "needs a machine without a GPU";
  TempDir dir;
  ::setenv(kEnvReportDir, dir.path().c_str(), 1);
  ::setenv(kEnvOutput, (dir.path() / "x-%p.gscope").c_str(), 1);
  auto init = reinterpret_cast<int (*)()>(::dlsym(handle_, "InitializeInjection"));
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init(), 1);  // never make cuInit fail
  EXPECT_EQ(init(), 1);  // idempotent
  ::unsetenv(kEnvReportDir);
  ::unsetenv(kEnvOutput);
  const auto reports = read_process_reports(dir.path().string());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].pid, static_cast<std::uint32_t>(::getpid()));
  EXPECT_EQ(reports[0].state, "failed");
  EXPECT_NE(reports[0].summary.message.find("CUPTI could not start"), std::string::npos) << reports[0].summary.message;
  EXPECT_NE(reports[0].summary.message.find("nothing was captured"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir.path()))  // no trace file, only the report
    EXPECT_EQ(e.path().extension(), ".report") << e.path();
}

TEST(ProcessReports, RoundTrip) {
  TempDir dir;
  ProcessReport r;
  r.pid = 42;
  r.command = "python train.py\n--x";
  r.state = "finished";
  r.summary.ok = true;
  r.summary.output = "/tmp/a.gscope";
  r.summary.message = "wrote it";
  r.summary.kernels = 123456789012ull;
  r.summary.dropped_records = 5;
  r.summary.overhead_ns = 77;
  r.summary.pool_peak_bytes = 1 << 22;
  ASSERT_TRUE(write_process_report(dir.path().string(), r));
  r.pid = 7;
  r.state = "failed";
  r.summary.ok = false;
  ASSERT_TRUE(write_process_report(dir.path().string(), r));
  const auto all = read_process_reports(dir.path().string());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].pid, 7u);  // sorted by pid
  EXPECT_EQ(all[1].pid, 42u);
  EXPECT_EQ(all[1].state, "finished");
  EXPECT_TRUE(all[1].summary.ok);
  EXPECT_EQ(all[1].command, "python train.py --x");  // one line
  EXPECT_EQ(all[1].summary.output, "/tmp/a.gscope");
  EXPECT_EQ(all[1].summary.kernels, 123456789012ull);
  EXPECT_EQ(all[1].summary.dropped_records, 5u);
  EXPECT_EQ(all[1].summary.overhead_ns, 77u);
  EXPECT_EQ(all[1].summary.pool_peak_bytes, 1u << 22);
  EXPECT_FALSE(all[0].summary.ok);
}

}  // namespace
}  // namespace gpuscope::capture
