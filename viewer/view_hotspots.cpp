// View — hotspots: where GPU time goes, per kernel and per category. A click
// highlights the kernel's instances on the timeline and steps through them.
//
// [SECTION] Highlighting
// [SECTION] Per-kernel table (draw_hotspots lays out both tables)
// [SECTION] Per-category table
#include <imgui.h>

#include <algorithm>
#include <numeric>

#include "trace/time_columns.h"
#include "viewer/clipped_rows.h"
#include "viewer/colors.h"
#include "viewer/elide.h"
#include "viewer/time_format.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {
// The per-kernel table's columns (ImGui's column user ids: sorting survives moving them).
enum class HotspotColumn : ImGuiID { kernel, durations, category, total, share, count, mean, median, max };
}  // namespace

// [SECTION] Highlighting ---------------------------------------------------------------------

void View::highlight_kernel(std::string_view name) {
  if (!doc_) return;
  if (highlighted_kernel_ == name && !matches_.empty()) {  // a second click steps to the next instance
    step_match(true);
    return;
  }
  highlighted_kernel_ = std::string(name);
  std::vector<std::uint8_t> ids(doc_->trace().strings().size(), 0);
  const StringId id = doc_->trace().strings().find(name);
  if (id != StringTable::kNoString) ids[id] = 1;
  matches_ = MatchSet::by_names(doc_->trace(), ids, /*kernels_only=*/true);
  matches_label_ = "kernel: " + std::string(name);
  match_cursor_.reset();
  step_match(true);
}

void View::highlight_category(KernelCategory c) {
  if (!doc_) return;
  highlighted_kernel_.clear();
  matches_ = MatchSet::by_category(doc_->trace(), c);
  matches_label_ = "category: " + std::string(to_string(c));
  match_cursor_.reset();
  step_match(true);
}

// [SECTION] Per-kernel table -----------------------------------------------------------------

void View::draw_hotspots() {
  const std::shared_ptr<const Profile> profile = panel_profile("hotspots");
  if (!profile) return;
  side_by_side(*profile, "per_kernel", &View::draw_kernel_table, "per_category", &View::draw_category_table, 360.0f,
               0.32f);
}

void View::side_by_side(const Profile& profile, const char* main_id, ProfilePart main, const char* side_id,
                        ProfilePart side, float max_side, float side_share) {
  const float width = ImGui::GetContentRegionAvail().x;
  const float side_w = std::min(max_side, width * side_share);
  ImGui::BeginChild(main_id, ImVec2(width - side_w - 8, 0));
  (this->*main)(profile);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild(side_id, ImVec2(0, 0));
  (this->*side)(profile);
  ImGui::EndChild();
}

void View::sort_hotspots(const Profile& profile, ImGuiTableSortSpecs* specs) {
  const auto& hs = profile.hotspots;
  if (hotspot_order_for_ == &profile && hotspot_order_.size() == hs.size() && !(specs && specs->SpecsDirty)) return;
  if (hotspot_order_for_ != &profile || hotspot_names_.size() != hs.size()) {
    // Short names numbered over the Profile's order (by total time), as the
    // report numbers them: a row keeps its name whatever the sort.
    std::vector<std::string_view> names;
    names.reserve(hs.size());
    for (const Hotspot& h : hs) names.push_back(h.name);
    hotspot_names_ = format::short_kernel_names(names, format::kTableNameWidth);
  }
  hotspot_order_.resize(hs.size());
  std::iota(hotspot_order_.begin(), hotspot_order_.end(), 0u);
  if (specs && specs->SpecsCount > 0) {
    const ImGuiTableColumnSortSpecs& sp = specs->Specs[0];
    auto key = [&](const Hotspot& h) -> double {
      switch (static_cast<HotspotColumn>(sp.ColumnUserID)) {
        case HotspotColumn::share: return h.share;
        case HotspotColumn::count: return static_cast<double>(h.stats.count);
        case HotspotColumn::mean: return static_cast<double>(h.stats.mean);
        case HotspotColumn::median: return static_cast<double>(h.stats.median);
        case HotspotColumn::max: return static_cast<double>(h.stats.max);
        default: return static_cast<double>(h.stats.total);
      }
    };
    const bool asc = sp.SortDirection == ImGuiSortDirection_Ascending;
    std::stable_sort(hotspot_order_.begin(), hotspot_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return asc ? key(hs[a]) < key(hs[b]) : key(hs[a]) > key(hs[b]);
    });
    specs->SpecsDirty = false;
  }
  hotspot_order_for_ = &profile;
}

