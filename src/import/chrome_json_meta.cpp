// The Chrome JSON importer's trace-level facts (chrome_json_parser.h): the
// root object's values other than "traceEvents" (distributedInfo, scalar
// keys; deviceProperties in chrome_json_devices.cpp), and finishing the
// trace after the last event: track names, processes, devices, the time
// origin, HIP grids given in work-items, what was skipped, and where a file
// cut short stopped.
//
// [SECTION] Top-level values
// [SECTION] Finishing
// [SECTION] Names and processes
// [SECTION] Meta and skip counts
// [SECTION] Files cut short
#include <algorithm>
#include <type_traits>
#include <vector>

#include "import/chrome_json_parser.h"
#include "trace/error.h"

namespace gpuscope::detail::chrome {

// [SECTION] Top-level values ---------------------------------------------------------------------

// Read with the same walker as events (the splitter has delimited the value;
// the buffer's padding follows it).
void EventParser::add_top_value(EventReader& reader, JsonBatch& b, const JsonSegment& seg) {
  const char* begin = b.data.get() + seg.begin;
  const char* end = b.data.get() + seg.end;
  Walker w(begin);
  try {
    const char c = w.peek();
    // A key the root object had already (a second "traceEvents" too): the first stands.
    if (seg.key == "traceEvents" || !top_keys_.insert(seg.key).second) {
      skip(Skip::duplicate_key);
      w.skip_value();
    } else if (seg.key == "deviceProperties" && c == '[') {
      read_device_properties(reader, w, b);
    } else if (seg.key == "distributedInfo" && c == '{') {
      read_distributed_info(reader, w, b);
    } else if (c == '"') {
      const RawString s = EventReader::read_string(w);
      top_scalar(seg.key, to_string(s, b), b, begin);
    } else if (w.at_number() || c == 't' || c == 'f') {
      w.skip_value();
      top_scalar(seg.key, std::string(begin, static_cast<std::size_t>(w.pos() - begin)), b, begin);
    } else {
      w.skip_value();  // other objects and arrays ("INFO", "metadata", …): checked, not used
    }
    if (w.pos() != end) throw JsonSyntaxError{w.pos(), "unexpected character in a value"};
  } catch (const JsonSyntaxError& e) {
    source_.fail_at(b, e.at, std::string("malformed JSON: ") + e.what + " (in the value of \"" + seg.key + "\")");
  }
}

void EventParser::top_scalar(const std::string& key, const std::string& value, const JsonBatch& b, const char* at) {
  if (key == "baseTimeNanoseconds") {
    std::int64_t base = 0;
    if (!parse_json_int(value, &base)) source_.fail_at(b, at, "\"baseTimeNanoseconds\" is not an integer");
    origin_ns_ = base;
    kineto_ = true;
  } else if (key == "schemaVersion" || key == "traceName") {
    kineto_ = true;
  } else if (key == "host_name" || key == "hostname") {
    builder_.meta().host = value;
  }
  if (value.size() <= 256) builder_.meta().set_property("chrome.meta." + key, value);
}

void EventParser::read_distributed_info(EventReader& reader, Walker& w, const JsonBatch& b) {
  reader.for_each_member(w, b, [&](std::string_view key) {
    std::int64_t n = 0;
    if (is_key(key, "rank")) {
      if (EventReader::read_int(w, &n))
        builder_.meta().rank = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, -1, 0x7fffffff));
    } else if (is_key(key, "world_size")) {
      if (EventReader::read_int(w, &n))
        builder_.meta().world_size = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, 0, 0x7fffffff));
    } else if (is_key(key, "backend")) {
      const RawString s = EventReader::read_string(w);
      if (s.present) builder_.meta().set_property("chrome.distributed.backend", to_string(s, b));
    } else {
      w.skip_value();
    }
  });
  kineto_ = true;
}

// [SECTION] Finishing ----------------------------------------------------------------------------

