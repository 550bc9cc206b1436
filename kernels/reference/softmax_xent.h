// Reference: softmax cross-entropy over a row-major [rows x classes] logits
// matrix, mean over the rows, with the classifier bias optionally folded in
// (the fused kernel adds it; the broadcast path adds it with two kernels).
#pragma once

#include <algorithm>

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

template <class S>
struct XentResult {
  double loss = 0;  // mean over rows
  int correct = 0;  // rows whose arg-max (first maximum) is the label
  Vec<S> dlogits;   // d(mean loss) / d(logits)
};

template <class S>
XentResult<S> softmax_xent(std::span<const S> logits, std::span<const S> bias, std::span<const int> labels,
                           int classes) {
  const int rows = static_cast<int>(labels.size());
  require(static_cast<std::int64_t>(logits.size()) == std::int64_t{rows} * classes, "softmax_xent: size");
  require(bias.empty() || static_cast<int>(bias.size()) == classes, "softmax_xent: bias size");
  XentResult<S> r;
  r.dlogits.resize(logits.size());
  double total = 0;
  for (int i = 0; i < rows; ++i) {
    require(labels[i] >= 0 && labels[i] < classes, "softmax_xent: label");
    const S* z = &logits[static_cast<std::size_t>(i) * classes];
    auto zb = [&](int k) { return static_cast<double>(z[k]) + (bias.empty() ? 0.0 : static_cast<double>(bias[k])); };
    double mx = zb(0);
    int arg = 0;
    for (int k = 1; k < classes; ++k)
      if (zb(k) > mx) mx = zb(k), arg = k;
    double sum = 0;
    for (int k = 0; k < classes; ++k) sum += std::exp(zb(k) - mx);
    total += std::log(sum) - (zb(labels[i]) - mx);
    r.correct += arg == labels[i];
    for (int k = 0; k < classes; ++k) {
      const double p = std::exp(zb(k) - mx) / sum;
      r.dlogits[static_cast<std::size_t>(i) * classes + k] = static_cast<S>((p - (k == labels[i])) / rows);
    }
  }
  r.loss = total / rows;
  return r;
}

}  // namespace gpuscope::kernels::ref
