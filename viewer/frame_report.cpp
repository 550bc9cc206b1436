// The frame report (frame_report.h): what the last frame drew, as JSON,
// written through trace/json_writer.h in the order a reader looks for things
// (schema and file first, then the trace, the timeline, the tables, the
// layout, the analysis).
#include "viewer/frame_report.h"

#include <imgui.h>

#include <cstdio>

#include "trace/json_writer.h"
#include "trace/time_columns.h"

namespace gpuscope::viewer {

namespace {

using json::Writer;

// {"x": …, "y": …} of a point on screen.
void point(Writer& out, std::string_view key, float x, float y) {
  out.key(key);
  out.begin_object();
  out.member("x", x);
  out.member("y", y);
  out.end_object();
}

void font_json(Writer& out, const FontStatus& font) {
  out.key("font");
  out.begin_object();
  out.key("file");
  if (font.fallback())
    out.null();
  else
    out.string(font.file);
  out.member("message", font.message);
  out.key("ascii_stand_ins");
  out.begin_array();
  for (ImWchar c : font.ascii) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
    out.string(code);
  }
  out.end_array();
  out.end_object();
}

void tracks_json(Writer& out, const FrameStats& st) {
  out.key("tracks");
  out.begin_array();
  for (const TrackStats& ts : st.tracks) {
    out.begin_object();
    out.member("group", ts.group);
    out.member("label", ts.label);
    out.member("label_shown", ts.label_shown);
    out.member("track", ts.track);
    out.member("visible", ts.visible);
    out.member("collapsed", ts.collapsed);
    out.member("rows", ts.rows);
    out.member("y", ts.y);
    out.member("height", ts.height);
    out.member("drawn", ts.drawn);
    out.member("merged_blocks", ts.merged_blocks);
    out.member("merged_events", ts.merged_events);
    out.key("gpu_ops");
    out.begin_object();
    out.member("kernels", ts.gpu_ops[0]);
    out.member("memcpys", ts.gpu_ops[1]);
    out.member("memsets", ts.gpu_ops[2]);
    out.end_object();
    out.member("trace", ts.compared ? "B" : "A");
    out.end_object();
  }
  out.end_array();
}

// {label: {"x", "y"}}; a label drawn twice keeps its last place.
void targets_json(Writer& out, const char* key, const std::vector<ClickTarget>& ts) {
  out.key(key);
  out.begin_object();
  for (std::size_t i = 0; i < ts.size(); ++i) {
    bool later = false;
    for (std::size_t j = i + 1; j < ts.size() && !later; ++j) later = ts[j].label == ts[i].label;
    if (!later) point(out, ts[i].label, ts[i].x, ts[i].y);
  }
  out.end_object();
}

// [{"<what>": label, "x", "y"}] of clickable rows.
void target_list(Writer& out, const char* key, const char* what, const std::vector<ClickTarget>& ts) {
  out.key(key);
  out.begin_array();
  for (const ClickTarget& c : ts) {
    out.begin_object();
    out.member(what, c.label);
    out.member("x", c.x);
    out.member("y", c.y);
    out.end_object();
  }
  out.end_array();
}

// The Compare view: B, its analysis, where it sits on A's axis; the Compare
// tab's table as drawn, its headers, tabs and toggles.
void compare_json(Writer& out, const Document& b, const FrameStats& st) {
  out.key("compare");
  out.begin_object();
  out.member("file", b.path());
  out.member("analysis", b.profile() ? "done" : b.analysis_failed() ? "failed" : "pending");
  out.member("offset_ns", st.compare_offset);
  out.member("align", st.compare_align);
  out.member("timeline", st.compare_timeline);
  out.member("table", st.compare_table);
  out.member("message", st.compare_message);
  out.key("columns");
  out.begin_array();
  for (const ClickTarget& c : st.compare_headers) out.string(c.label);
  out.end_array();
  targets_json(out, "headers", st.compare_headers);
  out.member("rows", st.compare_list);
  targets_json(out, "tabs", st.compare_tabs);
  targets_json(out, "toggles", st.compare_toggles);
  out.end_object();
}

void counter_lanes_json(Writer& out, const FrameStats& st) {
  out.key("counter_lanes");
  out.begin_array();
  for (const CounterLaneStats& l : st.counter_lanes) {
    out.begin_object();
    out.member("group", l.group);
    out.member("label", l.label);
    out.member("series", l.series);
    out.member("unit", l.unit);
    out.key("device");
    if (l.device == kNoDevice)
      out.null();
    else
      out.unsigned_integer(l.device);
    out.member("y", l.y);
    out.member("height", l.height);
    out.member("visible", l.visible);
    out.member("columns", l.columns);
    out.member("peak", l.peak);
    out.member("peak_time_ns", l.peak_time);
    out.member("peak_text", l.peak_text);
    out.member("label_shown", l.label_shown);
    out.member("label_x1", l.label_x1);
    out.member("peak_x0", l.peak_x0);
    out.member("peak_x1", l.peak_x1);
    out.member("peak_marked", l.peak_marked);
    out.end_object();
  }
  out.end_array();
}

// Kernels in view per category: what the colours stand for.
void kernels_by_category_json(Writer& out, const FrameStats& st) {
  out.key("kernels_by_category");
  out.begin_array();
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (st.kernel_ns_single[i] == 0 && st.kernel_ns_folded[i] == 0 && st.kernel_px[i] == 0) continue;
    out.begin_object();
    out.member("category", to_string(static_cast<KernelCategory>(c)));
    out.member("single_ns", st.kernel_ns_single[i]);
    out.member("folded_ns", st.kernel_ns_folded[i]);
    out.member("px", st.kernel_px[i]);
    out.end_object();
  }
  out.end_array();
}