void EventParser::finish(const JsonStreamInfo& info, const EventReader& reader) {
  info_ = info;
  skips_[static_cast<int>(Skip::duplicate_key)] += reader.duplicate_keys;
  sub_us_ |= reader.sub_us;
  if (info_.cut_short) note_cut();
  if (!info_.root_is_array && !info_.saw_trace_events)
    throw InputError(source_.path, "not a Chrome trace: the top-level object has no \"traceEvents\" array");
  // Unclosed B events.
  for (auto& [track, stack] : open_) skips_[static_cast<int>(Skip::unclosed_begin)] += stack.size();
  // Times: the model's clock is absolute ns; ts was relative to baseTimeNanoseconds.
  if (origin_ns_ != 0) shift_times(origin_ns_);
  grids_in_blocks();
  copy_kinds_from_calls();
  add_since_start_samples();
  if (info_.cut_short) note_rows_after_cut();
  name_tracks();
  add_processes();
  add_devices();
  set_meta();
}

// HIP's hipExtModuleLaunchKernel (and hipHccModuleLaunchKernel, its old
// name) takes the launch's global work size, work-items per dimension, where
// every other launch call (hipLaunchKernel, hipModuleLaunchKernel) takes
// blocks; ROCm's tracer records the kernel's "grid" as the call took it. A
// kernel such a call launched (by correlation) gets its grid in blocks, as
// the model keeps it: ceil(grid / block) in each dimension. Counted under
// import.converted.grid_from_work_items. Only files that name such a call
// pay for more than two lookups.
void EventParser::grids_in_blocks() {
  const StringId ext = builder_.strings().find("hipExtModuleLaunchKernel");
  const StringId hcc = builder_.strings().find("hipHccModuleLaunchKernel");
  if (ext == StringTable::kNoString && hcc == StringTable::kNoString) return;
  const ApiCallTable& api = builder_.tables().api_calls;
  std::vector<std::uint32_t> launches;  // correlations of the calls that take work-items
  for (std::size_t i = 0; i < api.size(); ++i)
    if ((api.name[i] == ext || api.name[i] == hcc) && api.correlation[i] != 0) launches.push_back(api.correlation[i]);
  std::sort(launches.begin(), launches.end());
  KernelTable& k = builder_.tables().kernels;
  auto in_blocks = [](auto& grid, std::uint32_t block) {
    if (block > 1) grid = static_cast<std::remove_reference_t<decltype(grid)>>((grid + block - 1) / block);
  };
  std::uint64_t converted = 0;
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (k.correlation[i] == 0 || !std::binary_search(launches.begin(), launches.end(), k.correlation[i])) continue;
    if (k.block_x[i] == 0) continue;  // no block recorded: nothing to divide by
    in_blocks(k.grid_x[i], k.block_x[i]);
    in_blocks(k.grid_y[i], k.block_y[i]);
    in_blocks(k.grid_z[i], k.block_z[i]);
    ++converted;
  }
  if (converted) builder_.meta().set_stat("import.converted.grid_from_work_items", converted);
}

// ROCm's tracer names a copy between a device and pinned host memory
// "Memcpy DtoD" while its runtime call (by correlation) says the direction
// ("kind": 1 host to device, 2 device to host). A copy recorded as
// device-to-device whose call says otherwise takes the call's direction, its
// host side of unknown memory (pinned or pageable, the call does not say);
// counted under import.converted.copy_kind_from_call.
void EventParser::copy_kinds_from_calls() {
  if (call_copy_kinds_.empty()) return;
  std::sort(call_copy_kinds_.begin(), call_copy_kinds_.end());
  MemcpyTable& m = builder_.tables().memcpys;
  std::uint64_t converted = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m.kind[i] != static_cast<std::uint8_t>(CopyKind::dtod) || m.correlation[i] == 0) continue;
    const auto it = std::lower_bound(call_copy_kinds_.begin(), call_copy_kinds_.end(),
                                     std::pair{m.correlation[i], CopyKind::unknown});
    if (it == call_copy_kinds_.end() || it->first != m.correlation[i]) continue;
    m.kind[i] = static_cast<std::uint8_t>(it->second);
    (it->second == CopyKind::htod ? m.src_kind[i] : m.dst_kind[i]) = static_cast<std::uint8_t>(MemoryKind::unknown);
    ++converted;
  }
  if (converted) builder_.meta().set_stat("import.converted.copy_kind_from_call", converted);
}

