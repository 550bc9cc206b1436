#include "viewer/fonts.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace gpuscope::viewer {

std::span<const UiGlyph> ui_glyphs() {
  static constexpr UiGlyph kGlyphs[] = {
      {0x00B5, 'u'},  // µ: "12.3 µs"
      {0x00B7, '.'},  // ·: between fields ("4 GPUs · 15,440 kernels")
      {0x00D7, 'x'},  // ×: "grid 128×1×1"
      {0x0394, 'd'},  // Δ: a change ("share Δ")
      {0x2013, '-'},  // –: ranges in findings ("35–50%")
      {0x2014, '-'},  // —: a pause in a sentence
      {0x2026, '.'},  // …: ImGui's ellipsis for clipped text
      {0x2192, '>'},  // →: "per step A → B"
      {0x2265, '>'},  // ≥: thresholds in findings ("critical at ≥ 15 %")
  };
  return kGlyphs;
}

const ImWchar* ui_glyph_ranges() {
  static const std::vector<ImWchar> ranges = [] {
    std::vector<ImWchar> r = {0x0020, 0x00FF};  // ASCII and Latin-1
    for (const UiGlyph& g : ui_glyphs())
      if (g.code > 0x00FF) r.insert(r.end(), {g.code, g.code});
    r.insert(r.end(), {0xFFFD, 0xFFFD, 0});  // the glyph drawn for a character the font lacks
    return r;
  }();
  return ranges.data();
}

namespace {

// The bytes of `file`; empty with `why` set if it cannot be read or is no font.
std::vector<char> read_font(const std::string& file, std::string* why) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    *why = std::string("cannot read the font (") + std::strerror(errno) + ")";
    return {};
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  // TrueType, OpenType (CFF) and collections start with one of these tags.
  const auto tag = bytes.size() >= 12 ? std::string_view(bytes.data(), 4) : std::string_view();
  if (tag != std::string_view("\0\1\0\0", 4) && tag != "true" && tag != "OTTO" && tag != "ttcf") {
    *why = "not a TrueType or OpenType font";
    return {};
  }
  return bytes;
}

}  // namespace

FontStatus load_ui_font(ImGuiIO& io, const std::string& file) {
  FontStatus status;
  std::string why = "no font file given";
  if (!file.empty()) {
    const std::vector<char> data = read_font(file, &why);
    if (!data.empty()) {
      ImFontConfig cfg;
      cfg.FontDataOwnedByAtlas = true;  // the atlas frees the data with IM_FREE
      std::snprintf(cfg.Name, sizeof cfg.Name, "%s", file.c_str());
      const int size = static_cast<int>(data.size());
      void* owned = IM_ALLOC(data.size());
      std::memcpy(owned, data.data(), data.size());
      if (io.Fonts->AddFontFromMemoryTTF(owned, size, kFontPixels, &cfg, ui_glyph_ranges()) && io.Fonts->Build())
        status.file = file;
      else
        why = "ImGui cannot build a font from it";
    }
  }
  if (status.fallback()) {
    io.Fonts->Clear();
    io.Fonts->AddFontDefault();
    io.Fonts->Build();
    status.message = (file.empty() ? std::string("font") : file) + ": " + why +
                     "; the UI uses ImGui's built-in font, with ASCII for the characters it lacks (\">\" for \"→\", "
                     "\"d\" for \"Δ\"). "
                     "Install Debian's fonts-dejavu-core (scripts/setup.sh) or pass --font FILE.";
  }
  // Every UI character the font lacks is drawn as its ASCII stand-in.
  ImFont* font = io.Fonts->Fonts[0];
  for (const UiGlyph& g : ui_glyphs()) {
    if (font->FindGlyphNoFallback(g.code)) continue;
    font->AddRemapChar(g.code, static_cast<ImWchar>(g.ascii));
    status.ascii.push_back(g.code);
  }
  // AddRemapChar grows the lookup with unknown advances (-1) between the old
  // end and the new character: those are characters the font lacks, drawn as
  // its fallback glyph, so they advance as far.
  for (float& advance : font->IndexAdvanceX)
    if (advance < 0) advance = font->FallbackAdvanceX;
  return status;
}

}  // namespace gpuscope::viewer
