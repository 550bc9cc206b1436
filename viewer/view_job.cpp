// View — the job view: many ranks as one timeline on the job clock.
//
// [SECTION] Opening a job
// [SECTION] Frame
// [SECTION] Toolbar, loading, files left out
// [SECTION] Overview: who waited, who made the others wait
// [SECTION] Timeline: ranks, utilization, collective parts
// [SECTION] The selected instance
// [SECTION] Details
//
// Drawing reads only the compact per-rank data of job_lanes.h: a rank's
// utilization lane is its histogram sampled once per pixel column, its
// collective lane a binary search for the first visible part and a walk
// that folds runs of parts narrower than 3 px — O(visible) per lane, and
// ranks outside the scroll viewport are only measured.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "viewer/clipped_rows.h"
#include "viewer/colors.h"
#include "viewer/text.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {
constexpr float kHeaderH = 20;
constexpr float kUtilH = 18;
constexpr float kPartsH = 14;
constexpr float kGpuGap = 3;
constexpr ImU32 kPartColor = IM_COL32(200, 120, 40, 255);
constexpr ImU32 kLastArrivalColor = IM_COL32(255, 50, 50, 255);
constexpr ImU32 kCausedColor = IM_COL32(230, 70, 60, 255);
constexpr ImU32 kWaitedColor = IM_COL32(80, 140, 230, 255);

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string rank_header(const JobRank& r) {
  return cat("rank ", std::to_string(r.rank), " · ", r.host.empty() ? std::string("unknown host") : r.host, " · ",
             file_name(r.file));
}

float rank_height(const JobRank& r, bool collapsed) {
  if (collapsed) return kHeaderH;
  return kHeaderH + static_cast<float>(r.gpus.size()) * (kUtilH + kPartsH + kGpuGap);
}
}  // namespace

// [SECTION] Opening a job -------------------------------------------------------------------------

void View::open_job(TraceInputs inputs) {
  loader_.cancel();
  adopt(nullptr);
  adopt_job(nullptr);
  job_drop_error_.clear();
  job_loader_.start(std::move(inputs));
  redraw_frames_ = 3;
}

void View::set_job(std::shared_ptr<const JobData> job) {
  job_loader_.cancel();
  loader_.cancel();
  adopt(nullptr);
  adopt_job(std::move(job));
}

void View::adopt_job(std::shared_ptr<const JobData> job) {
  job_ = std::move(job);
  job_waits_ = job_ ? rank_waits(*job_) : std::vector<RankWait>{};
  job_collapsed_.assign(job_ ? job_->ranks.size() : 0, 0);
  job_instance_ = -1;
  job_scroll_to_ = -1;
  job_view_span_ = 0;  // no view of this job kept yet: "< job" shows all of it
  job_hovered_instance_.reset();
  job_hovered_block_.reset();
  scroll_y_ = 0;
  if (job_ && !doc_) zoom_to_all();
  redraw_frames_ = 3;
}

void View::open_rank(std::size_t i) {
  if (!job_ || i >= job_->ranks.size()) return;
  job_view_start_ = view_start_;
  job_view_span_ = view_span_;
  open(job_->ranks[i].file);
}

void View::back_to_job() {
  loader_.cancel();
  adopt(nullptr);
  if (job_view_span_ > 0) {
    view_start_ = job_view_start_;
    view_span_ = job_view_span_;
  } else {
    zoom_to_all();
  }
  redraw_frames_ = 3;
}

bool View::select_instance(std::int64_t index) {
  if (!job_ || index < 0 || static_cast<std::size_t>(index) >= job_->profile.collectives.size()) return false;
  job_instance_ = index;
  redraw_frames_ = std::max(redraw_frames_, 3);
  return true;
}

void View::focus_instance() {
  if (!job_ || job_instance_ < 0) return;
  const CollectiveInstance& c = job_->profile.collectives[static_cast<std::size_t>(job_instance_)];
  const TimeNs len = std::max<TimeNs>(c.range.end - c.range.start, 1000);
  zoom_to(c.range.start - 2 * len, c.range.end + 2 * len);
  // And scroll to the last arrival, with a rank or two above it for context.
  for (std::size_t r = 0; r < job_->ranks.size(); ++r)
    if (job_->ranks[r].rank == c.last_rank) job_scroll_to_ = static_cast<std::int64_t>(r >= 2 ? r - 2 : 0);
}