Trace EventParser::freeze() {
  try {
    return builder_.freeze();
  } catch (const TraceError& e) {
    throw InputError(source_.path, std::string("inconsistent trace: ") + e.what());
  }
}

void EventParser::shift_times(std::int64_t delta) {
  auto shift = [&](std::vector<TimeNs>& col) {
    for (TimeNs& t : col) {
      if ((delta > 0 && t > std::numeric_limits<TimeNs>::max() - delta) ||
          (delta < 0 && t < std::numeric_limits<TimeNs>::min() - delta))
        throw InputError(source_.path, "timestamps plus baseTimeNanoseconds do not fit in 64-bit nanoseconds");
      t += delta;
    }
  };
  builder_.tables().for_each_table([&](TableId, auto& table) {
    table.for_each_column([&](ColumnInfo info, auto& col) {
      if constexpr (std::is_same_v<std::decay_t<decltype(col)>, std::vector<TimeNs>>)
        if (info.flags & kTime) shift(col);
    });
  });
}

// [SECTION] Names and processes ------------------------------------------------------------------

// Track names from thread_name metadata (trailing blanks trimmed).
void EventParser::name_tracks() {
  for (TrackId id = 0; id < builder_.tracks().size(); ++id) {
    const Track& t = builder_.tracks()[id];
    if (t.kind == TrackKind::cpu) {
      auto it = thread_names_.find((std::uint64_t{t.pid} << 32) | t.tid);
      if (it != thread_names_.end()) {
        builder_.set_track_name(id, it->second);
      } else if (auto p = pseudo_names_.find(t.tid); p != pseudo_names_.end()) {
        builder_.set_track_name(id, p->second);
      }
    } else {
      // Kineto: pid = device, tid = stream, named "stream 7 ".
      auto it = thread_names_.find((std::uint64_t{t.device} << 32) | t.stream);
      if (it != thread_names_.end() && starts_with_ci(it->second, "stream"))
        builder_.set_track_name(id, it->second);
      else
        builder_.set_track_name(id, "stream " + std::to_string(t.stream));
    }
  }
}

// Processes: every pid with a CPU track or a name, except Kineto's
// per-GPU pseudo-processes (labelled "GPU N").
void EventParser::add_processes() {
  std::vector<std::uint32_t> pids;
  for (const Track& t : builder_.tracks())
    if (t.kind == TrackKind::cpu) pids.push_back(t.pid);
  for (const auto& [pid, name] : process_names_) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (std::uint32_t pid : pids) {
    auto labels = process_labels_.find(pid);
    if (labels != process_labels_.end() && starts_with_ci(labels->second, "GPU")) continue;
    Process p;
    p.pid = pid;
    if (auto n = process_names_.find(pid); n != process_names_.end())
      p.name = n->second;
    else if (auto s = pseudo_names_.find(pid); s != pseudo_names_.end())
      p.name = s->second;
    const bool pseudo = pid >= kPseudoIdBase && pseudo_names_.count(pid);
    p.rank = pseudo ? -1 : builder_.meta().rank;
    builder_.add_process(p);
  }
}

// [SECTION] Meta and skip counts -----------------------------------------------------------------

