// The whole network's forward and backward pass in plain C++ (NCHW), composed
// from the kernel references. It is the ground truth three ways: CPU tests
// check it against finite differences and train it a few steps;
// `resnet-train --verify` runs one GPU step and compares loss and every
// gradient tensor with it.
#pragma once

#include <span>
#include <vector>

#include "workloads/resnet/net.h"

namespace gpuscope::resnet {

template <class S>
struct ReferenceStep {
  double loss = 0;
  int correct = 0;
  std::vector<S> grads;  // flat, same offsets as the parameters (canonical layout)
};

// params: canonical flat buffer (NetSpec::flat_size). images: NCHW,
// (labels.size(), cfg.in_channels, cfg.image, cfg.image). Gradients are of the
// mean loss over the batch.
template <class S>
ReferenceStep<S> reference_forward_backward(const NetSpec& net, std::span<const S> params, std::span<const S> images,
                                            std::span<const int> labels);

// Forward only: the mean loss.
template <class S>
double reference_loss(const NetSpec& net, std::span<const S> params, std::span<const S> images,
                      std::span<const int> labels);

extern template ReferenceStep<float> reference_forward_backward<float>(const NetSpec&, std::span<const float>,
                                                                       std::span<const float>, std::span<const int>);
extern template ReferenceStep<double> reference_forward_backward<double>(const NetSpec&, std::span<const double>,
                                                                         std::span<const double>, std::span<const int>);
extern template double reference_loss<float>(const NetSpec&, std::span<const float>, std::span<const float>,
                                             std::span<const int>);
extern template double reference_loss<double>(const NetSpec&, std::span<const double>, std::span<const double>,
                                              std::span<const int>);

}  // namespace gpuscope::resnet
