// View — findings: the report's findings in the report's order with the
// report's savings (simulated on the dependency graph where the report
// simulates; rules of thumb, marked, until the simulation is done), the
// "What would help?" answers, the idle time by cause with where the host
// was meanwhile, and the critical path by kind and category.
// A click on a finding shows its evidence one time range at a time: the
// range as a band, zoomed to, its kernels highlighted; next / previous (or
// ] and [) step through the ranges.
//
// [SECTION] Evidence stepping
// [SECTION] The Findings tab
// [SECTION] What would help?, the idle time and the critical path
#include <imgui.h>

#include <algorithm>

#include "export/report_text.h"
#include "viewer/colors.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {

ImVec4 severity_color(Severity s) {
  switch (s) {
    case Severity::critical: return ImVec4(0.95f, 0.3f, 0.3f, 1);
    case Severity::warning: return ImVec4(0.95f, 0.65f, 0.2f, 1);
    case Severity::info: break;
  }
  return ImVec4(0.5f, 0.7f, 0.95f, 1);
}

const ImVec4 kRuleOfThumb(0.95f, 0.75f, 0.3f, 1);

}  // namespace

// [SECTION] Evidence stepping ----------------------------------------------------------------

bool View::select_finding(std::string_view id) {
  const std::shared_ptr<const Profile> p = doc_ ? doc_->profile() : nullptr;
  if (!p) return false;
  for (const Finding& f : p->findings)
    if (f.id == id) {
      evidence_ = f.ranges;
      evidence_label_ = f.id;
      evidence_index_ = 0;
      if (!evidence_.empty()) show_evidence(0);
      if (!f.kernels.empty()) {
        std::vector<std::uint8_t> ids(doc_->trace().strings().size(), 0);
        for (const std::string& k : f.kernels) {
          const StringId sid = doc_->trace().strings().find(k);
          if (sid != StringTable::kNoString) ids[sid] = 1;
        }
        matches_ = MatchSet::by_names(doc_->trace(), ids, /*kernels_only=*/true);
        matches_label_ = "finding: " + f.id;
        highlighted_kernel_.clear();
        match_cursor_.reset();
      }
      return true;
    }
  return false;
}

