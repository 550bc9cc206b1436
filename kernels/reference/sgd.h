// Reference: SGD with momentum and L2 weight decay, PyTorch's formulation
// (no dampening, no Nesterov):  g' = g + wd * w;  v = mu * v + g';  w -= lr * v.
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

struct SgdConfig {
  float lr = 0.05f, momentum = 0.9f, weight_decay = 5e-4f;
};

template <class S>
void sgd_momentum(std::span<S> w, std::span<S> v, std::span<const S> g, SgdConfig cfg) {
  require(w.size() == v.size() && w.size() == g.size(), "sgd_momentum: size");
  for (std::size_t i = 0; i < w.size(); ++i) {
    const S gi = g[i] + static_cast<S>(cfg.weight_decay) * w[i];
    v[i] = static_cast<S>(cfg.momentum) * v[i] + gi;
    w[i] -= static_cast<S>(cfg.lr) * v[i];
  }
}

}  // namespace gpuscope::kernels::ref
