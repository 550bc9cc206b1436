// View — the selected event (details panel) and hover tooltips.
//
// [SECTION] Names and NVTX stacks
// [SECTION] Details panel
// [SECTION] Tooltips
#include <imgui.h>

#include <algorithm>
#include <cinttypes>

#include "analysis/ops/occupancy.h"
#include "analysis/passes/hardware.h"
#include "trace/kernel_category.h"
#include "trace/time_columns.h"
#include "viewer/colors.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"
#include "words/format.h"

namespace gpuscope::viewer {

namespace {
OpTable op_table_of(TableId t) {
  return t == TableId::kernels ? OpTable::kernel : t == TableId::memcpys ? OpTable::memcpy : OpTable::memset;
}
TableId table_of(OpTable t) {
  return t == OpTable::kernel ? TableId::kernels : t == OpTable::memcpy ? TableId::memcpys : TableId::memsets;
}
// A kernel's theoretical occupancy, and what limits it, in words (unknown: why).
std::pair<std::string, std::string> occupancy_rows(const Trace& tr, RowIndex r) {
  const KernelTable& k = tr.kernels();
  const OccupancyLimits limits = occupancy_limits(tr.device(tr.tracks()[k.track_at(r)].device));
  const std::uint64_t threads = std::uint64_t{k.block_x[r]} * k.block_y[r] * k.block_z[r];
  if (threads == 0 || k.registers[r] == 0) return {"unknown: the trace gives no block size or registers", "-"};
  if (!limits.sm) return {"unknown: no limits for this GPU (its compute capability is not in the table)", "-"};
  const std::optional<KernelOccupancy> o =
      kernel_occupancy(*limits.sm, threads, k.registers[r], std::uint64_t{k.static_smem[r]} + k.dynamic_smem[r]);
  if (!o) return {"unknown: the launch does not fit the GPU's limits (" + limits.source + ")", "-"};
  return {format::percent1(o->occupancy) + " (" + std::to_string(o->blocks_per_sm) + " blocks, " +
              std::to_string(o->warps_per_sm) + " warps per SM; limits: " + limits.source + ")",
          std::string(to_string(o->limiter))};
}
void table_row(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", key);
  text_cell(value);
}
// The mean of a hw.* series' samples while a kernel of `duration` ran, with
// their count, or why there is none.
std::string sample_mean_text(const KernelSampleMean& m, TimeNs duration) {
  if (!m.samples)
    return m.interval_ns > duration
               ? "not sampled: ran shorter than the interval (" + format::duration(m.interval_ns) + ")"
               : "no samples while it ran";
  std::string value;
  if (m.unit == "%") {
    value = format::percent1(m.mean / 100.0);
  } else if (m.unit == "B/s") {
    value = format::bandwidth(m.mean);
  } else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g%s%s", m.mean, m.unit.empty() ? "" : " ", m.unit.c_str());
    value = buf;
  }
  return value + " (mean of " + format::count(m.samples) + (m.samples == 1 ? " sample)" : " samples)");
}
}  // namespace

// [SECTION] Names and NVTX stacks ------------------------------------------------------------

std::string View::event_name(TableId table, RowIndex row) const {
  const Trace& tr = doc_->trace();
  const TraceTables& t = tr.tables();
  switch (table) {
    case TableId::kernels: return std::string(tr.str(t.kernels.name[row]));
    case TableId::memcpys: return cat("Memcpy ", to_string(t.memcpys.kind_at(row)));
    case TableId::memsets: return "Memset";
    case TableId::api_calls: return std::string(tr.str(t.api_calls.name[row]));
    case TableId::ranges: return std::string(tr.str(t.ranges.name[row]));
    case TableId::syncs: return cat("Synchronize (", to_string(t.syncs.type_at(row)), ")");
    case TableId::overheads: return cat("Profiler overhead: ", tr.str(t.overheads.kind[row]));
    case TableId::os_calls: return std::string(tr.str(t.os_calls.name[row]));
    default: return {};
  }
}

std::vector<RowIndex> View::nvtx_stack(TrackId track, TimeNs t) const {
  std::vector<RowIndex> out;
  const TrackInfo* info = doc_->index().track_info(track);
  if (!info) return out;
  for (const TrackRow& r : info->rows) {
    if (r.kind != RowKind::ranges) continue;
    for (const LaneSegment& seg : r.segments) {
      // Ranges of one depth do not overlap: the candidate is the last one starting at or before t.
      const RowIndex p =
          static_cast<RowIndex>(std::upper_bound(seg.start + seg.begin, seg.start + seg.stop, t) - seg.start);
      if (p == seg.begin) continue;
      if (seg.end[p - 1] >= t) out.push_back(seg.row(p - 1));
    }
  }
  return out;
}

