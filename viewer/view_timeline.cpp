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
#include <array>
#include <cmath>
#include <limits>
#include <span>

#include "trace/time_columns.h"
#include "viewer/colors.h"
#include "viewer/elide.h"
#include "viewer/lod.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

// [SECTION] Geometry -------------------------------------------------------------------------

namespace {
constexpr float kRowH = 17;
constexpr float kRowGap = 1;
constexpr float kGroupH = 20;
constexpr float kLaneH = 22;
constexpr double kMinSpanNs = 50;
constexpr int kReserveVertices = 1 << 17;         // 128k: a dense 1920-px frame of the timeline
constexpr std::uint64_t kMaxOutlinesPerRow = 64;  // more matches in view on a row: ticks and their count

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
  const float flame = b == info.rows.size() ? static_cast<float>(flame_rows(info)) : 0.0f;
  return (static_cast<float>(b - a) + flame) * (kRowH + kRowGap) + 3;
}

// Rows of the flame chart under a thread's samples row: its deepest stack
// (at most kMaxFlameRows), once a sampling interval is 3 px or more wide.
std::size_t View::flame_rows(const TrackInfo& info) const {
  if (info.samples < 0) return 0;
  const ThreadSamples& s = doc_->index().samples()[static_cast<std::size_t>(info.samples)];
  if (static_cast<double>(s.cap) / 2 * px_per_ns(timeline_width_) < kMinVisiblePx) return 0;
  return std::min<std::size_t>(s.max_depth, kMaxFlameRows);
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
  const TimeRange content = pan_range();
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
  // Shift+drag selects a time range; otherwise a drag with either button
  // pans in time and scrolls vertically, and a press that does not move is a
  // click (handled after the tracks are drawn).
  const bool selecting = range_drag_on_tracks(over, x0, width);
  for (int button : {0, 1}) {
    if (selecting) break;
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
  layout_.label_width = std::clamp(layout_.label_width, kMinLabelWidth, std::max(kMinLabelWidth, total_w * 0.6f));
  const float x0 = origin.x + layout_.label_width;
  const float width = std::max(10.0f, total_w - layout_.label_width - scrollbar);
  timeline_width_ = width;
  stats_.label_width = layout_.label_width;
  stats_.timeline_x0 = x0;
  stats_.timeline_width_px = width;
  stats_.view_start = view_start();
  stats_.view_end = view_end();

  ruler_input(x0, origin.y, width);  // first: the ruler draws the range as this frame's input left it
  draw_ruler(ImGui::GetWindowDrawList(), x0, origin.y, width);
  draw_range_on_ruler(ImGui::GetWindowDrawList(), x0, origin.y, width);
  stats_.ruler_y = origin.y + kRulerHeight / 2;
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + kRulerHeight));

  ImGui::BeginChild("tracks", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
  const bool compared = compare_doc_ && show_compare_timeline_;
  if (compared) update_compare_alignment();  // before the input: B's end bounds the panning too
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
  float y_end = y_start;
  if (compared) {
    // A's GPUs, then B's right under them on the same axis, then the hosts of each.
    y_end = draw_groups(dl, origin.x, x0, width, y_end, top, bottom, GroupFilter::gpus);
    y_end = draw_compare_groups(dl, origin.x, x0, width, y_end, top, bottom, GroupFilter::gpus);
    y_end = draw_groups(dl, origin.x, x0, width, y_end, top, bottom, GroupFilter::hosts);
    y_end = draw_compare_groups(dl, origin.x, x0, width, y_end, top, bottom, GroupFilter::hosts);
  } else {
    y_end = draw_groups(dl, origin.x, x0, width, y_end, top, bottom, GroupFilter::all);
  }
  draw_flow(dl, x0, width);
  if (show_critical_path_) draw_critical_path(dl, x0, width);
  draw_range_overlay(dl, x0, width, top, bottom);
  // Mouse time cursor.
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsWindowHovered() && io.MousePos.x >= x0 && io.MousePos.x <= x0 + width)
    dl->AddLine(ImVec2(io.MousePos.x, top), ImVec2(io.MousePos.x, bottom), IM_COL32(255, 255, 255, 40));
  ImGui::SetCursorScreenPos(ImVec2(origin.x, y_start));
  ImGui::Dummy(ImVec2(total_w - scrollbar, std::max(1.0f, y_end - y_start)));
  label_splitter(x0, top, bottom);

  timeline_hover_and_click(x0);
  ImGui::EndChild();
  ImGui::EndChild();
}

// The edge of the label column: drag it to widen or narrow the names.
void View::label_splitter(float x0, float top, float bottom) {
  const ImVec2 keep = ImGui::GetCursorScreenPos();
  ImGui::SetCursorScreenPos(ImVec2(x0 - 7, top));
  ImGui::InvisibleButton("##label_splitter", ImVec2(6, std::max(1.0f, bottom - top)));
  label_splitter_hot_ = ImGui::IsItemHovered() || ImGui::IsItemActive();
  if (label_splitter_hot_) {
    ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    ImGui::GetWindowDrawList()->AddLine(ImVec2(x0 - 4, top), ImVec2(x0 - 4, bottom), IM_COL32(140, 195, 255, 200), 2);
  }
  if (ImGui::IsItemActive() && ImGui::GetIO().MouseDelta.x != 0) {
    layout_.label_width += ImGui::GetIO().MouseDelta.x;
    layout_changed();
  }
  stats_.label_splitter = ClickTarget{"label splitter", x0 - 4, (top + bottom) / 2};
  ImGui::SetCursorScreenPos(keep);
}