// The hotspot rows as a user reads them (only those on screen).
void hotspots_json(Writer& out, const FrameStats& st) {
  out.key("hotspot_rows");
  out.begin_array();
  for (const HotspotRow& h : st.hotspot_list) {
    out.begin_object();
    out.member("name", h.name);
    out.member("kernel", h.kernel);
    out.member("category", h.category);
    out.member("total", h.total);
    out.member("share", h.share);
    out.member("count", h.count);
    out.end_object();
  }
  out.end_array();
}

// The op rows on screen as drawn: {column header: cell} in the table's order.
void ops_json(Writer& out, const FrameStats& st) {
  out.key("op_rows");
  out.begin_array();
  for (const std::vector<std::string>& cells : st.op_list) {
    out.begin_object();
    for (std::size_t c = 0; c < cells.size() && c < st.op_columns.size(); ++c) out.member(st.op_columns[c], cells[c]);
    out.end_object();
  }
  out.end_array();
}

void selection_json(Writer& out, const View& view, const Trace& t) {
  out.key("selection");
  const Selection& sel = view.selection();
  if (!sel.valid()) return out.null();
  const auto tc = detail::time_columns(t.tables(), sel.table);
  out.begin_object();
  out.member("table", to_string(sel.table));
  out.member("row", sel.row);
  out.member("start_ns", (*tc.start)[sel.row]);
  out.member("end_ns", (*tc.end)[sel.row]);
  out.member("track", (*tc.track)[sel.row]);
  if (sel.table == TableId::kernels) {
    out.member("name", t.str(t.kernels().name[sel.row]));
    out.member("category", to_string(t.kernels().category_at(sel.row)));
    const RowIndex api = t.launching_api(OpRef{OpTable::kernel, sel.row});
    out.key("launching_api");
    if (api == kNoRow)
      out.null();
    else
      out.string(t.str(t.api_calls().name[api]));
  }
  // The details panel's fields as drawn (empty when another tab was showing).
  out.member("details", view.stats().details);
  out.end_object();
}

void window_rows_json(Writer& out, const char* key, const std::vector<WindowRow>& rows, bool ops) {
  constexpr std::size_t kMaxRows = 100;
  out.key(key);
  out.begin_array();
  for (std::size_t i = 0; i < rows.size() && i < kMaxRows; ++i) {
    const WindowRow& r = rows[i];
    out.begin_object();
    out.member("name", r.name);
    out.member("count", r.count);
    out.member("total_ns", r.total_ns);
    out.member("share", r.share);
    out.member("of_range", r.of_window);
    if (ops) {
      out.member("with_children_ns", r.with_children_ns);
      out.member("count_with_children", r.count_with_children);
    } else {
      out.member("category", to_string(r.category));
    }
    out.end_object();
  }
  out.end_array();
}

