// Text cut to a width with an ellipsis ("volta_sgemm_128x64_n…"), measured
// in the current ImGui font. The caller shows the full text in a tooltip.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::viewer {

// `text` if it fits in `max_width` pixels, else its longest prefix (whole
// UTF-8 characters) that fits with "…" after it; "…" alone, or nothing, when
// even that does not fit.
std::string elide(std::string_view text, float max_width);

}  // namespace gpuscope::viewer
