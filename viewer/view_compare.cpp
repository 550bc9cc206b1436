// View — compare two traces (A = the open trace, B = the one opened with
// File > Compare with...): B's tracks on A's time axis under A's, aligned by
// their first steps (or their starts); step time and per-category time side
// by side; and the per-kernel, per-op and per-finding differences and the
// changed answers of `gpuscope diff` (analysis/diff.h), sortable.
//
// [SECTION] B's timeline
// [SECTION] The Compare tab
// [SECTION] Differences
//
// Totals depend on how long each capture ran, so when both traces have steps
// the tables show time per step, the number that answers "did my change
// make a step faster, and where".
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "viewer/colors.h"
#include "viewer/elide.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {
ImVec4 delta_color(double d) {
  // Less time is better.
  return d < 0 ? ImVec4(0.5f, 0.9f, 0.5f, 1) : d > 0 ? ImVec4(1, 0.55f, 0.45f, 1) : ImVec4(0.8f, 0.8f, 0.8f, 1);
}
}  // namespace

// [SECTION] B's timeline ---------------------------------------------------------------------

void View::swap_timeline_state(TimelineState& o) {
  std::swap(doc_, o.doc);
  std::swap(short_names_, o.short_names);
  std::swap(group_collapsed_, o.group_collapsed);
  std::swap(track_collapsed_, o.track_collapsed);
  std::swap(track_y_, o.track_y);
  std::swap(counter_lanes_, o.counter_lanes);
  std::swap(counter_lanes_for_, o.counter_lanes_for);
}

// Where B's times go on A's axis: B's first step starts where A's does (the
// steps are what a change is compared on), or, without steps on both sides
// (or when asked), B starts where A starts.
void View::update_compare_alignment() {
  const auto pa = doc_->profile(), pb = compare_doc_->profile();
  auto first_step = [](const Profile& p) {
    TimeNs t = std::numeric_limits<TimeNs>::max();
    for (const Step& s : p.steps.steps) t = std::min(t, s.range.start);
    return t;
  };
  const bool steps = pa && pb && !pa->steps.steps.empty() && !pb->steps.steps.empty();
  if (compare_align_by_step_ && steps) {
    compare_offset_ = first_step(*pa) - first_step(*pb);
    compare_align_text_ = "aligned on the first step";
  } else {
    compare_offset_ = doc_->trace().begin_time() - compare_doc_->trace().begin_time();
    const bool failed = doc_->analysis_failed() || compare_doc_->analysis_failed();
    compare_align_text_ = !compare_align_by_step_ ? "aligned on the start"
                          : pa && pb              ? "aligned on the start (a trace has no steps)"
                          : failed                ? "aligned on the start (no analysis, no steps)"
                                                  : "aligned on the start (steps not known yet)";
  }
  stats_.compare_offset = compare_offset_;
  stats_.compare_align = compare_align_text_;
}

TimeRange View::pan_range() const {
  TimeRange r = content_range();
  if (doc_ && compare_doc_ && show_compare_timeline_) {
    r.start = std::min(r.start, compare_doc_->trace().begin_time() + compare_offset_);
    r.end = std::max(r.end, compare_doc_->trace().end_time() + compare_offset_);
  }
  return r;
}

// B's groups under A's, drawn with B's document and state swapped in and the
// view moved by the alignment; nothing of B is hovered or selected.
float View::draw_compare_groups(ImDrawList* dl, float left, float x0, float width, float y, float top, float bottom,
                                GroupFilter which) {
  stats_.compare_timeline = true;
  const std::string head = cat("B: ", std::filesystem::path(compare_doc_->path()).filename().string(), " · ",
                               which == GroupFilter::gpus ? "GPUs" : "hosts", " · ", compare_align_text_,
                               " (B moved by ", format::signed_duration(compare_offset_), ")");
  if (y + 24 >= top && y <= bottom) {
    dl->AddRectFilled(ImVec2(left, y + 2), ImVec2(x0 + width, y + 22), IM_COL32(70, 50, 85, 255));
    dl->AddText(ImVec2(left + 6, y + 4), IM_COL32(240, 230, 250, 255), elide(head, x0 + width - left - 12).c_str());
  }
  y += 24;
  if (compare_state_.doc != compare_doc_) {  // B newly opened: its own state
    compare_state_ = TimelineState{};
    compare_state_.doc = compare_doc_;
    compare_state_.group_collapsed.assign(compare_doc_->index().groups().size(), 0);
    compare_state_.track_collapsed.assign(compare_doc_->index().tracks().size(), 0);
  }
  compare_state_.track_y.assign(compare_doc_->index().tracks().size(), std::numeric_limits<float>::quiet_NaN());
  swap_timeline_state(compare_state_);
  compare_pass_ = true;
  view_start_ -= compare_offset_;
  y = draw_groups(dl, left, x0, width, y, top, bottom, which);
  view_start_ += compare_offset_;
  compare_pass_ = false;
  swap_timeline_state(compare_state_);
  return y;
}