void View::draw_evidence_bands(ImDrawList* dl, float x0, float width, float top, float bottom) {
  // Evidence of the finding clicked last: bands behind everything, the range
  // stepped to brighter and edged.
  const double ppn = px_per_ns(width);
  for (std::size_t i = 0; i < evidence_.size(); ++i) {
    const TimeRange& r = evidence_[i];
    const float a = x0 + static_cast<float>(static_cast<double>(r.start - view_start_) * ppn);
    const float b = x0 + static_cast<float>(static_cast<double>(r.end - view_start_) * ppn);
    if (b < x0 || a > x0 + width) continue;
    const ImVec2 p0(std::max(a, x0), top), p1(std::min(std::max(b, a + 2), x0 + width), bottom);
    const bool current = i == evidence_index_;
    dl->AddRectFilled(p0, p1, current ? kEvidenceCurrentColor : kEvidenceColor);
    if (current) {
      for (float x : {a, std::max(b, a + 2)})
        if (x >= x0 && x <= x0 + width) dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), kEvidenceEdgeColor, 1.5f);
    }
    ++stats_.evidence_bands;
  }
}

float View::draw_groups(ImDrawList* dl, float left, float x0, float width, float y, float top, float bottom,
                        GroupFilter which) {
  const TimelineIndex& ix = doc_->index();
  const ImGuiIO& io = ImGui::GetIO();
  const bool window_hovered = ImGui::IsWindowHovered();
  for (std::size_t gi = 0; gi < ix.groups().size(); ++gi) {
    const TrackGroup& g = ix.groups()[gi];
    if ((which == GroupFilter::gpus && g.kind != TrackKind::gpu) ||
        (which == GroupFilter::hosts && g.kind == TrackKind::gpu))
      continue;
    const bool collapsed = group_collapsed_[gi] != 0;
    const std::string group = cat(compare_pass_ ? "B · " : "", g.label);  // B's groups say so
    stats_.groups.push_back({group, y, collapsed});
    // Group header: the whole width; a click toggles collapse.
    if (y + kGroupH >= top && y <= bottom) {
      dl->AddRectFilled(ImVec2(left, y), ImVec2(x0 + width, y + kGroupH - 1),
                        compare_pass_ ? IM_COL32(58, 48, 66, 255) : IM_COL32(45, 50, 62, 255));
      dl->AddText(ImVec2(left + 4, y + 3), IM_COL32(230, 230, 230, 255), collapsed ? "+" : "-");
      dl->AddText(ImVec2(left + 16, y + 3), IM_COL32(230, 230, 230, 255), group.c_str());
      if (window_hovered && !label_splitter_hot_ && io.MousePos.y >= y && io.MousePos.y < y + kGroupH &&
          io.MousePos.x < x0 && ImGui::IsMouseClicked(0)) {
        group_collapsed_[gi] = collapsed ? 0 : 1;
        redraw_frames_ = 3;
      }
    }
    y += kGroupH;
    if (g.activity >= 0)
      y += draw_activity_lanes(dl, ix.activity()[static_cast<std::size_t>(g.activity)], x0, y, width);
    if (g.kind == TrackKind::gpu && !collapsed)
      y += draw_counter_lanes(dl, g.device, group, x0 - layout_.label_width + 8, x0, y, width);
    for (std::uint32_t ti : g.tracks) {
      const TrackInfo& info = ix.tracks()[ti];
      TrackStats ts;
      ts.group = group;
      ts.label = info.label;
      ts.track = info.track;
      ts.compared = compare_pass_;
      ts.collapsed = collapsed || track_collapsed_[ti] != 0;
      if (info.samples >= 0) {
        ts.samples = ix.samples()[static_cast<std::size_t>(info.samples)].size();
        if (!ts.collapsed || info.rows.size() == 1) ts.flame_rows = static_cast<std::uint32_t>(flame_rows(info));
      }
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
        // Track label on the left, cut with "…" to the column (hover: the whole of it); a click toggles collapse.
        const bool many = info.rows.size() > 1;
        const std::string label = cat(many ? (track_collapsed_[ti] ? "+ " : "- ") : "  ", info.label);
        ts.label_shown = elide(label, x0 - 8 - (left + 8));
        dl->AddText(ImVec2(left + 8, y + 2), IM_COL32(200, 200, 200, 255), ts.label_shown.c_str());
        const bool on_label = window_hovered && !label_splitter_hot_ && io.MousePos.y >= y && io.MousePos.y < y + h &&
                              io.MousePos.x < x0 - 8;
        if (on_label && ts.label_shown != label) ImGui::SetTooltip("%s", info.label.c_str());
        if (many && on_label && ImGui::IsMouseClicked(0)) {
          track_collapsed_[ti] = track_collapsed_[ti] ? 0 : 1;
          redraw_frames_ = 3;
        }
        if (info.samples >= 0 && info.rows.size() > 1 && !track_collapsed_[ti]) {
          // The samples row's own name, right-aligned in the label column.
          const float sy = y + 1 + static_cast<float>(info.rows.size() - 1) * (kRowH + kRowGap);
          const float w = ImGui::CalcTextSize("samples").x;
          if (x0 - 8 - w > left + 8) dl->AddText(ImVec2(x0 - 8 - w, sy + 1), IM_COL32(150, 150, 150, 255), "samples");
        }
        draw_track(dl, info, x0, y, width, ts);
        if (!matches_.empty() && !compare_pass_) draw_matches(dl, info, x0, y, width);
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
  if (which != GroupFilter::gpus && !lanes_of(kNoDevice).empty()) {
    const std::string counters = compare_pass_ ? "B · Counters" : "Counters";
    if (y + kGroupH >= top && y <= bottom) {
      dl->AddRectFilled(ImVec2(left, y), ImVec2(x0 + width, y + kGroupH - 1),
                        compare_pass_ ? IM_COL32(58, 48, 66, 255) : IM_COL32(45, 50, 62, 255));
      dl->AddText(ImVec2(left + 16, y + 3), IM_COL32(230, 230, 230, 255), counters.c_str());
    }
    y += kGroupH;
    y += draw_counter_lanes(dl, kNoDevice, counters, x0 - layout_.label_width + 8, x0, y, width);
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
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + width, y0 + kRulerHeight), IM_COL32(35, 38, 46, 255));
  dl->AddText(ImVec2(x0 - layout_.label_width + 8, y0 + 4), IM_COL32(150, 150, 150, 255),
              cat("+", format::duration(ticks.step_ns), " / tick").c_str());
  // Minor ticks: 5 per major step (or 2 when the step is 2·10^k, 5 when 5·10^k).
  const TimeNs minor = ticks.step_ns >= 5 ? ticks.step_ns / 5 : ticks.step_ns;
  const TimeNs first_minor = ticks.first - ((ticks.first - view_start()) / minor + 1) * minor;
  for (TimeNs t = first_minor; t <= view_end(); t += minor) {
    const float x = x0 + static_cast<float>(static_cast<double>(t - view_start_) * ppn);
    if (x < x0 || x > x0 + width) continue;
    const bool major = (t - ticks.first) % ticks.step_ns == 0;
    dl->AddLine(ImVec2(x, y0 + kRulerHeight - (major ? 10.0f : 4.0f)), ImVec2(x, y0 + kRulerHeight),
                IM_COL32(180, 180, 180, 255));
    if (major) {
      const std::string label = format_offset(t - origin, ticks.step_ns);
      dl->AddText(ImVec2(x + 3, y0 + 2), IM_COL32(210, 210, 210, 255), label.c_str());
    }
  }
}

// The other kinds this trace draws (copies by direction, memsets, API calls,
// syncs, counters, the activity lanes), once per document: a pass over the
// small columns only.
const std::vector<NamedColor>& View::legend_kinds() {
  if (legend_for_ == doc_.get()) return legend_kinds_;
  legend_for_ = doc_.get();
  legend_kinds_.clear();
  const Trace& t = doc_->trace();
  std::vector<ImU32> colors;
  auto add = [&](ImU32 c) {
    if (std::find(colors.begin(), colors.end(), c) == colors.end()) colors.push_back(c);
  };
  if (!doc_->index().activity().empty()) add(kUtilizationColor), add(kInFlightColor), add(kConcurrentColor);
  for (const CounterSeries& cs : t.counter_series()) add(counter_color(cs));
  std::array<bool, 256> kinds{};
  for (std::uint8_t k : t.memcpys().kind) kinds[k] = true;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    if (kinds[k]) add(copy_color(static_cast<CopyKind>(k)));
  if (t.memsets().size() > 0) add(memset_color());
  const ApiCallTable& api = t.api_calls();
  for (std::size_t r = 0; r < api.size(); ++r)
    add(api_color(api.domain_at(r), api.op_table[r] != static_cast<std::uint8_t>(OpTable::none)));
  if (t.syncs().size() > 0) add(sync_color());
  if (t.overheads().size() > 0) add(overhead_color());
  if (t.os_calls().size() > 0) add(os_call_color());
  for (const NamedColor& o : other_kind_palette())
    if (std::find(colors.begin(), colors.end(), o.color) != colors.end()) legend_kinds_.push_back(o);
  return legend_kinds_;
}

// One legend entry: a swatch and its name, wrapping to a new line when the
// line is full. `marker`: a mark drawn over the timeline (an outline).
bool View::legend_entry(std::string_view name, ImU32 color, bool marker, bool& first) {
  const float s = ImGui::GetTextLineHeight();
  const float w = s + ImGui::CalcTextSize(name.data(), name.data() + name.size()).x + 14;
  if (!first) {
    ImGui::SameLine(0, 12);
    if (ImGui::GetCursorPosX() + w > ImGui::GetWindowContentRegionMax().x) ImGui::NewLine();
  }
  first = false;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  if (marker)
    dl->AddRect(ImVec2(p.x + 1, p.y + 3), ImVec2(p.x + s - 5, p.y + s - 3), color, 0, 0, 2);
  else
    dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + s - 4, p.y + s - 2), color);
  ImGui::Dummy(ImVec2(s - 2, s));
  ImGui::SameLine(0, 2);
  ImGui::TextUnformatted(name.data(), name.data() + name.size());
  stats_.legend.push_back({std::string(name), color});
  return ImGui::IsItemClicked();
}

