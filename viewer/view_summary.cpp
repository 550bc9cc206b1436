// View — summary: what the program is (the report's Workload and Run lines),
// per-device utilization, concurrency and overlap, steps and their
// breakdown, category shares, and what the source could not keep.
//
// [SECTION] Small charts
// [SECTION] Summary panel
#include <imgui.h>

#include <algorithm>

#include "export/report_text.h"
#include "viewer/colors.h"
#include "viewer/time_format.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

// [SECTION] Small charts ---------------------------------------------------------------------

namespace {

constexpr ImU32 kComputeColor = IM_COL32(60, 120, 220, 255);
constexpr ImU32 kCommColor = IM_COL32(40, 170, 90, 255);
constexpr ImU32 kMemcpyColor = IM_COL32(200, 80, 150, 255);
constexpr ImU32 kIdleColor = IM_COL32(90, 90, 90, 255);

// One stacked horizontal bar of parts (value, colour), scaled to `w` pixels for `total`.
void stacked_bar(std::initializer_list<std::pair<double, ImU32>> parts, double total, float w, float h) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float x = p.x;
  for (const auto& [v, c] : parts) {
    const float dw = total > 0 ? static_cast<float>(v / total) * w : 0;
    if (dw > 0) dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + dw, p.y + h), c);
    x += dw;
  }
  ImGui::Dummy(ImVec2(w, h));
}

void legend_item(const char* label, ImU32 color) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float s = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + s - 6, p.y + s - 3), color);
  ImGui::Dummy(ImVec2(s - 4, s));
  ImGui::SameLine(0, 2);
  ImGui::TextUnformatted(label);
  ImGui::SameLine(0, 14);
}

}  // namespace

// [SECTION] Summary panel --------------------------------------------------------------------

void View::draw_summary() {
  const std::shared_ptr<const Profile> profile = panel_profile("summary");
  if (!profile) return;
  const Profile& p = *profile;
  const TraceMeta& meta = doc_->trace().meta();
  ImGui::Text("Source: %s (%s)%s%s", std::string(doc_->source_label()).c_str(),
              std::string(to_string(p.source)).c_str(), p.producer.empty() ? "" : " · producer: ", p.producer.c_str());
  if (meta.rank >= 0) {
    ImGui::SameLine();
    ImGui::Text(" · rank %d of %d", meta.rank, meta.world_size);
  }
  ImGui::Text("Window %s · %zu device%s", format::duration(p.window.duration()).c_str(), p.devices.size(),
              p.devices.size() == 1 ? "" : "s");
  draw_summary_workload(p.workload);
  draw_summary_devices(p);
  ImGui::Spacing();
  draw_summary_categories(p);
  ImGui::Spacing();
  draw_summary_steps(p.steps);
  ImGui::Spacing();
  draw_summary_launches(p, meta);
}

// What the program is (the report's Workload and Run lines): the kinds on
// one line, the evidence in its tooltip.
void View::draw_summary_workload(const WorkloadKind& w) {
  stats_.summary_workload = workload_line(w, false);
  ImGui::TextWrapped("Workload: %s", stats_.summary_workload.c_str());
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
    ImGui::TextUnformatted(workload_line(w).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  if (!w.run_evidence.empty()) ImGui::TextWrapped("Run: %s", w.run_evidence.c_str());
}

void View::draw_summary_devices(const Profile& p) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerV;
  if (ImGui::BeginTable("devices", 9, flags)) {
    for (const char* h : {"GPU", "span", "busy", "utilization", "concurrency", "in flight", "memcpy overlap",
                          "comm overlap", "kernels"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const DeviceSummary& d : p.devices) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%u %s", d.id, d.name.c_str());
      text_cell(format::duration(d.span_ns));
      text_cell(format::duration(d.busy_ns));
      ImGui::TableNextColumn();
      percent_bar(d.utilization, kUtilizationColor, 90, IM_COL32(55, 55, 65, 255));
      ImGui::TableNextColumn();
      percent_bar(d.kernel_concurrency, kConcurrentColor, 90, IM_COL32(55, 55, 65, 255));
      text_cell(format::fixed(d.mean_kernels_in_flight, 2));
      text_cell(format::percent1(d.memcpy_compute_overlap));
      text_cell(format::percent1(d.communication_compute_overlap));
      text_cell(format::count(d.kernels));
    }
    stats_.summary_devices = p.devices.size();
    ImGui::EndTable();
  }
}

