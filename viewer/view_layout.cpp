// View — the layout the user sized (the label column, the bottom panel's
// height on the Details tab and on the others), kept in ImGui's ini file
// beside the tables' columns (widths, order, hidden ones) and read back at
// the next start.
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cstdio>

#include "viewer/view.h"

namespace gpuscope::viewer {

namespace {

constexpr const char* kType = "GpuscopeView";

void* open_entry(ImGuiContext*, ImGuiSettingsHandler* h, const char* name) {
  return std::string_view(name) == "Layout" ? h->UserData : nullptr;
}

void read_line(ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
  View* v = static_cast<View*>(entry);
  View::Layout l = v->layout();
  float f = 0;
  if (std::sscanf(line, "LabelWidth=%f", &f) == 1) l.label_width = f;
  if (std::sscanf(line, "DetailsHeight=%f", &f) == 1) l.details_fraction = f;
  if (std::sscanf(line, "PanelHeight=%f", &f) == 1) l.panel_fraction = f;
  v->set_layout(l);
}

void write_all(ImGuiContext*, ImGuiSettingsHandler* h, ImGuiTextBuffer* out) {
  const View::Layout& l = static_cast<const View*>(h->UserData)->layout();
  out->appendf("[%s][Layout]\nLabelWidth=%.0f\nDetailsHeight=%.3f\nPanelHeight=%.3f\n\n", kType, l.label_width,
               l.details_fraction, l.panel_fraction);
}

}  // namespace

void View::set_layout(const Layout& l) {
  // Values from a file: kept to what the window can show.
  layout_.label_width = std::clamp(l.label_width, kMinLabelWidth, 2000.0f);
  layout_.details_fraction = std::clamp(l.details_fraction, 0.05f, 0.85f);
  layout_.panel_fraction = std::clamp(l.panel_fraction, 0.05f, 0.85f);
  redraw_frames_ = std::max(redraw_frames_, 3);
}

void View::register_layout_settings() {
  ImGuiContext* ctx = ImGui::GetCurrentContext();
  if (!ctx || ImGui::FindSettingsHandler(kType)) return;
  ImGuiSettingsHandler h;
  h.TypeName = kType;
  h.TypeHash = ImHashStr(kType);
  h.ReadOpenFn = open_entry;
  h.ReadLineFn = read_line;
  h.WriteAllFn = write_all;
  h.UserData = this;
  ctx->SettingsHandlers.push_back(h);
}

void View::unregister_layout_settings() {
  ImGuiContext* ctx = ImGui::GetCurrentContext();
  if (!ctx) return;
  for (int i = 0; i < ctx->SettingsHandlers.Size; ++i)
    if (ctx->SettingsHandlers[i].UserData == this) {
      ctx->SettingsHandlers.erase(ctx->SettingsHandlers.Data + i);
      return;
    }
}

void View::layout_changed() {
  if (ImGui::GetCurrentContext()) ImGui::MarkIniSettingsDirty();
}

}  // namespace gpuscope::viewer