// Every colour the timeline draws: the categories this trace has (click one
// to highlight its kernels), then the other kinds, then the marks in use.
void View::draw_legend() {
  const KernelTable& k = doc_->trace().kernels();
  std::array<bool, kKernelCategoryCount> present{};
  if (auto p = doc_->profile()) {
    for (const CategoryTime& c : p->categories) present[static_cast<std::size_t>(c.category)] = true;
  } else {
    // Before the Profile arrives: sample the kernels (cheap, and the legend is a guide).
    const std::size_t stride = std::max<std::size_t>(1, k.size() / 4096);
    for (std::size_t i = 0; i < k.size(); i += stride) present[k.category[i]] = true;
  }
  bool first = true;
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    if (!present[static_cast<std::size_t>(c)]) continue;
    const auto cat_c = static_cast<KernelCategory>(c);
    const bool clicked = legend_entry(to_string(cat_c), category_color(cat_c), false, first);
    stats_.legend_targets.push_back(target(std::string(to_string(cat_c))));
    if (clicked) highlight_category(cat_c);
  }
  if (first) {
    ImGui::TextDisabled("no kernels");
    first = false;
  }
  ImGui::SameLine(0, 12);
  ImGui::TextDisabled("|");
  for (const NamedColor& o : legend_kinds()) legend_entry(o.name, o.color, false, first);
  if (doc_->trace().ranges().size() > 0) {
    ImGui::SameLine(0, 12);
    ImGui::TextDisabled("ranges: by name");
  }
  if (!doc_->index().samples().empty()) {
    ImGui::SameLine(0, 12);
    ImGui::TextDisabled("samples: by innermost frame");
  }
  if (!matches_.empty()) legend_entry("highlighted", kHighlightColor, true, first);
  if (selection_.valid()) legend_entry("selected", kSelectionColor, true, first);
  if (show_critical_path_) legend_entry("critical path", kCriticalPathColor, false, first);
  if (!evidence_.empty()) legend_entry("finding's evidence", kEvidenceEdgeColor, false, first);
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

  const float label_x = x0 - layout_.label_width + 8, label_w = layout_.label_width - 16;
  dl->AddText(ImVec2(label_x, y + 4), IM_COL32(170, 170, 170, 255), elide("  utilization", label_w).c_str());
  char in_flight_label[48];
  const float lane_bottom_1 = y + kLaneH - 1, lane_bottom_2 = y + 2 * kLaneH;
  dl->AddRectFilled(ImVec2(x0, y), ImVec2(x0 + width, lane_bottom_1), IM_COL32(30, 33, 40, 255));
  dl->AddRectFilled(ImVec2(x0, y + kLaneH), ImVec2(x0 + width, lane_bottom_2), IM_COL32(30, 33, 40, 255));

  float max_in_flight = 1;
  for (const LaneSample& s : lane_buf_) max_in_flight = std::max(max_in_flight, s.in_flight);
  const float scale = std::max(2.0f, std::ceil(max_in_flight));
  const float lane_h = kLaneH - 3;
  auto draw_runs = [&](auto height_of, float bottom, ImU32 color) {
    draw_column_runs(dl, x0, bottom, std::span<const LaneSample>(lane_buf_.data(), columns), color, height_of);
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
  dl->AddText(ImVec2(label_x, y + kLaneH + 5), IM_COL32(170, 170, 170, 255), elide(in_flight_label, label_w).c_str());

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
    case TableId::kernels: return category_color(t.kernels.category_at(row));
    case TableId::memcpys: return copy_color(t.memcpys.kind_at(row));
    case TableId::memsets: return memset_color();
    case TableId::api_calls:
      return api_color(t.api_calls.domain_at(row),
                       t.api_calls.op_table[row] != static_cast<std::uint8_t>(OpTable::none));
    case TableId::ranges: {
      const std::uint32_t c = t.ranges.color_at(row);
      return c ? argb_to_imgui(c) : palette_color(t.ranges.name[row]);
    }
    case TableId::syncs: return sync_color();
    case TableId::os_calls: return os_call_color();
    default: return overhead_color();
  }
}

