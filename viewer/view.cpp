// View — frame layout, menus, toolbar, loading and error screens, global keys.
//
// [SECTION] Panels
// [SECTION] Opening traces
// [SECTION] Frame
// [SECTION] Menu bar, toolbar, status bar
// [SECTION] Welcome, loading, error screens
// [SECTION] Bottom panel
// [SECTION] Keys
#include "viewer/view.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "viewer/colors.h"
#include "viewer/time_format.h"
#include "words/damage_text.h"
#include "words/format.h"

namespace gpuscope::viewer {

// [SECTION] Panels ---------------------------------------------------------------------------

std::string_view to_string(Panel p) {
  // Names in kPanels' order: --view's values and the screenshot JSON's "panel".
  static constexpr std::string_view kNames[] = {"timeline", "range",    "histogram", "hotspots",
                                                "ops",      "findings", "summary",   "compare"};
  static_assert(std::size(kNames) == std::size(kPanels));
  const auto i = static_cast<std::size_t>(p);
  return i < std::size(kNames) ? kNames[i] : kNames[0];
}

bool parse_panel(std::string_view s, Panel* out) {
  for (Panel p : kPanels)
    if (s == to_string(p)) {
      *out = p;
      return true;
    }
  return false;
}

void text_cell(std::string_view text) {
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(text.data(), text.data() + text.size());
}

void color_swatch(ImU32 color) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float s = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + s - 4, p.y + s - 2), color);
  ImGui::Dummy(ImVec2(s - 2, s));
  ImGui::SameLine();
}

