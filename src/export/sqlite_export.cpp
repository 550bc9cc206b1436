// SQLite export in Nsight Systems' schema (see sqlite_export.h and
// docs/sqlite-export.md).
//
// [SECTION] SQLite handles and statements
// [SECTION] Schema
// [SECTION] Rows
// [SECTION] Entry point
//
// One transaction, journal off, prepared statements: the database is written
// under a temporary name and only renamed into place once complete, so the
// usual durability machinery of SQLite is not needed. Process and thread ids
// are serialized as Nsight Systems does (globalPid = pid << 24, globalTid =
// globalPid | tid), so its idioms (`globalTid >> 24 & 0xFFFFFF` for the pid)
// keep working; a thread whose tid does not fit in 24 bits (or whose value
// another thread already has) gets a value from 2^62 up instead, and
// GPUSCOPE_TRACKS lists every track with its exact ids, so that the file
// reads back as the trace (src/import/nsys/gpuscope_sqlite.cpp).
#include "export/sqlite_export.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/files.h"
#include "words/format.h"

namespace gpuscope {

namespace {

// [SECTION] SQLite handles and statements ------------------------------------------------------

class Db {
 public:
  Db(const std::string& file, const std::string& shown_as) : shown_as_(shown_as) {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw InputError(shown_as_, "cannot create the database: " + why);
    }
  }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() {
    if (db_) sqlite3_close(db_);
  }
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string why = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      fail(why);
    }
  }
  [[noreturn]] void fail(const std::string& why) const { throw InputError(shown_as_, "SQLite: " + why); }
  // Closes the database, reporting errors (the destructor cannot).
  void close() {
    if (sqlite3_close(db_) != SQLITE_OK) fail(sqlite3_errmsg(db_));
    db_ = nullptr;
  }
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string shown_as_;
};

// A prepared INSERT; bind columns left to right with `<<`, then insert().
class Insert {
 public:
  Insert(Db& db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &st_, nullptr) != SQLITE_OK) db.fail(sqlite3_errmsg(db.get()));
  }
  Insert(const Insert&) = delete;
  Insert& operator=(const Insert&) = delete;
  ~Insert() { sqlite3_finalize(st_); }

  Insert& operator<<(std::int64_t v) {
    sqlite3_bind_int64(st_, ++col_, v);
    return *this;
  }
  Insert& operator<<(double v) {
    if (std::isnan(v))
      sqlite3_bind_null(st_, ++col_);  // SQLite turns NaN into NULL anyway: say so
    else
      sqlite3_bind_double(st_, ++col_, v);
    return *this;
  }
  Insert& operator<<(std::string_view s) {
    sqlite3_bind_text(st_, ++col_, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Insert& null() {
    sqlite3_bind_null(st_, ++col_);
    return *this;
  }
  // v, or NULL for 0 (an id or value the row does not have).
  Insert& or_null(std::int64_t v) { return v ? *this << v : null(); }
  void insert(std::uint64_t& rows) {
    if (sqlite3_step(st_) != SQLITE_DONE) db_.fail(sqlite3_errmsg(db_.get()));
    sqlite3_reset(st_);
    col_ = 0;
    ++rows;
  }

 private:
  Db& db_;
  sqlite3_stmt* st_ = nullptr;
  int col_ = 0;
};

std::int64_t global_pid(std::uint32_t pid) { return static_cast<std::int64_t>(pid) << 24; }
std::int64_t global_tid(std::uint32_t pid, std::uint32_t tid) { return global_pid(pid) | (tid & 0xffffff); }
std::int64_t i64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

// [SECTION] Schema ------------------------------------------------------------------------------

constexpr const char* kSchema = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE GPUSCOPE_META (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT NOT NULL, uuid TEXT NOT NULL, totalMemory INTEGER NOT NULL,
  smCount INTEGER NOT NULL, computeMajor INTEGER NOT NULL, computeMinor INTEGER NOT NULL, clockRate INTEGER NOT NULL,
  memoryClockRate INTEGER NOT NULL, memoryBusWidth INTEGER NOT NULL, maxThreadsPerBlock INTEGER NOT NULL,
  maxThreadsPerSm INTEGER NOT NULL, maxBlocksPerSm INTEGER NOT NULL, maxRegistersPerSm INTEGER NOT NULL,
  maxShmemPerSm INTEGER NOT NULL, threadsPerWarp INTEGER NOT NULL, peakFp32Flops REAL, peakTensorFlops REAL,
  peakMemoryBandwidth REAL);
CREATE TABLE PROCESSES (globalPid INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT NOT NULL, rank INTEGER NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER NOT NULL, globalTid INTEGER NOT NULL);
CREATE TABLE GPUSCOPE_STREAMS (deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, name TEXT NOT NULL);
CREATE TABLE GPUSCOPE_TRACKS (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, deviceId INTEGER, streamId INTEGER,
  pid INTEGER NOT NULL, tid INTEGER, globalTid INTEGER, name TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, graphId INTEGER, graphNodeId INTEGER, category INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER NOT NULL, dstKind INTEGER NOT NULL,
  graphId INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, graphId INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL,
  correlationId INTEGER NOT NULL, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, cbid INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL,
  correlationId INTEGER NOT NULL, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, cbid INTEGER NOT NULL);
CREATE TABLE GPUSCOPE_OTHER_API_CALLS (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL,
  correlationId INTEGER NOT NULL, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, cbid INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER NOT NULL, streamId INTEGER, correlationId INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  globalTid INTEGER NOT NULL, syncType INTEGER NOT NULL, eventId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER NOT NULL, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, int64Value INTEGER);
CREATE TABLE GPUSCOPE_ANNOTATIONS (start INTEGER NOT NULL, end INTEGER NOT NULL, nameId INTEGER NOT NULL,
  categoryId INTEGER NOT NULL, globalTid INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER,
  kind INTEGER NOT NULL, color INTEGER, int64Value INTEGER, inputDimsId INTEGER, inputTypesId INTEGER,
  concreteInputsId INTEGER, collectiveId INTEGER, sequenceNr INTEGER, fwdThreadId INTEGER);
CREATE TABLE PROFILER_OVERHEAD (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL,
  nameId INTEGER NOT NULL);
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER NOT NULL, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER,
  callchainId INTEGER);