std::string_view View::event_label(TableId table, RowIndex row) {
  const Trace& tr = doc_->trace();
  const TraceTables& t = tr.tables();
  switch (table) {
    case TableId::kernels: return short_label(t.kernels.name[row]);
    case TableId::memcpys: {
      static const std::string labels[] = {"Memcpy",      "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
                                           "Memcpy AtoH", "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA",
                                           "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
      const auto k = static_cast<std::size_t>(t.memcpys.kind[row]);
      return k < std::size(labels) ? std::string_view(labels[k]) : std::string_view(labels[0]);
    }
    case TableId::memsets: return "Memset";
    case TableId::api_calls: return tr.str(t.api_calls.name[row]);
    case TableId::ranges: return tr.str(t.ranges.name[row]);
    case TableId::syncs: return "sync";
    case TableId::overheads: return tr.str(t.overheads.kind[row]);
    case TableId::os_calls: return tr.str(t.os_calls.name[row]);
    default: return {};
  }
}

void View::draw_track(ImDrawList* dl, const TrackInfo& info, float x0, float y, float width, TrackStats& ts) {
  const std::size_t ti = static_cast<std::size_t>(&info - doc_->index().tracks().data());
  const bool gpu = doc_->trace().tracks()[info.track].kind == TrackKind::gpu;
  const auto [a, b] = shown_rows(info, gpu, track_collapsed_[ti] != 0);
  dl->PushClipRect(ImVec2(x0, y), ImVec2(x0 + width, y + track_height(info, track_collapsed_[ti] != 0)), true);
  for (std::size_t r = a; r < b; ++r) {
    const float ry = y + 1 + static_cast<float>(r - a) * (kRowH + kRowGap);
    if (info.rows[r].kind == RowKind::samples)
      draw_samples(dl, info, x0, ry, width, ts);
    else
      draw_row(dl, info.rows[r], x0, ry, width, ts);
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
  // The row's lanes (a stream's kernels, copies and memsets) folded together:
  // a block of one lane never hides another's events.
  std::array<LodLane, kMaxLodLanes> lanes{};
  const std::size_t n = std::min(row.segments.size(), kMaxLodLanes);
  for (std::size_t i = 0; i < n; ++i) {
    const LaneSegment& seg = row.segments[i];
    RowIndex lo, hi;
    seg.visible(t0, t1, &lo, &hi);
    lanes[i] = LodLane{seg.start, seg.end, lo, hi, seg.ends_sorted};
  }
  for_each_lod_item(std::span<const LodLane>(lanes.data(), n), min_ns, [&](const MultiLodItem& it) {
    if (it.merged()) {
      draw_folded(dl, row, it, to_x(it.start), to_x(it.end), span, ts);
    } else {
      const LaneSegment& seg = row.segments[it.lane()];
      draw_single(dl, seg, seg.row(it.first[it.lane()]), to_x(it.start), to_x(it.end), span, ts);
    }
  });
}

// A thread's host samples: a tick per sample (one per pixel column),
// coloured by its innermost frame; zoomed in, the flame chart below it.
void View::draw_samples(ImDrawList* dl, const TrackInfo& info, float x0, float y, float width, TrackStats& ts) {
  const ThreadSamples& s = doc_->index().samples()[static_cast<std::size_t>(info.samples)];
  const double ppn = px_per_ns(width);
  const ImGuiIO& io = ImGui::GetIO();
  const bool hovered = !compare_pass_ && ImGui::IsWindowHovered() && io.MousePos.x >= x0 && io.MousePos.x < x0 + width;
  auto to_x = [&](TimeNs t) {
    return x0 + static_cast<float>(std::clamp(static_cast<double>(t - view_start_) * ppn, -2.0, width + 2.0));
  };
  const auto px_ns = std::max<TimeNs>(1, static_cast<TimeNs>(std::ceil(1.0 / ppn)));
  const std::size_t end = s.first_at(view_end() + 1);
  std::size_t nearest = s.size();
  float nearest_d = 4;
  for (std::size_t i = s.first_at(view_start()); i < end;) {
    const float x = to_x(s.time[i]);
    const ImU32 c = frame_color(doc_->index().frame_names()[s.leaf(i)]);
    const bool selected = !compare_pass_ && selection_.table == TableId::ranges && selection_.row == s.rows[i];
    dl->AddRectFilled(ImVec2(x, y + 2), ImVec2(x + 2, y + kRowH - 2), c);
    if (selected) dl->AddRect(ImVec2(x - 2, y), ImVec2(x + 4, y + kRowH), kSelectionColor, 0, 0, 2);
    ++ts.samples_drawn;
    if (hovered && io.MousePos.y >= y && io.MousePos.y < y + kRowH && std::abs(io.MousePos.x - x - 1) < nearest_d) {
      nearest_d = std::abs(io.MousePos.x - x - 1);
      nearest = i;
    }
    i = std::max(i + 1, s.first_at(s.time[i] + px_ns));  // the next pixel column's first sample
  }
  if (nearest < s.size()) hovered_ = MatchRef{TableId::ranges, s.rows[nearest]};
  const std::size_t rows = flame_rows(info);
  if (rows > 0) draw_flame(dl, s, rows, x0, y + kRowH + kRowGap, width, ts);
}

// The flame chart: sample i's frames as boxes from its time to the next
// sample's (at most ThreadSamples::cap), outermost on top; a frame shared
// from the root with the sample before continues that sample's box.
void View::draw_flame(ImDrawList* dl, const ThreadSamples& s, std::size_t rows, float x0, float y, float width,
                      TrackStats& ts) {
  const double ppn = px_per_ns(width);
  const ImGuiIO& io = ImGui::GetIO();
  const bool hovered = !compare_pass_ && ImGui::IsWindowHovered() && io.MousePos.x >= x0 &&
                       io.MousePos.x < x0 + width && io.MousePos.y >= y &&
                       io.MousePos.y < y + static_cast<float>(rows) * (kRowH + kRowGap);
  auto to_x = [&](TimeNs t) {
    return x0 + static_cast<float>(std::clamp(static_cast<double>(t - view_start_) * ppn, -2.0, width + 2.0));
  };
  const float char_w = ImGui::CalcTextSize("m").x;
  const auto& names = doc_->index().frame_names();
  std::size_t i = s.first_at(view_start());
  if (i > 0) --i;  // the box of the sample before the view reaches into it
  const std::size_t end = s.first_at(view_end() + 1);
  // Per depth: the sample whose box is open, and where it started.
  std::array<std::size_t, kMaxFlameRows> open{};
  std::array<TimeNs, kMaxFlameRows> open_at{};
  std::array<bool, kMaxFlameRows> is_open{};
  auto close = [&](std::size_t d, TimeNs until) {
    if (!is_open[d]) return;
    is_open[d] = false;
    const float xa = to_x(open_at[d]), xb = std::max(to_x(until), xa + 1);
    const std::string& name = names[s.stack(open[d])[d]];
    const ImU32 c = frame_color(name);
    const float ry = y + static_cast<float>(d) * (kRowH + kRowGap);
    dl->AddRectFilled(ImVec2(xa, ry), ImVec2(xb, ry + kRowH), c);
    ++ts.flame_boxes;
    const float va = std::max(xa, x0) + 2, vb = std::min(xb, x0 + width) - 2;
    if (vb - va > 3 * char_w) {
      const auto room = static_cast<std::size_t>((vb - va) / char_w);
      const std::string shown = name.size() <= room ? name : cat(name.substr(0, room - 1), "\xE2\x80\xA6");
      dl->AddText(ImVec2(va, ry + 1), text_color_on(c), shown.c_str());
    }
  };
  TimeNs prev_end = std::numeric_limits<TimeNs>::min();
  for (; i < end; ++i) {
    const auto stack = s.stack(i);
    const std::size_t depth = std::min(stack.size(), rows);
    // Boxes the sample does not continue end where the one before ended.
    const std::size_t keep = s.time[i] <= prev_end ? std::min<std::size_t>(s.common[i], depth) : 0;
    for (std::size_t d = keep; d < rows; ++d) close(d, prev_end);
    for (std::size_t d = keep; d < depth; ++d) {
      is_open[d] = true;
      open[d] = i;
      open_at[d] = s.time[i];
    }
    prev_end = s.box_end(i);
    if (hovered && io.MousePos.x >= to_x(s.time[i]) && io.MousePos.x < to_x(prev_end) &&
        io.MousePos.y < y + static_cast<float>(depth) * (kRowH + kRowGap))
      hovered_ = MatchRef{TableId::ranges, s.rows[i]};
  }
  for (std::size_t d = 0; d < rows; ++d) close(d, prev_end);
}

namespace {

// What a folded block of a table counts: "3,780 kernels".
const char* folded_noun(TableId t) {
  // By TableId: kernels, memcpys, memsets, api_calls, ranges, syncs, counters,
  // overheads, memory_events, os_calls.
  static constexpr const char* kNouns[] = {"kernels", "copies", "memsets", "calls",  "ranges",
                                           "syncs",   "events", "events",  "events", "OS calls"};
  static_assert(std::size(kNouns) == kTableCount);
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(kNouns) ? kNouns[i] : "events";
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

// The kernels' category mix as stacked bands in legend order (padding on
// top), heights in proportion to time, in [top, bottom): a stream that is
// 21% padding shows a fifth of red at any zoom.
void View::draw_kernel_bands(ImDrawList* dl, const CategoryTimes& mix, RowIndex first_row, float xa, float xb,
                             float top, float bottom, float visible_w) {
  TimeNs total = 0;
  for (TimeNs v : mix) total += v;
  const float h = bottom - top;
  if (total == 0) {  // only zero-length kernels: the first one's colour
    const KernelCategory c = doc_->trace().kernels().category_at(first_row);
    dl->AddRectFilled(ImVec2(xa, top), ImVec2(xb, bottom), scale_brightness(category_color(c), 0.8f));
    stats_.kernel_px[static_cast<std::size_t>(c)] += visible_w * h;
    return;
  }
  TimeNs acc = 0;
  float band_top = top;
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    const TimeNs v = mix[static_cast<std::size_t>(c)];
    stats_.kernel_ns_folded[static_cast<std::size_t>(c)] += v;
    if (v == 0) continue;
    acc += v;
    const float band_bottom =
        top + std::round(h * static_cast<float>(static_cast<double>(acc) / static_cast<double>(total)));
    if (band_bottom <= band_top) continue;
    dl->AddRectFilled(ImVec2(xa, band_top), ImVec2(xb, band_bottom),
                      scale_brightness(category_color(static_cast<KernelCategory>(c)), 0.8f));
    stats_.kernel_px[static_cast<std::size_t>(c)] += visible_w * (band_bottom - band_top);
    band_top = band_bottom;
  }
}

void View::draw_folded(ImDrawList* dl, const TrackRow& row, const MultiLodItem& it, float xa, float xb,
                       const RowSpan& span, TrackStats& ts) {
  xb = std::max(xb, xa + kMinVisiblePx);
  const float w = visible_px(xa, xb, span.left, span.right);
  // Copies and memsets among kernels: a strip each at the bottom (their time
  // is small beside the kernels', yet they must show); the kernels' bands
  // above. A block of one kind fills the row.
  const std::size_t lanes = std::min(row.segments.size(), kMaxLodLanes);
  int kernel_lane = -1, other_lanes = 0;
  for (std::size_t i = 0; i < lanes; ++i) {
    if (it.last[i] == it.first[i]) continue;
    if (row.segments[i].table == TableId::kernels)
      kernel_lane = static_cast<int>(i);
    else
      ++other_lanes;
  }
  constexpr float kStripH = 3;
  const float strips = kernel_lane >= 0 ? kStripH * static_cast<float>(other_lanes) : kRowH;
  float strip_top = span.y + kRowH - strips;
  const float strip_h = kernel_lane >= 0 ? kStripH : kRowH / static_cast<float>(std::max(1, other_lanes));
  for (std::size_t i = 0; i < lanes; ++i) {
    const LaneSegment& seg = row.segments[i];
    const std::uint64_t count = it.last[i] - it.first[i];
    if (count == 0) continue;
    if (seg.table <= TableId::memsets) ts.gpu_ops[static_cast<std::size_t>(seg.table)] += count;
    if (seg.table == TableId::kernels) {
      draw_kernel_bands(dl, folded_kernel_time(seg, it.first[i], it.last[i]), seg.row(it.first[i]), xa, xb, span.y,
                        strip_top, w);
      continue;
    }
    dl->AddRectFilled(ImVec2(xa, strip_top), ImVec2(xb, strip_top + strip_h),
                      scale_brightness(event_color(seg.table, seg.row(it.first[i])), 0.62f));
    strip_top += strip_h;
  }
  // What the block stands for: "3,780 kernels · 12 memsets", or the number alone when that is all that fits.
  const float room = std::min(xb, span.right) - std::max(xa, span.left) - 6;
  std::string label;
  if (room >= 2 * span.digit_px)
    for (std::size_t i = 0; i < lanes; ++i)
      if (const std::uint64_t c = it.last[i] - it.first[i]; c > 0)
        label += cat(label.empty() ? "" : " · ", format::count(c), " ", folded_noun(row.segments[i].table));
  const std::string n = label.empty() ? std::string() : format::count(it.count());
  const std::string& shown = ImGui::CalcTextSize(label.c_str()).x <= room ? label : n;
  if (!shown.empty() && ImGui::CalcTextSize(shown.c_str()).x <= room) {
    const ImVec2 at(std::max(xa, span.left) + 3, span.y + 1);
    dl->AddText(ImVec2(at.x + 1, at.y + 1), IM_COL32(0, 0, 0, 170), shown.c_str());  // legible on any band
    dl->AddText(at, IM_COL32(240, 240, 240, 255), shown.c_str());
    if (stats_.folded_labels.size() < 64) stats_.folded_labels.push_back(shown);
  }
  ++ts.merged_blocks;
  ts.merged_events += it.count();
  if (!compare_pass_ && span.mouse_x >= xa && span.mouse_x < xb)
    hovered_block_ = FoldedBlock{it.start, it.end, &row, it};
}

void View::draw_single(ImDrawList* dl, const LaneSegment& seg, RowIndex r, float xa, float xb, const RowSpan& span,
                       TrackStats& ts) {
  xb = std::max(xb, xa + 1);
  const ImU32 color = event_color(seg.table, r);
  const bool selected = !compare_pass_ && selection_.valid() && selection_.table == seg.table && selection_.row == r;
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
    // As many characters as fit (at the widest character's width: no text
    // measuring per event), cut on a character and ended by "…" when cut.
    const std::string_view label = event_label(seg.table, r);
    const auto room = static_cast<std::size_t>((vis_b - vis_a) / char_w);
    if (label.size() <= room) {
      dl->AddText(ImVec2(vis_a, span.y + 1), text_color_on(color), label.data(), label.data() + label.size());
    } else {
      std::size_t cut = room - 1;
      while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;
      const std::string shown = cat(label.substr(0, cut), "\xE2\x80\xA6");  // …
      dl->AddText(ImVec2(vis_a, span.y + 1), text_color_on(color), shown.c_str());
    }
  }
  ++ts.drawn;
  if (seg.table <= TableId::memsets) ++ts.gpu_ops[static_cast<std::size_t>(seg.table)];
  if (!compare_pass_ && span.mouse_x >= xa - 1 && span.mouse_x < xb + 1) hovered_ = MatchRef{seg.table, r};
}

void View::folded_tooltip(const FoldedBlock& b) {
  ImGui::BeginTooltip();
  std::string what;
  const std::size_t lanes = std::min(b.row->segments.size(), kMaxLodLanes);
  for (std::size_t i = 0; i < lanes; ++i)
    if (const std::uint64_t c = b.item.last[i] - b.item.first[i]; c > 0)
      what += cat(what.empty() ? "" : " · ", format::count(c), " ", folded_noun(b.row->segments[i].table));
  ImGui::Text("%s folded (each < %.0f px at this zoom)", what.c_str(), kMinVisiblePx);
  ImGui::TextDisabled("%s span · click to zoom in", format::duration(b.end - b.start).c_str());
  for (std::size_t i = 0; i < lanes; ++i) {
    const LaneSegment& seg = b.row->segments[i];
    if (seg.table != TableId::kernels || b.item.last[i] == b.item.first[i]) continue;
    // The mix, largest first: the bands' numbers.
    const CategoryTimes mix = folded_kernel_time(seg, b.item.first[i], b.item.last[i]);
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
      // The matches in view, counted by two binary searches. More than a
      // few dozen on a row: each marked by a tick under it, and their count
      // written at the row's end, so the row's own events stay readable.
      const auto in_view = static_cast<std::uint64_t>(first_at(it, t1 + 1) - it);
      if (!seg.rows) stats_.matches_in_view += in_view;
      const bool ticks = !seg.rows && in_view > kMaxOutlinesPerRow;
      if (ticks) draw_match_count(dl, in_view, ry, x0, width);
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
        // A lane of its own (a stream's kernels): matches closer than 3 px
        // make one cluster, outlined once with their count, so hundreds of
        // highlighted kernels never bury the stream under yellow.
        auto last = it + 1;
        TimeNs cluster_end = end[r];
        const auto gap = static_cast<TimeNs>(std::ceil(kMinVisiblePx / ppn));
        while (!seg.rows && last != m.end()) {
          const auto joined = first_at(last, std::max(cluster_end, start[*(last - 1)]) + gap);
          if (joined == last) break;
          for (auto k = joined - std::min<std::ptrdiff_t>(joined - last, 8); k != joined; ++k)
            cluster_end = std::max(cluster_end, end[*k]);
          last = joined;
        }
        const auto count = static_cast<std::uint64_t>(last - it);
        draw_match_cluster(dl, start[r], std::max(cluster_end, end[r]), count, ry, x0, width, ticks);
        // Skip matches that would land on the same pixels.
        it = count > 1 ? last : first_at(it + 1, start[r] + gap);
      }
    }
  }
}

