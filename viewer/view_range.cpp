// View — range selection: drag on the ruler (or Shift+drag on the tracks)
// to select a time range, see its length, zoom to it, and read its
// statistics (analysis/window_stats.h: the report's numbers over the range)
// in the Range tab.
//
// [SECTION] Selecting
// [SECTION] On the timeline
// [SECTION] The Range tab
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "viewer/clipped_rows.h"
#include "viewer/colors.h"
#include "viewer/elide.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {
constexpr ImU32 kRangeFill = IM_COL32(120, 180, 255, 34);
constexpr ImU32 kRangeEdge = IM_COL32(140, 195, 255, 220);
constexpr ImU32 kRangeRuler = IM_COL32(70, 110, 170, 255);
}  // namespace

// [SECTION] Selecting ------------------------------------------------------------------------

void View::select_range(TimeNs start, TimeNs end) {
  if (!doc_) return;
  if (end < start) std::swap(start, end);
  if (end == start) end = start + 1;
  range_ = TimeRange{start, end};
  range_worker_.request(doc_, *range_);
  redraw_frames_ = std::max(redraw_frames_, 3);
}

void View::clear_range() {
  range_.reset();
  range_dragging_ = false;
  range_worker_.clear();
}

void View::zoom_to_range() {
  if (!range_) return;
  const TimeNs pad = std::max<TimeNs>(range_->duration() / 20, 1);
  zoom_to(range_->start - pad, range_->end + pad);
}

std::shared_ptr<const WindowStats> View::range_stats() const { return range_ ? range_worker_.result() : nullptr; }

TimeNs View::time_at(float x, float x0, float width) const {
  const double frac = (static_cast<double>(x) - x0) / std::max(1.0f, width);
  return view_start_ + static_cast<TimeNs>(std::llround(frac * view_span_));
}

// The ruler as a drag area: press and drag selects [press, mouse]; a click
// without a drag clears the range.
void View::ruler_input(float x0, float y0, float width) {
  ImGui::SetCursorScreenPos(ImVec2(x0, y0));
  ImGui::InvisibleButton("##ruler", ImVec2(width, kRulerHeight));
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemHovered()) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  if (ImGui::IsItemActivated()) {
    range_anchor_ = time_at(io.MousePos.x, x0, width);
    range_dragging_ = false;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(0, 2.0f)) {
    range_dragging_ = true;
    select_range(range_anchor_, time_at(std::clamp(io.MousePos.x, x0, x0 + width), x0, width));
    show(Panel::range);
  }
  if (ImGui::IsItemDeactivated()) {
    if (!range_dragging_) clear_range();
    range_dragging_ = false;
  }
}

// Shift+drag on the tracks: the same selection, where the eyes already are.
bool View::range_drag_on_tracks(bool over, float x0, float width) {
  const ImGuiIO& io = ImGui::GetIO();
  if (over && io.KeyShift && ImGui::IsMouseClicked(0)) {
    range_anchor_ = time_at(io.MousePos.x, x0, width);
    range_dragging_ = true;
    tracks_range_drag_ = true;
    return true;
  }
  if (!tracks_range_drag_) return false;
  if (ImGui::IsMouseDown(0)) {
    if (ImGui::IsMouseDragging(0, 2.0f)) {
      select_range(range_anchor_, time_at(std::clamp(io.MousePos.x, x0, x0 + width), x0, width));
      show(Panel::range);
    }
    return true;
  }
  tracks_range_drag_ = range_dragging_ = false;
  return true;
}

// [SECTION] On the timeline ------------------------------------------------------------------

void View::draw_range_on_ruler(ImDrawList* dl, float x0, float y0, float width) {
  if (!range_) return;
  const double ppn = px_per_ns(width);
  const float a = x0 + static_cast<float>(static_cast<double>(range_->start - view_start_) * ppn);
  const float b = x0 + static_cast<float>(static_cast<double>(range_->end - view_start_) * ppn);
  const float ca = std::clamp(a, x0, x0 + width), cb = std::clamp(std::max(b, a + 1), x0, x0 + width);
  stats_.range_band = {ca, cb};
  stats_.range_length = format::duration(range_->duration());
  if (cb <= x0 || ca >= x0 + width) return;
  dl->AddRectFilled(ImVec2(ca, y0), ImVec2(cb, y0 + kRulerHeight), kRangeRuler);
  const ImVec2 text = ImGui::CalcTextSize(stats_.range_length.c_str());
  // The length in the band, or beside it when the band is narrow.
  const float tx = cb - ca >= text.x + 8 ? (ca + cb - text.x) / 2 : std::min(cb + 4, x0 + width - text.x);
  dl->AddRectFilled(ImVec2(tx - 3, y0 + 2), ImVec2(tx + text.x + 3, y0 + kRulerHeight - 2), IM_COL32(20, 30, 45, 230));
  dl->AddText(ImVec2(tx, y0 + 3), IM_COL32(235, 240, 255, 255), stats_.range_length.c_str());
}

