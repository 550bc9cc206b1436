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

using json::kv;
using json::or_null;
using json::Writer;

// {"x": …, "y": …} of a point on screen.
void point(Writer& out, std::string_view key, float x, float y) {
  out.key(key);
  out.object(kv("x", x), kv("y", y));
}

void font_json(Writer& out, const FontStatus& font) {
  const auto stand_ins = [&](Writer& w) {
    w.array(font.ascii, [&](ImWchar c) {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      w.string(code);
    });
  };
  out.key("font");
  out.object(kv("file", or_null(!font.fallback(), font.file)), kv("message", font.message),
             kv("ascii_stand_ins", stand_ins));
}

void tracks_json(Writer& out, const FrameStats& st) {
  out.key("tracks");
  out.array(st.tracks, [&](const TrackStats& ts) {
    const auto gpu_ops = [&](Writer& w) {
      w.object(kv("kernels", ts.gpu_ops[0]), kv("memcpys", ts.gpu_ops[1]), kv("memsets", ts.gpu_ops[2]));
    };
    out.object(kv("group", ts.group), kv("label", ts.label), kv("label_shown", ts.label_shown), kv("track", ts.track),
               kv("visible", ts.visible), kv("collapsed", ts.collapsed), kv("rows", ts.rows), kv("y", ts.y),
               kv("height", ts.height), kv("drawn", ts.drawn), kv("merged_blocks", ts.merged_blocks),
               kv("merged_events", ts.merged_events), kv("gpu_ops", gpu_ops), kv("trace", ts.compared ? "B" : "A"),
               kv("samples", ts.samples), kv("samples_drawn", ts.samples_drawn), kv("flame_rows", ts.flame_rows),
               kv("flame_boxes", ts.flame_boxes));
  });
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
  out.array(ts, [&](const ClickTarget& c) { out.object(kv(what, c.label), kv("x", c.x), kv("y", c.y)); });
}

// The Compare view: B, its analysis, where it sits on A's axis; the Compare
// tab's table as drawn, its headers, tabs and toggles.
void compare_json(Writer& out, const Document& b, const FrameStats& st) {
  out.key("compare");
  out.begin_object();
  out.members(kv("file", b.path()),
              kv("analysis", b.profile()           ? "done"
                             : b.analysis_failed() ? "failed"
                                                   : "pending"),
              kv("offset_ns", st.compare_offset), kv("align", st.compare_align), kv("timeline", st.compare_timeline),
              kv("table", st.compare_table), kv("message", st.compare_message));
  out.key("columns");
  out.array(st.compare_headers, [&](const ClickTarget& c) { out.string(c.label); });
  targets_json(out, "headers", st.compare_headers);
  out.member("rows", st.compare_list);
  targets_json(out, "tabs", st.compare_tabs);
  targets_json(out, "toggles", st.compare_toggles);
  out.end_object();
}

void counter_lanes_json(Writer& out, const FrameStats& st) {
  out.key("counter_lanes");
  out.array(st.counter_lanes, [&](const CounterLaneStats& l) {
    out.object(kv("group", l.group), kv("label", l.label), kv("series", l.series), kv("unit", l.unit),
               kv("device", or_null(l.device != kNoDevice, l.device)), kv("y", l.y), kv("height", l.height),
               kv("visible", l.visible), kv("columns", l.columns), kv("peak", l.peak), kv("peak_time_ns", l.peak_time),
               kv("peak_text", l.peak_text), kv("label_shown", l.label_shown), kv("label_x1", l.label_x1),
               kv("peak_x0", l.peak_x0), kv("peak_x1", l.peak_x1), kv("peak_marked", l.peak_marked));
  });
}

// Kernels in view per category: what the colours stand for.
void kernels_by_category_json(Writer& out, const FrameStats& st) {
  out.key("kernels_by_category");
  out.begin_array();
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (st.kernel_ns_single[i] == 0 && st.kernel_ns_folded[i] == 0 && st.kernel_px[i] == 0) continue;
    out.object(kv("category", to_string(static_cast<KernelCategory>(c))), kv("single_ns", st.kernel_ns_single[i]),
               kv("folded_ns", st.kernel_ns_folded[i]), kv("px", st.kernel_px[i]));
  }
  out.end_array();
}

