// Chrome Trace Event Format export (see chrome_trace.h for the conventions).
//
// [SECTION] Output buffer and numbers
// [SECTION] JSON strings
// [SECTION] Tracks: pid, tid and names
// [SECTION] Events
// [SECTION] The document
// [SECTION] Files: complete or absent, optionally gzip
//
// The layout is fixed (Kineto's: one event per line, keys as literal
// fragments); strings and numbers are trace/json_writer.h's, the one escaper
// and UTF-8 policy of every output. Speed comes from three things: every
// string is escaped once (a per-StringId cache), each track's
// `"pid":…,"tid":…` fragment is built once, and numbers are formatted with
// std::to_chars into one growing buffer handed to the sink in ~1 MiB
// pieces. Timestamps never pass through a double.
#include "export/chrome_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace/files.h"
#include "trace/json_writer.h"

namespace gpuscope {

namespace {

// [SECTION] Output buffer and numbers -------------------------------------------------------------

constexpr std::size_t kChunkBytes = 1u << 20;

class Out {
 public:
  // Starts small (most exports in tests are tiny) and grows to one chunk.
  explicit Out(const ChromeSink& sink) : sink_(sink) { buf_.reserve(64u << 10); }

  void raw(std::string_view s) { buf_.append(s); }
  void ch(char c) { buf_.push_back(c); }
  void u64(std::uint64_t v) { json::append_unsigned(buf_, v); }
  void i64(std::int64_t v) { json::append_integer(buf_, v); }
  // A non-negative ns count as µs with exactly three decimals.
  void us(std::uint64_t ns) {
    char tmp[32];
    char* p = std::to_chars(tmp, tmp + 24, ns / 1000).ptr;
    const unsigned frac = static_cast<unsigned>(ns % 1000);
    p[0] = '.';
    p[1] = static_cast<char>('0' + frac / 100);
    p[2] = static_cast<char>('0' + frac / 10 % 10);
    p[3] = static_cast<char>('0' + frac % 10);
    buf_.append(tmp, static_cast<std::size_t>(p + 4 - tmp));
  }
  // Shortest round-trip form; JSON has no NaN or infinity, callers check.
  void dbl(double v) { json::append_shortest(buf_, v); }
  // A quoted JSON string (json_writer.h's escaping and UTF-8 replacement).
  void str(std::string_view s) { json::append_string(buf_, s); }
  // Ends an event: counts it and hands a full buffer to the sink.
  void end_event() {
    ++events_;
    if (buf_.size() >= kChunkBytes) flush();
  }
  void flush() {
    if (buf_.empty()) return;
    sink_(buf_);
    bytes_ += buf_.size();
    buf_.clear();
  }
  std::uint64_t events() const { return events_; }
  std::uint64_t bytes() const { return bytes_ + buf_.size(); }

 private:
  const ChromeSink& sink_;
  std::string buf_;
  std::uint64_t events_ = 0, bytes_ = 0;
};

// [SECTION] JSON strings --------------------------------------------------------------------------

// A quoted JSON string, for the strings escaped once and kept (names,
// track fragments).
std::string json_string(std::string_view s) {
  std::string out;
  json::append_string(out, s);
  return out;
}

// Whether `s` is one JSON value (PyTorch's "Input Dims" text: arrays of
// numbers, strings, literals), so it can be written as it is. Anything else
// is written as a string.
bool is_json_value(std::string_view s) {
  std::size_t i = 0, depth = 0;
  bool value_done = false;  // a value just ended: ',' ']' or the end may follow
  auto bad = [] { return false; };
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '[') {
      if (value_done) return bad();
      ++depth, ++i;
    } else if (c == ']') {
      if (depth == 0) return bad();
      --depth, ++i, value_done = true;
    } else if (c == ',') {
      if (!value_done || depth == 0) return bad();
      ++i, value_done = false;
    } else if (c == '"') {
      if (value_done) return bad();
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (static_cast<unsigned char>(s[i]) < 0x20) return bad();
        if (s[i] == '\\' && ++i == s.size()) return bad();
      }
      if (i == s.size()) return bad();
      ++i, value_done = true;
    } else if ((c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f' || c == 'n') {
      if (value_done) return bad();
      const std::size_t from = i;
      while (i < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '+' || s[i] == '.'))
        ++i;
      const std::string_view tok = s.substr(from, i - from);
      if (c == 't' || c == 'f' || c == 'n') {
        if (tok != "true" && tok != "false" && tok != "null") return bad();
      } else {
        double d;
        const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
        if (ec != std::errc() || end != tok.data() + tok.size()) return bad();
      }
      value_done = true;
    } else {
      return bad();
    }
    if (value_done && depth == 0 && i < s.size() && s.find_first_not_of(" \n\t\r", i) != std::string_view::npos)
      return bad();
  }
  return value_done && depth == 0;
}

