// The autograd link of each range of a trace, by the range's name: its
// sequence number (-1 none) and forward thread (0 none). For tests whose
// range names are unique.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "trace/trace.h"

namespace gpuscope::testing {

using AutogradLink = std::pair<std::int64_t, std::uint32_t>;

inline std::map<std::string, AutogradLink> autograd_links(const Trace& t) {
  std::map<std::string, AutogradLink> links;
  for (RowIndex r = 0; r < t.ranges().size(); ++r)
    links[std::string(t.str(t.ranges().name[r]))] = {sequence_number(t.ranges(), r), t.ranges().fwd_thread_at(r)};
  return links;
}

}  // namespace gpuscope::testing