// "×570" at the right end of a row with too many matches in view to outline.
void View::draw_match_count(ImDrawList* dl, std::uint64_t count, float ry, float x0, float width) {
  const std::string n = cat("\xC3\x97", format::count(count));  // ×N
  const ImVec2 ts = ImGui::CalcTextSize(n.c_str());
  const ImVec2 at(x0 + width - ts.x - 4, ry + 1);
  dl->AddRectFilled(ImVec2(at.x - 3, at.y), ImVec2(at.x + ts.x + 2, at.y + ts.y), IM_COL32(20, 20, 20, 220));
  dl->AddText(at, kHighlightColor, n.c_str());
  if (stats_.match_count_labels.size() < 32) stats_.match_count_labels.push_back(n);
}

// One highlighted event (outlined), or a cluster of them too close to tell
// apart at this zoom: outlined once, thinner, with their count when it fits.
void View::draw_match_cluster(ImDrawList* dl, TimeNs start, TimeNs end, std::uint64_t count, float ry, float x0,
                              float width, bool ticks) {
  const double ppn = px_per_ns(width);
  const float xa =
      x0 + static_cast<float>(std::clamp(static_cast<double>(start - view_start_) * ppn, -4.0, width + 4.0));
  const float xb = std::max(
      xa + 2, x0 + static_cast<float>(std::clamp(static_cast<double>(end - view_start_) * ppn, -4.0, width + 4.0)));
  if (ticks) {  // under the row: the events themselves stay visible
    dl->AddRectFilled(ImVec2(xa, ry + kRowH - 2), ImVec2(std::max(xb, xa + 2), ry + kRowH + 1), kHighlightColor);
    ++stats_.match_ticks;
    return;
  }
  if (count == 1) {
    dl->AddRect(ImVec2(xa - 1, ry - 1), ImVec2(xb + 1, ry + kRowH + 1), kHighlightColor, 0, 0, 2);
    ++stats_.match_markers;
    return;
  }
  dl->AddRect(ImVec2(xa - 1, ry - 1), ImVec2(xb + 1, ry + kRowH + 1), kHighlightColor, 0, 0, 1);
  ++stats_.match_clusters;
  stats_.match_cluster_events += count;
  const std::string n = cat("\xC3\x97", format::count(count));  // ×N
  const ImVec2 ts = ImGui::CalcTextSize(n.c_str());
  if (xb - xa < ts.x + 6) return;
  const ImVec2 at(std::min(xb, x0 + width) - ts.x - 3, ry + 1);
  if (at.x < std::max(xa, x0)) return;
  dl->AddRectFilled(ImVec2(at.x - 2, at.y), ImVec2(at.x + ts.x + 1, at.y + ts.y), IM_COL32(20, 20, 20, 200));
  dl->AddText(at, kHighlightColor, n.c_str());
  if (stats_.match_cluster_labels.size() < 32) stats_.match_cluster_labels.push_back(n);
}

