// Launch-bound microbenchmark for capture overhead (tests/gpu/capture_check.sh).
//
//   launch_bench N             launches N empty kernels back to back on one
//                              stream; prints the host time per launch
//   launch_bench --seconds S   launches for S seconds (in batches of 10,000,
//                              synchronizing after each); prints launches,
//                              launches/s and the process's peak RSS (VmHWM)
//
// Output is one line of key=value pairs for the script to parse.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

__global__ void empty_kernel() {}

static long peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  long long launches = 200000;
  double seconds = 0;
  if (argc == 3 && std::strcmp(argv[1], "--seconds") == 0)
    seconds = std::atof(argv[2]);
  else if (argc == 2)
    launches = std::atoll(argv[1]);
  if (launches <= 0 || seconds < 0) {
    std::fprintf(stderr, "usage: launch_bench [N | --seconds S]\n");
    return 2;
  }
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("launch_bench: no CUDA device\n");
    return 7;
  }
  for (int i = 0; i < 2000; ++i) empty_kernel<<<1, 1, 0, s>>>();  // warm up (module load, first launches)
  cudaStreamSynchronize(s);

  if (seconds > 0) {
    const auto t0 = Clock::now();
    long long n = 0;
    while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
      for (int i = 0; i < 10000; ++i) empty_kernel<<<1, 1, 0, s>>>();
      cudaStreamSynchronize(s);
      n += 10000;
    }
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("launches=%lld seconds=%.3f launches_per_s=%.0f vmhwm_kb=%ld\n", n, dt, n / dt, peak_rss_kb());
  } else {
    const auto t0 = Clock::now();
    for (long long i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, s>>>();
    const auto t1 = Clock::now();
    cudaStreamSynchronize(s);
    const auto t2 = Clock::now();
    const double launch_s = std::chrono::duration<double>(t1 - t0).count();
    const double total_s = std::chrono::duration<double>(t2 - t0).count();
    std::printf("launches=%lld us_per_launch=%.4f us_per_kernel_end_to_end=%.4f vmhwm_kb=%ld\n", launches,
                1e6 * launch_s / launches, 1e6 * total_s / launches, peak_rss_kb());
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::printf("launch_bench: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
