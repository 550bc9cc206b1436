// Reference: training-mode batch normalisation over (n, h, w) per channel,
// with the optional residual add and ReLU the fused kernels fold in.
//
//   forward:  y = relu?( a[c] * x + b[c] + residual? ),  a = gamma * invstd,
//             b = beta - mean * a,  invstd = 1 / sqrt(var + eps)  (biased var)
//   backward: g = relu? ( dy * [y > 0] ) : dy          (also the residual's gradient)
//             dgamma = sum(g * xhat), dbeta = sum(g)
//             dx = ka * g + kb * x + kc  with ka = gamma * invstd,
//             kb = -ka * invstd * mean(g * xhat), kc = -ka * mean(g) - kb * mean
//
// The backward is written as three per-channel coefficients on purpose: that
// is how the GPU kernels apply it (fused: one kernel; broadcast: three
// broadcast tensors and elementwise kernels), and the reference mirrors them.
// Sums accumulate in double like the GPU partials.
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

template <class S>
struct BnStats {
  Vec<S> mean, invstd;
};

template <class S>
BnStats<S> bn_stats(std::span<const S> x, Shape s, Layout l, double eps = kBnEpsilon) {
  require(static_cast<std::int64_t>(x.size()) == s.count(), "bn_stats: size");
  BnStats<S> st{Vec<S>(s.c), Vec<S>(s.c)};
  const std::int64_t m = s.per_channel();
  for (int c = 0; c < s.c; ++c) {
    double sum = 0, sumsq = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      const double v = x[channel_element(s, l, c, j)];
      sum += v;
      sumsq += v * v;
    }
    const double mean = sum / m;
    double var = sumsq / m - mean * mean;
    if (var < 0) var = 0;
    st.mean[c] = static_cast<S>(mean);
    st.invstd[c] = static_cast<S>(1.0 / std::sqrt(var + eps));
  }
  return st;
}

// Per-channel scale a and shift b of the forward pass.
template <class S>
void bn_forward_coefficients(const BnStats<S>& st, std::span<const S> gamma, std::span<const S> beta, Vec<S>& a,
                             Vec<S>& b) {
  const std::size_t c = st.mean.size();
  require(gamma.size() == c && beta.size() == c, "bn_forward_coefficients: size");
  a.resize(c);
  b.resize(c);
  for (std::size_t i = 0; i < c; ++i) {
    a[i] = gamma[i] * st.invstd[i];
    b[i] = beta[i] - st.mean[i] * a[i];
  }
}

// y = relu?(a * x + b + residual?). residual may be empty.
template <class S>
Vec<S> bn_forward_apply(std::span<const S> x, Shape s, Layout l, std::span<const S> a, std::span<const S> b,
                        std::span<const S> residual, bool relu) {
  require(static_cast<std::int64_t>(x.size()) == s.count(), "bn_forward_apply: size");
  require(residual.empty() || residual.size() == x.size(), "bn_forward_apply: residual size");
  Vec<S> y(x.size());
  for (std::int64_t i = 0; i < s.count(); ++i) {
    const int c = channel_of(i, s, l);
    S v = a[c] * x[i] + b[c];
    if (!residual.empty()) v += residual[i];
    if (relu && !(v > S(0))) v = S(0);
    y[i] = v;
  }
  return y;
}

// Everything the backward pass produces for one batch-norm layer.
template <class S>
struct BnBackward {
  Vec<S> dx, dgamma, dbeta;
  Vec<S> g;  // gradient after the ReLU mask = gradient of the residual input
};

// Per-channel sums the backward needs: sum(g) and sum(g * x).
template <class S>
void bn_backward_sums(std::span<const S> g, std::span<const S> x, Shape s, Layout l, Vec<double>& sum_g,
                      Vec<double>& sum_gx) {
  sum_g.assign(s.c, 0.0);
  sum_gx.assign(s.c, 0.0);
  const std::int64_t m = s.per_channel();
  for (int c = 0; c < s.c; ++c)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t i = channel_element(s, l, c, j);
      sum_g[c] += static_cast<double>(g[i]);
      sum_gx[c] += static_cast<double>(g[i]) * static_cast<double>(x[i]);
    }
}

// dgamma, dbeta and the coefficients of dx = ka * g + kb * x + kc.
template <class S>
void bn_backward_coefficients(const Vec<double>& sum_g, const Vec<double>& sum_gx, const BnStats<S>& st,
                              std::span<const S> gamma, std::int64_t m, Vec<S>& dgamma, Vec<S>& dbeta, Vec<S>& ka,
                              Vec<S>& kb, Vec<S>& kc) {
  const std::size_t c = gamma.size();
  dgamma.resize(c), dbeta.resize(c), ka.resize(c), kb.resize(c), kc.resize(c);
  for (std::size_t i = 0; i < c; ++i) {
    const double invstd = st.invstd[i], mean = st.mean[i];
    const double sum_gxhat = invstd * (sum_gx[i] - mean * sum_g[i]);
    const double a = static_cast<double>(gamma[i]) * invstd;
    const double b = -a * invstd * (sum_gxhat / m);
    dgamma[i] = static_cast<S>(sum_gxhat);
    dbeta[i] = static_cast<S>(sum_g[i]);
    ka[i] = static_cast<S>(a);
    kb[i] = static_cast<S>(b);
    kc[i] = static_cast<S>(-a * (sum_g[i] / m) - b * mean);
  }
}

// The whole backward of bn_forward_apply(bn_stats(x)). y is the forward output
// (used for the ReLU mask only; may be empty when relu is false).
template <class S>
BnBackward<S> bn_backward(std::span<const S> dy, std::span<const S> y, std::span<const S> x, Shape s, Layout l,
                          const BnStats<S>& st, std::span<const S> gamma, bool relu) {
  require(dy.size() == x.size() && static_cast<std::int64_t>(x.size()) == s.count(), "bn_backward: size");
  require(!relu || y.size() == x.size(), "bn_backward: relu needs y");
  BnBackward<S> r;
  r.g.assign(dy.begin(), dy.end());
  if (relu)
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!(y[i] > S(0))) r.g[i] = S(0);
  Vec<double> sum_g, sum_gx;
  bn_backward_sums<S>(r.g, x, s, l, sum_g, sum_gx);
  Vec<S> ka, kb, kc;
  bn_backward_coefficients<S>(sum_g, sum_gx, st, gamma, s.per_channel(), r.dgamma, r.dbeta, ka, kb, kc);
  r.dx.resize(x.size());
  for (std::int64_t i = 0; i < s.count(); ++i) {
    const int c = channel_of(i, s, l);
    r.dx[i] = ka[c] * r.g[i] + kb[c] * x[i] + kc[c];
  }
  return r;
}

}  // namespace gpuscope::kernels::ref
