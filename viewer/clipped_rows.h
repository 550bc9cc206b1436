// Drawing only the rows of a long list or table that are in view.
#pragma once

#include <cstddef>

#include <imgui.h>

namespace gpuscope::viewer {

// row(i) for each of rows [0, n) that ImGui's list clipper finds in view (the
// others only take up their height).
template <class Row>
void for_visible_rows(std::size_t n, Row&& row) {
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(n));
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) row(i);
}

}  // namespace gpuscope::viewer
