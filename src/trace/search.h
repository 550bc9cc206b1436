// Searching a sorted column from a hint: consecutive lookups that land near
// each other (a thread's steps, one after the other, in its 10^6 API calls)
// cost a few probes around the hint instead of a binary search over
// everything, whose every probe is a cache miss.
#pragma once

#include <algorithm>

#include "trace/types.h"

namespace gpuscope {

// The first index i in [lo, hi) with v[i] >= x (hi if none), for v sorted on
// [lo, hi); `hint` is where to start looking (any value: clamped). Galloping
// outwards from the hint, then a binary search in the bracket found.
template <class T>
RowIndex first_at_or_after(const T* v, RowIndex lo, RowIndex hi, RowIndex hint, T x) {
  hint = std::clamp(hint, lo, hi);
  RowIndex a = hint, b = hint;  // the answer ends up in [a, b]
  RowIndex step = 1;
  if (hint < hi && v[hint] < x) {  // after hint: v[a - 1] < x throughout
    a = hint + 1;
    b = a;
    while (b < hi && v[b] < x) {
      a = b + 1;
      step *= 2;
      b = hi - b > step ? b + step : hi;
    }
  } else {  // at or before hint: b == hi or v[b] >= x throughout
    while (a > lo && v[a - 1] >= x) {
      b = a - 1;
      step *= 2;
      a = a - lo > step ? a - step : lo;
    }
  }
  return static_cast<RowIndex>(std::lower_bound(v + a, v + b, x) - v);
}

}  // namespace gpuscope