// [SECTION] The Compare tab ------------------------------------------------------------------

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
    ImGui::TextDisabled(
        "Compare this trace (A) with another one (B): B's tracks under A's on one time axis, step time, and "
        "where time moved per category, kernel, op and finding (as gpuscope diff).");
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
    close_compare();
    return;
  }
  ImGui::Checkbox("B's timeline under A's", &show_compare_timeline_);
  stats_.compare_toggles.push_back(target("timeline"));
  ImGui::SameLine();
  ImGui::Checkbox("align on the first step", &compare_align_by_step_);
  stats_.compare_toggles.push_back(target("align on step"));
  update_compare_alignment();
  ImGui::SameLine(0, 20);
  ImGui::TextDisabled("B %s, moved by %s", compare_align_text_.c_str(),
                      format::signed_duration(compare_offset_).c_str());
  if (!pa || !pb) {
    const bool a_failed = !pa && doc_->analysis_failed(), b_failed = !pb && compare_doc_->analysis_failed();
    stats_.compare_message = a_failed || b_failed
                                 ? cat("The analysis of ", a_failed ? "A" : "B", " failed (",
                                       (a_failed ? doc_ : compare_doc_)->analysis_error(), "): nothing to compare")
                                 : "analysing...";
    if (a_failed || b_failed)
      ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", stats_.compare_message.c_str());
    else
      ImGui::TextDisabled("%s", stats_.compare_message.c_str());
    return;
  }
  draw_compare_totals(*pa, *pb);
  if (ImGui::BeginTabBar("compare_tables")) {
    const bool open = ImGui::BeginTabItem("Categories");
    stats_.compare_tabs.push_back(target("Categories"));
    if (open) {
      stats_.compare_table = "categories";
      draw_compare_categories(*pa, *pb);
      ImGui::EndTabItem();
    }
    draw_compare_diff(pa, pb);
    ImGui::EndTabBar();
  }
}

void View::set_compare_document(std::shared_ptr<Document> doc) {
  close_compare();
  compare_doc_ = std::move(doc);
}

void View::close_compare() {
  compare_loader_.cancel();
  compare_doc_.reset();
  compare_error_.clear();
  compare_state_ = TimelineState{};
  compare_diff_.reset();
  compare_diff_for_a_.reset();
  compare_diff_for_b_.reset();
  for (auto& o : compare_order_) o.clear();
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
      const double dshare = (y ? y->share : 0.0) - (x ? x->share : 0.0);
      const TimeNs psa = time_of(x) / steps_a, psb = time_of(y) / steps_b;
      std::vector<std::string> cells = {std::string(to_string(static_cast<KernelCategory>(c))),
                                        format::duration(time_of(x)),
                                        format::percent1(x ? x->share : 0.0),
                                        format::duration(time_of(y)),
                                        format::percent1(y ? y->share : 0.0),
                                        format::points(dshare)};
      if (steps) {
        cells.push_back(cat(format::duration(psa), " → ", format::duration(psb)));
        cells.push_back(format::signed_duration(psb - psa));
      }
      ImGui::TableNextRow();
      for (std::size_t i = 0; i < cells.size(); ++i) {
        ImGui::TableNextColumn();
        if (i == 0)
          ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(category_color(static_cast<KernelCategory>(c))), "%s",
                             cells[i].c_str());
        else if (i == 5 || i == 7)
          ImGui::TextColored(delta_color(i == 5 ? dshare : static_cast<double>(psb - psa)), "%s", cells[i].c_str());
        else
          ImGui::TextUnformatted(cells[i].c_str());
      }
      stats_.compare_list.push_back(std::move(cells));
    }
    stats_.compare_rows = order.size();
    ImGui::EndTable();
  }
}