bool View::row_position(TableId table, RowIndex row, float* y) const {
  const Trace& trace = doc_->trace();
  const TimelineIndex& ix = doc_->index();
  const TrackId track = detail::time_columns(trace.tables(), table).track_at(row);
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
    const float ya = y + kRowH - 4;
    const ImVec2 p0(std::clamp(xa, x0, x0 + width), ya), p1(std::clamp(xb, x0, x0 + width), ya + 4);
    if (have_prev && prev_step == s.step) dl->AddLine(prev_end, ImVec2(p0.x, ya + 2), kCriticalPathColor, 2.0f);
    if (!(ya == last_y && p1.x <= last_x + 1)) {
      // A bar under the event and, when it is wide enough to tell, its outline.
      dl->AddRectFilled(p0, p1, kCriticalPathColor);
      if (p1.x - p0.x >= 4)
        dl->AddRect(ImVec2(p0.x - 1, y - 1), ImVec2(p1.x + 1, y + kRowH), kCriticalPathColor, 0, 0, 1.5f);
      last_x = p1.x;
      last_y = ya;
    }
    ++stats_.critical_path_events;
    prev_end = ImVec2(p1.x, ya + 2);
    prev_step = s.step;
    have_prev = true;
  }
}

}  // namespace gpuscope::viewer
