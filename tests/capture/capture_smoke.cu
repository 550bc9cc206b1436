// A small CUDA program for end-to-end tests of `gpuscope capture`.
// Without a GPU it says so and exits with status 7 (so tests can check that
// gpuscope returns the program's own status). With one, it launches known
// work: 8 kernels on two streams inside NVTX ranges, one pageable copy, then
// exits with status 0.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <vector>

__global__ void smoke_add(float* x, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}

int main() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("capture_smoke: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 7;
  }
  const int count = 1 << 16;
  float* d = nullptr;
  if (cudaMalloc(&d, count * sizeof(float)) != cudaSuccess) return 2;
  cudaStream_t s[2];
  for (auto& st : s) cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  nvtxRangePushA("smoke");
  for (int i = 0; i < 8; ++i) smoke_add<<<count / 256, 256, 0, s[i % 2]>>>(d, count, 1.0f);
  std::vector<float> host(count);
  cudaDeviceSynchronize();
  cudaMemcpy(host.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost);
  nvtxRangePop();
  for (auto& st : s) cudaStreamDestroy(st);
  cudaFree(d);
  std::printf("capture_smoke: ok, x[0] = %.0f\n", host[0]);
  return host[0] == 8.0f ? 0 : 1;
}