void window_devices_json(Writer& out, const WindowStats& ws) {
  out.key("devices");
  out.begin_array();
  for (const WindowDevice& d : ws.devices) {
    out.begin_object();
    out.member("device", d.device);
    out.member("kernels", d.kernels);
    out.member("memcpys", d.memcpys);
    out.member("memsets", d.memsets);
    out.member("busy_ns", d.busy_ns);
    out.member("idle_ns", d.idle_ns);
    out.member("utilization", d.utilization);
    out.member("kernel_busy_ns", d.kernel_busy_ns);
    out.member("kernel_time_ns", d.kernel_time_ns);
    out.member("concurrent_ns", d.concurrent_ns);
    out.member("kernel_concurrency", d.kernel_concurrency);
    out.member("mean_kernels_in_flight", d.mean_kernels_in_flight);
    out.end_object();
  }
  out.end_array();
  out.key("streams");
  out.begin_array();
  for (const WindowStream& s : ws.streams) {
    out.begin_object();
    out.member("track", s.track);
    out.member("device", s.device);
    out.member("stream", s.stream);
    out.member("kernels", s.kernels);
    out.member("memcpys", s.memcpys);
    out.member("memsets", s.memsets);
    out.member("kernel_ns", s.kernel_ns);
    out.member("busy_ns", s.busy_ns);
    out.member("idle_ns", s.idle_ns);
    out.member("busy_share", s.busy_share);
    out.end_object();
  }
  out.end_array();
}

void window_stats_json(Writer& out, const WindowStats& ws) {
  out.begin_object();
  out.member("kernels", ws.kernels);
  out.member("memcpys", ws.memcpys);
  out.member("memsets", ws.memsets);
  out.member("kernel_time_ns", ws.kernel_time_ns);
  out.member("gpu_op_time_ns", ws.gpu_op_time_ns);
  window_devices_json(out, ws);
  window_rows_json(out, "kernel_names", ws.kernel_names, false);
  window_rows_json(out, "categories", ws.categories, false);
  window_rows_json(out, "ops", ws.ops, true);
  out.end_object();
}

// The selected range: where, its length as written, its statistics; null without one.
void range_json(Writer& out, const View& view, const FrameStats& st, TimeNs origin) {
  out.key("range");
  const std::optional<TimeRange> r = view.range();
  if (!r) return out.null();
  const std::shared_ptr<const WindowStats> ws = view.range_stats();
  out.begin_object();
  out.member("start_ns", r->start);
  out.member("end_ns", r->end);
  out.member("start_offset_ns", r->start - origin);
  out.member("end_offset_ns", r->end - origin);
  out.member("duration_ns", r->duration());
  out.member("length", st.range_length);
  out.member("band", st.range_band);
  out.member("status", st.range_status);
  out.member("device_rows", st.range_device_rows);
  out.member("kernel_rows", st.range_kernel_rows);
  out.key("stats");
  if (ws)
    window_stats_json(out, *ws);
  else
    out.null();
  out.end_object();
}

// The duration histogram open, its numbers and bins as drawn; null without one.
void histogram_json(Writer& out, const View& view, const FrameStats& st, const Trace& t) {
  out.key("histogram");
  const DurationHistogram* h = view.histogram();
  if (!h) return out.null();
  out.begin_object();
  out.member("table", to_string(h->table));
  out.member("name", t.str(h->name));
  out.member("count", h->count);
  out.member("min_ns", h->min);
  out.member("median_ns", h->median);
  out.member("p99_ns", h->p99);
  out.member("max_ns", h->max);
  out.member("mean_ns", h->mean);
  out.member("total_ns", h->total);
  out.member("counts", h->counts);
  out.member("shown", st.histogram.shown);
  out.member("title", st.histogram.title);
  out.member("summary", st.histogram.summary);
  out.key("bins");
  out.begin_array();
  for (const HistogramBin& b : st.histogram.bins) {
    out.begin_object();
    out.member("lo_ns", b.lo);
    out.member("hi_ns", b.hi);
    out.member("count", b.count);
    out.member("x", b.x);
    out.member("y", b.y);
    out.end_object();
  }
  out.end_array();
  out.member("selected_bin", st.histogram.selected_bin);
  out.member("step", st.histogram.step);
  point(out, "next", st.histogram.next_target.x, st.histogram.next_target.y);
  out.end_object();
}