void View::draw_range_overlay(ImDrawList* dl, float x0, float width, float top, float bottom) {
  if (!range_) return;
  const double ppn = px_per_ns(width);
  const float a = x0 + static_cast<float>(static_cast<double>(range_->start - view_start_) * ppn);
  const float b = x0 + static_cast<float>(static_cast<double>(range_->end - view_start_) * ppn);
  if (b < x0 || a > x0 + width) return;
  dl->AddRectFilled(ImVec2(std::max(a, x0), top), ImVec2(std::min(std::max(b, a + 1), x0 + width), bottom), kRangeFill);
  for (float x : {a, b})
    if (x >= x0 && x <= x0 + width) dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), kRangeEdge, 1.5f);
}

// [SECTION] The Range tab --------------------------------------------------------------------

namespace {

// A table of WindowRows (kernels, categories or ops), sortable by any numeric column.
// `names`: each row's name as shown (kernels: short, numbered where short names collide, as the hotspots).
void window_rows_table(const char* id, const std::vector<WindowRow>& rows, const std::vector<std::string>& names,
                       bool ops, std::vector<std::uint32_t>& order, std::vector<std::vector<std::string>>* drawn,
                       std::string* clicked) {
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable |
                                ImGuiTableFlags_Reorderable | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  constexpr int columns = 6;
  if (!ImGui::BeginTable(id, columns, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn(ops ? "op" : "name", ImGuiTableColumnFlags_WidthStretch | ImGuiTableColumnFlags_NoHide, 0);
  ImGui::TableSetupColumn(ops ? "GPU ops" : "count", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn(ops ? "GPU self" : "total",
                          ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn(ops ? "GPU total" : "category", ops ? ImGuiTableColumnFlags_PreferSortDescending : 0);
  ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("of range", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableHeadersRow();
  ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
  if (order.size() != rows.size() || (specs && specs->SpecsDirty)) {
    order.resize(rows.size());
    std::iota(order.begin(), order.end(), 0u);
    if (specs && specs->SpecsCount > 0) {
      const ImGuiTableColumnSortSpecs& sp = specs->Specs[0];
      auto key = [&](const WindowRow& r) -> double {
        switch (sp.ColumnIndex) {
          case 1: return static_cast<double>(r.count);
          case 3: return ops ? static_cast<double>(r.with_children_ns) : static_cast<double>(r.category);
          case 4:
          case 5: return r.share;
          default: return static_cast<double>(r.total_ns);
        }
      };
      const bool asc = sp.SortDirection == ImGuiSortDirection_Ascending;
      std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return asc ? key(rows[a]) < key(rows[b]) : key(rows[a]) > key(rows[b]);
      });
      specs->SpecsDirty = false;
    }
  }
  for_visible_rows(order.size(), [&](int i) {
    const std::uint32_t index = order[static_cast<std::size_t>(i)];
    const WindowRow& r = rows[index];
    std::vector<std::string> cells = {index < names.size() ? names[index] : r.name,
                                      format::count(r.count),
                                      format::duration(r.total_ns),
                                      ops ? format::duration(r.with_children_ns) : std::string(to_string(r.category)),
                                      format::percent1(r.share),
                                      format::percent1(r.of_window)};
    ImGui::TableNextRow();
    ImGui::PushID(i);
    for (int c = 0; c < columns; ++c) {
      if (!ImGui::TableSetColumnIndex(c)) continue;
      if (c == 0) {
        if (ImGui::Selectable(elide(cells[0], ImGui::GetContentRegionAvail().x).c_str(), false,
                              ImGuiSelectableFlags_SpanAllColumns) &&
            clicked)
          *clicked = r.name;
        if (ImGui::IsItemHovered() && cells[0] != r.name) ImGui::SetTooltip("%s", r.name.c_str());
      } else if (c == 3 && !ops) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(category_color(r.category)), "%s", cells[3].c_str());
      } else {
        ImGui::TextUnformatted(cells[static_cast<std::size_t>(c)].c_str());
      }
    }
    ImGui::PopID();
    if (drawn) drawn->push_back(std::move(cells));
  });
  ImGui::EndTable();
}

}  // namespace

void View::draw_range_panel() {
  if (!panel_open("range", range_.has_value(),
                  "No range selected. Drag on the time ruler (or Shift+drag on the tracks) to select one: its "
                  "length, and the time per kernel, category, op, stream and GPU inside it."))
    return;
  const TimeNs origin = doc_->trace().begin_time();
  ImGui::Text("Range %s .. %s  ·  %s", format_offset(range_->start - origin, 1000).c_str(),
              format_offset(range_->end - origin, 1000).c_str(), format::duration(range_->duration()).c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("Zoom to range (Z)")) zoom_to_range();
  stats_.range_zoom_target = target("zoom to range");
  ImGui::SameLine();
  if (ImGui::SmallButton("Clear (Esc)")) {
    clear_range();
    return;
  }
  const std::shared_ptr<const WindowStats> ws = range_stats();
  if (!ws) {
    stats_.range_status = "computing";
    ImGui::TextDisabled("computing the range's statistics...");
    return;
  }
  stats_.range_status = "done";
  draw_range_devices(*ws);
  if (!ImGui::BeginTabBar("range_tables")) return;
  std::string clicked;
  if (range_names_for_ != ws) {  // the kernels' short names, numbered where they collide, once per range
    std::vector<std::string_view> full;
    for (const WindowRow& r : ws->kernel_names) full.push_back(r.name);
    range_kernel_names_ = format::short_kernel_names(full, format::kTableNameWidth);
    range_names_for_ = ws;
    for (auto& o : range_order_) o.clear();
  }
  static const std::vector<std::string> kAsIs;
  if (ImGui::BeginTabItem("Kernels")) {
    window_rows_table("range_kernels", ws->kernel_names, range_kernel_names_, false, range_order_[0],
                      &stats_.range_kernel_rows, &clicked);
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("Categories")) {
    window_rows_table("range_categories", ws->categories, kAsIs, false, range_order_[1], nullptr, nullptr);
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("Ops")) {
    window_rows_table("range_ops", ws->ops, kAsIs, true, range_order_[2], nullptr, nullptr);
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("Streams")) {
    draw_range_streams(*ws);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
  if (!clicked.empty()) highlight_kernel(clicked);
}

// Per GPU: busy and idle time, utilization, kernel concurrency, kernels in flight.
void View::draw_range_devices(const WindowStats& ws) {
  ImGui::Text("%s kernels (%s), %s copies, %s memsets in the range", format::count(ws.kernels).c_str(),
              format::duration(ws.kernel_time_ns).c_str(), format::count(ws.memcpys).c_str(),
              format::count(ws.memsets).c_str());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Hideable |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_ScrollX | ImGuiTableFlags_BordersInnerV;
  const float rows_h =
      ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(std::min<std::size_t>(ws.devices.size() + 1, 5)) +
      ImGui::GetStyle().ScrollbarSize;
  if (!ImGui::BeginTable("range_devices", 8, flags, ImVec2(0, rows_h))) return;
  for (const char* h : {"GPU", "busy", "idle", "utilization", "concurrency", "in flight", "kernels", "copies"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const WindowDevice& d : ws.devices) {
    const std::vector<std::string> cells = {"GPU " + std::to_string(d.device),
                                            format::duration(d.busy_ns),
                                            format::duration(d.idle_ns),
                                            format::percent1(d.utilization),
                                            format::percent1(d.kernel_concurrency),
                                            format::fixed(d.mean_kernels_in_flight, 2),
                                            format::count(d.kernels),
                                            format::count(d.memcpys)};
    ImGui::TableNextRow();
    for (const std::string& c : cells) {
      text_cell(c);
    }
    stats_.range_device_rows.push_back(cells);
  }
  ImGui::EndTable();
}

void View::draw_range_streams(const WindowStats& ws) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("range_streams", 7, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* h : {"stream", "kernels", "copies", "memsets", "kernel time", "busy", "idle"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const WindowStream& s : ws.streams) {
    const TrackInfo* info = doc_->index().track_info(s.track);
    const std::string label =
        cat("GPU ", std::to_string(s.device), " · ", info ? info->label : std::to_string(s.stream));
    const std::string cells[] = {label,
                                 format::count(s.kernels),
                                 format::count(s.memcpys),
                                 format::count(s.memsets),
                                 format::duration(s.kernel_ns),
                                 cat(format::duration(s.busy_ns), " (", format::percent1(s.busy_share), ")"),
                                 format::duration(s.idle_ns)};
    ImGui::TableNextRow();
    for (const std::string& c : cells) {
      text_cell(c);
    }
  }
  ImGui::EndTable();
}

}  // namespace gpuscope::viewer
