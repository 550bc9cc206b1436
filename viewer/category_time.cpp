#include "viewer/category_time.h"

#include <algorithm>

namespace gpuscope::viewer {

namespace {
// A value past the last category counts as `other` (not as the last category).
std::size_t column_category(std::uint8_t c) {
  return c < kKernelCategoryCount ? c : static_cast<std::size_t>(KernelCategory::other);
}
}  // namespace

CategoryTimeIndex CategoryTimeIndex::build(std::span<const TimeNs> start, std::span<const TimeNs> end,
                                           std::span<const std::uint8_t> category) {
  CategoryTimeIndex ix;
  ix.start_ = start.data();
  ix.end_ = end.data();
  ix.category_ = category.data();
  ix.rows_ = static_cast<RowIndex>(std::min({start.size(), end.size(), category.size()}));
  std::array<bool, kKernelCategoryCount> present{};
  for (RowIndex r = 0; r < ix.rows_; ++r) present[column_category(category[r])] = true;
  std::array<std::uint8_t, kKernelCategoryCount> column_of{};
  for (int c = 0; c < kKernelCategoryCount; ++c)
    if (present[static_cast<std::size_t>(c)]) {
      column_of[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(ix.columns_);
      ix.category_of_[ix.columns_++] = static_cast<std::uint8_t>(c);
    }
  const std::size_t blocks = ix.rows_ / kBlockRows;
  ix.prefix_.assign((blocks + 1) * ix.columns_, 0);
  std::vector<TimeNs> running(ix.columns_, 0);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (RowIndex r = static_cast<RowIndex>(b * kBlockRows); r < (b + 1) * kBlockRows; ++r)
      running[column_of[column_category(category[r])]] += end[r] - start[r];
    std::copy(running.begin(), running.end(), ix.prefix_.begin() + static_cast<std::ptrdiff_t>((b + 1) * ix.columns_));
  }
  return ix;
}

void CategoryTimeIndex::scan(RowIndex a, RowIndex b, TimeNs sign, CategoryTimes& out) const {
  for (RowIndex r = a; r < b; ++r) out[column_category(category_[r])] += sign * (end_[r] - start_[r]);
}

CategoryTimes CategoryTimeIndex::prefix(RowIndex row) const {
  CategoryTimes out{};
  row = std::min(row, rows_);
  // From the nearer block boundary: at most kBlockRows / 2 rows to scan.
  std::size_t b = row / kBlockRows;
  const bool up = row % kBlockRows > kBlockRows / 2 && (b + 1) * kBlockRows <= rows_;
  if (up) ++b;
  const TimeNs* p = prefix_.data() + b * columns_;
  for (std::uint32_t c = 0; c < columns_; ++c) out[category_of_[c]] = p[c];
  const auto boundary = static_cast<RowIndex>(b * kBlockRows);
  if (up)
    scan(row, boundary, -1, out);
  else
    scan(boundary, row, 1, out);
  return out;
}

CategoryTimes CategoryTimeIndex::sum(RowIndex first, RowIndex last) const {
  if (last <= first) return {};
  // A short run: scanning it is cheaper than two prefixes.
  if (last - first <= kBlockRows) {
    CategoryTimes out{};
    scan(first, std::min(last, rows_), 1, out);
    return out;
  }
  CategoryTimes out = prefix(last);
  const CategoryTimes before = prefix(first);
  for (std::size_t c = 0; c < out.size(); ++c) out[c] -= before[c];
  return out;
}

}  // namespace gpuscope::viewer
