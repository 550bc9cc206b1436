// The fixture of the viewer's frame tests: ImGui's null backend (a font
// atlas, a display size, NewFrame / View::draw / Render), synthetic input as
// ImGui 1.86 reads it (io.MousePos, io.MouseDown, io.MouseWheel,
// io.KeysDown), and what a frame put on screen.
#pragma once

#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "analysis/profile.h"
#include "support/test_traces.h"
#include "viewer/view.h"

namespace gpuscope::viewer {

inline constexpr std::uint64_t kMaxVertices = 300'000;

class ViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1280, 800);
    io.DeltaTime = 1.0f / 60;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  }
  void TearDown() override { ImGui::DestroyContext(); }

  ImDrawData* frame(View& v) {
    ImGui::NewFrame();
    v.draw();
    ImGui::Render();
    ImGuiIO& io = ImGui::GetIO();
    io.MouseWheel = 0;
    return ImGui::GetDrawData();
  }
  void frames(View& v, int n) {
    for (int i = 0; i < n; ++i) frame(v);
  }
  // Hover, press, release: a click as ImGui sees one.
  void click(View& v, float x, float y) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(x, y);
    frame(v);
    io.MouseDown[0] = true;
    frame(v);
    io.MouseDown[0] = false;
    frame(v);
  }
  void click(View& v, const ClickTarget& t) { click(v, t.x, t.y); }
  // Press at (xa, ya), move in a few steps to (xb, yb), release: a drag as
  // ImGui sees one (with Shift held when `shift`).
  void drag(View& v, float xa, float ya, float xb, float yb, bool shift = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeyShift = shift;
    io.MousePos = ImVec2(xa, ya);
    frame(v);
    io.MouseDown[0] = true;
    frame(v);
    for (int i = 1; i <= 4; ++i) {
      io.MousePos = ImVec2(xa + (xb - xa) * static_cast<float>(i) / 4, ya + (yb - ya) * static_cast<float>(i) / 4);
      frame(v);
    }
    io.MouseDown[0] = false;
    frame(v);
    io.KeyShift = false;
  }
  // A key pressed and released (ImGui 1.86: io.KeysDown by key index; letters by their upper-case code).
  void key(View& v, int k) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeysDown[k] = true;
    frame(v);
    io.KeysDown[k] = false;
    frame(v);
  }
  static void wait_idle(const View& v) {
    for (int i = 0; i < 2000 && v.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  static const ClickTarget* find_target(const std::vector<ClickTarget>& ts, std::string_view label) {
    for (const ClickTarget& t : ts)
      if (t.label == label) return &t;
    return nullptr;
  }

  static std::shared_ptr<Document> doc(const testing::TrainingTraceOptions& o, bool with_profile = true) {
    auto d = std::make_shared<Document>("test.gscope", testing::training_trace(o));
    if (with_profile) d->set_profile(std::make_shared<const Profile>(compute_profile(d->trace())));
    return d;
  }

  // Events of GPU ops on the visible GPU tracks that overlap the view.
  static std::uint64_t visible_gpu_events(const View& v) {
    const Trace& t = v.document()->trace();
    std::uint64_t n = 0;
    for (const TrackStats& ts : v.stats().tracks) {
      if (!ts.visible || t.tracks()[ts.track].kind != TrackKind::gpu) continue;
      for (TableId table : {TableId::kernels, TableId::memcpys, TableId::memsets})
        n += t.rows_overlapping(table, ts.track, v.view_start(), v.view_end()).size();
    }
    return n;
  }
  static std::uint64_t drawn_on_gpu(const View& v, std::uint64_t* merged_blocks, std::uint64_t* merged_events) {
    const Trace& t = v.document()->trace();
    std::uint64_t drawn = 0;
    *merged_blocks = *merged_events = 0;
    for (const TrackStats& ts : v.stats().tracks)
      if (ts.visible && t.tracks()[ts.track].kind == TrackKind::gpu) {
        drawn += ts.drawn;
        *merged_blocks += ts.merged_blocks;
        *merged_events += ts.merged_events;
      }
    return drawn;
  }
  static bool has_panel(const View& v, std::string_view p) {
    const auto& ps = v.stats().panels;
    return std::find(ps.begin(), ps.end(), p) != ps.end();
  }
};

// The colour on top at (x, y) of the frame: the last solid triangle drawn
// there (text glyphs aside), as the GPU would paint it; 0 if none.
inline ImU32 color_at(const ImDrawData* dd, float x, float y) {
  const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
  ImU32 top = 0;
  auto side = [](ImVec2 a, ImVec2 b, float px, float py) {
    return (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x);
  };
  for (int l = 0; l < dd->CmdListsCount; ++l) {
    const ImDrawList* dl = dd->CmdLists[l];
    for (const ImDrawCmd& cmd : dl->CmdBuffer) {
      if (x < cmd.ClipRect.x || x >= cmd.ClipRect.z || y < cmd.ClipRect.y || y >= cmd.ClipRect.w) continue;
      for (unsigned i = 0; i + 2 < cmd.ElemCount; i += 3) {
        const ImDrawVert& a =
            dl->VtxBuffer[static_cast<int>(cmd.VtxOffset + dl->IdxBuffer[static_cast<int>(cmd.IdxOffset + i)])];
        const ImDrawVert& b =
            dl->VtxBuffer[static_cast<int>(cmd.VtxOffset + dl->IdxBuffer[static_cast<int>(cmd.IdxOffset + i + 1)])];
        const ImDrawVert& c =
            dl->VtxBuffer[static_cast<int>(cmd.VtxOffset + dl->IdxBuffer[static_cast<int>(cmd.IdxOffset + i + 2)])];
        if (a.uv.x != white.x || a.uv.y != white.y || (a.col >> IM_COL32_A_SHIFT) != 255) continue;
        const float d1 = side(a.pos, b.pos, x, y), d2 = side(b.pos, c.pos, x, y), d3 = side(c.pos, a.pos, x, y);
        const bool neg = d1 < 0 || d2 < 0 || d3<0, pos = d1> 0 || d2 > 0 || d3 > 0;
        if (!(neg && pos)) top = a.col;
      }
    }
  }
  return top;
}

// Triangles of text glyphs (font atlas; not the white pixel, not the baked
// textures of anti-aliased lines) drawn with their centre inside
// [x0, x1) × [y0, y1): text on that part of the screen.
inline int glyphs_in(const ImDrawData* dd, float x0, float y0, float x1, float y1) {
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  const ImVec2 white = atlas->TexUvWhitePixel;
  ImVec4 lines(1, 1, 0, 0);  // the box of every line texture's UVs
  for (const ImVec4& u : atlas->TexUvLines) {
    lines.x = std::min(lines.x, std::min(u.x, u.z)), lines.y = std::min(lines.y, std::min(u.y, u.w));
    lines.z = std::max(lines.z, std::max(u.x, u.z)), lines.w = std::max(lines.w, std::max(u.y, u.w));
  }
  auto is_line = [&](ImVec2 uv) { return uv.x >= lines.x && uv.x <= lines.z && uv.y >= lines.y && uv.y <= lines.w; };
  int n = 0;
  for (int l = 0; l < dd->CmdListsCount; ++l) {
    const ImDrawList* dl = dd->CmdLists[l];
    for (const ImDrawCmd& cmd : dl->CmdBuffer)
      for (unsigned i = 0; i + 2 < cmd.ElemCount; i += 3) {
        const ImDrawVert* v[3];
        for (unsigned k = 0; k < 3; ++k)
          v[k] =
              &dl->VtxBuffer[static_cast<int>(cmd.VtxOffset + dl->IdxBuffer[static_cast<int>(cmd.IdxOffset + i + k)])];
        if ((v[0]->uv.x == white.x && v[0]->uv.y == white.y) || is_line(v[0]->uv)) continue;
        const float cx = (v[0]->pos.x + v[1]->pos.x + v[2]->pos.x) / 3,
                    cy = (v[0]->pos.y + v[1]->pos.y + v[2]->pos.y) / 3;
        if (cx >= std::max(x0, cmd.ClipRect.x) && cx < std::min(x1, cmd.ClipRect.z) && cy >= y0 && cy < y1) ++n;
      }
  }
  return n;
}

}  // namespace gpuscope::viewer
