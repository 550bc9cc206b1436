// gpuscope info: what is in a trace file — first what storage lost (a file
// cut short or damaged), then where it came from (always said: synthetic,
// captured or imported), devices, processes, rows per table and per track,
// time span, counters, and every loss or skip the trace recorded.
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "cli/command.h"
#include "export/report_json.h"
#include "import/trace_info.h"
#include "words/damage_text.h"
#include "words/format.h"

namespace gpuscope::cli {
namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Describe a trace: its source (synthetic, captured or imported), producer, host, command line, devices, rows "
    "per table and per track, time span, counters, and every record lost or skipped.";

struct InfoArgs {
  std::string file;
  bool json = false;
  bool all_tracks = false;
};

constexpr std::size_t kTracksShown = 64;

// [SECTION] Formatting helpers

// ns as seconds with nine decimals, by integer arithmetic.
std::string seconds_text(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%09llu s", neg ? "-" : "", static_cast<unsigned long long>(a / 1'000'000'000),
                static_cast<unsigned long long>(a % 1'000'000'000));
  return buf;
}

std::string utc_text(std::int64_t epoch_ns) {
  const std::time_t secs = static_cast<std::time_t>(epoch_ns / 1'000'000'000);
  std::tm tm{};
  if (epoch_ns <= 0 || !gmtime_r(&secs, &tm)) return "unknown";
  char date[32], buf[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
  std::snprintf(buf, sizeof buf, "%s.%09lld UTC", date, static_cast<long long>(epoch_ns % 1'000'000'000));
  return buf;
}

std::string_view source_text(TraceSource s) {
  switch (s) {
    case TraceSource::synthetic: return "synthetic (made by gpuscope synth, not a measurement)";
    case TraceSource::cupti: return "captured (recorded live by gpuscope through CUPTI)";
    case TraceSource::chrome_json: return "imported (from Chrome trace JSON)";
    case TraceSource::nsys_sqlite: return "imported (from an Nsight Systems SQLite export)";
    case TraceSource::unknown: break;
  }
  return "unknown";
}

std::string track_label(const Track& t) {
  if (t.kind == TrackKind::gpu) return "GPU " + std::to_string(t.device) + " stream " + std::to_string(t.stream);
  return "pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid);
}

// [SECTION] What info says

// How the GPU ops attribute to framework ops, and what in the op ranges
// could not be used: GPU ops without a launching op by why, shapes that do
// not parse, op ranges that overlap without nesting.
void print_ops(const OpSummary& s) {
  using format::count;
  std::printf("framework ops\n");
  if (s.op_calls == 0) {
    std::printf("  none: no cpu_op, user annotation or NVTX range on a CPU thread (every GPU op is \"(no op)\")\n");
    return;
  }
  std::printf("  %-24s %15s\n", "op calls", count(s.op_calls).c_str());
  std::printf("  %-24s %15s of %s GPU ops\n", "with a launching op", count(s.attributed).c_str(),
              count(s.gpu_ops).c_str());
  std::printf("  %-24s %15s (%s)\n", "without one: (no op)", count(s.unattributed).c_str(),
              format::duration(s.unattributed_ns).c_str());
  if (s.no_correlation) std::printf("    %-22s %15s\n", "no correlation id", count(s.no_correlation).c_str());
  if (s.unmatched_correlation)
    std::printf("    %-22s %15s (no launch call has it)\n", "unmatched correlation",
                count(s.unmatched_correlation).c_str());
  if (const std::uint64_t outside = s.unattributed - s.no_correlation - s.unmatched_correlation)
    std::printf("    %-22s %15s\n", "launched outside ops", count(outside).c_str());
  std::printf("  %-24s %15s%s\n", "calls with shapes", count(s.with_shapes).c_str(),
              s.shapes_recorded ? "" : " (profile with record_shapes=True for FLOPs)");
  if (s.malformed_shapes)
    std::printf("  %-24s %15s (no FLOPs or bytes given for them)\n", "unreadable shapes",
                count(s.malformed_shapes).c_str());
  if (s.overlapping)
    std::printf("  %-24s %15s (ranges overlapping another without nesting)\n", "overlapping ops",
                count(s.overlapping).c_str());
}

void print_text(const std::string& path, const TraceFile& l, bool all_tracks) {
  const Trace& t = l.trace;
  const TraceMeta& m = t.meta();
  auto line = [](const char* key, const std::string& value) { std::printf("  %-12s %s\n", key, value.c_str()); };
  const FileQuality quality = file_quality(t, path);
  if (quality.damage.any()) std::printf("%s\n", damage_headline(quality.damage, quality.devices).c_str());
  std::printf("%s\n", path.c_str());
  std::string format = l.kind == TraceFileKind::gscope        ? ".gscope"
                       : l.kind == TraceFileKind::chrome_json ? "Chrome trace JSON"
                       : l.kind == TraceFileKind::nsys_sqlite ? "SQLite, Nsight Systems schema"
                                                              : "Chrome trace JSON, gzip";
  if (l.has_gscope_report) {
    format += " v" + std::to_string(l.gscope.format_version) + ", written by " + l.gscope.writer + ", " +
              (l.gscope.complete ? "complete" : "INCOMPLETE");
  }
  line("format", format + ", " + format::bytes(l.file_bytes));
  if (quality.damage.any()) {
    line("rows lost", rows_lost_text(quality.damage));
    for (const std::string& p : quality.damage.problems) line("problem", p);
    if (!quality.devices.without_data().empty())
      line("no data", "GPU " + device_list_text(quality.devices.without_data()) + " (of " +
                          device_list_text(quality.devices.declared) + " in the trace)");
  }
  line("source", std::string(source_text(m.source)));
  if (!m.producer.empty()) line("producer", m.producer);
  if (!m.host.empty()) line("host", m.host);
  if (!m.command_line.empty()) line("command", m.command_line);
  if (m.start_time_ns > 0) line("recorded", utc_text(m.start_time_ns));
  if (m.rank >= 0)
    line("rank", std::to_string(m.rank) + (m.world_size > 0 ? " of " + std::to_string(m.world_size) : ""));
  line("time span", seconds_text(t.end_time() - t.begin_time()) + " (first to last event; GPU ops " +
                        seconds_text(t.gpu_end_time() - t.gpu_begin_time()) + ")");

  std::printf("devices (%zu)\n", t.devices().size());
  for (const Device& d : t.devices()) {
    std::string s = "GPU " + std::to_string(d.id) + "  " + (d.name.empty() ? "(unnamed)" : d.name);
    if (d.compute_major) s += ", sm_" + std::to_string(d.compute_major) + std::to_string(d.compute_minor);
    if (d.sm_count) s += ", " + std::to_string(d.sm_count) + " SMs";
    if (d.memory_bytes) s += ", " + format::bytes(d.memory_bytes);
    if (!d.uuid.empty()) s += ", " + d.uuid;
    std::printf("  %s\n", s.c_str());
  }
  std::printf("processes (%zu)\n", t.processes().size());
  for (const Process& p : t.processes())
    std::printf("  pid %u  %s%s\n", p.pid, p.name.c_str(),
                p.rank >= 0 ? ("  (rank " + std::to_string(p.rank) + ")").c_str() : "");

  std::printf("tables\n");
  for (int i = 0; i < kTableCount; ++i) {
    const auto table = static_cast<TableId>(i);
    std::printf("  %-12s %15s\n", std::string(to_string(table)).c_str(), format::count(t.tables().rows(table)).c_str());
  }
  std::printf("  %-12s %15s  (%s)\n", "strings", format::count(t.strings().size()).c_str(),
              format::bytes(t.strings().arena_bytes()).c_str());

  print_ops(op_summary(t));

  std::size_t gpu = 0;
  for (const Track& tr : t.tracks()) gpu += tr.kind == TrackKind::gpu;
  std::printf("tracks (%zu GPU streams, %zu CPU threads)\n", gpu, t.tracks().size() - gpu);
  const std::size_t shown = all_tracks ? t.tracks().size() : std::min(t.tracks().size(), kTracksShown);
  for (TrackId id = 0; id < shown; ++id) {
    const Track& tr = t.tracks()[id];
    std::string counts;
    for (int i = 0; i < kTableCount; ++i) {
      const auto table = static_cast<TableId>(i);
      if (table == TableId::counters) continue;
      if (const RowIndex n = t.rows_of(table, id).size())
        counts += "  " + std::string(to_string(table)) + " " + format::count(n);
    }
    std::printf("  %-24s %-32s%s\n", track_label(tr).c_str(), tr.name.empty() ? "-" : ("\"" + tr.name + "\"").c_str(),
                counts.c_str());
  }
  if (shown < t.tracks().size())
    std::printf("  ... and %zu more tracks (--all-tracks lists them)\n", t.tracks().size() - shown);

  std::printf("counters (%zu series)\n", t.counter_series().size());
  for (std::uint32_t s = 0; s < t.counter_series().size(); ++s) {
    const CounterSeries& cs = t.counter_series()[s];
    std::printf("  %s%s%s: %s samples\n", cs.name.c_str(), cs.unit.empty() ? "" : (" [" + cs.unit + "]").c_str(),
                cs.device == kNoDevice ? "" : (" on GPU " + std::to_string(cs.device)).c_str(),
                format::count(t.rows_of(TableId::counters, s).size()).c_str());
  }

  // Losses and skips: dropped records, import skips by reason, store losses.
  std::printf("stats (records lost or skipped, and other counts)\n");
  if (m.stats.empty()) std::printf("  none: nothing was lost or skipped\n");
  for (const auto& [k, v] : m.stats) std::printf("  %-40s %15s\n", k.c_str(), format::count(v).c_str());
  if (!m.properties.empty()) {
    std::printf("properties\n");
    for (const auto& [k, v] : m.properties) std::printf("  %-40s %s\n", k.c_str(), v.c_str());
  }
  std::printf("memory         %s after load\n", format::bytes(t.memory_bytes()).c_str());
}

void run(const InfoArgs& a) {
  const TraceFile l = open_trace_file(a.file);
  if (a.json) {
    const FileQuality quality = file_quality(l.trace, a.file);
    const OpSummary ops = op_summary(l.trace);
    const InfoParts parts{[&](json::Writer& out) { write_file_quality_json(out, quality); },
                          [&](json::Writer& out) { write_op_summary_json(out, ops); }};
    std::printf("%s\n", trace_info_json(a.file, l, true, parts).c_str());
  } else {
    print_text(a.file, l, a.all_tracks);
  }
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<InfoArgs>(app, "info", kAbout, run);
  cmd->add_option("FILE", args->file, "Trace file (.gscope, Chrome JSON, .json.gz or Nsight Systems .sqlite)")
      ->required();
  cmd->add_flag("--json", args->json, "Print JSON (schema gpuscope.info/1) instead of text");
  cmd->add_flag("--all-tracks", args->all_tracks, "List every track (text lists the first 64)");
  add_examples(*cmd, {"gpuscope info run.gscope", "gpuscope info report.sqlite --json | jq .tables",
                      "zcat trace.json.gz | gpuscope info -"});
}

const CommandRegistration registration(20, add);

}  // namespace
}  // namespace gpuscope::cli