void percent_bar(double share, ImU32 color, float width, ImU32 background) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + width, p.y + h - 2), background);
  dl->AddRectFilled(ImVec2(p.x, p.y + 2),
                    ImVec2(p.x + width * static_cast<float>(std::clamp(share, 0.0, 1.0)), p.y + h - 2), color);
  ImGui::Dummy(ImVec2(width, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(format::percent1(share).c_str());
}

void header_row(int columns, std::vector<ClickTarget>& targets) {
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (int c = 0; c < columns; ++c) {
    if (!ImGui::TableSetColumnIndex(c)) continue;
    const char* name = ImGui::TableGetColumnName(c);
    ImGui::PushID(c);
    ImGui::TableHeader(name);
    ImGui::PopID();
    targets.push_back(target(name));
  }
}

View::View() = default;
View::~View() { unregister_layout_settings(); }

// [SECTION] Opening traces -------------------------------------------------------------------

void View::open(std::string path) {
  doc_.reset();
  loader_.start(std::move(path));
  redraw_frames_ = 3;
}

void View::open_with(std::string label, Loader::Source source) {
  doc_.reset();
  loader_.start(std::move(label), std::move(source));
  redraw_frames_ = 3;
}

void View::open_compare(std::string path) {
  close_compare();
  compare_loader_.start(std::move(path));
  show(Panel::compare);
}

void View::open_compare_with(std::string label, Loader::Source source) {
  close_compare();
  compare_loader_.start(std::move(label), std::move(source));
  show(Panel::compare);
}

void View::set_document(std::shared_ptr<Document> doc) {
  loader_.cancel();
  adopt(std::move(doc));
}

void View::on_files_dropped(const std::vector<std::string>& paths) {
  if (paths.empty()) return;
  if (is_job_input(paths)) {
    try {
      open_job(list_trace_inputs(paths));
    } catch (const std::exception& e) {
      job_loader_.cancel();
      adopt_job(nullptr);
      job_drop_error_ = e.what();
    }
    return;
  }
  // Dropping two files opens the first and compares it with the second.
  open(paths[0]);
  if (paths.size() >= 2) open_compare(paths[1]);
}

// What Escape drops: the selection, the matches of a search, a finding's
// evidence and the selected time range.
void View::clear_selection() {
  selection_ = {};
  matches_ = {};
  matches_label_.clear();
  match_cursor_.reset();
  evidence_.clear();
  evidence_label_.clear();
  clear_range();
}

void View::adopt(std::shared_ptr<Document> doc) {
  doc_ = std::move(doc);
  short_names_.clear();
  coverage_ = doc_ ? device_coverage(doc_->trace()) : DeviceCoverage{};
  damage_headline_ = doc_ ? damage_headline(doc_->trace().meta().damage, coverage_) : std::string();
  clear_selection();
  evidence_index_ = 0;
  histogram_.reset();
  histogram_bin_ = -1;
  selected_op_for_ = nullptr;
  selected_op_kernels_.clear();
  op_order_for_ = nullptr;
  hovered_.reset();
  scroll_y_ = 0;
  if (!doc_) return;
  group_collapsed_.assign(doc_->index().groups().size(), 0);
  track_collapsed_.assign(doc_->index().tracks().size(), 0);
  zoom_to_all();
  if (search_text_[0]) run_search();
  redraw_frames_ = 3;
}

void View::poll_loaders() {
  if (job_loader_.state() == JobLoader::State::ready && !job_ && job_loader_.job()) adopt_job(job_loader_.job());
  if (loader_.state() == Loader::State::ready && loader_.document() != doc_ && !doc_) adopt(loader_.document());
  // A Profile that arrived since the last frame changes the panels.
  const Profile* p = doc_ ? doc_->profile().get() : nullptr;
  if (p != profile_seen_) {
    profile_seen_ = p;
    redraw_frames_ = std::max(redraw_frames_, 3);
  }
  if (compare_loader_.state() == Loader::State::ready && !compare_doc_) compare_doc_ = compare_loader_.document();
  if (compare_loader_.state() == Loader::State::failed) compare_error_ = compare_loader_.error();
}

bool View::busy() const {
  auto busy = [](const Loader& l) { return l.state() == Loader::State::loading || l.analysing(); };
  return busy(loader_) || busy(compare_loader_) || job_loader_.state() == JobLoader::State::loading ||
         range_worker_.busy();
}

bool View::panel_open(const char* panel, bool open, const char* none) {
  stats_.panels.push_back(panel);
  if (!doc_) return false;
  if (!open) ImGui::TextDisabled("%s", none);
  return open;
}

std::shared_ptr<const Profile> View::panel_profile(const char* panel) {
  stats_.panels.push_back(panel);
  if (!doc_) return nullptr;
  std::shared_ptr<const Profile> profile = doc_->profile();
  if (!profile)
    ImGui::TextDisabled(doc_->analysis_failed() ? "analysis failed: %s" : "analysing...",
                        doc_->analysis_error().c_str());
  return profile;
}

std::string View::load_error() const {
  if (loader_.state() == Loader::State::failed) return loader_.error();
  if (job_loader_.state() == JobLoader::State::failed) return job_loader_.error();
  return job_drop_error_;
}

std::string_view View::short_label(StringId name) {
  auto it = short_names_.find(name);
  if (it == short_names_.end())
    it = short_names_.emplace(name, format::short_kernel_name(doc_->trace().str(name))).first;
  return it->second;
}

ClickTarget target(std::string label) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  return ClickTarget{std::move(label), (a.x + b.x) / 2, (a.y + b.y) / 2};
}

void View::show(Panel p) {
  panel_ = p;
  panel_requested_ = true;
  redraw_frames_ = 3;
}

bool View::animating() const { return redraw_frames_ > 0 || dragging_; }

// [SECTION] Frame ----------------------------------------------------------------------------

