// View — the duration histogram of one name (a kernel, an op, an NVTX
// range): counts per bin on a log-scaled duration axis, with the minimum,
// median, p99 and maximum; a click on a bin highlights its instances on the
// timeline and steps through them, one per click.
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "viewer/colors.h"
#include "viewer/elide.h"
#include "viewer/text.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

bool View::show_histogram(TableId table, StringId name) {
  if (!doc_ || (table != TableId::kernels && table != TableId::ranges)) return false;
  DurationHistogram h = duration_histogram(doc_->trace(), table, name);
  if (h.count == 0) return false;
  histogram_ = std::move(h);
  histogram_bin_ = -1;
  show(Panel::histogram);
  return true;
}

bool View::show_histogram_of(std::string_view name) {
  if (!doc_) return false;
  const StringId id = doc_->trace().strings().find(name);
  if (id == StringTable::kNoString) return false;
  return show_histogram(TableId::kernels, id) || show_histogram(TableId::ranges, id);
}

void View::histogram_of_selection() {
  if (!doc_ || !selection_.valid()) return;
  const Trace& t = doc_->trace();
  if (selection_.table == TableId::kernels) show_histogram(TableId::kernels, t.kernels().name[selection_.row]);
  if (selection_.table == TableId::ranges) show_histogram(TableId::ranges, t.ranges().name[selection_.row]);
}

void View::select_histogram_bin(std::size_t bin) {
  if (!histogram_ || bin >= histogram_->bins() || histogram_->counts[bin] == 0) return;
  if (histogram_bin_ == static_cast<std::int64_t>(bin) && !matches_.empty()) {  // again: the next instance
    step_match(true);
    return;
  }
  const DurationHistogram& h = *histogram_;
  histogram_bin_ = static_cast<std::int64_t>(bin);
  matches_ = MatchSet::of_rows(doc_->trace(), h.table, h.bin_rows(bin));
  matches_label_ = cat("durations ", format::duration(h.edges[bin]), "–", format::duration(h.edges[bin + 1] - 1), ": ",
                       doc_->trace().str(h.name));
  highlighted_kernel_.clear();
  match_cursor_.reset();
  step_match(true);
}