void EventParser::set_meta() {
  TraceMeta& meta = builder_.meta();
  meta.producer = kineto_ ? (schema_2021_ ? "PyTorch Profiler (Kineto), 2021 schema" : "PyTorch Profiler (Kineto)")
                          : "Chrome trace JSON";
  meta.set_property("chrome.ts_origin_ns", std::to_string(origin_ns_));
  meta.set_property("chrome.sub_us_timestamps", sub_us_ ? "1" : "0");
  meta.set_property("chrome.form", info_.root_is_array ? "array" : "object");
  if (info_.gzip) meta.set_property("chrome.gzip", "1");
  meta.set_stat("import.json_bytes", info_.json_bytes);
  if (info_.unterminated_array) meta.set_stat("import.unterminated_array", 1);
  // A plausible epoch (after 2001) is the recording's wall-clock start.
  constexpr std::int64_t kEpoch2001Ns = 1'000'000'000'000'000'000;
  if (min_time_ != std::numeric_limits<std::int64_t>::max()) {
    std::int64_t first = profiler_span_start_ != std::numeric_limits<TimeNs>::max() ? profiler_span_start_ : min_time_;
    TimeNs shifted = 0;  // with the origin added, unless that overflows (a fuzzed origin can be anything)
    if (origin_ns_ != 0 && !__builtin_add_overflow(first, origin_ns_, &shifted)) first = shifted;
    if (first >= kEpoch2001Ns) meta.start_time_ns = first;
  }
  for (int i = 0; i < static_cast<int>(Skip::count_); ++i)
    if (skips_[i]) meta.set_stat("import.skipped." + std::string(kSkipNames[i]), skips_[i]);
  for (const auto& [reason, n] : dynamic_skips_) meta.set_stat("import.skipped." + reason, n);
  if (sort_index_metadata_) meta.set_stat("import.ignored.sort_index_metadata", sort_index_metadata_);
  if (collective_args_) meta.set_stat("import.collective_args", collective_args_);
}

// [SECTION] Files cut short ----------------------------------------------------------------------

// The text ended early (a file cut short): the events before the cut are
// kept and meta().damage says where it stopped; with none, nothing usable
// remains and the import fails.
void EventParser::note_cut() {
  std::string what = info_.gzip_cut.empty()
                         ? "the JSON text ends early, at byte " + std::to_string(info_.cut_text_end) +
                               " (the end of the file), " + info_.cut_where
                         : info_.gzip_cut + "; the JSON text in it ends at byte " + std::to_string(info_.cut_text_end) +
                               ", " + info_.cut_where;
  std::uint64_t rows = 0;
  builder_.tables().for_each_table([&](TableId, const auto& t) { rows += t.size(); });
  if (rows == 0)
    throw InputError(source_.path, "truncated: " + what + "; no event could be recovered", info_.cut_complete_end);
  // Cut after the events array (or only the end of the gzip stream missing): every event is there.
  const bool all_there = info_.cut_events_complete;
  FileDamage& d = builder_.meta().damage;
  d.truncated = true;
  d.file_bytes = info_.file_bytes;
  // For gzip, where in the compressed bytes the last complete event ends is
  // not known: the whole file was read, and its end is missing.
  d.intact_bytes = info_.gzip ? info_.file_bytes : info_.cut_complete_end;
  d.bytes_lost = info_.gzip ? 0 : info_.file_bytes - std::min(info_.file_bytes, info_.cut_complete_end);
  d.problems.push_back(what + (all_there ? "; every event was loaded" : "; the events before it were loaded"));
}

// After a cut: the rows each table holds, once every row is made (the
// memory series' samples are added up at the end).
void EventParser::note_rows_after_cut() {
  const bool all_there = info_.cut_events_complete;
  FileDamage& d = builder_.meta().damage;
  builder_.tables().for_each_table([&](TableId id, const auto& t) {
    TableLoss& loss = d.tables[static_cast<int>(id)];
    loss.loaded = t.size();
    loss.count = all_there ? LossCount::exact : LossCount::at_least;  // how much followed the cut is unknown
  });
}

}  // namespace gpuscope::detail::chrome
