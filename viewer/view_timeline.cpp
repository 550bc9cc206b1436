// View — the timeline: groups, tracks, ruler, activity lanes, LOD drawing,
// zoom and pan, selection, flows and highlights.
//
// [SECTION] Geometry
// [SECTION] Zoom and pan
// [SECTION] Timeline frame
// [SECTION] Ruler and legend
// [SECTION] Activity lanes
// [SECTION] Tracks and rows
// [SECTION] Highlights and flows
//
// Cost per frame is bounded by the screen, not by the trace: each visible row
// is two binary searches plus the LOD walk (about width/3 items at most), the
// activity lanes are O(width), and tracks outside the vertical viewport are
// only measured, never walked.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/format.h"
#include "trace/time_columns.h"
#include "viewer/colors.h"
#include "viewer/lod.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"

namespace gpuscope::viewer {

// [SECTION] Geometry -------------------------------------------------------------------------

namespace {
constexpr float kLabelWidth = 200;  // track names on the left
constexpr float kRowH = 17;
constexpr float kRowGap = 1;
constexpr float kGroupH = 20;
constexpr float kLaneH = 22;
constexpr float kRulerH = 22;
constexpr float kMinVisiblePx = 3;  // events narrower than this fold into blocks
constexpr double kMinSpanNs = 50;
constexpr int kReserveVertices = 1 << 17;  // 128k: a dense 1920-px frame of the timeline

bool is_gpu_op(TableId t) { return t == TableId::kernels || t == TableId::memcpys || t == TableId::memsets; }

// Rows shown for a track: all, or when collapsed only the GPU ops row (GPU
// tracks) or the outermost row (CPU tracks).
std::pair<std::size_t, std::size_t> shown_rows(const TrackInfo& info, bool gpu, bool collapsed) {
  if (!collapsed || info.rows.empty()) return {0, info.rows.size()};
  return gpu ? std::pair<std::size_t, std::size_t>{info.rows.size() - 1, info.rows.size()}
             : std::pair<std::size_t, std::size_t>{0, 1};
}
}  // namespace

float View::track_height(const TrackInfo& info, bool collapsed) const {
  const bool gpu = doc_->trace().tracks()[info.track].kind == TrackKind::gpu;
  const auto [a, b] = shown_rows(info, gpu, collapsed);
  return static_cast<float>(b - a) * (kRowH + kRowGap) + 3;
}

// [SECTION] Zoom and pan ---------------------------------------------------------------------

void View::zoom_to(TimeNs start, TimeNs end) {
  if (end <= start) end = start + 1;
  view_start_ = start;
  view_span_ = std::max(kMinSpanNs, static_cast<double>(end - start));
  redraw_frames_ = std::max(redraw_frames_, 3);
}

TimeRange View::content_range() const {
  if (doc_) return {doc_->trace().begin_time(), doc_->trace().end_time()};
  if (job_) return job_->window;
  return {};
}

void View::zoom_to_all() {
  if (!doc_ && !job_) return;
  const TimeRange t = content_range();
  const TimeNs span = std::max<TimeNs>(1, t.end - t.start);
  const TimeNs pad = std::max<TimeNs>(span / 100, 1);  // a little air at both ends
  zoom_to(t.start - pad, t.end + pad);
}

void View::center_on(TimeNs start, TimeNs end) {
  // Keep the zoom if the event fits in the middle half, else zoom out to it.
  const double len = static_cast<double>(end - start);
  if (len > view_span_ * 0.5) view_span_ = std::max(kMinSpanNs, len * 3);
  view_start_ = start + static_cast<TimeNs>(len / 2 - view_span_ / 2);
  redraw_frames_ = std::max(redraw_frames_, 3);
}

void View::timeline_input(float x0, float width, float top, float bottom) {
  const ImGuiIO& io = ImGui::GetIO();
  const TimeRange content = content_range();
  const double max_span = std::max(1000.0, 1.5 * static_cast<double>(content.end - content.start));
  auto zoom_at = [&](double factor, float mouse_x) {
    const double frac = std::clamp((static_cast<double>(mouse_x) - x0) / width, 0.0, 1.0);
    const double t_mouse = static_cast<double>(view_start_) + frac * view_span_;
    const double span = std::clamp(view_span_ * factor, kMinSpanNs, max_span);
    view_start_ = static_cast<TimeNs>(std::llround(t_mouse - frac * span));
    view_span_ = span;
  };
  const ImVec2 m = io.MousePos;
  const bool over = ImGui::IsWindowHovered() && m.x >= x0 && m.x <= x0 + width && m.y >= top && m.y <= bottom;

  // Wheel: zoom around the mouse, 20% a notch (Ctrl: 5%); Shift+wheel scrolls the tracks.
  if (over && io.MouseWheel != 0) {
    if (io.KeyShift) {
      ImGui::SetScrollY(std::max(0.0f, ImGui::GetScrollY() - io.MouseWheel * 3 * kRowH));
    } else {
      const double step = io.KeyCtrl ? 0.95 : 0.8;
      zoom_at(std::pow(step, static_cast<double>(io.MouseWheel)), m.x);
    }
  }
  // Drag with either button pans in time and scrolls vertically; a press
  // that does not move is a click (handled after the tracks are drawn).
  for (int button : {0, 1}) {
    if (over && ImGui::IsMouseClicked(button)) {
      click_pending_ = button == 0;
      click_x_ = m.x;
      click_y_ = m.y;
      drag_last_x_ = m.x;
      drag_last_y_ = m.y;
    }
    if (ImGui::IsMouseDown(button) && (click_pending_ || dragging_ || button == 1) &&
        ImGui::IsMouseDragging(button, 3.0f)) {
      dragging_ = true;
      click_pending_ = false;
      const float dx = m.x - drag_last_x_, dy = m.y - drag_last_y_;
      view_start_ -= static_cast<TimeNs>(std::llround(static_cast<double>(dx) * view_span_ / width));
      ImGui::SetScrollY(std::max(0.0f, ImGui::GetScrollY() - dy));
      drag_last_x_ = m.x;
      drag_last_y_ = m.y;
    }
  }
  if (!ImGui::IsMouseDown(0) && !ImGui::IsMouseDown(1)) dragging_ = false;

  // Keys, as Perfetto users expect: W/S zoom, A/D pan, smooth while held.
  if (!io.WantTextInput && !io.KeyCtrl && ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows)) {
    const float dt = std::clamp(io.DeltaTime, 0.0f, 0.1f);
    const float anchor = over ? m.x : x0 + width / 2;
    if (ImGui::IsKeyDown('W')) zoom_at(std::exp(-2.0 * dt), anchor);
    if (ImGui::IsKeyDown('S')) zoom_at(std::exp(2.0 * dt), anchor);
    if (ImGui::IsKeyDown('A')) view_start_ -= static_cast<TimeNs>(view_span_ * 0.8 * dt);
    if (ImGui::IsKeyDown('D')) view_start_ += static_cast<TimeNs>(view_span_ * 0.8 * dt);
  }
  // Keep some of the trace in view.
  const TimeNs lo = content.start - static_cast<TimeNs>(view_span_ * 0.9);
  const TimeNs hi = content.end - static_cast<TimeNs>(view_span_ * 0.1);
  view_start_ = std::clamp(view_start_, std::min(lo, hi), std::max(lo, hi));
}

