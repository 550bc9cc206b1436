// Training-mode batch normalisation (statistics over n, h, w per channel),
// forward and backward side by side, in the variants the switches select.
//
// The one non-obvious decision: every reduction writes per-(chunk, channel)
// fp64 partial sums and a separate finalize kernel adds them in a fixed order
// — no atomics — so statistics are bit-reproducible run to run, and the naive
// and parallel reductions share the finalize. Sums are taken around a pivot
// (the channel's first element, forward) or the mean (backward), which keeps
// the one-pass variance and the x-hat correlation free of cancellation.
//
//   naive     one block per channel walks all n*h*w elements with the generic
//             channel_element() indexing: C blocks (16..128) on a 132-SM GPU,
//             strided loads in NHWC — TensorFlow's NCHW batch norm over [0,2,3].
//             (1024 threads and unrolled loads keep it from being pathological
//             beyond that: with 256 threads one SM pulls too few bytes in
//             flight and batch norm would swamp the seed profile.)
//   parallel  many blocks per channel; NHWC maps lanes to channels, NCHW maps
//             lanes along h*w, so loads coalesce in both layouts.
//
// The apply kernels take per-channel coefficients: forward y = a*x + b
// (+ residual) (+ ReLU), backward dx = ka*g + kb*x + kc with g the ReLU-masked
// incoming gradient (formulas in kernels/reference/batchnorm.h).
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- geometry of the reductions ----------------------------------------------
constexpr int kNaiveThreads = 1024;       // one block per channel
constexpr int kNhwcRowsPerChunk = 256;    // block (32 channels x 8 row lanes), 32 rows per thread
constexpr int kNchwElemsPerChunk = 4096;  // block 256 along h*w, 16 elements per thread

static int bn_chunks(Shape s, Layout l) {
  const std::int64_t m = s.per_channel();
  const int per = l == Layout::nhwc ? kNhwcRowsPerChunk : kNchwElemsPerChunk;
  return static_cast<int>((m + per - 1) / per);
}

std::size_t bn_partials_bytes(Shape s, Layout l) {
  return static_cast<std::size_t>(bn_chunks(s, l)) * s.c * 2 * sizeof(double);
}

// ---- CUDA kernels: forward statistics --------------------------------------------

template <class T>
__global__ void bn_forward_naive_stats_kernel(const T* __restrict__ x, Shape s, Layout l, double* __restrict__ part) {
  __shared__ double red[kNaiveThreads / 32];
  const int c = blockIdx.x;
  const std::int64_t m = s.per_channel();
  const float pivot = to_f32(x[channel_element(s, l, c, 0)]);
  float s1 = 0.0f, s2 = 0.0f;
#pragma unroll 4
  for (std::int64_t j = threadIdx.x; j < m; j += kNaiveThreads) {
    const float v = to_f32(x[channel_element(s, l, c, j)]) - pivot;
    s1 += v;
    s2 += v * v;
  }
  const double t1 = block_sum<kNaiveThreads>(s1, red);
  const double t2 = block_sum<kNaiveThreads>(s2, red);
  if (threadIdx.x == 0) part[2 * c] = t1, part[2 * c + 1] = t2;
}

template <class T>
__global__ void bn_forward_stats_nhwc_kernel(const T* __restrict__ x, Shape s, double* __restrict__ part) {
  __shared__ double red[2][8][32];
  const int c = blockIdx.x * 32 + threadIdx.x;
  const std::int64_t m = s.per_channel();
  const std::int64_t begin = std::int64_t{blockIdx.y} * kNhwcRowsPerChunk;
  const std::int64_t end = min(m, begin + kNhwcRowsPerChunk);
  float s1 = 0.0f, s2 = 0.0f;
  if (c < s.c) {
    const float pivot = to_f32(x[c]);
    for (std::int64_t r = begin + threadIdx.y; r < end; r += 8) {
      const float v = to_f32(x[r * s.c + c]) - pivot;
      s1 += v;
      s2 += v * v;
    }
  }
  red[0][threadIdx.y][threadIdx.x] = s1;
  red[1][threadIdx.y][threadIdx.x] = s2;
  __syncthreads();
  if (threadIdx.y == 0 && c < s.c) {
    double t1 = 0, t2 = 0;
    for (int k = 0; k < 8; ++k) t1 += red[0][k][threadIdx.x], t2 += red[1][k][threadIdx.x];
    double* p = part + (std::int64_t{blockIdx.y} * s.c + c) * 2;
    p[0] = t1, p[1] = t2;
  }
}

