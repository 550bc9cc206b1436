// ReLU and the residual add as stand-alone kernels: what runs when batch norm
// is not fused (--bn naive|transpose or --bias broadcast). The fused batch-norm
// kernels fold both in.
//
// ReLU's backward masks with the forward *output* (y > 0 exactly where x > 0),
// so the pre-activation need not be kept.
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

template <class T>
__global__ void relu_forward_kernel(const T* x, T* y, std::int64_t n) {
  constexpr int P = Pack<T>::kSize;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t packs = n / P;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < packs; i += stride) {
    Pack<T> v = load_pack(x + i * P);
#pragma unroll
    for (int k = 0; k < P; ++k) v.v[k] = from_f32<T>(fmaxf(to_f32(v.v[k]), 0.0f));
    store_pack(y + i * P, v);
  }
  for (std::int64_t i = packs * P + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    y[i] = from_f32<T>(fmaxf(to_f32(x[i]), 0.0f));
}

template <class T>
__global__ void relu_backward_kernel(const T* dy, const T* y, T* dx, std::int64_t n) {
  constexpr int P = Pack<T>::kSize;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t packs = n / P;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < packs; i += stride) {
    const Pack<T> g = load_pack(dy + i * P), o = load_pack(y + i * P);
    Pack<T> r;
#pragma unroll
    for (int k = 0; k < P; ++k) r.v[k] = to_f32(o.v[k]) > 0.0f ? g.v[k] : from_f32<T>(0.0f);
    store_pack(dx + i * P, r);
  }
  for (std::int64_t i = packs * P + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    dx[i] = to_f32(y[i]) > 0.0f ? dy[i] : from_f32<T>(0.0f);
}

template <class T>
__global__ void residual_add_kernel(const T* a, const T* b, T* out, std::int64_t n) {
  constexpr int P = Pack<T>::kSize;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t packs = n / P;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < packs; i += stride) {
    const Pack<T> x = load_pack(a + i * P), y = load_pack(b + i * P);
    Pack<T> r;
#pragma unroll
    for (int k = 0; k < P; ++k) r.v[k] = from_f32<T>(to_f32(x.v[k]) + to_f32(y.v[k]));
    store_pack(out + i * P, r);
  }
  for (std::int64_t i = packs * P + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    out[i] = from_f32<T>(to_f32(a[i]) + to_f32(b[i]));
}

// ---- kernel launchers ------------------------------------------------------------

static int pack_grid(std::int64_t n, DType t) { return grid_for((n + 7) / (t == DType::f32 ? 4 : 8)); }

void relu_forward(DType t, const void* x, void* y, std::int64_t n, cudaStream_t stream) {
  require_arg(aligned16(x) && aligned16(y), "relu_forward: pointers must be 16-byte aligned");
  GS_DISPATCH(t, T, {
    relu_forward_kernel<T><<<pack_grid(n, t), kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
  });
  check_launch("relu_forward");
}

void relu_backward(DType t, const void* dy, const void* y, void* dx, std::int64_t n, cudaStream_t stream) {
  require_arg(aligned16(dy) && aligned16(y) && aligned16(dx), "relu_backward: pointers must be 16-byte aligned");
  GS_DISPATCH(t, T, {
    relu_backward_kernel<T><<<pack_grid(n, t), kThreads, 0, stream>>>(static_cast<const T*>(dy),
                                                                      static_cast<const T*>(y), static_cast<T*>(dx), n);
  });
  check_launch("relu_backward");
}

void residual_add(DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream) {
  require_arg(aligned16(a) && aligned16(b) && aligned16(out), "residual_add: pointers must be 16-byte aligned");
  GS_DISPATCH(t, T, {
    residual_add_kernel<T><<<pack_grid(n, t), kThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                                     static_cast<T*>(out), n);
  });
  check_launch("residual_add");
}

}  // namespace gpuscope::kernels