const char* savings_state(Document::Savings s) {
  switch (s) {
    case Document::Savings::simulating:
      return "simulating";
    case Document::Savings::simulated:
      return "simulated";
    case Document::Savings::failed:
      return "failed";
    case Document::Savings::not_simulated:
      break;
  }
  return "not_simulated";
}

// The finding whose evidence is stepped through; null when none is selected.
void evidence_json(Writer& out, const View& view, const FrameStats& st) {
  out.key("evidence");
  if (view.selected_finding().empty()) return out.null();
  out.begin_object();
  out.member("finding", view.selected_finding());
  out.member("index", view.evidence_index());
  out.member("count", view.evidence().size());
  out.key("current");
  if (view.evidence_index() < view.evidence().size()) {
    out.begin_object();
    out.member("start_ns", view.evidence()[view.evidence_index()].start);
    out.member("end_ns", view.evidence()[view.evidence_index()].end);
    out.end_object();
  } else {
    out.null();
  }
  out.member("rows", st.evidence_rows);
  out.member("step", st.evidence_step);
  point(out, "next", st.evidence_next.x, st.evidence_next.y);
  point(out, "previous", st.evidence_prev.x, st.evidence_prev.y);
  out.end_object();
}

// The Findings tab as drawn: how the savings stand, each finding's saving as
// written, the answers, the critical path's rows, the evidence stepped to.
void findings_json(Writer& out, const View& view, const FrameStats& st) {
  out.key("savings");
  out.begin_object();
  out.member("state", savings_state(view.document()->savings()));
  out.member("status", st.savings_status);
  out.key("rows");
  out.begin_array();
  for (const FindingRow& f : st.finding_list) {
    out.begin_object();
    out.member("id", f.id);
    out.member("title", f.title);
    out.member("saving", f.saving);
    out.member("saving_ns", f.saving_ns);
    out.member("saving_source", f.saving_source);
    out.end_object();
  }
  out.end_array();
  out.key("helps");
  out.begin_array();
  for (const HelpRow& h : st.help_rows) {
    out.begin_object();
    out.member("id", h.id);
    out.member("question", h.question);
    out.member("verdict", h.verdict);
    out.member("because", h.because);
    out.end_object();
  }
  out.end_array();
  out.key("critical_path");
  out.begin_array();
  for (const PathRow& r : st.path_rows) {
    out.begin_object();
    out.member("label", r.label);
    out.member("time", r.time);
    out.member("share", r.share);
    out.end_object();
  }
  out.end_array();
  evidence_json(out, view, st);
  out.end_object();
}

void job_ranks_json(Writer& out, const JobStats& js) {
  out.key("rank_list");
  out.begin_array();
  for (const JobRankStats& r : js.rank_list) {
    out.begin_object();
    out.member("rank", r.rank);
    out.member("file", r.file);
    out.member("host", r.host);
    out.member("header", r.header);
    out.member("offset_ns", r.offset_ns);
    out.member("y", r.y);
    out.member("visible", r.visible);
    out.member("collapsed", r.collapsed);
    out.member("gpus", r.gpus);
    out.member("lanes", r.lanes);
    out.member("parts_drawn", r.parts_drawn);
    out.member("parts_folded", r.parts_folded);
    out.end_object();
  }
  out.end_array();
}

// The selected collective instance and its parts as drawn; null without one.
void job_instance_json(Writer& out, const JobStats& js) {
  out.key("instance");
  if (js.instance < 0) return out.null();
  out.begin_object();
  out.member("index", js.instance);
  out.member("kind", js.instance_kind);
  out.member("last_arrival_rank", js.last_arrival_rank);
  out.member("wait_ns", js.instance_wait_ns);
  out.member("last_arrival_text", js.last_arrival_text);
  out.key("parts");
  out.begin_array();
  for (const JobPartStats& p : js.instance_parts) {
    out.begin_object();
    out.member("rank", p.rank);
    out.member("x0", p.x0);
    out.member("x1", p.x1);
    out.member("y", p.y);
    out.member("start_ns", p.start_ns);
    out.member("waited_ns", p.waited_ns);
    out.member("visible", p.visible);
    out.member("last", p.last);
    out.end_object();
  }
  out.end_array();
  out.end_object();
}

