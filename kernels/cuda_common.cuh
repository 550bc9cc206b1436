// Helpers every kernel file shares: error checks, dtype dispatch, fp32 <->
// bf16 conversion, 16-byte packs for vectorised pointwise kernels, and a
// deterministic block reduction.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/kernels.h"

namespace gpuscope::kernels {

// One error check for launches: a bad configuration surfaces at the call.
inline void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string(kernel) + ": " + cudaGetErrorString(e));
}

inline void require_arg(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

// Runs BODY with T bound to the C++ type of a DType.
#define GS_DISPATCH(dtype, T, ...) \
  do {                             \
    if ((dtype) == DType::f32) {   \
      using T = float;             \
      __VA_ARGS__;                 \
    } else {                       \
      using T = __nv_bfloat16;     \
      __VA_ARGS__;                 \
    }                              \
  } while (0)

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// 16 bytes of T: 4 floats or 8 bf16 values, loaded and stored as one uint4.
template <class T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};
template <class T>
__device__ __forceinline__ Pack<T> load_pack(const T* p) {
  Pack<T> r;
  *reinterpret_cast<uint4*>(&r) = *reinterpret_cast<const uint4*>(p);
  return r;
}
template <class T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T>& r) {
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&r);
}

constexpr int kThreads = 256;

// Grid for a grid-stride loop over `work` items: enough blocks to fill the
// GPU a few times over, never more than the work needs.
inline int grid_for(std::int64_t work, int threads = kThreads) {
  const std::int64_t blocks = (work + threads - 1) / threads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

// Whether pointers allow 16-byte packs.
inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15U) == 0; }

// Sum over a block in a fixed order (warp shuffles, then one warp over the
// warp sums): the same inputs give the same bits on every run, which keeps
// ranks' batch-norm statistics and the optimizer reproducible.
template <int kBlock>
__device__ __forceinline__ double block_sum(double v, double* shared /* kBlock / 32 */) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "block size");
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffU, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = (threadIdx.x < kBlock / 32) ? shared[threadIdx.x] : 0.0;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffU, v, o);
  __syncthreads();  // shared may be reused right after
  return v;         // valid in thread 0
}

}  // namespace gpuscope::kernels