// [SECTION] Details panel --------------------------------------------------------------------

void View::draw_details() {
  stats_.panels.push_back("details");
  if (!doc_ || !selection_.valid()) {
    ImGui::TextDisabled("Click an event on the timeline to see its details (hover for a summary).");
    if (!matches_label_.empty())
      ImGui::Text("Highlighted: %s — %s matches; Enter / Shift+Enter or the arrows above step through them.",
                  matches_label_.c_str(), format::count(matches_.size()).c_str());
    return;
  }
  stats_.panels.push_back("selection");
  const TableId table = selection_.table;
  const RowIndex r = selection_.row;
  const ThreadSamples* samples = nullptr;
  std::size_t at = 0;
  if (table == TableId::ranges && doc_->index().sample_of(doc_->trace(), r, &samples, &at)) {
    draw_sample_details(*samples, at);
    return;
  }
  draw_details_name(table, r);
  if (table == TableId::kernels || table == TableId::ranges) {
    if (ImGui::SmallButton("Histogram of this name's durations (H)")) histogram_of_selection();
    stats_.details_histogram_target = target("histogram");
  }
  // Left half: the event's fields; right half: its launch and NVTX stack.
  ImGui::BeginGroup();
  if (ImGui::BeginTable("event", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg,
                        ImVec2(ImGui::GetContentRegionAvail().x * 0.5f, 0))) {
    draw_details_fields(table, r);
    draw_details_path(table, r);
    ImGui::EndTable();
  }
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  draw_details_context(table, r);
  ImGui::EndGroup();
}

// A selected host sample: its time, thread and whole stack, innermost first.
void View::draw_sample_details(const ThreadSamples& s, std::size_t i) {
  const Trace& tr = doc_->trace();
  const RowIndex r = s.rows[i];
  ImGui::TextUnformatted("host sample");
  stats_.details.emplace_back("name", "host sample");
  if (!ImGui::BeginTable("sample", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  detail_row("start", cat("+", format_timestamp(s.time[i] - tr.begin_time()), " from the trace start"));
  const TrackId track = tr.ranges().track_at(r);
  if (const TrackInfo* info = doc_->index().track_info(track)) detail_row("thread", info->label);
  const auto stack = s.stack(i);
  detail_row("frames", format::count(stack.size()));
  for (std::size_t k = 0; k < stack.size(); ++k)
    detail_row(k == 0                  ? "innermost"
               : k + 1 == stack.size() ? "outermost"
                                       : "frame",
               doc_->index().frame_names()[stack[stack.size() - 1 - k]]);
  ImGui::EndTable();
}

void View::detail_row(const char* key, const std::string& value) {
  // Every field shown is also noted in stats_.details (the headless JSON and the tests read it).
  table_row(key, value);
  stats_.details.emplace_back(key, value);
}

void View::draw_details_name(TableId table, RowIndex r) {
  const Trace& tr = doc_->trace();
  const std::string name = event_name(table, r);
  stats_.details.emplace_back("name", name);
  ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x);
  ImGui::TextUnformatted(name.c_str());
  ImGui::PopTextWrapPos();
  if (table == TableId::kernels && tr.kernels().mangled_at(r) != kEmptyString) {
    const std::string mangled(tr.str(tr.kernels().mangled_at(r)));
    stats_.details.emplace_back("mangled", mangled);
    ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x);
    ImGui::TextDisabled("mangled: %s", mangled.c_str());
    ImGui::PopTextWrapPos();
  }
}

void View::draw_details_fields(TableId table, RowIndex r) {
  const Trace& tr = doc_->trace();
  const auto& tc = detail::time_columns(tr.tables(), table);
  const TimeNs start = (*tc.start)[r], end = (*tc.end)[r];
  const Track& trk = tr.tracks()[tc.track_at(r)];
  detail_row("start", cat("+", format_timestamp(start - tr.begin_time()), " from the trace start"));
  detail_row("duration", format::duration(end - start));
  if (trk.kind == TrackKind::gpu) {
    std::string dev = std::to_string(trk.device);
    if (const Device* d = tr.device(trk.device); d && !d->name.empty()) dev += " · " + d->name;
    detail_row("device", dev);
    detail_row("stream", std::to_string(trk.stream));
  } else {
    detail_row("thread", cat("pid ", std::to_string(trk.pid), ", tid ", std::to_string(trk.tid)));
  }
  draw_details_of_kind(table, r);
}