// Each StringId escaped once, on first use.
class EscapedStrings {
 public:
  explicit EscapedStrings(const StringTable& strings) : strings_(strings), span_(strings.size(), kUnset) {}
  std::string_view get(StringId id) {
    if (id >= span_.size()) return "\"\"";
    if (span_[id].offset == kUnset.offset) {
      const std::size_t at = arena_.size();
      json::append_string(arena_, strings_.get(id));
      span_[id] = {at, arena_.size() - at};
    }
    return std::string_view(arena_).substr(span_[id].offset, span_[id].size);
  }

 private:
  struct Span {
    std::size_t offset, size;
  };
  static constexpr Span kUnset{~std::size_t{0}, 0};
  const StringTable& strings_;
  std::vector<Span> span_;
  std::string arena_;
};

// [SECTION] Tracks: pid, tid and names ----------------------------------------------------------

struct TrackOut {
  std::string pid_tid;  // `"pid":0,"tid":7`
  std::uint32_t device = kNoDevice;
  std::int64_t stream = -1;
  double sm_count = 0;  // 0 = unknown: no occupancy estimates
  std::uint32_t warp = 32;
};

std::string pid_tid(std::uint64_t pid, std::int64_t tid) {
  return "\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid);
}

// Kineto's words for a memory kind and a sync type, by the enum's value.
std::string_view memory_name(MemoryKind k) {
  static constexpr std::string_view kNames[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                                "Array",   "Managed",  "Device Static", "Managed Static"};
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(kNames) ? kNames[i] : kNames[0];
}

std::string_view sync_name(SyncType t) {
  static constexpr std::string_view kNames[] = {"Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                                                "Context Sync"};
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(kNames) ? kNames[i] : kNames[0];
}

// [SECTION] Events --------------------------------------------------------------------------------

// The frames of host samples' stacks (';'-separated, outermost first) as
// Chrome's "stackFrames": each distinct frame under each distinct parent once.
class StackFrames {
 public:
  explicit StackFrames(const Trace& t) : t_(t), leaf_of_(t.strings().size(), kUnknown) {}

  // The id of the stack's innermost frame ("sf" of its sample event).
  std::uint32_t leaf(StringId stack) {
    std::uint32_t& leaf = leaf_of_[stack];
    if (leaf != kUnknown) return leaf;
    std::uint32_t parent = 0;
    std::string_view rest = t_.str(stack);
    while (!rest.empty()) {
      const std::size_t cut = std::min(rest.find(';'), rest.size());
      const std::string_view frame = rest.substr(0, cut);
      rest = cut < rest.size() ? rest.substr(cut + 1) : std::string_view();
      std::string key = std::to_string(parent);
      key.push_back(';');
      key.append(frame);
      auto [it, added] = ids_.try_emplace(std::move(key), static_cast<std::uint32_t>(frames_.size() + 1));
      if (added) frames_.push_back({std::string(frame), parent});
      parent = it->second;
    }
    return leaf = parent;
  }
  bool empty() const { return frames_.empty(); }
  // `"stackFrames":{"1":{"name":…},"2":{"name":…,"parent":"1"},…}`
  void write(Out& out) const {
    out.raw("\"stackFrames\":{");
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      out.raw(i ? ",\n\"" : "\n\"");
      out.u64(i + 1);
      out.raw("\":{\"category\":\"python\",\"name\":");
      out.str(frames_[i].name);
      if (frames_[i].parent) {
        out.raw(",\"parent\":\"");
        out.u64(frames_[i].parent);
        out.ch('"');
      }
      out.ch('}');
    }
    out.raw("}");
  }

 private:
  static constexpr std::uint32_t kUnknown = ~0u;
  struct Frame {
    std::string name;
    std::uint32_t parent;
  };
  const Trace& t_;
  std::vector<std::uint32_t> leaf_of_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<Frame> frames_;
};

class Exporter {
 public:
  Exporter(const Trace& t, Out& out, const ChromeExportOptions& o)
      : t_(t), out_(out), o_(o), names_(t.strings()), frames_(t) {}

  void run(ChromeExportStats& stats);

