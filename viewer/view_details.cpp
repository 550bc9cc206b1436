// View — the selected event (details panel) and hover tooltips.
//
// [SECTION] Names and NVTX stacks
// [SECTION] Details panel
// [SECTION] Tooltips
#include <imgui.h>

#include <algorithm>
#include <cinttypes>

#include "analysis/format.h"
#include "trace/detail/time_columns.h"
#include "viewer/colors.h"
#include "viewer/text.h"
#include "viewer/time_format.h"
#include "viewer/view.h"

namespace gpuscope::viewer {

namespace {
OpTable op_table_of(TableId t) {
  return t == TableId::kernels ? OpTable::kernel : t == TableId::memcpys ? OpTable::memcpy : OpTable::memset;
}
TableId table_of(OpTable t) {
  return t == OpTable::kernel ? TableId::kernels : t == OpTable::memcpy ? TableId::memcpys : TableId::memsets;
}
void table_row(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", key);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(value.c_str());
}
}  // namespace

// [SECTION] Names and NVTX stacks ------------------------------------------------------------

std::string View::event_name(TableId table, RowIndex row) const {
  const Trace& tr = doc_->trace();
  const TraceTables& t = tr.tables();
  switch (table) {
    case TableId::kernels:
      return std::string(tr.str(t.kernels.name[row]));
    case TableId::memcpys:
      return cat("Memcpy ", to_string(t.memcpys.kind_at(row)));
    case TableId::memsets:
      return "Memset";
    case TableId::api_calls:
      return std::string(tr.str(t.api_calls.name[row]));
    case TableId::ranges:
      return std::string(tr.str(t.ranges.name[row]));
    case TableId::syncs:
      return cat("Synchronize (", to_string(t.syncs.type_at(row)), ")");
    case TableId::overheads:
      return cat("Profiler overhead: ", tr.str(t.overheads.kind[row]));
    default:
      return {};
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
  const Trace& tr = doc_->trace();
  const TraceTables& t = tr.tables();
  const RowIndex r = selection_.row;
  const TableId table = selection_.table;
  const auto& tc = detail::time_columns(t, table);
  const TimeNs start = (*tc.start)[r], end = (*tc.end)[r];
  const TrackId track = (*tc.track)[r];
  const Track& trk = tr.tracks()[track];
  const TimeNs origin = tr.begin_time();
  // Every field shown is also noted in stats_.details (the headless JSON and the tests read it).
  auto row = [this](const char* key, const std::string& value) {
    table_row(key, value);
    stats_.details.emplace_back(key, value);
  };

  const std::string name = event_name(table, r);
  stats_.details.emplace_back("name", name);
  ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x);
  ImGui::TextUnformatted(name.c_str());
  ImGui::PopTextWrapPos();
  if (table == TableId::kernels && t.kernels.mangled_at(r) != kEmptyString) {
    const std::string mangled(tr.str(t.kernels.mangled_at(r)));
    stats_.details.emplace_back("mangled", mangled);
    ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x);
    ImGui::TextDisabled("mangled: %s", mangled.c_str());
    ImGui::PopTextWrapPos();
  }