// [SECTION] Frame ------------------------------------------------------------------------------------

void View::draw_job(float height) {
  stats_.panels.push_back("job");
  JobStats& js = stats_.job;
  js.shown = true;
  js.ranks = static_cast<std::uint32_t>(job_->ranks.size());
  for (const JobRank& r : job_->ranks) js.gpus += static_cast<std::uint32_t>(r.gpus.size());
  js.clock_alignment = job_->profile.clock_alignment;
  const float y0 = ImGui::GetCursorPosY();
  if (!job_->left_out.empty()) draw_job_left_out();
  const float overview_h = 74;
  draw_job_overview(overview_h);
  const float rest = std::max(120.0f, height - (ImGui::GetCursorPosY() - y0));
  const float details = std::clamp(rest * 0.24f, 60.0f, 200.0f);
  draw_job_timeline(rest - details - 4);
  draw_job_details(details);
  // Each rank's cell of the overview, beside its row of the timeline.
  for (const RankWait& w : job_waits_) {
    if (w.rank >= js.rank_list.size()) continue;
    JobRankStats& rs = js.rank_list[w.rank];
    rs.wait_caused_ns = w.caused_ns;
    rs.waited_ns = w.waited_ns;
    rs.last_arrivals = w.last_arrivals;
    rs.critical_steps = w.critical_steps;
  }
}

// [SECTION] Toolbar, loading, files left out ---------------------------------------------------------

void View::draw_job_toolbar() {
  const ImVec4 color(0.55f, 0.3f, 0.75f, 1);
  ImGui::PushStyleColor(ImGuiCol_Button, color);
  ImGui::PushStyleColor(ImGuiCol_ButtonHovered, color);
  ImGui::PushStyleColor(ImGuiCol_ButtonActive, color);
  ImGui::SmallButton("JOB");
  ImGui::PopStyleColor(3);
  stats_.source_badge = "JOB";
  ImGui::SameLine();
  std::size_t gpus = 0;
  std::uint64_t kernels = 0;
  for (const JobRank& r : job_->ranks) gpus += r.gpus.size(), kernels += r.kernels;
  ImGui::Text("%s ranks  ·  %s GPUs  ·  %s kernels  ·  %s  ·  %s instances of collectives",
              format::count(job_->ranks.size()).c_str(), format::count(gpus).c_str(), format::count(kernels).c_str(),
              format::duration(job_->window.end - job_->window.start).c_str(),
              format::count(job_->profile.collectives.size()).c_str());
  if (ImGui::IsItemHovered() && !job_->profile.clock_alignment.empty())
    ImGui::SetTooltip("clocks: %s", job_->profile.clock_alignment.c_str());
}

void View::draw_job_loading() {
  stats_.panels.push_back("loading");
  ImGui::Dummy(ImVec2(0, 40));
  ImGui::Indent(40);
  const std::size_t n = job_loader_.files();
  const std::uint64_t done = job_loader_.files_done();
  ImGui::Text("Reading a job of %s files", format::count(n).c_str());
  const std::string overlay = cat(format::count(done), " / ", format::count(n), " files");
  ImGui::ProgressBar(n > 0 ? static_cast<float>(done) / static_cast<float>(n) : 0.0f,
                     ImVec2(std::min(600.0f, ImGui::GetContentRegionAvail().x - 40), 0), overlay.c_str());
  ImGui::TextDisabled(done < n ? "each rank read, digested and freed..."
                               : "aligning clocks, matching collectives, simulating the findings' fixes (each rank "
                                 "read again)...");
  if (ImGui::Button("Cancel")) job_loader_.cancel();
  ImGui::Unindent(40);
}

// Named as `gpuscope report` names them: the file and why.
void View::draw_job_left_out() {
  stats_.panels.push_back("left_out");
  const std::vector<LeftOut>& lo = job_->left_out;
  const std::size_t shown = std::min<std::size_t>(lo.size(), 4);
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.72f, 0.2f, 1));
  ImGui::TextUnformatted("Left out of the job (the other ranks are shown):");
  for (std::size_t i = 0; i < lo.size(); ++i) {
    const std::string line = lo[i].file.empty() ? lo[i].problem : cat(lo[i].file, ": ", lo[i].problem);
    stats_.job.left_out.push_back(line);
    if (i < shown) ImGui::BulletText("%s", line.c_str());
  }
  if (lo.size() > shown) {
    ImGui::TextDisabled("… and %s more (hover)", format::count(lo.size() - shown).c_str());
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      for (const std::string& line : stats_.job.left_out) ImGui::TextUnformatted(line.c_str());
      ImGui::EndTooltip();
    }
  }
  ImGui::PopStyleColor();
}

