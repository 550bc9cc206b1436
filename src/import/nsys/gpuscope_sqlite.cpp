// Reading back gpuscope's own SQLite export (src/export/sqlite_export.cpp,
// docs/sqlite-export.md): the inverse of its writer, table by table, so that
// a trace exported and read back equals the trace (tests compare every
// table). String ids are the trace's own (StringIds rows below
// GPUSCOPE_META.string_count), tracks come from GPUSCOPE_TRACKS, and the
// gpuscope-only columns (cbid, the sync's waiting thread, annotation kinds)
// restore what Nsight Systems' schema has no place for. Exports written
// before those additions read back with their tracks rebuilt from
// GPUSCOPE_STREAMS, ThreadNames and the rows.
//
// [SECTION] Meta and strings
// [SECTION] Devices, processes, tracks
// [SECTION] GPU activity
// [SECTION] CPU activity: API calls, syncs, ranges, overheads, OS calls
// [SECTION] Counters
// [SECTION] Entry point
#include <charconv>
#include <limits>
#include <optional>
#include <unordered_map>

#include "import/nsys/readers.h"

namespace gpuscope::nsys {

namespace {

template <class T = std::int64_t>
T parse_int(std::string_view s, T fallback) {
  T v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() ? v : fallback;
}

// The writer stores unsigned 64-bit values as their int64 bit pattern.
std::uint64_t u64(const SqlValue& v) { return static_cast<std::uint64_t>(v.as_int()); }

class GpuscopeReader {
 public:
  explicit GpuscopeReader(const Input& in) : in_(in), db_(in.db) {}

  Trace run() {
    meta();
    strings();
    devices_and_processes();
    tracks();
    kernels();
    copies();
    api_calls();
    syncs();
    nvtx_ranges();
    annotations();
    overheads();
    os_calls();
    counters();
    skipped_.write_to(b_.meta());
    in_.add_damage(b_);
    return b_.freeze();
  }

 private:
  // [SECTION] Meta and strings ---------------------------------------------------------------------

  void meta() {
    const TableDef* t = db_.table("GPUSCOPE_META");
    TraceMeta& m = b_.meta();
    in_.reader(*t, {"key", "value"}).for_each([&](const SqlValue* v) {
      const std::string_view key = v[0].as_text(), value = v[1].as_text();
      if (key == "source") {
        for (int s = 0; s <= static_cast<int>(TraceSource::nsys_sqlite); ++s)
          if (to_string(static_cast<TraceSource>(s)) == value) m.source = static_cast<TraceSource>(s);
      } else if (key == "producer") {
        m.producer = value;
      } else if (key == "host") {
        m.host = value;
      } else if (key == "command_line") {
        m.command_line = value;
      } else if (key == "start_time_ns") {
        m.start_time_ns = parse_int<std::int64_t>(value, 0);
      } else if (key == "rank") {
        m.rank = parse_int<std::int32_t>(value, -1);
      } else if (key == "world_size") {
        m.world_size = parse_int<std::int32_t>(value, 0);
      } else if (key == "string_count") {
        string_count_ = parse_int<std::int64_t>(value, -1);
      } else if (key == "time_unit" && value != "ns") {
        throw InputError(db_.path(), "GPUSCOPE_META: time unit \"" + std::string(value) + "\" (expected ns)");
      } else if (key.substr(0, 5) == "stat.") {
        m.set_stat(key.substr(5), parse_int<std::uint64_t>(value, 0));
      } else if (key.substr(0, 9) == "property.") {
        m.set_property(key.substr(9), value);
      }
    });
  }

