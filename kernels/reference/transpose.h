// Reference: NCHW <-> NHWC layout changes (what cuDNN-era frameworks ran
// around layout-specific kernels).
#pragma once

#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

template <class S>
Vec<S> transpose_nchw_to_nhwc(std::span<const S> x, Shape s) {
  return relayout(x, s, Layout::nchw, Layout::nhwc);
}

template <class S>
Vec<S> transpose_nhwc_to_nchw(std::span<const S> x, Shape s) {
  return relayout(x, s, Layout::nhwc, Layout::nchw);
}

}  // namespace gpuscope::kernels::ref