// [SECTION] Overview: who waited, who made the others wait ------------------------------------------

// One cell per rank, most wait caused first: the upper bar (red) is the wait
// it made the others suffer, the lower (blue) the wait it suffered, both
// scaled to the job's largest. The first cell with any wait caused is the
// culprit: outlined, and named in words beside the stragglers list.
void View::draw_job_overview(float height) {
  stats_.panels.push_back("job_overview");
  JobStats& js = stats_.job;
  ImGui::BeginChild("job_overview", ImVec2(0, height), true, ImGuiWindowFlags_NoScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float list_w = std::min(420.0f, avail * 0.4f);
  const float cells_w = std::max(50.0f, avail - list_w - 16);
  const float inner_h = height - ImGui::GetStyle().WindowPadding.y * 2;
  TimeNs max_caused = 1, max_waited = 1;
  for (const RankWait& w : job_waits_)
    max_caused = std::max(max_caused, w.caused_ns), max_waited = std::max(max_waited, w.waited_ns);
  const float n = static_cast<float>(std::max<std::size_t>(job_waits_.size(), 1));
  const float cell = std::clamp(cells_w / n, 2.0f, 40.0f);
  const float bar_h = (inner_h - 16) / 2;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  std::int64_t hovered = -1;
  for (std::size_t i = 0; i < job_waits_.size(); ++i) {
    const RankWait& w = job_waits_[i];
    const JobRank& r = job_->ranks[w.rank];
    js.overview_order.push_back(r.rank);
    const float x = origin.x + static_cast<float>(i) * cell;
    if (x + cell > origin.x + cells_w + 0.5f) continue;  // more ranks than pixels: the first ones (the culprits) fit
    const float top = origin.y, mid = origin.y + bar_h, bottom = origin.y + 2 * bar_h;
    dl->AddRectFilled(ImVec2(x, top), ImVec2(x + cell - 1, bottom), IM_COL32(30, 33, 40, 255));
    const float hc = bar_h * static_cast<float>(static_cast<double>(w.caused_ns) / static_cast<double>(max_caused));
    const float hw = bar_h * static_cast<float>(static_cast<double>(w.waited_ns) / static_cast<double>(max_waited));
    if (hc > 0) dl->AddRectFilled(ImVec2(x, mid - hc), ImVec2(x + cell - 1, mid), kCausedColor);
    if (hw > 0) dl->AddRectFilled(ImVec2(x, mid + 1), ImVec2(x + cell - 1, mid + 1 + hw), kWaitedColor);
    // Rank numbers under the cells where they fit; the culprit's always.
    if (cell >= 18 || (i == 0 && w.caused_ns > 0)) {
      const std::string label = cell >= 18 ? std::to_string(r.rank) : cat("rank ", std::to_string(r.rank));
      dl->AddText(ImVec2(x + 2, bottom + 1),
                  i == 0 && w.caused_ns > 0 ? kLastArrivalColor : IM_COL32(190, 190, 190, 255), label.c_str());
    }
    if (i == 0 && w.caused_ns > 0) {
      js.overview_marked = r.rank;
      dl->AddRect(ImVec2(x - 1, top - 1), ImVec2(x + cell, bottom + 1), kLastArrivalColor, 0, 0, 2);
    }
    if (mouse.x >= x && mouse.x < x + cell && mouse.y >= top && mouse.y < bottom + 14)
      hovered = static_cast<std::int64_t>(i);
  }
  ImGui::Dummy(ImVec2(cells_w, inner_h));
  if (hovered >= 0 && ImGui::IsWindowHovered()) {
    const RankWait& w = job_waits_[static_cast<std::size_t>(hovered)];
    const JobRank& r = job_->ranks[w.rank];
    ImGui::SetTooltip(
        "%s\nmade the others wait %s (last at %s collectives, critical in %s steps)\nwaited %s\nclick: "
        "show it on the timeline; double-click: open it",
        rank_header(r).c_str(), format::duration(w.caused_ns).c_str(), format::count(w.last_arrivals).c_str(),
        format::count(w.critical_steps).c_str(), format::duration(w.waited_ns).c_str());
    if (ImGui::IsMouseDoubleClicked(0))
      open_rank(w.rank);
    else if (ImGui::IsMouseClicked(0))
      job_scroll_to_ = static_cast<std::int64_t>(w.rank);
  }
  // Beside it: the job analysis's stragglers, in words.
  ImGui::SameLine(cells_w + 16);
  ImGui::BeginGroup();
  const std::vector<Straggler>& st = job_->profile.stragglers;
  if (st.empty() || st.front().wait_caused_ns == 0) {
    ImGui::TextDisabled(job_->profile.collectives.empty() ? "no collectives matched across ranks: no waits to tell"
                                                          : "no rank made the others wait");
  } else {
    ImGui::Text("made others wait (red) · waited (blue)");
    for (std::size_t i = 0; i < st.size() && i < 3; ++i) {
      if (st[i].wait_caused_ns == 0) break;
      js.stragglers.push_back(st[i].rank);
      ImGui::Text("rank %d: %s caused, last at %s, waited %s", st[i].rank,
                  format::duration(st[i].wait_caused_ns).c_str(), format::count(st[i].last_arrivals).c_str(),
                  format::duration(st[i].waited_ns).c_str());
    }
  }
  ImGui::EndGroup();
  ImGui::EndChild();
}

// [SECTION] Timeline: ranks, utilization, collective parts ------------------------------------------

void View::draw_job_timeline(float height) {
  stats_.panels.push_back("timeline");
  ImGui::BeginChild("job_timeline", ImVec2(0, height), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float total_w = ImGui::GetContentRegionAvail().x;
  const float scrollbar = ImGui::GetStyle().ScrollbarSize;
  const float x0 = origin.x + layout_.label_width;
  const float width = std::max(10.0f, total_w - layout_.label_width - scrollbar);
  timeline_width_ = width;
  stats_.timeline_x0 = x0;
  stats_.timeline_width_px = width;
  draw_ruler(ImGui::GetWindowDrawList(), x0, origin.y, width);
  ImGui::Dummy(ImVec2(total_w, kRulerHeight));  // the ruler draw_ruler() drew

  ImGui::BeginChild("job_ranks", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 win_pos = ImGui::GetWindowPos();
  const float top = win_pos.y, bottom = win_pos.y + ImGui::GetWindowHeight();
  timeline_input(x0, width, top, bottom);
  stats_.view_start = view_start();
  stats_.view_end = view_end();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  job_hovered_instance_.reset();
  job_hovered_block_.reset();
  job_rank_y_.assign(job_->ranks.size(), std::numeric_limits<float>::quiet_NaN());

  const float y_start = ImGui::GetCursorScreenPos().y;
  if (job_scroll_to_ >= 0) {
    float y = 0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(job_scroll_to_) && r < job_->ranks.size(); ++r)
      y += rank_height(job_->ranks[r], job_collapsed_[r] != 0);
    ImGui::SetScrollY(y);
    job_scroll_to_ = -1;
  }
  float y = y_start;
  for (std::size_t r = 0; r < job_->ranks.size(); ++r) y += draw_job_rank(dl, r, origin.x, x0, width, y, top, bottom);
  draw_job_instance(dl, x0, width, top, bottom);
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsWindowHovered() && io.MousePos.x >= x0 && io.MousePos.x <= x0 + width)
    dl->AddLine(ImVec2(io.MousePos.x, top), ImVec2(io.MousePos.x, bottom), IM_COL32(255, 255, 255, 40));
  ImGui::SetCursorScreenPos(ImVec2(origin.x, y_start));
  ImGui::Dummy(ImVec2(total_w - scrollbar, std::max(1.0f, y - y_start)));

  // Tooltips and clicks, now that the frame knows what is under the mouse.
  if (!dragging_ && ImGui::IsWindowHovered() && job_hovered_instance_) {
    const CollectiveInstance& c = job_->profile.collectives[static_cast<std::size_t>(*job_hovered_instance_)];
    ImGui::SetTooltip("%s #%u: last arrival rank %d, others waited %s\nclick: link its parts on every rank",
                      c.kind.c_str(), c.index, c.last_rank, format::duration(c.wait_ns).c_str());
  }
  if (click_pending_ && ImGui::IsMouseReleased(0)) {
    click_pending_ = false;
    if (job_hovered_instance_) {
      select_instance(*job_hovered_instance_);
    } else if (job_hovered_block_) {
      const TimeNs pad = std::max<TimeNs>((job_hovered_block_->end - job_hovered_block_->start) / 10, 10);
      zoom_to(job_hovered_block_->start - pad, job_hovered_block_->end + pad);
    } else if (io.MousePos.x >= x0) {
      job_instance_ = -1;
    }
  }
  ImGui::EndChild();
  ImGui::EndChild();
}

// A rank: its header, then per GPU a utilization lane and a lane of its
// collective parts. Returns its height (measured only when off screen).
float View::draw_job_rank(ImDrawList* dl, std::size_t r, float left, float x0, float width, float y, float top,
                          float bottom) {
  const JobRank& rank = job_->ranks[r];
  const bool collapsed = job_collapsed_[r] != 0;
  const float h = rank_height(rank, collapsed);
  JobRankStats rs;
  rs.rank = rank.rank;
  rs.file = rank.file;
  rs.host = rank.host;
  rs.header = rank_header(rank);
  rs.offset_ns = rank.offset;
  rs.y = y;
  rs.collapsed = collapsed;
  rs.gpus = static_cast<std::uint32_t>(rank.gpus.size());
  rs.visible = y + h >= top && y <= bottom;
  job_rank_y_[r] = y;
  if (rs.visible) {
    // The header: its +/- folds the rank's lanes; a double-click on the rest
    // (or the button) opens the rank in full.
    ImGui::SetCursorScreenPos(ImVec2(left, y));
    ImGui::PushID(static_cast<int>(r));
    const bool culprit = stats_.job.overview_marked == rank.rank;
    dl->AddRectFilled(ImVec2(left, y), ImVec2(x0 + width, y + kHeaderH - 2), IM_COL32(45, 48, 60, 255));
    if (ImGui::InvisibleButton("##fold", ImVec2(18, kHeaderH - 2))) job_collapsed_[r] = collapsed ? 0 : 1;
    stats_.job.fold_targets.push_back(target(cat("rank ", std::to_string(rank.rank))));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(collapsed ? "show its lanes" : "hide its lanes");
    ImGui::SameLine(0, 0);
    ImGui::InvisibleButton("##rank", ImVec2(std::max(10.0f, x0 + width - left - 78), kHeaderH - 2));
    stats_.job.rank_targets.push_back(target(cat("rank ", std::to_string(rank.rank))));
    if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(0)) open_rank(r);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s\nclock shifted by %s onto the job clock\n%s kernels\ndouble-click: open this rank in full",
                        rank.file.c_str(), format::duration(rank.offset).c_str(), format::count(rank.kernels).c_str());
    dl->AddText(ImVec2(left + 6, y + 2), culprit ? kLastArrivalColor : IM_COL32(220, 220, 220, 255),
                cat(collapsed ? "+ " : "- ", rs.header).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("open")) open_rank(r);
    ImGui::PopID();
  }
  if (!collapsed && rs.visible) {
    float gy = y + kHeaderH;
    for (std::size_t g = 0; g < rank.gpus.size(); ++g, gy += kUtilH + kPartsH + kGpuGap) {
      if (gy + kUtilH + kPartsH < top || gy > bottom) continue;
      const JobGpuLane& lane = rank.gpus[g];
      const float label_x = left + 8;
      // Utilization: the share of each pixel column with GPU work, from the histogram.
      const auto columns = static_cast<std::size_t>(width);
      lane_buf_.resize(columns);
      sample_utilization(rank, lane, view_start_, view_span_ / static_cast<double>(columns), lane_buf_);
      stats_.lane_columns += columns;
      dl->AddText(ImVec2(label_x, gy + 1), IM_COL32(170, 170, 170, 255),
                  cat("GPU ", std::to_string(lane.device), " utilization").c_str());
      dl->AddRectFilled(ImVec2(x0, gy), ImVec2(x0 + width, gy + kUtilH - 1), IM_COL32(30, 33, 40, 255));
      std::size_t c = 0;
      while (c < columns) {
        const int hc = static_cast<int>(std::lround(lane_buf_[c].busy * (kUtilH - 2)));
        std::size_t e = c + 1;
        while (e < columns && static_cast<int>(std::lround(lane_buf_[e].busy * (kUtilH - 2))) == hc) ++e;
        if (hc > 0)
          dl->AddRectFilled(ImVec2(x0 + static_cast<float>(c), gy + kUtilH - 1 - static_cast<float>(hc)),
                            ImVec2(x0 + static_cast<float>(e), gy + kUtilH - 1), kUtilizationColor);
        c = e;
      }
      dl->AddText(ImVec2(label_x, gy + kUtilH), IM_COL32(170, 170, 170, 255),
                  lane.linked ? "  collectives" : "  communication");
      draw_job_parts(dl, r, g, x0, width, gy + kUtilH, rs);
      rs.lanes += 2;
    }
  }
  stats_.job.rank_list.push_back(std::move(rs));
  return h;
}

