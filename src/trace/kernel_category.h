// Kernel categories from demangled kernel names.
//
// One ordered pattern table (kernel_category.cpp) decides: the first rule
// whose pattern occurs in the name wins, so specific rules (Eigen's
// TensorPaddingOp inside an EigenMetaKernel) come before generic ones
// (elementwise). Matching is case-insensitive substring search over the
// demangled name without its parameter list, template arguments included —
// Eigen's kernels are only recognisable by their template arguments, while a
// parameter type such as cublasTransposeParams says nothing about the kernel.
// One rule reads the template arguments themselves: an Eigen
// TensorReductionOp over 3 of the 4 dimensions of a 4-D tensor ({0, 2, 3}:
// the channels of NCHW) is a per-channel statistic, batch norm done as
// generic reductions, and is normalization.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "trace/types.h"

namespace gpuscope {

struct CategoryRule {
  KernelCategory category;
  std::string_view pattern;  // lower-case substring
};

// The pattern table, in match order.
std::span<const CategoryRule> category_rules();

// Whether `haystack` contains `lower_needle` (lower case) ignoring ASCII
// case: every byte other than A-Z compares as it is, whatever the locale.
bool contains_nocase(std::string_view haystack, std::string_view lower_needle);

KernelCategory classify_kernel(std::string_view demangled_name);

// Which rule placed a kernel of this name in `placed`, for people:
// "name: <pattern>", "template arguments: reduction over {0,2,3} (…)",
// "launching op: …" (when `placed` is not the name's category: classify_by_op
// moved it), "no rule (other)".
std::string category_rule_text(std::string_view demangled_name, KernelCategory placed);

// The category of a kernel given the framework op that launched it, where the
// op says more than the kernel's name: a GEMM kernel launched by a
// convolution op (cuDNN runs convolutions as implicit GEMMs with cuBLAS-named
// kernels such as volta_sgemm_*) is convolution; a multi-tensor kernel
// launched by torch._foreach_copy_ is memory, not optimizer. Returns
// `by_name` when no op rule applies. Matching is case-insensitive.
KernelCategory classify_by_op(std::string_view op_name, KernelCategory by_name);
// PyTorch's pad ops (aten::constant_pad_nd, aten::pad, reflection and
// replication pads, aten::_pad_circular): the fill and copy kernels under
// them pad.
bool is_pad_op(std::string_view op_name);
// Whether a framework op copies only to change a tensor's layout: PyTorch's
// aten::contiguous and aten::reshape, which copy a tensor only where it is
// not contiguous (a transposed or permuted view) and return a view of any
// other.
bool is_layout_copy_op(std::string_view op_name);

// Parses "padding", "gemm", … (as printed by to_string); returns false if unknown.
bool parse_category(std::string_view s, KernelCategory* out);

}  // namespace gpuscope
