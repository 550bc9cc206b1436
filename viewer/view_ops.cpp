// View — framework ops: GPU and CPU time per op (PyTorch cpu_op, user
// annotation, NVTX range), per name or per name × shapes, with the roofline
// figures where the shapes give a cost. A click highlights the op's kernels
// on the timeline and steps through them; the side panel lists its heaviest
// kernels, each a click away like a hotspot row.
//
// [SECTION] Highlighting
// [SECTION] The table (draw_ops lays out the table and the side panel)
// [SECTION] The selected op
#include <imgui.h>

#include <algorithm>
#include <cstring>

#include "viewer/clipped_rows.h"
#include "viewer/colors.h"
#include "viewer/elide.h"
#include "viewer/op_table.h"
#include "viewer/text.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {

constexpr std::size_t kSelectedOpKernels = 12;
constexpr std::size_t kShapesWidth = 36;  // characters of the shapes column; the rest on hover

// The columns of each mode, in table order.
constexpr OpColumn kByName[] = {
    OpColumn::name,      OpColumn::calls,    OpColumn::gpu_total,        OpColumn::gpu_self,
    OpColumn::cpu_total, OpColumn::cpu_self, OpColumn::kernels_per_call, OpColumn::launch_per_call,
    OpColumn::tflops,    OpColumn::tbps,     OpColumn::roofline,         OpColumn::bound};
constexpr OpColumn kByShapes[] = {OpColumn::name,
                                  OpColumn::shapes,
                                  OpColumn::calls,
                                  OpColumn::gpu_total,
                                  OpColumn::gpu_self,
                                  OpColumn::cpu_total,
                                  OpColumn::cpu_self,
                                  OpColumn::kernels_per_call,
                                  OpColumn::launch_per_call,
                                  OpColumn::tflops,
                                  OpColumn::tbps,
                                  OpColumn::roofline,
                                  OpColumn::bound};

}  // namespace

// [SECTION] Highlighting ---------------------------------------------------------------------

void View::highlight_op(const Profile& profile, std::uint32_t index, bool move_view) {
  if (!doc_) return;
  const std::vector<OpRow>& rows = op_by_shapes_ ? profile.ops : profile.op_names;
  if (index >= rows.size()) return;
  if (op_selected(profile, index) && matches_label_.starts_with("op: ") && !matches_.empty()) {
    step_match(true);  // a second click steps to the next kernel
    return;
  }
  const OpRow& row = rows[index];
  selected_op_for_ = &profile;
  selected_op_ = index;
  selected_op_by_shapes_ = op_by_shapes_;
  highlighted_kernel_.clear();
  matches_ = op_kernels(doc_->trace(), row, op_by_shapes_);
  matches_label_ = cat("op: ", row.name);
  selected_op_kernel_count_ = matches_.size();
  selected_op_kernels_ = op_top_kernels(doc_->trace(), matches_, kSelectedOpKernels);
  // Their names as the hotspot table writes them (numbered where short names collide, over all kernels).
  std::vector<std::string_view> all;
  all.reserve(profile.hotspots.size());
  for (const Hotspot& h : profile.hotspots) all.push_back(h.name);
  const std::vector<std::string> shown = format::short_kernel_names(all, format::kTableNameWidth);
  selected_op_kernel_labels_.clear();
  for (const OpRowKernel& k : selected_op_kernels_) {
    const std::string_view name = doc_->trace().str(k.name);
    const auto it = std::find(all.begin(), all.end(), name);
    selected_op_kernel_labels_.push_back(it != all.end() ? shown[static_cast<std::size_t>(it - all.begin())]
                                                         : format::short_kernel_name(name, format::kTableNameWidth));
  }
  match_cursor_.reset();
  if (move_view) {
    step_match(true);
    return;
  }
  // Programmatic (--select-op): the first kernel in view is selected, else the first of all; the view stays.
  const Trace& trace = doc_->trace();
  std::optional<MatchRef> m = matches_.first_from(trace, view_start());
  if (!m || trace.kernels().start[m->row] > view_end()) m = matches_.next(trace, std::nullopt);
  if (!m) return;
  match_cursor_ = m;
  select(Selection{m->table, m->row});
}

bool View::op_selected(const Profile& profile, std::uint32_t index) const {
  return selected_op_for_ == &profile && selected_op_ == index && selected_op_by_shapes_ == op_by_shapes_;
}