// [SECTION] Differences ----------------------------------------------------------------------

namespace {

// A sortable table of rows whose cells are text and whose sort keys are numbers.
struct DiffTable {
  const char* id;
  std::vector<const char*> headers;
  std::vector<std::vector<std::string>> cells;  // per row
  std::vector<std::vector<double>> keys;        // per row, per column (text columns: 0, sorted by text)
};

// `order` as the table's sort asks: the diff's own order (largest change
// first) until a header is clicked, then by that column, ties in the diff's order.
void sort_diff_rows(const DiffTable& t, ImGuiTableSortSpecs* specs, std::vector<std::uint32_t>& order) {
  if (order.size() == t.cells.size() && !(specs && specs->SpecsDirty)) return;
  order.resize(t.cells.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (!specs) return;
  specs->SpecsDirty = false;
  if (specs->SpecsCount == 0) return;
  const auto col = static_cast<std::size_t>(specs->Specs[0].ColumnIndex);
  const bool asc = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (col == 0) return asc ? t.cells[a][0] < t.cells[b][0] : t.cells[a][0] > t.cells[b][0];
    const double ka = t.keys[a][col], kb = t.keys[b][col];
    return asc ? ka < kb : ka > kb;
  });
}

// The table; its headers (and where they are) and its rows as drawn go to `stats`.
void draw_diff_table(const DiffTable& t, std::vector<std::uint32_t>& order, FrameStats& stats) {
  // Tristate: unsorted (the diff's order) until a header is clicked, and again after a third click.
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_SortTristate | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_Hideable | ImGuiTableFlags_Reorderable | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  const int n = static_cast<int>(t.headers.size());
  if (!ImGui::BeginTable(t.id, n, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (int c = 0; c < n; ++c)
    ImGui::TableSetupColumn(t.headers[static_cast<std::size_t>(c)],
                            c == 0 ? ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_NoHide
                                   : ImGuiTableColumnFlags_PreferSortDescending,
                            c == 0 ? 300.0f : 0.0f);
  header_row(n, stats.compare_headers);
  sort_diff_rows(t, ImGui::TableGetSortSpecs(), order);
  for (std::uint32_t i : order) {
    ImGui::TableNextRow();
    for (int c = 0; c < n; ++c) {
      if (!ImGui::TableSetColumnIndex(c)) continue;
      const std::string& cell = t.cells[i][static_cast<std::size_t>(c)];
      if (c == 0) {
        const std::string shown = elide(cell, std::max(40.0f, ImGui::GetContentRegionAvail().x));
        ImGui::TextUnformatted(shown.c_str());
        if (shown != cell && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cell.c_str());
      } else if (t.headers[static_cast<std::size_t>(c)] == std::string_view("change")) {
        ImGui::TextColored(delta_color(t.keys[i][static_cast<std::size_t>(c)]), "%s", cell.c_str());
      } else {
        ImGui::TextUnformatted(cell.c_str());
      }
    }
    stats.compare_list.push_back(t.cells[i]);
  }
  stats.compare_rows = order.size();
  ImGui::EndTable();
}

DiffTable kernel_table(const ProfileDiff& d) {
  DiffTable t{"compare_kernels", {"kernel", "category", "A", "B", "change", "A count", "B count"}, {}, {}};
  for (const KernelDelta& k : d.kernels) {
    t.cells.push_back({k.name, std::string(to_string(k.category)), format::duration(k.before_ns),
                       format::duration(k.after_ns), format::signed_duration(k.after_ns - k.before_ns),
                       format::count(k.before_count), format::count(k.after_count)});
    t.keys.push_back({0, static_cast<double>(k.category), static_cast<double>(k.before_ns),
                      static_cast<double>(k.after_ns), static_cast<double>(k.after_ns - k.before_ns),
                      static_cast<double>(k.before_count), static_cast<double>(k.after_count)});
  }
  return t;
}

DiffTable op_table(const ProfileDiff& d) {
  DiffTable t{"compare_ops", {"op", "shapes", "A", "B", "change", "A calls", "B calls"}, {}, {}};
  for (const OpDelta& o : d.ops) {
    t.cells.push_back({o.name, o.shapes, format::duration(o.before_ns), format::duration(o.after_ns),
                       format::signed_duration(o.after_ns - o.before_ns), format::count(o.before_calls),
                       format::count(o.after_calls)});
    t.keys.push_back({0, 0, static_cast<double>(o.before_ns), static_cast<double>(o.after_ns),
                      static_cast<double>(o.after_ns - o.before_ns), static_cast<double>(o.before_calls),
                      static_cast<double>(o.after_calls)});
  }
  return t;
}

DiffTable finding_table(const ProfileDiff& d) {
  DiffTable t{"compare_findings", {"finding", "what happened", "A saving", "B saving", "change"}, {}, {}};
  for (const FindingDelta& f : d.findings) {
    t.cells.push_back({f.id, std::string(to_string(f.change)), f.in_before ? format::duration(f.before_saving_ns) : "-",
                       f.in_after ? format::duration(f.after_saving_ns) : "-",
                       format::signed_duration(f.after_saving_ns - f.before_saving_ns)});
    t.keys.push_back({0, static_cast<double>(f.change), static_cast<double>(f.before_saving_ns),
                      static_cast<double>(f.after_saving_ns),
                      static_cast<double>(f.after_saving_ns - f.before_saving_ns)});
  }
  return t;
}

DiffTable help_table(const ProfileDiff& d, std::string_view (*verdict)(Verdict)) {
  DiffTable t{"compare_helps", {"question", "A", "B", "why (B)"}, {}, {}};
  for (const HelpDelta& h : d.helps) {
    t.cells.push_back({h.question, h.in_before ? std::string(verdict(h.before)) : "-",
                       h.in_after ? std::string(verdict(h.after)) : "-",
                       h.in_after ? h.after_reason : h.before_reason});
    t.keys.push_back({0, static_cast<double>(h.before), static_cast<double>(h.after), 0});
  }
  return t;
}

}  // namespace

// Per kernel, per op, per finding and the answers that changed, as `gpuscope
// diff` computes them (diff_profiles: per step when both traces have steps,
// totals otherwise).
void View::draw_compare_diff(const std::shared_ptr<const Profile>& a, const std::shared_ptr<const Profile>& b) {
  if (compare_diff_for_a_ != a || compare_diff_for_b_ != b) {
    compare_diff_ = diff_profiles(*a, *b, kCompareRows);
    compare_diff_for_a_ = a;
    compare_diff_for_b_ = b;
    for (auto& o : compare_order_) o.clear();
  }
  const ProfileDiff& d = *compare_diff_;
  const char* per = d.per_step ? "per step" : "in total";
  struct Tab {
    const char* label;
    const char* table;
    DiffTable (*make)(const ProfileDiff&);
  };
  static constexpr Tab kTabs[] = {
      {"Kernels", "kernels", kernel_table}, {"Ops", "ops", op_table}, {"Findings", "findings", finding_table}};
  for (std::size_t i = 0; i < std::size(kTabs); ++i) {
    const bool open = ImGui::BeginTabItem(kTabs[i].label);
    stats_.compare_tabs.push_back(target(kTabs[i].label));
    if (!open) continue;
    stats_.compare_table = kTabs[i].table;
    if (i == 0)
      ImGui::TextDisabled("GPU time %s of the %zu kernels whose time changed most (as gpuscope diff)", per,
                          d.kernels.size());
    else if (i == 1)
      ImGui::TextDisabled("GPU time %s of each framework op, with the ops inside it (as gpuscope diff)", per);
    else
      ImGui::TextDisabled("Findings resolved, appeared, worse, better or unchanged, with their savings");
    draw_diff_table(kTabs[i].make(d), compare_order_[i], stats_);
    ImGui::EndTabItem();
  }
  // The answers of "What would help?" that changed.
  const bool open = ImGui::BeginTabItem("Answers");
  stats_.compare_tabs.push_back(target("Answers"));
  if (!open) return;
  stats_.compare_table = "answers";
  ImGui::TextDisabled("The answers of What would help? that changed between A and B (%zu)", d.helps.size());
  draw_diff_table(help_table(d, &View::verdict_text), compare_order_[3], stats_);
  ImGui::EndTabItem();
}

}  // namespace gpuscope::viewer