template <class T>
__global__ void bn_forward_stats_nchw_kernel(const T* __restrict__ x, Shape s, double* __restrict__ part) {
  __shared__ double red[kThreads / 32];
  const int c = blockIdx.x;
  const std::int64_t m = s.per_channel();
  const std::int64_t begin = std::int64_t{blockIdx.y} * kNchwElemsPerChunk;
  const std::int64_t end = min(m, begin + kNchwElemsPerChunk);
  const float pivot = to_f32(x[channel_element(s, Layout::nchw, c, 0)]);
  float s1 = 0.0f, s2 = 0.0f;
  for (std::int64_t j = begin + threadIdx.x; j < end; j += kThreads) {
    const float v = to_f32(x[channel_element(s, Layout::nchw, c, j)]) - pivot;
    s1 += v;
    s2 += v * v;
  }
  const double t1 = block_sum<kThreads>(s1, red);
  const double t2 = block_sum<kThreads>(s2, red);
  if (threadIdx.x == 0) {
    double* p = part + (std::int64_t{blockIdx.y} * s.c + c) * 2;
    p[0] = t1, p[1] = t2;
  }
}

// One block per channel adds the chunks in order and derives everything the
// forward and backward passes need.
template <class T>
__global__ void bn_forward_finalize_kernel(const double* __restrict__ part, int chunks, const T* __restrict__ x,
                                           Shape s, Layout l, const float* __restrict__ gamma,
                                           const float* __restrict__ beta, float* mean, float* invstd, float* a,
                                           float* b) {
  __shared__ double red[kThreads / 32];
  const int c = blockIdx.x;
  double t1 = 0, t2 = 0;
  for (int k = threadIdx.x; k < chunks; k += kThreads) {
    t1 += part[(std::int64_t{k} * s.c + c) * 2];
    t2 += part[(std::int64_t{k} * s.c + c) * 2 + 1];
  }
  t1 = block_sum<kThreads>(t1, red);
  t2 = block_sum<kThreads>(t2, red);
  if (threadIdx.x == 0) {
    const double m = static_cast<double>(s.per_channel());
    const double pivot = to_f32(x[channel_element(s, l, c, 0)]);
    const double d = t1 / m;
    const double var = fmax(t2 / m - d * d, 0.0);
    const double mu = pivot + d;
    const double is = 1.0 / sqrt(var + static_cast<double>(kBnEpsilon));
    mean[c] = static_cast<float>(mu);
    invstd[c] = static_cast<float>(is);
    const double sa = gamma[c] * is;
    a[c] = static_cast<float>(sa);
    b[c] = static_cast<float>(beta[c] - mu * sa);
  }
}

// ---- CUDA kernels: forward apply ------------------------------------------------------

// y = relu?(a[c] * x + b[c] + residual?). y may alias residual (no __restrict__).
template <class T>
__global__ void bn_forward_apply_kernel(const T* x, const float* __restrict__ a, const float* __restrict__ b,
                                        const T* residual, bool relu, T* y, Shape s, Layout l) {
  constexpr int P = Pack<T>::kSize;
  const std::int64_t n = s.count(), packs = n / P;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < packs; i += stride) {
    const Pack<T> xv = load_pack(x + i * P);
    Pack<T> rv;
    if (residual) rv = load_pack(residual + i * P);
    Pack<T> out;
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const int c = channel_of(i * P + k, s, l);
      float v = fmaf(a[c], to_f32(xv.v[k]), b[c]);
      if (residual) v += to_f32(rv.v[k]);
      if (relu) v = fmaxf(v, 0.0f);
      out.v[k] = from_f32<T>(v);
    }
    store_pack(y + i * P, out);
  }
  for (std::int64_t i = packs * P + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    const int c = channel_of(i, s, l);
    float v = fmaf(a[c], to_f32(x[i]), b[c]);
    if (residual) v += to_f32(residual[i]);
    if (relu) v = fmaxf(v, 0.0f);
    y[i] = from_f32<T>(v);
  }
}

