// Global average pooling (h x w -> 1 per channel) in front of the classifier,
// producing the row-major [n x c] matrix cuBLAS multiplies, and its gradient.
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

// One thread per (n, c); consecutive threads take consecutive channels, so
// NHWC reads coalesce and NCHW reads walk contiguous h*w runs.
template <class T>
__global__ void avgpool_forward_kernel(const T* __restrict__ x, T* __restrict__ y, Shape s, Layout l) {
  const int nc = blockIdx.x * blockDim.x + threadIdx.x;
  if (nc >= s.n * s.c) return;
  const int n = nc / s.c, c = nc % s.c;
  float sum = 0.0f;
  for (int h = 0; h < s.h; ++h)
    for (int w = 0; w < s.w; ++w) sum += to_f32(x[offset(s, l, n, c, h, w)]);
  y[nc] = from_f32<T>(sum / static_cast<float>(s.hw()));
}

template <class T>
__global__ void avgpool_backward_kernel(const T* __restrict__ dy, T* __restrict__ dx, Shape s, Layout l) {
  const float scale = 1.0f / static_cast<float>(s.hw());
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < s.count();
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t n = l == Layout::nchw ? i / (std::int64_t{s.c} * s.hw()) : i / (std::int64_t{s.hw()} * s.c);
    dx[i] = from_f32<T>(to_f32(dy[n * s.c + channel_of(i, s, l)]) * scale);
  }
}

// ---- kernel launchers ------------------------------------------------------------

void avgpool_forward(const DeviceTensor& x, void* y, cudaStream_t stream) {
  GS_DISPATCH(x.dtype, T, {
    avgpool_forward_kernel<T><<<(x.shape.n * x.shape.c + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        static_cast<const T*>(x.data), static_cast<T*>(y), x.shape, x.layout);
  });
  check_launch("avgpool_forward");
}

void avgpool_backward(const void* dy, const DeviceTensor& dx, cudaStream_t stream) {
  GS_DISPATCH(dx.dtype, T, {
    avgpool_backward_kernel<T><<<grid_for(dx.shape.count()), kThreads, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<T*>(dx.data), dx.shape, dx.layout);
  });
  check_launch("avgpool_backward");
}

}  // namespace gpuscope::kernels