// The parts of one GPU lane in view: each at least 3 px wide on its own, runs
// of narrower ones folded into one block (click: zoom into it).
void View::draw_job_parts(ImDrawList* dl, std::size_t r, std::size_t g, float x0, float width, float y,
                          JobRankStats& rs) {
  const JobRank& rank = job_->ranks[r];
  const std::vector<CollectivePart>& parts = rank.gpus[g].parts;
  dl->AddRectFilled(ImVec2(x0, y), ImVec2(x0 + width, y + kPartsH - 1), IM_COL32(26, 28, 34, 255));
  if (parts.empty()) return;
  const double ppn = px_per_ns(width);
  const TimeNs vs = view_start() - rank.offset, ve = view_end() - rank.offset;
  const auto min_ns = static_cast<TimeNs>(std::ceil(kMinVisiblePx / ppn));
  auto x_of = [&](TimeNs t) {
    return x0 + static_cast<float>(std::clamp(static_cast<double>(t - vs) * ppn, -10.0, width + 10.0));
  };
  auto by_start = [](const CollectivePart& p, TimeNs t) { return p.start < t; };
  std::size_t i = static_cast<std::size_t>(std::lower_bound(parts.begin(), parts.end(), vs, by_start) - parts.begin());
  if (i > 0 && parts[i - 1].end > vs) --i;  // one that began before the view and reaches into it
  const ImVec2 m = ImGui::GetIO().MousePos;
  const bool row_hovered = ImGui::IsWindowHovered() && m.y >= y && m.y < y + kPartsH && m.x >= x0;
  while (i < parts.size() && parts[i].start < ve) {
    const CollectivePart& p = parts[i];
    if (p.end - p.start >= min_ns) {
      const float xa = x_of(p.start), xb = std::max(x_of(p.end), xa + 1);
      dl->AddRectFilled(ImVec2(xa, y + 1), ImVec2(xb, y + kPartsH - 2), kPartColor);
      ++rs.parts_drawn;
      const std::int64_t inst = instance_of(*job_, r, g, i);
      if (inst >= 0 && stats_.job.part_targets.size() < 256)
        stats_.job.part_targets.push_back(
            {cat("rank ", std::to_string(rank.rank), " #", std::to_string(inst)), (xa + xb) / 2, y + kPartsH / 2});
      if (row_hovered && m.x >= xa && m.x < xb) job_hovered_instance_ = inst >= 0 ? std::optional(inst) : std::nullopt;
      ++i;
      continue;
    }
    // A run of short parts: everything starting within 3 px of the run's end joins it.
    const std::size_t first = i;
    TimeNs run_end = p.end;
    ++i;
    while (i < parts.size()) {
      const auto j = static_cast<std::size_t>(
          std::lower_bound(parts.begin() + static_cast<std::ptrdiff_t>(i), parts.end(), run_end + min_ns, by_start) -
          parts.begin());
      if (j == i) break;
      for (std::size_t k = j > i + 8 ? j - 8 : i; k < j; ++k) run_end = std::max(run_end, parts[k].end);
      i = j;
    }
    const float xa = x_of(parts[first].start), xb = std::max(x_of(run_end), xa + 1);
    dl->AddRectFilled(ImVec2(xa, y + 1), ImVec2(xb, y + kPartsH - 2), scale_brightness(kPartColor, 0.7f));
    rs.parts_folded += i - first;
    if (i - first == 1) {
      const std::int64_t inst = instance_of(*job_, r, g, first);
      if (row_hovered && m.x >= xa - 1 && m.x < xb + 1 && inst >= 0) job_hovered_instance_ = inst;
    } else if (row_hovered && m.x >= xa && m.x < xb) {
      job_hovered_block_ = TimeRange{parts[first].start + rank.offset, run_end + rank.offset};
    }
  }
}