bool View::select_op(std::string_view name) {
  const std::shared_ptr<const Profile> profile = doc_ ? doc_->profile() : nullptr;
  if (!profile) return false;
  const std::vector<OpRow>& rows = op_by_shapes_ ? profile->ops : profile->op_names;
  for (std::uint32_t i = 0; i < rows.size(); ++i)
    if (rows[i].name == name) {
      highlight_op(*profile, i, /*move_view=*/false);
      return true;
    }
  return false;
}

// [SECTION] The table ------------------------------------------------------------------------

void View::draw_ops() {
  const std::shared_ptr<const Profile> profile = panel_profile("ops");
  if (!profile) return;
  if (profile->op_names.empty()) {
    const std::string message = no_ops_message(doc_->trace(), profile->op_summary);
    stats_.ops_message = message;
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(message.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  side_by_side(*profile, "op_table", &View::draw_op_table, "op_selected", &View::draw_selected_op, 380.0f, 0.25f);
}

void View::sort_ops(const Profile& profile, ImGuiTableSortSpecs* specs) {
  if (specs && specs->SpecsDirty) {
    if (specs->SpecsCount > 0) {
      op_sort_column_ = static_cast<OpColumn>(specs->Specs[0].ColumnUserID);
      op_sort_ascending_ = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
    } else {
      op_sort_column_ = OpColumn::gpu_total;
      op_sort_ascending_ = false;
    }
    specs->SpecsDirty = false;
    op_order_for_ = nullptr;
  }
  const std::string filter = op_filter_;
  if (op_order_for_ == &profile && op_order_filter_ == filter && op_order_by_shapes_ == op_by_shapes_) return;
  const std::vector<OpRow>& rows = op_by_shapes_ ? profile.ops : profile.op_names;
  op_order_ = op_table_order(rows, filter, op_sort_column_, op_sort_ascending_);
  stats_.op_order_rebuilt = true;
  op_order_for_ = &profile;
  op_order_filter_ = filter;
  op_order_by_shapes_ = op_by_shapes_;
}

void View::draw_op_table(const Profile& profile) {
  const OpSummary& s = profile.op_summary;
  const std::vector<OpRow>& rows = op_by_shapes_ ? profile.ops : profile.op_names;
  ImGui::Text("Framework ops (%s %s; %s of %s GPU ops have a launching op)  —  click: highlight its kernels",
              format::count(rows.size()).c_str(), op_by_shapes_ ? "name × shapes rows" : "names",
              format::count(s.attributed).c_str(), format::count(s.gpu_ops).c_str());
  ImGui::Checkbox("per shapes", &op_by_shapes_);
  stats_.op_mode_target = target("per shapes");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(260);
  ImGui::InputTextWithHint("##opfilter", "filter ops by name or shapes", op_filter_, sizeof(op_filter_));
  if (!s.shapes_recorded) {
    ImGui::SameLine();
    ImGui::TextDisabled("no input shapes recorded: FLOPs and roofline need record_shapes=True");
  }

  const std::span<const OpColumn> cols =
      op_by_shapes_ ? std::span<const OpColumn>(kByShapes) : std::span<const OpColumn>(kByName);
  // Columns can be hidden (right-click a header), moved and resized; they
  // scroll sideways past the window's edge, the op's name staying put.
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable |
                                ImGuiTableFlags_Reorderable | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  const int ncols = static_cast<int>(cols.size());
  if (!ImGui::BeginTable(op_by_shapes_ ? "ops_by_shapes" : "ops_by_name", ncols, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (OpColumn c : cols) {
    ImGuiTableColumnFlags cf = ImGuiTableColumnFlags_PreferSortDescending;
    if (c == OpColumn::gpu_total) cf |= ImGuiTableColumnFlags_DefaultSort;
    if (op_column_is_text(c)) cf = ImGuiTableColumnFlags_PreferSortAscending;
    if (c == OpColumn::name) cf |= ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_NoHide;
    ImGui::TableSetupColumn(op_column_label(c), cf, c == OpColumn::name ? 260.0f : 0.0f, static_cast<ImGuiID>(c));
  }
  header_row(ncols, stats_.op_headers);
  sort_ops(profile, ImGui::TableGetSortSpecs());

  for_visible_rows(op_order_.size(), [&](int i) {
    const std::uint32_t index = op_order_[static_cast<std::size_t>(i)];
    const OpRow& r = rows[index];
    ImGui::TableNextRow();
    ImGui::PushID(i);
    std::vector<std::string> cells;
    cells.reserve(cols.size());
    for (std::size_t c = 0; c < cols.size(); ++c) {
      ImGui::TableSetColumnIndex(static_cast<int>(c));
      std::string cell = op_cell(r, cols[c]);
      if (cols[c] == OpColumn::name) {
        const std::string shown = elide(cell, std::max(40.0f, ImGui::GetContentRegionAvail().x));
        if (ImGui::Selectable(shown.c_str(), op_selected(profile, index), ImGuiSelectableFlags_SpanAllColumns))
          highlight_op(profile, index);
        stats_.op_targets.push_back(target(op_by_shapes_ ? cat(r.name, " ", r.shapes) : r.name));
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("%s%s%s", r.name.c_str(), r.path.empty() ? "" : "\nin ", r.path.c_str());
      } else if (cols[c] == OpColumn::shapes && cell.size() > kShapesWidth) {
        ImGui::TextUnformatted(cat(cell.substr(0, kShapesWidth - 1), "…").c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cell.c_str());
      } else if (cell == kUnknownCell) {
        ImGui::TextDisabled("%s", cell.c_str());
      } else {
        ImGui::TextUnformatted(cell.c_str());
      }
      cells.push_back(std::move(cell));
    }
    ImGui::PopID();
    stats_.op_list.push_back(std::move(cells));
  });
  stats_.op_rows = op_order_.size();
  stats_.op_columns.clear();
  for (OpColumn c : cols) stats_.op_columns.emplace_back(op_column_label(c));
  ImGui::EndTable();
}

// [SECTION] The selected op ------------------------------------------------------------------

void View::draw_selected_op(const Profile& profile) {
  const std::vector<OpRow>& rows = op_by_shapes_ ? profile.ops : profile.op_names;
  if (selected_op_for_ != &profile || selected_op_by_shapes_ != op_by_shapes_ || selected_op_ >= rows.size()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("Click an op: its kernels are outlined on the timeline, the heaviest listed here.");
    ImGui::PopStyleColor();
    return;
  }
  const OpRow* sel = &rows[selected_op_];
  stats_.selected_op = sel->name;
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(sel->name.c_str());
  if (!sel->path.empty()) ImGui::TextDisabled("in %s", sel->path.c_str());
  if (op_by_shapes_ && !sel->shapes.empty()) ImGui::TextDisabled("shapes %s", sel->shapes.c_str());
  if (op_by_shapes_ && !sel->dtypes.empty()) ImGui::TextDisabled("types %s", sel->dtypes.c_str());
  if (!sel->family.empty())
    ImGui::TextDisabled("%s%s%s", sel->family.c_str(), sel->math.empty() ? "" : cat(", ", sel->math).c_str(),
                        sel->dims.empty() ? "" : cat(", ", sel->dims).c_str());
  ImGui::PopTextWrapPos();
  const Trace& trace = doc_->trace();
  if (const StringId id = trace.strings().find(sel->name); id != StringTable::kNoString) {
    if (ImGui::SmallButton("Histogram of its calls' durations")) show_histogram(TableId::ranges, id);
  }
  ImGui::Text("%s kernels", format::count(selected_op_kernel_count_).c_str());
  if (matches_label_.starts_with("op: ") && !matches_.empty() && match_cursor_)
    ImGui::TextDisabled("kernel %s of %s: click the op again for the next",
                        format::count(matches_.ordinal(trace, *match_cursor_) + 1).c_str(),
                        format::count(matches_.size()).c_str());
  if (!ImGui::BeginTable("op_kernels", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn("kernel", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("time");
  ImGui::TableSetupColumn("count");
  ImGui::TableHeadersRow();
  for (std::size_t i = 0; i < selected_op_kernels_.size(); ++i) {
    const OpRowKernel& k = selected_op_kernels_[i];
    const std::string name(trace.str(k.name));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    color_swatch(category_color(k.category));
    if (ImGui::Selectable(selected_op_kernel_labels_[i].c_str(), highlighted_kernel_ == name,
                          ImGuiSelectableFlags_SpanAllColumns))
      highlight_kernel(name);  // as a hotspot row: its instances, the first one selected
    stats_.op_kernel_targets.push_back(target(name));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: %s", std::string(to_string(k.category)).c_str(), name.c_str());
    ImGui::PopID();
    text_cell(format::duration(k.time_ns));
    text_cell(format::count(k.count));
  }
  ImGui::EndTable();
}

}  // namespace gpuscope::viewer
