// The UI font has every glyph the UI draws. Three ways to fail:
//   - a string literal of the viewer, analysis/ (findings, the formatter) or
//     trace/ (category names) uses a character beyond ASCII that
//     ui_glyphs() does not list (so the font may not load it, and the
//     built-in font has no stand-in for it);
//   - the default font (DejaVu Sans) lacks one of ui_glyphs();
//   - a frame of any panel, on the report-shaped sample, draws ImGui's
//     glyph for a missing character (U+FFFD): found in the draw lists by its
//     texture coordinates.
// And the fallback: without the font file, every UI character becomes its
// ASCII stand-in.
#include "viewer/fonts.h"

#include <gtest/gtest.h>
#include <imgui.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "viewer/view.h"

namespace gpuscope::viewer {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = GPUSCOPE_SOURCE_DIR;

// [SECTION] The characters the sources write -------------------------------------------------

// The contents of every string and character literal of a C++ source
// (comments, digit separators and raw strings handled).
std::vector<std::string> literals(const std::string& src) {
  std::vector<std::string> out;
  const std::size_t n = src.size();
  for (std::size_t i = 0; i < n;) {
    if (src.compare(i, 2, "//") == 0) {
      i = src.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (src.compare(i, 2, "/*") == 0) {
      const std::size_t e = src.find("*/", i + 2);
      i = e == std::string::npos ? n : e + 2;
      continue;
    }
    const char c = src[i];
    if (c == '\'' && i > 0 && std::isalnum(static_cast<unsigned char>(src[i - 1]))) {  // 1'000'000
      ++i;
      continue;
    }
    if (c == '"' && i > 0 && src[i - 1] == 'R') {  // R"delim( ... )delim"
      const std::size_t open = src.find('(', i);
      const std::string close = ")" + src.substr(i + 1, open - i - 1) + "\"";
      const std::size_t e = src.find(close, open);
      out.push_back(src.substr(open + 1, e - open - 1));
      i = e + close.size();
      continue;
    }
    if (c == '"' || c == '\'') {
      std::size_t j = i + 1;
      while (j < n && src[j] != c) j += src[j] == '\\' ? 2 : 1;
      out.push_back(src.substr(i + 1, j - i - 1));
      i = j + 1;
      continue;
    }
    ++i;
  }
  return out;
}

// Code points beyond ASCII in UTF-8 text.
std::set<unsigned> non_ascii(const std::string& s) {
  std::set<unsigned> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    const int len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    unsigned cp = b & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (int k = 1; k < len && i + static_cast<std::size_t>(k) < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
    out.insert(cp);
    i += static_cast<std::size_t>(len);
  }
  return out;
}

TEST(UiGlyphs, ParsingTheSourcesFindsLiteralsOnly) {
  const std::string src =
      "// a comment with → in it\nconst char* a = \"12 µs\"; int n = 1'000'000; /* Δ */ char c = 'x';\n"
      "auto r = R\"(— raw)\"; const char* e = \"quote \\\" and ×\";";
  const std::vector<std::string> lits = literals(src);
  std::set<unsigned> all;
  for (const std::string& l : lits)
    for (unsigned cp : non_ascii(l)) all.insert(cp);
  EXPECT_EQ(all, (std::set<unsigned>{0x00B5, 0x2014, 0x00D7}));
}

TEST(UiGlyphs, EveryCharacterTheUiSourcesWriteIsListed) {
  std::set<unsigned> listed;
  for (const UiGlyph& g : ui_glyphs()) listed.insert(g.code);
  std::map<unsigned, std::string> missing;  // code point -> a file using it
  std::size_t files = 0;
  for (const char* dir : {"viewer", "src/analysis", "src/trace"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSource / dir)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".h") continue;
      // The records' field lists: the report's keys and their meanings for
      // docs/report-schema.md, never drawn.
      if (e.path().filename() == "profile_fields.h") continue;
      ++files;
      std::ifstream f(e.path());
      std::stringstream ss;
      ss << f.rdbuf();
      for (const std::string& lit : literals(ss.str()))
        for (unsigned cp : non_ascii(lit))
          if (!listed.contains(cp)) missing.emplace(cp, e.path().string());
    }
  }
  EXPECT_GT(files, 30u);
  for (const auto& [cp, file] : missing)
    ADD_FAILURE() << "U+" << std::hex << cp << " is written in " << file
                  << " but not listed in ui_glyphs() (viewer/fonts.cpp)";
}