void View::draw_histogram() {
  if (!panel_open("histogram", histogram_.has_value(),
                  "No histogram open. Open one from a kernel's row in Hotspots, an op in Ops, or the Details of a "
                  "selected kernel or range (H): the durations of every instance of that name."))
    return;
  const DurationHistogram& h = *histogram_;
  const Trace& t = doc_->trace();
  const std::string what = h.table == TableId::kernels ? "kernel" : "range";
  const std::string full(t.str(h.name));
  const std::string summary = cat(format::count(h.count), " instances · min ", format::duration(h.min), " · median ",
                                  format::duration(h.median), " · p99 ", format::duration(h.p99), " · max ",
                                  format::duration(h.max), " · total ", format::duration(h.total));
  const float summary_w = ImGui::CalcTextSize(summary.c_str()).x;
  const std::string shown = elide(cat(what, ": ", full), ImGui::GetContentRegionAvail().x - summary_w - 24);
  ImGui::TextUnformatted(shown.c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", full.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("%s", summary.c_str());
  HistogramStats& hs = stats_.histogram;
  hs.shown = true;
  hs.title = shown;
  hs.summary = summary;
  draw_histogram_bars(h, std::max(60.0f, ImGui::GetContentRegionAvail().y - 2 * ImGui::GetFrameHeightWithSpacing()));
  draw_histogram_steps(h);
}

// The bars (one per bin, equal widths: the axis is log-scaled), the median
// and p99 as lines, the axis' durations below.
void View::draw_histogram_bars(const DurationHistogram& h, float height) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(100.0f, ImGui::GetContentRegionAvail().x - 8);
  const float axis_h = ImGui::GetTextLineHeight() + 4, chart_h = height - axis_h;
  const float bar_w = width / static_cast<float>(h.bins());
  const std::uint64_t most = std::max<std::uint64_t>(1, *std::max_element(h.counts.begin(), h.counts.end()));
  const ImU32 color = h.table == TableId::kernels ? category_color(doc_->trace().kernels().category_at(h.rows.front()))
                                                  : palette_color(h.name);
  dl->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + chart_h), IM_COL32(30, 33, 40, 255));
  HistogramStats& hs = stats_.histogram;
  for (std::size_t b = 0; b < h.bins(); ++b) {
    const float xa = origin.x + bar_w * static_cast<float>(b), xb = xa + bar_w - 1;
    const float bh = h.counts[b] == 0
                         ? 0
                         : std::max(2.0f, (chart_h - 4) * static_cast<float>(h.counts[b]) / static_cast<float>(most));
    const bool selected = histogram_bin_ == static_cast<std::int64_t>(b);
    if (bh > 0) dl->AddRectFilled(ImVec2(xa, origin.y + chart_h - bh), ImVec2(xb, origin.y + chart_h), color);
    if (h.counts[b] > 0) {  // the count above its bar, when it fits
      const std::string n = format::count(h.counts[b]);
      const ImVec2 ts = ImGui::CalcTextSize(n.c_str());
      if (ts.x <= bar_w - 2)
        dl->AddText(ImVec2((xa + xb - ts.x) / 2, std::max(origin.y, origin.y + chart_h - bh - ts.y - 1)),
                    IM_COL32(220, 220, 220, 255), n.c_str());
    }
    if (selected)
      dl->AddRect(ImVec2(xa - 1, origin.y + 1), ImVec2(xb + 1, origin.y + chart_h), kHighlightColor, 0, 0, 2);
    ImGui::SetCursorScreenPos(ImVec2(xa, origin.y));
    ImGui::PushID(static_cast<int>(b));
    if (ImGui::InvisibleButton("##bin", ImVec2(std::max(1.0f, bar_w - 1), chart_h))) select_histogram_bin(b);
    ImGui::PopID();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s – %s: %s instances%s", format::duration(h.edges[b]).c_str(),
                        format::duration(h.edges[b + 1] - 1).c_str(), format::count(h.counts[b]).c_str(),
                        h.counts[b] ? "\nclick: highlight them and step through them on the timeline" : "");
    hs.bins.push_back({h.edges[b], h.edges[b + 1], h.counts[b], (xa + xb) / 2, origin.y + chart_h - 4});
  }
  // Where a duration sits on the log axis.
  const double lo = std::log(static_cast<double>(h.edges.front())), hi = std::log(static_cast<double>(h.edges.back()));
  auto x_of = [&](TimeNs v) {
    const double f = hi > lo ? (std::log(static_cast<double>(std::max<TimeNs>(v, 1))) - lo) / (hi - lo) : 0.5;
    return origin.x + static_cast<float>(std::clamp(f, 0.0, 1.0)) * width;
  };
  const struct {
    TimeNs v;
    const char* label;
    ImU32 color;
  } marks[] = {{h.median, "median", IM_COL32(235, 235, 235, 255)}, {h.p99, "p99", kFlowColor}};
  for (const auto& m : marks) {
    const float x = x_of(m.v), text_w = ImGui::CalcTextSize(m.label).x;
    const float tx = x + 3 + text_w <= origin.x + width ? x + 3 : x - 3 - text_w;  // inside the chart
    dl->AddLine(ImVec2(x, origin.y), ImVec2(x, origin.y + chart_h), m.color, 1.5f);
    dl->AddText(ImVec2(tx, origin.y + 2 + (m.v == h.p99 ? ImGui::GetTextLineHeight() : 0.0f)), m.color, m.label);
  }
  // The axis: the bounds of a few bins, as durations.
  const std::size_t every = std::max<std::size_t>(1, h.bins() / 6);
  for (std::size_t b = 0; b <= h.bins(); b += every) {
    const std::string label = format::duration(h.edges[b]);
    const float x =
        std::min(origin.x + bar_w * static_cast<float>(b), origin.x + width - ImGui::CalcTextSize(label.c_str()).x);
    dl->AddText(ImVec2(x, origin.y + chart_h + 2), IM_COL32(170, 170, 170, 255), label.c_str());
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + height));
}

// The selected bin: which instance is selected, and previous / next.
void View::draw_histogram_steps(const DurationHistogram& h) {
  HistogramStats& hs = stats_.histogram;
  hs.selected_bin = histogram_bin_;
  if (histogram_bin_ < 0) {
    ImGui::TextDisabled(
        "Click a bar: its instances are outlined on the timeline, the first in view selected; "
        "click again for the next.");
    return;
  }
  const auto b = static_cast<std::size_t>(histogram_bin_);
  std::string at = "-";
  if (match_cursor_) at = format::count(matches_.ordinal(doc_->trace(), *match_cursor_) + 1);
  hs.step = cat("instance ", at, " of ", format::count(h.counts[b]));
  ImGui::Text("%s – %s: %s", format::duration(h.edges[b]).c_str(), format::duration(h.edges[b + 1] - 1).c_str(),
              hs.step.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("< previous")) step_match(false);
  ImGui::SameLine();
  if (ImGui::SmallButton("next >")) step_match(true);
  hs.next_target = target("next");
}

}  // namespace gpuscope::viewer