void View::draw_summary_categories(const Profile& p) {
  // Time by category: one stacked bar.
  ImGui::TextUnformatted("GPU kernel time by category");
  {
    const float w = std::min(ImGui::GetContentRegionAvail().x - 20, 900.0f);
    const ImVec2 pos = ImGui::GetCursorScreenPos();
    float x = pos.x;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (const CategoryTime& c : p.categories) {
      const float dw = static_cast<float>(c.share) * w;
      dl->AddRectFilled(ImVec2(x, pos.y), ImVec2(x + dw, pos.y + 16), category_color(c.category));
      if (dw > 60)
        dl->AddText(ImVec2(x + 3, pos.y + 1), text_color_on(category_color(c.category)),
                    (std::string(to_string(c.category)) + " " + format::percent(c.share)).c_str());
      x += dw;
    }
    ImGui::Dummy(ImVec2(w, 18));
  }
}

void View::draw_summary_steps(const StepSummary& st) {
  if (st.steps.empty()) {
    ImGui::TextDisabled("No steps found (no NVTX / ProfilerStep ranges and no repeating pattern).");
  } else {
    ImGui::Text("%s steps (%s): mean %s · median %s · max %s", format::count(st.steps.size()).c_str(),
                std::string(to_string(st.source)).c_str(), format::duration(st.step_time.mean).c_str(),
                format::duration(st.step_time.median).c_str(), format::duration(st.step_time.max).c_str());
    TimeNs compute = 0, comm = 0, memcpy = 0, idle = 0;
    for (const Step& s : st.steps) {
      compute += s.compute_ns;
      comm += s.communication_ns;
      memcpy += s.memcpy_ns;
      idle += s.idle_ns;
    }
    const double total = static_cast<double>(compute + comm + memcpy + idle);
    legend_item("compute", kComputeColor);
    legend_item("communication", kCommColor);
    legend_item("memcpy", kMemcpyColor);
    legend_item("idle", kIdleColor);
    ImGui::NewLine();
    auto share = [&](TimeNs part) { return format::percent1(total > 0 ? static_cast<double>(part) / total : 0); };
    ImGui::Text("all steps: compute %s · communication %s · memcpy %s · idle %s", share(compute).c_str(),
                share(comm).c_str(), share(memcpy).c_str(), share(idle).c_str());
    // One stacked bar per step (at most 200, evenly sampled), length ∝ step time.
    TimeNs longest = 1;
    for (const Step& s : st.steps) longest = std::max(longest, s.range.duration());
    const std::size_t shown = std::min<std::size_t>(st.steps.size(), 200);
    const float w = std::min(ImGui::GetContentRegionAvail().x - 140, 700.0f);
    const float bar_h = shown > 40 ? 3.0f : 10.0f;
    for (std::size_t i = 0; i < shown; ++i) {
      const Step& s = st.steps[i * st.steps.size() / shown];
      if (bar_h >= 10) {
        ImGui::TextDisabled("%-18.18s", s.name.c_str());
        ImGui::SameLine(150);
      }
      const float len = w * static_cast<float>(static_cast<double>(s.range.duration()) / static_cast<double>(longest));
      stacked_bar({{static_cast<double>(s.compute_ns), kComputeColor},
                   {static_cast<double>(s.communication_ns), kCommColor},
                   {static_cast<double>(s.memcpy_ns), kMemcpyColor},
                   {static_cast<double>(s.idle_ns), kIdleColor}},
                  static_cast<double>(s.compute_ns + s.communication_ns + s.memcpy_ns + s.idle_ns), len, bar_h);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s: %s\ncompute %s\ncommunication %s\nmemcpy %s\nidle %s\nclick: zoom to the step",
                          s.name.c_str(), format::duration(s.range.duration()).c_str(),
                          format::duration(s.compute_ns).c_str(), format::duration(s.communication_ns).c_str(),
                          format::duration(s.memcpy_ns).c_str(), format::duration(s.idle_ns).c_str());
      if (ImGui::IsItemClicked()) zoom_to(s.range.start, s.range.end);
      if (bar_h >= 10) draw_step_sparkline(s, 120, bar_h + 4);
      if (bar_h < 10) ImGui::SetCursorPosY(ImGui::GetCursorPosY() - ImGui::GetStyle().ItemSpacing.y + 1);
    }
  }
}

void View::draw_summary_launches(const Profile& p, const TraceMeta& meta) {
  // Launches and what the source lost.
  const LaunchStats& l = p.launches;
  if (l.launches > 0)
    ImGui::Text("Launches: %s · CPU launch mean %s · launch delay median %s · %s of kernels shorter than their launch",
                format::count(l.launches).c_str(), format::duration(l.cpu_launch.mean).c_str(),
                format::duration(l.launch_delay.median).c_str(), format::percent(l.short_kernel_share).c_str());
  if (l.graph_ops > 0)
    ImGui::Text("%s GPU ops replayed by graph launches (not in the launch figures)",
                format::count(l.graph_ops).c_str());
  if (!meta.stats.empty()) {
    ImGui::TextUnformatted("Source statistics (events the source could not keep are counted here):");
    for (const auto& [k, v] : meta.stats) ImGui::BulletText("%s: %s", k.c_str(), format::count(v).c_str());
  }
}

}  // namespace gpuscope::viewer
