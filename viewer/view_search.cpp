// View — find by name (substring or regex), next/previous, and the
// selection helpers that search shares with the hotspot and findings panels.
//
// [SECTION] Search bar
// [SECTION] Stepping through matches
// [SECTION] Selecting by kernel name
#include <imgui.h>

#include <algorithm>

#include "trace/time_columns.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

// [SECTION] Search bar -----------------------------------------------------------------------

void View::draw_search_bar() {
  const ImGuiIO& io = ImGui::GetIO();
  const float right = ImGui::GetWindowContentRegionMax().x;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 10, right - 560));
  if (focus_search_) {
    ImGui::SetKeyboardFocusHere();
    focus_search_ = false;
  }
  ImGui::SetNextItemWidth(220);
  const bool enter = ImGui::InputTextWithHint("##find", "find by name (Ctrl+F)", search_text_, sizeof search_text_,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::IsItemEdited()) run_search();
  if (enter) {
    step_match(!io.KeyShift);
    ImGui::SetKeyboardFocusHere(-1);  // stay in the box for the next Enter
  }
  ImGui::SameLine();
  if (ImGui::Checkbox("regex", &search_regex_)) run_search();
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) step_match(false);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) step_match(true);
  if (!search_error_.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", search_error_.c_str());
  } else if (!matches_label_.empty()) {
    ImGui::SameLine();
    if (matches_.empty()) {
      ImGui::TextDisabled("no match");
    } else if (match_cursor_) {
      ImGui::Text("%s of %s", format::count(matches_.ordinal(doc_->trace(), *match_cursor_) + 1).c_str(),
                  format::count(matches_.size()).c_str());
    } else {
      ImGui::Text("%s matches", format::count(matches_.size()).c_str());
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", matches_label_.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("clear")) {
      matches_ = {};
      matches_label_.clear();
      match_cursor_.reset();
      search_text_[0] = 0;
    }
  }
}

void View::set_search(std::string_view text, bool regex) {
  const std::size_t n = std::min(text.size(), sizeof search_text_ - 1);
  std::copy_n(text.data(), n, search_text_);
  search_text_[n] = 0;
  search_regex_ = regex;
  run_search();
}

void View::run_search() {
  search_error_.clear();
  match_cursor_.reset();
  if (!doc_) return;
  if (search_text_[0] == 0) {
    matches_ = {};
    matches_label_.clear();
    return;
  }
  try {
    const std::vector<std::uint8_t> names = match_names(doc_->trace().strings(), search_text_, search_regex_);
    matches_ = MatchSet::by_names(doc_->trace(), names);
    matches_label_ = std::string("search: ") + search_text_;
  } catch (const PatternError& e) {
    matches_ = {};
    matches_label_.clear();
    search_error_ = std::string("bad regex: ") + e.what();
  }
  redraw_frames_ = std::max(redraw_frames_, 3);
}

// [SECTION] Stepping through matches ---------------------------------------------------------

void View::step_match(bool forward) {
  if (!doc_ || matches_.empty()) return;
  const Trace& trace = doc_->trace();
  std::optional<MatchRef> from = match_cursor_;
  // Without a cursor, start from the middle of the view: "next" is what comes after what I look at.
  std::optional<MatchRef> m;
  if (!from) {
    m = forward ? matches_.first_from(trace, view_start()) : matches_.prev(trace, std::nullopt);
    if (!m) m = matches_.next(trace, std::nullopt);
  } else {
    m = forward ? matches_.next(trace, from) : matches_.prev(trace, from);
    if (!m) m = forward ? matches_.next(trace, std::nullopt) : matches_.prev(trace, std::nullopt);  // wrap around
  }
  if (!m) return;
  match_cursor_ = m;
  select(Selection{m->table, m->row});
  const auto& tc = detail::time_columns(trace.tables(), m->table);
  center_on((*tc.start)[m->row], (*tc.end)[m->row]);
}

// [SECTION] Selecting by kernel name ---------------------------------------------------------

bool View::select_kernel(std::string_view name) {
  if (!doc_) return false;
  const Trace& trace = doc_->trace();
  const StringTable& strings = trace.strings();
  std::vector<std::uint8_t> ids(strings.size(), 0);
  bool any = false;
  const StringId exact = strings.find(name);
  if (exact != StringTable::kNoString) {
    ids[exact] = 1;
    // A mangled name selects the kernels it belongs to.
    const KernelTable& k = trace.kernels();
    if (!k.mangled.empty())
      for (std::size_t i = 0; i < k.size(); ++i)
        if (k.mangled[i] == exact) ids[k.name[i]] = 1;
    any = true;
  }
  MatchSet set = any ? MatchSet::by_names(trace, ids, /*kernels_only=*/true) : MatchSet{};
  if (set.empty()) {
    set = MatchSet::by_names(trace, match_names(strings, name, false), /*kernels_only=*/true);
    if (set.empty()) return false;
  }
  std::optional<MatchRef> m = set.first_from(trace, view_start());
  if (!m || trace.kernels().start[m->row] > view_end()) m = set.next(trace, std::nullopt);
  if (!m) return false;
  matches_ = std::move(set);
  matches_label_ = "kernel: " + std::string(name);
  match_cursor_ = m;
  select(Selection{TableId::kernels, m->row});
  return true;
}

void View::focus_selection() {
  if (!doc_ || !selection_.valid()) return;
  const Trace& trace = doc_->trace();
  const auto& tc = detail::time_columns(trace.tables(), selection_.table);
  TimeNs s = (*tc.start)[selection_.row], e = (*tc.end)[selection_.row];
  // Include the launching call, so the flow arrow fits on screen.
  if (selection_.table == TableId::kernels || selection_.table == TableId::memcpys ||
      selection_.table == TableId::memsets) {
    const OpTable ot = selection_.table == TableId::kernels   ? OpTable::kernel
                       : selection_.table == TableId::memcpys ? OpTable::memcpy
                                                              : OpTable::memset;
    const RowIndex api = trace.launching_api(OpRef{ot, selection_.row});
    if (api != kNoRow) {
      s = std::min(s, trace.api_calls().start[api]);
      e = std::max(e, trace.api_calls().end[api]);
    }
  }
  const TimeNs pad = std::max<TimeNs>((e - s) / 4, 200);
  zoom_to(s - pad, e + pad);
}

}  // namespace gpuscope::viewer