void View::draw() {
  const auto t0 = std::chrono::steady_clock::now();
  const TimeNs keep_start = stats_.view_start, keep_end = stats_.view_end;
  stats_ = FrameStats{};
  stats_.view_start = keep_start;
  stats_.view_end = keep_end;
  poll_loaders();

  const ImGuiIO& io = ImGui::GetIO();
  // Any input changes what is drawn (hover, tooltips): draw a few more frames.
  const bool mouse_moved = io.MousePos.x != last_mouse_.x || io.MousePos.y != last_mouse_.y;
  last_mouse_ = io.MousePos;
  if (mouse_moved || io.MouseWheel != 0 || io.InputQueueCharacters.Size > 0 || ImGui::IsAnyMouseDown())
    redraw_frames_ = std::max(redraw_frames_, 3);
  for (bool down : io.KeysDown)
    if (down) {
      redraw_frames_ = std::max(redraw_frames_, 3);
      break;
    }

  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  // Settings saved (no ImGuiWindowFlags_NoSavedSettings): the tables inside
  // inherit it, and their columns' widths, order and visibility are remembered.
  ImGui::Begin("gpuscope", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_MenuBar |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::PopStyleVar();
  handle_global_keys();
  draw_menu_bar();
  draw_toolbar();
  stats_.panels.push_back("toolbar");
  if (doc_ && !damage_headline_.empty()) draw_damage_banner();

  const float status_h = ImGui::GetFrameHeightWithSpacing();
  const float avail = ImGui::GetContentRegionAvail().y - status_h;
  if (!doc_ && job_ && loader_.state() != Loader::State::loading && loader_.state() != Loader::State::failed) {
    draw_job(avail);
  } else if (!doc_) {
    ImGui::BeginChild("main", ImVec2(0, avail), false);
    if (loader_.state() == Loader::State::loading)
      draw_loading(loader_, "Loading");
    else if (loader_.state() == Loader::State::failed)
      draw_error(loader_.error());
    else if (job_loader_.state() == JobLoader::State::loading)
      draw_job_loading();
    else if (!load_error().empty())
      draw_error(load_error());
    else
      draw_welcome();
    ImGui::EndChild();
  } else {
    const float splitter = 6;
    // Nothing to show below (no selection on the Details tab): only the tabs
    // and a hint, and the timeline takes the rest.
    const bool empty = panel_ == Panel::timeline && !selection_.valid();
    const float collapsed = 2 * ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().WindowPadding.y;
    // The Details tab keeps the timeline most of the height, the other tabs
    // get more room; the user's drags of the splitter are remembered for each.
    float& fraction = panel_ == Panel::timeline ? layout_.details_fraction : layout_.panel_fraction;
    const float bottom = empty ? std::min(collapsed, avail * 0.5f)
                               : std::clamp(avail * fraction, 60.0f, std::max(60.0f, avail - 120.0f));
    stats_.bottom_height = bottom;
    draw_timeline(avail - bottom - splitter);
    ImGui::InvisibleButton("##splitter", ImVec2(ImGui::GetContentRegionAvail().x, splitter));
    stats_.bottom_splitter = target("bottom splitter");
    if (ImGui::IsItemHovered() || ImGui::IsItemActive()) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeNS);
    if (ImGui::IsItemActive() && avail > 0 && io.MouseDelta.y != 0) {
      fraction = std::clamp(bottom / avail - io.MouseDelta.y / avail, 0.05f, 0.85f);
      layout_changed();
    }
    draw_bottom_panel(bottom);
  }
  draw_status_bar();
  stats_.panels.push_back("status");

  if (browser_.is_open()) stats_.panels.push_back("file_browser");
  if (auto chosen = browser_.draw()) {
    std::error_code ec;
    if (browser_for_compare_)
      open_compare(*chosen);
    else if (std::filesystem::is_directory(*chosen, ec))
      on_files_dropped({*chosen});  // a folder: its files as a job, as when it is dropped
    else
      open(*chosen);
  }
  ImGui::End();

  if (redraw_frames_ > 0) --redraw_frames_;
  last_frame_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// [SECTION] Menu bar, toolbar, status bar ----------------------------------------------------

void View::draw_menu_bar() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) {
      browser_for_compare_ = false;
      browser_.open("Open a trace", doc_ ? std::filesystem::path(doc_->path()).parent_path().string() : "",
                    /*folders=*/true);
    }
    if (ImGui::MenuItem("Compare with...", nullptr, false, doc_ != nullptr)) {
      browser_for_compare_ = true;
      browser_.open("Open a trace to compare", std::filesystem::path(doc_->path()).parent_path().string());
    }
    if (ImGui::MenuItem("Close", nullptr, false, doc_ != nullptr || job_ != nullptr)) {
      // A rank opened from a job closes back to the job; the job closes last.
      const bool had_doc = doc_ != nullptr;
      loader_.cancel();
      adopt(nullptr);
      if (!had_doc) adopt_job(nullptr);
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (Panel p : kPanels)
      if (ImGui::MenuItem(std::string(to_string(p)).c_str(), nullptr, panel_ == p)) show(p);
    ImGui::Separator();
    if (ImGui::MenuItem("Zoom to whole trace", "Home", false, doc_ != nullptr)) zoom_to_all();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::TextUnformatted(
        "Timeline\n"
        "  wheel          zoom around the mouse (Ctrl: finer)\n"
        "  Shift+wheel    scroll tracks\n"
        "  drag           pan (left or right button)\n"
        "  W / S          zoom in / out      A / D   pan left / right\n"
        "  Home           whole trace        F       focus the selection\n"
        "  click          select (a folded block: zoom into it)\n"
        "  drag on ruler  select a time range (or Shift+drag on the tracks)\n"
        "  Z              zoom to the range  (its statistics: the Range tab)\n"
        "  H              duration histogram of the selected kernel's or range's name\n"
        "  ] / [          next / previous time range of the finding clicked\n"
        "  Esc            clear selection and highlights\n"
        "Search\n"
        "  Ctrl+F         find by name       Enter / Shift+Enter   next / previous\n"
        "Files\n"
        "  Ctrl+O, or drop a file on the window (two files: open and compare)");
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

void View::draw_toolbar() {
  if (job_ && (doc_ || loader_.state() != Loader::State::idle)) {
    if (ImGui::SmallButton("< job")) back_to_job();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back to the job view of all %zu ranks", job_->ranks.size());
    stats_.panels.push_back("back_to_job");
    ImGui::SameLine();
  }
  if (!doc_ && job_) {
    draw_job_toolbar();
    return;
  }
  if (doc_) {
    // The source of the trace, always in view: a synthetic trace is not a measurement.
    const TraceSource src = doc_->trace().meta().source;
    const ImVec4 color = src == TraceSource::synthetic     ? ImVec4(0.85f, 0.45f, 0.05f, 1)
                         : src == TraceSource::cupti       ? ImVec4(0.15f, 0.6f, 0.25f, 1)
                         : src == TraceSource::chrome_json ? ImVec4(0.2f, 0.45f, 0.8f, 1)
                                                           : ImVec4(0.4f, 0.4f, 0.4f, 1);
    std::string badge(doc_->source_label());
    std::transform(badge.begin(), badge.end(), badge.begin(),
                   [](char c) { return static_cast<char>(std::toupper(c)); });
    ImGui::PushStyleColor(ImGuiCol_Button, color);
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, color);
    ImGui::PushStyleColor(ImGuiCol_ButtonActive, color);
    ImGui::SmallButton(badge.c_str());
    ImGui::PopStyleColor(3);
    stats_.source_badge = badge;
    if (ImGui::IsItemHovered()) {
      const TraceMeta& m = doc_->trace().meta();
      ImGui::SetTooltip("source: %s\nproducer: %s\nhost: %s", std::string(to_string(m.source)).c_str(),
                        m.producer.c_str(), m.host.c_str());
    }
    ImGui::SameLine();
    const Trace& t = doc_->trace();
    // "4 GPUs", or "1 of 4 GPUs with data" when some GPU of the trace has none (a damaged file).
    const std::size_t gpus = doc_->index().activity().size(), declared = coverage_.declared.size();
    const std::string gpu_text =
        declared > coverage_.with_data.size()
            ? format::count(coverage_.with_data.size()) + " of " + format::count(declared) + " GPUs with data"
            : format::count(gpus) + (gpus == 1 ? " GPU" : " GPUs");
    ImGui::Text("%s  ·  %s  ·  %s kernels  ·  %s", std::filesystem::path(doc_->path()).filename().c_str(),
                gpu_text.c_str(), format::count(t.kernels().size()).c_str(),
                format::duration(t.end_time() - t.begin_time()).c_str());
    ImGui::SameLine();
    ImGui::Checkbox("critical path", &show_critical_path_);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Underline the ops and calls that decided each visible step's length\n"
          "(the dependency graph's replay; docs/whatif.md)");
    ImGui::SameLine();
    draw_search_bar();
  } else {
    ImGui::TextDisabled("gpuscope-view");
  }
}