 private:
  // Relative ns since the base, in unsigned arithmetic: t >= base always, and
  // the difference of two int64 values always fits 64 unsigned bits.
  std::uint64_t rel(TimeNs t) const { return static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(base_); }
  static std::uint64_t span(TimeNs start, TimeNs end) {
    return static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start);
  }
  void begin_event() {
    if (!first_event_) out_.raw(",\n");
    first_event_ = false;
  }
  // `{"ph":"X","cat":…,"name":…,<pid/tid>,"ts":…,"dur":…`
  void complete(std::string_view cat, std::string_view name, std::string_view where, TimeNs start, TimeNs end) {
    begin_event();
    out_.raw("{\"ph\":\"X\",\"cat\":\"");
    out_.raw(cat);
    out_.raw("\",\"name\":");
    out_.raw(name);
    out_.ch(',');
    out_.raw(where);
    out_.raw(",\"ts\":");
    out_.us(rel(start));
    out_.raw(",\"dur\":");
    out_.us(span(start, end));
  }
  void flow(char ph, std::uint32_t id, std::string_view where, TimeNs ts) {
    begin_event();
    out_.raw("{\"ph\":\"");
    out_.ch(ph);
    out_.raw("\",\"id\":");
    out_.u64(id);
    out_.ch(',');
    out_.raw(where);
    out_.raw(",\"ts\":");
    out_.us(rel(ts));
    out_.raw(ph == 'f' ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}" : ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
    out_.end_event();
  }
  void metadata(std::string_view what, std::uint64_t pid, std::int64_t tid, std::string_view key,
                std::string_view json_value) {
    begin_event();
    out_.raw("{\"name\":\"");
    out_.raw(what);
    out_.raw("\",\"ph\":\"M\",");
    out_.raw(pid_tid(pid, tid));
    out_.raw(",\"args\":{\"");
    out_.raw(key);
    out_.raw("\":");
    out_.raw(json_value);
    out_.raw("}}");
    out_.end_event();
  }
  // The launching call's flow ends on this op only if it is the call's first op.
  bool flow_target(OpTable table, std::size_t row, RowIndex api) const {
    return o_.flows && api != kNoRow && t_.api_calls().op_table[api] == static_cast<std::uint8_t>(table) &&
           t_.api_calls().op_row[api] == row;
  }

  void prepare_tracks();
  void write_header();
  void write_metadata();
  void write_kernels();
  void write_memcpys();
  void write_memsets();
  template <class CopyTable>
  void write_copy(std::string_view cat, std::string_view name, const CopyTable& m, std::size_t i, OpTable table);
  void write_api_calls();
  void write_ranges();
  void write_sample(std::size_t row);
  void write_op_inputs(std::size_t row, const std::function<void()>& sep);
  void write_syncs();
  void write_counters(ChromeExportStats& stats);
  void write_overheads();
  void write_os_calls();

  const Trace& t_;
  Out& out_;
  const ChromeExportOptions& o_;
  EscapedStrings names_;
  StackFrames frames_;
  std::vector<TrackOut> tracks_;
  TimeNs base_ = 0;
  bool first_event_ = true;
  std::uint32_t default_pid_ = 0;  // where counters without a device go
};

void Exporter::prepare_tracks() {
  tracks_.resize(t_.tracks().size());
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    const Track& tr = t_.tracks()[i];
    TrackOut& o = tracks_[i];
    if (tr.kind == TrackKind::gpu) {
      o.device = tr.device;
      o.stream = tr.stream;
      o.pid_tid = pid_tid(tr.device, tr.stream);
      if (const Device* d = t_.device(tr.device)) {
        o.sm_count = d->sm_count;
        if (d->warp_size) o.warp = d->warp_size;
      }
    } else {
      o.pid_tid = pid_tid(tr.pid, tr.tid);
    }
  }
  // Counters without a device go on the first process, else the first CPU thread's.
  if (!t_.processes().empty()) {
    default_pid_ = t_.processes()[0].pid;
  } else {
    for (const Track& tr : t_.tracks())
      if (tr.kind == TrackKind::cpu) {
        default_pid_ = tr.pid;
        break;
      }
  }
  // The base: the first event, rounded down to a whole µs so every ts keeps
  // its sub-µs digits as they were (tools that round to µs, HTA among them,
  // then see the same numbers as on the original trace).
  const TimeNs b = t_.begin_time();
  base_ = b >= 0 ? b / 1000 * 1000 : -((-(b + 1)) / 1000 + 1) * 1000;
}