// [SECTION] The selected instance --------------------------------------------------------------------

// Every rank's part of the selected instance outlined (yellow), the last
// arrival's in red with a marker, and a red line at its arrival across the
// ranks: the others' parts start before it and wait.
void View::draw_job_instance(ImDrawList* dl, float x0, float width, float top, float bottom) {
  if (job_instance_ < 0) return;
  const auto index = static_cast<std::size_t>(job_instance_);
  const CollectiveInstance& c = job_->profile.collectives[index];
  JobStats& js = stats_.job;
  js.instance = job_instance_;
  js.instance_kind = c.kind;
  js.last_arrival_rank = c.last_rank;
  js.instance_wait_ns = c.wait_ns;
  js.last_arrival_text =
      cat("last arrival: rank ", std::to_string(c.last_rank), ", others waited ", format::duration(c.wait_ns));
  const double ppn = px_per_ns(width);
  auto x_of = [&](TimeNs t) {
    return x0 + static_cast<float>(std::clamp(static_cast<double>(t - view_start_) * ppn, -10.0, width + 10.0));
  };
  for (const InstancePart& p : instance_parts(*job_, index)) {
    const JobRank& rank = job_->ranks[p.rank];
    JobPartStats ps;
    ps.rank = rank.rank;
    ps.start_ns = p.range.start;
    ps.waited_ns = p.waited_ns;
    ps.last = p.last;
    ps.x0 = x_of(p.range.start);
    ps.x1 = std::max(x_of(p.range.end), ps.x0 + 1);
    const float ry = job_rank_y_[p.rank];
    if (!std::isnan(ry) && !job_collapsed_[p.rank]) {
      ps.y = ry + kHeaderH + static_cast<float>(p.gpu) * (kUtilH + kPartsH + kGpuGap) + kUtilH;
      ps.visible = ps.y + kPartsH >= top && ps.y <= bottom && ps.x1 >= x0 && ps.x0 <= x0 + width;
      if (ps.visible) {
        // The part's wait (its start to the last arrival) in the "waited" blue.
        const float xw = std::min(x_of(c.last_arrival_ns), ps.x1);
        if (!p.last && xw > ps.x0)
          dl->AddRectFilled(ImVec2(ps.x0, ps.y + 1), ImVec2(xw, ps.y + kPartsH - 2),
                            (kWaitedColor & 0x00FFFFFF) | 0xC0000000);
        const ImU32 color = p.last ? kLastArrivalColor : kHighlightColor;
        dl->AddRect(ImVec2(ps.x0 - 1, ps.y), ImVec2(ps.x1 + 1, ps.y + kPartsH - 1), color, 0, 0, p.last ? 3.0f : 2.0f);
        if (p.last) {
          dl->AddTriangleFilled(ImVec2(ps.x0 - 6, ps.y - 6), ImVec2(ps.x0 + 6, ps.y - 6), ImVec2(ps.x0, ps.y),
                                kLastArrivalColor);
          dl->AddText(ImVec2(ps.x1 + 4, ps.y), kLastArrivalColor, "last arrival");
        }
      }
    }
    js.instance_parts.push_back(ps);
  }
  const float xl = x_of(c.last_arrival_ns);
  if (xl >= x0 && xl <= x0 + width) dl->AddLine(ImVec2(xl, top), ImVec2(xl, bottom), IM_COL32(255, 50, 50, 110));
}

