// Summary statistics of durations (count, total, min, max, mean, median),
// exact, and fast on tens of millions of values.
#pragma once

#include <span>
#include <vector>

#include "analysis/profile.h"

namespace gpuscope {

// The k-th smallest value (0-based) of `values`, which it reorders. Exact:
// a histogram pass narrows the search to one bucket, then nth_element on it,
// so it stays linear with a small constant even for 10^7 values.
TimeNs select_kth(std::span<TimeNs> values, std::size_t k);

// Statistics of `values` (reordered). The median of an even count is the
// lower of the two middle values, so it is always an observed duration.
DurationStats summarize(std::span<TimeNs> values);

// Merges count/total/min/max/mean of two summaries; the median cannot be
// merged exactly and is taken from the larger one (callers that need the exact
// median summarize the pooled values instead).
DurationStats merge_approx(const DurationStats& a, const DurationStats& b);

}  // namespace gpuscope
