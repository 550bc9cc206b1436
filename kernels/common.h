// Shapes, layouts and index arithmetic shared by the CUDA kernels and their
// plain C++ references.
//
// Every activation is a 4-d tensor (n, c, h, w) stored either NCHW or NHWC.
// Kernels never special-case a layout beyond one function: `offset()` and
// `channel_of()` below are the whole difference, so a kernel and its
// reference can be written once for both layouts and compared element by
// element. This header compiles with and without nvcc.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GS_HD __host__ __device__ __forceinline__
#else
#define GS_HD inline
#endif

namespace gpuscope::kernels {

enum class Layout : std::uint8_t { nchw = 0, nhwc = 1 };

struct Shape {
  int n = 0, c = 0, h = 0, w = 0;
  GS_HD std::int64_t count() const { return std::int64_t{n} * c * h * w; }
  GS_HD int hw() const { return h * w; }
  // Elements per channel across the batch: what batch norm reduces over.
  GS_HD std::int64_t per_channel() const { return std::int64_t{n} * h * w; }
};

GS_HD bool operator==(Shape a, Shape b) { return a.n == b.n && a.c == b.c && a.h == b.h && a.w == b.w; }

// Linear position of element (n, c, y, x).
GS_HD std::int64_t offset(Shape s, Layout l, int n, int c, int y, int x) {
  return l == Layout::nchw ? ((std::int64_t{n} * s.c + c) * s.h + y) * s.w + x
                           : ((std::int64_t{n} * s.h + y) * s.w + x) * s.c + c;
}

// Channel of the element at linear position i.
GS_HD int channel_of(std::int64_t i, Shape s, Layout l) {
  return l == Layout::nchw ? static_cast<int>((i / s.hw()) % s.c) : static_cast<int>(i % s.c);
}

// Linear position of the j-th element of channel c, j in [0, n*h*w), visiting
// a channel in (n, y, x) order in both layouts. Batch-norm reductions walk a
// channel with this, so the naive NCHW kernel and its reference agree on order.
GS_HD std::int64_t channel_element(Shape s, Layout l, int c, std::int64_t j) {
  const std::int64_t hw = s.hw();
  const std::int64_t n = j / hw, p = j % hw;
  return l == Layout::nchw ? (n * s.c + c) * hw + p : (n * hw + p) * s.c + c;
}

// Zero padding added around the spatial dimensions (TensorFlow's SAME can be
// asymmetric, so each side is separate).
struct Padding2d {
  int top = 0, bottom = 0, left = 0, right = 0;
  GS_HD bool none() const { return top == 0 && bottom == 0 && left == 0 && right == 0; }
};

GS_HD Shape padded(Shape s, Padding2d p) { return Shape{s.n, s.c, s.h + p.top + p.bottom, s.w + p.left + p.right}; }

// Batch-norm epsilon, the same everywhere (PyTorch's default).
inline constexpr float kBnEpsilon = 1e-5f;

}  // namespace gpuscope::kernels