// [SECTION] Details ------------------------------------------------------------------------------------

void View::draw_job_details(float height) {
  stats_.panels.push_back("details");
  ImGui::BeginChild("job_details", ImVec2(0, height), true);
  if (job_instance_ < 0) {
    ImGui::TextDisabled(
        "Click a rank's collective part: its instance is linked on every rank and the last arrival "
        "marked. Double-click a rank's header to open it in full.");
    if (!job_->profile.clock_alignment.empty())
      ImGui::TextDisabled("clocks: %s", job_->profile.clock_alignment.c_str());
    draw_job_findings();
  } else {
    const CollectiveInstance& c = job_->profile.collectives[static_cast<std::size_t>(job_instance_)];
    ImGui::Text("%s #%u%s  ·  %s", c.kind.c_str(), c.index,
                c.step >= 0 ? cat(", step ", std::to_string(c.step)).c_str() : "",
                format::duration(c.range.end - c.range.start).c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.35f, 0.3f, 1));
    ImGui::TextUnformatted(stats_.job.last_arrival_text.c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::TextDisabled("(arrived %s after the first)",
                        format::duration(c.last_arrival_ns - c.first_arrival_ns).c_str());
    if (c.bytes > 0) ImGui::Text("%s", format::bytes(c.bytes).c_str());
    for (const JobStep& st : job_->profile.job_steps)
      if (st.index == c.step && st.critical_rank >= 0)
        ImGui::Text("step %d: rank %d made the others wait most (%s in the step's collectives)", st.index,
                    st.critical_rank, format::duration(st.wait_ns).c_str());
    for (std::size_t r = 0; r < job_->ranks.size(); ++r)
      if (job_->ranks[r].rank == c.last_rank) {
        ImGui::SameLine();
        if (ImGui::SmallButton("show it (F)")) focus_instance();
        ImGui::SameLine();
        if (ImGui::SmallButton("open the last rank")) open_rank(r);
      }
    draw_job_arrivals();
  }
  ImGui::EndChild();
}