  const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg;
  ImGui::BeginGroup();
  if (ImGui::BeginTable("event", 2, flags, ImVec2(ImGui::GetContentRegionAvail().x * 0.5f, 0))) {
    row("start", cat("+", format_timestamp(start - origin), " from the trace start"));
    row("duration", format::duration(end - start));
    if (trk.kind == TrackKind::gpu) {
      std::string dev = std::to_string(trk.device);
      if (const Device* d = tr.device(trk.device); d && !d->name.empty()) dev += " · " + d->name;
      row("device", dev);
      row("stream", std::to_string(trk.stream));
    } else {
      row("thread", cat("pid ", std::to_string(trk.pid), ", tid ", std::to_string(trk.tid)));
    }
    switch (table) {
      case TableId::kernels: {
        const KernelTable& k = t.kernels;
        row("category", std::string(to_string(k.category_at(r))));
        char buf[96];
        std::snprintf(buf, sizeof buf, "(%u, %u, %u)", k.grid_x[r], k.grid_y[r], k.grid_z[r]);
        row("grid", buf);
        std::snprintf(buf, sizeof buf, "(%u, %u, %u)", k.block_x[r], k.block_y[r], k.block_z[r]);
        row("block", buf);
        row("registers / thread", std::to_string(k.registers[r]));
        row("shared memory",
            format::bytes(k.static_smem[r]) + " static + " + format::bytes(k.dynamic_smem[r]) + " dynamic");
        if (k.graph_id_at(r))
          row("CUDA graph", std::to_string(k.graph_id_at(r)) + ", node " + std::to_string(k.graph_node_id_at(r)));
        row("correlation", std::to_string(k.correlation[r]));
        break;
      }
      case TableId::memcpys: {
        const MemcpyTable& m = t.memcpys;
        row("kind", std::string(to_string(m.kind_at(r))) + " (" + std::string(to_string(m.src_kind_at(r))) + " -> " +
                        std::string(to_string(m.dst_kind_at(r))) + ")");
        row("bytes", format::count(m.bytes[r]) + " (" + format::bytes(m.bytes[r]) + ")");
        row("bandwidth",
            end > start ? format::bandwidth(static_cast<double>(m.bytes[r]) * 1e9 / static_cast<double>(end - start))
                        : "n/a");
        row("correlation", std::to_string(m.correlation[r]));
        break;
      }
      case TableId::memsets: {
        const MemsetTable& m = t.memsets;
        row("bytes", format::count(m.bytes[r]) + " (" + format::bytes(m.bytes[r]) + ")");
        row("bandwidth",
            end > start ? format::bandwidth(static_cast<double>(m.bytes[r]) * 1e9 / static_cast<double>(end - start))
                        : "n/a");
        row("memory", std::string(to_string(static_cast<MemoryKind>(m.mem_kind[r]))));
        break;
      }
      case TableId::api_calls: {
        const ApiCallTable& a = t.api_calls;
        row("domain", std::string(to_string(a.domain_at(r))));
        row("correlation", std::to_string(a.correlation[r]));
        if (a.cbid_at(r)) row("callback id", std::to_string(a.cbid_at(r)));
        row("status", std::to_string(a.status_at(r)));
        break;
      }
      case TableId::ranges: {
        const RangeTable& g = t.ranges;
        row("kind", std::string(to_string(g.kind_at(r))));
        if (g.domain[r]) row("domain", std::string(tr.str(g.domain[r])));
        row("depth", std::to_string(g.depth[r]));
        if (g.payload_at(r)) row("payload", std::to_string(g.payload_at(r)));
        break;
      }
      case TableId::syncs: {
        const SyncTable& s = t.syncs;
        row("type", std::string(to_string(s.type_at(r))));
        if (s.stream[r] != kNoId) row("stream waited on", std::to_string(s.stream[r]));
        if (s.event[r] != kNoId) row("event", std::to_string(s.event[r]));
        break;
      }
      default:
        break;
    }
    ImGui::EndTable();
  }
  ImGui::EndGroup();
  ImGui::SameLine();

  // Right half: the launch (or what this call launched) and the NVTX stack.
  ImGui::BeginGroup();
  TrackId stack_track = track;
  TimeNs stack_time = start;
  if (table == TableId::kernels || table == TableId::memcpys || table == TableId::memsets) {
    const RowIndex api = tr.launching_api(OpRef{op_table_of(table), r});
    if (api != kNoRow) {
      stats_.panels.push_back("launch");
      const TimeNs as = t.api_calls.start[api], ae = t.api_calls.end[api];
      const Track& at = tr.tracks()[t.api_calls.track[api]];
      stats_.details.emplace_back("launched by", tr.str(t.api_calls.name[api]));
      ImGui::Text("Launched by %s", std::string(tr.str(t.api_calls.name[api])).c_str());
      // Launch delay: from the call's start to the GPU start (the GPU may start before the call returns).
      ImGui::TextDisabled("  thread %u/%u · the call took %s · the GPU started %s after it began%s", at.pid, at.tid,
                          format::duration(ae - as).c_str(), format::duration(start - as).c_str(),
                          start < ae ? ", before it returned" : "");
      if (ImGui::SmallButton("select the launch")) select(Selection{TableId::api_calls, api});
      stack_track = t.api_calls.track[api];
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
  const std::vector<RowIndex> stack = nvtx_stack(stack_track, stack_time);
  if (!stack.empty()) {
    stats_.panels.push_back("nvtx_stack");
    ImGui::Spacing();
    ImGui::TextUnformatted(stack_track == track ? "Enclosing ranges:" : "Ranges around the launch:");
    for (std::size_t i = 0; i < stack.size(); ++i) {
      const RowIndex g = stack[i];
      stats_.details.emplace_back("nvtx", tr.str(t.ranges.name[g]));
      ImGui::PushID(static_cast<int>(i) + 1000);
      ImGui::Indent(static_cast<float>(i) * 10);
      if (ImGui::SmallButton(std::string(tr.str(t.ranges.name[g])).c_str())) select(Selection{TableId::ranges, g});
      ImGui::SameLine();
      ImGui::TextDisabled("%s", format::duration(t.ranges.end[g] - t.ranges.start[g]).c_str());
      ImGui::Unindent(static_cast<float>(i) * 10);
      ImGui::PopID();
    }
  }
  ImGui::EndGroup();
}

void View::select(Selection s) {
  selection_ = s;
  redraw_frames_ = std::max(redraw_frames_, 3);
}

// [SECTION] Tooltips -------------------------------------------------------------------------

void View::tooltip_for(TableId table, RowIndex row) {
  const Trace& tr = doc_->trace();
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
