// View — counter lanes under each GPU (memory, power, any Chrome `C`
// counter) and the summary's memory sparkline per step.
//
// A lane is scaled to its series' peak over the whole trace, so zooming does
// not rescale it; the peak is marked where it is in view, and hovering a lane
// shows the level under the mouse.
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "viewer/colors.h"
#include "viewer/elide.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {

constexpr float kCounterLaneH = 24;
constexpr ImU32 kLaneBackground = IM_COL32(30, 33, 40, 255);
constexpr ImU32 kPeakColor = IM_COL32(240, 90, 80, 255);

}  // namespace

const std::vector<CounterLane>& View::lanes_of(std::uint32_t device) {
  if (counter_lanes_for_ != doc_.get()) {
    counter_lanes_.clear();
    counter_lanes_for_ = doc_.get();
  }
  auto it = counter_lanes_.find(device);
  if (it == counter_lanes_.end()) it = counter_lanes_.emplace(device, counter_lanes(doc_->trace(), device)).first;
  return it->second;
}

float View::draw_counter_lanes(ImDrawList* dl, std::uint32_t device, const std::string& group, float label_x, float x0,
                               float y, float width) {
  const float y_start = y;
  for (const CounterLane& lane : lanes_of(device)) {
    const CounterSeries& s = doc_->trace().counter_series()[lane.series];
    CounterLaneStats ls;
    ls.group = group;
    ls.label = counter_label(s);
    ls.series = s.name;
    ls.unit = s.unit;
    ls.device = device;
    ls.y = y;
    ls.height = kCounterLaneH;
    ls.peak = lane.peak.value;
    ls.peak_time = lane.peak.time;
    ls.peak_text = "peak " + format_counter_value(lane.peak.value, s.unit);
    draw_counter_lane(dl, lane, label_x, x0, y, width, ls);
    stats_.counter_lanes.push_back(std::move(ls));
    y += kCounterLaneH;
  }
  return y - y_start;
}

