// Exact kernel time per category over any run of kernel rows, so a folded
// block on the timeline (thousands of kernels in a few pixels) shows the
// category mix of all of them, not of a sample.
//
// Per-category prefix sums at every 64th row of the kernel table (a stream's
// kernels are contiguous rows, so any run of them is a row range); a sum over
// [first, last) is two prefixes, each a block boundary plus at most 32 rows
// scanned from the nearer boundary. Only the categories the trace has get a
// column: 10M kernels of 9 categories take 11 MB.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "trace/types.h"

namespace gpuscope::viewer {

using CategoryTimes = std::array<TimeNs, kKernelCategoryCount>;

class CategoryTimeIndex {
 public:
  static constexpr RowIndex kBlockRows = 64;

  CategoryTimeIndex() = default;
  // Over the kernel table's columns (which must outlive the index).
  static CategoryTimeIndex build(std::span<const TimeNs> start, std::span<const TimeNs> end,
                                 std::span<const std::uint8_t> category);

  // Kernel time (end - start, summed) per category of rows [first, last).
  CategoryTimes sum(RowIndex first, RowIndex last) const;
  // The same of rows [0, row); sum(a, b) is prefix(b) - prefix(a).
  CategoryTimes prefix(RowIndex row) const;

  RowIndex rows() const { return rows_; }
  std::size_t memory_bytes() const { return sizeof(*this) + prefix_.capacity() * sizeof(TimeNs); }

 private:
  // Adds sign × the time of rows [a, b) to `out`.
  void scan(RowIndex a, RowIndex b, TimeNs sign, CategoryTimes& out) const;

  const TimeNs* start_ = nullptr;
  const TimeNs* end_ = nullptr;
  const std::uint8_t* category_ = nullptr;
  RowIndex rows_ = 0;
  std::uint32_t columns_ = 0;
  std::array<std::uint8_t, kKernelCategoryCount> category_of_{};  // column -> category
  // (rows / kBlockRows + 1) × columns_: per column, the time of rows [0, b · kBlockRows).
  std::vector<TimeNs> prefix_;
};

}  // namespace gpuscope::viewer