// The job's findings as `gpuscope report DIR` orders them, each with its
// saving (simulated over every rank, as the report's); open a rank for the
// findings of that rank alone.
void View::draw_job_findings() {
  const std::vector<Finding>& fs = job_->profile.findings;
  if (fs.empty()) {
    ImGui::TextDisabled("the job's findings: none");
    return;
  }
  ImGui::Text("The job's findings (as gpuscope report DIR):");
  for (const Finding& f : fs) {
    const std::string saving =
        f.saving_source == SavingSource::simulated
            ? (f.saving_note.empty() ? cat("saves ", format::duration(f.saving_ns), " (simulated)")
                                     : cat("simulated: ", f.saving_note))
        : f.saving_ns > 0 ? cat("saves ", format::duration(f.saving_ns), " (rule of thumb)")
                          : std::string("no time saving estimated");
    JobFindingStats s{f.id, f.saving_ns, std::string(to_string(f.saving_source)), cat(f.title, " — ", saving)};
    ImGui::Bullet();
    ImGui::TextWrapped("%s", s.text.c_str());
    stats_.job.findings.push_back(std::move(s));
  }
}

// Every rank's arrival at the selected instance, latest first: who came
// late and by how much, and how long each of the others waited.
void View::draw_job_arrivals() {
  const CollectiveInstance& c = job_->profile.collectives[static_cast<std::size_t>(job_instance_)];
  std::vector<InstancePart> parts = instance_parts(*job_, static_cast<std::size_t>(job_instance_));
  std::stable_sort(parts.begin(), parts.end(),
                   [](const InstancePart& a, const InstancePart& b) { return a.range.start > b.range.start; });
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV;
  const float h = ImGui::GetContentRegionAvail().y;
  if (h < ImGui::GetTextLineHeightWithSpacing() * 2 || !ImGui::BeginTable("arrivals", 4, kFlags, ImVec2(0, h))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("rank");
  ImGui::TableSetupColumn("arrived after the first");
  ImGui::TableSetupColumn("waited");
  ImGui::TableSetupColumn("part");
  ImGui::TableHeadersRow();
  for_visible_rows(parts.size(), [&](int i) {
    const InstancePart& p = parts[static_cast<std::size_t>(i)];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (p.last) ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.35f, 0.3f, 1));
    ImGui::Text("%d%s", job_->ranks[p.rank].rank, p.last ? " (last)" : "");
    if (p.last) ImGui::PopStyleColor();
    text_cell(format::duration(p.range.start - c.first_arrival_ns));
    text_cell(format::duration(p.waited_ns));
    text_cell(format::duration(p.range.end - p.range.start));
  });
  ImGui::EndTable();
}

}  // namespace gpuscope::viewer