void Exporter::write_header() {
  const TraceMeta& m = t_.meta();
  out_.raw("{\n\"schemaVersion\":1,\n\"displayTimeUnit\":\"ns\",\n\"baseTimeNanoseconds\":");
  out_.i64(base_);
  out_.raw(",\n\"traceName\":");
  std::string name = m.source == TraceSource::synthetic ? "synthetic trace (gpuscope synth, not a measurement)"
                                                        : (m.command_line.empty() ? m.producer : m.command_line);
  out_.str(name);
  out_.raw(",\n\"gpuscope\":{\"source\":");
  out_.str(to_string(m.source));
  out_.raw(",\"producer\":");
  out_.str(m.producer);
  out_.raw(",\"host\":");
  out_.str(m.host);
  out_.raw(",\"command_line\":");
  out_.str(m.command_line);
  out_.raw(",\"start_time_ns\":");
  out_.i64(m.start_time_ns);
  out_.raw(",\"rank\":");
  out_.i64(m.rank);
  out_.raw(",\"world_size\":");
  out_.i64(m.world_size);
  out_.raw(",\"stats\":{");
  for (std::size_t i = 0; i < m.stats.size(); ++i) {
    if (i) out_.ch(',');
    out_.str(m.stats[i].first);
    out_.ch(':');
    out_.u64(m.stats[i].second);
  }
  out_.raw("},\"properties\":{");
  for (std::size_t i = 0; i < m.properties.size(); ++i) {
    if (i) out_.ch(',');
    out_.str(m.properties[i].first);
    out_.ch(':');
    out_.str(m.properties[i].second);
  }
  out_.raw("}},\n\"deviceProperties\":[");
  bool first = true;
  for (const Device& d : t_.devices()) {
    out_.raw(first ? "\n" : ",\n");
    first = false;
    out_.raw("{\"id\":");
    out_.u64(d.id);
    out_.raw(",\"name\":");
    out_.str(d.name);
    out_.raw(",\"uuid\":");
    out_.str(d.uuid);
    const std::pair<const char*, std::uint64_t> fields[] = {
        {"totalGlobalMem", d.memory_bytes},
        {"computeMajor", static_cast<std::uint64_t>(std::max(d.compute_major, 0))},
        {"computeMinor", static_cast<std::uint64_t>(std::max(d.compute_minor, 0))},
        {"maxThreadsPerBlock", d.max_threads_per_block},
        {"maxThreadsPerMultiprocessor", d.max_threads_per_sm},
        {"maxBlocksPerMultiprocessor", d.max_blocks_per_sm},
        {"regsPerMultiprocessor", d.registers_per_sm},
        {"warpSize", d.warp_size},
        {"sharedMemPerMultiprocessor", d.shared_memory_per_sm},
        {"numSms", d.sm_count},
        {"clockRate", d.core_clock_khz},
        {"memoryClockRate", d.memory_clock_khz},
        {"memoryBusWidth", d.memory_bus_width_bits},
    };
    for (const auto& [key, value] : fields) {
      out_.raw(",\"");
      out_.raw(key);
      out_.raw("\":");
      out_.u64(value);
    }
    const std::pair<const char*, double> peaks[] = {{"peakFp32Flops", d.peak_fp32_flops},
                                                    {"peakTensorFlops", d.peak_tensor_flops},
                                                    {"peakMemoryBandwidth", d.peak_memory_bandwidth}};
    for (const auto& [key, value] : peaks) {
      if (!(std::isfinite(value) && value > 0)) continue;
      out_.raw(",\"");
      out_.raw(key);
      out_.raw("\":");
      out_.dbl(value);
    }
    out_.ch('}');
  }
  out_.raw("\n],\n");
  if (m.rank >= 0) {
    out_.raw("\"distributedInfo\":{\"rank\":");
    out_.i64(m.rank);
    out_.raw(",\"world_size\":");
    out_.i64(m.world_size);
    out_.raw("},\n");
  }
  out_.raw("\"traceEvents\":[\n");
}

void Exporter::write_metadata() {
  // GPU "processes": every device described, on a track, or waited on by a sync.
  std::set<std::uint32_t> devices;
  for (const Device& d : t_.devices()) devices.insert(d.id);
  std::set<std::pair<std::uint32_t, std::int64_t>> gpu_threads;  // (device, stream or -1)
  for (const Track& tr : t_.tracks())
    if (tr.kind == TrackKind::gpu) devices.insert(tr.device), gpu_threads.insert({tr.device, tr.stream});
  const SyncTable& s = t_.syncs();
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.device[i] != kNoDevice)
      devices.insert(s.device[i]),
          gpu_threads.insert({s.device[i], s.stream[i] == kNoId ? std::int64_t{-1} : std::int64_t{s.stream[i]}});
  const bool synthetic = t_.meta().source == TraceSource::synthetic;
  for (std::uint32_t d : devices) {
    const Device* dev = t_.device(d);
    std::string name = "GPU " + std::to_string(d);
    if (synthetic) name += " (synthetic)";
    metadata("process_name", d, 0, "name", json_string(name));
    if (dev && !dev->name.empty()) metadata("process_labels", d, 0, "labels", json_string(dev->name));
    metadata("process_sort_index", d, 0, "sort_index", std::to_string(d));
  }
  std::map<std::pair<std::uint32_t, std::int64_t>, std::string_view> track_names;
  for (const Track& tr : t_.tracks())
    if (tr.kind == TrackKind::gpu && !tr.name.empty()) track_names[{tr.device, tr.stream}] = tr.name;
  for (const auto& [device, stream] : gpu_threads) {
    const auto it = track_names.find({device, stream});
    const std::string name = it != track_names.end() ? std::string(it->second)
                             : stream < 0            ? std::string("syncs without a stream")
                                                     : "stream " + std::to_string(stream);
    metadata("thread_name", device, stream, "name", json_string(name));
    metadata("thread_sort_index", device, stream, "sort_index", std::to_string(stream));
  }

  // CPU processes and threads, after the GPUs.
  std::set<std::uint32_t> pids;
  for (const Process& p : t_.processes()) pids.insert(p.pid);
  for (const Track& tr : t_.tracks())
    if (tr.kind == TrackKind::cpu) pids.insert(tr.pid);
  std::uint64_t order = 0;
  for (std::uint32_t pid : pids) {
    const Process* p = t_.process(pid);
    std::string name = p && !p->name.empty() ? p->name : "process " + std::to_string(pid);
    metadata("process_name", pid, 0, "name", json_string(name));
    metadata("process_labels", pid, 0, "labels", "\"CPU\"");
    metadata("process_sort_index", pid, 0, "sort_index", std::to_string(1'000'000 + order++));
  }
  std::uint64_t thread_order = 0;
  for (const Track& tr : t_.tracks()) {
    if (tr.kind != TrackKind::cpu) continue;
    const std::string name = tr.name.empty() ? "thread " + std::to_string(tr.tid) : tr.name;
    metadata("thread_name", tr.pid, tr.tid, "name", json_string(name));
    metadata("thread_sort_index", tr.pid, tr.tid, "sort_index", std::to_string(thread_order++));
  }
}

