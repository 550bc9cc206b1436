// Attention done eagerly: the scores matrix Q·K^T written by one GEMM, read
// and written again by a softmax (and the scale, mask and copies around it),
// then read by the GEMM with V. A fused kernel (FlashAttention, memory-
// efficient or cuDNN SDPA) keeps it on chip. On a stream's kernel sequence
// the eager form is a softmax kernel with a GEMM among the few kernels just
// before it and among the few just after: the chain, GEMM to GEMM, is what
// fusing replaces.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/detail/context.h"
#include "analysis/util/search.h"

namespace gpuscope::detail {

namespace {

// Kernels allowed between a GEMM and the softmax (scale, mask, dtype copy) and
// between the softmax and the next GEMM (dropout, copy): ATen's eager
// attention launches one or two.
constexpr std::size_t kChainReach = 3;

// A softmax, not a classifier head's loss around one (cross_entropy, nll_loss, log_softmax).
bool is_attention_softmax_name(std::string_view name) {
  return contains_nocase(name, "softmax") && !contains_nocase(name, "loss") && !contains_nocase(name, "entropy") &&
         !contains_nocase(name, "logsoftmax") && !contains_nocase(name, "log_softmax");
}

// Each name tested once (-1: not yet).
bool is_attention_softmax(const Trace& t, const KernelTable& k, RowIndex i, std::vector<std::int8_t>& by_name) {
  if (k.category_at(i) != KernelCategory::softmax_loss) return false;
  std::int8_t& known = by_name[k.name[i]];
  if (known < 0) known = is_attention_softmax_name(t.str(k.name[i])) ? 1 : 0;
  return known == 1;
}

}  // namespace

void attention_pass(const RankedTrace& rt, const AnalysisOptions& opt, Evidence* ev) {
  const Trace& t = *rt.trace;
  const KernelTable& k = t.kernels();
  if (!any_string(t, is_attention_softmax_name)) return;  // no softmax kernel: no chain to look for
  std::vector<std::int8_t> softmax_name(t.strings().size(), -1);
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (!on_device(t, tr, opt.device)) continue;
    const RowRange r = t.rows_of(TableId::kernels, tr);
    RowIndex counted_to = r.begin;  // kernels before this one are in a chain already
    const auto softmax = static_cast<std::uint8_t>(KernelCategory::softmax_loss);
    for (RowIndex i = r.begin;; ++i) {
      i = first_with_byte(k.category.data(), i, r.end, softmax);  // the stream's next softmax-or-loss kernel
      if (i >= r.end) break;
      if (!is_attention_softmax(t, k, i, softmax_name)) continue;
      RowIndex before = kNoRow, after = kNoRow;
      for (RowIndex j = i; j > r.begin && i - j < kChainReach;) {
        --j;
        if (k.category_at(j) == KernelCategory::gemm) {
          before = j;
          break;
        }
      }
      for (RowIndex j = i + 1; j < r.end && j - i <= kChainReach; ++j)
        if (k.category_at(j) == KernelCategory::gemm) {
          after = j;
          break;
        }
      if (before == kNoRow || after == kNoRow) continue;
      ++ev->attention_chains;
      for (RowIndex j = std::max(before, counted_to); j <= after; ++j) {
        const TimeNs d = k.end[j] - k.start[j];
        ev->attention_chain_ns += d;
        if (k.category_at(j) == KernelCategory::gemm) ev->attention_chain_gemm_ns += d;
      }
      counted_to = after + 1;
      i = after;  // the GEMM after may be the one before the next softmax: the loop looks back from there
    }
  }
}

}  // namespace gpuscope::detail
