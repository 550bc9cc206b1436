// The UI's font: DejaVu Sans (Debian's fonts-dejavu-core) with every glyph
// the viewer writes, so "12.3 µs", "per step A → B" and "share Δ" read as in
// the report. ImGui's built-in font lacks most of them: when the font file is
// missing or unreadable the viewer says so once and falls back to it, with an
// ASCII stand-in for each character it lacks ("A > B", "share d").
//
// ui_glyphs() is the list of characters beyond ASCII the UI may draw; the
// viewer tests fail when a string literal of the viewer, analysis/ or trace/
// uses one that is not listed, or when the loaded font lacks one.
#pragma once

#include <imgui.h>

#include <span>
#include <string>
#include <vector>

namespace gpuscope::viewer {

inline constexpr const char* kDefaultFontFile = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
inline constexpr float kFontPixels = 15;

// A character beyond ASCII that the UI writes, and what stands in for it when
// the font lacks it.
struct UiGlyph {
  ImWchar code;
  char ascii;
};
std::span<const UiGlyph> ui_glyphs();

// The glyph ranges loaded from the font (0-terminated pairs): ASCII,
// Latin-1, every ui_glyphs() character and U+FFFD, the glyph ImGui draws for
// a character the font lacks.
const ImWchar* ui_glyph_ranges();

struct FontStatus {
  std::string file;            // the font file loaded; empty: ImGui's built-in font
  std::string message;         // why the built-in font is used (names the file), empty if it is not
  std::vector<ImWchar> ascii;  // ui_glyphs() characters drawn as their ASCII stand-in
  bool fallback() const { return file.empty(); }
};

// Adds the UI font to io.Fonts and builds the atlas (before the first frame).
// Never fails: a missing, unreadable or broken `file` gives ImGui's built-in
// font with ASCII stand-ins, and FontStatus says why.
FontStatus load_ui_font(ImGuiIO& io, const std::string& file = kDefaultFontFile);

}  // namespace gpuscope::viewer
