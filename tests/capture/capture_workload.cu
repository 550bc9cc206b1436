// A CUDA program with known work, for tests/gpu/capture_check.sh: gpuscope's
// trace of it is compared with what it did (tests/capture/workload_checks.h).
//
//   capture_workload                      run (under `gpuscope capture`)
//   capture_workload --in-process OUT     capture itself through gpuscope/capture.h; if
//                                         that cannot start (e.g. `gpuscope capture` already
//                                         holds CUPTI) it says why and runs on unprofiled
//   capture_workload --fork               at the end, fork a child that runs no CUDA and
//                                         calls exit() (its capture must be inert)
//
// Phases (NVTX ranges inside "workload"): overlap (spin kernels on two
// streams), copies (pageable and pinned copies, memsets; also the
// cudaProfilerStart/Stop range), graph (a 3-kernel CUDA graph launched 5
// times), nccl (all-reduces on one GPU; skipped when built without NCCL).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture/capture_workload.h"
#include "gpuscope/capture.h"
#if GPUSCOPE_WORKLOAD_NCCL
#include <nccl.h>
#endif

namespace w = gpuscope::capture::workload;

#define CHECK_CUDA(call)                                                                                             \
  do {                                                                                                               \
    const cudaError_t e_ = (call);                                                                                   \
    if (e_ != cudaSuccess) {                                                                                         \
      std::fprintf(stderr, "capture_workload: %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                                                  \
    }                                                                                                                \
  } while (0)

// ---- CUDA kernels

// Busy-waits on the GPU's global timer, so the kernel lasts `ns` whatever the clock.
__global__ void spin_kernel(long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < static_cast<unsigned long long>(ns));
}

__global__ void graph_node_kernel(float* x, int n, int node) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + static_cast<float>(node);
}

// ---- phases

void overlap(cudaStream_t a, cudaStream_t b) {
  nvtxRangePushA("overlap");
  for (int i = 0; i < w::kSpinKernelsPerStream; ++i) {
    spin_kernel<<<1, 1, 0, a>>>(w::kSpinNs);
    spin_kernel<<<1, 1, 0, b>>>(w::kSpinNs);
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamSynchronize(a));
  CHECK_CUDA(cudaStreamSynchronize(b));
  nvtxRangePop();
}

void copies(cudaStream_t s) {
  std::vector<char> pageable(w::kCopyBytes, 1);
  void* pinned = nullptr;
  void* dev = nullptr;
  CHECK_CUDA(cudaMallocHost(&pinned, w::kCopyBytes));
  CHECK_CUDA(cudaMalloc(&dev, w::kCopyBytes));
  std::memset(pinned, 2, w::kCopyBytes);
  CHECK_CUDA(cudaProfilerStart());
  nvtxRangePushA("copies");
  for (int i = 0; i < w::kPageableCopies; ++i)
    CHECK_CUDA(cudaMemcpy(dev, pageable.data(), w::kCopyBytes, cudaMemcpyHostToDevice));
  for (int i = 0; i < w::kPinnedCopiesEachWay; ++i) {
    CHECK_CUDA(cudaMemcpyAsync(dev, pinned, w::kCopyBytes, cudaMemcpyHostToDevice, s));
    CHECK_CUDA(cudaMemcpyAsync(pinned, dev, w::kCopyBytes, cudaMemcpyDeviceToHost, s));
  }
  for (int i = 0; i < w::kMemsets; ++i) CHECK_CUDA(cudaMemsetAsync(dev, i, w::kCopyBytes, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  nvtxRangePop();
  CHECK_CUDA(cudaProfilerStop());
  CHECK_CUDA(cudaFree(dev));
  CHECK_CUDA(cudaFreeHost(pinned));
}

void graph(cudaStream_t s) {
  const int n = 1 << 20;
  float* x = nullptr;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMemsetAsync(x, 0, n * sizeof(float), s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  cudaGraph_t g;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int node = 0; node < w::kGraphNodes; ++node) graph_node_kernel<<<n / 256, 256, 0, s>>>(x, n, node);
  CHECK_CUDA(cudaStreamEndCapture(s, &g));
  CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
  nvtxRangePushA("graph");
  for (int i = 0; i < w::kGraphLaunches; ++i) CHECK_CUDA(cudaGraphLaunch(exec, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  nvtxRangePop();
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(g));
  CHECK_CUDA(cudaFree(x));
}

void nccl(cudaStream_t s) {
#if GPUSCOPE_WORKLOAD_NCCL
  ncclComm_t comm;
  int dev = 0;
  if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess) {
    std::fprintf(stderr, "capture_workload: ncclCommInitAll failed\n");
    std::exit(1);
  }
  const std::size_t count = 1 << 20;
  float *in = nullptr, *out = nullptr;
  CHECK_CUDA(cudaMalloc(&in, count * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out, count * sizeof(float)));
  CHECK_CUDA(cudaMemsetAsync(in, 0, count * sizeof(float), s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  nvtxRangePushA("nccl");
  // Out of place and averaging, so that even one rank has GPU work to do.
  for (int i = 0; i < w::kAllReduces; ++i)
    if (ncclAllReduce(in, out, count, ncclFloat, ncclAvg, comm, s) != ncclSuccess) {
      std::fprintf(stderr, "capture_workload: ncclAllReduce failed\n");
      std::exit(1);
    }
  CHECK_CUDA(cudaStreamSynchronize(s));
  nvtxRangePop();
  ncclCommDestroy(comm);
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
#else
  (void)s;
  std::printf("capture_workload: nccl phase skipped (built without NCCL)\n");
#endif
}

int main(int argc, char** argv) {
  const char* in_process = nullptr;
  bool fork_child = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--in-process") == 0 && i + 1 < argc)
      in_process = argv[++i];
    else if (std::strcmp(argv[i], "--fork") == 0)
      fork_child = true;
    else {
      std::fprintf(stderr, "usage: capture_workload [--in-process OUT.gscope] [--fork]\n");
      return 2;
    }
  }
  bool capturing = false;
  if (in_process) {
    gpuscope::capture::Options o;
    o.output = in_process;
    const auto s = gpuscope::capture::start(o);
    capturing = s.ok;
    // What the header promises: a capture that cannot start never stops the program.
    std::printf("capture_workload: in-process capture: %s%s\n", s.ok ? "" : "not started: ", s.message.c_str());
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("capture_workload: no CUDA device\n");
    return 7;
  }
  cudaStream_t a, b;
  CHECK_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  nvtxRangePushA(w::kOuterRange);
  overlap(a, b);
  copies(a);
  graph(a);
  nccl(a);
  nvtxRangePop();
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaStreamDestroy(a));
  CHECK_CUDA(cudaStreamDestroy(b));
  if (fork_child) {
    // fork without exec while CUPTI is active: the child touches no CUDA and
    // leaves through exit(), so atexit handlers (gpuscope's too) run in it.
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::printf("capture_workload: forked child %d exits\n", static_cast<int>(::getpid()));
      std::exit(0);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "capture_workload: the forked child failed (status %d)\n", status);
      return 1;
    }
    std::printf("capture_workload: forked child %d exited with 0\n", static_cast<int>(pid));
  }
  if (capturing) {
    const auto s = gpuscope::capture::stop();
    std::printf("capture_workload: in-process capture: %s\n", s.message.c_str());
    if (!s.ok) return 3;
  }
  std::printf("capture_workload: done\n");
  return 0;
}