// ---- CUDA kernels: backward reductions --------------------------------------------------
// partials: sum(g) and sum(g * (x - mean)) per (chunk, channel).

template <class T>
__device__ __forceinline__ float masked_grad(const T* dy, const T* relu_y, std::int64_t i) {
  const float g = to_f32(dy[i]);
  return (relu_y && !(to_f32(relu_y[i]) > 0.0f)) ? 0.0f : g;
}

template <class T>
__global__ void bn_backward_naive_reduce_kernel(const T* __restrict__ dy, const T* __restrict__ relu_y,
                                                const T* __restrict__ x, const float* __restrict__ mean, Shape s,
                                                Layout l, double* __restrict__ part) {
  __shared__ double red[kNaiveThreads / 32];
  const int c = blockIdx.x;
  const std::int64_t m = s.per_channel();
  const float mu = mean[c];
  float s1 = 0.0f, s2 = 0.0f;
#pragma unroll 4
  for (std::int64_t j = threadIdx.x; j < m; j += kNaiveThreads) {
    const std::int64_t i = channel_element(s, l, c, j);
    const float g = masked_grad(dy, relu_y, i);
    s1 += g;
    s2 += g * (to_f32(x[i]) - mu);
  }
  const double t1 = block_sum<kNaiveThreads>(s1, red);
  const double t2 = block_sum<kNaiveThreads>(s2, red);
  if (threadIdx.x == 0) part[2 * c] = t1, part[2 * c + 1] = t2;
}

template <class T>
__global__ void bn_backward_reduce_nhwc_kernel(const T* __restrict__ dy, const T* __restrict__ relu_y,
                                               const T* __restrict__ x, const float* __restrict__ mean, Shape s,
                                               double* __restrict__ part) {
  __shared__ double red[2][8][32];
  const int c = blockIdx.x * 32 + threadIdx.x;
  const std::int64_t m = s.per_channel();
  const std::int64_t begin = std::int64_t{blockIdx.y} * kNhwcRowsPerChunk;
  const std::int64_t end = min(m, begin + kNhwcRowsPerChunk);
  float s1 = 0.0f, s2 = 0.0f;
  if (c < s.c) {
    const float mu = mean[c];
    for (std::int64_t r = begin + threadIdx.y; r < end; r += 8) {
      const std::int64_t i = r * s.c + c;
      const float g = masked_grad(dy, relu_y, i);
      s1 += g;
      s2 += g * (to_f32(x[i]) - mu);
    }
  }
  red[0][threadIdx.y][threadIdx.x] = s1;
  red[1][threadIdx.y][threadIdx.x] = s2;
  __syncthreads();
  if (threadIdx.y == 0 && c < s.c) {
    double t1 = 0, t2 = 0;
    for (int k = 0; k < 8; ++k) t1 += red[0][k][threadIdx.x], t2 += red[1][k][threadIdx.x];
    double* p = part + (std::int64_t{blockIdx.y} * s.c + c) * 2;
    p[0] = t1, p[1] = t2;
  }
}

template <class T>
__global__ void bn_backward_reduce_nchw_kernel(const T* __restrict__ dy, const T* __restrict__ relu_y,
                                               const T* __restrict__ x, const float* __restrict__ mean, Shape s,
                                               double* __restrict__ part) {
  __shared__ double red[kThreads / 32];
  const int c = blockIdx.x;
  const std::int64_t m = s.per_channel();
  const std::int64_t begin = std::int64_t{blockIdx.y} * kNchwElemsPerChunk;
  const std::int64_t end = min(m, begin + kNchwElemsPerChunk);
  const float mu = mean[c];
  float s1 = 0.0f, s2 = 0.0f;
  for (std::int64_t j = begin + threadIdx.x; j < end; j += kThreads) {
    const std::int64_t i = channel_element(s, Layout::nchw, c, j);
    const float g = masked_grad(dy, relu_y, i);
    s1 += g;
    s2 += g * (to_f32(x[i]) - mu);
  }
  const double t1 = block_sum<kThreads>(s1, red);
  const double t2 = block_sum<kThreads>(s2, red);
  if (threadIdx.x == 0) {
    double* p = part + (std::int64_t{blockIdx.y} * s.c + c) * 2;
    p[0] = t1, p[1] = t2;
  }
}