// Whether the event is on its step's critical path, and how much later it
// could have started without the end of the trace moving.
void View::draw_details_path(TableId table, RowIndex r) {
  if (table == TableId::ranges) return;
  const std::shared_ptr<const PathOverlay> path = doc_->path_overlay();
  if (!path) {
    detail_row("critical path", "computing");
    return;
  }
  if (!path->ready()) {
    detail_row("critical path", "none: " + path->status);
    return;
  }
  const TimeNs slack = path->slack_of(table, r);
  if (slack < 0) {
    detail_row("critical path", "not in the dependency graph (a nested call)");
    return;
  }
  // Slack is measured to the end of the trace: an event that decides a
  // step's length has none within its step, yet may have some to the end
  // when nothing after the step waits for it. Said as such, never "yes"
  // beside a bare slack.
  const std::int32_t step = path->path_of(table, r);
  if (step == PathOverlay::kOffPath) {
    detail_row("critical path", "no");
    detail_row("slack", format::duration(slack) + " (how much later it could start with the trace ending no later)");
    return;
  }
  if (step < 0) {
    detail_row("critical path", "yes: it decides the trace's length");
    detail_row("slack", "0");
    return;
  }
  const std::string n = std::to_string(path->step_index[static_cast<std::size_t>(step)]);
  if (slack == 0) {
    detail_row("critical path", cat("yes: it decides step ", n, "'s length, and the trace's end"));
    detail_row("slack", "0");
    return;
  }
  detail_row("critical path", cat("yes: it decides step ", n, "'s length (no slack within the step)"));
  detail_row("slack to the trace's end", cat(format::duration(slack), " (nothing after step ", n,
                                             " waits for it: it could start that much later)"));
}

void View::draw_details_of_kind(TableId table, RowIndex r) {
  const Trace& tr = doc_->trace();
  const TraceTables& t = tr.tables();
  const auto& tc = detail::time_columns(t, table);
  const TimeNs duration = (*tc.end)[r] - (*tc.start)[r];
  auto bandwidth = [&](std::uint64_t bytes) {
    return format::bandwidth(duration > 0 ? static_cast<double>(bytes) * 1e9 / static_cast<double>(duration) : 0);
  };
  switch (table) {
    case TableId::kernels: {
      const KernelTable& k = t.kernels;
      detail_row("category", std::string(to_string(k.category_at(r))));
      detail_row("category by", category_rule_text(tr.str(k.name[r]), k.category_at(r)));
      char buf[96];
      std::snprintf(buf, sizeof buf, "(%u, %u, %u)", k.grid_x[r], k.grid_y[r], k.grid_z[r]);
      detail_row("grid", buf);
      std::snprintf(buf, sizeof buf, "(%u, %u, %u)", k.block_x[r], k.block_y[r], k.block_z[r]);
      detail_row("block", buf);
      detail_row("registers / thread", std::to_string(k.registers[r]));
      detail_row("shared memory",
                 format::bytes(k.static_smem[r]) + " static + " + format::bytes(k.dynamic_smem[r]) + " dynamic");
      const auto [occupancy, limiter] = occupancy_rows(tr, r);
      detail_row("theoretical occupancy", occupancy);
      detail_row("occupancy limited by", limiter);
      if (k.graph_id_at(r))
        detail_row("CUDA graph", std::to_string(k.graph_id_at(r)) + ", node " + std::to_string(k.graph_node_id_at(r)));
      detail_row("correlation", std::to_string(k.correlation[r]));
      for (const KernelSampleMean& m : kernel_sample_means(tr, r))
        detail_row(m.name.c_str(), sample_mean_text(m, duration));
      break;
    }
    case TableId::memcpys: {
      const MemcpyTable& m = t.memcpys;
      detail_row("kind", std::string(to_string(m.kind_at(r))) + " (" + std::string(to_string(m.src_kind_at(r))) +
                             " -> " + std::string(to_string(m.dst_kind_at(r))) + ")");
      detail_row("bytes", format::count(m.bytes[r]) + " (" + format::bytes(m.bytes[r]) + ")");
      detail_row("bandwidth", bandwidth(m.bytes[r]));
      detail_row("correlation", std::to_string(m.correlation[r]));
      break;
    }
    case TableId::memsets: {
      const MemsetTable& m = t.memsets;
      detail_row("bytes", format::count(m.bytes[r]) + " (" + format::bytes(m.bytes[r]) + ")");
      detail_row("bandwidth", bandwidth(m.bytes[r]));
      detail_row("memory", std::string(to_string(static_cast<MemoryKind>(m.mem_kind[r]))));
      break;
    }
    case TableId::api_calls: {
      const ApiCallTable& a = t.api_calls;
      detail_row("domain", std::string(to_string(a.domain_at(r))));
      detail_row("correlation", std::to_string(a.correlation[r]));
      if (a.cbid_at(r)) detail_row("callback id", std::to_string(a.cbid_at(r)));
      detail_row("status", std::to_string(a.status_at(r)));
      break;
    }
    case TableId::ranges: {
      const RangeTable& g = t.ranges;
      detail_row("kind", std::string(to_string(g.kind_at(r))));
      if (g.domain[r]) detail_row("domain", std::string(tr.str(g.domain[r])));
      detail_row("depth", std::to_string(g.depth[r]));
      if (g.payload_at(r)) detail_row("payload", std::to_string(g.payload_at(r)));
      break;
    }
    case TableId::syncs: {
      const SyncTable& s = t.syncs;
      detail_row("type", std::string(to_string(s.type_at(r))));
      if (s.stream[r] != kNoId) detail_row("stream waited on", std::to_string(s.stream[r]));
      if (s.event[r] != kNoId) detail_row("event", std::to_string(s.event[r]));
      break;
    }
    case TableId::os_calls: {
      const OsCallTable& o = t.os_calls;
      detail_row("kind", "OS runtime call");
      detail_row("return value", std::to_string(o.status_at(r)));
      detail_row("nesting", std::to_string(o.nesting_at(r)));
      break;
    }
    default: break;
  }
}