// [SECTION] Timeline frame -------------------------------------------------------------------

void View::draw_timeline(float height) {
  stats_.panels.push_back("timeline");
  ImGui::BeginChild("timeline", ImVec2(0, height), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_legend();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float total_w = ImGui::GetContentRegionAvail().x;
  const float scrollbar = ImGui::GetStyle().ScrollbarSize;
  const float x0 = origin.x + kLabelWidth;
  const float width = std::max(10.0f, total_w - kLabelWidth - scrollbar);
  timeline_width_ = width;
  stats_.timeline_x0 = x0;
  stats_.timeline_width_px = width;
  stats_.view_start = view_start();
  stats_.view_end = view_end();

  draw_ruler(ImGui::GetWindowDrawList(), x0, origin.y, width);
  ImGui::Dummy(ImVec2(total_w, kRulerH));

  ImGui::BeginChild("tracks", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 win_pos = ImGui::GetWindowPos();
  const float top = win_pos.y, bottom = win_pos.y + ImGui::GetWindowHeight();
  timeline_input(x0, width, top, bottom);
  stats_.view_start = view_start();
  stats_.view_end = view_end();

  ImDrawList* dl = ImGui::GetWindowDrawList();
  // ImGui keeps a draw list's capacity between frames; reserving a dense
  // frame's worth once spares the first zoom into a busy region a ~10 ms
  // frame of buffer doubling and page faults.
  if (dl->VtxBuffer.Capacity < kReserveVertices) {
    dl->VtxBuffer.reserve(kReserveVertices);
    dl->IdxBuffer.reserve(kReserveVertices / 2 * 3);
  }
  hovered_.reset();
  hovered_block_.reset();
  track_y_.assign(doc_->index().tracks().size(), std::numeric_limits<float>::quiet_NaN());

  draw_evidence_bands(dl, x0, width, top, bottom);
  const float y_start = ImGui::GetCursorScreenPos().y;
  const float y_end = draw_groups(dl, origin.x, x0, width, y_start, top, bottom);
  draw_flow(dl, x0, width);
  if (show_critical_path_) draw_critical_path(dl, x0, width);
  // Mouse time cursor.
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsWindowHovered() && io.MousePos.x >= x0 && io.MousePos.x <= x0 + width)
    dl->AddLine(ImVec2(io.MousePos.x, top), ImVec2(io.MousePos.x, bottom), IM_COL32(255, 255, 255, 40));
  ImGui::SetCursorScreenPos(ImVec2(origin.x, y_start));
  ImGui::Dummy(ImVec2(total_w - scrollbar, std::max(1.0f, y_end - y_start)));

  timeline_hover_and_click(x0);
  ImGui::EndChild();
  ImGui::EndChild();
}

void View::draw_evidence_bands(ImDrawList* dl, float x0, float width, float top, float bottom) {
  // Evidence of the finding clicked last: bands behind everything.
  const double ppn = px_per_ns(width);
  for (const TimeRange& r : evidence_) {
    const float a = x0 + static_cast<float>(static_cast<double>(r.start - view_start_) * ppn);
    const float b = x0 + static_cast<float>(static_cast<double>(r.end - view_start_) * ppn);
    if (b < x0 || a > x0 + width) continue;
    dl->AddRectFilled(ImVec2(std::max(a, x0), top), ImVec2(std::min(std::max(b, a + 2), x0 + width), bottom),
                      kEvidenceColor);
    ++stats_.evidence_bands;
  }
}

float View::draw_groups(ImDrawList* dl, float left, float x0, float width, float y, float top, float bottom) {
  const TimelineIndex& ix = doc_->index();
  const ImGuiIO& io = ImGui::GetIO();
  const bool window_hovered = ImGui::IsWindowHovered();
  for (std::size_t gi = 0; gi < ix.groups().size(); ++gi) {
    const TrackGroup& g = ix.groups()[gi];
    const bool collapsed = group_collapsed_[gi] != 0;
    stats_.groups.push_back({g.label, y, collapsed});
    // Group header: the whole width; a click toggles collapse.
    if (y + kGroupH >= top && y <= bottom) {
      dl->AddRectFilled(ImVec2(left, y), ImVec2(x0 + width, y + kGroupH - 1), IM_COL32(45, 50, 62, 255));
      dl->AddText(ImVec2(left + 4, y + 3), IM_COL32(230, 230, 230, 255), collapsed ? "+" : "-");
      dl->AddText(ImVec2(left + 16, y + 3), IM_COL32(230, 230, 230, 255), g.label.c_str());
      if (window_hovered && io.MousePos.y >= y && io.MousePos.y < y + kGroupH && io.MousePos.x < x0 &&
          ImGui::IsMouseClicked(0)) {
        group_collapsed_[gi] = collapsed ? 0 : 1;
        redraw_frames_ = 3;
      }
    }
    y += kGroupH;
    if (g.activity >= 0)
      y += draw_activity_lanes(dl, ix.activity()[static_cast<std::size_t>(g.activity)], x0, y, width);
    if (g.kind == TrackKind::gpu && !collapsed)
      y += draw_counter_lanes(dl, g.device, g.label, x0 - kLabelWidth + 8, x0, y, width);
    for (std::uint32_t ti : g.tracks) {
      const TrackInfo& info = ix.tracks()[ti];
      TrackStats ts;
      ts.group = g.label;
      ts.label = info.label;
      ts.track = info.track;
      ts.collapsed = collapsed || track_collapsed_[ti] != 0;
      if (collapsed) {
        stats_.tracks.push_back(std::move(ts));
        continue;
      }
      const float h = track_height(info, track_collapsed_[ti] != 0);
      track_y_[ti] = y;
      ts.y = y + 1;
      ts.height = h;
      if (y + h >= top && y <= bottom) {
        ts.visible = true;
        // Track label on the left; a click toggles collapse.
        const bool many = info.rows.size() > 1;
        const std::string label = cat(many ? (track_collapsed_[ti] ? "+ " : "- ") : "  ", info.label);
        dl->PushClipRect(ImVec2(left, y), ImVec2(x0 - 4, y + h), true);
        dl->AddText(ImVec2(left + 8, y + 2), IM_COL32(200, 200, 200, 255), label.c_str());
        dl->PopClipRect();
        if (many && window_hovered && io.MousePos.y >= y && io.MousePos.y < y + h && io.MousePos.x < x0 &&
            ImGui::IsMouseClicked(0)) {
          track_collapsed_[ti] = track_collapsed_[ti] ? 0 : 1;
          redraw_frames_ = 3;
        }
        draw_track(dl, info, x0, y, width, ts);
        if (!matches_.empty()) draw_matches(dl, info, x0, y, width);
      }
      dl->AddLine(ImVec2(left, y + h - 1), ImVec2(x0 + width, y + h - 1), IM_COL32(255, 255, 255, 18));
      y += h;
      stats_.drawn += ts.drawn;
      stats_.merged_blocks += ts.merged_blocks;
      stats_.merged_events += ts.merged_events;
      stats_.tracks.push_back(std::move(ts));
    }
  }
  // Series of no GPU (host memory, Chrome counters of a process): under a header of their own.
  if (!lanes_of(kNoDevice).empty()) {
    static const std::string kCounters = "Counters";
    if (y + kGroupH >= top && y <= bottom) {
      dl->AddRectFilled(ImVec2(left, y), ImVec2(x0 + width, y + kGroupH - 1), IM_COL32(45, 50, 62, 255));
      dl->AddText(ImVec2(left + 16, y + 3), IM_COL32(230, 230, 230, 255), kCounters.c_str());
    }
    y += kGroupH;
    y += draw_counter_lanes(dl, kNoDevice, kCounters, x0 - kLabelWidth + 8, x0, y, width);
  }
  return y;
}

void View::timeline_hover_and_click(float x0) {
  // Tooltips and clicks, now that this frame knows what is under the mouse.
  const ImGuiIO& io = ImGui::GetIO();
  if (!dragging_ && ImGui::IsWindowHovered()) {
    if (hovered_)
      tooltip_for(hovered_->table, hovered_->row);
    else if (hovered_block_)
      folded_tooltip(*hovered_block_);
  }
  if (click_pending_ && ImGui::IsMouseReleased(0)) {
    click_pending_ = false;
    if (hovered_) {
      select(Selection{hovered_->table, hovered_->row});
    } else if (hovered_block_) {
      const TimeNs pad = std::max<TimeNs>((hovered_block_->end - hovered_block_->start) / 10, 10);
      zoom_to(hovered_block_->start - pad, hovered_block_->end + pad);
    } else if (io.MousePos.x >= x0) {
      selection_ = {};
    }
  }
}

// [SECTION] Ruler and legend -----------------------------------------------------------------

void View::draw_ruler(ImDrawList* dl, float x0, float y0, float width) {
  const TimeNs origin = content_range().start;
  const RulerTicks ticks = ruler_ticks(origin, view_start(), view_end(), width, 110);
  const double ppn = px_per_ns(width);
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + width, y0 + kRulerH), IM_COL32(35, 38, 46, 255));
  dl->AddText(ImVec2(x0 - kLabelWidth + 8, y0 + 4), IM_COL32(150, 150, 150, 255),
              cat("+", format::duration(ticks.step_ns), " / tick").c_str());
  // Minor ticks: 5 per major step (or 2 when the step is 2·10^k, 5 when 5·10^k).
  const TimeNs minor = ticks.step_ns >= 5 ? ticks.step_ns / 5 : ticks.step_ns;
  const TimeNs first_minor = ticks.first - ((ticks.first - view_start()) / minor + 1) * minor;
  for (TimeNs t = first_minor; t <= view_end(); t += minor) {
    const float x = x0 + static_cast<float>(static_cast<double>(t - view_start_) * ppn);
    if (x < x0 || x > x0 + width) continue;
    const bool major = (t - ticks.first) % ticks.step_ns == 0;
    dl->AddLine(ImVec2(x, y0 + kRulerH - (major ? 10.0f : 4.0f)), ImVec2(x, y0 + kRulerH),
                IM_COL32(180, 180, 180, 255));
    if (major) {
      const std::string label = format_offset(t - origin, ticks.step_ns);
      dl->AddText(ImVec2(x + 3, y0 + 2), IM_COL32(210, 210, 210, 255), label.c_str());
    }
  }
}