  // The trace's own strings keep their ids; the writer's additions (short
  // names, thread names) are looked up by text when something refers to them.
  void strings() {
    const TableDef* t = db_.table("StringIds");
    std::vector<std::string> all;
    std::vector<bool> present;
    in_.reader(*t, {"id", "value"}).for_each([&](const SqlValue* v) {
      const std::int64_t id = v[0].as_int();
      if (id < 0 || id >= (std::int64_t{1} << 31)) return skipped_.add("import.skipped.string_invalid_id");
      if (static_cast<std::size_t>(id) >= all.size()) {
        all.resize(static_cast<std::size_t>(id) + 1);
        present.resize(all.size());
      }
      all[static_cast<std::size_t>(id)] = v[1].as_text();
      present[static_cast<std::size_t>(id)] = true;
    });
    const std::size_t own =
        string_count_ >= 0 ? std::min<std::size_t>(static_cast<std::size_t>(string_count_), all.size()) : all.size();
    bool exact = own >= 1 && all[0].empty();
    for (std::size_t i = 0; exact && i < own; ++i) exact = present[i];
    if (exact) {
      std::string bytes;
      std::vector<std::uint64_t> lengths;
      for (std::size_t i = 1; i < own; ++i) {
        bytes += all[i];
        lengths.push_back(all[i].size());
      }
      b_.strings_mutable().append_raw(bytes, lengths);
      identity_ = static_cast<StringId>(own);
    }
    texts_ = std::move(all);
    present_ = std::move(present);
  }

  // The trace's id for string `id` of the file (0 for a missing one, counted).
  StringId string(std::int64_t id) {
    if (id >= 0 && id < identity_) return static_cast<StringId>(id);
    if (id >= 0 && static_cast<std::size_t>(id) < texts_.size() && present_[static_cast<std::size_t>(id)])
      return b_.intern(texts_[static_cast<std::size_t>(id)]);
    skipped_.add("import.unknown_string_ids");
    return 0;
  }
  std::string text(std::int64_t id) const {
    if (id >= 0 && static_cast<std::size_t>(id) < texts_.size()) return texts_[static_cast<std::size_t>(id)];
    return {};
  }

  // [SECTION] Devices, processes, tracks -------------------------------------------------------------

  void devices_and_processes() {
    if (const TableDef* t = db_.table("TARGET_INFO_GPU"))
      in_.reader(*t, {"id", "name", "uuid", "totalMemory", "smCount", "computeMajor", "computeMinor", "clockRate",
                      "memoryClockRate", "memoryBusWidth", "maxThreadsPerBlock", "maxThreadsPerSm", "maxBlocksPerSm",
                      "maxRegistersPerSm", "maxShmemPerSm", "threadsPerWarp", "peakFp32Flops", "peakTensorFlops",
                      "peakMemoryBandwidth"})
          .for_each([&](const SqlValue* v) {
            Device d;
            d.id = id32(v[0]);
            d.name = v[1].as_text();
            d.uuid = v[2].as_text();
            d.memory_bytes = u64(v[3]);
            d.sm_count = clamp32(v[4]);
            d.compute_major = static_cast<std::int32_t>(v[5].as_int());
            d.compute_minor = static_cast<std::int32_t>(v[6].as_int());
            d.core_clock_khz = clamp32(v[7]);
            d.memory_clock_khz = clamp32(v[8]);
            d.memory_bus_width_bits = clamp32(v[9]);
            d.max_threads_per_block = clamp32(v[10]);
            d.max_threads_per_sm = clamp32(v[11]);
            d.max_blocks_per_sm = clamp32(v[12]);
            d.registers_per_sm = clamp32(v[13]);
            d.shared_memory_per_sm = clamp32(v[14]);
            d.warp_size = clamp32(v[15]);
            d.peak_fp32_flops = v[16].as_real();
            d.peak_tensor_flops = v[17].as_real();
            d.peak_memory_bandwidth = v[18].as_real();
            b_.add_device(d);
          });
    if (const TableDef* t = db_.table("PROCESSES"))
      in_.reader(*t, {"pid", "name", "rank"}).for_each([&](const SqlValue* v) {
        b_.add_process(Process{id32(v[0]), std::string(v[1].as_text()),
                               v[2].null() ? -1 : static_cast<std::int32_t>(v[2].as_int())});
      });
  }