void View::draw_details_context(TableId table, RowIndex r) {
  const Trace& tr = doc_->trace();
  const TraceTables& t = tr.tables();
  const auto& tc = detail::time_columns(t, table);
  const TimeNs start = (*tc.start)[r];
  const TrackId track = tc.track_at(r);
  // The NVTX stack of a GPU op is the one around its launch, on the launching thread.
  TrackId stack_track = track;
  TimeNs stack_time = start;
  if (table == TableId::kernels || table == TableId::memcpys || table == TableId::memsets) {
    const RowIndex api = tr.launching_api(OpRef{op_table_of(table), r});
    if (api != kNoRow) {
      stats_.panels.push_back("launch");
      const TimeNs as = t.api_calls.start[api], ae = t.api_calls.end[api];
      const Track& at = tr.tracks()[t.api_calls.track_at(api)];
      stats_.details.emplace_back("launched by", tr.str(t.api_calls.name[api]));
      ImGui::Text("Launched by %s", std::string(tr.str(t.api_calls.name[api])).c_str());
      // Launch delay: from the call's start to the GPU start (the GPU may start before the call returns).
      ImGui::TextDisabled("  thread %u/%u · the call took %s · the GPU started %s after it began%s", at.pid, at.tid,
                          format::duration(ae - as).c_str(), format::duration(start - as).c_str(),
                          start < ae ? ", before it returned" : "");
      if (ImGui::SmallButton("select the launch")) select(Selection{TableId::api_calls, api});
      // The framework op that launched it, and the ops around that one.
      const RowIndex op = t.api_calls.op_range_at(api);
      if (op != kNoRow) {
        std::string path;
        for (RowIndex p = tr.parent_op(op); p != kNoRow; p = tr.parent_op(p))
          path = std::string(tr.str(t.ranges.name[p])) + (path.empty() ? "" : " > ") + path;
        stats_.details.emplace_back("op", tr.str(t.ranges.name[op]));
        if (!path.empty()) stats_.details.emplace_back("call path", path);
        ImGui::Text("Op %s", std::string(tr.str(t.ranges.name[op])).c_str());
        if (t.ranges.input_dims_at(op) != kEmptyString)
          ImGui::TextDisabled("  inputs %s", std::string(tr.str(t.ranges.input_dims_at(op))).c_str());
        if (!path.empty()) ImGui::TextDisabled("  in %s", path.c_str());
        if (ImGui::SmallButton("select the op")) select(Selection{TableId::ranges, op});
      } else {
        stats_.details.emplace_back("op", "(no op)");
        ImGui::TextDisabled("Op: (no op) - launched outside every framework op or NVTX range");
      }
      stack_track = t.api_calls.track_at(api);
      stack_time = as;
    } else {
      const std::uint32_t corr = table == TableId::kernels   ? t.kernels.correlation[r]
                                 : table == TableId::memcpys ? t.memcpys.correlation[r]
                                                             : t.memsets.correlation[r];
      ImGui::TextDisabled("No launching API call recorded (correlation %u).", corr);
    }
  } else if (table == TableId::api_calls) {
    int shown = 0;
    tr.for_each_op_of(r, [&](OpRef op) {
      if (shown == 0) ImGui::TextUnformatted("Launched:");
      if (shown++ >= 8) return;
      const TableId ot = table_of(op.table);
      ImGui::PushID(shown);
      const std::string label =
          ot == TableId::kernels ? std::string(short_label(t.kernels.name[op.row])) : event_name(ot, op.row);
      if (ImGui::SmallButton(label.c_str())) select(Selection{ot, op.row});
      ImGui::PopID();
    });
    if (shown > 8) ImGui::TextDisabled("... and %d more", shown - 8);
  }
  draw_nvtx_stack(stack_track, stack_time, stack_track == track);
}