void View::draw_legend() {
  // Only the categories this trace has.
  const KernelTable& k = doc_->trace().kernels();
  std::array<bool, kKernelCategoryCount> present{};
  if (auto p = doc_->profile()) {
    for (const CategoryTime& c : p->categories) present[static_cast<std::size_t>(c.category)] = true;
  } else {
    // Before the Profile arrives: sample the kernels (cheap, and the legend is a guide).
    const std::size_t stride = std::max<std::size_t>(1, k.size() / 4096);
    for (std::size_t i = 0; i < k.size(); i += stride) present[k.category[i]] = true;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  bool first = true;
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    if (!present[static_cast<std::size_t>(c)]) continue;
    if (!first) ImGui::SameLine(0, 12);
    first = false;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float s = ImGui::GetTextLineHeight();
    dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + s - 4, p.y + s - 2),
                      category_color(static_cast<KernelCategory>(c)));
    ImGui::Dummy(ImVec2(s - 2, s));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(std::string(to_string(static_cast<KernelCategory>(c))).c_str());
    stats_.legend_targets.push_back(target(std::string(to_string(static_cast<KernelCategory>(c)))));
    if (ImGui::IsItemClicked()) highlight_category(static_cast<KernelCategory>(c));
  }
  if (first) ImGui::TextDisabled("no kernels");
}