template <class GT>
__global__ void bn_backward_finalize_kernel(const double* __restrict__ part, int chunks, Shape s,
                                            const float* __restrict__ mean, const float* __restrict__ invstd,
                                            const float* __restrict__ gamma, GT* dgamma, GT* dbeta, float* ka,
                                            float* kb, float* kc) {
  __shared__ double red[kThreads / 32];
  const int c = blockIdx.x;
  double sg = 0, sgx = 0;
  for (int k = threadIdx.x; k < chunks; k += kThreads) {
    sg += part[(std::int64_t{k} * s.c + c) * 2];
    sgx += part[(std::int64_t{k} * s.c + c) * 2 + 1];
  }
  sg = block_sum<kThreads>(sg, red);
  sgx = block_sum<kThreads>(sgx, red);
  if (threadIdx.x == 0) {
    const double m = static_cast<double>(s.per_channel());
    const double is = invstd[c];
    const double sum_gxhat = is * sgx;
    const double A = gamma[c] * is;
    const double B = -A * is * (sum_gxhat / m);
    dgamma[c] = from_f32<GT>(static_cast<float>(sum_gxhat));
    dbeta[c] = from_f32<GT>(static_cast<float>(sg));
    ka[c] = static_cast<float>(A);
    kb[c] = static_cast<float>(B);
    kc[c] = static_cast<float>(-A * (sg / m) - B * mean[c]);
  }
}

// ---- CUDA kernels: backward apply -------------------------------------------------------

template <class T>
__global__ void bn_backward_apply_kernel(const T* __restrict__ dy, const T* __restrict__ relu_y,
                                         const T* __restrict__ x, const float* __restrict__ ka,
                                         const float* __restrict__ kb, const float* __restrict__ kc, T* __restrict__ dx,
                                         T* __restrict__ g_out, Shape s, Layout l) {
  constexpr int P = Pack<T>::kSize;
  const std::int64_t n = s.count(), packs = n / P;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < packs; i += stride) {
    const Pack<T> dv = load_pack(dy + i * P), xv = load_pack(x + i * P);
    Pack<T> yv;
    if (relu_y) yv = load_pack(relu_y + i * P);
    Pack<T> out, gv;
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const int c = channel_of(i * P + k, s, l);
      const float g = (relu_y && !(to_f32(yv.v[k]) > 0.0f)) ? 0.0f : to_f32(dv.v[k]);
      out.v[k] = from_f32<T>(fmaf(ka[c], g, fmaf(kb[c], to_f32(xv.v[k]), kc[c])));
      gv.v[k] = from_f32<T>(g);
    }
    store_pack(dx + i * P, out);
    if (g_out) store_pack(g_out + i * P, gv);
  }
  for (std::int64_t i = packs * P + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    const int c = channel_of(i, s, l);
    const float g = masked_grad(dy, relu_y, i);
    dx[i] = from_f32<T>(fmaf(ka[c], g, fmaf(kb[c], to_f32(x[i]), kc[c])));
    if (g_out) g_out[i] = from_f32<T>(g);
  }
}

// ---- kernel launchers ------------------------------------------------------------------

void bn_forward_stats(BnReduction r, const DeviceTensor& x, const float* gamma, const float* beta, float* mean,
                      float* invstd, float* a, float* b, double* partials, cudaStream_t stream) {
  const Shape s = x.shape;
  int chunks = 1;
  GS_DISPATCH(x.dtype, T, {
    const auto* in = static_cast<const T*>(x.data);
    if (r == BnReduction::naive) {
      bn_forward_naive_stats_kernel<T><<<s.c, kNaiveThreads, 0, stream>>>(in, s, x.layout, partials);
    } else {
      chunks = bn_chunks(s, x.layout);
      require_arg(chunks <= 65535, "bn_forward_stats: batch too large");
      if (x.layout == Layout::nhwc)
        bn_forward_stats_nhwc_kernel<T><<<dim3((s.c + 31) / 32, chunks), dim3(32, 8), 0, stream>>>(in, s, partials);
      else
        bn_forward_stats_nchw_kernel<T><<<dim3(s.c, chunks), kThreads, 0, stream>>>(in, s, partials);
    }
    check_launch("bn_forward_stats");
    bn_forward_finalize_kernel<T>
        <<<s.c, kThreads, 0, stream>>>(partials, chunks, in, s, x.layout, gamma, beta, mean, invstd, a, b);
  });
  check_launch("bn_forward_finalize");
}