  void tracks() {
    if (const TableDef* t = db_.table("GPUSCOPE_TRACKS")) {
      in_.reader(*t, {"kind", "deviceId", "streamId", "pid", "tid", "globalTid", "name"})
          .for_each([&](const SqlValue* v) {
            Track tr;
            tr.kind = v[0].as_text() == "gpu" ? TrackKind::gpu : TrackKind::cpu;
            tr.device = id32(v[1]);
            tr.stream = id32(v[2]);
            tr.pid = id32(v[3]);
            tr.tid = id32(v[4]);
            tr.name = v[6].as_text();
            const TrackId id = b_.add_track(tr);
            if (tr.kind == TrackKind::cpu && !v[5].null()) threads_.emplace(v[5].as_int(), id);
            if (tr.kind == TrackKind::gpu) gpu_tracks_.emplace((std::uint64_t{tr.device} << 32) | tr.stream, id);
          });
      return;
    }
    // An export written before GPUSCOPE_TRACKS: named tracks here, the rest
    // as the rows use them.
    if (const TableDef* t = db_.table("GPUSCOPE_STREAMS"))
      in_.reader(*t, {"deviceId", "streamId", "name"}).for_each([&](const SqlValue* v) {
        const TrackId id = b_.gpu_track(id32(v[0]), id32(v[1]));
        b_.set_track_name(id, v[2].as_text());
        gpu_tracks_.emplace(gpu_key(v[0], v[1]), id);
      });
    if (const TableDef* t = db_.table("ThreadNames"))
      in_.reader(*t, {"nameId", "globalTid"}).for_each([&](const SqlValue* v) {
        b_.set_track_name(cpu_track(v[1]), text(v[0].as_int()));
      });
  }

  TrackId cpu_track(const SqlValue& global_tid) {
    const std::int64_t g = global_tid.as_int();
    if (g == last_tid_ && last_cpu_ != kNoRow) return last_cpu_;
    const auto it = threads_.find(g);
    const TrackId id = it != threads_.end() ? it->second
                                            : b_.cpu_track(static_cast<std::uint32_t>(g >> 24),
                                                           static_cast<std::uint32_t>(g & 0xffffff));
    last_tid_ = g;
    last_cpu_ = id;
    return id;
  }
  TrackId gpu_track(const SqlValue& device, const SqlValue& stream) {
    const std::uint64_t key = (std::uint64_t{id32(device)} << 32) | id32(stream);
    if (key == last_gpu_key_ && last_gpu_ != kNoRow) return last_gpu_;
    last_gpu_key_ = key;
    return last_gpu_ = b_.gpu_track(id32(device), id32(stream));
  }
  static std::uint32_t graph_id(const SqlValue& v) { return v.null() ? 0 : id32(v); }

  // [SECTION] GPU activity -------------------------------------------------------------------------------

  // The kernel table in parts on several threads (row_parts.h). A part
  // resolves tracks and strings from what is known before it starts (the
  // GPUSCOPE_TRACKS rows, the trace's own string ids); anything else waits
  // in `Pending` for the calling thread.
  struct Pending {
    std::vector<std::pair<std::size_t, std::uint64_t>> tracks;         // (row in the part, GPU key or globalTid)
    std::vector<std::pair<std::size_t, std::int64_t>> names, mangled;  // (row in the part, file string id)
    Counts skipped;
    std::optional<Narrow> narrow;  // the part's coerced values
  };
  StringId known_string(std::int64_t id, std::size_t row, std::vector<std::pair<std::size_t, std::int64_t>>& later) {
    if (id >= 0 && id < identity_) return static_cast<StringId>(id);
    later.emplace_back(row, id);
    return 0;
  }
  static std::uint64_t gpu_key(const SqlValue& device, const SqlValue& stream) {
    return (std::uint64_t{id32(device)} << 32) | id32(stream);
  }

