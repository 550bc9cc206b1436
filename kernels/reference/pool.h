// Reference: global average pooling (h, w) -> 1, producing a row-major
// [n x c] feature matrix for the classifier, and its gradient.
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

template <class S>
Vec<S> avgpool_forward(std::span<const S> x, Shape s, Layout l) {
  require(static_cast<std::int64_t>(x.size()) == s.count(), "avgpool_forward: size");
  Vec<S> y(static_cast<std::size_t>(s.n) * s.c);
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c) {
      double sum = 0;
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) sum += x[offset(s, l, n, c, h, w)];
      y[static_cast<std::size_t>(n) * s.c + c] = static_cast<S>(sum / s.hw());
    }
  return y;
}

template <class S>
Vec<S> avgpool_backward(std::span<const S> dy, Shape s, Layout l) {
  require(static_cast<std::int64_t>(dy.size()) == std::int64_t{s.n} * s.c, "avgpool_backward: size");
  Vec<S> dx(s.count());
  const S scale = S(1) / static_cast<S>(s.hw());
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) dx[offset(s, l, n, c, h, w)] = dy[static_cast<std::size_t>(n) * s.c + c] * scale;
  return dx;
}

}  // namespace gpuscope::kernels::ref