void bn_forward_apply(const DeviceTensor& x, const float* a, const float* b, const void* residual, bool relu,
                      const DeviceTensor& y, cudaStream_t stream) {
  require_arg(x.shape == y.shape && x.dtype == y.dtype && x.layout == y.layout, "bn_forward_apply: shapes");
  require_arg(aligned16(x.data) && aligned16(y.data) && (!residual || aligned16(residual)),
              "bn_forward_apply: pointers must be 16-byte aligned");
  GS_DISPATCH(x.dtype, T, {
    bn_forward_apply_kernel<T><<<grid_for(x.shape.count() / Pack<T>::kSize + 1), kThreads, 0, stream>>>(
        static_cast<const T*>(x.data), a, b, static_cast<const T*>(residual), relu, static_cast<T*>(y.data), x.shape,
        x.layout);
  });
  check_launch("bn_forward_apply");
}

void bn_backward_reduce(BnReduction r, const DeviceTensor& dy, const void* relu_y, const DeviceTensor& x,
                        const float* mean, const float* invstd, const float* gamma, DType gt, void* dgamma, void* dbeta,
                        float* ka, float* kb, float* kc, double* partials, cudaStream_t stream) {
  require_arg(dy.shape == x.shape && dy.dtype == x.dtype && dy.layout == x.layout, "bn_backward_reduce: shapes");
  const Shape s = x.shape;
  int chunks = 1;
  GS_DISPATCH(x.dtype, T, {
    const auto* g = static_cast<const T*>(dy.data);
    const auto* mask = static_cast<const T*>(relu_y);
    const auto* in = static_cast<const T*>(x.data);
    if (r == BnReduction::naive) {
      bn_backward_naive_reduce_kernel<T><<<s.c, kNaiveThreads, 0, stream>>>(g, mask, in, mean, s, x.layout, partials);
    } else {
      chunks = bn_chunks(s, x.layout);
      require_arg(chunks <= 65535, "bn_backward_reduce: batch too large");
      if (x.layout == Layout::nhwc)
        bn_backward_reduce_nhwc_kernel<T>
            <<<dim3((s.c + 31) / 32, chunks), dim3(32, 8), 0, stream>>>(g, mask, in, mean, s, partials);
      else
        bn_backward_reduce_nchw_kernel<T><<<dim3(s.c, chunks), kThreads, 0, stream>>>(g, mask, in, mean, s, partials);
    }
  });
  check_launch("bn_backward_reduce");
  GS_DISPATCH(gt, GT, {
    bn_backward_finalize_kernel<GT><<<s.c, kThreads, 0, stream>>>(
        partials, chunks, s, mean, invstd, gamma, static_cast<GT*>(dgamma), static_cast<GT*>(dbeta), ka, kb, kc);
  });
  check_launch("bn_backward_finalize");
}

void bn_backward_apply(const DeviceTensor& dy, const void* relu_y, const DeviceTensor& x, const float* ka,
                       const float* kb, const float* kc, const DeviceTensor& dx, void* g_out, cudaStream_t stream) {
  require_arg(dy.shape == x.shape && dx.shape == x.shape && dy.dtype == x.dtype && dx.dtype == x.dtype &&
                  dy.layout == x.layout && dx.layout == x.layout,
              "bn_backward_apply: shapes");
  require_arg(aligned16(dy.data) && aligned16(x.data) && aligned16(dx.data) && (!relu_y || aligned16(relu_y)) &&
                  (!g_out || aligned16(g_out)),
              "bn_backward_apply: pointers must be 16-byte aligned");
  GS_DISPATCH(x.dtype, T, {
    bn_backward_apply_kernel<T><<<grid_for(x.shape.count() / Pack<T>::kSize + 1), kThreads, 0, stream>>>(
        static_cast<const T*>(dy.data), static_cast<const T*>(relu_y), static_cast<const T*>(x.data), ka, kb, kc,
        static_cast<T*>(dx.data), static_cast<T*>(g_out), x.shape, x.layout);
  });
  check_launch("bn_backward_apply");
}

}  // namespace gpuscope::kernels