void View::draw_status_bar() {
  ImGui::Separator();
  if (doc_ || job_) {
    const TimeNs origin = content_range().start;
    const double npp = view_span_ / std::max(1.0f, timeline_width_);
    ImGui::Text("view %s .. %s (%s)  ·  %.3g ns/px", format_offset(view_start() - origin, 1000).c_str(),
                format_offset(view_end() - origin, 1000).c_str(), format::duration(view_end() - view_start()).c_str(),
                npp);
    ImGui::SameLine();
    if (!doc_) {
      ImGui::TextDisabled("  ·  job clock (rank %d's)", job_->ranks.empty() ? 0 : job_->ranks.front().rank);
      ImGui::SameLine();
    } else if (loader_.analysing()) {
      ImGui::TextDisabled("  ·  analysing...");
      ImGui::SameLine();
    } else if (doc_->analysis_failed()) {
      ImGui::TextColored(ImVec4(1, 0.5f, 0.3f, 1), "  ·  analysis failed: %s", doc_->analysis_error().c_str());
      ImGui::SameLine();
    }
    if (doc_ && !matches_label_.empty()) {  // what is highlighted, and how much of it the view shows
      ImGui::TextDisabled("  ·  %s: %s highlighted, %s in view", matches_label_.c_str(),
                          format::count(matches_.size()).c_str(), format::count(stats_.matches_in_view).c_str());
      ImGui::SameLine();
    }
    ImGui::TextDisabled("  ·  frame %.1f ms", last_frame_ms_);
  } else {
    ImGui::TextDisabled("no trace open");
  }
}