  // Where each part's rows go in the table: part p's from base[p], room for
  // rows(p) of them (the table read in parts: its counts are its pages'; read
  // through SQLite: one part, counted by SQLite).
  struct Layout {
    std::vector<std::size_t> base, capacity;
    std::size_t rows = 0;
  };
  Layout layout(const std::vector<std::uint64_t>& part_rows, std::string_view table) const {
    Layout l;
    std::uint64_t total = 0;
    for (std::uint64_t r : part_rows) total += r;
    if (!rows_fit(total, db_.file_bytes()))
      throw InputError(db_.path(), "corrupt SQLite database: table " + std::string(table) + " claims " +
                                       std::to_string(total) + " rows in a file of " +
                                       std::to_string(db_.file_bytes()) + " bytes");
    for (std::uint64_t r : part_rows) {
      l.base.push_back(l.rows);
      l.capacity.push_back(static_cast<std::size_t>(r));
      l.rows += static_cast<std::size_t>(r);
    }
    return l;
  }
  [[noreturn]] void changed(std::string_view table) const {
    throw InputError(db_.path(), "table " + std::string(table) + " holds more rows than its pages counted");
  }

  void kernels() {
    const TableDef* t = db_.table("CUPTI_ACTIVITY_KIND_KERNEL");
    if (!t) return;
    TableReader reader =
        in_.reader(*t, {"start", "end", "deviceId", "streamId", "correlationId", "demangledName", "mangledName",
                        "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
                        "staticSharedMemory", "dynamicSharedMemory", "graphId", "graphNodeId"});
    const std::size_t n = reader.split(in_.threads());
    std::vector<std::uint64_t> counts(n);
    for (std::size_t p = 0; p < n; ++p) counts[p] = reader.direct() ? reader.rows(p) : in_.rows(*t);
    const Layout at = layout(counts, t->name);
    KernelTable& table = b_.tables().kernels;
    table = KernelTable{};
    size_columns(table, at.rows, in_.threads());
    std::vector<RowWriter<KernelTable, KernelRow>> out;
    for (std::size_t p = 0; p < n; ++p) out.emplace_back(table, at.base[p], at.capacity[p]);
    std::vector<Pending> pending(n);
    for (Pending& p : pending) p.narrow.emplace(narrow(reader));
    run_jobs(n, in_.threads(), [&](std::size_t p) {
      RowWriter<KernelTable, KernelRow>& w = out[p];
      Pending& later = pending[p];
      Narrow& c = *later.narrow;
      std::uint64_t last_key = ~std::uint64_t{0};
      TrackId last_track = 0;
      reader.for_each(p, [&](const SqlValue* v) {
        KernelRow k;
        if (!interval(v[0], v[1], 0, "kernel", later.skipped, &k.start, &k.end)) return;
        const std::uint64_t key = (std::uint64_t{c.id32(v, 2)} << 32) | c.id32(v, 3);
        if (key != last_key) {
          const auto it = gpu_tracks_.find(key);
          last_track = it != gpu_tracks_.end() ? it->second : kNoRow;
          last_key = key;
        }
        k.track = last_track;
        if (last_track == kNoRow) later.tracks.emplace_back(w.rows(), key);
        k.correlation = c.id32(v, 4);
        k.name = known_string(c.i64(v, 5), w.rows(), later.names);
        k.mangled = v[6].null() ? 0 : known_string(c.i64(v, 6), w.rows(), later.mangled);
        read_launch(c, v, 7, k);
        k.graph_id = graph_id(v[16]);
        k.graph_node_id = u64(v[17]);
        if (!w.add(k)) changed(t->name);
      });
    });
    std::vector<std::size_t> written(n);
    for (std::size_t p = 0; p < n; ++p) written[p] = out[p].rows();
    close_gaps(table, at.base, written);
    merge_sparse(table, written, out);
    for (std::size_t p = 0, base = 0; p < n; base += written[p], ++p) {
      for (const auto& [row, key] : pending[p].tracks)
        table.track[base + row] = b_.gpu_track(static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key));
      for (const auto& [row, id] : pending[p].names) table.name[base + row] = string(id);
      for (const auto& [row, id] : pending[p].mangled) {
        const StringId m = string(id);
        if (m == table.name[base + row]) continue;  // stored as 0, as detail::stored_row does
        if (table.mangled.empty()) table.mangled.resize(table.size());
        table.mangled[base + row] = m;
      }
      merge(pending[p].skipped);
      pending[p].narrow->add_to(skipped_);
    }
  }

