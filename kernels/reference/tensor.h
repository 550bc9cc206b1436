// Plain C++ references for the workload's kernels: shared helpers.
//
// References are templates over the scalar type S: float to compare with the
// GPU kernels element by element, double for finite-difference checks whose
// truncation error must sit far below the tolerance. They are written for
// clarity, never speed: one loop nest per formula, in the same element order
// as the kernel where the order changes the rounding.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common.h"

namespace gpuscope::kernels::ref {

template <class S>
using Vec = std::vector<S>;

inline void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("reference: ") + what);
}

// bfloat16 as raw bits, rounded to nearest even like __float2bfloat16_rn, so
// references can reproduce the rounding of bf16 activations exactly.
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((u >> 16) | 0x40U);  // quiet NaN
  u += 0x7fffU + ((u >> 16) & 1U);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float round_to_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }

// Re-lays a tensor out (same logical contents).
template <class S>
Vec<S> relayout(std::span<const S> x, Shape s, Layout from, Layout to) {
  require(static_cast<std::int64_t>(x.size()) == s.count(), "relayout: size");
  Vec<S> y(x.size());
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) y[offset(s, to, n, c, h, w)] = x[offset(s, from, n, c, h, w)];
  return y;
}

}  // namespace gpuscope::kernels::ref
