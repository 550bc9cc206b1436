// Host-side API of the workload's CUDA kernels: one launcher per kernel,
// callable from plain C++ (the trainer and the GPU check are .cpp files).
//
// Tensors are passed as DeviceTensor (pointer + dtype + layout + shape); every
// launcher checks what it can on the host (shapes, dtypes) and throws
// std::invalid_argument on a mismatch, std::runtime_error on a launch error.
// Kernel names (listed in docs/workload.md) carry their category — padding,
// broadcast, transpose, bn_*, sgd, softmax, pool, reduce, relu, elementwise —
// so gpuscope's category table classifies them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common.h"

namespace gpuscope::kernels {

enum class DType : std::uint8_t { f32 = 0, bf16 = 1 };
inline std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }

struct DeviceTensor {
  void* data = nullptr;
  DType dtype = DType::f32;
  Layout layout = Layout::nchw;
  Shape shape;
};

// ---- padding (pad.cuh) --------------------------------------------------------
// xp = x with zero borders (xp.shape = padded(x.shape, p)); backward crops dxp
// into dx, adding to it when accumulate is set.
void pad_forward(const DeviceTensor& x, const DeviceTensor& xp, Padding2d p, cudaStream_t stream);
void pad_backward(const DeviceTensor& dxp, const DeviceTensor& dx, Padding2d p, bool accumulate, cudaStream_t stream);

// ---- broadcast and elementwise (broadcast.cuh) ---------------------------------
// out[i] = v[channel(i)]: materialises a per-channel vector as a full tensor.
void broadcast_channel(const float* v, const DeviceTensor& out, cudaStream_t stream);
// out[r][k] = bias[k] for a row-major fp32 [rows x cols] matrix.
void broadcast_bias(const float* bias, float* out, int rows, int cols, cudaStream_t stream);
void elementwise_mul(DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream);
void elementwise_add(DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream);

// ---- activation (activation.cuh) ----------------------------------------------
void relu_forward(DType t, const void* x, void* y, std::int64_t n, cudaStream_t stream);
void relu_backward(DType t, const void* dy, const void* y, void* dx, std::int64_t n, cudaStream_t stream);
void residual_add(DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream);

// ---- layout (transpose.cuh) ---------------------------------------------------
void transpose_nchw_to_nhwc(DType t, const void* x, void* y, Shape s, cudaStream_t stream);
void transpose_nhwc_to_nchw(DType t, const void* x, void* y, Shape s, cudaStream_t stream);

// ---- batch norm (batchnorm.cuh) ---------------------------------------------------
enum class BnReduction : std::uint8_t {
  naive,     // one block per channel walking n*h*w elements: C blocks in all
  parallel,  // many blocks per channel, layout-aware coalescing, deterministic partials
};
// Bytes of the fp64 partial-sum scratch a reduction over shape s needs.
std::size_t bn_partials_bytes(Shape s, Layout l);
// mean, invstd (saved for backward) and the forward coefficients a = gamma *
// invstd, b = beta - mean * a, all fp32 [C].
void bn_forward_stats(BnReduction r, const DeviceTensor& x, const float* gamma, const float* beta, float* mean,
                      float* invstd, float* a, float* b, double* partials, cudaStream_t stream);
// y = relu?(a * x + b + residual?); residual may be null; y may alias residual.
void bn_forward_apply(const DeviceTensor& x, const float* a, const float* b, const void* residual, bool relu,
                      const DeviceTensor& y, cudaStream_t stream);
// Backward reductions and coefficients. g = relu_y ? dy * [relu_y > 0] : dy.
// Writes dgamma, dbeta (gradient dtype gt) and ka, kb, kc (fp32 [C]) such
// that dx = ka * g + kb * x + kc.
void bn_backward_reduce(BnReduction r, const DeviceTensor& dy, const void* relu_y, const DeviceTensor& x,
                        const float* mean, const float* invstd, const float* gamma, DType gt, void* dgamma, void* dbeta,
                        float* ka, float* kb, float* kc, double* partials, cudaStream_t stream);
// dx = ka * g + kb * x + kc; also writes g to g_out when g_out is non-null
// (the residual branch's gradient).
void bn_backward_apply(const DeviceTensor& dy, const void* relu_y, const DeviceTensor& x, const float* ka,
                       const float* kb, const float* kc, const DeviceTensor& dx, void* g_out, cudaStream_t stream);

// ---- pooling (pool.cuh) ---------------------------------------------------------
// Global average pool to a row-major [n x c] matrix of the same dtype.
void avgpool_forward(const DeviceTensor& x, void* y, cudaStream_t stream);
void avgpool_backward(const void* dy, const DeviceTensor& dx, cudaStream_t stream);

// ---- loss (softmax_xent.cuh) ------------------------------------------------------
// Mean softmax cross-entropy of fp32 logits [rows x classes] (+ bias if non-
// null); dlogits (dtype dt) = d(mean loss)/d(logits); loss and correct are
// single device scalars.
void softmax_xent(const float* logits, const float* bias, const int* labels, int rows, int classes, DType dt,
                  void* dlogits, float* loss, int* correct, cudaStream_t stream);
// out[c] = sum over rows of m[r][c] (the classifier bias gradient), same dtype.
void column_sums(DType t, const void* m, int rows, int cols, void* out, cudaStream_t stream);

// ---- optimizer (sgd.cuh) ------------------------------------------------------------
struct SgdHyper {
  float lr = 0.05f, momentum = 0.9f, weight_decay = 5e-4f;
};
// w -= lr * (v = mu * v + g + wd * w) over n elements; grads of dtype gt; if
// shadow is non-null, also writes bf16(w) there (the copy bf16 layers read).
// flat selects the vectorised kernel for one launch over a whole bucket.
void sgd_momentum(float* w, float* v, DType gt, const void* g, void* shadow_bf16, std::int64_t n, SgdHyper h, bool flat,
                  cudaStream_t stream);
void cast_f32_to_bf16(const float* x, void* y, std::int64_t n, cudaStream_t stream);

// ---- data (data.cuh) ------------------------------------------------------------------
// count synthetic CIFAR records (kernels/data.h), indices first…, into records.
void synthetic_dataset(std::uint8_t* records, std::uint32_t seed, std::uint32_t first, std::int64_t count,
                       cudaStream_t stream);
// Builds a training batch from CIFAR records: sample i reads record
// sample_index(seed, step, rank, i, dataset_size) if dataset_size > 0 (data
// resident on the GPU), else record i (a staged batch); random crop + flip,
// normalise, write images (dtype, layout, channels >= 3, extra channels 0) and
// labels.
void augment(const std::uint8_t* records, std::uint32_t dataset_size, std::uint32_t seed, std::uint32_t step,
             std::uint32_t rank, const DeviceTensor& images, int* labels, cudaStream_t stream);

}  // namespace gpuscope::kernels