  void merge(const Counts& c) { c.add_to(skipped_); }

  static CopyKind copy_kind(const SqlValue& v) {
    const std::int64_t x = v.as_int();
    return x >= 0 && x <= static_cast<std::int64_t>(CopyKind::ptop) ? static_cast<CopyKind>(x) : CopyKind::unknown;
  }
  static MemoryKind memory_kind(const SqlValue& v) {
    const std::int64_t x = v.as_int();
    return x >= 0 && x <= static_cast<std::int64_t>(MemoryKind::managed_static) ? static_cast<MemoryKind>(x)
                                                                                : MemoryKind::unknown;
  }

  void copies() {
    if (const TableDef* t = db_.table("CUPTI_ACTIVITY_KIND_MEMCPY")) {
      TableReader r = in_.reader(*t, {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind",
                                      "srcKind", "dstKind", "graphId", "graphNodeId"});
      Narrow n = narrow(r);
      r.for_each([&](const SqlValue* v) {
        MemcpyRow c;
        if (!interval(v[0], v[1], 0, "memcpy", skipped_, &c.start, &c.end)) return;
        (void)n.id32(v, 2);  // counted; the track is made from the two as they are
        (void)n.id32(v, 3);
        c.track = gpu_track(v[2], v[3]);
        c.correlation = n.id32(v, 4);
        c.bytes = static_cast<std::uint64_t>(n.i64(v, 5));  // stored as the 64 bits of an int64
        c.kind = copy_kind(v[6]);
        c.src_kind = memory_kind(v[7]);
        c.dst_kind = memory_kind(v[8]);
        c.graph_id = graph_id(v[9]);
        c.graph_node_id = u64(v[10]);
        b_.add_memcpy(c);
      });
      n.add_to(skipped_);
    }
    if (const TableDef* t = db_.table("CUPTI_ACTIVITY_KIND_MEMSET")) {
      TableReader r = in_.reader(*t, {"start", "end", "deviceId", "streamId", "correlationId", "value", "bytes",
                                      "memKind", "graphId", "graphNodeId"});
      Narrow n = narrow(r);
      r.for_each([&](const SqlValue* v) {
        MemsetRow z;
        if (!interval(v[0], v[1], 0, "memset", skipped_, &z.start, &z.end)) return;
        (void)n.id32(v, 2);
        (void)n.id32(v, 3);
        z.track = gpu_track(v[2], v[3]);
        z.correlation = n.id32(v, 4);
        z.value = n.id32(v, 5);
        z.bytes = static_cast<std::uint64_t>(n.i64(v, 6));
        z.mem_kind = memory_kind(v[7]);
        z.graph_id = graph_id(v[8]);
        z.graph_node_id = u64(v[9]);
        b_.add_memset(z);
      });
      n.add_to(skipped_);
    }
  }

  // [SECTION] CPU activity: API calls, syncs, ranges, overheads, OS calls -------------------------------------------

