#include "viewer/frame_report.h"

#include <imgui.h>

#include <cstdio>

#include "trace/time_columns.h"

namespace gpuscope::viewer {

namespace {

using nlohmann::json;

json font_json(const FontStatus& font) {
  json ascii = json::array();
  for (ImWchar c : font.ascii) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
    ascii.push_back(code);
  }
  return {{"file", font.fallback() ? json(nullptr) : json(font.file)},
          {"message", font.message},
          {"ascii_stand_ins", std::move(ascii)}};
}

json tracks_json(const FrameStats& st) {
  json tracks = json::array();
  for (const TrackStats& ts : st.tracks)
    tracks.push_back({{"group", ts.group},
                      {"label", ts.label},
                      {"track", ts.track},
                      {"visible", ts.visible},
                      {"collapsed", ts.collapsed},
                      {"rows", ts.rows},
                      {"y", ts.y},
                      {"height", ts.height},
                      {"drawn", ts.drawn},
                      {"merged_blocks", ts.merged_blocks},
                      {"merged_events", ts.merged_events}});
  return tracks;
}

json counter_lanes_json(const FrameStats& st) {
  json lanes = json::array();
  for (const CounterLaneStats& l : st.counter_lanes)
    lanes.push_back({{"group", l.group},
                     {"label", l.label},
                     {"series", l.series},
                     {"unit", l.unit},
                     {"device", l.device == kNoDevice ? json(nullptr) : json(l.device)},
                     {"y", l.y},
                     {"height", l.height},
                     {"visible", l.visible},
                     {"columns", l.columns},
                     {"peak", l.peak},
                     {"peak_time_ns", l.peak_time},
                     {"peak_text", l.peak_text},
                     {"peak_marked", l.peak_marked}});
  return lanes;
}

// Kernels in view per category: what the colours stand for.
json kernels_by_category_json(const FrameStats& st) {
  json by_category = json::array();
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (st.kernel_ns_single[i] == 0 && st.kernel_ns_folded[i] == 0 && st.kernel_px[i] == 0) continue;
    by_category.push_back({{"category", std::string(to_string(static_cast<KernelCategory>(c)))},
                           {"single_ns", st.kernel_ns_single[i]},
                           {"folded_ns", st.kernel_ns_folded[i]},
                           {"px", st.kernel_px[i]}});
  }
  return by_category;
}

// The hotspot rows as a user reads them (only those on screen).
json hotspots_json(const FrameStats& st) {
  json hotspots = json::array();
  for (const HotspotRow& h : st.hotspot_list)
    hotspots.push_back({{"name", h.name},
                        {"kernel", h.kernel},
                        {"category", h.category},
                        {"total", h.total},
                        {"share", h.share},
                        {"count", h.count}});
  return hotspots;
}

// The op rows on screen as drawn: {column header: cell} in the table's order.
json ops_json(const FrameStats& st) {
  json rows = json::array();
  for (const std::vector<std::string>& cells : st.op_list) {
    json row = json::object();
    for (std::size_t c = 0; c < cells.size() && c < st.op_columns.size(); ++c) row[st.op_columns[c]] = cells[c];
    rows.push_back(std::move(row));
  }
  return rows;
}

json selection_json(const View& view, const Trace& t) {
  const Selection& sel = view.selection();
  if (!sel.valid()) return nullptr;
  const auto tc = detail::time_columns(t.tables(), sel.table);
  json s = {{"table", std::string(to_string(sel.table))},
            {"row", sel.row},
            {"start_ns", (*tc.start)[sel.row]},
            {"end_ns", (*tc.end)[sel.row]},
            {"track", (*tc.track)[sel.row]}};
  if (sel.table == TableId::kernels) {
    s["name"] = std::string(t.str(t.kernels().name[sel.row]));
    s["category"] = std::string(to_string(t.kernels().category_at(sel.row)));
    const RowIndex api = t.launching_api(OpRef{OpTable::kernel, sel.row});
    s["launching_api"] = api == kNoRow ? json(nullptr) : json(std::string(t.str(t.api_calls().name[api])));
  }
  // The details panel's fields as drawn (empty when another tab was showing).
  json d = json::array();
  for (const auto& [key, value] : view.stats().details) d.push_back(json::array({key, value}));
  s["details"] = std::move(d);
  return s;
}

// The job view as drawn; null when no job is open.
json job_json(const View& view, const FrameStats& st) {
  const JobData* job = view.job();
  if (!job) return nullptr;
  const JobStats& js = st.job;
  json ranks = json::array();
  for (const JobRankStats& r : js.rank_list)
    ranks.push_back({{"rank", r.rank},
                     {"file", r.file},
                     {"host", r.host},
                     {"header", r.header},
                     {"offset_ns", r.offset_ns},
                     {"y", r.y},
                     {"visible", r.visible},
                     {"collapsed", r.collapsed},
                     {"gpus", r.gpus},
                     {"lanes", r.lanes},
                     {"parts_drawn", r.parts_drawn},
                     {"parts_folded", r.parts_folded}});
  json parts = json::array();
  for (const JobPartStats& p : js.instance_parts)
    parts.push_back({{"rank", p.rank},
                     {"x0", p.x0},
                     {"x1", p.x1},
                     {"y", p.y},
                     {"start_ns", p.start_ns},
                     {"waited_ns", p.waited_ns},
                     {"visible", p.visible},
                     {"last", p.last}});
  json instance = nullptr;
  if (js.instance >= 0)
    instance = {{"index", js.instance},
                {"kind", js.instance_kind},
                {"last_arrival_rank", js.last_arrival_rank},
                {"wait_ns", js.instance_wait_ns},
                {"last_arrival_text", js.last_arrival_text},
                {"parts", std::move(parts)}};
  json files = json::array();
  for (const JobRank& r : job->ranks) files.push_back(r.file);
  return {{"shown", js.shown},
          {"ranks", js.ranks},
          {"gpus", js.gpus},
          {"files", std::move(files)},
          {"window", {{"start_ns", job->window.start}, {"end_ns", job->window.end}}},
          {"collectives", job->profile.collectives.size()},
          {"clock_alignment", js.clock_alignment},
          {"rank_list", std::move(ranks)},
          {"overview_order", js.overview_order},
          {"overview_marked", js.overview_marked},
          {"stragglers", js.stragglers},
          {"left_out", js.left_out},
          {"instance", std::move(instance)},
          {"lane_bytes", job_lane_bytes(*job)}};
}

}  // namespace

