// View — compare two traces: step time and per-category time side by side
// (A = the open trace, B = the one opened with File > Compare with...).
//
// Totals depend on how long each capture ran, so when both traces have steps
// the table also shows time per step, the number that answers "did my change
// make a step faster, and where".
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "analysis/format.h"
#include "viewer/colors.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"

namespace gpuscope::viewer {

namespace {
ImVec4 delta_color(double d) {
  // Less time is better.
  return d < 0 ? ImVec4(0.5f, 0.9f, 0.5f, 1) : d > 0 ? ImVec4(1, 0.55f, 0.45f, 1) : ImVec4(0.8f, 0.8f, 0.8f, 1);
}
}  // namespace

void View::draw_compare() {
  stats_.panels.push_back("compare");
  if (!doc_) return;
  if (compare_loader_.state() == Loader::State::loading) {
    draw_loading(compare_loader_, "Loading for comparison");
    return;
  }
  if (!compare_doc_) {
    if (!compare_error_.empty())
      ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "Could not open: %s", compare_error_.c_str());
    ImGui::TextDisabled("Compare this trace (A) with another one (B): category times and step time side by side.");
    if (ImGui::Button("Open a trace to compare...")) {
      browser_for_compare_ = true;
      browser_.open("Open a trace to compare", std::filesystem::path(doc_->path()).parent_path().string());
    }
    return;
  }
  const auto pa = doc_->profile(), pb = compare_doc_->profile();
  ImGui::Text("A: %s (%s)", std::filesystem::path(doc_->path()).filename().c_str(),
              std::string(doc_->source_label()).c_str());
  ImGui::SameLine(0, 30);
  ImGui::Text("B: %s (%s)", std::filesystem::path(compare_doc_->path()).filename().c_str(),
              std::string(compare_doc_->source_label()).c_str());
  ImGui::SameLine(0, 30);
  if (ImGui::SmallButton("close B")) {
    compare_loader_.cancel();
    compare_doc_.reset();
    return;
  }
  if (!pa || !pb) {
    ImGui::TextDisabled("analysing...");
    return;
  }
  draw_compare_totals(*pa, *pb);
  draw_compare_categories(*pa, *pb);
}

void View::draw_compare_totals(const Profile& a, const Profile& b) {
  // Step time.
  const bool steps = !a.steps.steps.empty() && !b.steps.steps.empty();
  if (steps) {
    const TimeNs sa = a.steps.step_time.mean, sb = b.steps.step_time.mean;
    ImGui::Text("Step time (mean): A %s · B %s · ", format::duration(sa).c_str(), format::duration(sb).c_str());
    ImGui::SameLine(0, 0);
    ImGui::TextColored(
        delta_color(static_cast<double>(sb - sa)), "%s (%s)", format::signed_duration(sb - sa).c_str(),
        format::signed_percent1(sa > 0 ? static_cast<double>(sb - sa) / static_cast<double>(sa) : 0.0).c_str());
  } else {
    ImGui::TextDisabled("Step time: %s", a.steps.steps.empty() && b.steps.steps.empty() ? "neither trace has steps"
                                         : a.steps.steps.empty()                        ? "A has no steps"
                                                                                        : "B has no steps");
  }
  auto mean_util = [](const Profile& p) {
    double u = 0;
    for (const DeviceSummary& d : p.devices) u += d.utilization;
    return p.devices.empty() ? 0.0 : u / static_cast<double>(p.devices.size());
  };
  ImGui::Text("GPU utilization (mean over devices): A %s · B %s", format::percent1(mean_util(a)).c_str(),
              format::percent1(mean_util(b)).c_str());
}

void View::draw_compare_categories(const Profile& a, const Profile& b) {
  // Categories side by side.
  const bool steps = !a.steps.steps.empty() && !b.steps.steps.empty();
  std::array<const CategoryTime*, kKernelCategoryCount> ca{}, cb{};
  for (const CategoryTime& c : a.categories) ca[static_cast<std::size_t>(c.category)] = &c;
  for (const CategoryTime& c : b.categories) cb[static_cast<std::size_t>(c.category)] = &c;
  std::vector<int> order;
  for (int c = 0; c < kKernelCategoryCount; ++c)
    if (ca[static_cast<std::size_t>(c)] || cb[static_cast<std::size_t>(c)]) order.push_back(c);
  auto time_of = [](const CategoryTime* c) { return c ? c->time_ns : TimeNs{0}; };
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    const auto ux = static_cast<std::size_t>(x), uy = static_cast<std::size_t>(y);
    return std::max(time_of(ca[ux]), time_of(cb[ux])) > std::max(time_of(ca[uy]), time_of(cb[uy]));
  });
  const int cols = steps ? 8 : 6;
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY;
  if (ImGui::BeginTable("compare", cols, flags)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("category");
    ImGui::TableSetupColumn("A time");
    ImGui::TableSetupColumn("A share");
    ImGui::TableSetupColumn("B time");
    ImGui::TableSetupColumn("B share");
    ImGui::TableSetupColumn("share Δ");
    if (steps) {
      ImGui::TableSetupColumn("per step A → B");
      ImGui::TableSetupColumn("per step Δ");
    }
    ImGui::TableHeadersRow();
    const auto steps_a = static_cast<TimeNs>(std::max<std::size_t>(1, a.steps.steps.size()));
    const auto steps_b = static_cast<TimeNs>(std::max<std::size_t>(1, b.steps.steps.size()));
    for (int c : order) {
      const CategoryTime* x = ca[static_cast<std::size_t>(c)];
      const CategoryTime* y = cb[static_cast<std::size_t>(c)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(category_color(static_cast<KernelCategory>(c))), "%s",
                         std::string(to_string(static_cast<KernelCategory>(c))).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format::duration(time_of(x)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format::percent1(x ? x->share : 0.0).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format::duration(time_of(y)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format::percent1(y ? y->share : 0.0).c_str());
      ImGui::TableNextColumn();
      const double dshare = (y ? y->share : 0.0) - (x ? x->share : 0.0);
      ImGui::TextColored(delta_color(dshare), "%s", format::points(dshare).c_str());
      if (steps) {
        const TimeNs psa = time_of(x) / steps_a, psb = time_of(y) / steps_b;
        ImGui::TableNextColumn();
        ImGui::Text("%s → %s", format::duration(psa).c_str(), format::duration(psb).c_str());
        ImGui::TableNextColumn();
        ImGui::TextColored(delta_color(static_cast<double>(psb - psa)), "%s",
                           format::signed_duration(psb - psa).c_str());
      }
    }
    stats_.compare_rows = order.size();
    ImGui::EndTable();
  }
}

}  // namespace gpuscope::viewer
