// trace_info: what `gpuscope info --json` says about a trace file.
#include "import/trace_info.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "trace/files.h"

namespace gpuscope {

namespace {

std::string_view source_kind(TraceSource s) {
  switch (s) {
    case TraceSource::synthetic:
      return "synthetic";
    case TraceSource::cupti:
      return "captured";
    case TraceSource::chrome_json:
    case TraceSource::nsys_sqlite:
      return "imported";
    case TraceSource::unknown:
      break;
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
    case TraceFileKind::gscope:
      return "gscope";
    case TraceFileKind::chrome_json:
      return "chrome-json";
    case TraceFileKind::chrome_json_gz:
      return "chrome-json-gz";
    case TraceFileKind::nsys_sqlite:
      return "nsys-sqlite";
    case TraceFileKind::unknown:
      break;
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

std::string trace_info_json(const std::string& path, const TraceFile& l, int indent,
                            const std::string& trace_quality_json, const std::string& ops_json) {
  const Trace& t = l.trace;
  const TraceMeta& m = t.meta();
  nlohmann::ordered_json j;
  j["schema"] = "gpuscope.info/1";
  j["file"] = path;
  j["format"] = trace_format_name(l.kind);
  j["file_bytes"] = l.file_bytes;
  if (!trace_quality_json.empty()) j["trace_quality"] = nlohmann::ordered_json::parse(trace_quality_json);
  if (l.has_gscope_report) {
    j["gscope"] = {{"format_version", l.gscope.format_version},
                   {"writer", l.gscope.writer},
                   {"complete", l.gscope.complete},
                   {"bytes_lost", l.gscope.bytes_lost},
                   {"corrupt_sections", l.gscope.corrupt_sections},
                   {"rows_lost", l.gscope.rows_lost},
                   {"problems", l.gscope.problems}};
  }
  j["source"] = to_string(m.source);
  j["source_kind"] = source_kind(m.source);
  j["producer"] = m.producer;
  j["host"] = m.host;
  j["command_line"] = m.command_line;
  j["start_time_ns"] = m.start_time_ns;
  j["rank"] = m.rank;
  j["world_size"] = m.world_size;
  j["time"] = {{"begin_ns", t.begin_time()},
               {"end_ns", t.end_time()},
               {"span_ns", t.end_time() - t.begin_time()},
               {"gpu_begin_ns", t.gpu_begin_time()},
               {"gpu_end_ns", t.gpu_end_time()}};
  auto& devices = j["devices"] = nlohmann::ordered_json::array();
  for (const Device& d : t.devices())
    devices.push_back({{"id", d.id},
                       {"name", d.name},
                       {"uuid", d.uuid},
                       {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                       {"sm_count", d.sm_count},
                       {"memory_bytes", d.memory_bytes},
                       {"core_clock_khz", d.core_clock_khz},
                       {"memory_clock_khz", d.memory_clock_khz}});
  auto& processes = j["processes"] = nlohmann::ordered_json::array();
  for (const Process& p : t.processes()) processes.push_back({{"pid", p.pid}, {"name", p.name}, {"rank", p.rank}});
  auto& tables = j["tables"] = nlohmann::ordered_json::object();
  for (int i = 0; i < kTableCount; ++i)
    tables[std::string(to_string(static_cast<TableId>(i)))] = t.tables().rows(static_cast<TableId>(i));
  j["strings"] = {{"count", t.strings().size()}, {"bytes", t.strings().arena_bytes()}};
  if (!ops_json.empty()) j["ops"] = nlohmann::ordered_json::parse(ops_json);
  auto& tracks = j["tracks"] = nlohmann::ordered_json::array();
  for (TrackId id = 0; id < t.tracks().size(); ++id) {
    const Track& tr = t.tracks()[id];
    nlohmann::ordered_json row;
    row["kind"] = tr.kind == TrackKind::gpu ? "gpu" : "cpu";
    if (tr.kind == TrackKind::gpu) {
      row["device"] = tr.device;
      row["stream"] = tr.stream;
    } else {
      row["pid"] = tr.pid;
      row["tid"] = tr.tid;
    }
    row["name"] = tr.name;
    auto& rows = row["rows"] = nlohmann::ordered_json::object();
    for (int i = 0; i < kTableCount; ++i) {
      const auto table = static_cast<TableId>(i);
      if (table == TableId::counters) continue;  // counters are per series, not per track
      if (const RowIndex n = t.rows_of(table, id).size()) rows[std::string(to_string(table))] = n;
    }
    tracks.push_back(std::move(row));
  }
  auto& series = j["counter_series"] = nlohmann::ordered_json::array();
  for (std::uint32_t s = 0; s < t.counter_series().size(); ++s) {
    const CounterSeries& cs = t.counter_series()[s];
    series.push_back({{"name", cs.name},
                      {"unit", cs.unit},
                      {"device", cs.device == kNoDevice ? nlohmann::ordered_json() : nlohmann::ordered_json(cs.device)},
                      {"samples", t.rows_of(TableId::counters, s).size()}});
  }
  auto& stats = j["stats"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m.stats) stats[k] = v;
  auto& props = j["properties"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m.properties) props[k] = v;
  j["memory_bytes"] = t.memory_bytes();
  // Names come from untrusted files: invalid UTF-8 is replaced, never an error.
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace gpuscope