// [SECTION] The font -------------------------------------------------------------------------

class UiFont : public ::testing::Test {
 protected:
  void SetUp() override { ImGui::CreateContext(); }
  void TearDown() override { ImGui::DestroyContext(); }
};

TEST_F(UiFont, TheDefaultFontHasEveryUiGlyph) {
  ASSERT_TRUE(fs::exists(kDefaultFontFile)) << kDefaultFontFile << " is missing: scripts/setup.sh installs it";
  const FontStatus st = load_ui_font(ImGui::GetIO());
  EXPECT_EQ(st.file, kDefaultFontFile);
  EXPECT_TRUE(st.message.empty()) << st.message;
  EXPECT_TRUE(st.ascii.empty());
  const ImFont* font = ImGui::GetIO().Fonts->Fonts[0];
  for (const UiGlyph& g : ui_glyphs()) {
    const ImFontGlyph* glyph = font->FindGlyphNoFallback(g.code);
    ASSERT_NE(glyph, nullptr) << "U+" << std::hex << g.code;
    EXPECT_EQ(glyph->Codepoint, g.code);  // its own glyph, not a stand-in
  }
  EXPECT_EQ(font->FallbackChar, 0xFFFD);  // what the frame test looks for
}

TEST_F(UiFont, WithoutTheFontFileEveryUiCharacterHasAnAsciiStandIn) {
  const fs::path dir = fs::temp_directory_path() / ("gpuscope-font-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "not-a-font.ttf") << "hello, this is text"; }
  for (const fs::path& file : {dir / "missing.ttf", dir / "not-a-font.ttf"}) {
    SCOPED_TRACE(file.string());
    ImGui::DestroyContext();
    ImGui::CreateContext();
    const FontStatus st = load_ui_font(ImGui::GetIO(), file.string());
    EXPECT_TRUE(st.fallback());
    EXPECT_NE(st.message.find(file.string()), std::string::npos) << st.message;
    EXPECT_NE(st.message.find("fonts-dejavu-core"), std::string::npos) << st.message;
    EXPECT_NE(st.message.find(file.filename() == "missing.ttf" ? "cannot read" : "not a TrueType"), std::string::npos)
        << st.message;
    // The built-in font has Latin-1 (µ, ·, ×) but not →, Δ, dashes or the ellipsis.
    const ImFont* font = ImGui::GetIO().Fonts->Fonts[0];
    for (const UiGlyph& g : ui_glyphs()) {
      const ImFontGlyph* glyph = font->FindGlyphNoFallback(g.code);
      ASSERT_NE(glyph, nullptr) << "U+" << std::hex << g.code;
      const bool stand_in = std::find(st.ascii.begin(), st.ascii.end(), g.code) != st.ascii.end();
      EXPECT_EQ(glyph->Codepoint, stand_in ? static_cast<unsigned>(g.ascii) : g.code) << "U+" << std::hex << g.code;
    }
    for (ImWchar c : {0x2192, 0x0394, 0x2014})
      EXPECT_NE(std::find(st.ascii.begin(), st.ascii.end(), c), st.ascii.end()) << "U+" << std::hex << c;
    // Text with a stand-in measures like its ASCII spelling.
    EXPECT_EQ(font->CalcTextSizeA(13, 1e9f, 0, "A → B").x, font->CalcTextSizeA(13, 1e9f, 0, "A > B").x);
  }
  fs::remove_all(dir);
}

// [SECTION] Frames ---------------------------------------------------------------------------

class UiFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1400, 900);
    io.DeltaTime = 1.0f / 60;
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    font_ = load_ui_font(io);
  }
  void TearDown() override { ImGui::DestroyContext(); }

  // Draws a frame and counts the vertices of glyphs for missing characters.
  std::size_t frame_missing_glyphs(View& v, const char* extra_text = nullptr) {
    ImGui::NewFrame();
    v.draw();
    if (extra_text) {
      ImGui::SetNextWindowPos(ImVec2(100, 100));
      ImGui::SetNextWindowSize(ImVec2(300, 100));  // not auto-fit: that hides a new window for a frame
      ImGui::Begin("extra");
      ImGui::TextUnformatted(extra_text);
      ImGui::End();
    }
    ImGui::Render();
    const ImFontGlyph* missing = ImGui::GetIO().Fonts->Fonts[0]->FallbackGlyph;
    std::size_t n = 0;
    const ImDrawData* dd = ImGui::GetDrawData();
    for (int l = 0; l < dd->CmdListsCount; ++l)
      for (const ImDrawVert& vtx : dd->CmdLists[l]->VtxBuffer) n += vtx.uv.x == missing->U0 && vtx.uv.y == missing->V0;
    return n;
  }
  static void wait_idle(const View& v) {
    for (int i = 0; i < 4000 && v.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  FontStatus font_;
};

TEST_F(UiFrames, NoPanelOfTheReportShapedSampleDrawsAMissingGlyph) {
  ASSERT_FALSE(font_.fallback()) << font_.message;
  ASSERT_EQ(ImGui::GetIO().Fonts->Fonts[0]->FallbackChar, 0xFFFD);
  View v;
  v.open((kSource / "assets/sample-report-job.gscope").string());
  wait_idle(v);
  frame_missing_glyphs(v);
  v.open_compare((kSource / "assets/sample-clean-job.gscope").string());
  wait_idle(v);
  frame_missing_glyphs(v);
  ASSERT_NE(v.document(), nullptr) << v.load_error();
  ASSERT_NE(v.document()->profile(), nullptr);
  ASSERT_NE(v.compare_document(), nullptr);
  ASSERT_TRUE(v.select_kernel("pad_nchw_kernel"));  // the Details panel has a kernel to show
  for (Panel p : {Panel::timeline, Panel::hotspots, Panel::findings, Panel::summary, Panel::compare}) {
    SCOPED_TRACE(std::string(to_string(p)));
    v.show(p);
    std::size_t missing = 0;
    for (int i = 0; i < 3; ++i) missing += frame_missing_glyphs(v);
    EXPECT_EQ(missing, 0u);
  }
  // Tooltips: a kernel zoomed in (name, duration, category, grid ×), and a folded block zoomed out.
  v.show(Panel::timeline);
  const KernelTable& k = v.document()->trace().kernels();
  const RowIndex r = v.selection().row;
  const TimeNs len = k.end[r] - k.start[r];
  v.zoom_to(k.start[r] - len, k.end[r] + len);  // the kernel in the middle third
  frame_missing_glyphs(v);
  const TrackStats* stream = nullptr;
  for (const TrackStats& ts : v.stats().tracks)
    if (ts.track == k.track_at(r) && !ts.compared) stream = &ts;  // A's track, not B's drawn under it
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(stream->visible);
  const float x = v.stats().timeline_x0 + v.stats().timeline_width_px / 2, y = stream->y + stream->height / 2;
  ImGui::GetIO().MousePos = ImVec2(x, y);
  std::size_t missing = 0;
  for (int i = 0; i < 3; ++i) missing += frame_missing_glyphs(v);
  EXPECT_FALSE(v.stats().tooltip.empty());
  v.zoom_to_all();
  for (int i = 0; i < 3; ++i) missing += frame_missing_glyphs(v);
  EXPECT_EQ(missing, 0u);

  // The check can fail: a character the font lacks is seen.
  EXPECT_GT(frame_missing_glyphs(v, "中"), 0u);
}

}  // namespace
}  // namespace gpuscope::viewer
