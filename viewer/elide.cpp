#include "viewer/elide.h"

#include <imgui.h>

#include <vector>

namespace gpuscope::viewer {

namespace {
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // …

float width_of(std::string_view s) { return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x; }
}  // namespace

std::string elide(std::string_view text, float max_width) {
  if (width_of(text) <= max_width) return std::string(text);
  const float room = max_width - width_of(kEllipsis);
  if (room < 0) return width_of(kEllipsis) <= max_width ? std::string(kEllipsis) : std::string();
  // Prefixes that end on a character boundary (not before a UTF-8 continuation byte 10xxxxxx).
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) cuts.push_back(i);
  // The longest that fits: widths grow with the prefix, so a binary search (cuts[0] = 0 always fits).
  std::size_t lo = 0, hi = cuts.size() - 1;
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (width_of(text.substr(0, cuts[mid])) <= room)
      lo = mid;
    else
      hi = mid - 1;
  }
  std::string out(text.substr(0, cuts[lo]));
  out += kEllipsis;
  return out;
}

}  // namespace gpuscope::viewer
