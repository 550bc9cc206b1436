// The JSON written beside a headless screenshot (OUT.json for OUT.png): what
// the last frame drew, so tests assert on facts rather than pixels.
// Schema "gpuscope.view-frame/1", described in docs/viewer.md.
#pragma once

#include <string>

#include "viewer/fonts.h"
#include "viewer/view.h"

struct ImDrawData;

namespace gpuscope::viewer {

struct FrameReportContext {
  std::string file;           // what was opened (path or "synthetic:N")
  int width = 0, height = 0;  // framebuffer size
  int frames = 0;             // frames rendered after loading
  std::string error;          // the load error or another reason for exit 2, empty if none
  FontStatus font;            // the UI font as loaded
};

// The document, indented by 2 spaces (no newline at its end).
std::string frame_report(const View& view, const ImDrawData* draw_data, const FrameReportContext& ctx);

}  // namespace gpuscope::viewer
