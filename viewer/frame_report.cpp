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
                      {"label_shown", ts.label_shown},
                      {"track", ts.track},
                      {"visible", ts.visible},
                      {"collapsed", ts.collapsed},
                      {"rows", ts.rows},
                      {"y", ts.y},
                      {"height", ts.height},
                      {"drawn", ts.drawn},
                      {"merged_blocks", ts.merged_blocks},
                      {"merged_events", ts.merged_events},
                      {"gpu_ops", {{"kernels", ts.gpu_ops[0]}, {"memcpys", ts.gpu_ops[1]}, {"memsets", ts.gpu_ops[2]}}},
                      {"trace", ts.compared ? "B" : "A"}});
  return tracks;
}

json targets_json(const std::vector<ClickTarget>& ts) {
  json out = json::object();
  for (const ClickTarget& c : ts) out[c.label] = {{"x", c.x}, {"y", c.y}};
  return out;
}

// The Compare view: B, its analysis, where it sits on A's axis; the Compare
// tab's table as drawn, its headers, tabs and toggles.
json compare_json(const Document& b, const FrameStats& st) {
  json columns = json::array();
  for (const ClickTarget& c : st.compare_headers) columns.push_back(c.label);
  return {{"file", b.path()},
          {"analysis", b.profile()           ? "done"
                       : b.analysis_failed() ? "failed"
                                             : "pending"},
          {"offset_ns", st.compare_offset},
          {"align", st.compare_align},
          {"timeline", st.compare_timeline},
          {"table", st.compare_table},
          {"message", st.compare_message},
          {"columns", columns},
          {"headers", targets_json(st.compare_headers)},
          {"rows", st.compare_list},
          {"tabs", targets_json(st.compare_tabs)},
          {"toggles", targets_json(st.compare_toggles)}};
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
                     {"label_shown", l.label_shown},
                     {"label_x1", l.label_x1},
                     {"peak_x0", l.peak_x0},
                     {"peak_x1", l.peak_x1},
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

json window_rows_json(const std::vector<WindowRow>& rows, bool ops) {
  constexpr std::size_t kMaxRows = 100;
  json out = json::array();
  for (std::size_t i = 0; i < rows.size() && i < kMaxRows; ++i) {
    const WindowRow& r = rows[i];
    json j = {
        {"name", r.name}, {"count", r.count}, {"total_ns", r.total_ns}, {"share", r.share}, {"of_range", r.of_window}};
    if (ops) {
      j["with_children_ns"] = r.with_children_ns;
      j["count_with_children"] = r.count_with_children;
    } else {
      j["category"] = std::string(to_string(r.category));
    }
    out.push_back(std::move(j));
  }
  return out;
}

json window_stats_json(const WindowStats& ws) {
  json devices = json::array();
  for (const WindowDevice& d : ws.devices)
    devices.push_back({{"device", d.device},
                       {"kernels", d.kernels},
                       {"memcpys", d.memcpys},
                       {"memsets", d.memsets},
                       {"busy_ns", d.busy_ns},
                       {"idle_ns", d.idle_ns},
                       {"utilization", d.utilization},
                       {"kernel_busy_ns", d.kernel_busy_ns},
                       {"kernel_time_ns", d.kernel_time_ns},
                       {"concurrent_ns", d.concurrent_ns},
                       {"kernel_concurrency", d.kernel_concurrency},
                       {"mean_kernels_in_flight", d.mean_kernels_in_flight}});
  json streams = json::array();
  for (const WindowStream& s : ws.streams)
    streams.push_back({{"track", s.track},
                       {"device", s.device},
                       {"stream", s.stream},
                       {"kernels", s.kernels},
                       {"memcpys", s.memcpys},
                       {"memsets", s.memsets},
                       {"kernel_ns", s.kernel_ns},
                       {"busy_ns", s.busy_ns},
                       {"idle_ns", s.idle_ns},
                       {"busy_share", s.busy_share}});
  return {{"kernels", ws.kernels},
          {"memcpys", ws.memcpys},
          {"memsets", ws.memsets},
          {"kernel_time_ns", ws.kernel_time_ns},
          {"gpu_op_time_ns", ws.gpu_op_time_ns},
          {"devices", std::move(devices)},
          {"streams", std::move(streams)},
          {"kernel_names", window_rows_json(ws.kernel_names, false)},
          {"categories", window_rows_json(ws.categories, false)},
          {"ops", window_rows_json(ws.ops, true)}};
}

// The selected range: where, its length as written, its statistics; null without one.
json range_json(const View& view, const FrameStats& st, TimeNs origin) {
  const std::optional<TimeRange> r = view.range();
  if (!r) return nullptr;
  const std::shared_ptr<const WindowStats> ws = view.range_stats();
  return {{"start_ns", r->start},
          {"end_ns", r->end},
          {"start_offset_ns", r->start - origin},
          {"end_offset_ns", r->end - origin},
          {"duration_ns", r->duration()},
          {"length", st.range_length},
          {"band", {st.range_band.first, st.range_band.second}},
          {"status", st.range_status},
          {"device_rows", st.range_device_rows},
          {"kernel_rows", st.range_kernel_rows},
          {"stats", ws ? window_stats_json(*ws) : json(nullptr)}};
}

// The duration histogram open, its numbers and bins as drawn; null without one.
json histogram_json(const View& view, const FrameStats& st, const Trace& t) {
  const DurationHistogram* h = view.histogram();
  if (!h) return nullptr;
  json bins = json::array();
  for (const HistogramBin& b : st.histogram.bins)
    bins.push_back({{"lo_ns", b.lo}, {"hi_ns", b.hi}, {"count", b.count}, {"x", b.x}, {"y", b.y}});
  return {{"table", std::string(to_string(h->table))},
          {"name", std::string(t.str(h->name))},
          {"count", h->count},
          {"min_ns", h->min},
          {"median_ns", h->median},
          {"p99_ns", h->p99},
          {"max_ns", h->max},
          {"mean_ns", h->mean},
          {"total_ns", h->total},
          {"counts", h->counts},
          {"shown", st.histogram.shown},
          {"title", st.histogram.title},
          {"summary", st.histogram.summary},
          {"bins", std::move(bins)},
          {"selected_bin", st.histogram.selected_bin},
          {"step", st.histogram.step},
          {"next", {{"x", st.histogram.next_target.x}, {"y", st.histogram.next_target.y}}}};
}

// The Findings tab as drawn: how the savings stand, each finding's saving as
// written, the answers, the critical path's rows, the evidence stepped to.
json findings_json(const View& view, const FrameStats& st) {
  const Document* doc = view.document();
  const char* state = "not_simulated";
  switch (doc->savings()) {
    case Document::Savings::simulating:
      state = "simulating";
      break;
    case Document::Savings::simulated:
      state = "simulated";
      break;
    case Document::Savings::failed:
      state = "failed";
      break;
    case Document::Savings::not_simulated:
      break;
  }
  json rows = json::array();
  for (const FindingRow& f : st.finding_list)
    rows.push_back({{"id", f.id},
                    {"title", f.title},
                    {"saving", f.saving},
                    {"saving_ns", f.saving_ns},
                    {"saving_source", f.saving_source}});
  json helps = json::array();
  for (const HelpRow& h : st.help_rows)
    helps.push_back({{"id", h.id}, {"question", h.question}, {"verdict", h.verdict}, {"because", h.because}});
  json path = json::array();
  for (const PathRow& r : st.path_rows) path.push_back({{"label", r.label}, {"time", r.time}, {"share", r.share}});
  json evidence = nullptr;
  if (!view.selected_finding().empty())
    evidence = {{"finding", view.selected_finding()},
                {"index", view.evidence_index()},
                {"count", view.evidence().size()},
                {"current", view.evidence_index() < view.evidence().size()
                                ? json{{"start_ns", view.evidence()[view.evidence_index()].start},
                                       {"end_ns", view.evidence()[view.evidence_index()].end}}
                                : json(nullptr)},
                {"rows", st.evidence_rows},
                {"step", st.evidence_step},
                {"next", {{"x", st.evidence_next.x}, {"y", st.evidence_next.y}}},
                {"previous", {{"x", st.evidence_prev.x}, {"y", st.evidence_prev.y}}}};
  return {{"state", state},
          {"status", st.savings_status},
          {"rows", std::move(rows)},
          {"helps", std::move(helps)},
          {"critical_path", std::move(path)},
          {"evidence", std::move(evidence)}};
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
  const ImGuiIO& io = ImGui::GetIO();
  j["mouse"] = io.MousePos.x > -1e30f ? json{io.MousePos.x, io.MousePos.y} : json(nullptr);  // null: not on the window
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
  j["timeline_x0"] = st.timeline_x0;
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
  j["match_clusters"] = st.match_clusters;
  j["match_cluster_events"] = st.match_cluster_events;
  j["match_cluster_labels"] = st.match_cluster_labels;
  j["matches_in_view"] = st.matches_in_view;
  j["match_ticks"] = st.match_ticks;
  j["match_count_labels"] = st.match_count_labels;
  j["flow_arrow"] = st.flow_arrow;
  j["critical_path_events"] = st.critical_path_events;
  j["critical_path_status"] = st.critical_path_status;
  j["evidence_bands"] = st.evidence_bands;
  j["rows"] = {{"hotspots", st.hotspot_rows}, {"categories", st.category_rows},        {"ops", st.op_rows},
               {"findings", st.finding_rows}, {"summary_devices", st.summary_devices}, {"compare", st.compare_rows}};
  j["hotspot_rows"] = hotspots_json(st);
  j["finding_titles"] = json::array();
  for (const ClickTarget& c : st.finding_targets)
    j["finding_titles"].push_back({{"id", c.label}, {"x", c.x}, {"y", c.y}});
  j["hotspot_histogram_buttons"] = json::array();
  for (const ClickTarget& c : st.hotspot_histogram_targets)
    j["hotspot_histogram_buttons"].push_back({{"kernel", c.label}, {"x", c.x}, {"y", c.y}});
  j["op_rows"] = ops_json(st);
  j["op_columns"] = st.op_columns;
  j["ops_by_shapes"] = view.ops_by_shapes();
  j["ops_message"] = st.ops_message;
  j["selected_op"] = st.selected_op.empty() ? json(nullptr) : json(st.selected_op);

  j["legend"] = json::array();
  for (const auto& [name, color] : st.legend) j["legend"].push_back(json::array({name, color}));
  j["ruler_y"] = st.ruler_y;
  j["label_width"] = st.label_width;
  j["label_splitter"] = {{"x", st.label_splitter.x}, {"y", st.label_splitter.y}};
  j["bottom_height"] = st.bottom_height;
  j["bottom_splitter"] = {{"x", st.bottom_splitter.x}, {"y", st.bottom_splitter.y}};
  j["tabs"] = targets_json(st.tab_targets);
  j["range"] = range_json(view, st, t.begin_time());
  j["histogram"] = histogram_json(view, st, t);
  j["details_histogram"] = {{"x", st.details_histogram_target.x}, {"y", st.details_histogram_target.y}};
  j["selection"] = selection_json(view, t);
  j["highlight"] = {{"label", view.matches_label()}, {"matches", view.matches().size()}};
  const auto profile = doc->profile();
  j["analysis"] = profile ? "done" : doc->analysis_failed() ? "failed" : "pending";
  if (profile) {
    j["findings"] = json::array();
    for (const Finding& f : profile->findings) j["findings"].push_back(f.id);
    j["finding_savings"] = json::array();  // the Profile's, in its order
    for (const Finding& f : profile->findings)
      j["finding_savings"].push_back(
          {{"id", f.id}, {"saving_ns", f.saving_ns}, {"saving_source", std::string(to_string(f.saving_source))}});
  }
  j["savings"] = findings_json(view, st);
  if (const Document* b = view.compare_document()) {
    j["compare_file"] = b->path();
    j["compare"] = compare_json(*b, st);
  }
  j["load_seconds"] = {{"read", view.loader().read_seconds()}, {"index", view.loader().index_seconds()}};
  return j;
}

}  // namespace gpuscope::viewer
