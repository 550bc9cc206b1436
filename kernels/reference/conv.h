// Reference: 2-d convolution (cross-correlation, as cuDNN computes it) in
// NCHW with KCRS filters, any stride, any (asymmetric) zero padding, and its
// two gradients. On the GPU this is cuDNN; the reference serves the whole-
// network checks (finite differences on the CPU, --verify on the GPU).
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

struct ConvGeometry {
  Shape in;       // n, c, h, w of the (unpadded) input
  int out_c = 0;  // filters
  int k = 1;      // square kernel
  int stride = 1;
  Padding2d pad;
  Shape out() const {
    return Shape{in.n, out_c, (in.h + pad.top + pad.bottom - k) / stride + 1,
                 (in.w + pad.left + pad.right - k) / stride + 1};
  }
  std::int64_t weight_count() const { return std::int64_t{out_c} * in.c * k * k; }
};

namespace detail {
// Calls f(xi, yi, wi, len, stride) for every run of in-bounds taps: output
// elements yi .. yi+len-1 meet input elements xi, xi+stride, … through weight
// wi (NCHW input/output, KCRS weights). Runs along an output row keep the
// references fast enough for whole-network checks of the full-size net.
template <class F>
void for_each_tap_run(const ConvGeometry& g, F&& f) {
  const Shape o = g.out();
  for (int n = 0; n < o.n; ++n)
    for (int oc = 0; oc < o.c; ++oc)
      for (int ic = 0; ic < g.in.c; ++ic)
        for (int ky = 0; ky < g.k; ++ky)
          for (int kx = 0; kx < g.k; ++kx) {
            const std::int64_t wi = ((std::int64_t{oc} * g.in.c + ic) * g.k + ky) * g.k + kx;
            // Output columns whose input column ox * stride + kx - left is inside [0, w).
            int lo = 0;
            while (lo < o.w && lo * g.stride + kx - g.pad.left < 0) ++lo;
            int hi = o.w;
            while (hi > lo && (hi - 1) * g.stride + kx - g.pad.left >= g.in.w) --hi;
            if (lo >= hi) continue;
            for (int oy = 0; oy < o.h; ++oy) {
              const int iy = oy * g.stride + ky - g.pad.top;
              if (iy < 0 || iy >= g.in.h) continue;
              f(offset(g.in, Layout::nchw, n, ic, iy, lo * g.stride + kx - g.pad.left),
                offset(o, Layout::nchw, n, oc, oy, lo), wi, hi - lo, g.stride);
            }
          }
}
}  // namespace detail

template <class S>
Vec<S> conv_forward(std::span<const S> x, std::span<const S> w, const ConvGeometry& g) {
  require(
      static_cast<std::int64_t>(x.size()) == g.in.count() && static_cast<std::int64_t>(w.size()) == g.weight_count(),
      "conv_forward: size");
  Vec<double> acc(g.out().count(), 0.0);
  detail::for_each_tap_run(g, [&](std::int64_t xi, std::int64_t yi, std::int64_t wi, int len, int stride) {
    const double wv = w[wi];
    for (int j = 0; j < len; ++j) acc[yi + j] += static_cast<double>(x[xi + std::int64_t{j} * stride]) * wv;
  });
  return Vec<S>(acc.begin(), acc.end());
}

template <class S>
Vec<S> conv_backward_data(std::span<const S> dy, std::span<const S> w, const ConvGeometry& g) {
  require(static_cast<std::int64_t>(dy.size()) == g.out().count(), "conv_backward_data: size");
  Vec<double> acc(g.in.count(), 0.0);
  detail::for_each_tap_run(g, [&](std::int64_t xi, std::int64_t yi, std::int64_t wi, int len, int stride) {
    const double wv = w[wi];
    for (int j = 0; j < len; ++j) acc[xi + std::int64_t{j} * stride] += static_cast<double>(dy[yi + j]) * wv;
  });
  return Vec<S>(acc.begin(), acc.end());
}

template <class S>
Vec<S> conv_backward_filter(std::span<const S> x, std::span<const S> dy, const ConvGeometry& g) {
  require(static_cast<std::int64_t>(dy.size()) == g.out().count(), "conv_backward_filter: size");
  Vec<double> acc(g.weight_count(), 0.0);
  detail::for_each_tap_run(g, [&](std::int64_t xi, std::int64_t yi, std::int64_t wi, int len, int stride) {
    double sum = 0;
    for (int j = 0; j < len; ++j) sum += static_cast<double>(dy[yi + j]) * x[xi + std::int64_t{j} * stride];
    acc[wi] += sum;
  });
  return Vec<S>(acc.begin(), acc.end());
}

}  // namespace gpuscope::kernels::ref