void Exporter::write_kernels() {
  const KernelTable& k = t_.kernels();
  for (std::size_t i = 0; i < k.size(); ++i) {
    const TrackOut& tr = tracks_[k.track_at(i)];
    complete("kernel", names_.get(k.name[i]), tr.pid_tid, k.start[i], k.end[i]);
    out_.raw(",\"args\":{\"device\":");
    out_.u64(tr.device);
    out_.raw(",\"stream\":");
    out_.i64(tr.stream);
    out_.raw(",\"correlation\":");
    out_.u64(k.correlation[i]);
    out_.raw(",\"registers per thread\":");
    out_.u64(k.registers[i]);
    out_.raw(",\"shared memory\":");
    out_.u64(std::uint64_t{k.static_smem[i]} + k.dynamic_smem[i]);
    out_.raw(",\"grid\":[");
    out_.u64(k.grid_x[i]);
    out_.ch(',');
    out_.u64(k.grid_y[i]);
    out_.ch(',');
    out_.u64(k.grid_z[i]);
    out_.raw("],\"block\":[");
    out_.u64(k.block_x[i]);
    out_.ch(',');
    out_.u64(k.block_y[i]);
    out_.ch(',');
    out_.u64(k.block_z[i]);
    out_.ch(']');
    if (tr.sm_count > 0) {  // Kineto's estimates: blocks and warps per SM
      const double blocks = static_cast<double>(k.grid_x[i]) * k.grid_y[i] * k.grid_z[i];
      const double threads = static_cast<double>(k.block_x[i]) * k.block_y[i] * k.block_z[i];
      const double per_sm = blocks / tr.sm_count;
      out_.raw(",\"blocks per SM\":");
      out_.dbl(per_sm);
      out_.raw(",\"warps per SM\":");
      out_.dbl(per_sm * std::ceil(threads / tr.warp));
    }
    if (const std::uint32_t g = k.graph_id_at(i)) {
      out_.raw(",\"graph id\":");
      out_.u64(g);
      out_.raw(",\"graph node id\":");
      out_.u64(k.graph_node_id_at(i));
    }
    if (const StringId m = k.mangled_at(i)) {
      out_.raw(",\"mangled name\":");
      out_.raw(names_.get(m));
    }
    out_.raw("}}");
    out_.end_event();
    if (flow_target(OpTable::kernel, i, k.api[i])) flow('f', k.correlation[i], tr.pid_tid, k.start[i]);
  }
}

// Kineto's op args: device, stream, correlation, bytes, bandwidth (bytes/ns = GB/s).
void write_copy_args(Out& out, const TrackOut& tr, std::uint32_t correlation, std::uint64_t bytes, TimeNs start,
                     TimeNs end) {
  out.raw(",\"args\":{\"device\":");
  out.u64(tr.device);
  out.raw(",\"stream\":");
  out.i64(tr.stream);
  out.raw(",\"correlation\":");
  out.u64(correlation);
  out.raw(",\"bytes\":");
  out.u64(bytes);
  out.raw(",\"memory bandwidth (GB/s)\":");
  const std::uint64_t ns = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start);
  if (ns == 0)
    out.ch('0');
  else
    out.dbl(static_cast<double>(bytes) / static_cast<double>(ns));
  out.raw("}}");
}

void Exporter::write_memcpys() {
  const MemcpyTable& m = t_.memcpys();
  std::map<std::uint32_t, std::string> names;  // (kind, src, dst) -> escaped name
  for (std::size_t i = 0; i < m.size(); ++i) {
    const std::uint32_t key = (std::uint32_t{m.kind[i]} << 16) | (std::uint32_t{m.src_kind[i]} << 8) | m.dst_kind[i];
    auto it = names.find(key);
    if (it == names.end()) {
      const std::string name = "Memcpy " + std::string(to_string(m.kind_at(i))) + " (" +
                               std::string(memory_name(m.src_kind_at(i))) + " -> " +
                               std::string(memory_name(m.dst_kind_at(i))) + ")";
      it = names.emplace(key, json_string(name)).first;
    }
    write_copy("gpu_memcpy", it->second, m, i, OpTable::memcpy);
  }
}