void View::draw_nvtx_stack(TrackId track, TimeNs t, bool own) {
  const std::vector<RowIndex> stack = nvtx_stack(track, t);
  if (stack.empty()) return;
  const RangeTable& ranges = doc_->trace().ranges();
  stats_.panels.push_back("nvtx_stack");
  ImGui::Spacing();
  ImGui::TextUnformatted(own ? "Enclosing ranges:" : "Ranges around the launch:");
  for (std::size_t i = 0; i < stack.size(); ++i) {
    const RowIndex g = stack[i];
    const std::string name(doc_->trace().str(ranges.name[g]));
    stats_.details.emplace_back("nvtx", name);
    ImGui::PushID(static_cast<int>(i) + 1000);
    ImGui::Indent(static_cast<float>(i) * 10);
    if (ImGui::SmallButton(name.c_str())) select(Selection{TableId::ranges, g});
    ImGui::SameLine();
    ImGui::TextDisabled("%s", format::duration(ranges.end[g] - ranges.start[g]).c_str());
    ImGui::Unindent(static_cast<float>(i) * 10);
    ImGui::PopID();
  }
}

void View::select(Selection s) {
  selection_ = s;
  redraw_frames_ = std::max(redraw_frames_, 3);
}

// [SECTION] Tooltips -------------------------------------------------------------------------

// A host sample: its time and thread, then its stack innermost first (at
// most kSampleTooltipFrames lines).
void View::sample_tooltip(const ThreadSamples& s, std::size_t i) {
  constexpr std::size_t kSampleTooltipFrames = 16;
  const Trace& tr = doc_->trace();
  const auto stack = s.stack(i);
  std::string text = cat("host sample at +", format_timestamp(s.time[i] - tr.begin_time()), " · ",
                         format::count(stack.size()), stack.size() == 1 ? " frame" : " frames");
  for (std::size_t k = 0; k < stack.size() && k < kSampleTooltipFrames; ++k)
    text += cat("\n", doc_->index().frame_names()[stack[stack.size() - 1 - k]]);
  if (stack.size() > kSampleTooltipFrames)
    text +=
        cat("\n\xE2\x80\xA6 ", format::count(stack.size() - kSampleTooltipFrames), " outer frames (select it for all)");
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(700);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
  stats_.tooltip = std::move(text);
}

void View::tooltip_for(TableId table, RowIndex row) {
  const Trace& tr = doc_->trace();
  const ThreadSamples* samples = nullptr;
  std::size_t at = 0;
  if (table == TableId::ranges && doc_->index().sample_of(tr, row, &samples, &at)) {
    sample_tooltip(*samples, at);
    return;
  }
  const TraceTables& t = tr.tables();
  const auto& tc = detail::time_columns(t, table);
  const TimeNs d = (*tc.end)[row] - (*tc.start)[row];
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(600);
  stats_.tooltip = event_name(table, row);
  ImGui::TextUnformatted(stats_.tooltip.c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextDisabled("%s", format::duration(d).c_str());
  if (table == TableId::kernels) {
    ImGui::SameLine();
    ImGui::TextDisabled("· %s · grid %u×%u×%u · block %u×%u×%u",
                        std::string(to_string(t.kernels.category_at(row))).c_str(), t.kernels.grid_x[row],
                        t.kernels.grid_y[row], t.kernels.grid_z[row], t.kernels.block_x[row], t.kernels.block_y[row],
                        t.kernels.block_z[row]);
  } else if (table == TableId::memcpys && d > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled(
        "· %s · %s", format::bytes(t.memcpys.bytes[row]).c_str(),
        format::bandwidth(static_cast<double>(t.memcpys.bytes[row]) * 1e9 / static_cast<double>(d)).c_str());
  }
  ImGui::EndTooltip();
}

}  // namespace gpuscope::viewer