nlohmann::json frame_report(const View& view, const ImDrawData* dd, const FrameReportContext& ctx) {
  const FrameStats& st = view.stats();
  json j;
  j["schema"] = "gpuscope.view-frame/1";
  j["file"] = ctx.file;
  j["size"] = {{"width", ctx.width}, {"height", ctx.height}};
  j["frames"] = ctx.frames;
  j["view"] = std::string(to_string(view.panel()));
  j["error"] = ctx.error.empty() ? json(nullptr) : json(ctx.error);
  j["message"] = st.message;
  j["damage"] = st.damage.empty() ? json(nullptr) : json(st.damage);
  j["panels"] = st.panels;
  j["vertices"] = dd ? dd->TotalVtxCount : 0;
  j["indices"] = dd ? dd->TotalIdxCount : 0;
  j["draw_lists"] = dd ? dd->CmdListsCount : 0;
  j["last_frame_ms"] = view.last_frame_ms();
  j["font"] = font_json(ctx.font);
  j["job"] = job_json(view, st);

  const Document* doc = view.document();
  if (!doc) {
    j["source"] = nullptr;
    j["selection"] = nullptr;
    j["tracks"] = json::array();
    j["visible_range"] = {{"start_ns", st.view_start}, {"end_ns", st.view_end}};
    j["timeline_width_px"] = st.timeline_width_px;
    j["lane_columns"] = st.lane_columns;
    return j;
  }
  const Trace& t = doc->trace();
  j["source"] = std::string(doc->source_label());
  j["source_kind"] = std::string(to_string(t.meta().source));
  j["trace"] = {
      {"begin_ns", t.begin_time()},    {"end_ns", t.end_time()},        {"kernels", t.kernels().size()},
      {"memcpys", t.memcpys().size()}, {"memsets", t.memsets().size()}, {"api_calls", t.api_calls().size()},
      {"ranges", t.ranges().size()},   {"tracks", t.tracks().size()},   {"devices", doc->index().activity().size()}};
  j["visible_range"] = {{"start_ns", st.view_start},
                        {"end_ns", st.view_end},
                        {"start_offset_ns", st.view_start - t.begin_time()},
                        {"end_offset_ns", st.view_end - t.begin_time()},
                        {"duration_ns", st.view_end - st.view_start}};
  j["timeline_width_px"] = st.timeline_width_px;
  j["tracks"] = tracks_json(st);
  j["drawn_items"] = st.drawn;
  j["merged_blocks"] = st.merged_blocks;
  j["merged_events"] = st.merged_events;
  j["kernels_by_category"] = kernels_by_category_json(st);
  j["folded_labels"] = st.folded_labels;
  j["lane_columns"] = st.lane_columns;
  j["counter_lanes"] = counter_lanes_json(st);
  j["step_sparklines"] = st.step_sparklines;
  j["match_markers"] = st.match_markers;
  j["flow_arrow"] = st.flow_arrow;
  j["critical_path_events"] = st.critical_path_events;
  j["critical_path_status"] = st.critical_path_status;
  j["evidence_bands"] = st.evidence_bands;
  j["rows"] = {{"hotspots", st.hotspot_rows}, {"categories", st.category_rows},        {"ops", st.op_rows},
               {"findings", st.finding_rows}, {"summary_devices", st.summary_devices}, {"compare", st.compare_rows}};
  j["hotspot_rows"] = hotspots_json(st);
  j["op_rows"] = ops_json(st);
  j["op_columns"] = st.op_columns;
  j["ops_by_shapes"] = view.ops_by_shapes();
  j["ops_message"] = st.ops_message;
  j["selected_op"] = st.selected_op.empty() ? json(nullptr) : json(st.selected_op);

  j["selection"] = selection_json(view, t);
  j["highlight"] = {{"label", view.matches_label()}, {"matches", view.matches().size()}};
  const auto profile = doc->profile();
  j["analysis"] = profile ? "done" : doc->analysis_failed() ? "failed" : "pending";
  if (profile) {
    j["findings"] = json::array();
    for (const Finding& f : profile->findings) j["findings"].push_back(f.id);
  }
  if (const Document* b = view.compare_document()) j["compare_file"] = b->path();
  j["load_seconds"] = {{"read", view.loader().read_seconds()}, {"index", view.loader().index_seconds()}};
  return j;
}

}  // namespace gpuscope::viewer
