// Reference: explicit zero padding (forward) and its gradient, a crop
// (backward). TensorFlow ran exactly this pair when cuDNN could not pad for it.
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

// xp = x surrounded by zeros; xp has shape padded(s, p).
template <class S>
Vec<S> pad_forward(std::span<const S> x, Shape s, Layout l, Padding2d p) {
  require(static_cast<std::int64_t>(x.size()) == s.count(), "pad_forward: size");
  const Shape ps = padded(s, p);
  Vec<S> xp(ps.count(), S(0));
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) xp[offset(ps, l, n, c, h + p.top, w + p.left)] = x[offset(s, l, n, c, h, w)];
  return xp;
}

// dx (shape s) = the interior of dxp; added to dx when accumulate is set (the
// gradient of a tensor that feeds two branches).
template <class S>
void pad_backward(std::span<const S> dxp, Shape s, Layout l, Padding2d p, std::span<S> dx, bool accumulate) {
  const Shape ps = padded(s, p);
  require(static_cast<std::int64_t>(dxp.size()) == ps.count() && static_cast<std::int64_t>(dx.size()) == s.count(),
          "pad_backward: size");
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) {
          const S g = dxp[offset(ps, l, n, c, h + p.top, w + p.left)];
          S& out = dx[offset(s, l, n, c, h, w)];
          out = accumulate ? out + g : g;
        }
}

}  // namespace gpuscope::kernels::ref
