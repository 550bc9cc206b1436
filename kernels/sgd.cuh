// SGD with momentum and weight decay (PyTorch's formulation, see
// kernels/reference/sgd.h), fp32 master weights and momentum, gradients in the
// training dtype, and — for bf16 training — the bf16 copy of the weights the
// convolutions and the classifier read, written in the same pass.
//
// Two kernels on purpose: the per-tensor one is what a framework launches per
// variable (--update sync: ~60 launches a step); the flat one sweeps a whole
// bucket of the flat parameter buffer with 16-byte accesses in one launch
// (--update overlap).
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

template <class GT>
__device__ __forceinline__ float sgd_step(float& w, float& v, float g, SgdHyper h) {
  v = fmaf(h.momentum, v, fmaf(h.weight_decay, w, g));
  w = fmaf(-h.lr, v, w);
  return w;
}

template <class GT>
__global__ void sgd_momentum_kernel(float* __restrict__ w, float* __restrict__ v, const GT* __restrict__ g,
                                    __nv_bfloat16* __restrict__ shadow, std::int64_t n, SgdHyper h) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    float wi = w[i], vi = v[i];
    sgd_step<GT>(wi, vi, to_f32(g[i]), h);
    w[i] = wi;
    v[i] = vi;
    if (shadow) shadow[i] = __float2bfloat16_rn(wi);
  }
}

template <class GT>
__global__ void sgd_momentum_flat_kernel(float* __restrict__ w, float* __restrict__ v, const GT* __restrict__ g,
                                         __nv_bfloat16* __restrict__ shadow, std::int64_t n, SgdHyper h) {
  const std::int64_t quads = n / 4;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < quads; q += stride) {
    float4 wv = reinterpret_cast<float4*>(w)[q];
    float4 vv = reinterpret_cast<float4*>(v)[q];
    float gv[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) gv[k] = to_f32(g[q * 4 + k]);
    sgd_step<GT>(wv.x, vv.x, gv[0], h);
    sgd_step<GT>(wv.y, vv.y, gv[1], h);
    sgd_step<GT>(wv.z, vv.z, gv[2], h);
    sgd_step<GT>(wv.w, vv.w, gv[3], h);
    reinterpret_cast<float4*>(w)[q] = wv;
    reinterpret_cast<float4*>(v)[q] = vv;
    if (shadow) {
      reinterpret_cast<__nv_bfloat162*>(shadow)[2 * q] = __floats2bfloat162_rn(wv.x, wv.y);
      reinterpret_cast<__nv_bfloat162*>(shadow)[2 * q + 1] = __floats2bfloat162_rn(wv.z, wv.w);
    }
  }
  for (std::int64_t i = quads * 4 + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    float wi = w[i], vi = v[i];
    sgd_step<GT>(wi, vi, to_f32(g[i]), h);
    w[i] = wi;
    v[i] = vi;
    if (shadow) shadow[i] = __float2bfloat16_rn(wi);
  }
}

__global__ void cast_f32_to_bf16_kernel(const float* __restrict__ x, __nv_bfloat16* __restrict__ y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = __float2bfloat16_rn(x[i]);
}

// ---- kernel launchers ------------------------------------------------------------

void sgd_momentum(float* w, float* v, DType gt, const void* g, void* shadow_bf16, std::int64_t n, SgdHyper h, bool flat,
                  cudaStream_t stream) {
  if (n <= 0) return;
  auto* shadow = static_cast<__nv_bfloat16*>(shadow_bf16);
  GS_DISPATCH(gt, GT, {
    const auto* grad = static_cast<const GT*>(g);
    if (flat) {
      require_arg(aligned16(w) && aligned16(v) && (!shadow || (reinterpret_cast<std::uintptr_t>(shadow) & 7U) == 0),
                  "sgd_momentum: flat buffers must be aligned");
      sgd_momentum_flat_kernel<GT><<<grid_for((n + 3) / 4), kThreads, 0, stream>>>(w, v, grad, shadow, n, h);
    } else {
      sgd_momentum_kernel<GT><<<grid_for(n), kThreads, 0, stream>>>(w, v, grad, shadow, n, h);
    }
  });
  check_launch("sgd_momentum");
}

void cast_f32_to_bf16(const float* x, void* y, std::int64_t n, cudaStream_t stream) {
  cast_f32_to_bf16_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, static_cast<__nv_bfloat16*>(y), n);
  check_launch("cast_f32_to_bf16");
}

}  // namespace gpuscope::kernels