// [SECTION] Welcome, loading, error screens --------------------------------------------------

// What storage lost of the open file, above the timeline in every panel;
// the hover lists the problems and the rows lost (gpuscope info says the same).
void View::draw_damage_banner() {
  stats_.panels.push_back("damage_banner");
  stats_.damage = damage_headline_;
  const ImVec4 amber(0.55f, 0.32f, 0.02f, 1);
  ImGui::PushStyleColor(ImGuiCol_ChildBg, amber);
  ImGui::BeginChild("damage", ImVec2(0, ImGui::GetFrameHeightWithSpacing()), false, ImGuiWindowFlags_NoScrollbar);
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + 6);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(damage_headline_.c_str());
  if (ImGui::IsItemHovered()) {
    const FileDamage& d = doc_->trace().meta().damage;
    std::string tip = "rows lost: " + rows_lost_text(d);
    for (const std::string& p : d.problems) tip += "\n" + p;
    tip += "\nThe timeline, hotspots and findings cover only what survived.";
    ImGui::SetTooltip("%s", tip.c_str());
  }
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

void View::draw_welcome() {
  stats_.panels.push_back("welcome");
  ImGui::Dummy(ImVec2(0, 40));
  ImGui::Indent(40);
  ImGui::TextUnformatted("gpuscope-view: timeline, hotspots and findings of a GPU trace.");
  ImGui::Spacing();
  ImGui::TextUnformatted("Open a trace: .gscope, Chrome/Kineto JSON (.json, .json.gz) or Nsight Systems .sqlite:");
  ImGui::BulletText("drop the file on this window,");
  ImGui::BulletText("or use File > Open (Ctrl+O),");
  ImGui::BulletText("or start it as: gpuscope-view FILE");
  ImGui::Spacing();
  if (ImGui::Button("Open a trace...")) {
    browser_for_compare_ = false;
    browser_.open("Open a trace", "", /*folders=*/true);
  }
  ImGui::Unindent(40);
}

void View::draw_loading(const Loader& loader, const char* what) {
  stats_.panels.push_back("loading");
  ImGui::Dummy(ImVec2(0, 40));
  ImGui::Indent(40);
  ImGui::Text("%s %s", what, loader.label().c_str());
  const std::uint64_t done = loader.bytes_done(), total = loader.bytes_total();
  char overlay[96];
  if (total > 0)
    std::snprintf(overlay, sizeof overlay, "%s / %s", format::bytes(done).c_str(), format::bytes(total).c_str());
  else
    std::snprintf(overlay, sizeof overlay, "%s", format::bytes(done).c_str());
  ImGui::ProgressBar(total > 0 ? static_cast<float>(loader.fraction()) : -1.0f * static_cast<float>(ImGui::GetTime()),
                     ImVec2(std::min(600.0f, ImGui::GetContentRegionAvail().x - 40), 0), overlay);
  ImGui::TextDisabled("%s...", loader.phase().c_str());
  if (ImGui::Button("Cancel")) {
    if (&loader == &loader_) loader_.cancel();
  }
  ImGui::Unindent(40);
}