  // The three API call tables, each in parts, all parts on several threads.
  void api_calls() {
    struct Source {
      const TableDef* table;
      ApiDomain domain;
    };
    std::vector<Source> sources;
    for (const auto& [name, domain] : {std::pair{"CUPTI_ACTIVITY_KIND_RUNTIME", ApiDomain::runtime},
                                       std::pair{"CUPTI_ACTIVITY_KIND_DRIVER", ApiDomain::driver},
                                       std::pair{"GPUSCOPE_OTHER_API_CALLS", ApiDomain::other}})
      if (const TableDef* t = db_.table(name)) sources.push_back(Source{t, domain});
    std::vector<TableReader> readers;
    struct Job {
      std::size_t source, part;
    };
    std::vector<Job> jobs;
    for (std::size_t s = 0; s < sources.size(); ++s) {
      readers.push_back(in_.reader(*sources[s].table,
                                   {"start", "end", "globalTid", "correlationId", "nameId", "returnValue", "cbid"}));
      const std::size_t n = readers.back().split(in_.threads());
      for (std::size_t p = 0; p < n; ++p) jobs.push_back(Job{s, p});
    }
    std::vector<std::uint64_t> counts(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const TableReader& reader = readers[jobs[j].source];
      counts[j] = reader.direct() ? reader.rows(jobs[j].part) : in_.rows(*sources[jobs[j].source].table);
    }
    const Layout at = layout(counts, "CUPTI_ACTIVITY_KIND_RUNTIME (with _DRIVER)");
    ApiCallTable& table = b_.tables().api_calls;
    table = ApiCallTable{};
    size_columns(table, at.rows, in_.threads());
    std::vector<RowWriter<ApiCallTable, ApiCallRow>> out;
    for (std::size_t j = 0; j < jobs.size(); ++j) out.emplace_back(table, at.base[j], at.capacity[j]);
    std::vector<Pending> pending(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) pending[j].narrow.emplace(narrow(readers[jobs[j].source]));
    run_jobs(jobs.size(), in_.threads(), [&](std::size_t j) {
      TableReader& reader = readers[jobs[j].source];
      RowWriter<ApiCallTable, ApiCallRow>& w = out[j];
      Pending& later = pending[j];
      Narrow& c = *later.narrow;
      const ApiDomain domain = sources[jobs[j].source].domain;
      std::int64_t last_tid = 0;
      TrackId last_track = kNoRow;
      bool have_last = false;
      reader.for_each(jobs[j].part, [&](const SqlValue* v) {
        ApiCallRow a;
        if (!interval(v[0], v[1], 0, "api_call", later.skipped, &a.start, &a.end)) return;
        const std::int64_t g = c.i64(v, 2);
        if (!have_last || g != last_tid) {
          const auto it = threads_.find(g);
          last_track = it != threads_.end() ? it->second : kNoRow;
          last_tid = g;
          have_last = true;
        }
        a.track = last_track;
        if (last_track == kNoRow) later.tracks.emplace_back(w.rows(), static_cast<std::uint64_t>(g));
        a.correlation = c.id32(v, 3);
        a.name = known_string(c.i64(v, 4), w.rows(), later.names);
        a.domain = domain;
        a.status = c.i32(v, 5);
        a.cbid = c.id32(v, 6);
        if (!w.add(a)) changed(sources[jobs[j].source].table->name);
      });
    });
    std::vector<std::size_t> written(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) written[j] = out[j].rows();
    close_gaps(table, at.base, written);
    merge_sparse(table, written, out);
    for (std::size_t j = 0, base = 0; j < jobs.size(); base += written[j], ++j) {
      for (const auto& [row, g] : pending[j].tracks) {
        SqlValue gtid;
        gtid.set_int(static_cast<std::int64_t>(g));
        table.track[base + row] = cpu_track(gtid);
      }
      for (const auto& [row, id] : pending[j].names) table.name[base + row] = string(id);
      merge(pending[j].skipped);
      pending[j].narrow->add_to(skipped_);
    }
  }

