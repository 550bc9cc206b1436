#include "workloads/resnet/conv.h"

#include <algorithm>

namespace gpuscope::resnet {

namespace {

cudnnDataType_t cudnn_type(kernels::DType t) {
  return t == kernels::DType::f32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16;
}
cudnnTensorFormat_t cudnn_format(Layout l) { return l == Layout::nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC; }

// fp32 must not silently use TF32 tensor cores (that is what --precision tf32
// is for); tf32 and bf16 want tensor cores.
cudnnMathType_t requested_math(Precision p) { return p == Precision::fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH; }

constexpr int kMaxAlgos = 16;

// The first (fastest) measured algorithm that succeeded within the workspace.
template <class Perf>
const Perf* pick(const Perf* perf, int n, std::size_t ws_bytes, bool fma_only) {
  for (int i = 0; i < n; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > ws_bytes) continue;
    if (fma_only && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH) continue;
    return &perf[i];
  }
  return nullptr;
}

}  // namespace

ConvPlan::~ConvPlan() {
  if (x_) cudnnDestroyTensorDescriptor(x_);
  if (y_) cudnnDestroyTensorDescriptor(y_);
  if (w_) cudnnDestroyFilterDescriptor(w_);
  for (auto* d : {fwd_, bwd_data_, bwd_filter_})
    if (d) cudnnDestroyConvolutionDescriptor(d);
}

int ConvPlan::init(const ConvShape& s, kernels::DType dtype, Layout layout, Precision precision) {
  const cudnnDataType_t t = cudnn_type(dtype);
  const cudnnTensorFormat_t f = cudnn_format(layout);
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_, f, t, s.n, s.in_c, s.in_h, s.in_w));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_, t, f, s.out_c, s.in_c, s.k, s.k));
  for (cudnnConvolutionDescriptor_t* d : {&fwd_, &bwd_data_, &bwd_filter_}) {
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(d));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(*d, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionMathType(*d, requested_math(precision)));
  }
  int n = 0, c = 0, h = 0, w = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(fwd_, x_, w_, &n, &c, &h, &w));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(y_, f, t, n, c, h, w));
  return h;
}

void ConvPlan::choose_algorithms(cudnnHandle_t h, void* x, void* w, void* y, void* dx, void* dw, bool need_data,
                                 void* ws, std::size_t ws_bytes) {
  cudnnMathType_t math{};
  CUDNN_CHECK(cudnnGetConvolutionMathType(fwd_, &math));
  const bool fma_only = math == CUDNN_FMA_MATH;
  int n = 0;
  {
    cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgos];
    CUDNN_CHECK(
        cudnnFindConvolutionForwardAlgorithmEx(h, x_, x, w_, w, fwd_, y_, y, kMaxAlgos, &n, perf, ws, ws_bytes));
    const auto* p = pick(perf, n, ws_bytes, fma_only);
    if (!p) throw GpuError("cuDNN found no usable forward convolution algorithm");
    fwd_algo_ = p->algo;
    CUDNN_CHECK(cudnnSetConvolutionMathType(fwd_, p->mathType));
    ws_bytes_ = std::max(ws_bytes_, p->memory);
  }
  if (need_data) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgos];
    CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, w_, w, y_, y, bwd_data_, x_, dx, kMaxAlgos, &n, perf, ws,
                                                            ws_bytes));
    const auto* p = pick(perf, n, ws_bytes, fma_only);
    if (!p) throw GpuError("cuDNN found no usable backward-data convolution algorithm");
    data_algo_ = p->algo;
    CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_data_, p->mathType));
    ws_bytes_ = std::max(ws_bytes_, p->memory);
  }
  {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgos];
    CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x_, x, y_, y, bwd_filter_, w_, dw, kMaxAlgos, &n, perf,
                                                              ws, ws_bytes));
    const auto* p = pick(perf, n, ws_bytes, fma_only);
    if (!p) throw GpuError("cuDNN found no usable backward-filter convolution algorithm");
    filter_algo_ = p->algo;
    CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_filter_, p->mathType));
    ws_bytes_ = std::max(ws_bytes_, p->memory);
  }
}

std::string ConvPlan::describe() const {
  return "fwd " + std::to_string(static_cast<int>(fwd_algo_)) + ", bwd-data " +
         std::to_string(static_cast<int>(data_algo_)) + ", bwd-filter " +
         std::to_string(static_cast<int>(filter_algo_)) + ", workspace " + std::to_string(ws_bytes_ >> 10) + " KiB";
}

void ConvPlan::forward(cudnnHandle_t h, const void* x, const void* w, void* y, void* ws) const {
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnConvolutionForward(h, &one, x_, x, w_, w, fwd_, fwd_algo_, ws, ws_bytes_, &zero, y_, y));
}

void ConvPlan::backward_data(cudnnHandle_t h, const void* dy, const void* w, void* dx, bool accumulate,
                             void* ws) const {
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  CUDNN_CHECK(
      cudnnConvolutionBackwardData(h, &one, w_, w, y_, dy, bwd_data_, data_algo_, ws, ws_bytes_, &beta, x_, dx));
}

void ConvPlan::backward_filter(cudnnHandle_t h, const void* x, const void* dy, void* dw, void* ws) const {
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(
      cudnnConvolutionBackwardFilter(h, &one, x_, x, y_, dy, bwd_filter_, filter_algo_, ws, ws_bytes_, &zero, w_, dw));
}

}  // namespace gpuscope::resnet