void Exporter::write_memsets() {
  const MemsetTable& m = t_.memsets();
  for (std::size_t i = 0; i < m.size(); ++i) {
    const std::string name =
        json_string("Memset (" + std::string(memory_name(static_cast<MemoryKind>(m.mem_kind[i]))) + ")");
    write_copy("gpu_memset", name, m, i, OpTable::memset);
  }
}

// One memcpy or memset row `i` of `m`: its event, its arguments and the
// arrow from its launch call.
template <class CopyTable>
void Exporter::write_copy(std::string_view cat, std::string_view name, const CopyTable& m, std::size_t i,
                          OpTable table) {
  const TrackOut& tr = tracks_[m.track_at(i)];
  complete(cat, name, tr.pid_tid, m.start[i], m.end[i]);
  write_copy_args(out_, tr, m.correlation[i], m.bytes[i], m.start[i], m.end[i]);
  out_.end_event();
  if (flow_target(table, i, m.api[i])) flow('f', m.correlation[i], tr.pid_tid, m.start[i]);
}

void Exporter::write_api_calls() {
  const ApiCallTable& a = t_.api_calls();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const TrackOut& tr = tracks_[a.track_at(i)];
    complete(a.domain_at(i) == ApiDomain::driver ? "cuda_driver" : "cuda_runtime", names_.get(a.name[i]), tr.pid_tid,
             a.start[i], a.end[i]);
    out_.raw(",\"args\":{");
    if (const std::uint32_t cbid = a.cbid_at(i)) {
      out_.raw("\"cbid\":");
      out_.u64(cbid);
      out_.ch(',');
    }
    out_.raw("\"correlation\":");
    out_.u64(a.correlation[i]);
    if (const std::int32_t status = a.status_at(i)) {
      out_.raw(",\"status\":");
      out_.i64(status);
    }
    out_.raw("}}");
    out_.end_event();
    if (o_.flows && a.op_table[i] != static_cast<std::uint8_t>(OpTable::none))
      flow('s', a.correlation[i], tr.pid_tid, a.start[i]);
  }
}

// A host sample (a mark in the "host_sample" domain, its stack as its name):
// Chrome's sample event, its stack in the document's "stackFrames".
void Exporter::write_sample(std::size_t i) {
  const RangeTable& r = t_.ranges();
  begin_event();
  out_.raw("{\"ph\":\"P\",\"cat\":\"host_sample\",\"name\":\"host sample\",");
  out_.raw(tracks_[r.track_at(i)].pid_tid);
  out_.raw(",\"ts\":");
  out_.us(rel(r.start[i]));
  out_.raw(",\"sf\":\"");
  out_.u64(frames_.leaf(r.name[i]));
  out_.raw("\"}");
  out_.end_event();
}

// A framework op's inputs as Kineto writes them: "Input Dims", "Input type",
// "Concrete Inputs" (JSON values; text that is not one is written as a string).
void Exporter::write_op_inputs(std::size_t i, const std::function<void()>& sep) {
  const RangeTable& r = t_.ranges();
  const std::pair<std::string_view, StringId> inputs[] = {{"\"Input Dims\":", r.input_dims_at(i)},
                                                          {"\"Input type\":", r.input_types_at(i)},
                                                          {"\"Concrete Inputs\":", r.concrete_inputs_at(i)}};
  for (const auto& [key, id] : inputs) {
    if (!id) continue;
    sep();
    out_.raw(key);
    const std::string_view text = t_.str(id);
    out_.raw(is_json_value(text) ? text : names_.get(id));
  }
}