void View::draw_error(const std::string& message) {
  stats_.panels.push_back("error");
  stats_.message = message;
  ImGui::Dummy(ImVec2(0, 40));
  ImGui::Indent(40);
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.45f, 0.4f, 1));
  ImGui::TextUnformatted("Could not open the trace:");
  ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x - 40);
  // A message naming hundreds of files is cut: one text item of it all
  // would exceed what an ImGui draw list indexes (64k vertices).
  constexpr std::size_t kShown = 3000;
  std::size_t cut = std::min(message.size(), kShown);
  while (cut < message.size() && cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  ImGui::TextUnformatted(message.data(), message.data() + cut);
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  if (cut < message.size()) {
    ImGui::TextDisabled("… and %s more characters (on stderr too).", format::count(message.size() - cut).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("Copy the whole message")) ImGui::SetClipboardText(message.c_str());
  }
  ImGui::Spacing();
  if (ImGui::Button("Open another trace...")) {
    browser_for_compare_ = false;
    browser_.open("Open a trace", "", /*folders=*/true);
  }
  ImGui::Unindent(40);
}

// [SECTION] Bottom panel ---------------------------------------------------------------------

void View::draw_bottom_panel(float height) {
  ImGui::BeginChild("bottom", ImVec2(0, height), false);
  if (ImGui::BeginTabBar("panels")) {
    // A tab asked for while this frame draws a panel (a histogram opened
    // from Hotspots) is selected next frame: its tab may be drawn already.
    const bool requested = panel_requested_;
    struct Tab {
      Panel panel;
      const char* label;
      void (View::*draw)();
    };
    const Tab tabs[] = {{Panel::timeline, "Details", &View::draw_details},
                        {Panel::range, "Range", &View::draw_range_panel},
                        {Panel::histogram, "Histogram", &View::draw_histogram},
                        {Panel::hotspots, "Hotspots", &View::draw_hotspots},
                        {Panel::ops, "Ops", &View::draw_ops},
                        {Panel::findings, "Findings", &View::draw_findings},
                        {Panel::summary, "Summary", &View::draw_summary},
                        {Panel::compare, "Compare", &View::draw_compare}};
    for (const Tab& tab : tabs) {
      const ImGuiTabItemFlags flags = panel_requested_ && panel_ == tab.panel ? ImGuiTabItemFlags_SetSelected : 0;
      const bool open = ImGui::BeginTabItem(tab.label, nullptr, flags);
      stats_.tab_targets.push_back(target(tab.label));
      if (open) {
        if (!panel_requested_) panel_ = tab.panel;
        ImGui::BeginChild("panel");
        (this->*tab.draw)();
        ImGui::EndChild();
        ImGui::EndTabItem();
      }
    }
    if (requested) panel_requested_ = false;
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

// [SECTION] Keys -----------------------------------------------------------------------------

void View::handle_global_keys() {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed('O', false)) {
    browser_for_compare_ = false;
    browser_.open("Open a trace", doc_ ? std::filesystem::path(doc_->path()).parent_path().string() : "",
                  /*folders=*/true);
  }
  if (!doc_ && job_ && !io.WantTextInput) {  // the job view: Esc clears the instance, Home, F focuses it
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) job_instance_ = -1;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) zoom_to_all();
    if (!io.KeyCtrl && ImGui::IsKeyPressed('F', false)) focus_instance();
    return;
  }
  if (!doc_ || io.WantTextInput) return;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) clear_selection();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) zoom_to_all();
  if (!io.KeyCtrl && ImGui::IsKeyPressed('Z', false)) zoom_to_range();
  if (!io.KeyCtrl && ImGui::IsKeyPressed('H', false)) histogram_of_selection();
  constexpr int kLeftBracket = 91, kRightBracket = 93;  // GLFW's key codes, ImGui 1.86's key indexes
  if (ImGui::IsKeyPressed(kRightBracket)) step_evidence(true);
  if (ImGui::IsKeyPressed(kLeftBracket)) step_evidence(false);
  if (!io.KeyCtrl && ImGui::IsKeyPressed('F', false)) focus_selection();
  if (io.KeyCtrl && ImGui::IsKeyPressed('F', false)) focus_search_ = true;
}

}  // namespace gpuscope::viewer