  void syncs() {
    const TableDef* t = db_.table("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
    if (!t) return;
    in_.reader(*t, {"start", "end", "deviceId", "streamId", "correlationId", "globalTid", "syncType", "eventId"})
        .for_each([&](const SqlValue* v) {
          SyncRow y;
          if (!interval(v[0], v[1], 0, "sync", skipped_, &y.start, &y.end)) return;
          y.device = v[2].null() ? kNoDevice : id32(v[2]);
          y.stream = v[3].null() ? kNoId : id32(v[3]);
          y.correlation = id32(v[4]);
          y.track = v[5].null() ? TraceBuilder::kResolveThroughCorrelation : cpu_track(v[5]);
          const std::int64_t type = v[6].as_int();
          y.type = type >= 0 && type <= static_cast<std::int64_t>(SyncType::context) ? static_cast<SyncType>(type)
                                                                                     : SyncType::unknown;
          y.event = v[7].null() ? kNoId : id32(v[7]);
          b_.add_sync(y);
        });
  }

  void nvtx_ranges() {
    const TableDef* t = db_.table("NVTX_EVENTS");
    if (!t) return;
    in_.reader(*t, {"start", "end", "eventType", "color", "text", "globalTid", "textId", "domainId", "int64Value"})
        .for_each([&](const SqlValue* v) {
          RangeRow r;
          const std::int64_t type = v[2].as_int();
          if (type == 34)
            r.kind = RangeKind::mark;
          else if (type == 59)
            r.kind = RangeKind::push_pop;
          else if (type == 60)
            r.kind = RangeKind::start_end;
          else
            return skipped_.add("import.skipped.nvtx_event_type_" + std::to_string(type));
          const SqlValue& end = r.kind == RangeKind::mark && v[1].null() ? v[0] : v[1];
          if (!interval(v[0], end, 0, "nvtx", skipped_, &r.start, &r.end)) return;
          r.track = cpu_track(v[5]);
          r.name = v[6].null() ? b_.intern(v[4].as_text()) : string(v[6].as_int());
          r.domain = v[7].null() ? 0 : string(v[7].as_int());
          r.color = id32(v[3]);
          r.payload = v[8].as_int();
          b_.add_range(r);
        });
  }

  void annotations() {
    const TableDef* t = db_.table("GPUSCOPE_ANNOTATIONS");
    if (!t) return;
    in_.reader(*t, {"start", "end", "nameId", "categoryId", "globalTid", "deviceId", "streamId", "correlationId",
                    "kind", "color", "int64Value", "inputDimsId", "inputTypesId", "concreteInputsId", "collectiveId",
                    "sequenceNr", "fwdThreadId"})
        .for_each([&](const SqlValue* v) {
          RangeRow r;
          if (!interval(v[0], v[1], 0, "annotation", skipped_, &r.start, &r.end)) return;
          r.name = string(v[2].as_int());
          r.domain = string(v[3].as_int());
          r.track = v[4].null() ? gpu_track(v[5], v[6]) : cpu_track(v[4]);
          r.correlation = id32(v[7]);
          const std::int64_t kind = v[8].as_int();
          r.kind = v[8].null() || kind < 0 || kind > static_cast<std::int64_t>(RangeKind::annotation)
                       ? RangeKind::annotation
                       : static_cast<RangeKind>(kind);
          r.color = id32(v[9]);
          r.payload = v[10].as_int();
          // Recorded inputs and collective arguments (JSON texts); exports written before these columns have none.
          r.input_dims = v[11].null() ? 0 : string(v[11].as_int());
          r.input_types = v[12].null() ? 0 : string(v[12].as_int());
          r.concrete_inputs = v[13].null() ? 0 : string(v[13].as_int());
          r.collective = v[14].null() ? 0 : string(v[14].as_int());
          // PyTorch's autograd link; exports without these columns have none.
          if (!v[15].null() && v[15].as_int() >= 0) {
            r.sequence = stored_sequence(v[15].as_int());
            r.fwd_thread = id32(v[16]);
          }
          b_.add_range(r);
        });
  }

  void overheads() {
    const TableDef* t = db_.table("PROFILER_OVERHEAD");
    if (!t) return;
    in_.reader(*t, {"start", "end", "globalTid", "nameId"}).for_each([&](const SqlValue* v) {
      OverheadRow o;
      if (!interval(v[0], v[1], 0, "overhead", skipped_, &o.start, &o.end)) return;
      o.track = cpu_track(v[2]);
      o.kind = string(v[3].as_int());
      b_.add_overhead(o);
    });
  }

  void os_calls() {
    const TableDef* t = db_.table("OSRT_API");
    if (!t) return;
    in_.reader(*t, {"start", "end", "globalTid", "nameId", "returnValue", "nestingLevel"})
        .for_each([&](const SqlValue* v) {
          OsCallRow o;
          if (!interval(v[0], v[1], 0, "os_call", skipped_, &o.start, &o.end)) return;
          o.track = cpu_track(v[2]);
          o.name = string(v[3].as_int());
          o.status = v[4].as_int();
          o.nesting = v[5].null() ? 0 : clamp16(v[5]);
          b_.add_os_call(o);
        });
  }

  // [SECTION] Counters --------------------------------------------------------------------------------

  void counters() {
    std::unordered_map<std::int64_t, std::uint32_t> series;
    if (const TableDef* t = db_.table("GPUSCOPE_COUNTER_SERIES"))
      in_.reader(*t, {"id", "name", "deviceId", "unit"}).for_each([&](const SqlValue* v) {
        series[v[0].as_int()] = b_.counter_series(v[1].as_text(), v[2].null() ? kNoDevice : id32(v[2]), v[3].as_text());
      });
    const TableDef* t = db_.table("GPUSCOPE_COUNTERS");
    if (!t) return;
    in_.reader(*t, {"seriesId", "timestamp", "value"}).for_each([&](const SqlValue* v) {
      const auto it = series.find(v[0].as_int());
      if (it == series.end() || v[1].null()) return skipped_.add("import.skipped.counter_without_series_or_time");
      // The writer stores NaN as NULL (SQLite has no NaN).
      b_.add_counter(CounterRow{v[1].as_int(), it->second,
                                v[2].null() ? std::numeric_limits<double>::quiet_NaN() : v[2].as_real()});
    });
    memory_events(series);
  }

  // Allocations and frees; address NULL = unknown (exports written before the table have none).
  void memory_events(const std::unordered_map<std::int64_t, std::uint32_t>& series) {
    const TableDef* t = db_.table("GPUSCOPE_MEMORY_EVENTS");
    if (!t) return;
    in_.reader(*t, {"seriesId", "timestamp", "bytes", "address"}).for_each([&](const SqlValue* v) {
      const auto it = series.find(v[0].as_int());
      if (it == series.end() || v[1].null() || v[2].null())
        return skipped_.add("import.skipped.memory_event_without_series_time_or_bytes");
      b_.add_memory_event(MemoryEventRow{v[1].as_int(), it->second, v[2].as_int(),
                                         v[3].null() ? 0 : static_cast<std::uint64_t>(v[3].as_int())});
    });
  }

  const Input& in_;
  const Database& db_;
  TraceBuilder b_;
  Counts skipped_;
  std::int64_t string_count_ = -1;
  StringId identity_ = 0;  // file ids below this are the trace's ids
  std::vector<std::string> texts_;
  std::vector<bool> present_;
  std::unordered_map<std::int64_t, TrackId> threads_;      // globalTid -> track, from GPUSCOPE_TRACKS
  std::unordered_map<std::uint64_t, TrackId> gpu_tracks_;  // (device << 32 | stream) -> track, known before the rows
  std::int64_t last_tid_ = 0;
  TrackId last_cpu_ = kNoRow, last_gpu_ = kNoRow;
  std::uint64_t last_gpu_key_ = 0;
};

}  // namespace

// [SECTION] Entry point -----------------------------------------------------------------------------

Trace read_gpuscope_export(const Input& in) { return GpuscopeReader(in).run(); }

}  // namespace gpuscope::nsys
