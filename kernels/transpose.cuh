// NCHW <-> NHWC layout changes. Per image, NCHW is a [C x HW] matrix and NHWC
// its transpose [HW x C]; the classic 32x32 shared-memory tile keeps both the
// read and the write coalesced (the +1 column avoids bank conflicts).
// --bn transpose runs these around every batch norm, as frameworks did when
// the fast kernel wanted the other layout.
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

// in: [batch][rows][cols] -> out: [batch][cols][rows]; block (32, 8).
template <class T>
__device__ __forceinline__ void transpose_tile(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[32][33];
  const std::int64_t base = std::int64_t{blockIdx.z} * rows * cols;
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
  for (int dy = threadIdx.y; dy < 32; dy += 8) {
    const int r = r0 + dy, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[dy][threadIdx.x] = in[base + std::int64_t{r} * cols + c];
  }
  __syncthreads();
  for (int dy = threadIdx.y; dy < 32; dy += 8) {
    const int c = c0 + dy, r = r0 + threadIdx.x;
    if (r < rows && c < cols) out[base + std::int64_t{c} * rows + r] = tile[threadIdx.x][dy];
  }
}

template <class T>
__global__ void transpose_nchw_to_nhwc_kernel(const T* __restrict__ x, T* __restrict__ y, int c, int hw) {
  transpose_tile<T>(x, y, c, hw);
}

template <class T>
__global__ void transpose_nhwc_to_nchw_kernel(const T* __restrict__ x, T* __restrict__ y, int c, int hw) {
  transpose_tile<T>(x, y, hw, c);
}

// ---- kernel launchers ------------------------------------------------------------

static dim3 transpose_grid(int rows, int cols, int batch) {
  return dim3(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>((rows + 31) / 32),
              static_cast<unsigned>(batch));
}

void transpose_nchw_to_nhwc(DType t, const void* x, void* y, Shape s, cudaStream_t stream) {
  require_arg(s.n <= 65535, "transpose: batch too large");
  GS_DISPATCH(t, T, {
    transpose_nchw_to_nhwc_kernel<T><<<transpose_grid(s.c, s.hw(), s.n), dim3(32, 8), 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), s.c, s.hw());
  });
  check_launch("transpose_nchw_to_nhwc");
}

void transpose_nhwc_to_nchw(DType t, const void* x, void* y, Shape s, cudaStream_t stream) {
  require_arg(s.n <= 65535, "transpose: batch too large");
  GS_DISPATCH(t, T, {
    transpose_nhwc_to_nchw_kernel<T><<<transpose_grid(s.hw(), s.c, s.n), dim3(32, 8), 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), s.c, s.hw());
  });
  check_launch("transpose_nhwc_to_nchw");
}

}  // namespace gpuscope::kernels