// [SECTION] Activity lanes -------------------------------------------------------------------

float View::draw_activity_lanes(ImDrawList* dl, const DeviceActivity& a, float x0, float y, float width) {
  const ImVec2 win_pos = ImGui::GetWindowPos();
  const float win_h = ImGui::GetWindowHeight();
  const float h = 2 * kLaneH + 2;
  if (y + h < win_pos.y || y > win_pos.y + win_h) return h;  // off screen: measured only
  const auto columns = static_cast<std::size_t>(width);
  lane_buf_.resize(columns);
  a.sample(doc_->trace(), view_start_, view_span_ / static_cast<double>(columns), lane_buf_);
  stats_.lane_columns += columns;

  const float label_x = x0 - kLabelWidth + 8;
  dl->AddText(ImVec2(label_x, y + 4), IM_COL32(170, 170, 170, 255), "  utilization");
  char in_flight_label[48];
  const float lane_bottom_1 = y + kLaneH - 1, lane_bottom_2 = y + 2 * kLaneH;
  dl->AddRectFilled(ImVec2(x0, y), ImVec2(x0 + width, lane_bottom_1), IM_COL32(30, 33, 40, 255));
  dl->AddRectFilled(ImVec2(x0, y + kLaneH), ImVec2(x0 + width, lane_bottom_2), IM_COL32(30, 33, 40, 255));

  float max_in_flight = 1;
  for (const LaneSample& s : lane_buf_) max_in_flight = std::max(max_in_flight, s.in_flight);
  const float scale = std::max(2.0f, std::ceil(max_in_flight));
  const float lane_h = kLaneH - 3;
  // Runs of equal pixel height become one rectangle: a flat lane costs a few
  // vertices, a busy one at most 4 per column.
  auto draw_runs = [&](auto height_of, float bottom, ImU32 color) {
    std::size_t c = 0;
    while (c < columns) {
      const int hc = height_of(lane_buf_[c]);
      std::size_t e = c + 1;
      while (e < columns && height_of(lane_buf_[e]) == hc) ++e;
      if (hc > 0)
        dl->AddRectFilled(ImVec2(x0 + static_cast<float>(c), bottom - static_cast<float>(hc)),
                          ImVec2(x0 + static_cast<float>(e), bottom), color);
      c = e;
    }
  };
  draw_runs([&](const LaneSample& s) { return static_cast<int>(std::lround(s.busy * lane_h)); }, lane_bottom_1,
            kUtilizationColor);
  draw_runs(
      [&](const LaneSample& s) { return static_cast<int>(std::lround(std::min(s.in_flight, 1.0f) / scale * lane_h)); },
      lane_bottom_2, kInFlightColor);
  draw_runs(
      [&](const LaneSample& s) {
        return s.in_flight > 1 ? static_cast<int>(std::lround(s.in_flight / scale * lane_h)) : 0;
      },
      lane_bottom_2, kConcurrentColor);
  // Redraw the single-kernel part over the green so the two read as one stacked bar.
  draw_runs(
      [&](const LaneSample& s) { return s.in_flight > 1 ? static_cast<int>(std::lround(1.0f / scale * lane_h)) : 0; },
      lane_bottom_2, kInFlightColor);
  std::snprintf(in_flight_label, sizeof in_flight_label, "  kernels in flight (0-%.0f)", static_cast<double>(scale));
  dl->AddText(ImVec2(label_x, y + kLaneH + 5), IM_COL32(170, 170, 170, 255), in_flight_label);

  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsWindowHovered() && io.MousePos.x >= x0 && io.MousePos.x < x0 + width && io.MousePos.y >= y &&
      io.MousePos.y < lane_bottom_2 && !dragging_) {
    const LaneSample& s = lane_buf_[std::min(columns - 1, static_cast<std::size_t>(io.MousePos.x - x0))];
    ImGui::SetTooltip("GPU %u at this pixel:\nbusy %s\n%s kernels in flight (mean)", a.device(),
                      format::percent(s.busy).c_str(), format::fixed(s.in_flight, 2).c_str());
  }
  return h;
}