// The job view as drawn; null when no job is open.
void job_json(Writer& out, const View& view, const FrameStats& st) {
  out.key("job");
  const JobData* job = view.job();
  if (!job) return out.null();
  const JobStats& js = st.job;
  out.begin_object();
  out.member("shown", js.shown);
  out.member("ranks", js.ranks);
  out.member("gpus", js.gpus);
  out.key("files");
  out.begin_array();
  for (const JobRank& r : job->ranks) out.string(r.file);
  out.end_array();
  out.key("window");
  out.begin_object();
  out.member("start_ns", job->window.start);
  out.member("end_ns", job->window.end);
  out.end_object();
  out.member("collectives", job->profile.collectives.size());
  out.member("clock_alignment", js.clock_alignment);
  job_ranks_json(out, js);
  out.member("overview_order", js.overview_order);
  out.member("overview_marked", js.overview_marked);
  out.member("stragglers", js.stragglers);
  out.member("left_out", js.left_out);
  job_instance_json(out, js);
  out.member("lane_bytes", job_lane_bytes(*job));
  out.end_object();
}

// What every frame has: the file, the window, the draw lists, the font, the job.
void frame_json(Writer& out, const View& view, const ImDrawData* dd, const FrameReportContext& ctx) {
  const FrameStats& st = view.stats();
  out.member("schema", "gpuscope.view-frame/1");
  out.member("file", ctx.file);
  out.key("size");
  out.begin_object();
  out.member("width", ctx.width);
  out.member("height", ctx.height);
  out.end_object();
  out.member("frames", ctx.frames);
  out.member("view", to_string(view.panel()));
  out.key("error");
  if (ctx.error.empty())
    out.null();
  else
    out.string(ctx.error);
  out.member("message", st.message);
  out.key("damage");
  if (st.damage.empty())
    out.null();
  else
    out.string(st.damage);
  out.member("panels", st.panels);
  out.member("vertices", dd ? dd->TotalVtxCount : 0);
  out.member("indices", dd ? dd->TotalIdxCount : 0);
  out.member("draw_lists", dd ? dd->CmdListsCount : 0);
  out.member("last_frame_ms", view.last_frame_ms());
  const ImGuiIO& io = ImGui::GetIO();
  out.key("mouse");  // null: not on the window
  if (io.MousePos.x > -1e30f)
    out.value(std::pair<float, float>(io.MousePos.x, io.MousePos.y));
  else
    out.null();
  font_json(out, ctx.font);
  job_json(out, view, st);
}

// The trace open and the part of it the timeline shows, as drawn.
void timeline_json(Writer& out, const Document& doc, const FrameStats& st) {
  const Trace& t = doc.trace();
  out.member("source", doc.source_label());
  out.member("source_kind", to_string(t.meta().source));
  out.key("trace");
  out.begin_object();
  out.member("begin_ns", t.begin_time());
  out.member("end_ns", t.end_time());
  out.member("kernels", t.kernels().size());
  out.member("memcpys", t.memcpys().size());
  out.member("memsets", t.memsets().size());
  out.member("api_calls", t.api_calls().size());
  out.member("ranges", t.ranges().size());
  out.member("tracks", t.tracks().size());
  out.member("devices", doc.index().activity().size());
  out.end_object();
  out.key("visible_range");
  out.begin_object();
  out.member("start_ns", st.view_start);
  out.member("end_ns", st.view_end);
  out.member("start_offset_ns", st.view_start - t.begin_time());
  out.member("end_offset_ns", st.view_end - t.begin_time());
  out.member("duration_ns", st.view_end - st.view_start);
  out.end_object();
  out.member("timeline_width_px", st.timeline_width_px);
  out.member("timeline_x0", st.timeline_x0);
  tracks_json(out, st);
  out.member("drawn_items", st.drawn);
  out.member("merged_blocks", st.merged_blocks);
  out.member("merged_events", st.merged_events);
  kernels_by_category_json(out, st);
  out.member("folded_labels", st.folded_labels);
  out.member("lane_columns", st.lane_columns);
  counter_lanes_json(out, st);
  out.member("step_sparklines", st.step_sparklines);
  out.member("match_markers", st.match_markers);
  out.member("match_clusters", st.match_clusters);
  out.member("match_cluster_events", st.match_cluster_events);
  out.member("match_cluster_labels", st.match_cluster_labels);
  out.member("matches_in_view", st.matches_in_view);
  out.member("match_ticks", st.match_ticks);
  out.member("match_count_labels", st.match_count_labels);
  out.member("flow_arrow", st.flow_arrow);
  out.member("critical_path_events", st.critical_path_events);
  out.member("critical_path_status", st.critical_path_status);
  out.member("evidence_bands", st.evidence_bands);
}

