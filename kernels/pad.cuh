// Explicit zero padding, the report's top hotspot (21% of GPU time).
//
// TensorFlow ran a separate pad kernel whenever cuDNN could not pad for it,
// then an unpadded convolution on the bigger copy; backward crops the data
// gradient of the padded copy. These kernels do the same, one thread per
// output element with the index arithmetic of a generic pad op (TensorFlow's
// PadInput is no smarter): the cost is a full extra read and write of the
// activation, forward and backward.
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

template <class T>
__global__ void pad_nchw_kernel(const T* __restrict__ x, T* __restrict__ xp, Shape s, Padding2d p) {
  const Shape ps = padded(s, p);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < ps.count();
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int w = static_cast<int>(i % ps.w) - p.left;
    const int h = static_cast<int>((i / ps.w) % ps.h) - p.top;
    const std::int64_t nc = i / (std::int64_t{ps.w} * ps.h);
    const bool inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
    xp[i] = inside ? x[(nc * s.h + h) * s.w + w] : from_f32<T>(0.0f);
  }
}

template <class T>
__global__ void pad_nhwc_kernel(const T* __restrict__ x, T* __restrict__ xp, Shape s, Padding2d p) {
  const Shape ps = padded(s, p);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < ps.count();
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int c = static_cast<int>(i % ps.c);
    const std::int64_t pix = i / ps.c;
    const int w = static_cast<int>(pix % ps.w) - p.left;
    const int h = static_cast<int>((pix / ps.w) % ps.h) - p.top;
    const std::int64_t n = pix / (std::int64_t{ps.w} * ps.h);
    const bool inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
    xp[i] = inside ? x[((n * s.h + h) * s.w + w) * s.c + c] : from_f32<T>(0.0f);
  }
}

// Crop: one thread per element of the unpadded gradient.
template <class T>
__global__ void pad_nchw_backward_kernel(const T* __restrict__ dxp, T* __restrict__ dx, Shape s, Padding2d p,
                                         bool accumulate) {
  const Shape ps = padded(s, p);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < s.count();
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int w = static_cast<int>(i % s.w);
    const int h = static_cast<int>((i / s.w) % s.h);
    const std::int64_t nc = i / (std::int64_t{s.w} * s.h);
    const float g = to_f32(dxp[(nc * ps.h + h + p.top) * ps.w + w + p.left]);
    dx[i] = from_f32<T>(accumulate ? to_f32(dx[i]) + g : g);
  }
}

template <class T>
__global__ void pad_nhwc_backward_kernel(const T* __restrict__ dxp, T* __restrict__ dx, Shape s, Padding2d p,
                                         bool accumulate) {
  const Shape ps = padded(s, p);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < s.count();
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int c = static_cast<int>(i % s.c);
    const std::int64_t pix = i / s.c;
    const int w = static_cast<int>(pix % s.w);
    const int h = static_cast<int>((pix / s.w) % s.h);
    const std::int64_t n = pix / (std::int64_t{s.w} * s.h);
    const float g = to_f32(dxp[((n * ps.h + h + p.top) * ps.w + w + p.left) * ps.c + c]);
    dx[i] = from_f32<T>(accumulate ? to_f32(dx[i]) + g : g);
  }
}

// ---- kernel launchers ------------------------------------------------------------

void pad_forward(const DeviceTensor& x, const DeviceTensor& xp, Padding2d p, cudaStream_t stream) {
  require_arg(xp.shape == padded(x.shape, p) && x.dtype == xp.dtype && x.layout == xp.layout,
              "pad_forward: shapes/dtypes");
  GS_DISPATCH(x.dtype, T, {
    const auto* in = static_cast<const T*>(x.data);
    auto* out = static_cast<T*>(xp.data);
    if (x.layout == Layout::nchw)
      pad_nchw_kernel<T><<<grid_for(xp.shape.count()), kThreads, 0, stream>>>(in, out, x.shape, p);
    else
      pad_nhwc_kernel<T><<<grid_for(xp.shape.count()), kThreads, 0, stream>>>(in, out, x.shape, p);
  });
  check_launch("pad_forward");
}

void pad_backward(const DeviceTensor& dxp, const DeviceTensor& dx, Padding2d p, bool accumulate, cudaStream_t stream) {
  require_arg(dxp.shape == padded(dx.shape, p) && dx.dtype == dxp.dtype && dx.layout == dxp.layout,
              "pad_backward: shapes/dtypes");
  GS_DISPATCH(dx.dtype, T, {
    const auto* in = static_cast<const T*>(dxp.data);
    auto* out = static_cast<T*>(dx.data);
    if (dx.layout == Layout::nchw)
      pad_nchw_backward_kernel<T>
          <<<grid_for(dx.shape.count()), kThreads, 0, stream>>>(in, out, dx.shape, p, accumulate);
    else
      pad_nhwc_backward_kernel<T>
          <<<grid_for(dx.shape.count()), kThreads, 0, stream>>>(in, out, dx.shape, p, accumulate);
  });
  check_launch("pad_backward");
}

}  // namespace gpuscope::kernels