// [SECTION] Tracks and rows ------------------------------------------------------------------

ImU32 View::event_color(TableId table, RowIndex row) const {
  const TraceTables& t = doc_->trace().tables();
  switch (table) {
    case TableId::kernels:
      return category_color(t.kernels.category_at(row));
    case TableId::memcpys:
      return copy_color(t.memcpys.kind_at(row));
    case TableId::memsets:
      return memset_color();
    case TableId::api_calls:
      return api_color(t.api_calls.domain_at(row),
                       t.api_calls.op_table[row] != static_cast<std::uint8_t>(OpTable::none));
    case TableId::ranges: {
      const std::uint32_t c = t.ranges.color_at(row);
      return c ? argb_to_imgui(c) : palette_color(t.ranges.name[row]);
    }
    case TableId::syncs:
      return sync_color();
    default:
      return overhead_color();
  }
}

std::string_view View::event_label(TableId table, RowIndex row) {
  const Trace& tr = doc_->trace();
  const TraceTables& t = tr.tables();
  switch (table) {
    case TableId::kernels:
      return short_label(t.kernels.name[row]);
    case TableId::memcpys: {
      static const std::string labels[] = {"Memcpy",      "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
                                           "Memcpy AtoH", "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA",
                                           "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
      const auto k = static_cast<std::size_t>(t.memcpys.kind[row]);
      return k < std::size(labels) ? std::string_view(labels[k]) : std::string_view(labels[0]);
    }
    case TableId::memsets:
      return "Memset";
    case TableId::api_calls:
      return tr.str(t.api_calls.name[row]);
    case TableId::ranges:
      return tr.str(t.ranges.name[row]);
    case TableId::syncs:
      return "sync";
    case TableId::overheads:
      return tr.str(t.overheads.kind[row]);
    default:
      return {};
  }
}

void View::draw_track(ImDrawList* dl, const TrackInfo& info, float x0, float y, float width, TrackStats& ts) {
  const std::size_t ti = static_cast<std::size_t>(&info - doc_->index().tracks().data());
  const bool gpu = doc_->trace().tracks()[info.track].kind == TrackKind::gpu;
  const auto [a, b] = shown_rows(info, gpu, track_collapsed_[ti] != 0);
  dl->PushClipRect(ImVec2(x0, y), ImVec2(x0 + width, y + track_height(info, track_collapsed_[ti] != 0)), true);
  for (std::size_t r = a; r < b; ++r) {
    draw_row(dl, info.rows[r], x0, y + 1 + static_cast<float>(r - a) * (kRowH + kRowGap), width, ts);
    ++ts.rows;
  }
  dl->PopClipRect();
}

void View::draw_row(ImDrawList* dl, const TrackRow& row, float x0, float y, float width, TrackStats& ts) {
  const double ppn = px_per_ns(width);
  const TimeNs t0 = view_start(), t1 = view_end();
  const auto min_ns = static_cast<TimeNs>(std::ceil(kMinVisiblePx / ppn));
  const ImGuiIO& io = ImGui::GetIO();
  const bool row_hovered = ImGui::IsWindowHovered() && io.MousePos.y >= y && io.MousePos.y < y + kRowH &&
                           io.MousePos.x >= x0 && io.MousePos.x < x0 + width;
  const RowSpan span{x0,
                     x0 + width,
                     y,
                     row_hovered ? io.MousePos.x : -std::numeric_limits<float>::infinity(),
                     ImGui::CalcTextSize("0").x,
                     ImGui::CalcTextSize("m").x};
  auto to_x = [&](TimeNs t) {
    return x0 + static_cast<float>(std::clamp(static_cast<double>(t - view_start_) * ppn, -2.0, width + 2.0));
  };
  for (const LaneSegment& seg : row.segments) {
    RowIndex lo, hi;
    seg.visible(t0, t1, &lo, &hi);
    for_each_lod_item(seg.start, seg.end, lo, hi, seg.ends_sorted, min_ns, [&](const LodItem& it) {
      if (it.merged())
        draw_folded(dl, seg, it, to_x(it.start), to_x(it.end), span, ts);
      else
        draw_single(dl, seg, seg.row(it.first), to_x(it.start), to_x(it.end), span, ts);
    });
  }
}

namespace {

// What a folded block of a table counts: "3,780 kernels".
const char* folded_noun(TableId t) {
  switch (t) {
    case TableId::kernels:
      return "kernels";
    case TableId::memcpys:
      return "copies";
    case TableId::memsets:
      return "memsets";
    case TableId::api_calls:
      return "calls";
    case TableId::ranges:
      return "ranges";
    case TableId::syncs:
      return "syncs";
    default:
      return "events";
  }
}

// Visible width of [xa, xb) inside the row.
float visible_px(float xa, float xb, float left, float right) {
  return std::max(0.0f, std::min(xb, right) - std::max(xa, left));
}

}  // namespace

CategoryTimes View::folded_kernel_time(const LaneSegment& seg, RowIndex first, RowIndex last) const {
  if (!seg.rows) return doc_->index().kernel_time().sum(first, last);
  // Kernel lanes are used in place; a gathered one would be summed row by row.
  const KernelTable& kt = doc_->trace().kernels();
  CategoryTimes t{};
  for (RowIndex p = first; p < last; ++p) t[kt.category[seg.row(p)]] += seg.end[p] - seg.start[p];
  return t;
}

void View::draw_folded(ImDrawList* dl, const LaneSegment& seg, const LodItem& it, float xa, float xb,
                       const RowSpan& span, TrackStats& ts) {
  xb = std::max(xb, xa + kMinVisiblePx);
  const float w = visible_px(xa, xb, span.left, span.right);
  if (seg.table == TableId::kernels) {
    // The exact category mix of every kernel folded here, as stacked bands
    // in legend order (padding on top), heights in proportion to time: a
    // stream that is 21% padding shows a fifth of red at any zoom.
    const CategoryTimes mix = folded_kernel_time(seg, it.first, it.last);
    TimeNs total = 0;
    for (TimeNs v : mix) total += v;
    TimeNs acc = 0;
    float band_top = span.y;
    for (int c = 0; c < kKernelCategoryCount; ++c) {
      const TimeNs v = mix[static_cast<std::size_t>(c)];
      stats_.kernel_ns_folded[static_cast<std::size_t>(c)] += v;
      if (v == 0) continue;
      acc += v;
      const float band_bottom =
          span.y + std::round(kRowH * static_cast<float>(static_cast<double>(acc) / static_cast<double>(total)));
      if (band_bottom <= band_top) continue;
      dl->AddRectFilled(ImVec2(xa, band_top), ImVec2(xb, band_bottom),
                        scale_brightness(category_color(static_cast<KernelCategory>(c)), 0.8f));
      stats_.kernel_px[static_cast<std::size_t>(c)] += w * (band_bottom - band_top);
      band_top = band_bottom;
    }
    if (total == 0) {  // only zero-length kernels: the first one's colour
      const KernelCategory c = doc_->trace().kernels().category_at(seg.row(it.first));
      dl->AddRectFilled(ImVec2(xa, span.y), ImVec2(xb, span.y + kRowH), scale_brightness(category_color(c), 0.8f));
      stats_.kernel_px[static_cast<std::size_t>(c)] += w * kRowH;
    }
  } else {
    dl->AddRectFilled(ImVec2(xa, span.y), ImVec2(xb, span.y + kRowH),
                      scale_brightness(event_color(seg.table, seg.row(it.first)), 0.62f));
  }
  // What the block stands for: "3,780 kernels", or the number alone when that is all that fits.
  const float room = std::min(xb, span.right) - std::max(xa, span.left) - 6;
  const std::string n = room >= 2 * span.digit_px ? format::count(it.count()) : std::string();
  const std::string label = n.empty() ? n : cat(n, " ", folded_noun(seg.table));
  const std::string& shown = ImGui::CalcTextSize(label.c_str()).x <= room ? label : n;
  if (!shown.empty() && ImGui::CalcTextSize(shown.c_str()).x <= room) {
    const ImVec2 at(std::max(xa, span.left) + 3, span.y + 1);
    dl->AddText(ImVec2(at.x + 1, at.y + 1), IM_COL32(0, 0, 0, 170), shown.c_str());  // legible on any band
    dl->AddText(at, IM_COL32(240, 240, 240, 255), shown.c_str());
    if (stats_.folded_labels.size() < 64) stats_.folded_labels.push_back(shown);
  }
  ++ts.merged_blocks;
  ts.merged_events += it.count();
  if (span.mouse_x >= xa && span.mouse_x < xb)
    hovered_block_ = FoldedBlock{it.start, it.end, it.count(), seg.table, &seg, it.first, it.last};
}

void View::draw_single(ImDrawList* dl, const LaneSegment& seg, RowIndex r, float xa, float xb, const RowSpan& span,
                       TrackStats& ts) {
  xb = std::max(xb, xa + 1);
  const ImU32 color = event_color(seg.table, r);
  const bool selected = selection_.valid() && selection_.table == seg.table && selection_.row == r;
  dl->AddRectFilled(ImVec2(xa, span.y), ImVec2(xb, span.y + kRowH), color);
  if (selected) dl->AddRect(ImVec2(xa - 1, span.y - 1), ImVec2(xb + 1, span.y + kRowH + 1), kSelectionColor, 0, 0, 2);
  if (seg.table == TableId::kernels) {
    const KernelTable& kt = doc_->trace().kernels();
    const auto c = static_cast<std::size_t>(kt.category[r]);
    stats_.kernel_ns_single[c] += kt.end[r] - kt.start[r];
    stats_.kernel_px[c] += visible_px(xa, xb, span.left, span.right) * kRowH;
  }
  // A label when there is room for a few characters.
  const float char_w = span.char_px;
  const float vis_a = std::max(xa, span.left) + 3, vis_b = std::min(xb, span.right) - 2;
  if (vis_b - vis_a > 3 * char_w) {
    const std::string_view label = event_label(seg.table, r);
    const std::size_t fit = std::min(label.size(), static_cast<std::size_t>((vis_b - vis_a) / char_w));
    dl->AddText(ImVec2(vis_a, span.y + 1), text_color_on(color), label.data(), label.data() + fit);
  }
  ++ts.drawn;
  if (span.mouse_x >= xa - 1 && span.mouse_x < xb + 1) hovered_ = MatchRef{seg.table, r};
}

void View::folded_tooltip(const FoldedBlock& b) {
  ImGui::BeginTooltip();
  ImGui::Text("%s %s folded (each < %.0f px at this zoom)", format::count(b.count).c_str(), folded_noun(b.table),
              kMinVisiblePx);
  ImGui::TextDisabled("%s span · click to zoom in", format::duration(b.end - b.start).c_str());
  if (b.table == TableId::kernels && b.segment) {
    // The mix, largest first: the bands' numbers.
    const CategoryTimes mix = folded_kernel_time(*b.segment, b.first, b.last);
    TimeNs total = 0;
    for (TimeNs v : mix) total += v;
    std::vector<int> order;
    for (int c = 0; c < kKernelCategoryCount; ++c)
      if (mix[static_cast<std::size_t>(c)] > 0) order.push_back(c);
    std::sort(order.begin(), order.end(),
              [&](int x, int y) { return mix[static_cast<std::size_t>(x)] > mix[static_cast<std::size_t>(y)]; });
    for (int c : order) {
      const TimeNs v = mix[static_cast<std::size_t>(c)];
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(category_color(static_cast<KernelCategory>(c))), "%s",
                         std::string(to_string(static_cast<KernelCategory>(c))).c_str());
      ImGui::SameLine(130);
      ImGui::Text("%s  %s", format::percent1(static_cast<double>(v) / static_cast<double>(total)).c_str(),
                  format::duration(v).c_str());
    }
  }
  ImGui::EndTooltip();
}