void View::draw_counter_lane(ImDrawList* dl, const CounterLane& lane, float label_x, float x0, float y, float width,
                             CounterLaneStats& ls) {
  const ImVec2 win_pos = ImGui::GetWindowPos();
  const float win_h = ImGui::GetWindowHeight();
  if (y + kCounterLaneH < win_pos.y || y > win_pos.y + win_h) return;  // off screen: measured only
  ls.visible = true;
  const Trace& t = doc_->trace();
  const CounterSeries& s = t.counter_series()[lane.series];
  const auto columns = static_cast<std::size_t>(std::max(1.0f, width));
  sample_counter(t, lane.series, view_start_, view_span_ / static_cast<double>(columns), columns, counter_buf_);
  ls.columns = columns;

  const float bottom = y + kCounterLaneH - 2, lane_h = kCounterLaneH - 5;
  dl->AddRectFilled(ImVec2(x0, y), ImVec2(x0 + width, bottom), kLaneBackground);
  // The label column: the label, cut with "…" where needed, and the peak
  // right-aligned against the data — never over it.
  const float column_end = x0 - 8;
  const float peak_w = ImGui::CalcTextSize(ls.peak_text.c_str()).x;
  ls.peak_x1 = column_end;
  ls.peak_x0 = std::max(label_x, column_end - peak_w);
  const bool peak_fits = ls.peak_x0 + peak_w <= column_end + 0.5f;
  ls.label_shown = elide("  " + ls.label, std::max(0.0f, (peak_fits ? ls.peak_x0 - 6 : column_end) - label_x));
  ls.label_x1 = label_x + ImGui::CalcTextSize(ls.label_shown.c_str()).x;
  dl->AddText(ImVec2(label_x, y + 4), IM_COL32(170, 170, 170, 255), ls.label_shown.c_str());
  if (peak_fits)
    dl->AddText(ImVec2(ls.peak_x0, y + 4), IM_COL32(220, 220, 220, 255), ls.peak_text.c_str());
  else
    ls.peak_x0 = ls.peak_x1 = 0;  // no room: in the tooltip only
  const double lo = lane.floor, range = std::max(lane.peak.value - lane.floor, 1e-300);
  auto height_of = [&](const CounterColumn& c) {
    return c.has ? static_cast<int>(std::lround(std::clamp((c.max - lo) / range, 0.0, 1.0) * lane_h)) : 0;
  };
  const ImU32 color = counter_color(s);
  draw_column_runs(dl, x0, bottom, std::span<const CounterColumn>(counter_buf_.data(), columns), color, height_of);
  // The peak: a mark at its time when in view, its value on the right.
  const double ppn = static_cast<double>(width) / view_span_;
  const double px = static_cast<double>(lane.peak.time - view_start_) * ppn;
  if (px >= 0 && px <= width) {
    const float xp = x0 + static_cast<float>(px);
    dl->AddTriangleFilled(ImVec2(xp - 4, y), ImVec2(xp + 4, y), ImVec2(xp, y + 6), kPeakColor);
    dl->AddLine(ImVec2(xp, y), ImVec2(xp, bottom), kPeakColor);
    ls.peak_marked = true;
  }

  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsWindowHovered() && io.MousePos.x >= label_x && io.MousePos.x < x0 - 8 && io.MousePos.y >= y &&
      io.MousePos.y < bottom && !dragging_)
    ImGui::SetTooltip("%s (%s)\n%s", ls.label.c_str(), s.name.c_str(), ls.peak_text.c_str());
  if (ImGui::IsWindowHovered() && io.MousePos.x >= x0 && io.MousePos.x < x0 + width && io.MousePos.y >= y &&
      io.MousePos.y < bottom && !dragging_) {
    const auto at = view_start_ + static_cast<TimeNs>(static_cast<double>(io.MousePos.x - x0) / ppn);
    const std::optional<double> v = counter_value_at(t, lane.series, at);
    const std::string where = s.device == kNoDevice ? std::string() : " · GPU " + std::to_string(s.device);
    ImGui::SetTooltip("%s%s\n%s at %s\n%s (at %s)", ls.label.c_str(), where.c_str(),
                      v ? format_counter_value(*v, s.unit).c_str() : "no sample yet",
                      format::duration(at - t.begin_time()).c_str(), ls.peak_text.c_str(),
                      format::duration(lane.peak.time - t.begin_time()).c_str());
    stats_.tooltip = s.name;
  }
}

// The step's device memory as a small line: its allocated series sampled
// across the step, scaled to the step's own range.
void View::draw_step_sparkline(const Step& s, float width, float height) {
  if (s.device == kNoDevice || !doc_) return;
  const Trace& t = doc_->trace();
  const std::uint32_t series = t.find_counter_series(series_name::kMemoryAllocated, s.device);
  if (series == kNoSeries || t.rows_of(TableId::counters, series).size() == 0) return;
  // Steps are on the analysis's clock; a single trace's clock is the same.
  const auto columns = static_cast<std::size_t>(std::max(8.0f, width / 2));
  sample_counter(t, series, s.range.start, static_cast<double>(s.range.duration()) / static_cast<double>(columns),
                 columns, counter_buf_);
  std::vector<float> values;
  for (const CounterColumn& c : counter_buf_)
    if (c.has) values.push_back(static_cast<float>(c.max));
  if (values.empty()) return;
  ImGui::SameLine();
  const std::string id = "##mem" + std::to_string(s.index) + "." + std::to_string(s.device);
  ImGui::PlotLines(id.c_str(), values.data(), static_cast<int>(values.size()), 0, nullptr, FLT_MAX, FLT_MAX,
                   ImVec2(width, height));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s: memory allocated on GPU %u\npeak %s", s.name.c_str(), s.device,
                      s.peak_allocated_bytes ? format::bytes(*s.peak_allocated_bytes).c_str() : "?");
  stats_.step_sparklines.push_back(s.name);
}

}  // namespace gpuscope::viewer