// The hotspot rows as a user reads them (only those on screen).
void hotspots_json(Writer& out, const FrameStats& st) {
  out.key("hotspot_rows");
  out.array(st.hotspot_list, [&](const HotspotRow& h) {
    out.object(kv("name", h.name), kv("kernel", h.kernel), kv("category", h.category), kv("total", h.total),
               kv("share", h.share), kv("count", h.count));
  });
}

// The op rows on screen as drawn: {column header: cell} in the table's order.
void ops_json(Writer& out, const FrameStats& st) {
  out.key("op_rows");
  out.array(st.op_list, [&](const std::vector<std::string>& cells) {
    out.begin_object();
    for (std::size_t c = 0; c < cells.size() && c < st.op_columns.size(); ++c) out.member(st.op_columns[c], cells[c]);
    out.end_object();
  });
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
  out.member("track", tc.track_at(sel.row));
  if (sel.table == TableId::kernels) {
    out.member("name", t.str(t.kernels().name[sel.row]));
    out.member("category", to_string(t.kernels().category_at(sel.row)));
    const RowIndex api = t.launching_api(OpRef{OpTable::kernel, sel.row});
    out.member("launching_api", or_null(api != kNoRow, api == kNoRow ? "" : t.str(t.api_calls().name[api])));
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
    out.members(kv("name", r.name), kv("count", r.count), kv("total_ns", r.total_ns), kv("share", r.share),
                kv("of_range", r.of_window));
    if (ops)
      out.members(kv("with_children_ns", r.with_children_ns), kv("count_with_children", r.count_with_children));
    else
      out.member("category", to_string(r.category));
    out.end_object();
  }
  out.end_array();
}

void window_devices_json(Writer& out, const WindowStats& ws) {
  out.key("devices");
  out.array(ws.devices, [&](const WindowDevice& d) {
    out.object(kv("device", d.device), kv("kernels", d.kernels), kv("memcpys", d.memcpys), kv("memsets", d.memsets),
               kv("busy_ns", d.busy_ns), kv("idle_ns", d.idle_ns), kv("utilization", d.utilization),
               kv("kernel_busy_ns", d.kernel_busy_ns), kv("kernel_time_ns", d.kernel_time_ns),
               kv("concurrent_ns", d.concurrent_ns), kv("kernel_concurrency", d.kernel_concurrency),
               kv("mean_kernels_in_flight", d.mean_kernels_in_flight));
  });
  out.key("streams");
  out.array(ws.streams, [&](const WindowStream& s) {
    out.object(kv("track", s.track), kv("device", s.device), kv("stream", s.stream), kv("kernels", s.kernels),
               kv("memcpys", s.memcpys), kv("memsets", s.memsets), kv("kernel_ns", s.kernel_ns),
               kv("busy_ns", s.busy_ns), kv("idle_ns", s.idle_ns), kv("busy_share", s.busy_share));
  });
}

void window_stats_json(Writer& out, const WindowStats& ws) {
  out.begin_object();
  out.members(kv("kernels", ws.kernels), kv("memcpys", ws.memcpys), kv("memsets", ws.memsets),
              kv("kernel_time_ns", ws.kernel_time_ns), kv("gpu_op_time_ns", ws.gpu_op_time_ns));
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
  const auto stats = [&](Writer& w) {
    if (ws)
      window_stats_json(w, *ws);
    else
      w.null();
  };
  out.object(kv("start_ns", r->start), kv("end_ns", r->end), kv("start_offset_ns", r->start - origin),
             kv("end_offset_ns", r->end - origin), kv("duration_ns", r->duration()), kv("length", st.range_length),
             kv("band", st.range_band), kv("status", st.range_status), kv("device_rows", st.range_device_rows),
             kv("kernel_rows", st.range_kernel_rows), kv("stats", stats));
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
  out.array(st.histogram.bins, [&](const HistogramBin& b) {
    out.object(kv("lo_ns", b.lo), kv("hi_ns", b.hi), kv("count", b.count), kv("x", b.x), kv("y", b.y));
  });
  out.member("selected_bin", st.histogram.selected_bin);
  out.member("step", st.histogram.step);
  point(out, "next", st.histogram.next_target.x, st.histogram.next_target.y);
  out.end_object();
}