// [SECTION] Highlights and flows -------------------------------------------------------------

void View::draw_matches(ImDrawList* dl, const TrackInfo& info, float x0, float y, float width) {
  const Trace& trace = doc_->trace();
  const std::size_t ti = static_cast<std::size_t>(&info - doc_->index().tracks().data());
  const bool gpu = trace.tracks()[info.track].kind == TrackKind::gpu;
  const auto [a, b] = shown_rows(info, gpu, track_collapsed_[ti] != 0);
  const double ppn = px_per_ns(width);
  const TimeNs t0 = view_start(), t1 = view_end();
  for (std::size_t ri = a; ri < b; ++ri) {
    const TrackRow& row = info.rows[ri];
    const float ry = y + 1 + static_cast<float>(ri - a) * (kRowH + kRowGap);
    for (const LaneSegment& seg : row.segments) {
      const std::span<const RowIndex> m = matches_.on_track(seg.table, info.track);
      if (m.empty()) continue;
      const auto& start = *detail::time_columns(trace.tables(), seg.table).start;
      const auto& end = *detail::time_columns(trace.tables(), seg.table).end;
      auto first_at = [&](auto from, TimeNs t) {
        return std::lower_bound(from, m.end(), t, [&](RowIndex r, TimeNs v) { return start[r] < v; });
      };
      auto it = first_at(m.begin(), t0 - seg.max_duration);
      while (it != m.end() && start[*it] <= t1) {
        const RowIndex r = *it;
        // Is this match in this row? (Ranges: its depth; API calls: its lane.)
        bool here = true;
        if (seg.rows) {
          const TimeNs s = start[r];
          const RowIndex p =
              static_cast<RowIndex>(std::lower_bound(seg.start + seg.begin, seg.start + seg.stop, s) - seg.start);
          here = false;
          for (RowIndex q = p; q < seg.stop && seg.start[q] == s; ++q)
            if (seg.rows[q] == r) here = true;
        }
        if (!here || end[r] < t0) {
          ++it;
          continue;
        }
        const float xa = x0 + static_cast<float>(static_cast<double>(start[r] - view_start_) * ppn);
        const float xb = std::max(xa + 2, x0 + static_cast<float>(static_cast<double>(end[r] - view_start_) * ppn));
        dl->AddRect(ImVec2(xa - 1, ry - 1), ImVec2(xb + 1, ry + kRowH + 1), kHighlightColor, 0, 0, 2);
        ++stats_.match_markers;
        // Skip matches that would land on the same pixels.
        const TimeNs next_t = start[r] + static_cast<TimeNs>(std::ceil(3 / ppn));
        auto next = first_at(it + 1, next_t);
        it = next;
      }
    }
  }
}