void View::draw_kernel_table(const Profile& profile) {
  ImGui::Text("Per kernel (%s)  —  click: highlight on the timeline, click again: next instance",
              format::count(profile.hotspots.size()).c_str());
  // Columns can be hidden (right-click a header), moved and resized; a
  // narrow window scrolls them sideways, the kernel's name staying put.
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable |
                                ImGuiTableFlags_Reorderable | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("hotspots", 9, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  auto column = [](const char* name, ImGuiTableColumnFlags f, HotspotColumn id, float width = 0) {
    ImGui::TableSetupColumn(name, f, width, static_cast<ImGuiID>(id));
  };
  const ImGuiTableColumnFlags desc = ImGuiTableColumnFlags_PreferSortDescending;
  column("kernel", ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_NoSort | ImGuiTableColumnFlags_NoHide,
         HotspotColumn::kernel, 340);  // names longer than that end in "…" (hover: the full name)
  column("durations", ImGuiTableColumnFlags_NoSort, HotspotColumn::durations);
  column("category", ImGuiTableColumnFlags_NoSort, HotspotColumn::category);
  column("total", ImGuiTableColumnFlags_DefaultSort | desc, HotspotColumn::total);
  column("share", desc, HotspotColumn::share);
  column("count", desc, HotspotColumn::count);
  column("mean", desc, HotspotColumn::mean);
  column("median", desc, HotspotColumn::median);
  column("max", desc, HotspotColumn::max);
  header_row(9, stats_.hotspot_headers);
  sort_hotspots(profile, ImGui::TableGetSortSpecs());

  const auto& hs = profile.hotspots;
  for_visible_rows(hotspot_order_.size(), [&](int i) {
    const std::uint32_t index = hotspot_order_[static_cast<std::size_t>(i)];
    const Hotspot& h = hs[index];
    const std::string& label = hotspot_names_[index];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(i);
    const float name_w = std::max(80.0f, ImGui::GetContentRegionAvail().x);
    const std::string shown = elide(label, name_w);
    // The row is one click target, but for its "histogram" button (drawn over it).
    if (ImGui::Selectable(shown.c_str(), highlighted_kernel_ == h.name,
                          ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
      highlight_kernel(h.name);
    ImGui::SetItemAllowOverlap();
    stats_.hotspot_targets.push_back(target(h.name));
    stats_.hotspot_list.push_back({label, h.name, std::string(to_string(h.category)), format::duration(h.stats.total),
                                   format::percent1(h.share), format::count(h.stats.count)});
    if (ImGui::IsItemHovered() && shown != h.name) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(600);
      ImGui::TextUnformatted(h.name.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    if (ImGui::TableNextColumn()) {
      if (ImGui::SmallButton("histogram")) {
        const StringId id = doc_->trace().strings().find(h.name);
        if (id != StringTable::kNoString) show_histogram(TableId::kernels, id);
      }
      if (ImGui::IsItemVisible()) stats_.hotspot_histogram_targets.push_back(target(h.name));
    }
    ImGui::PopID();
    ImGui::TableNextColumn();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(category_color(h.category)), "%s",
                       std::string(to_string(h.category)).c_str());
    text_cell(format::duration(h.stats.total));
    ImGui::TableNextColumn();
    percent_bar(h.share, category_color(h.category), 60, IM_COL32(60, 60, 70, 255));
    text_cell(format::count(h.stats.count));
    text_cell(format::duration(h.stats.mean));
    text_cell(format::duration(h.stats.median));
    text_cell(format::duration(h.stats.max));
  });
  stats_.hotspot_rows = hs.size();
  ImGui::EndTable();
}

// [SECTION] Per-category table ---------------------------------------------------------------

void View::draw_category_table(const Profile& profile) {
  ImGui::TextUnformatted("Per category");
  if (!ImGui::BeginTable("categories", 4,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("category", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("total");
  ImGui::TableSetupColumn("share");
  ImGui::TableSetupColumn("count");
  ImGui::TableHeadersRow();
  for (const CategoryTime& c : profile.categories) {
    const std::string name(to_string(c.category));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(c.category));
    color_swatch(category_color(c.category));
    if (ImGui::Selectable(name.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) highlight_category(c.category);
    stats_.category_targets.push_back(target(name));
    ImGui::PopID();
    text_cell(format::duration(c.time_ns));
    text_cell(format::percent1(c.share));
    text_cell(format::count(c.count));
  }
  stats_.category_rows = profile.categories.size();
  ImGui::EndTable();
}

}  // namespace gpuscope::viewer
