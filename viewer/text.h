// cat(a, b, …): string concatenation by appending. Used instead of
// `"literal" + std::string` chains, which GCC 12 at -O3 flags with a false
// -Wrestrict warning (GCC bug 105329) that -Werror would turn into an error.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::viewer {

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  s.reserve((std::string_view(parts).size() + ... + 0));
  (s.append(std::string_view(parts)), ...);
  return s;
}

}  // namespace gpuscope::viewer