// The bottom panel's tables as drawn, and where the layout's handles are.
void tables_json(Writer& out, const View& view, const FrameStats& st) {
  out.key("rows");
  out.begin_object();
  out.member("hotspots", st.hotspot_rows);
  out.member("categories", st.category_rows);
  out.member("ops", st.op_rows);
  out.member("findings", st.finding_rows);
  out.member("summary_devices", st.summary_devices);
  out.member("compare", st.compare_rows);
  out.end_object();
  hotspots_json(out, st);
  target_list(out, "finding_titles", "id", st.finding_targets);
  target_list(out, "hotspot_histogram_buttons", "kernel", st.hotspot_histogram_targets);
  ops_json(out, st);
  out.member("op_columns", st.op_columns);
  out.member("ops_by_shapes", view.ops_by_shapes());
  out.member("ops_message", st.ops_message);
  out.key("selected_op");
  if (st.selected_op.empty())
    out.null();
  else
    out.string(st.selected_op);
  out.member("legend", st.legend);
  out.member("ruler_y", st.ruler_y);
  out.member("label_width", st.label_width);
  point(out, "label_splitter", st.label_splitter.x, st.label_splitter.y);
  out.member("bottom_height", st.bottom_height);
  point(out, "bottom_splitter", st.bottom_splitter.x, st.bottom_splitter.y);
  targets_json(out, "tabs", st.tab_targets);
}

// The analysis as shown: the Profile's findings and savings, the Findings
// tab, the Compare view.
void analysis_json(Writer& out, const View& view, const Document& doc, const FrameStats& st) {
  const auto profile = doc.profile();
  out.member("analysis", profile ? "done" : doc.analysis_failed() ? "failed" : "pending");
  if (profile) {
    out.key("findings");
    out.begin_array();
    for (const Finding& f : profile->findings) out.string(f.id);
    out.end_array();
    out.key("finding_savings");  // the Profile's, in its order
    out.begin_array();
    for (const Finding& f : profile->findings) {
      out.begin_object();
      out.member("id", f.id);
      out.member("saving_ns", f.saving_ns);
      out.member("saving_source", to_string(f.saving_source));
      out.end_object();
    }
    out.end_array();
  }
  findings_json(out, view, st);
  if (const Document* b = view.compare_document()) {
    out.member("compare_file", b->path());
    compare_json(out, *b, st);
  }
}

}  // namespace

std::string frame_report(const View& view, const ImDrawData* dd, const FrameReportContext& ctx) {
  const FrameStats& st = view.stats();
  std::string text;
  Writer out(text);
  out.begin_object();
  frame_json(out, view, dd, ctx);
  const Document* doc = view.document();
  if (!doc) {
    out.member("source", nullptr);
    out.member("selection", nullptr);
    out.key("tracks");
    out.begin_array();
    out.end_array();
    out.key("visible_range");
    out.begin_object();
    out.member("start_ns", st.view_start);
    out.member("end_ns", st.view_end);
    out.end_object();
    out.member("timeline_width_px", st.timeline_width_px);
    out.member("lane_columns", st.lane_columns);
    out.end_object();
    return text;
  }
  const Trace& t = doc->trace();
  timeline_json(out, *doc, st);
  tables_json(out, view, st);
  range_json(out, view, st, t.begin_time());
  histogram_json(out, view, st, t);
  point(out, "details_histogram", st.details_histogram_target.x, st.details_histogram_target.y);
  selection_json(out, view, t);
  out.key("highlight");
  out.begin_object();
  out.member("label", view.matches_label());
  out.member("matches", view.matches().size());
  out.end_object();
  analysis_json(out, view, *doc, st);
  out.key("load_seconds");
  out.begin_object();
  out.member("read", view.loader().read_seconds());
  out.member("index", view.loader().index_seconds());
  out.end_object();
  out.end_object();
  return text;
}

}  // namespace gpuscope::viewer
