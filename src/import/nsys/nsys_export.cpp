// Reading an Nsight Systems SQLite export (`nsys export --type sqlite`) into
// the model. What maps to what, and how nsys versions differ: docs/import.md
// ("Nsight Systems"); the summary is at the top of nsys_sqlite.h.
//
// Every table and column is looked up in the file's own schema (Database
// reads sqlite_master and PRAGMA table_xinfo): a column a version lacks reads
// as NULL, a table it lacks is simply absent, and the few things that moved
// between versions (metadata table names, device descriptions, where the
// driver API calls are) are handled where they are read.
//
// [SECTION] Strings and ids
// [SECTION] GPU activity: kernels, copies, memsets, CUDA events
// [SECTION] CPU activity: API calls, syncs, NVTX, overheads, OS runtime calls
// [SECTION] Processes sharing correlation ids
// [SECTION] Devices
// [SECTION] Names: processes, threads, streams
// [SECTION] Ranks
// [SECTION] Metadata, diagnostics, tables not imported or missing
// [SECTION] Entry point
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "import/nsys/readers.h"
#include "trace/budget.h"

namespace gpuscope::nsys {

namespace {

// nsys' globalTid = (hardware/VM id << 48) | (pid << 24) | tid; globalPid the same with tid 0.
std::uint32_t pid_of(std::int64_t global) { return static_cast<std::uint32_t>((global >> 24) & 0xffffff); }
std::uint32_t tid_of(std::int64_t global) { return static_cast<std::uint32_t>(global & 0xffffff); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

bool parse_i64(std::string_view s, std::int64_t* v) {
  s = trim(s);
  if (!s.empty() && s.front() == '"' && s.back() == '"' && s.size() >= 2) s = s.substr(1, s.size() - 2);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// "cudaMalloc_v3020" -> "cudaMalloc": nsys records the versioned entry point
// (its own reports strip the suffix the same way).
std::string_view without_version(std::string_view name) {
  const std::size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v == 0 || v + 2 == name.size()) return name;
  for (std::size_t i = v + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, v);
}

// Memory kinds as nsys numbers them (ENUM_CUDA_MEM_KIND of the 2024 schema;
// the 2022 export, which has no ENUM tables, uses the same numbers).
constexpr MemoryKind kNsysMemoryKinds[] = {MemoryKind::pageable,       MemoryKind::pinned,  MemoryKind::device,
                                           MemoryKind::array,          MemoryKind::managed, MemoryKind::device_static,
                                           MemoryKind::managed_static, MemoryKind::unknown};

class NsysReader {
 public:
  explicit NsysReader(const Input& in) : in_(in), db_(in.db) { b_.limit_names(kMaxNameBytes); }

  Trace run() {
    time_base();
    strings();
    enums();
    kernels();
    copies();
    cuda_events();
    api_calls();
    syncs();
    nvtx();
    overheads();
    cpu_samples();
    os_calls();
    separate_processes();
    devices();
    gpu_metrics();
    names();
    ranks();
    metadata();
    diagnostics();
    tables_not_imported();
    missing_tables();
    if (b_.tables().kernels.size() + b_.tables().memcpys.size() + b_.tables().memsets.size() == 0) no_gpu_activity();
    skipped_.write_to(b_.meta());
    in_.add_damage(b_);
    return b_.freeze();
  }

 private:
  // A table this reader reads (and so does not count as "not imported").
  const TableDef* table(std::string_view name) {
    const TableDef* t = db_.table(name);
    if (t) read_.insert(lower(t->name));
    return t;
  }

  // Refuses a table whose rows would take the trace past the memory budget
  // (trace/budget.h), before they are read.
  void check_rows(const TableDef& t, TableId id, std::uint64_t rows) const {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(rows, row_memory_bytes(id), &bytes)) bytes = ~std::uint64_t{0};
    check_memory_claim(db_.path(), "table " + t.name + " holds " + std::to_string(rows) + " rows",
                       b_.memory_bytes() + std::min(bytes, ~std::uint64_t{0} - b_.memory_bytes()));
  }

  // [SECTION] Strings and ids -------------------------------------------------------------------------

  void time_base() {
    const TableDef* t = table("TARGET_INFO_SESSION_START_TIME");
    if (!t) return;
    in_.reader(*t, {"utcEpochNs", "utcTime"}).for_each([&](const SqlValue* v) {
      if (v[0].null()) return;
      offset_ = v[0].as_int();
      b_.meta().start_time_ns = offset_;
      if (!v[1].as_text().empty()) b_.meta().set_property("nsys.session_start_utc", v[1].as_text());
    });
  }

  void strings() {
    const TableDef* t = table("StringIds");
    if (!t) return;
    // Ids are dense in every export: a table of n rows uses ids below n.
    // Larger ones (a file that claims id 16,000,000 in a table of ten rows)
    // go to the sparse map, so that they cannot make a giant array.
    const std::int64_t dense = static_cast<std::int64_t>(std::min<std::uint64_t>(kDenseIds, 2 * in_.rows(*t) + 1024));
    in_.reader(*t, {"id", "value"}).for_each([&](const SqlValue* v) {
      const std::int64_t id = v[0].as_int();
      if (id >= 0 && id < dense) {
        if (static_cast<std::size_t>(id) >= texts_.size()) texts_.resize(static_cast<std::size_t>(id) + 1);
        texts_[static_cast<std::size_t>(id)] = v[1].as_text();
      } else {
        sparse_texts_[id] = v[1].as_text();
      }
    });
    names_.assign(texts_.size(), StringTable::kNoString);
  }

  const std::string* text(std::int64_t id) const {
    if (id >= 0 && id < static_cast<std::int64_t>(texts_.size())) return &texts_[static_cast<std::size_t>(id)];
    const auto it = sparse_texts_.find(id);
    return it == sparse_texts_.end() ? nullptr : &it->second;
  }

  // The trace's id for the StringIds row that column k names (a value that
  // is no integer counted as coerced); a missing one becomes "" (counted).
  StringId string(const SqlValue* v, Narrow& n, int k) { return string(n.i64(v, k)); }
  StringId string(const SqlValue& v) { return string(v.as_int()); }
  StringId string(std::int64_t id) {
    if (id >= 0 && static_cast<std::size_t>(id) < names_.size() &&
        names_[static_cast<std::size_t>(id)] != StringTable::kNoString)
      return names_[static_cast<std::size_t>(id)];
    const std::string* s = text(id);
    if (!s) skipped_.add("import.unknown_string_ids");
    const StringId sid = s ? b_.intern(*s) : 0;
    if (id >= 0 && static_cast<std::size_t>(id) < names_.size()) names_[static_cast<std::size_t>(id)] = sid;
    return sid;
  }

  StringId api_name(const SqlValue* v, Narrow& n, int k) {
    const std::int64_t id = n.i64(v, k);
    const auto it = api_names_.find(id);
    if (it != api_names_.end()) return it->second;
    const std::string* s = text(id);
    if (!s) skipped_.add("import.unknown_string_ids");
    return api_names_[id] = s ? b_.intern(without_version(*s)) : 0;
  }

  // Memory kinds and sync types by the file's ENUM_CUDA_MEM_KIND and
  // ENUM_CUPTI_SYNC_TYPE names when it has them (the 2022 schema has no ENUM
  // tables; its numbers are those below).
  void enums() {
    for (std::size_t i = 0; i < 8; ++i) memory_kinds_[i] = kNsysMemoryKinds[i];
    for (int i = 0; i <= static_cast<int>(SyncType::context); ++i) sync_types_[i] = static_cast<SyncType>(i);
    if (const TableDef* t = table("ENUM_CUPTI_SYNC_TYPE"))
      in_.reader(*t, {"id", "name"}).for_each([&](const SqlValue* v) {
        const std::int64_t id = v[0].as_int();
        const std::string_view name = v[1].as_text();
        if (id < 0 || id > static_cast<std::int64_t>(SyncType::context)) return;
        auto ends = [&](std::string_view s) {
          return name.size() >= s.size() && name.substr(name.size() - s.size()) == s;
        };
        if (ends("STREAM_WAIT_EVENT"))
          sync_types_[id] = SyncType::stream_wait_event;
        else if (ends("EVENT_SYNCHRONIZE"))
          sync_types_[id] = SyncType::event;
        else if (ends("STREAM_SYNCHRONIZE"))
          sync_types_[id] = SyncType::stream;
        else if (ends("CONTEXT_SYNCHRONIZE"))
          sync_types_[id] = SyncType::context;
        else if (ends("UNKNOWN"))
          sync_types_[id] = SyncType::unknown;
      });
    const TableDef* t = table("ENUM_CUDA_MEM_KIND");
    if (!t) return;
    static const std::pair<std::string_view, MemoryKind> kByName[] = {{"PAGEABLE", MemoryKind::pageable},
                                                                      {"PINNED", MemoryKind::pinned},
                                                                      {"DEVICE", MemoryKind::device},
                                                                      {"ARRAY", MemoryKind::array},
                                                                      {"MANAGED", MemoryKind::managed},
                                                                      {"DEVICE_STATIC", MemoryKind::device_static},
                                                                      {"MANAGED_STATIC", MemoryKind::managed_static},
                                                                      {"UNKNOWN", MemoryKind::unknown}};
    in_.reader(*t, {"id", "name"}).for_each([&](const SqlValue* v) {
      const std::int64_t id = v[0].as_int();
      std::string_view name = v[1].as_text();
      if (id < 0 || id >= 8) return;
      if (const std::size_t u = name.rfind("_KIND_"); u != std::string_view::npos) name = name.substr(u + 6);
      for (const auto& [n, kind] : kByName)
        if (n == name) memory_kinds_[id] = kind;
    });
  }
  MemoryKind memory_kind(const SqlValue& v) const {
    const std::int64_t x = v.as_int();
    return v.null() || x < 0 || x >= 8 ? MemoryKind::unknown : memory_kinds_[x];
  }

  // GPU track of (device, stream), owned by the process of `global_pid` (the
  // first one seen: two processes on one stream id of one GPU share a track).
  bool gpu_track(const SqlValue* v, Narrow& n, int device, int stream, int global_pid, std::string_view what,
                 TrackId* out) {
    if (v[device].null() || v[stream].null()) {
      skipped_.add("import.skipped." + std::string(what) + (v[device].null() ? "_without_device" : "_without_stream"));
      return false;
    }
    const std::uint64_t key = (std::uint64_t{n.id32(v, device)} << 32) | n.id32(v, stream);
    if (key == last_gpu_key_ && last_gpu_ != kNoRow) {
      *out = last_gpu_;
      return true;
    }
    auto [it, fresh] = gpu_tracks_.try_emplace(key, 0);
    if (fresh) {
      Track t;
      t.kind = TrackKind::gpu;
      t.device = id32(v[device]);
      t.stream = id32(v[stream]);
      t.pid = v[global_pid].null() ? 0 : pid_of(v[global_pid].as_int());
      it->second = b_.add_track(t);
    }
    last_gpu_key_ = key;
    *out = last_gpu_ = it->second;
    return true;
  }

  bool cpu_track(const SqlValue* v, Narrow& n, int global_tid, std::string_view what, TrackId* out) {
    if (v[global_tid].null()) {
      skipped_.add("import.skipped." + std::string(what) + "_without_thread");
      return false;
    }
    const std::int64_t g = n.i64(v, global_tid);
    if (g != last_tid_ || last_cpu_ == kNoRow) {
      last_tid_ = g;
      last_cpu_ = b_.cpu_track(pid_of(g), tid_of(g));
    }
    *out = last_cpu_;
    return true;
  }

  // [SECTION] GPU activity: kernels, copies, memsets, CUDA events -----------------------------------

  void kernels() {
    const TableDef* t = table("CUPTI_ACTIVITY_KIND_KERNEL");
    if (!t) return;
    const std::uint64_t rows = in_.rows(*t);
    check_rows(*t, TableId::kernels, rows);
    b_.reserve_kernels(rows_bound(rows, db_.file_bytes()));
    TableReader r = in_.reader(*t, {"start",
                                    "end",
                                    "deviceId",
                                    "streamId",
                                    "correlationId",
                                    "globalPid",
                                    "demangledName",
                                    "shortName",
                                    "mangledName",
                                    "gridX",
                                    "gridY",
                                    "gridZ",
                                    "blockX",
                                    "blockY",
                                    "blockZ",
                                    "registersPerThread",
                                    "staticSharedMemory",
                                    "dynamicSharedMemory",
                                    "graphId",
                                    "graphNodeId"});
    Narrow n = narrow(r);
    r.for_each([&](const SqlValue* v) {
      KernelRow k;
      if (!interval(v[0], v[1], offset_, "kernel", skipped_, &k.start, &k.end)) return;
      if (!gpu_track(v, n, 2, 3, 5, "kernel", &k.track)) return;
      k.correlation = n.id32(v, 4);
      const int name = v[6].null() ? 7 : 6;
      k.name = v[name].null() ? 0 : string(v, n, name);
      if (k.name == 0) {
        k.name = b_.intern("<unnamed kernel>");
        n.count(v[name].null() ? 6 : name);
      }
      k.mangled = v[8].null() ? 0 : string(v, n, 8);
      read_launch(n, v, 9, k);
      k.graph_id = v[18].null() ? 0 : n.id32(v, 18);
      k.graph_node_id = v[19].null() ? 0 : n.clamp64(v, 19);
      b_.add_kernel(k);
      op_pids_.kernels.push_back(v[5].null() ? 0 : pid_of(n.i64(v, 5)));
    });
    n.add_to(skipped_);
  }

  static CopyKind copy_kind(const SqlValue& v, bool* unified) {
    const std::int64_t x = v.as_int();
    *unified = x >= 11 && x <= 13;  // CUDA_MEMCPY_KIND_UVM_HTOD / _DTOH / _DTOD: unified memory migrations
    if (*unified) return x == 11 ? CopyKind::htod : x == 12 ? CopyKind::dtoh : CopyKind::dtod;
    return x >= 0 && x <= static_cast<std::int64_t>(CopyKind::ptop) ? static_cast<CopyKind>(x) : CopyKind::unknown;
  }

  void copies() {
    if (const TableDef* t = table("CUPTI_ACTIVITY_KIND_MEMCPY")) {
      check_rows(*t, TableId::memcpys, in_.rows(*t));
      TableReader r = in_.reader(*t, {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes",
                                      "copyKind", "srcKind", "dstKind", "graphId", "graphNodeId"});
      Narrow n = narrow(r);
      r.for_each([&](const SqlValue* v) {
        MemcpyRow c;
        if (!interval(v[0], v[1], offset_, "memcpy", skipped_, &c.start, &c.end)) return;
        if (!gpu_track(v, n, 2, 3, 5, "memcpy", &c.track)) return;
        c.correlation = n.id32(v, 4);
        c.bytes = n.clamp64(v, 6);
        bool unified = false;
        c.kind = copy_kind(v[7], &unified);
        if (unified) skipped_.add("import.nsys_unified_memory_copies");
        c.src_kind = memory_kind(v[8]);
        c.dst_kind = memory_kind(v[9]);
        c.graph_id = v[10].null() ? 0 : n.id32(v, 10);
        c.graph_node_id = v[11].null() ? 0 : n.clamp64(v, 11);
        b_.add_memcpy(c);
        op_pids_.memcpys.push_back(v[5].null() ? 0 : pid_of(n.i64(v, 5)));
      });
      n.add_to(skipped_);
    }
    if (const TableDef* t = table("CUPTI_ACTIVITY_KIND_MEMSET")) {
      check_rows(*t, TableId::memsets, in_.rows(*t));
      TableReader r = in_.reader(*t, {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "value",
                                      "bytes", "memKind", "graphId", "graphNodeId"});
      Narrow n = narrow(r);
      r.for_each([&](const SqlValue* v) {
        MemsetRow z;
        if (!interval(v[0], v[1], offset_, "memset", skipped_, &z.start, &z.end)) return;
        if (!gpu_track(v, n, 2, 3, 5, "memset", &z.track)) return;
        z.correlation = n.id32(v, 4);
        z.value = n.id32(v, 6);
        z.bytes = n.clamp64(v, 7);
        z.mem_kind = memory_kind(v[8]);
        z.graph_id = v[9].null() ? 0 : n.id32(v, 9);
        z.graph_node_id = v[10].null() ? 0 : n.clamp64(v, 10);
        b_.add_memset(z);
        op_pids_.memsets.push_back(v[5].null() ? 0 : pid_of(n.i64(v, 5)));
      });
      n.add_to(skipped_);
    }
  }

  // cudaEventRecord on a stream. Exports that time it (`timestamp`, the
  // device-side completion, in later schemas; 0 when not collected) become
  // marks on the GPU track; the 2022 schema has no time for them (counted).
  void cuda_events() {
    const TableDef* t = table("CUPTI_ACTIVITY_KIND_CUDA_EVENT");
    if (!t) return;
    const char* time = t->has("timestamp") ? "timestamp" : "start";
    if (!t->has(time)) return skipped_.add("import.skipped.cuda_event_without_time", in_.rows(*t));
    const StringId domain = b_.intern("cuda_event");
    TableReader reader = in_.reader(*t, {time, "deviceId", "streamId", "correlationId", "globalPid", "eventId"});
    Narrow n = narrow(reader);
    reader.for_each([&](const SqlValue* v) {
      RangeRow r;
      if (v[0].null() || v[0].as_int() == 0) return skipped_.add("import.skipped.cuda_event_without_time");
      if (!interval(v[0], v[0], offset_, "cuda_event", skipped_, &r.start, &r.end)) return;
      if (!gpu_track(v, n, 1, 2, 4, "cuda_event", &r.track)) return;
      r.kind = RangeKind::mark;
      r.name = b_.intern("cudaEventRecord (event " + std::to_string(n.id32(v, 5)) + ")");
      r.domain = domain;
      r.correlation = n.id32(v, 3);
      b_.add_range(r);
      range_pids_.push_back(v[4].null() ? 0 : pid_of(n.i64(v, 4)));
    });
    n.add_to(skipped_);
  }

  // [SECTION] CPU activity: API calls, syncs, NVTX, overheads, OS runtime calls ------------------------

  // CUPTI_ACTIVITY_KIND_RUNTIME holds runtime and driver calls (eventClass 0
  // and 1 in the 2022 and 2024 schemas; 67, a CUDA backtrace, repeats a call
  // with its call stack). A CUPTI_ACTIVITY_KIND_DRIVER table, where a version
  // has one, holds driver calls.
  void api_calls() {
    const TableDef* runtime = table("CUPTI_ACTIVITY_KIND_RUNTIME");
    const TableDef* driver = table("CUPTI_ACTIVITY_KIND_DRIVER");
    const std::uint64_t rows = (runtime ? in_.rows(*runtime) : 0) + (driver ? in_.rows(*driver) : 0);
    if (runtime || driver) check_rows(runtime ? *runtime : *driver, TableId::api_calls, rows);
    b_.reserve_api_calls(rows_bound(rows, db_.file_bytes()));
    for (const TableDef* t : {runtime, driver}) {
      if (!t) continue;
      const bool in_driver_table = t == driver;
      TableReader r =
          in_.reader(*t, {"start", "end", "globalTid", "correlationId", "nameId", "returnValue", "eventClass", "cbid"});
      Narrow n = narrow(r);
      r.for_each([&](const SqlValue* v) {
        ApiCallRow a;
        a.domain = in_driver_table ? ApiDomain::driver : ApiDomain::runtime;
        if (!v[6].null() && !in_driver_table) {
          const std::int64_t cls = n.i64(v, 6);
          if (cls == 1)
            a.domain = ApiDomain::driver;
          else if (cls == 67)
            return skipped_.add("import.skipped.api_call_backtrace_copy");
          else if (cls != 0)
            return skipped_.add("import.skipped.api_call_event_class_" + std::to_string(cls));
        }
        if (!interval(v[0], v[1], offset_, "api_call", skipped_, &a.start, &a.end)) return;
        if (!cpu_track(v, n, 2, "api_call", &a.track)) return;
        a.correlation = n.id32(v, 3);
        a.name = api_name(v, n, 4);
        a.status = n.i32(v, 5);
        a.cbid = n.id32(v, 7);
        b_.add_api_call(a);
        api_pids_.insert(pid_of(v[2].as_int()));
      });
      n.add_to(skipped_);
    }
  }

  void syncs() {
    const TableDef* t = table("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
    if (!t) return;
    TableReader r = in_.reader(
        *t, {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "syncType", "eventId", "globalTid"});
    Narrow n = narrow(r);
    r.for_each([&](const SqlValue* v) {
      SyncRow y;
      if (!interval(v[0], v[1], offset_, "sync", skipped_, &y.start, &y.end)) return;
      // 0xffffffff (CUPTI's "none") and NULL both mean not applicable.
      y.device = v[2].null() ? kNoDevice : n.id32(v, 2);
      y.stream = v[3].null() ? kNoId : n.id32(v, 3);
      y.event = v[7].null() ? kNoId : n.id32(v, 7);
      y.correlation = n.id32(v, 4);
      const std::int64_t type = n.i64(v, 6);
      y.type =
          type >= 0 && type <= static_cast<std::int64_t>(SyncType::context) ? sync_types_[type] : SyncType::unknown;
      // An event synchronization names its event. nsys 2024.5 exports
      // cudaDeviceSynchronize as type 1 (event) with no event and no
      // stream: what it waited on is what the row names.
      if (y.type == SyncType::event && y.event == kNoId) {
        y.type = y.stream == kNoId ? SyncType::context : SyncType::stream;
        skipped_.add("import.sync_types_from_event_and_stream");
      }
      // nsys records only the process; the waiting thread is the API call's.
      y.track = TraceBuilder::kResolveThroughCorrelation;
      if (!v[8].null()) cpu_track(v, n, 8, "sync", &y.track);
      b_.add_sync(y);
      op_pids_.syncs.push_back(v[5].null() ? 0 : pid_of(n.i64(v, 5)));
    });
    n.add_to(skipped_);
  }

  // NVTX_EVENTS: 34 mark, 59 push/pop range, 60 start/end range; 75 names a
  // domain, 39 a thread, 33 a category (read for naming); other types are
  // counted. Names are `text`, else `textId` through StringIds.
  void nvtx() {
    const TableDef* t = table("NVTX_EVENTS");
    if (!t) return;
    std::map<std::pair<std::uint32_t, std::int64_t>, StringId> domains;  // (pid, domainId) -> name
    std::map<std::int64_t, StringId> domain_any_pid;
    in_.reader(*t, {"eventType", "globalTid", "domainId", "text", "textId"}).for_each([&](const SqlValue* v) {
      const std::int64_t type = v[0].as_int();
      if (type == 75 && !v[2].null()) {
        const StringId name = v[3].null() ? string(v[4]) : b_.intern(v[3].as_text());
        domains[{pid_of(v[1].as_int()), v[2].as_int()}] = name;
        domain_any_pid.emplace(v[2].as_int(), name);
      } else if (type == 39 && !v[1].null()) {
        const std::string name(v[3].null() ? (text(v[4].as_int()) ? *text(v[4].as_int()) : "") : v[3].as_text());
        nvtx_thread_names_.emplace(v[1].as_int(), name);
      }
    });
    auto domain_of = [&](const SqlValue& tid, const SqlValue& id) -> StringId {
      if (id.null() || id.as_int() == 0) return 0;
      if (const auto it = domains.find({pid_of(tid.as_int()), id.as_int()}); it != domains.end()) return it->second;
      const auto it = domain_any_pid.find(id.as_int());
      return it != domain_any_pid.end() ? it->second : b_.intern("domain " + std::to_string(id.as_int()));
    };
    TableReader reader = in_.reader(
        *t, {"start", "end", "eventType", "color", "text", "globalTid", "textId", "domainId", "int64Value",
             "uint64Value", "int32Value", "uint32Value", "doubleValue", "floatValue", "jsonText", "jsonTextId"});
    Narrow n = narrow(reader);
    reader.for_each([&](const SqlValue* v) {
      RangeRow r;
      const std::int64_t type = n.i64(v, 2);
      if (type == 34) {
        r.kind = RangeKind::mark;
      } else if (type == 59 || type == 60) {
        r.kind = type == 59 ? RangeKind::push_pop : RangeKind::start_end;
        if (v[1].null()) return skipped_.add("import.skipped.nvtx_range_without_end");
      } else {
        if (type != 75 && type != 39 && type != 33 && type != 76)
          skipped_.add("import.skipped.nvtx_event_type_" + std::to_string(type));
        return;
      }
      if (!interval(v[0], r.kind == RangeKind::mark ? v[0] : v[1], offset_, "nvtx", skipped_, &r.start, &r.end)) return;
      if (!cpu_track(v, n, 5, "nvtx", &r.track)) return;
      r.name = v[4].null() ? (v[6].null() ? 0 : string(v, n, 6)) : b_.intern(v[4].as_text());
      r.domain = domain_of(v[5], v[7]);
      r.color = v[3].null() ? 0 : n.id32(v, 3);
      r.payload = payload(v + 8);
      b_.add_range(r);
      range_pids_.push_back(pid_of(v[5].as_int()));
      if (r.domain != 0) nccl_rank(r, v[14].null() ? v[15] : v[14], v[14].null());
    });
    n.add_to(skipped_);
  }

  // The NVTX payload when it is an integer (int64, uint64, int32, uint32, or a
  // double with an integral value); other payloads are counted, not kept.
  std::int64_t payload(const SqlValue* v) {
    for (int k = 0; k < 4; ++k)
      if (!v[k].null()) return v[k].as_int();
    for (int k = 4; k < 6; ++k) {
      if (v[k].null()) continue;
      const double d = v[k].as_real();
      if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.2e18) return static_cast<std::int64_t>(d);
      skipped_.add("import.nvtx_payloads_not_integral");
    }
    return 0;
  }

  void overheads() {
    const TableDef* t = table("PROFILER_OVERHEAD");
    if (!t) return;
    TableReader r = in_.reader(*t, {"start", "end", "globalTid", "nameId"});
    Narrow n = narrow(r);
    r.for_each([&](const SqlValue* v) {
      OverheadRow o;
      if (!interval(v[0], v[1], offset_, "overhead", skipped_, &o.start, &o.end)) return;
      if (!cpu_track(v, n, 2, "overhead", &o.track)) return;
      o.kind = string(v, n, 3);
      b_.add_overhead(o);
    });
    n.add_to(skipped_);
  }

  // CPU sampling (COMPOSITE_EVENTS: a sample's time and thread;
  // SAMPLING_CALLCHAINS: its frames, stackDepth 0 innermost) as host samples:
  // marks of kHostSampleDomain on the thread's track, the stack as the name,
  // outermost frame first, at most the kMaxSampleFrames innermost. A frame is
  // its symbol; one nsys could not resolve is its module file in brackets
  // ("[libcuda.so.1]": its address says nothing in a report, and would make
  // each sample's stack its own); kernel frames end " [kernel]" (unresolved:
  // "[kernel]"). Samples
  // without a thread or time are counted, as are frames beyond the depth kept.
  static constexpr std::int64_t kMaxSampleFrames = 64;
  void cpu_samples() {
    const TableDef* events = table("COMPOSITE_EVENTS");
    if (!events) return;
    check_rows(*events, TableId::ranges, in_.rows(*events));
    const std::unordered_map<std::int64_t, StringId> stacks = sample_stacks();
    const StringId domain = b_.intern(kHostSampleDomain);
    TableReader r = in_.reader(*events, {"id", "start", "globalTid"});
    Narrow n = narrow(r);
    r.for_each([&](const SqlValue* v) {
      RangeRow m;
      m.kind = RangeKind::mark;
      if (!interval(v[1], v[1], offset_, "cpu_sample", skipped_, &m.start, &m.end)) return;
      if (!cpu_track(v, n, 2, "cpu_sample", &m.track)) return;
      const auto it = stacks.find(n.i64(v, 0));
      if (it == stacks.end()) return skipped_.add("import.skipped.cpu_sample_without_stack");
      m.name = it->second;
      m.domain = domain;
      b_.add_range(m);
      range_pids_.push_back(pid_of(v[2].as_int()));
    });
    n.add_to(skipped_);
  }

  // Each sample's stack text by its id, from SAMPLING_CALLCHAINS.
  std::unordered_map<std::int64_t, StringId> sample_stacks() {
    std::unordered_map<std::int64_t, StringId> out;
    const TableDef* t = table("SAMPLING_CALLCHAINS");
    if (!t) return out;
    struct Frame {
      std::int64_t id, depth;
      std::uint32_t text;  // into `names`
    };
    const std::uint64_t rows = in_.rows(*t);
    check_memory_claim(db_.path(), "table " + t->name + " holds " + std::to_string(rows) + " rows",
                       b_.memory_bytes() + std::min<std::uint64_t>(rows, ~std::uint64_t{0} / 64) * sizeof(Frame));
    std::vector<Frame> frames;
    std::vector<std::string> names;                               // frame texts
    std::map<std::pair<std::int64_t, int>, std::uint32_t> texts;  // (symbol, kernel/unresolved) -> into names
    TableReader r = in_.reader(*t, {"id", "symbol", "module", "kernelMode", "unresolved", "stackDepth"});
    Narrow n = narrow(r);
    r.for_each([&](const SqlValue* v) {
      const std::int64_t depth = n.i64(v, 5);
      if (depth < 0) return skipped_.add("import.skipped.cpu_sample_frame_without_depth");
      if (depth >= kMaxSampleFrames) return skipped_.add("import.cpu_sample_frames_beyond_depth");
      const int flags = (n.i64(v, 3) ? 1 : 0) | (n.i64(v, 4) ? 2 : 0);
      auto [it, fresh] = texts.try_emplace({n.i64(v, 1), flags}, static_cast<std::uint32_t>(names.size()));
      if (fresh) names.push_back(frame_text(n.i64(v, 1), n.i64(v, 2), flags));
      frames.push_back({n.i64(v, 0), depth, it->second});
    });
    n.add_to(skipped_);
    std::sort(frames.begin(), frames.end(),
              [](const Frame& a, const Frame& b) { return a.id != b.id ? a.id < b.id : a.depth > b.depth; });
    std::string stack;
    for (std::size_t i = 0; i < frames.size();) {
      std::size_t j = i;
      stack.clear();
      for (; j < frames.size() && frames[j].id == frames[i].id; ++j) {
        // A run of unresolved frames in one module is one frame.
        if (j > i && frames[j].text == frames[j - 1].text && names[frames[j].text].starts_with('[')) continue;
        if (!stack.empty()) stack += kHostSampleFrameSeparator;
        stack += names[frames[j].text];
      }
      out[frames[i].id] = b_.intern(stack);
      i = j;
    }
    return out;
  }
  std::string frame_text(std::int64_t symbol, std::int64_t module, int flags) const {
    const std::string* s = text(symbol);
    std::string f = s ? *s : "?";
    if (flags & 2) {  // unresolved: the module file ("[libcuda.so.1]"), not one name per address
      const std::string* m = text(module);
      const std::string file = m ? m->substr(m->rfind('/') == std::string::npos ? 0 : m->rfind('/') + 1) : "";
      if (!file.empty()) f = file.starts_with('[') ? file : "[" + file + "]";
    }
    if (flags & 1) f = flags & 2 ? "[kernel]" : f + " [kernel]";
    for (char& c : f)
      if (c == kHostSampleFrameSeparator) c = ',';
    return f;
  }

  // OSRT_API: calls into libc, pthread, … (eventClass 27). Nested calls keep
  // their nestingLevel and stay rows of their own, as nsys' osrt_sum counts
  // them. eventClass 31 and 32 mark when OS runtime tracing started and
  // finished: not calls, counted. Call stacks (callchainId, OSRT_CALLCHAINS)
  // are not read; that table is counted as not imported.
  void os_calls() {
    const TableDef* t = table("OSRT_API");
    if (!t) return b_.meta().set_property("nsys.osrt_api", "absent");  // traced without --trace=osrt
    check_rows(*t, TableId::os_calls, in_.rows(*t));
    TableReader r =
        in_.reader(*t, {"start", "end", "globalTid", "nameId", "returnValue", "nestingLevel", "eventClass"});
    Narrow n = narrow(r);
    r.for_each([&](const SqlValue* v) {
      if (!v[6].null()) {
        const std::int64_t cls = n.i64(v, 6);
        if (cls == 31 || cls == 32)  // "OS runtime libraries profiling started" / "finished"
          return skipped_.add(cls == 31 ? "import.skipped.osrt_start_marks" : "import.skipped.osrt_finish_marks");
        if (cls != 27) return skipped_.add("import.skipped.os_call_event_class_" + std::to_string(cls));
      }
      OsCallRow o;
      if (!interval(v[0], v[1], offset_, "os_call", skipped_, &o.start, &o.end)) return;
      if (!cpu_track(v, n, 2, "os_call", &o.track)) return;
      o.name = string(v, n, 3);
      o.status = n.i64(v, 4);
      o.nesting = v[5].null() ? 0 : n.clamp16(v, 5);
      b_.add_os_call(o);
    });
    n.add_to(skipped_);
  }

  // [SECTION] Processes sharing correlation ids ------------------------------------------------------------

  // CUPTI numbers correlations per process: in a report of several processes
  // the same id can mean different launches. Then every (process, id) pair
  // gets a new id of its own, so that links stay within a process.
  void separate_processes() {
    if (api_pids_.size() < 2) return;
    TraceTables& tb = b_.tables();
    std::unordered_map<std::uint64_t, std::uint32_t> fresh;
    auto renumber = [&](std::uint32_t pid, std::uint32_t& corr) {
      if (corr == 0) return;
      const auto [it, added] = fresh.try_emplace((std::uint64_t{pid} << 32) | corr, 0);
      if (added) it->second = static_cast<std::uint32_t>(fresh.size());
      corr = it->second;
    };
    for (std::size_t i = 0; i < tb.api_calls.size(); ++i)
      renumber(b_.tracks()[tb.api_calls.track[i]].pid, tb.api_calls.correlation[i]);
    for (std::size_t i = 0; i < tb.kernels.size(); ++i) renumber(op_pids_.kernels[i], tb.kernels.correlation[i]);
    for (std::size_t i = 0; i < tb.memcpys.size(); ++i) renumber(op_pids_.memcpys[i], tb.memcpys.correlation[i]);
    for (std::size_t i = 0; i < tb.memsets.size(); ++i) renumber(op_pids_.memsets[i], tb.memsets.correlation[i]);
    for (std::size_t i = 0; i < tb.syncs.size(); ++i) renumber(op_pids_.syncs[i], tb.syncs.correlation[i]);
    if (!tb.ranges.correlation.empty())
      for (std::size_t i = 0; i < tb.ranges.size(); ++i) renumber(range_pids_[i], tb.ranges.correlation[i]);
    b_.meta().set_property("nsys.correlation_ids",
                           "renumbered per process (" + std::to_string(api_pids_.size()) + " processes)");
  }

  // [SECTION] Devices -----------------------------------------------------------------------------------

  // TARGET_INFO_GPU describes the node's GPUs (id, name, SMs, memory, clock in
  // Hz, bandwidth in B/s, compute capability where the version has it, and
  // cuDevice, its CUDA ordinal). TARGET_INFO_CUDA_DEVICE, in versions that
  // have it, maps a process's CUDA device (cudaId, the deviceId of the
  // activity tables) to a GPU (gpuId). Without it the activity's deviceId is
  // taken as cuDevice. Only the devices the GPU activity uses are kept.
  void devices() {
    std::map<std::int64_t, Device> gpus;  // by TARGET_INFO_GPU.id
    std::map<std::uint32_t, std::int64_t> by_ordinal;
    std::size_t listed = 0;
    if (const TableDef* t = table("TARGET_INFO_GPU"))
      in_.reader(*t, {"id", "name", "uuid", "totalMemory", "smCount", "computeMajor", "computeMinor", "smMajor",
                      "smMinor", "clockRate", "memoryBandwidth", "maxThreadsPerBlock", "maxWarpsPerSm",
                      "threadsPerWarp", "maxBlocksPerSm", "maxRegistersPerSm", "maxShmemPerSm", "cuDevice"})
          .for_each([&](const SqlValue* v) {
            Device d;
            d.name = v[1].as_text();
            d.uuid = v[2].as_text();
            d.memory_bytes = clamp64(v[3]);
            d.sm_count = clamp32(v[4]);
            d.compute_major = static_cast<std::int32_t>((v[5].null() ? v[7] : v[5]).as_int());
            d.compute_minor = static_cast<std::int32_t>((v[6].null() ? v[8] : v[6]).as_int());
            d.core_clock_khz = static_cast<std::uint32_t>(std::min<std::uint64_t>(clamp64(v[9]) / 1000, 0xffffffffu));
            d.peak_memory_bandwidth = static_cast<double>(clamp64(v[10]));
            d.max_threads_per_block = clamp32(v[11]);
            d.warp_size = clamp32(v[13]);
            d.max_threads_per_sm = static_cast<std::uint32_t>(
                std::min<std::uint64_t>(std::uint64_t{clamp32(v[12])} * d.warp_size, 0xffffffffu));
            d.max_blocks_per_sm = clamp32(v[14]);
            d.registers_per_sm = clamp32(v[15]);
            d.shared_memory_per_sm = clamp32(v[16]);
            d.id = v[17].null() ? id32(v[0]) : id32(v[17]);
            gpus[v[0].as_int()] = d;
            by_ordinal.emplace(d.id, v[0].as_int());
            gpu_ordinals_[v[0].as_int()] = d.id;
            ++listed;
          });
    std::map<std::uint32_t, Device> described;  // by the activity's deviceId
    std::set<std::int64_t> cuda_mapped;         // GPUs TARGET_INFO_CUDA_DEVICE gave an ordinal
    if (const TableDef* t = table("TARGET_INFO_CUDA_DEVICE"); t && t->has("cudaId")) {
      in_.reader(*t, {"cudaId", "gpuId", "name", "uuid", "numMultiprocessors", "computeMajor", "computeMinor",
                      "totalGlobalMem"})
          .for_each([&](const SqlValue* v) {
            const std::uint32_t ordinal = id32(v[0]);
            if (described.count(ordinal)) return;  // another process's view of its device `ordinal`
            if (!v[1].null() && cuda_mapped.insert(v[1].as_int()).second) gpu_ordinals_[v[1].as_int()] = ordinal;
            const auto g = gpus.find(v[1].as_int());
            Device d = g != gpus.end() ? g->second : Device{};
            d.id = ordinal;
            if (!v[2].as_text().empty()) d.name = v[2].as_text();
            if (!v[3].as_text().empty()) d.uuid = v[3].as_text();
            if (clamp32(v[4])) d.sm_count = clamp32(v[4]);
            if (!v[5].null()) d.compute_major = static_cast<std::int32_t>(v[5].as_int());
            if (!v[6].null()) d.compute_minor = static_cast<std::int32_t>(v[6].as_int());
            if (clamp64(v[7])) d.memory_bytes = clamp64(v[7]);
            described[ordinal] = d;
          });
    } else {
      for (const auto& [ordinal, id] : by_ordinal) described[ordinal] = gpus[id];
    }
    std::set<std::uint32_t> used;
    for (const Track& tr : b_.tracks())
      if (tr.kind == TrackKind::gpu) used.insert(tr.device);
    for (std::uint32_t d : used) {
      const auto it = described.find(d);
      Device dev = it != described.end() ? it->second : Device{};
      dev.id = d;
      b_.add_device(dev);
    }
    if (listed) b_.meta().set_property("nsys.devices_listed", std::to_string(listed));
  }

  // GPU metrics (nsys profile --gpu-metrics-devices): TARGET_INFO_GPU_METRICS
  // names each (typeId, metricId), GPU_METRICS holds the samples. typeId's
  // low byte is the GPU (TARGET_INFO_GPU.id; the model's device is the CUDA
  // ordinal TARGET_INFO_CUDA_DEVICE or cuDevice gives it); one counter series
  // per metric and GPU, the unit from the name's brackets
  // ("GR Active [Throughput %]": "GR Active", "Throughput %"), except that
  // the metrics with a hw.* equivalent take its name
  // (series_name::kNsysHardwareMetrics: "SMs Active [Throughput %]" is
  // hw.sm_active in "%").
  void gpu_metrics() {
    const TableDef* t = table("GPU_METRICS");
    if (!t) return;
    std::map<std::pair<std::int64_t, std::int64_t>, std::string> names;
    if (const TableDef* info = table("TARGET_INFO_GPU_METRICS"))
      in_.reader(*info, {"typeId", "metricId", "metricName"}).for_each([&](const SqlValue* v) {
        if (!v[0].null() && !v[1].null()) names[{v[0].as_int(), v[1].as_int()}] = v[2].as_text();
      });
    std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> series;
    in_.reader(*t, {"timestamp", "typeId", "metricId", "value"}).for_each([&](const SqlValue* v) {
      TimeNs time = 0;
      if (v[0].null() || v[1].null() || v[2].null() || v[3].null() ||
          __builtin_add_overflow(v[0].as_int(), offset_, &time))
        return skipped_.add("import.skipped.gpu_metric_incomplete");
      const std::pair<std::int64_t, std::int64_t> key{v[1].as_int(), v[2].as_int()};
      auto it = series.find(key);
      if (it == series.end()) it = series.emplace(key, metric_series(key, names)).first;
      b_.add_counter(CounterRow{time, it->second, v[3].as_real()});
    });
  }
  std::uint32_t metric_series(std::pair<std::int64_t, std::int64_t> key,
                              const std::map<std::pair<std::int64_t, std::int64_t>, std::string>& names) {
    const std::int64_t gpu = key.first & 0xff;
    const auto ordinal = gpu_ordinals_.find(gpu);
    const std::uint32_t device = ordinal != gpu_ordinals_.end() ? ordinal->second : static_cast<std::uint32_t>(gpu);
    const auto name = names.find(key);
    if (name == names.end()) {
      skipped_.add("import.gpu_metrics_without_name");
      return b_.counter_series("gpu metric " + std::to_string(key.second), device);
    }
    const auto [metric, unit] = series_name::split_nsys_metric_name(name->second);
    // A metric that measures what a hw.* series does becomes that series (the
    // analysis reads it as it reads a capture's); nsys' own name stays in the
    // meta properties, "nsys.gpu_metric.hw.sm_active" = "SMs Active [Throughput %]".
    if (const std::string_view hw = series_name::hardware_name_of_nsys(metric, unit); !hw.empty()) {
      b_.meta().set_property("nsys.gpu_metric." + std::string(hw), name->second);
      return b_.counter_series(hw, device, "%");
    }
    return b_.counter_series(metric, device, unit);
  }

  // [SECTION] Names: processes, threads, streams ------------------------------------------------------------

  void names() {
    std::map<std::uint32_t, std::string> process_names;
    if (const TableDef* t = table("PROCESSES"))
      in_.reader(*t, {"globalPid", "pid", "name"}).for_each([&](const SqlValue* v) {
        const std::uint32_t pid = v[1].null() ? pid_of(v[0].as_int()) : id32(v[1]);
        process_names.emplace(pid, std::string(v[2].as_text()));
      });
    std::set<std::uint32_t> pids;
    for (const Track& tr : b_.tracks())
      if (tr.kind == TrackKind::cpu || tr.pid != 0) pids.insert(tr.pid);
    for (std::uint32_t pid : pids) {
      const auto it = process_names.find(pid);
      b_.add_process(Process{pid, it != process_names.end() ? it->second : std::string(), -1});
    }
    std::map<std::int64_t, std::string> thread_names(nvtx_thread_names_.begin(), nvtx_thread_names_.end());
    if (const TableDef* t = table("ThreadNames"))
      in_.reader(*t, {"nameId", "globalTid"}).for_each([&](const SqlValue* v) {
        if (const std::string* s = text(v[0].as_int())) thread_names[v[1].as_int()] = *s;
      });
    for (const auto& [g, name] : thread_names)
      thread_names_by_key_[(std::uint64_t{pid_of(g)} << 32) | tid_of(g)] = name;
    for (TrackId id = 0; id < b_.tracks().size(); ++id) {
      const Track& tr = b_.tracks()[id];
      if (tr.kind != TrackKind::cpu) continue;
      const auto it = thread_names_by_key_.find((std::uint64_t{tr.pid} << 32) | tr.tid);
      if (it != thread_names_by_key_.end()) b_.set_track_name(id, it->second);
    }
    stream_names();
  }

  // "stream N", with " (default)" for a NULL stream and " (priority P)" for a
  // prioritized one, as the capture names them.
  void stream_names() {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> suffix;  // (pid, stream)
    if (const TableDef* t = table("TARGET_INFO_CUDA_STREAM"))
      in_.reader(*t, {"processId", "streamId", "priority", "flag"}).for_each([&](const SqlValue* v) {
        const auto priority = static_cast<std::int32_t>(id32(v[2]));
        std::string s = v[3].as_int() == 3 ? " (default)" : "";  // CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL
        if (s.empty() && priority != 0) s = " (priority " + std::to_string(priority) + ")";
        suffix[{id32(v[0]), id32(v[1])}] = s;
      });
    for (const char* name : {"TARGET_INFO_CUDA_NULL_STREAM", "TARGET_INFO_CUDA_CONTEXT_INFO"})
      if (const TableDef* t = table(name))
        in_.reader(*t, {"processId", t->has("nullStreamId") ? "nullStreamId" : "streamId"})
            .for_each([&](const SqlValue* v) {
              suffix[{id32(v[0]), id32(v[1])}] = " (default)";
            });
    // Streams named with nvtxNameCudaStream.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> named;
    if (const TableDef* t = table("TARGET_INFO_NVTX_CUDA_STREAM"))
      in_.reader(*t, {"processId", "streamId", "name"}).for_each([&](const SqlValue* v) {
        named[{id32(v[0]), id32(v[1])}] = v[2].as_text();
      });
    for (TrackId id = 0; id < b_.tracks().size(); ++id) {
      const Track& tr = b_.tracks()[id];
      if (tr.kind != TrackKind::gpu) continue;
      const auto it = suffix.find({tr.pid, tr.stream});
      std::string name = "stream " + std::to_string(tr.stream) + (it != suffix.end() ? it->second : "");
      if (const auto n = named.find({tr.pid, tr.stream}); n != named.end() && !n->second.empty())
        name = n->second + " (" + name + ")";
      b_.set_track_name(id, name);
    }
  }

  // [SECTION] Ranks ----------------------------------------------------------------------------------------

  // NCCL's NVTX ranges (NCCL 2.19 and later) carry the communicator's rank in
  // their payload, which nsys exports as JSON text: {"...Rank": 3, ...}.
  void nccl_rank(const RangeRow& r, const SqlValue& json, bool by_id) {
    if (b_.strings().get(r.domain) != "NCCL") return;
    std::string_view s = by_id ? (text(json.as_int()) ? std::string_view(*text(json.as_int())) : "") : json.as_text();
    for (std::size_t at = 0; (at = s.find("ank\"", at)) != std::string_view::npos; at += 4) {
      if (at == 0 || (s[at - 1] != 'r' && s[at - 1] != 'R')) continue;
      std::size_t i = at + 4;
      while (i < s.size() && (s[i] == ' ' || s[i] == ':')) ++i;
      std::size_t j = i;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
      std::int64_t rank = 0;
      if (j > i && parse_i64(s.substr(i, j - i), &rank) && rank < (1 << 30)) {
        nccl_ranks_.emplace(b_.tracks()[r.track].pid, RankFound{static_cast<std::int32_t>(rank), "NCCL NVTX payload"});
        return;
      }
    }
  }

  struct RankFound {
    std::int32_t rank;
    std::string from;
  };

  void ranks() {
    // Later schemas list the MPI communicators a rank took part in, with its rank.
    std::int32_t world = 0;
    if (const TableDef* t = table("MPI_COMMUNICATORS"); t && b_.processes().size() == 1)
      in_.reader(*t, {"rank", "size"}).for_each([&](const SqlValue* v) {
        const std::int64_t rank = v[0].as_int(), size = v[1].as_int();
        if (v[0].null() || rank < 0 || rank >= (1 << 30)) return;
        ranks_.emplace(b_.processes().front().pid, RankFound{static_cast<std::int32_t>(rank), "MPI_COMMUNICATORS"});
        if (size > world && size < (1 << 30)) world = static_cast<std::int32_t>(size);
      });
    // nsys' MPI tracing names each rank's main thread "MPI Rank N".
    for (const auto& [key, name] : thread_names_by_key_) {
      std::int64_t rank = 0;
      if (name.rfind("MPI Rank ", 0) == 0 && parse_i64(std::string_view(name).substr(9), &rank) && rank >= 0 &&
          rank < (1 << 30))
        ranks_.emplace(static_cast<std::uint32_t>(key >> 32),
                       RankFound{static_cast<std::int32_t>(rank), "thread name \"" + name + "\""});
    }
    // A NCCL communicator's rank (perhaps of a subgroup) after those.
    for (const auto& [pid, found] : nccl_ranks_) ranks_.emplace(pid, found);
    std::int32_t env_world = 0;
    const RankFound env = launch_environment(&env_world);
    if (world == 0) world = env_world;
    const RankFound file = file_name_rank();
    std::set<std::int32_t> seen;
    std::string from;
    std::vector<Process> procs = b_.processes();
    for (Process& p : procs) {
      const auto it = ranks_.find(p.pid);
      const RankFound* r = it != ranks_.end() ? &it->second : nullptr;
      // The launch environment and the file name speak for a report of one process.
      if (!r && procs.size() == 1) r = env.rank >= 0 ? &env : file.rank >= 0 ? &file : nullptr;
      if (!r) continue;
      p.rank = r->rank;
      seen.insert(r->rank);
      from = r->from;
      b_.add_process(p);
    }
    if (seen.size() == 1) {
      b_.meta().rank = *seen.begin();
      b_.meta().set_property("nsys.rank_from", from);
    }
    if (world > 0) b_.meta().world_size = world;
  }

  // PROCESS_0:ENVIRONMENT_VARIABLE rows of META_DATA_CAPTURE (2024 schema):
  // the launcher's rank and size variables.
  RankFound launch_environment(std::int32_t* world) {
    RankFound found{-1, {}};
    const TableDef* t = table("META_DATA_CAPTURE");
    if (!t) return found;
    static constexpr std::string_view kRank[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",     "PMIX_RANK",
                                                 "MV2_COMM_WORLD_RANK",  "SLURM_PROCID", "RANK"};
    static constexpr std::string_view kSize[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                                                 "SLURM_NTASKS", "WORLD_SIZE"};
    int rank_priority = 99, size_priority = 99;
    in_.reader(*t, {"name", "value"}).for_each([&](const SqlValue* v) {
      if (v[0].as_text() != "PROCESS_0:ENVIRONMENT_VARIABLE") return;
      const std::string_view kv = v[1].as_text();
      const std::size_t eq = kv.find('=');
      if (eq == std::string_view::npos) return;
      const std::string_view key = kv.substr(0, eq);
      std::int64_t n = 0;
      if (!parse_i64(kv.substr(eq + 1), &n) || n < 0 || n >= (1 << 30)) return;
      for (int i = 0; i < 6; ++i)
        if (key == kRank[i] && i < rank_priority) {
          rank_priority = i;
          found = RankFound{static_cast<std::int32_t>(n), "environment " + std::string(key)};
        }
      for (int i = 0; i < 5; ++i)
        if (key == kSize[i] && i < size_priority) {
          size_priority = i;
          *world = static_cast<std::int32_t>(n);
        }
    });
    return found;
  }

  // "...rank3...", "rank_3", "rank-3", "rank.3" in the file's name.
  RankFound file_name_rank() const {
    std::string name = lower(db_.path());
    if (const std::size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    for (std::size_t at = 0; (at = name.find("rank", at)) != std::string::npos; at += 4) {
      std::size_t i = at + 4;
      if (i < name.size() && (name[i] == '_' || name[i] == '-' || name[i] == '.')) ++i;
      std::size_t j = i;
      while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
      std::int64_t rank = 0;
      if (j > i && j - i < 9 && parse_i64(name.substr(i, j - i), &rank))
        return {static_cast<std::int32_t>(rank), "file name"};
    }
    return {-1, {}};
  }

  // [SECTION] Metadata, diagnostics, tables not imported or missing -------------------------------------------------

  void metadata() {
    TraceMeta& m = b_.meta();
    m.source = TraceSource::nsys_sqlite;
    std::map<std::string, std::string> meta;
    for (const char* name : {"EXPORT_META_DATA", "META_DATA_EXPORT"})
      if (const TableDef* t = table(name)) {
        m.set_property("nsys.metadata_table", t->name);
        in_.reader(*t, {"name", "value"}).for_each([&](const SqlValue* v) {
          meta.emplace(std::string(v[0].as_text()), std::string(v[1].as_text()));
        });
      }
    const std::string version = meta.count("EXPORT_PRODUCT_VERSION") ? meta["EXPORT_PRODUCT_VERSION"] : "";
    const std::string schema = meta.count("EXPORT_SCHEMA_VERSION") ? meta["EXPORT_SCHEMA_VERSION"] : "";
    m.producer = "Nsight Systems" + (version.empty() ? std::string(" (version unknown)") : " " + version) +
                 ", SQLite export" + (schema.empty() ? "" : ", schema " + schema);
    if (!version.empty()) m.set_property("nsys.version", version);
    if (!schema.empty()) m.set_property("nsys.schema_version", schema);
    if (const TableDef* t = table("TARGET_INFO_SYSTEM_ENV"))
      in_.reader(*t, {"name", "value"}).for_each([&](const SqlValue* v) {
        if (v[0].as_text() == "Hostname") m.host = v[1].as_text();
        if (v[0].as_text() == "CudaDriverVersion") m.set_property("nsys.cuda_driver_version", v[1].as_text());
      });
    command_line();
  }

  // META_DATA_CAPTURE's PROCESS_0:COMMAND and :ARGUMENT_<i> (2024 schema),
  // else the name of the one process with activity.
  void command_line() {
    std::string command;
    std::map<int, std::string> args;
    if (const TableDef* t = db_.table("META_DATA_CAPTURE"))
      in_.reader(*t, {"name", "value"}).for_each([&](const SqlValue* v) {
        const std::string_view key = v[0].as_text();
        std::int64_t i = 0;
        if (key == "PROCESS_0:COMMAND") command = v[1].as_text();
        if (key.rfind("PROCESS_0:ARGUMENT_", 0) == 0 && parse_i64(key.substr(19), &i) && i >= 0 && i < 100000)
          args[static_cast<int>(i)] = v[1].as_text();
      });
    for (const auto& [i, a] : args) command += " " + (a.find(' ') == std::string::npos ? a : "\"" + a + "\"");
    if (command.empty() && b_.processes().size() == 1) command = b_.processes().front().name;
    b_.meta().command_line = command;
  }

  // nsys' own warnings and errors about the capture (lost buffers, unsupported
  // drivers, …), first line of each, up to 20.
  void diagnostics() {
    const TableDef* t = table("DIAGNOSTIC_EVENT");
    if (!t) return;
    int n = 0;
    in_.reader(*t, {"severity", "text"}).for_each([&](const SqlValue* v) {
      const std::int64_t severity = v[0].as_int();  // ENUM_DIAGNOSTIC_SEVERITY_LEVEL: 2 warning, 3 error
      if ((severity != 2 && severity != 3) || n >= 20) return;
      std::string_view line = v[1].as_text();
      line = trim(line.substr(0, line.find('\n')));
      if (line.size() > 200) line = line.substr(0, 200);
      b_.meta().set_property("nsys.diagnostic." + std::to_string(n++),
                             std::string(severity == 3 ? "error: " : "warning: ") + std::string(line));
    });
  }

  // Rows of every table the model has no place for (OS runtime call stacks, CPU
  // sampling, scheduling, OpenACC, OpenMP, cuDNN/cuBLAS, graphics APIs, …),
  // so that `gpuscope info` says what the import left out. Descriptions of
  // the target and the export (TARGET_INFO_*, META_DATA_*, ENUM_*, …) are not
  // counted.
  void tables_not_imported() {
    static constexpr std::string_view kDescriptive[] = {"stringids",        "processes",        "threadnames",
                                                        "processstreams",   "analysis_details", "analysis_file",
                                                        "unwindmethodtype", "export_meta_data", "diagnostic_event"};
    for (const TableDef& t : db_.tables()) {
      const std::string name = lower(t.name);
      if (read_.count(name) || name.rfind("enum_", 0) == 0 || name.rfind("target_info_", 0) == 0 ||
          name.rfind("meta_data_", 0) == 0)
        continue;
      if (std::find(std::begin(kDescriptive), std::end(kDescriptive), name) != std::end(kDescriptive)) continue;
      skipped_.add("import.skipped.table." + t.name, in_.rows(t));
    }
  }

  // A table the other tables show the export had, missing (dropped after it
  // was written): what refers to it is counted under
  // "import.missing_table.<TABLE>", a stated loss rather than a silent one.
  void missing_tables() {
    const TraceTables& tb = b_.tables();
    if (!db_.has_table("CUPTI_ACTIVITY_KIND_KERNEL")) {
      std::uint64_t launches = 0;
      std::vector<std::int8_t> is_launch(b_.strings().size(), -1);
      for (const StringId name : tb.api_calls.name) {
        if (is_launch[name] < 0) {
          const std::string_view s = b_.strings().get(name);
          is_launch[name] = s.find("LaunchKernel") != std::string_view::npos ||
                            s.find("LaunchCooperativeKernel") != std::string_view::npos || s.starts_with("cuLaunch") ||
                            s.find("GraphLaunch") != std::string_view::npos;
        }
        launches += static_cast<std::uint64_t>(is_launch[name]);
      }
      skipped_.add("import.missing_table.CUPTI_ACTIVITY_KIND_KERNEL", launches);
    }
    if (!db_.has_table("CUPTI_ACTIVITY_KIND_RUNTIME") && !db_.has_table("CUPTI_ACTIVITY_KIND_DRIVER")) {
      std::uint64_t linked = 0;
      for (const auto* c : {&tb.kernels.correlation, &tb.memcpys.correlation, &tb.memsets.correlation})
        linked += static_cast<std::uint64_t>(std::count_if(c->begin(), c->end(), [](std::uint32_t x) { return x; }));
      skipped_.add("import.missing_table.CUPTI_ACTIVITY_KIND_RUNTIME", linked);
    }
  }

  void no_gpu_activity() {
    const bool tables = db_.has_table("CUPTI_ACTIVITY_KIND_KERNEL") || db_.has_table("CUPTI_ACTIVITY_KIND_MEMCPY") ||
                        db_.has_table("CUPTI_ACTIVITY_KIND_MEMSET");
    b_.meta().set_property("import.warning",
                           std::string("no GPU activity: the export has ") +
                               (tables ? "no rows in CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY and _MEMSET"
                                       : "no CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET table") +
                               " (was the profile taken without CUDA tracing, nsys profile --trace=cuda?)");
  }

  static constexpr std::int64_t kDenseIds = std::int64_t{1} << 24;

  const Input& in_;
  const Database& db_;
  TraceBuilder b_;
  Counts skipped_;
  TimeNs offset_ = 0;  // the file's times are ns since the session start
  std::set<std::string> read_;
  std::vector<std::string> texts_;
  std::unordered_map<std::int64_t, std::string> sparse_texts_;
  std::vector<StringId> names_;
  std::unordered_map<std::int64_t, StringId> api_names_;
  MemoryKind memory_kinds_[8];
  SyncType sync_types_[5];
  std::unordered_map<std::uint64_t, TrackId> gpu_tracks_;
  std::uint64_t last_gpu_key_ = 0;
  std::int64_t last_tid_ = 0;
  TrackId last_gpu_ = kNoRow, last_cpu_ = kNoRow;
  struct {
    std::vector<std::uint32_t> kernels, memcpys, memsets, syncs;
  } op_pids_;
  std::vector<std::uint32_t> range_pids_;
  std::map<std::int64_t, std::uint32_t> gpu_ordinals_;  // TARGET_INFO_GPU.id -> model device
  std::set<std::uint32_t> api_pids_;
  std::map<std::int64_t, std::string> nvtx_thread_names_;
  std::map<std::uint64_t, std::string> thread_names_by_key_;
  std::map<std::uint32_t, RankFound> ranks_, nccl_ranks_;
};

}  // namespace

// [SECTION] Entry point -------------------------------------------------------------------------------

Trace read_nsys_export(const Input& in) { return NsysReader(in).run(); }

}  // namespace gpuscope::nsys