bool View::row_position(TableId table, RowIndex row, float* y) const {
  const Trace& trace = doc_->trace();
  const TimelineIndex& ix = doc_->index();
  const TrackId track = (*detail::time_columns(trace.tables(), table).track)[row];
  const TrackInfo* info = ix.track_info(track);
  if (!info) return false;
  const std::size_t ti = static_cast<std::size_t>(info - ix.tracks().data());
  if (std::isnan(track_y_[ti])) return false;
  const bool gpu = trace.tracks()[track].kind == TrackKind::gpu;
  const auto [a, b] = shown_rows(*info, gpu, track_collapsed_[ti] != 0);
  const TimeNs s = (*detail::time_columns(trace.tables(), table).start)[row];
  for (std::size_t ri = a; ri < b; ++ri)
    for (const LaneSegment& seg : info->rows[ri].segments) {
      if (seg.table != table) continue;
      if (!seg.rows) {
        if (row >= seg.begin && row < seg.stop) {
          *y = track_y_[ti] + 1 + static_cast<float>(ri - a) * (kRowH + kRowGap);
          return true;
        }
        continue;
      }
      const RowIndex p =
          static_cast<RowIndex>(std::lower_bound(seg.start + seg.begin, seg.start + seg.stop, s) - seg.start);
      for (RowIndex q = p; q < seg.stop && seg.start[q] == s; ++q)
        if (seg.rows[q] == row) {
          *y = track_y_[ti] + 1 + static_cast<float>(ri - a) * (kRowH + kRowGap);
          return true;
        }
    }
  return false;
}

