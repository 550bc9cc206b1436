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

// Parses "padding", "gemm", … (as printed by to_string); returns false if unknown.
bool parse_category(std::string_view s, KernelCategory* out);

}  // namespace gpuscope
