// Searching a sorted column from a hint: consecutive lookups that land near
// each other (a thread's steps, one after the other, in its 10^6 API calls)
// cost a few probes around the hint instead of a binary search over
// everything, whose every probe is a cache miss. And finding the few rows
// of a byte column with one value (a kernel category) without a test per row.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "trace/search.h"
#include "trace/types.h"

namespace gpuscope::detail {

using gpuscope::first_at_or_after;  // trace/search.h

// The first row i in [from, to) with column[i] == value (to if none).
// memchr looks at 16-32 bytes at a time: a pass that wants the few kernels
// of one category reads the 10^7-row column several times faster than a
// loop that tests each row.
inline RowIndex first_with_byte(const std::uint8_t* column, RowIndex from, RowIndex to, std::uint8_t value) {
  if (from >= to) return to;
  const void* hit = std::memchr(column + from, value, to - from);
  return hit ? static_cast<RowIndex>(static_cast<const std::uint8_t*>(hit) - column) : to;
}

}  // namespace gpuscope::detail
