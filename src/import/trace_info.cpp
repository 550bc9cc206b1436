// trace_info: what `gpuscope info --json` says about a trace file.
#include "import/trace_info.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "trace/files.h"
#include "trace/json_writer.h"

namespace gpuscope {

namespace {

std::string_view source_kind(TraceSource s) {
  switch (s) {
    case TraceSource::synthetic: return "synthetic";
    case TraceSource::cupti: return "captured";
    case TraceSource::chrome_json:
    case TraceSource::nsys_sqlite: return "imported";
    case TraceSource::unknown: break;
  }
  return "unknown";
}

}  // namespace

std::string source_losses_line(const TraceMeta& meta) {
  static constexpr std::string_view kPrefixes[] = {"import.skipped.",       "import.coerced.",
                                                   "import.missing_table.", "trace.out_of_window.",
                                                   "trace.truncated_names", "store.lost_rows."};
  constexpr std::size_t kShown = 4;
  std::string listed;
  std::size_t n = 0;
  for (const auto& [key, value] : meta.stats) {
    bool counted = false;
    for (std::string_view p : kPrefixes) counted = counted || key.starts_with(p);
    if (!counted || value == 0) continue;
    if (n++ < kShown) listed += (listed.empty() ? "" : ", ") + key + " " + std::to_string(value);
  }
  if (n == 0) return {};
  if (n > kShown) listed += ", and " + std::to_string(n - kShown) + " more";
  return "the source's rows or values left out or changed: " + listed + " (gpuscope info lists them)";
}

std::string_view trace_format_name(TraceFileKind k) {
  switch (k) {
    case TraceFileKind::gscope: return "gscope";
    case TraceFileKind::chrome_json: return "chrome-json";
    case TraceFileKind::chrome_json_gz: return "chrome-json-gz";
    case TraceFileKind::nsys_sqlite: return "nsys-sqlite";
    case TraceFileKind::unknown: break;
  }
  return "unknown";
}

TraceFile open_trace_file(const std::string& path, const LoadProgress& progress) {
  TraceFile l;
  const std::string file = seekable_trace_path(path);  // a pipe is read once, into memory
  l.kind = detect_trace_file(file);
  std::error_code ec;
  l.file_bytes = std::filesystem::file_size(file, ec);
  if (l.kind == TraceFileKind::gscope) {
    try {
      l.trace = read_gscope(file, &l.gscope, progress);
    } catch (const InputError& e) {
      if (file == path) throw;
      throw InputError(files::input_name(path), e.reason(), e.offset());
    }
    l.has_gscope_report = true;
  } else {
    l.trace = open_trace(path, progress);  // names `path` in its errors
  }
  return l;
}

namespace {

using json::kv;

void gscope_json(json::Writer& out, const GscopeReadReport& g) {
  out.key("gscope");
  out.object(kv("format_version", g.format_version), kv("writer", g.writer), kv("complete", g.complete),
             kv("bytes_lost", g.bytes_lost), kv("corrupt_sections", g.corrupt_sections), kv("rows_lost", g.rows_lost),
             kv("problems", g.problems));
}

// Where the trace came from and when it ran.
void meta_json(json::Writer& out, const Trace& t) {
  const TraceMeta& m = t.meta();
  out.members(kv("source", to_string(m.source)), kv("source_kind", source_kind(m.source)), kv("producer", m.producer),
              kv("host", m.host), kv("command_line", m.command_line), kv("start_time_ns", m.start_time_ns),
              kv("rank", m.rank), kv("world_size", m.world_size));
  out.key("time");
  out.object(kv("begin_ns", t.begin_time()), kv("end_ns", t.end_time()), kv("span_ns", t.end_time() - t.begin_time()),
             kv("gpu_begin_ns", t.gpu_begin_time()), kv("gpu_end_ns", t.gpu_end_time()));
}

void devices_json(json::Writer& out, const Trace& t) {
  out.key("devices");
  out.array(t.devices(), [&](const Device& d) {
    out.object(kv("id", d.id), kv("name", d.name), kv("uuid", d.uuid),
               kv("compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)),
               kv("sm_count", d.sm_count), kv("memory_bytes", d.memory_bytes), kv("core_clock_khz", d.core_clock_khz),
               kv("memory_clock_khz", d.memory_clock_khz));
  });
  out.key("processes");
  out.array(t.processes(),
            [&](const Process& p) { out.object(kv("pid", p.pid), kv("name", p.name), kv("rank", p.rank)); });
}

// Rows per table, then per track (the tables that have some on it).
void rows_json(json::Writer& out, const Trace& t, const InfoParts& parts) {
  out.key("tables");
  out.begin_object();
  for (int i = 0; i < kTableCount; ++i)
    out.member(to_string(static_cast<TableId>(i)), t.tables().rows(static_cast<TableId>(i)));
  out.end_object();
  out.key("strings");
  out.object(kv("count", t.strings().size()), kv("bytes", t.strings().arena_bytes()));
  if (parts.ops) {
    out.key("ops");
    parts.ops(out);
  }
  out.key("tracks");
  out.begin_array();
  for (TrackId id = 0; id < t.tracks().size(); ++id) {
    const Track& tr = t.tracks()[id];
    out.begin_object();
    out.member("kind", tr.kind == TrackKind::gpu ? "gpu" : "cpu");
    if (tr.kind == TrackKind::gpu) {
      out.member("device", tr.device);
      out.member("stream", tr.stream);
    } else {
      out.member("pid", tr.pid);
      out.member("tid", tr.tid);
    }
    out.member("name", tr.name);
    out.key("rows");
    out.begin_object();
    for (int i = 0; i < kTableCount; ++i) {
      const auto table = static_cast<TableId>(i);
      if (table == TableId::counters) continue;  // counters are per series, not per track
      if (const RowIndex n = t.rows_of(table, id).size()) out.member(to_string(table), n);
    }
    out.end_object();
    out.end_object();
  }
  out.end_array();
}

void series_json(json::Writer& out, const Trace& t) {
  out.key("counter_series");
  out.begin_array();
  for (std::uint32_t s = 0; s < t.counter_series().size(); ++s) {
    const CounterSeries& cs = t.counter_series()[s];
    out.object(kv("name", cs.name), kv("unit", cs.unit), kv("device", json::or_null(cs.device != kNoDevice, cs.device)),
               kv("samples", t.rows_of(TableId::counters, s).size()));
  }
  out.end_array();
  out.key("stats");
  out.begin_object();
  for (const auto& [k, v] : t.meta().stats) out.member(k, v);
  out.end_object();
  out.key("properties");
  out.begin_object();
  for (const auto& [k, v] : t.meta().properties) out.member(k, v);
  out.end_object();
}

}  // namespace

// Names come from untrusted files: invalid UTF-8 is replaced, never an error.
std::string trace_info_json(const std::string& path, const TraceFile& l, bool pretty, const InfoParts& parts) {
  std::string text;
  json::Writer out(text, pretty);
  out.begin_object();
  out.member("schema", "gpuscope.info/1");
  out.member("file", path);
  out.member("format", trace_format_name(l.kind));
  out.member("file_bytes", l.file_bytes);
  if (parts.trace_quality) {
    out.key("trace_quality");
    parts.trace_quality(out);
  }
  if (l.has_gscope_report) gscope_json(out, l.gscope);
  meta_json(out, l.trace);
  devices_json(out, l.trace);
  rows_json(out, l.trace, parts);
  series_json(out, l.trace);
  out.member("memory_bytes", l.trace.memory_bytes());
  out.end_object();
  return text;
}

}  // namespace gpuscope
