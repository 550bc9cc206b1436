// Reference: the classifier, y = x W^T + b with x [rows x in], W [out x in]
// (row-major, as the flat parameter buffer stores it), and its gradients. On
// the GPU this is cuBLAS; the reference checks the wiring of the three GEMMs.
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

template <class S>
Vec<S> linear_forward(std::span<const S> x, std::span<const S> w, std::span<const S> b, int rows, int in, int out) {
  require(static_cast<std::int64_t>(x.size()) == std::int64_t{rows} * in, "linear_forward: x size");
  require(static_cast<std::int64_t>(w.size()) == std::int64_t{out} * in, "linear_forward: w size");
  Vec<S> y(static_cast<std::size_t>(rows) * out);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : static_cast<double>(b[o]);
      for (int i = 0; i < in; ++i) acc += static_cast<double>(x[r * in + i]) * w[o * in + i];
      y[r * out + o] = static_cast<S>(acc);
    }
  return y;
}

// dx = dy W; dw = dy^T x; db = column sums of dy.
template <class S>
void linear_backward(std::span<const S> dy, std::span<const S> x, std::span<const S> w, int rows, int in, int out,
                     Vec<S>& dx, Vec<S>& dw, Vec<S>& db) {
  dx.assign(static_cast<std::size_t>(rows) * in, S(0));
  dw.assign(static_cast<std::size_t>(out) * in, S(0));
  db.assign(out, S(0));
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < in; ++i) {
      double acc = 0;
      for (int o = 0; o < out; ++o) acc += static_cast<double>(dy[r * out + o]) * w[o * in + i];
      dx[r * in + i] = static_cast<S>(acc);
    }
  for (int o = 0; o < out; ++o) {
    for (int i = 0; i < in; ++i) {
      double acc = 0;
      for (int r = 0; r < rows; ++r) acc += static_cast<double>(dy[r * out + o]) * x[r * in + i];
      dw[o * in + i] = static_cast<S>(acc);
    }
    double acc = 0;
    for (int r = 0; r < rows; ++r) acc += dy[r * out + o];
    db[o] = static_cast<S>(acc);
  }
}

// Column sums of a row-major [rows x cols] matrix: the classifier bias gradient.
template <class S>
Vec<S> column_sums(std::span<const S> m, int rows, int cols) {
  Vec<S> out(cols);
  for (int c = 0; c < cols; ++c) {
    double acc = 0;
    for (int r = 0; r < rows; ++r) acc += m[static_cast<std::size_t>(r) * cols + c];
    out[c] = static_cast<S>(acc);
  }
  return out;
}

}  // namespace gpuscope::kernels::ref
