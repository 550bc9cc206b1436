// Broadcasting, the report's second hotspot (20% of GPU time): per-channel
// vectors (batch-norm scale and shift, biases) materialised as full tensors,
// then consumed by plain elementwise kernels — how TensorFlow's Eigen
// expressions ran `x * scale + shift` without fusion. The fused path
// (bn_forward_apply) reads the vectors directly instead.
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

// A generic broadcast, as Eigen's TensorBroadcastingOp evaluates one: every
// output element's coordinates are decomposed dimension by dimension, then
// mapped to the (1, C, 1, 1) source. That index arithmetic, not the bytes
// written, is most of its cost — as it was in the report's profile.
template <class T>
__global__ void broadcast_channel_kernel(const float* __restrict__ v, T* __restrict__ out, Shape s, Layout l) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < s.count();
       i += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t rest = i;
    int coord[4];  // innermost dimension first
    const int dims[4] = {l == Layout::nchw ? s.w : s.c, l == Layout::nchw ? s.h : s.w, l == Layout::nchw ? s.c : s.h,
                         s.n};
#pragma unroll
    for (int d = 0; d < 4; ++d) {
      coord[d] = static_cast<int>(rest % dims[d]);
      rest /= dims[d];
    }
    const int c = l == Layout::nchw ? coord[2] : coord[0];
    out[i] = from_f32<T>(v[c]);
  }
}

__global__ void broadcast_bias_kernel(const float* __restrict__ bias, float* __restrict__ out, int rows, int cols) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows * cols; i += gridDim.x * blockDim.x)
    out[i] = bias[i % cols];
}

// Elementwise binary ops in 16-byte packs (the tail, if any, element by
// element). out may alias a or b (in-place accumulation): no __restrict__.
template <class T, bool kMul>
__device__ __forceinline__ void binary_op(const T* a, const T* b, T* out, std::int64_t n) {
  constexpr int P = Pack<T>::kSize;
  const std::int64_t packs = n / P;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < packs; i += stride) {
    const Pack<T> x = load_pack(a + i * P), y = load_pack(b + i * P);
    Pack<T> r;
#pragma unroll
    for (int k = 0; k < P; ++k)
      r.v[k] = from_f32<T>(kMul ? to_f32(x.v[k]) * to_f32(y.v[k]) : to_f32(x.v[k]) + to_f32(y.v[k]));
    store_pack(out + i * P, r);
  }
  for (std::int64_t i = packs * P + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    out[i] = from_f32<T>(kMul ? to_f32(a[i]) * to_f32(b[i]) : to_f32(a[i]) + to_f32(b[i]));
}

template <class T>
__global__ void elementwise_mul_kernel(const T* a, const T* b, T* out, std::int64_t n) {
  binary_op<T, true>(a, b, out, n);
}
template <class T>
__global__ void elementwise_add_kernel(const T* a, const T* b, T* out, std::int64_t n) {
  binary_op<T, false>(a, b, out, n);
}

// ---- kernel launchers ------------------------------------------------------------

void broadcast_channel(const float* v, const DeviceTensor& out, cudaStream_t stream) {
  GS_DISPATCH(out.dtype, T, {
    broadcast_channel_kernel<T>
        <<<grid_for(out.shape.count()), kThreads, 0, stream>>>(v, static_cast<T*>(out.data), out.shape, out.layout);
  });
  check_launch("broadcast_channel");
}

void broadcast_bias(const float* bias, float* out, int rows, int cols, cudaStream_t stream) {
  broadcast_bias_kernel<<<grid_for(std::int64_t{rows} * cols), kThreads, 0, stream>>>(bias, out, rows, cols);
  check_launch("broadcast_bias");
}

// Packs need 16-byte aligned pointers; every buffer of the trainer's arena is.
static int binary_grid(std::int64_t n, int pack) { return grid_for((n + pack - 1) / pack); }

void elementwise_mul(DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream) {
  require_arg(aligned16(a) && aligned16(b) && aligned16(out), "elementwise_mul: pointers must be 16-byte aligned");
  GS_DISPATCH(t, T, {
    elementwise_mul_kernel<T><<<binary_grid(n, Pack<T>::kSize), kThreads, 0, stream>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), n);
  });
  check_launch("elementwise_mul");
}

void elementwise_add(DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream) {
  require_arg(aligned16(a) && aligned16(b) && aligned16(out), "elementwise_add: pointers must be 16-byte aligned");
  GS_DISPATCH(t, T, {
    elementwise_add_kernel<T><<<binary_grid(n, Pack<T>::kSize), kThreads, 0, stream>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), n);
  });
  check_launch("elementwise_add");
}

}  // namespace gpuscope::kernels
