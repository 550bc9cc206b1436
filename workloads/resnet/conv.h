// Convolutions through cuDNN's legacy API: descriptors, an algorithm chosen
// once per layer and direction by measurement (cudnnFind*Ex), and the three
// calls of a training step. Legacy descriptors take symmetric padding only,
// which is all this network needs (every 3x3 conv pads 1 on each side); the
// explicit-padding path hands cuDNN a pre-padded tensor and padding 0.
#pragma once

#include <string>

#include "kernels/kernels.h"
#include "workloads/resnet/gpu_runtime.h"
#include "workloads/resnet/options.h"

namespace gpuscope::resnet {

struct ConvShape {
  int n = 0, in_c = 0, in_h = 0, in_w = 0;    // the tensor cuDNN reads (already padded if explicit)
  int out_c = 0, k = 3, stride = 1, pad = 0;  // pad applied by cuDNN
};

class ConvPlan {
 public:
  ConvPlan() = default;
  ~ConvPlan();
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;

  // Builds the descriptors; returns the output height (= width).
  int init(const ConvShape& shape, kernels::DType dtype, Layout layout, Precision precision);
  // Measures the algorithms of the three directions on these buffers and keeps
  // the fastest whose workspace fits ws_bytes. need_data: the layer's input
  // gradient is needed (not for the stem).
  void choose_algorithms(cudnnHandle_t h, void* x, void* w, void* y, void* dx, void* dw, bool need_data, void* ws,
                         std::size_t ws_bytes);
  std::size_t workspace_bytes() const { return ws_bytes_; }
  std::string describe() const;

  void forward(cudnnHandle_t h, const void* x, const void* w, void* y, void* ws) const;
  void backward_data(cudnnHandle_t h, const void* dy, const void* w, void* dx, bool accumulate, void* ws) const;
  void backward_filter(cudnnHandle_t h, const void* x, const void* dy, void* dw, void* ws) const;

 private:
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t fwd_ = nullptr, bwd_data_ = nullptr, bwd_filter_ = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_algo_{};
  cudnnConvolutionBwdDataAlgo_t data_algo_{};
  cudnnConvolutionBwdFilterAlgo_t filter_algo_{};
  std::size_t ws_bytes_ = 0;
};

}  // namespace gpuscope::resnet
