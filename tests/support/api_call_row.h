// An API call row of one time unit: the tests that build tables of calls by
// hand (the compact track and callback-id columns) share it.
#pragma once

#include <cstdint>

#include "trace/builder.h"

namespace gpuscope::testing {

inline ApiCallRow api_call_row(TrackId track, TimeNs start, StringId name, std::uint32_t cbid) {
  ApiCallRow a;
  a.track = track;
  a.start = start;
  a.end = start + 1;
  a.name = name;
  a.cbid = cbid;
  return a;
}

}  // namespace gpuscope::testing
