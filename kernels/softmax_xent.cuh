// Softmax cross-entropy over the classifier's logits, mean over the batch,
// with the classifier bias optionally folded in (--bias fused), and the
// column sums that give the bias gradient.
//
// Logits stay fp32 whatever the precision (cuBLAS writes them so from bf16
// inputs); one block handles the whole batch so the mean loss and the count of
// correct predictions come out of one deterministic reduction.
#pragma once

#include "kernels/cuda_common.cuh"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

template <class T>
__global__ void softmax_xent_kernel(const float* __restrict__ logits, const float* __restrict__ bias,
                                    const int* __restrict__ labels, int rows, int classes, T* __restrict__ dlogits,
                                    float* __restrict__ loss, int* __restrict__ correct) {
  __shared__ double red[kThreads / 32];
  double total = 0.0, hits = 0.0;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int r = threadIdx.x; r < rows; r += kThreads) {
    const float* z = logits + static_cast<std::int64_t>(r) * classes;
    auto zb = [&](int k) { return z[k] + (bias ? bias[k] : 0.0f); };
    float mx = zb(0);
    int arg = 0;
    for (int k = 1; k < classes; ++k)
      if (zb(k) > mx) mx = zb(k), arg = k;
    float sum = 0.0f;
    for (int k = 0; k < classes; ++k) sum += __expf(zb(k) - mx);
    const int label = labels[r];
    total += static_cast<double>(logf(sum) - (zb(label) - mx));
    hits += arg == label ? 1.0 : 0.0;
    const float inv_sum = 1.0f / sum;
    for (int k = 0; k < classes; ++k) {
      const float p = __expf(zb(k) - mx) * inv_sum;
      dlogits[static_cast<std::int64_t>(r) * classes + k] = from_f32<T>((p - (k == label ? 1.0f : 0.0f)) * inv_rows);
    }
  }
  total = block_sum<kThreads>(total, red);
  hits = block_sum<kThreads>(hits, red);
  if (threadIdx.x == 0) {
    *loss = static_cast<float>(total / rows);
    *correct = static_cast<int>(hits);
  }
}

// One block per column.
template <class T>
__global__ void fc_bias_grad_reduce_kernel(const T* __restrict__ m, int rows, int cols, T* __restrict__ out) {
  __shared__ double red[kThreads / 32];
  const int c = blockIdx.x;
  double s = 0.0;
  for (int r = threadIdx.x; r < rows; r += kThreads) s += to_f32(m[static_cast<std::int64_t>(r) * cols + c]);
  s = block_sum<kThreads>(s, red);
  if (threadIdx.x == 0) out[c] = from_f32<T>(static_cast<float>(s));
}

// ---- kernel launchers ------------------------------------------------------------

void softmax_xent(const float* logits, const float* bias, const int* labels, int rows, int classes, DType dt,
                  void* dlogits, float* loss, int* correct, cudaStream_t stream) {
  require_arg(rows > 0 && classes > 1, "softmax_xent: shape");
  GS_DISPATCH(dt, T, {
    softmax_xent_kernel<T>
        <<<1, kThreads, 0, stream>>>(logits, bias, labels, rows, classes, static_cast<T*>(dlogits), loss, correct);
  });
  check_launch("softmax_xent");
}

void column_sums(DType t, const void* m, int rows, int cols, void* out, cudaStream_t stream) {
  GS_DISPATCH(t, T, {
    fc_bias_grad_reduce_kernel<T>
        <<<cols, kThreads, 0, stream>>>(static_cast<const T*>(m), rows, cols, static_cast<T*>(out));
  });
  check_launch("column_sums");
}

}  // namespace gpuscope::kernels