void Exporter::write_ranges() {
  const RangeTable& r = t_.ranges();
  const StringId sample_domain = t_.strings().find(kHostSampleDomain);
  for (std::size_t i = 0; i < r.size(); ++i) {
    const TrackOut& tr = tracks_[r.track_at(i)];
    const bool gpu = t_.tracks()[r.track_at(i)].kind == TrackKind::gpu;
    const RangeKind kind = r.kind_at(i);
    if (kind == RangeKind::mark && r.domain[i] == sample_domain && !gpu) {
      write_sample(i);
      continue;
    }
    const std::string_view domain = t_.str(r.domain[i]);
    // Imported annotations keep their category (cpu_op, python_function, …);
    // NVTX ranges are user annotations with their domain in the args.
    const std::string_view cat = gpu                                                ? "\"gpu_user_annotation\""
                                 : kind == RangeKind::annotation && !domain.empty() ? names_.get(r.domain[i])
                                                                                    : "\"user_annotation\"";
    begin_event();
    out_.raw(kind == RangeKind::mark ? "{\"ph\":\"i\",\"s\":\"t\",\"cat\":" : "{\"ph\":\"X\",\"cat\":");
    out_.raw(cat);
    out_.raw(",\"name\":");
    out_.raw(names_.get(r.name[i]));
    out_.ch(',');
    out_.raw(tr.pid_tid);
    out_.raw(",\"ts\":");
    out_.us(rel(r.start[i]));
    if (kind != RangeKind::mark) {
      out_.raw(",\"dur\":");
      out_.us(span(r.start[i], r.end[i]));
    }
    out_.raw(",\"args\":{");
    bool any = false;
    auto sep = [&] {
      if (any) out_.ch(',');
      any = true;
    };
    if (kind != RangeKind::annotation && !domain.empty()) {
      sep();
      out_.raw("\"domain\":");
      out_.raw(names_.get(r.domain[i]));
    }
    if (const std::uint32_t color = r.color_at(i)) {
      static constexpr char kHex[] = "0123456789abcdef";
      char hex[10] = {'"', '#'};
      for (int d = 0; d < 6; ++d) hex[2 + d] = kHex[(color >> (20 - 4 * d)) & 15];
      hex[8] = '"';
      sep();
      out_.raw("\"color\":");
      out_.raw(std::string_view(hex, 9));
    }
    if (const std::int64_t payload = r.payload_at(i)) {
      sep();
      out_.raw("\"payload\":");
      out_.i64(payload);
    }
    if (const std::uint32_t corr = r.correlation_at(i)) {
      sep();
      out_.raw("\"External id\":");
      out_.u64(corr);
    }
    if (const std::int64_t seq = sequence_number(r, i); seq >= 0) {  // Kineto writes both on every op with one
      sep();
      out_.raw("\"Sequence number\":");
      out_.i64(seq);
      out_.raw(",\"Fwd thread id\":");
      out_.u64(r.fwd_thread_at(i));
    }
    write_op_inputs(i, sep);
    out_.raw("}}");
    out_.end_event();
  }
}

// Kineto draws CUPTI synchronization records on the GPU (pid = device,
// tid = stream or -1) with category cuda_sync; HTA counts "Event Sync" and
// "Context Sync" as GPU time. So do we, keeping the waiting thread findable
// through the correlation of its API call.
void Exporter::write_syncs() {
  const SyncTable& s = t_.syncs();
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::int64_t stream = s.stream[i] == kNoId ? std::int64_t{-1} : std::int64_t{s.stream[i]};
    const std::int64_t device = s.device[i] == kNoDevice ? std::int64_t{-1} : std::int64_t{s.device[i]};
    const std::string where = s.device[i] == kNoDevice ? tracks_[s.track_at(i)].pid_tid : pid_tid(s.device[i], stream);
    const std::string_view name = sync_name(s.type_at(i));
    complete("cuda_sync", json_string(name), where, s.start[i], s.end[i]);
    out_.raw(",\"args\":{\"cuda_sync_kind\":\"");
    out_.raw(name);
    out_.raw("\",\"stream\":");
    out_.i64(stream);
    out_.raw(",\"correlation\":");
    out_.u64(s.correlation[i]);
    out_.raw(",\"device\":");
    out_.i64(device);
    if (s.event[i] != kNoId) {
      out_.raw(",\"wait_on_cuda_event_id\":");
      out_.u64(s.event[i]);
    }
    out_.raw("}}");
    out_.end_event();
  }
}

void Exporter::write_counters(ChromeExportStats& stats) {
  const CounterTable& c = t_.counters();
  std::vector<std::string> name(t_.counter_series().size()), key(name.size()), pid(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    const CounterSeries& cs = t_.counter_series()[i];
    name[i] = json_string(cs.name);
    key[i] = json_string(cs.unit.empty() ? std::string("value") : cs.unit);
    pid[i] = std::to_string(cs.device == kNoDevice ? default_pid_ : cs.device);
  }
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!std::isfinite(c.value[i])) {
      ++stats.skipped_non_finite_counters;
      continue;
    }
    const std::uint32_t s = c.series[i];
    begin_event();
    out_.raw("{\"ph\":\"C\",\"name\":");
    out_.raw(name[s]);
    out_.raw(",\"pid\":");
    out_.raw(pid[s]);
    out_.raw(",\"ts\":");
    out_.us(rel(c.time[i]));
    out_.raw(",\"args\":{");
    out_.raw(key[s]);
    out_.ch(':');
    out_.dbl(c.value[i]);
    out_.raw("}}");
    out_.end_event();
  }
}

void Exporter::write_overheads() {
  const OverheadTable& o = t_.overheads();
  for (std::size_t i = 0; i < o.size(); ++i) {
    complete("overhead", names_.get(o.kind[i]), tracks_[o.track_at(i)].pid_tid, o.start[i], o.end[i]);
    out_.ch('}');
    out_.end_event();
  }
}