// Zooms to range i of the finding: the range in the middle half of the view.
void View::show_evidence(std::size_t i) {
  if (i >= evidence_.size()) return;
  evidence_index_ = i;
  const TimeRange r = evidence_[i];
  const TimeNs pad = std::max<TimeNs>(r.duration() / 2, 2'000);
  zoom_to(r.start - pad, r.end + pad);
}

void View::step_evidence(bool forward) {
  if (evidence_.empty()) return;
  const std::size_t n = evidence_.size();
  show_evidence(forward ? (evidence_index_ + 1) % n : (evidence_index_ + n - 1) % n);
}

// [SECTION] The Findings tab -----------------------------------------------------------------

void View::draw_findings() {
  const std::shared_ptr<const Profile> profile = panel_profile("findings");
  if (!profile) return;
  stats_.finding_rows = profile->findings.size();
  draw_savings_status(*profile);
  if (profile->findings.empty()) {
    ImGui::TextDisabled(profile->minor_findings.empty()
                            ? "No findings: no rule crossed its threshold on this trace."
                            : "No findings of 1%% of the run or more (minor observations below).");
  }
  for (std::size_t i = 0; i < profile->findings.size(); ++i) draw_finding(*profile, i);
  if (!profile->minor_findings.empty() &&
      ImGui::TreeNode("Minor observations (under 1% of the run, or their replayed fix under 1% of the step)")) {
    for (const Finding& f : profile->minor_findings) ImGui::BulletText("%s (%s)", f.title.c_str(), f.id.c_str());
    ImGui::TreePop();
  }
  ImGui::Spacing();
  draw_helps(*profile);
  draw_idle_charges(*profile);
  draw_path_breakdown(*profile);
}

// The saving as the report states it: simulated, or the rule of thumb (and
// why), marked while the simulation runs.
std::string View::saving_text(const Profile& p, const Finding& f) const {
  const Document::Savings s = doc_->savings();
  if (f.saving_source == SavingSource::simulated)
    return f.saving_note.empty() ? cat("saves ", format::duration(f.saving_ns), " (simulated)")
                                 : cat("simulated: ", f.saving_note);
  if (f.saving_ns == 0) return "no time saving estimated";
  std::string why =
      s == Document::Savings::simulating ? "rule of thumb; simulating..."
      : !f.saving_note.empty()           ? cat("rule of thumb; ", f.saving_note)
      : p.simulation.status.empty() || p.simulation.status == "simulated"
          ? (f.fix.empty() ? "rule of thumb: the dependency graph cannot express this fix" : "rule of thumb")
          : cat("rule of thumb: ", p.simulation.status);
  return cat("saves ~", format::duration(f.saving_ns), " (", why, ")");
}

void View::draw_savings_status(const Profile& p) {
  const Document::Savings s = doc_->savings();
  std::string status;
  if (s == Document::Savings::simulating)
    status = "savings: rules of thumb (marked) until the dependency graph's replay has simulated each fix...";
  else if (s == Document::Savings::failed)
    status = cat("savings are rules of thumb: the simulation failed: ", doc_->savings_error());
  else if (p.simulation.status == "simulated")
    status = cat("savings simulated on the dependency graph (", p.simulation.scope, ", replay error ",
                 format::percent1(p.simulation.replay_error), "; docs/whatif.md)");
  else if (!p.simulation.status.empty())
    status = cat("savings are rules of thumb: ", p.simulation.status);
  else
    status = "savings are rules of thumb (not simulated)";
  stats_.savings_status = status;
  ImGui::Text("%zu findings, largest saving first, as in gpuscope report.", p.findings.size());
  ImGui::SameLine();
  if (s == Document::Savings::simulated && p.simulation.status == "simulated")
    ImGui::TextDisabled("%s", status.c_str());
  else
    ImGui::TextColored(kRuleOfThumb, "%s", status.c_str());
}

void View::draw_finding(const Profile& p, std::size_t i) {
  const Finding& f = p.findings[i];
  ImGui::PushID(static_cast<int>(i));
  std::string sev(to_string(f.severity));
  std::transform(sev.begin(), sev.end(), sev.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
  ImGui::TextColored(severity_color(f.severity), "%zu. %-8s", i + 1, sev.c_str());
  ImGui::SameLine();
  const bool active = evidence_label_ == f.id;
  if (active) ImGui::SetNextItemOpen(true);
  const bool open =
      ImGui::TreeNodeEx("##finding",
                        ImGuiTreeNodeFlags_SpanAvailWidth | ImGuiTreeNodeFlags_OpenOnArrow |
                            (active ? ImGuiTreeNodeFlags_Selected : 0) | (i < 3 ? ImGuiTreeNodeFlags_DefaultOpen : 0),
                        "%s", f.title.c_str());
  stats_.finding_targets.push_back(target(f.id));
  if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) select_finding(f.id);
  const std::string saving = saving_text(p, f);
  stats_.finding_list.push_back({f.id, f.title, saving, f.saving_ns, std::string(to_string(f.saving_source))});
  if (open) {
    ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x);
    ImGui::TextColored(f.saving_source == SavingSource::simulated ? ImVec4(0.6f, 0.9f, 0.6f, 1) : kRuleOfThumb, "%s",
                       saving.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("· rule %s · %s · metric %.3g (threshold %.3g)", f.id.c_str(),
                        f.device == kNoDevice ? "all GPUs" : cat("GPU ", std::to_string(f.device)).c_str(), f.metric,
                        f.threshold);
    if (!f.evidence.empty()) ImGui::Text("Evidence: %s", f.evidence.c_str());
    if (!f.recommendation.empty()) ImGui::TextColored(ImVec4(0.6f, 0.9f, 0.6f, 1), "Do: %s", f.recommendation.c_str());
    if (!f.kernels.empty()) {
      const std::vector<std::string_view> names(f.kernels.begin(), f.kernels.end());
      const std::vector<std::string> shown = format::short_kernel_names(names);
      std::string ks;
      for (std::size_t k = 0; k < shown.size() && k < 4; ++k) ks += (k ? ", " : "") + shown[k];
      if (f.kernels.size() > 4) ks += ", ...";
      ImGui::TextDisabled("kernels: %s", ks.c_str());
    }
    ImGui::PopTextWrapPos();
    draw_evidence_list(p, f);
    ImGui::TreePop();
  }
  ImGui::PopID();
}

// The finding's time ranges, heaviest first, as the report lists them: one
// selected at a time (the timeline shows it), previous / next step.
void View::draw_evidence_list(const Profile& p, const Finding& f) {
  if (f.ranges.empty()) return;
  const bool active = evidence_label_ == f.id;
  ImGui::Text("%zu time range%s to look at (heaviest first)", f.ranges.size(), f.ranges.size() == 1 ? "" : "s");
  if (active) {
    ImGui::SameLine();
    if (ImGui::SmallButton("< previous ([)")) step_evidence(false);
    stats_.evidence_prev = target("previous");
    ImGui::SameLine();
    if (ImGui::SmallButton("next (]) >")) step_evidence(true);
    stats_.evidence_next = target("next");
    ImGui::SameLine();
    stats_.evidence_step = cat("range ", std::to_string(evidence_index_ + 1), " of ", std::to_string(f.ranges.size()));
    ImGui::TextUnformatted(stats_.evidence_step.c_str());
  }
  ImGui::Indent();
  for (std::size_t r = 0; r < f.ranges.size(); ++r) {
    const TimeRange& tr = f.ranges[r];
    const std::string row = cat(std::to_string(r + 1), ". ", format::duration(tr.duration()), " at ",
                                format_offset(tr.start - p.window.start, 1000));
    ImGui::PushID(static_cast<int>(r));
    if (ImGui::Selectable(row.c_str(), active && evidence_index_ == r)) {
      if (!active) select_finding(f.id);
      show_evidence(r);
    }
    ImGui::PopID();
    if (active) stats_.evidence_rows.push_back(row);
  }
  ImGui::Unindent();
}

// [SECTION] What would help?, the idle time and the critical path ------------------------------

std::string_view View::verdict_text(Verdict v) {
  static constexpr std::string_view kTexts[] = {"YES", "no", "unknown", "n/a", "later"};  // by Verdict's value
  const auto i = static_cast<std::size_t>(v);
  return i < std::size(kTexts) ? kTexts[i] : "unknown";
}

// The report's answers to the usual questions, with the findings behind them.
void View::draw_helps(const Profile& p) {
  if (p.helps.empty()) return;
  if (!ImGui::CollapsingHeader("What would help? The usual changes, answered from this trace",
                               ImGuiTreeNodeFlags_DefaultOpen))
    return;
  if (!ImGui::BeginTable("helps", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable))
    return;
  ImGui::TableSetupColumn("question");
  ImGui::TableSetupColumn("answer");
  ImGui::TableSetupColumn("because", ImGuiTableColumnFlags_WidthStretch);
  for (const HelpAnswer& a : p.helps) {
    std::string because = a.reason;
    std::string refs;
    for (std::size_t i = 0; i < p.findings.size(); ++i)
      if (std::find(a.findings.begin(), a.findings.end(), p.findings[i].id) != a.findings.end())
        refs += cat(refs.empty() ? "" : ", ", std::to_string(i + 1));
    if (!refs.empty()) because += cat(" (finding", a.findings.size() > 1 ? "s " : " ", refs, ")");
    if (a.predicted_step_ns > 0)
      because += cat("; ", a.fix, " predicts a median step of ", format::duration(a.predicted_step_ns), " (now ",
                     format::duration(p.simulation.replayed_step_ns), ")");
    ImGui::TableNextRow();
    text_cell(a.question);
    ImGui::TableNextColumn();
    const std::string_view v = verdict_text(a.verdict);
    const ImVec4 colour = a.verdict == Verdict::yes     ? ImVec4(0.6f, 0.9f, 0.6f, 1)
                          : a.verdict == Verdict::later ? ImVec4(0.9f, 0.85f, 0.5f, 1)
                                                        : ImVec4(0.75f, 0.75f, 0.75f, 1);
    ImGui::TextColored(colour, "%s", std::string(v).c_str());
    ImGui::TableNextColumn();
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(because.c_str());
    ImGui::PopTextWrapPos();
    stats_.help_rows.push_back({a.id, a.question, std::string(v), because});
  }
  ImGui::EndTable();
}

// The GPUs' idle time by cause (Profile::idle_charges), and under each the
// report's line of where the host was meanwhile (Profile::host_while_idle).
void View::draw_idle_charges(const Profile& p) {
  if (p.idle_charges.empty() || p.devices.empty()) return;
  const double gpus = static_cast<double>(p.devices.size());
  TimeNs all = 0;
  for (const IdleCharge& c : p.idle_charges)
    if (c.cause != "input-before-start") all += c.ns;
  const std::string head =
      cat("Where the idle time went (", format::duration(static_cast<TimeNs>(static_cast<double>(all) / gpus)),
          p.devices.size() > 1 ? " per GPU)" : ")");
  if (!ImGui::CollapsingHeader(head.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
  for (const IdleCharge& c : p.idle_charges) {
    const std::string share = c.cause == "input-before-start"
                                  ? std::string("-")
                                  : format::percent1(all ? static_cast<double>(c.ns) / static_cast<double>(all) : 0.0);
    const std::string row = cat(idle_cause_words(c.cause), "  ",
                                format::duration(static_cast<TimeNs>(static_cast<double>(c.ns) / gpus)), "  ", share);
    ImGui::BulletText("%s", row.c_str());
    stats_.idle_rows.push_back(row);
    if (!c.finding.empty()) {
      ImGui::SameLine();
      ImGui::TextDisabled("charged to %s", c.finding.c_str());
    }
    if (!c.note.empty()) {
      ImGui::Indent();
      ImGui::TextDisabled("%s", c.note.c_str());
      ImGui::Unindent();
    }
    for (const HostWhere& w : p.host_while_idle) {
      if (w.cause != c.cause) continue;
      const std::string line = host_where_line(w);
      ImGui::Indent();
      ImGui::PushTextWrapPos(0);
      ImGui::TextDisabled("%s", line.c_str());
      ImGui::PopTextWrapPos();
      ImGui::Unindent();
      stats_.host_idle_lines.push_back(line);
    }
  }
}

// What decided the steps' length (Profile::critical_path): by kind and by category.
void View::draw_path_breakdown(const Profile& p) {
  const CriticalPath& c = p.critical_path;
  if (c.length_ns <= 0) return;
  const std::string head =
      cat("Critical path: ", format::duration(c.length_ns),
          c.steps ? cat(" over ", format::count(c.steps), " steps") : std::string(" (the whole trace)"));
  if (!ImGui::CollapsingHeader(head.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
  const std::pair<const char*, TimeNs> kinds[] = {{"GPU compute", c.gpu_compute_ns},
                                                  {"communication", c.communication_ns},
                                                  {"copies", c.copy_ns},
                                                  {"CPU launch", c.cpu_launch_ns},
                                                  {"CPU other", c.cpu_other_ns},
                                                  {"input wait", c.input_wait_ns},
                                                  {"sync wait", c.sync_wait_ns},
                                                  {"unexplained GPU wait", c.gpu_wait_ns},
                                                  {"gaps before GPU ops", c.gpu_gap_ns}};
  auto bar = [&](const std::string& label, TimeNs ns, ImU32 color) {
    const double share = static_cast<double>(ns) / static_cast<double>(c.length_ns);
    ImGui::TextUnformatted(label.c_str());
    ImGui::SameLine(150);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float w = 200, h = ImGui::GetTextLineHeight() - 4;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(at.x, at.y + 2), ImVec2(at.x + w, at.y + 2 + h), IM_COL32(50, 54, 64, 255));
    dl->AddRectFilled(ImVec2(at.x, at.y + 2), ImVec2(at.x + w * static_cast<float>(share), at.y + 2 + h), color);
    ImGui::Dummy(ImVec2(w, h + 4));
    ImGui::SameLine();
    ImGui::Text("%s  %s", format::percent1(share).c_str(), format::duration(ns).c_str());
    stats_.path_rows.push_back({label, format::duration(ns), format::percent1(share)});
  };
  ImGui::Columns(2, "path", false);
  for (const auto& [label, ns] : kinds)
    if (ns > 0) bar(label, ns, kCriticalPathColor);
  ImGui::NextColumn();
  for (std::size_t i = 0; i < c.categories.size() && i < 7; ++i)
    bar(std::string(to_string(c.categories[i].category)), c.categories[i].ns, category_color(c.categories[i].category));
  ImGui::Columns(1);
}

}  // namespace gpuscope::viewer
