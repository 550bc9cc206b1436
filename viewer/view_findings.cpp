// View — findings: what the analysis concluded, with its numbers, evidence
// and recommendation. A click shows the evidence on the timeline: its time
// ranges as bands, zoomed to fit, and its kernels highlighted.
#include <imgui.h>

#include <algorithm>

#include "analysis/format.h"
#include "viewer/time_format.h"
#include "viewer/view.h"

namespace gpuscope::viewer {

namespace {
ImVec4 severity_color(Severity s) {
  switch (s) {
    case Severity::critical:
      return ImVec4(0.95f, 0.3f, 0.3f, 1);
    case Severity::warning:
      return ImVec4(0.95f, 0.65f, 0.2f, 1);
    case Severity::info:
      break;
  }
  return ImVec4(0.5f, 0.7f, 0.95f, 1);
}
}  // namespace

void View::draw_findings() {
  const std::shared_ptr<const Profile> profile = panel_profile("findings");
  if (!profile) return;
  stats_.finding_rows = profile->findings.size();
  if (profile->findings.empty()) {
    ImGui::TextDisabled("No findings: no rule crossed its threshold on this trace.");
    return;
  }
  ImGui::Text("%zu findings, largest estimated saving first. Click one to see its evidence on the timeline.",
              profile->findings.size());
  ImGui::Separator();
  for (std::size_t i = 0; i < profile->findings.size(); ++i) {
    const Finding& f = profile->findings[i];
    ImGui::PushID(static_cast<int>(i));
    std::string sev(to_string(f.severity));
    std::transform(sev.begin(), sev.end(), sev.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
    ImGui::TextColored(severity_color(f.severity), "%-8s", sev.c_str());
    ImGui::SameLine();
    const bool open = ImGui::TreeNodeEx("##finding",
                                        ImGuiTreeNodeFlags_SpanAvailWidth | ImGuiTreeNodeFlags_OpenOnArrow |
                                            (i < 3 ? ImGuiTreeNodeFlags_DefaultOpen : 0),
                                        "%s", f.title.c_str());
    stats_.finding_targets.push_back(target(f.id));
    if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) {
      evidence_ = f.ranges;
      evidence_label_ = f.id;
      if (!f.ranges.empty()) {
        TimeNs s = f.ranges.front().start, e = f.ranges.front().end;
        for (const TimeRange& r : f.ranges) {
          s = std::min(s, r.start);
          e = std::max(e, r.end);
        }
        const TimeNs pad = std::max<TimeNs>((e - s) / 20, 100);
        zoom_to(s - pad, e + pad);
      }
      if (!f.kernels.empty()) {
        std::vector<std::uint8_t> ids(doc_->trace().strings().size(), 0);
        for (const std::string& k : f.kernels) {
          const StringId id = doc_->trace().strings().find(k);
          if (id != StringTable::kNoString) ids[id] = 1;
        }
        matches_ = MatchSet::by_names(doc_->trace(), ids, /*kernels_only=*/true);
        matches_label_ = "finding: " + f.id;
        match_cursor_.reset();
      }
    }
    if (open) {
      ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x);
      ImGui::TextDisabled("rule %s · %s %s %.3g (threshold %.3g) · estimated saving %s", f.id.c_str(),
                          f.device == kNoDevice ? "all GPUs" : ("GPU " + std::to_string(f.device)).c_str(), "metric",
                          f.metric, f.threshold, format::duration(f.saving_ns).c_str());
      if (!f.evidence.empty()) ImGui::Text("Evidence: %s", f.evidence.c_str());
      if (!f.recommendation.empty())
        ImGui::TextColored(ImVec4(0.6f, 0.9f, 0.6f, 1), "Do: %s", f.recommendation.c_str());
      if (!f.kernels.empty()) {
        const std::vector<std::string_view> names(f.kernels.begin(), f.kernels.end());
        const std::vector<std::string> shown = format::short_kernel_names(names);
        std::string ks;
        for (std::size_t k = 0; k < shown.size() && k < 4; ++k) ks += (k ? ", " : "") + shown[k];
        if (f.kernels.size() > 4) ks += ", ...";
        ImGui::TextDisabled("kernels: %s", ks.c_str());
      }
      if (!f.ranges.empty())
        ImGui::TextDisabled("%zu time range%s on the timeline", f.ranges.size(), f.ranges.size() == 1 ? "" : "s");
      ImGui::PopTextWrapPos();
      ImGui::TreePop();
    }
    ImGui::PopID();
  }
}

}  // namespace gpuscope::viewer