// OS runtime calls, category "os_runtime": the return value and, for a call
// inside another traced OS call, its nesting level.
void Exporter::write_os_calls() {
  const OsCallTable& o = t_.os_calls();
  for (std::size_t i = 0; i < o.size(); ++i) {
    complete("os_runtime", names_.get(o.name[i]), tracks_[o.track_at(i)].pid_tid, o.start[i], o.end[i]);
    out_.raw(",\"args\":{\"return_value\":");
    out_.i64(o.status_at(i));
    if (const std::uint16_t nesting = o.nesting_at(i)) {
      out_.raw(",\"nesting\":");
      out_.u64(nesting);
    }
    out_.raw("}}");
    out_.end_event();
  }
}

// [SECTION] The document --------------------------------------------------------------------------

void Exporter::run(ChromeExportStats& stats) {
  prepare_tracks();
  write_header();
  write_metadata();
  write_kernels();
  write_memcpys();
  write_memsets();
  write_api_calls();
  write_ranges();
  write_syncs();
  write_counters(stats);
  write_overheads();
  write_os_calls();
  out_.raw("\n]");
  if (!frames_.empty()) {
    out_.raw(",\n");
    frames_.write(out_);
  }
  out_.raw("}\n");
  out_.flush();
  stats.events = out_.events();
  stats.json_bytes = out_.bytes();
}

// [SECTION] Files: complete or absent, optionally gzip -----------------------------------------------------

// An OutputFile (complete or absent, never half-written), optionally through
// gzip.
class CompressedOutput {
 public:
  CompressedOutput(std::string path, const ChromeExportOptions& o) : file_(std::move(path)), o_(o) {
    if (o_.gzip) {
      const int level = std::clamp(o_.gzip_level, 1, 9);
      if (deflateInit2(&zs_, level, Z_DEFLATED, 15 + 16 /* gzip wrapper */, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw InputError(file_.path(), "cannot start gzip compression");
      zinit_ = true;
      zbuf_.resize(1u << 18);
    }
  }
  CompressedOutput(const CompressedOutput&) = delete;
  CompressedOutput& operator=(const CompressedOutput&) = delete;
  ~CompressedOutput() {
    if (zinit_) deflateEnd(&zs_);
  }

  void write(std::string_view s) {
    if (!o_.gzip) return write_all(s.data(), s.size());
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
    zs_.avail_in = static_cast<uInt>(s.size());
    deflate_until(Z_NO_FLUSH);
  }

  void commit() {
    if (o_.gzip) deflate_until(Z_FINISH);
    file_.commit(o_.sync);
  }

  std::uint64_t bytes() const { return bytes_; }

 private:
  void write_all(const char* p, std::size_t n) {
    file_.write(p, n);
    bytes_ += n;
  }
  void deflate_until(int flush) {
    for (;;) {
      zs_.next_out = reinterpret_cast<Bytef*>(zbuf_.data());
      zs_.avail_out = static_cast<uInt>(zbuf_.size());
      const int rc = deflate(&zs_, flush);
      if (rc == Z_STREAM_ERROR) throw InputError(file_.path(), "gzip compression failed");
      write_all(zbuf_.data(), zbuf_.size() - zs_.avail_out);
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (zs_.avail_in == 0 && zs_.avail_out != 0)) return;
    }
  }

  files::OutputFile file_;
  const ChromeExportOptions& o_;
  z_stream zs_{};
  bool zinit_ = false;
  std::vector<char> zbuf_;
  std::uint64_t bytes_ = 0;
};

}  // namespace

ChromeExportStats write_chrome_trace(const Trace& trace, const ChromeSink& sink, const ChromeExportOptions& options) {
  ChromeExportStats stats;
  Out out(sink);
  Exporter(trace, out, options).run(stats);
  return stats;
}

ChromeExportStats write_chrome_trace_file(const Trace& trace, const std::string& path,
                                          const ChromeExportOptions& options) {
  CompressedOutput file(path, options);
  const ChromeSink sink = [&](std::string_view s) { file.write(s); };
  ChromeExportStats stats = write_chrome_trace(trace, sink, options);
  file.commit();
  stats.file_bytes = file.bytes();
  return stats;
}

std::string chrome_trace_json(const Trace& trace, const ChromeExportOptions& options) {
  std::string all;
  write_chrome_trace(
      trace, [&](std::string_view s) { all.append(s); }, options);
  return all;
}

std::string format_chrome_us(std::int64_t ns) {
  std::string s;
  const ChromeSink sink = [&](std::string_view piece) { s.append(piece); };
  Out out(sink);
  out.us(static_cast<std::uint64_t>(ns));
  out.flush();
  return s;
}

}  // namespace gpuscope