void View::draw_flow(ImDrawList* dl, float x0, float width) {
  if (!selection_.valid()) return;
  const Trace& trace = doc_->trace();
  // Pairs (API call, GPU op) to connect: the selected op and its launch, or
  // the selected API call and every op it launched.
  std::vector<std::pair<RowIndex, OpRef>> pairs;
  auto op_table = [](TableId t) {
    return t == TableId::kernels ? OpTable::kernel : t == TableId::memcpys ? OpTable::memcpy : OpTable::memset;
  };
  if (is_gpu_op(selection_.table)) {
    const OpRef op{op_table(selection_.table), selection_.row};
    const RowIndex api = trace.launching_api(op);
    if (api != kNoRow) pairs.emplace_back(api, op);
  } else if (selection_.table == TableId::api_calls) {
    trace.for_each_op_of(selection_.row, [&](OpRef op) { pairs.emplace_back(selection_.row, op); });
  }
  const double ppn = px_per_ns(width);
  for (const auto& [api, op] : pairs) {
    const TableId table = op.table == OpTable::kernel   ? TableId::kernels
                          : op.table == OpTable::memcpy ? TableId::memcpys
                                                        : TableId::memsets;
    float ya, yb;
    if (!row_position(TableId::api_calls, api, &ya) || !row_position(table, op.row, &yb)) continue;
    const TimeNs api_t = trace.api_calls().end[api];
    const TimeNs op_t = (*detail::time_columns(trace.tables(), table).start)[op.row];
    const float xa = x0 + static_cast<float>(static_cast<double>(api_t - view_start_) * ppn);
    const float xb = x0 + static_cast<float>(static_cast<double>(op_t - view_start_) * ppn);
    // Off-screen ends are clamped to the edges so the arrow still points the way.
    const ImVec2 p0(std::clamp(xa, x0, x0 + width), ya + kRowH * 0.5f);
    const ImVec2 p1(std::clamp(xb, x0, x0 + width), yb + (yb > ya ? 0.0f : kRowH));
    dl->AddBezierCubic(p0, ImVec2(p0.x + 30, p0.y), ImVec2(p1.x - 30, p1.y), p1, kFlowColor, 2.0f);
    const float dir = yb > ya ? -1.0f : 1.0f;
    dl->AddTriangleFilled(p1, ImVec2(p1.x - 5, p1.y + 8 * dir), ImVec2(p1.x + 5, p1.y + 8 * dir), kFlowColor);
    stats_.flow_arrow = true;
  }
}

// The critical path of the visible steps: each event on it underlined, and
// consecutive events of one step's path joined by a line.
void View::draw_critical_path(ImDrawList* dl, float x0, float width) {
  const std::shared_ptr<const PathOverlay> path = doc_->path_overlay();
  if (!path) {
    stats_.critical_path_status = "computing";
    return;
  }
  if (!path->ready()) {
    stats_.critical_path_status = path->status;
    return;
  }
  stats_.critical_path_status = "on " + path->scope;
  const double ppn = px_per_ns(width);
  const auto [a, b] = path->visible(view_start(), view_end());
  // At most this many events a frame, the longest kept by drawing in order and
  // skipping those that would land on the pixel already drawn on their row.
  constexpr std::size_t kMaxEvents = 20'000;
  bool have_prev = false;
  ImVec2 prev_end;
  std::int32_t prev_step = 0;
  float last_x = -1e9f, last_y = -1e9f;
  for (std::size_t i = a; i < b && stats_.critical_path_events < kMaxEvents; ++i) {
    const PathOverlay::Segment& s = path->segments[i];
    if (s.end < view_start() || s.start > view_end()) continue;
    float y = 0;
    if (!row_position(s.table, s.row, &y)) {
      have_prev = false;
      continue;
    }
    const float xa = x0 + static_cast<float>(static_cast<double>(s.start - view_start_) * ppn);
    const float xb = std::max(xa + 2, x0 + static_cast<float>(static_cast<double>(s.end - view_start_) * ppn));
    const float ya = y + kRowH - 3;
    const ImVec2 p0(std::clamp(xa, x0, x0 + width), ya), p1(std::clamp(xb, x0, x0 + width), ya + 3);
    if (have_prev && prev_step == s.step) dl->AddLine(prev_end, ImVec2(p0.x, ya + 1.5f), kCriticalPathColor, 1.0f);
    if (!(ya == last_y && p1.x <= last_x + 1)) {
      dl->AddRectFilled(p0, p1, kCriticalPathColor);
      last_x = p1.x;
      last_y = ya;
    }
    ++stats_.critical_path_events;
    prev_end = ImVec2(p1.x, ya + 1.5f);
    prev_step = s.step;
    have_prev = true;
  }
}

}  // namespace gpuscope::viewer
