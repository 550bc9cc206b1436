// Kernel categories from demangled kernel names.
//
// One ordered pattern table (kernel_category.cpp) decides: the first rule
// whose pattern occurs in the name wins, so specific rules (Eigen's
// TensorPaddingOp inside an EigenMetaKernel) come before generic ones
// (elementwise). Matching is case-insensitive substring search over the
// demangled name without its parameter list, template arguments included —
// Eigen's kernels are only recognisable by their template arguments, while a
// parameter type such as cublasTransposeParams says nothing about the kernel.
#pragma once

#include <span>
#include <string_view>

#include "trace/types.h"

namespace gpuscope {

struct CategoryRule {
  KernelCategory category;
  std::string_view pattern;  // lower-case substring
};

// The pattern table, in match order.
std::span<const CategoryRule> category_rules();

KernelCategory classify_kernel(std::string_view demangled_name);

// The category of a kernel given the framework op that launched it, where the
// op says more than the kernel's name: a GEMM kernel launched by a
// convolution op (cuDNN runs convolutions as implicit GEMMs with cuBLAS-named
// kernels such as volta_sgemm_*) is convolution. Returns `by_name` when no
// op rule applies. Matching is case-insensitive.
KernelCategory classify_by_op(std::string_view op_name, KernelCategory by_name);

// Parses "padding", "gemm", … (as printed by to_string); returns false if unknown.
bool parse_category(std::string_view s, KernelCategory* out);

}  // namespace gpuscope
