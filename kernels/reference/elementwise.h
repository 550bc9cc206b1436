// Reference: the pointwise kernels — broadcasting a per-channel vector to a
// full tensor (what TensorFlow's bias add and batch-norm scale/shift did), the
// elementwise multiply/add that consume it, ReLU and the residual add.
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

// out[i] = v[channel(i)].
template <class S>
Vec<S> broadcast_channel(std::span<const S> v, Shape s, Layout l) {
  require(static_cast<int>(v.size()) == s.c, "broadcast_channel: size");
  Vec<S> out(s.count());
  for (std::int64_t i = 0; i < s.count(); ++i) out[i] = v[channel_of(i, s, l)];
  return out;
}

// out[r][k] = bias[k] for a row-major [rows x k] matrix.
template <class S>
Vec<S> broadcast_bias(std::span<const S> bias, int rows) {
  Vec<S> out(static_cast<std::size_t>(rows) * bias.size());
  for (int r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < bias.size(); ++k) out[r * bias.size() + k] = bias[k];
  return out;
}

template <class S>
Vec<S> elementwise_mul(std::span<const S> a, std::span<const S> b) {
  require(a.size() == b.size(), "elementwise_mul: size");
  Vec<S> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] * b[i];
  return out;
}

template <class S>
Vec<S> elementwise_add(std::span<const S> a, std::span<const S> b) {
  require(a.size() == b.size(), "elementwise_add: size");
  Vec<S> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

template <class S>
Vec<S> relu_forward(std::span<const S> x) {
  Vec<S> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] > S(0) ? x[i] : S(0);
  return y;
}

// The mask comes from the output: y > 0 exactly where x > 0, and the output is
// what the forward pass keeps.
template <class S>
Vec<S> relu_backward(std::span<const S> dy, std::span<const S> y) {
  require(dy.size() == y.size(), "relu_backward: size");
  Vec<S> dx(dy.size());
  for (std::size_t i = 0; i < dy.size(); ++i) dx[i] = y[i] > S(0) ? dy[i] : S(0);
  return dx;
}

template <class S>
Vec<S> residual_add(std::span<const S> a, std::span<const S> b) {
  return elementwise_add(a, b);
}

}  // namespace gpuscope::kernels::ref