CREATE TABLE GPUSCOPE_COUNTER_SERIES (id INTEGER PRIMARY KEY, name TEXT NOT NULL, deviceId INTEGER,
  unit TEXT NOT NULL);
CREATE TABLE GPUSCOPE_COUNTERS (seriesId INTEGER NOT NULL, timestamp INTEGER NOT NULL, value);
CREATE TABLE GPUSCOPE_MEMORY_EVENTS (seriesId INTEGER NOT NULL, timestamp INTEGER NOT NULL, bytes INTEGER NOT NULL,
  address INTEGER);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL,
  metricName TEXT NOT NULL);
CREATE TABLE GPU_METRICS (timestamp INTEGER NOT NULL, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL,
  value INTEGER NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_GPUSCOPE_KERNEL_CATEGORY (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
)sql";

// NVTX event types as Nsight Systems numbers them.
constexpr std::int64_t kNvtxMark = 34, kNvtxPushPopRange = 59, kNvtxStartEndRange = 60;

// [SECTION] Rows --------------------------------------------------------------------------------

class Writer {
 public:
  Writer(const Trace& t, Db& db) : t_(t), db_(db) {}

  std::uint64_t run() {
    thread_ids();
    db_.exec(kSchema);
    enums();
    meta();
    strings();
    devices_processes_threads();
    kernels();
    copies();
    api_calls();
    syncs();
    ranges();
    counters();
    gpu_metrics();
    overheads();
    os_calls();
    return rows_;
  }

 private:
  // The pid of the process that launched a GPU op (through its API call), or
  // the GPU track's owning process.
  std::int64_t op_pid(RowIndex api, TrackId track) const {
    if (api != kNoRow) return global_pid(t_.tracks()[t_.api_calls().track_at(api)].pid);
    return global_pid(t_.tracks()[track].pid);
  }
  std::int64_t tid_of(TrackId track) const { return thread_ids_[track]; }
  // The columns a kernel's, memcpy's and memset's row start with: start, end,
  // deviceId, contextId (0), streamId, correlationId, globalPid.
  template <class Table>
  void op_columns(Insert& ins, const Table& t, std::size_t i) const {
    const Track& tr = t_.tracks()[t.track_at(i)];
    ins << t.start[i] << t.end[i] << std::int64_t{tr.device} << std::int64_t{0} << std::int64_t{tr.stream}
        << std::int64_t{t.correlation[i]} << op_pid(t.api[i], t.track_at(i));
  }
  // globalTid of every CPU track: nsys' (pid << 24 | tid) where that is
  // unique, else a value of its own from 2^62 up (GPUSCOPE_TRACKS maps it back).
  void thread_ids() {
    constexpr std::int64_t kOwnValues = std::int64_t{1} << 62;
    std::unordered_map<std::int64_t, TrackId> taken;
    thread_ids_.assign(t_.tracks().size(), 0);
    std::int64_t next_own = kOwnValues;
    for (TrackId id = 0; id < t_.tracks().size(); ++id) {
      const Track& tr = t_.tracks()[id];
      if (tr.kind != TrackKind::cpu) continue;
      const std::int64_t g = global_tid(tr.pid, tr.tid);
      thread_ids_[id] = tr.tid <= 0xffffff && taken.try_emplace(g, id).second ? g : next_own++;
    }
  }
  // Interned short names go after the trace's own strings.
  std::int64_t short_name_id(StringId full) {
    std::string s = format::nsys_short_name(t_.str(full));
    if (s == t_.str(full)) return full;
    auto [it, fresh] = short_ids_.try_emplace(std::move(s), 0);
    if (fresh) {
      it->second = next_string_id_++;
      Insert ins(db_, "INSERT INTO StringIds VALUES (?, ?)");
      ins << it->second << std::string_view(it->first);
      ins.insert(rows_);
    }
    return it->second;
  }

  void enums() {
    static constexpr const char* kCopy[] = {"UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA",
                                            "ATOD",    "DTOA", "DTOD", "HTOH", "PTOP"};
    enum_table("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", CopyKind::ptop,
               [](CopyKind k) { return std::string("CUDA_MEMCPY_OPER_") + kCopy[static_cast<int>(k)]; });
    enum_table("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)", MemoryKind::managed_static,
               [](MemoryKind k) { return "CUDA_MEMOPR_MEMORY_KIND_" + upper(to_string(k)); });
    enum_table("INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (?, ?, ?)", SyncType::context,
               [](SyncType k) { return "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_" + upper(to_string(k)); });
    Insert ev(db_, "INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, ?, ?)");
    (ev << kNvtxMark << std::string_view("NvtxMark") << std::string_view("NVTX mark")).insert(rows_);
    (ev << kNvtxPushPopRange << std::string_view("NvtxPushPopRange") << std::string_view("NVTX push/pop range"))
        .insert(rows_);
    (ev << kNvtxStartEndRange << std::string_view("NvtxStartEndRange") << std::string_view("NVTX start/end range"))
        .insert(rows_);
    Insert cat(db_, "INSERT INTO ENUM_GPUSCOPE_KERNEL_CATEGORY VALUES (?, ?)");
    for (int i = 0; i < kKernelCategoryCount; ++i)
      (cat << std::int64_t{i} << to_string(static_cast<KernelCategory>(i))).insert(rows_);
  }
  // An ENUM_ table of Nsight Systems' form: each value of E from 0 to `last`,
  // the name of its constant and gpuscope's word for it.
  template <class E, class Constant>
  void enum_table(const std::string& sql, E last, Constant&& constant) {
    Insert ins(db_, sql);
    for (int i = 0; i <= static_cast<int>(last); ++i) {
      const E e = static_cast<E>(i);
      (ins << std::int64_t{i} << std::string_view(constant(e)) << to_string(e)).insert(rows_);
    }
  }
  static std::string upper(std::string_view s) {
    std::string u(s);
    for (char& c : u) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return u;
  }

  void meta() {
    const TraceMeta& m = t_.meta();
    Insert ins(db_, "INSERT OR REPLACE INTO GPUSCOPE_META VALUES (?, ?)");
    auto kv = [&](std::string_view k, const std::string& v) { (ins << k << std::string_view(v)).insert(rows_); };
    kv("source", std::string(to_string(m.source)));
    if (m.source == TraceSource::synthetic) kv("note", "synthetic trace made by gpuscope synth: not a measurement");
    kv("producer", m.producer);
    kv("host", m.host);
    kv("command_line", m.command_line);
    kv("start_time_ns", std::to_string(m.start_time_ns));
    kv("rank", std::to_string(m.rank));
    kv("world_size", std::to_string(m.world_size));
    kv("string_count", std::to_string(t_.strings().size()));
    kv("time_unit", "ns");
    for (const auto& [k, v] : m.stats) kv("stat." + k, std::to_string(v));
    for (const auto& [k, v] : m.properties) kv("property." + k, v);
  }

  void strings() {
    const StringTable& s = t_.strings();
    Insert ins(db_, "INSERT INTO StringIds VALUES (?, ?)");
    for (StringId id = 0; id < s.size(); ++id) (ins << std::int64_t{id} << s.get(id)).insert(rows_);
    next_string_id_ = s.size();
  }

  void devices_processes_threads() {
    Insert gpu(db_, "INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const Device& d : t_.devices()) {
      gpu << std::int64_t{d.id} << std::string_view(d.name) << std::string_view(d.uuid) << i64(d.memory_bytes)
          << std::int64_t{d.sm_count} << std::int64_t{d.compute_major} << std::int64_t{d.compute_minor}
          << std::int64_t{d.core_clock_khz} << std::int64_t{d.memory_clock_khz} << std::int64_t{d.memory_bus_width_bits}
          << std::int64_t{d.max_threads_per_block} << std::int64_t{d.max_threads_per_sm}
          << std::int64_t{d.max_blocks_per_sm} << std::int64_t{d.registers_per_sm}
          << std::int64_t{d.shared_memory_per_sm} << std::int64_t{d.warp_size};
      for (double peak : {d.peak_fp32_flops, d.peak_tensor_flops, d.peak_memory_bandwidth})
        if (peak > 0 && std::isfinite(peak))
          gpu << peak;
        else
          gpu.null();
      gpu.insert(rows_);
    }
    Insert proc(db_, "INSERT INTO PROCESSES VALUES (?, ?, ?, ?)");
    for (const Process& p : t_.processes())
      (proc << global_pid(p.pid) << std::int64_t{p.pid} << std::string_view(p.name) << std::int64_t{p.rank})
          .insert(rows_);
    Insert thread(db_, "INSERT INTO ThreadNames VALUES (?, ?, ?)");
    Insert stream(db_, "INSERT INTO GPUSCOPE_STREAMS VALUES (?, ?, ?)");
    Insert name(db_, "INSERT INTO StringIds VALUES (?, ?)");
    Insert track(db_, "INSERT INTO GPUSCOPE_TRACKS VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (TrackId id = 0; id < t_.tracks().size(); ++id) {
      const Track& tr = t_.tracks()[id];
      track << std::int64_t{id};
      if (tr.kind == TrackKind::gpu)
        (track << std::string_view("gpu") << std::int64_t{tr.device} << std::int64_t{tr.stream} << std::int64_t{tr.pid})
            .null()
            .null();
      else
        (track << std::string_view("cpu")).null().null() << std::int64_t{tr.pid} << std::int64_t{tr.tid} << tid_of(id);
      (track << std::string_view(tr.name)).insert(rows_);
      if (tr.kind == TrackKind::gpu) {
        (stream << std::int64_t{tr.device} << std::int64_t{tr.stream} << std::string_view(tr.name)).insert(rows_);
        continue;
      }
      if (tr.name.empty()) continue;
      StringId sid = t_.strings().find(tr.name);
      if (sid == StringTable::kNoString) {
        sid = next_string_id_++;
        (name << std::int64_t{sid} << std::string_view(tr.name)).insert(rows_);
      }
      (thread << std::int64_t{sid} << std::int64_t{0} << tid_of(id)).insert(rows_);
    }
  }

  void kernels() {
    const KernelTable& k = t_.kernels();
    Insert ins(db_, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (std::size_t i = 0; i < k.size(); ++i) {
      op_columns(ins, k, i);
      ins << std::int64_t{k.name[i]} << short_name_id(k.name[i]);
      ins.or_null(k.mangled_at(i));
      ins << std::int64_t{k.grid_x[i]} << std::int64_t{k.grid_y[i]} << std::int64_t{k.grid_z[i]}
          << std::int64_t{k.block_x[i]} << std::int64_t{k.block_y[i]} << std::int64_t{k.block_z[i]}
          << std::int64_t{k.registers[i]} << std::int64_t{k.static_smem[i]} << std::int64_t{k.dynamic_smem[i]};
      graph(ins, k.graph_id_at(i), k.graph_node_id_at(i));
      ins << std::int64_t{k.category[i]};
      ins.insert(rows_);
    }
  }
  static void graph(Insert& ins, std::uint32_t id, std::uint64_t node) {
    if (id == 0 && node == 0) {
      ins.null().null();
      return;
    }
    ins << std::int64_t{id} << i64(node);
  }

  void copies() {
    const MemcpyTable& c = t_.memcpys();
    Insert cp(db_, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (std::size_t i = 0; i < c.size(); ++i) {
      op_columns(cp, c, i);
      cp << i64(c.bytes[i]) << std::int64_t{c.kind[i]} << std::int64_t{c.src_kind[i]} << std::int64_t{c.dst_kind[i]};
      graph(cp, sparse_at(c.graph_id, i), sparse_at(c.graph_node_id, i));
      cp.insert(rows_);
    }
    const MemsetTable& s = t_.memsets();
    Insert ms(db_, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    for (std::size_t i = 0; i < s.size(); ++i) {
      op_columns(ms, s, i);
      ms << std::int64_t{sparse_at(s.value, i)} << i64(s.bytes[i]) << std::int64_t{s.mem_kind[i]};
      graph(ms, sparse_at(s.graph_id, i), sparse_at(s.graph_node_id, i));
      ms.insert(rows_);
    }
  }

  void api_calls() {
    const ApiCallTable& a = t_.api_calls();
    Insert runtime(db_, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?)");
    Insert driver(db_, "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (?,?,?,?,?,?,?)");
    Insert other(db_, "INSERT INTO GPUSCOPE_OTHER_API_CALLS VALUES (?,?,?,?,?,?,?)");
    for (std::size_t i = 0; i < a.size(); ++i) {
      Insert& ins = a.domain_at(i) == ApiDomain::driver ? driver : a.domain_at(i) == ApiDomain::other ? other : runtime;
      (ins << a.start[i] << a.end[i] << tid_of(a.track_at(i)) << std::int64_t{a.correlation[i]}
           << std::int64_t{a.name[i]} << std::int64_t{a.status_at(i)} << std::int64_t{a.cbid_at(i)})
          .insert(rows_);
    }
  }

  void syncs() {
    const SyncTable& s = t_.syncs();
    Insert ins(db_, "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (std::size_t i = 0; i < s.size(); ++i) {
      const Track& tr = t_.tracks()[s.track_at(i)];
      ins << s.start[i] << s.end[i];
      if (s.device[i] == kNoDevice)
        ins.null();
      else
        ins << std::int64_t{s.device[i]};
      ins << std::int64_t{0};
      if (s.stream[i] == kNoId)
        ins.null();
      else
        ins << std::int64_t{s.stream[i]};
      ins << std::int64_t{s.correlation[i]} << global_pid(tr.pid) << tid_of(s.track_at(i)) << std::int64_t{s.type[i]};
      if (s.event[i] == kNoId)
        ins.null();
      else
        ins << std::int64_t{s.event[i]};
      ins.insert(rows_);
    }
  }

  // NVTX ranges and marks go to NVTX_EVENTS; what that table cannot hold
  // (imported annotations, GPU-side ranges, ranges with a correlation or
  // recorded inputs, marks with a duration) to GPUSCOPE_ANNOTATIONS.
  void ranges() {
    const RangeTable& r = t_.ranges();
    Insert nvtx(db_, "INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    Insert ann(db_, "INSERT INTO GPUSCOPE_ANNOTATIONS VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (std::size_t i = 0; i < r.size(); ++i) {
      const Track& tr = t_.tracks()[r.track_at(i)];
      const RangeKind kind = r.kind_at(i);
      const bool inputs = r.input_dims_at(i) != 0 || r.input_types_at(i) != 0 || r.concrete_inputs_at(i) != 0 ||
                          r.collective_at(i) != 0 || sequence_number(r, i) >= 0;
      if (tr.kind == TrackKind::gpu || kind == RangeKind::annotation || r.correlation_at(i) != 0 || inputs ||
          (kind == RangeKind::mark && r.end[i] != r.start[i])) {
        ann << r.start[i] << r.end[i] << std::int64_t{r.name[i]} << std::int64_t{r.domain[i]};
        if (tr.kind == TrackKind::gpu)
          ann.null() << std::int64_t{tr.device} << std::int64_t{tr.stream};
        else
          (ann << tid_of(r.track_at(i))).null().null();
        ann.or_null(r.correlation_at(i));
        ann << std::int64_t{r.kind[i]};
        ann.or_null(r.color_at(i));
        ann.or_null(r.payload_at(i));
        for (const StringId input :
             {r.input_dims_at(i), r.input_types_at(i), r.concrete_inputs_at(i), r.collective_at(i)})
          ann.or_null(input);
        if (const std::int64_t seq = sequence_number(r, i); seq >= 0)
          ann << seq << std::int64_t{r.fwd_thread_at(i)};
        else
          ann.null().null();
        ann.insert(rows_);
        continue;
      }
      const std::int64_t type = kind == RangeKind::mark        ? kNvtxMark
                                : kind == RangeKind::start_end ? kNvtxStartEndRange
                                                               : kNvtxPushPopRange;
      nvtx << r.start[i];
      if (kind == RangeKind::mark)
        nvtx.null();
      else
        nvtx << r.end[i];
      nvtx << type;
      nvtx.null().null();  // rangeId, category
      nvtx.or_null(r.color_at(i));
      nvtx << t_.str(r.name[i]) << tid_of(r.track_at(i));
      nvtx.null();  // endGlobalTid
      nvtx << std::int64_t{r.name[i]};
      nvtx.or_null(r.domain[i]);
      nvtx.or_null(r.payload_at(i));
      nvtx.insert(rows_);
    }
  }
  void counters() {
    Insert series(db_, "INSERT INTO GPUSCOPE_COUNTER_SERIES VALUES (?, ?, ?, ?)");
    for (std::size_t s = 0; s < t_.counter_series().size(); ++s) {
      const CounterSeries& cs = t_.counter_series()[s];
      series << i64(s) << std::string_view(cs.name);
      if (cs.device == kNoDevice)
        series.null();
      else
        series << std::int64_t{cs.device};
      (series << std::string_view(cs.unit)).insert(rows_);
    }
    const CounterTable& c = t_.counters();
    Insert ins(db_, "INSERT INTO GPUSCOPE_COUNTERS VALUES (?, ?, ?)");
    for (std::size_t i = 0; i < c.size(); ++i)
      (ins << std::int64_t{c.series[i]} << c.time[i] << c.value[i]).insert(rows_);
    // Memory events: address NULL when unknown, else its 64 bits as a signed integer.
    const MemoryEventTable& m = t_.memory_events();
    Insert mem(db_, "INSERT INTO GPUSCOPE_MEMORY_EVENTS VALUES (?, ?, ?, ?)");
    for (std::size_t i = 0; i < m.size(); ++i) {
      mem << std::int64_t{m.series[i]} << m.time[i] << m.bytes[i];
      if (const std::uint64_t a = m.address_at(i))
        mem << static_cast<std::int64_t>(a);
      else
        mem.null();
      mem.insert(rows_);
    }
  }

  // Hardware-metric series (hw.*, nvml.* of a device) again in nsys' own
  // tables, as `nsys profile --gpu-metrics-devices` leaves them: one metric
  // id per "name [unit]", one typeId per GPU (its id in the low byte, where
  // nsys' recipes read it). A hw.* series nsys also measures takes nsys'
  // name and unit (nsys_metric() below), so that nsys' recipes read it and
  // the importer turns it back into the hw.* series; the others keep
  // "name [unit]". NaN samples stay in GPUSCOPE_COUNTERS only (the column is
  // NOT NULL).
  void gpu_metrics() {
    std::unordered_map<std::string, std::int64_t> metric_ids;
    std::vector<std::int64_t> metric_of(t_.counter_series().size(), -1);
    std::vector<double> scale_of(t_.counter_series().size(), 1.0);
    Insert info(db_, "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, ?, ?, ?)");
    for (std::size_t s = 0; s < t_.counter_series().size(); ++s) {
      const CounterSeries& cs = t_.counter_series()[s];
      if (!series_name::is_hardware_metric(cs)) continue;
      const auto [name, scale] = nsys_metric(cs);
      scale_of[s] = scale;
      const auto [it, fresh] = metric_ids.try_emplace(name, static_cast<std::int64_t>(metric_ids.size()));
      metric_of[s] = it->second;
      (info << std::int64_t{cs.device} << std::string_view(gpu_type_name(cs.device)) << it->second
            << std::string_view(name))
          .insert(rows_);
    }
    if (metric_ids.empty()) return;
    const CounterTable& c = t_.counters();
    Insert ins(db_, "INSERT INTO GPU_METRICS VALUES (?, ?, ?, ?)");
    for (std::size_t i = 0; i < c.size(); ++i) {
      const std::uint32_t s = c.series[i];
      if (metric_of[s] < 0 || std::isnan(c.value[i])) continue;
      (ins << c.time[i] << std::int64_t{t_.counter_series()[s].device} << metric_of[s] << c.value[i] * scale_of[s])
          .insert(rows_);
    }
  }
  // nsys' name for a series and the factor from its values to nsys': a "%"
  // series as it is; DRAM in B/s as a percent of the device's peak
  // bandwidth, where the trace knows it.
  std::pair<std::string, double> nsys_metric(const CounterSeries& cs) const {
    const std::string_view nsys = series_name::nsys_name_of_hardware(cs.name);
    if (nsys.empty()) return {series_name::nsys_metric_name(cs), 1.0};
    const std::string name = std::string(nsys) + " [" + std::string(series_name::kNsysPercentUnit) + "]";
    if (cs.unit == "%") return {name, 1.0};
    if (cs.unit == "B/s")
      for (const Device& d : t_.devices())
        if (d.id == cs.device && d.peak_memory_bandwidth > 0) return {name, 100.0 / d.peak_memory_bandwidth};
    return {series_name::nsys_metric_name(cs), 1.0};
  }
  std::string gpu_type_name(std::uint32_t device) const {
    for (const Device& d : t_.devices())
      if (d.id == device && !d.name.empty()) return d.name;
    return "GPU " + std::to_string(device);
  }

  void overheads() {
    const OverheadTable& o = t_.overheads();
    Insert ins(db_, "INSERT INTO PROFILER_OVERHEAD VALUES (?, ?, ?, ?)");
    for (std::size_t i = 0; i < o.size(); ++i)
      (ins << o.start[i] << o.end[i] << tid_of(o.track_at(i)) << std::int64_t{o.kind[i]}).insert(rows_);
  }

  // Nsight Systems' OSRT_API (eventClass 27: a call; no call stacks), so that
  // nsys' own osrt_sum query runs on the file.
  void os_calls() {
    const OsCallTable& o = t_.os_calls();
    Insert ins(db_, "INSERT INTO OSRT_API VALUES (?, ?, 27, ?, ?, ?, ?, NULL)");
    for (std::size_t i = 0; i < o.size(); ++i)
      (ins << o.start[i] << o.end[i] << tid_of(o.track_at(i)) << std::int64_t{o.name[i]} << o.status_at(i)
           << std::int64_t{o.nesting_at(i)})
          .insert(rows_);
  }

  const Trace& t_;
  Db& db_;
  std::uint64_t rows_ = 0;
  std::int64_t next_string_id_ = 0;
  std::unordered_map<std::string, std::int64_t> short_ids_;
  std::vector<std::int64_t> thread_ids_;  // globalTid by track (CPU tracks)
};

}  // namespace

// [SECTION] Entry point -------------------------------------------------------------------------

SqliteExportStats write_sqlite_trace(const Trace& trace, const std::string& path, const SqliteExportOptions& options) {
  files::OutputFile out(path, files::OutputFile::Kind::named);  // SQLite opens the file by its name
  out.close_fd();
  const std::string& tmp = out.temp_path();
  SqliteExportStats stats;
  {
    Db db(tmp, path);
    db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; BEGIN;");
    stats.rows = Writer(trace, db).run();
    db.exec("COMMIT;");
    db.close();
  }
  if (options.sync) {
    const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
    const bool ok = fd >= 0 && ::fdatasync(fd) == 0;
    const int e = errno;
    if (fd >= 0) ::close(fd);
    if (!ok) throw InputError(path, std::string("cannot write: ") + std::strerror(e));
  }
  std::error_code ec;
  stats.file_bytes = std::filesystem::file_size(tmp, ec);
  out.commit();
  return stats;
}

}  // namespace gpuscope