const char* savings_state(Document::Savings s) {
  switch (s) {
    case Document::Savings::simulating: return "simulating";
    case Document::Savings::simulated: return "simulated";
    case Document::Savings::failed: return "failed";
    case Document::Savings::not_simulated: break;
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
    const TimeRange& r = view.evidence()[view.evidence_index()];
    out.object(kv("start_ns", r.start), kv("end_ns", r.end));
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
  out.array(st.finding_list, [&](const FindingRow& f) {
    out.object(kv("id", f.id), kv("title", f.title), kv("saving", f.saving), kv("saving_ns", f.saving_ns),
               kv("saving_source", f.saving_source));
  });
  out.key("helps");
  out.array(st.help_rows, [&](const HelpRow& h) {
    out.object(kv("id", h.id), kv("question", h.question), kv("verdict", h.verdict), kv("because", h.because));
  });
  out.key("critical_path");
  out.array(st.path_rows,
            [&](const PathRow& r) { out.object(kv("label", r.label), kv("time", r.time), kv("share", r.share)); });
  out.member("idle", st.idle_rows);
  out.member("host_while_idle", st.host_idle_lines);
  evidence_json(out, view, st);
  out.end_object();
}

void job_ranks_json(Writer& out, const JobStats& js) {
  out.key("rank_list");
  out.array(js.rank_list, [&](const JobRankStats& r) {
    out.object(kv("rank", r.rank), kv("file", r.file), kv("host", r.host), kv("header", r.header),
               kv("offset_ns", r.offset_ns), kv("y", r.y), kv("visible", r.visible), kv("collapsed", r.collapsed),
               kv("gpus", r.gpus), kv("lanes", r.lanes), kv("parts_drawn", r.parts_drawn),
               kv("parts_folded", r.parts_folded), kv("wait_caused_ns", r.wait_caused_ns), kv("waited_ns", r.waited_ns),
               kv("last_arrivals", r.last_arrivals), kv("critical_steps", r.critical_steps));
  });
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
  out.array(js.instance_parts, [&](const JobPartStats& p) {
    out.object(kv("rank", p.rank), kv("x0", p.x0), kv("x1", p.x1), kv("y", p.y), kv("start_ns", p.start_ns),
               kv("waited_ns", p.waited_ns), kv("visible", p.visible), kv("last", p.last));
  });
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
  out.array(job->ranks, [&](const JobRank& r) { out.string(r.file); });
  out.key("window");
  out.object(kv("start_ns", job->window.start), kv("end_ns", job->window.end));
  out.member("collectives", job->profile.collectives.size());
  out.member("clock_alignment", js.clock_alignment);
  job_ranks_json(out, js);
  out.member("overview_order", js.overview_order);
  out.member("overview_marked", js.overview_marked);
  out.member("stragglers", js.stragglers);
  out.key("findings");
  out.array(js.findings, [&](const JobFindingStats& f) {
    out.object(kv("id", f.id), kv("saving_ns", f.saving_ns), kv("saving_source", f.saving_source), kv("text", f.text));
  });
  out.member("simulation", job->profile.simulation.status);
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
  out.object(kv("width", ctx.width), kv("height", ctx.height));
  out.member("frames", ctx.frames);
  out.member("view", to_string(view.panel()));
  out.member("error", or_null(!ctx.error.empty(), ctx.error));
  out.member("message", st.message);
  out.member("damage", or_null(!st.damage.empty(), st.damage));
  out.member("panels", st.panels);
  out.member("vertices", dd ? dd->TotalVtxCount : 0);
  out.member("indices", dd ? dd->TotalIdxCount : 0);
  out.member("draw_lists", dd ? dd->CmdListsCount : 0);
  out.member("last_frame_ms", view.last_frame_ms());
  const ImGuiIO& io = ImGui::GetIO();
  const std::pair<float, float> mouse(io.MousePos.x, io.MousePos.y);
  out.member("mouse", or_null(io.MousePos.x > -1e30f, mouse));  // null: not on the window
  font_json(out, ctx.font);
  job_json(out, view, st);
}

// The trace open and the part of it the timeline shows, as drawn.
void timeline_json(Writer& out, const Document& doc, const FrameStats& st) {
  const Trace& t = doc.trace();
  out.member("source", doc.source_label());
  out.member("source_kind", to_string(t.meta().source));
  out.key("trace");
  out.object(kv("begin_ns", t.begin_time()), kv("end_ns", t.end_time()), kv("kernels", t.kernels().size()),
             kv("memcpys", t.memcpys().size()), kv("memsets", t.memsets().size()),
             kv("api_calls", t.api_calls().size()), kv("ranges", t.ranges().size()), kv("tracks", t.tracks().size()),
             kv("devices", doc.index().activity().size()));
  out.key("visible_range");
  out.object(kv("start_ns", st.view_start), kv("end_ns", st.view_end),
             kv("start_offset_ns", st.view_start - t.begin_time()), kv("end_offset_ns", st.view_end - t.begin_time()),
             kv("duration_ns", st.view_end - st.view_start));
  out.member("timeline_width_px", st.timeline_width_px);
  out.member("timeline_x0", st.timeline_x0);
  tracks_json(out, st);
  out.members(kv("drawn_items", st.drawn), kv("merged_blocks", st.merged_blocks),
              kv("merged_events", st.merged_events));
  kernels_by_category_json(out, st);
  out.members(kv("folded_labels", st.folded_labels), kv("lane_columns", st.lane_columns));
  counter_lanes_json(out, st);
  out.members(kv("step_sparklines", st.step_sparklines), kv("match_markers", st.match_markers),
              kv("match_clusters", st.match_clusters), kv("match_cluster_events", st.match_cluster_events),
              kv("match_cluster_labels", st.match_cluster_labels), kv("matches_in_view", st.matches_in_view),
              kv("match_ticks", st.match_ticks), kv("match_count_labels", st.match_count_labels),
              kv("flow_arrow", st.flow_arrow), kv("critical_path_events", st.critical_path_events),
              kv("critical_path_status", st.critical_path_status), kv("evidence_bands", st.evidence_bands));
}

// The bottom panel's tables as drawn, and where the layout's handles are.
void tables_json(Writer& out, const View& view, const FrameStats& st) {
  out.key("rows");
  out.object(kv("hotspots", st.hotspot_rows), kv("categories", st.category_rows), kv("ops", st.op_rows),
             kv("findings", st.finding_rows), kv("summary_devices", st.summary_devices),
             kv("compare", st.compare_rows));
  hotspots_json(out, st);
  target_list(out, "finding_titles", "id", st.finding_targets);
  target_list(out, "hotspot_histogram_buttons", "kernel", st.hotspot_histogram_targets);
  ops_json(out, st);
  out.member("op_columns", st.op_columns);
  out.member("ops_by_shapes", view.ops_by_shapes());
  out.member("ops_message", st.ops_message);
  out.member("summary_workload", st.summary_workload);
  out.member("selected_op", or_null(!st.selected_op.empty(), st.selected_op));
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
    out.array(profile->findings, [&](const Finding& f) { out.string(f.id); });
    out.key("finding_savings");  // the Profile's, in its order
    out.array(profile->findings, [&](const Finding& f) {
      out.object(kv("id", f.id), kv("saving_ns", f.saving_ns), kv("saving_source", to_string(f.saving_source)));
    });
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
    out.member("tracks", std::vector<int>{});
    out.key("visible_range");
    out.object(kv("start_ns", st.view_start), kv("end_ns", st.view_end));
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
  out.object(kv("label", view.matches_label()), kv("matches", view.matches().size()));
  analysis_json(out, view, *doc, st);
  out.key("load_seconds");
  out.object(kv("read", view.loader().read_seconds()), kv("index", view.loader().index_seconds()));
  out.end_object();
  return text;
}

}  // namespace gpuscope::viewer
