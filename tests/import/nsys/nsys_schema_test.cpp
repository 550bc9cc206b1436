// How the importer handles what differs between Nsight Systems versions, on
// small databases written here in the shape of each schema (columns as the
// 2022.2 / 2024.5 exports in tests/data/traces/nsys and Nsight Systems'
// SQLite schema reference of later versions have them): metadata table names,
// API calls with and without eventClass, a separate driver table, memory-kind
// and sync-type numbering from the ENUM tables, CUDA events with and without
// a time, device descriptions through TARGET_INFO_CUDA_DEVICE, graph ids,
// stream naming, NVTX in all its forms, ranks, OS runtime calls. Every database is also read
// through SQLite alone, and the two traces compared.
#include <gtest/gtest.h>

#include <string>

#include "import/nsys/nsys_sqlite.h"
#include "import/nsys/nsys_test_db.h"
#include "store/trace_equal.h"

namespace gpuscope {
namespace {

// globalTid / globalPid as nsys writes them: hardware id 1 in bits 48+, pid << 24, tid.
constexpr std::int64_t kHw = std::int64_t{1} << 48;
constexpr std::int64_t gtid(std::int64_t pid, std::int64_t tid) { return kHw | (pid << 24) | tid; }
constexpr std::int64_t gpid(std::int64_t pid) { return kHw | (pid << 24); }
std::string n(std::int64_t v) { return std::to_string(v); }

const std::string kStrings = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'void gemm<float>(float*, int)'), (2, 'gemm'), (3, '_Z4gemmIfEvPfi'),
  (4, 'cudaLaunchKernel_v7000'), (5, 'cuLaunchKernel'), (6, 'cudaMemcpy_v3020'), (7, 'main'),
  (8, 'cudaDeviceSynchronize_v3020'), (9, 'cudaEventRecord'), (10, 'worker'), (11, 'cudaStreamSynchronize');
)sql";

class NsysSchema : public testing::NsysTest {
 protected:
  // Imports `file` both ways, checks they agree, returns the direct one.
  Trace import_both(const std::string& file) {
    Trace direct = import_nsys_sqlite(file);
    const Trace slow = testing::import_slow(file);
    testing::expect_traces_equal(direct, slow);
    NsysImportOptions one;
    one.threads = 1;
    testing::expect_traces_equal(direct, import_nsys_sqlite(file, one));
    return direct;
  }
};

// A schema without eventClass, mangledName, graph columns, compute
// capability columns or ENUM tables, with driver calls in a table of their own.
TEST_F(NsysSchema, OlderColumnsMissingReadAsNull) {
  const std::string file = make_db("old.sqlite", kStrings + R"sql(
CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_VERSION', '2021.3.1.54'), ('EXPORT_SCHEMA_VERSION', '2.7.0');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, 11, )sql" +
                                                     n(gpid(1234)) + R"sql(, 1, 2, 40, 64, 2, 1, 256, 1, 1, 128, 512);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (500, 900, )sql" +
                                                     n(gtid(1234, 1234)) + R"sql(, 11, 4, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (600, 800, )sql" +
                                                     n(gtid(1234, 1234)) + R"sql(, 12, 5, 0);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, totalMemory INTEGER, clockRate INTEGER,
  smCount INTEGER, smMajor INTEGER, smMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'Tesla V100-SXM2-16GB', 16945512448, 1530000000, 80, 7, 0);
)sql");
  const Trace t = import_both(file);
  EXPECT_EQ(t.meta().producer, "Nsight Systems 2021.3.1.54, SQLite export, schema 2.7.0");
  ASSERT_EQ(t.kernels().size(), 1u);
  EXPECT_EQ(t.str(t.kernels().name[0]), "void gemm<float>(float*, int)");
  EXPECT_EQ(t.kernels().mangled_at(0), 0u);  // no mangledName column
  EXPECT_EQ(t.kernels().graph_id_at(0), 0u);
  EXPECT_EQ(t.kernels().grid_x[0], 64u);
  EXPECT_EQ(t.kernels().registers[0], 40u);
  EXPECT_EQ(t.kernels().static_smem[0], 128u);
  EXPECT_EQ(t.kernels().dynamic_smem[0], 512u);
  ASSERT_EQ(t.api_calls().size(), 2u);
  EXPECT_EQ(t.api_calls().domain_at(0), ApiDomain::runtime);
  EXPECT_EQ(t.str(t.api_calls().name[0]), "cudaLaunchKernel");
  EXPECT_EQ(t.api_calls().domain_at(1), ApiDomain::driver);
  EXPECT_EQ(t.kernels().api[0], 0u);  // linked to cudaLaunchKernel through correlation 11
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.devices()[0].compute_major, 7);  // from smMajor/smMinor
  EXPECT_EQ(t.devices()[0].sm_count, 80u);
  EXPECT_EQ(t.devices()[0].core_clock_khz, 1530000u);
  EXPECT_EQ(t.meta().start_time_ns, 0);  // no TARGET_INFO_SESSION_START_TIME: times as in the file
  EXPECT_EQ(t.kernels().start[0], 1000);
}

// 2024-style: eventClass in the runtime table, META_DATA_EXPORT, ENUM tables
// whose names decide what the numbers mean, the NULL stream from
// TARGET_INFO_CUDA_CONTEXT_INFO.
TEST_F(NsysSchema, EventClassEnumsAndContextInfo) {
  const std::string file = make_db("2024.sqlite", kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '2023-11-14T22:13:20', '');
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', ''), (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', ''),
  (5, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', '');
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER,
  dstKind INTEGER, graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (100, 200, 0, 1, NULL, 13, 21, )sql" +
                                                      n(gpid(77)) + R"sql(, 4096, 1, NULL, 1, 0, NULL),
  (300, 400, 0, 1, NULL, 13, 22, )sql" + n(gpid(77)) + R"sql(, 8192, 12, NULL, 5, 5, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (50, 90, 0, )sql" +
                                                      n(gtid(77, 78)) + R"sql(, 21, 6, 0, NULL),
  (55, 60, 1, )sql" + n(gtid(77, 78)) + R"sql(, 23, 5, 0, NULL),
  (50, 90, 67, )sql" + n(gtid(77, 78)) + R"sql(, 21, 6, 0, 3),
  (250, 290, 0, )sql" + n(gtid(77, 78)) + R"sql(, 22, 6, 0, NULL);
CREATE TABLE TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT NULL,
  processId INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, parentContextId INTEGER,
  isGreenContext INTEGER);
INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO VALUES (13, 0, 1, 77, 0, 1, NULL, NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (10, 0, )sql" + n(gtid(77, 78)) +
                                                      R"sql();
)sql");
  const Trace t = import_both(file);
  constexpr TimeNs kEpoch = 1700000000000000000;
  EXPECT_EQ(t.meta().start_time_ns, kEpoch);
  ASSERT_EQ(t.memcpys().size(), 2u);
  EXPECT_EQ(t.memcpys().start[0], kEpoch + 100);              // the file's ns are since the session start
  EXPECT_EQ(t.memcpys().src_kind_at(0), MemoryKind::pinned);  // by ENUM_CUDA_MEM_KIND's names
  EXPECT_EQ(t.memcpys().dst_kind_at(0), MemoryKind::device);
  EXPECT_EQ(t.memcpys().kind_at(1), CopyKind::dtoh);  // 12 = CUDA_MEMCPY_KIND_UVM_DTOH, counted
  EXPECT_EQ(t.memcpys().src_kind_at(1), MemoryKind::pageable);
  EXPECT_EQ(t.meta().stat("import.nsys_unified_memory_copies"), 1u);
  ASSERT_EQ(t.api_calls().size(), 3u);  // the eventClass 67 row repeats a call with its backtrace
  EXPECT_EQ(t.meta().stat("import.skipped.api_call_backtrace_copy"), 1u);
  EXPECT_EQ(t.api_calls().domain_at(1), ApiDomain::driver);  // eventClass 1, sorted by start on its thread
  EXPECT_EQ(t.memcpys().api[0], 0u);
  ASSERT_EQ(t.tracks().size(), 2u);
  EXPECT_EQ(t.tracks()[0].name, "stream 13 (default)");
  EXPECT_EQ(t.tracks()[0].pid, 77u);
  EXPECT_EQ(t.tracks()[1].name, "worker");
  EXPECT_EQ(t.tracks()[1].tid, 78u);
}

// Later schemas: graphId on kernels, timed CUDA events, TARGET_INFO_CUDA_DEVICE
// mapping the process's CUDA device to a GPU, MPI_COMMUNICATORS, sync types by
// ENUM_CUPTI_SYNC_TYPE, streams named with NVTX.
TEST_F(NsysSchema, LaterTablesAndColumns) {
  const std::string file = make_db("2026.sqlite", kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, graphNodeId INTEGER, graphId INTEGER, clusterX INTEGER,
  tensorSizeMinusOneElements TEXT NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1500, 0, 1, NULL, 9, 31, )sql" +
                                                      n(gpid(5)) +
                                                      R"sql(, 1, 2, 3, 32, 1, 1, 1, 32, 1, 1, 0, 0, 900, 17, 1, '');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (800, 950, 0, )sql" +
                                                      n(gtid(5, 5)) + R"sql(, 31, 4, 0, NULL),
  (1600, 1700, 0, )sql" + n(gtid(5, 5)) + R"sql(, 32, 9, 0, NULL),
  (1800, 2500, 0, )sql" + n(gtid(5, 5)) + R"sql(, 33, 11, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (timestamp INTEGER, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  eventId INTEGER NOT NULL, eventSyncId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES (1650, 0, 1, NULL, 9, 32, )sql" +
                                                      n(gpid(5)) + R"sql(, 4, 1),
  (0, 0, 1, NULL, 9, 32, )sql" + n(gpid(5)) + R"sql(, 5, 2);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (0, 'UNKNOWN', ''), (1, 'EVENT_SYNCHRONIZE', ''),
  (2, 'STREAM_SYNCHRONIZE', ''), (3, 'STREAM_WAIT_EVENT', ''), (4, 'CONTEXT_SYNCHRONIZE', '');
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, deprecatedSyncType INTEGER, syncType INTEGER NOT NULL,
  eventId INTEGER NOT NULL, eventSyncId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (1900, 2400, 0, 1, NULL, 9, 33, )sql" +
                                                      n(gpid(5)) + R"sql(, 3, 2, 4294967295, NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, totalMemory INTEGER,
  smCount INTEGER, uuid TEXT, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA A', 100, 132, 'uuid-a', 0, 9, 0),
  (1, 7, 'NVIDIA B', 200, 114, 'uuid-b', 1, 9, 0);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL, uuid TEXT,
  numMultiprocessors INTEGER);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (7, 0, 5, 'uuid-b', 100);
CREATE TABLE TARGET_INFO_NVTX_CUDA_STREAM (name TEXT NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT NULL,
  processId INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL);
INSERT INTO TARGET_INFO_NVTX_CUDA_STREAM VALUES ('compute', 0, 1, 5, 0, 1, 9);
CREATE TABLE MPI_COMMUNICATORS (rank INTEGER, timestamp INTEGER, commHandle INTEGER, parentHandle INTEGER,
  localRank INTEGER, size INTEGER, groupRoot INTEGER, groupRootUid INTEGER, members TEXT, commUid INTEGER);
INSERT INTO MPI_COMMUNICATORS VALUES (3, 10, 1, 0, 3, 8, 0, 0, '', 1), (3, 20, 2, 1, 1, 2, 2, 0, '', 2);
)sql");
  const Trace t = import_both(file);
  ASSERT_EQ(t.kernels().size(), 1u);
  EXPECT_EQ(t.kernels().graph_id_at(0), 17u);
  EXPECT_EQ(t.kernels().graph_node_id_at(0), 900u);
  EXPECT_EQ(t.str(t.kernels().mangled_at(0)), "_Z4gemmIfEvPfi");
  // The process's CUDA device 0 is the GPU with id 7, with the SMs it was given.
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.devices()[0].id, 0u);
  EXPECT_EQ(t.devices()[0].name, "NVIDIA B");
  EXPECT_EQ(t.devices()[0].uuid, "uuid-b");
  EXPECT_EQ(t.devices()[0].sm_count, 100u);
  EXPECT_EQ(t.devices()[0].compute_major, 9);
  // A timed CUDA event: a mark on its stream, linked to its cudaEventRecord; one with timestamp 0 is counted.
  ASSERT_EQ(t.ranges().size(), 1u);
  EXPECT_EQ(t.ranges().kind_at(0), RangeKind::mark);
  EXPECT_EQ(t.ranges().start[0], 1650);
  EXPECT_EQ(t.str(t.ranges().domain[0]), "cuda_event");
  EXPECT_EQ(t.str(t.ranges().name[0]), "cudaEventRecord (event 4)");
  EXPECT_EQ(t.tracks()[t.ranges().track_at(0)].kind, TrackKind::gpu);
  EXPECT_EQ(t.ranges().correlation_at(0), 32u);
  EXPECT_EQ(t.meta().stat("import.skipped.cuda_event_without_time"), 1u);
  // syncType 2 is STREAM_SYNCHRONIZE in this file's ENUM_CUPTI_SYNC_TYPE.
  ASSERT_EQ(t.syncs().size(), 1u);
  EXPECT_EQ(t.syncs().type_at(0), SyncType::stream);
  EXPECT_EQ(t.syncs().stream[0], 9u);
  EXPECT_EQ(t.tracks()[t.syncs().track_at(0)].tid, 5u);
  EXPECT_EQ(t.tracks()[0].name, "compute (stream 9)");
  EXPECT_EQ(t.meta().rank, 3);
  EXPECT_EQ(t.meta().world_size, 8);
  EXPECT_EQ(t.meta().property("nsys.rank_from"), "MPI_COMMUNICATORS");
}

TEST_F(NsysSchema, NvtxEventsInAllTheirForms) {
  const std::int64_t main = gtid(40, 40), other = gtid(40, 41);
  const std::string file =
      make_db("nvtx.sqlite", kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (10, NULL, 75, 'NCCL', )sql" +
                                 n(main) + R"sql(, 3);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (11, NULL, 39, 'MPI Rank 2', )sql" +
                                 n(main) + R"sql();
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, color, int64Value)
  VALUES (100, 900, 59, 'step 0', )sql" +
                                 n(main) + R"sql(, 4278190335, -7);
INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId, uint64Value)
  VALUES (200, 300, 59, 7, )sql" +
                                 n(main) + R"sql(, 3, 12);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, jsonText)
  VALUES (310, 320, 59, 'ncclCommInitRank', )sql" +
                                 n(main) + R"sql(, 3, '{"NCCL communicator ID": 5, "Rank": 6, "No. of ranks": 8}');
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, int32Value)
  VALUES (400, 1200, 60, 'load', )sql" +
                                 n(main) + ", " + n(other) + R"sql(, 3);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, doubleValue) VALUES (500, NULL, 34, 'tick', )sql" +
                                 n(other) + R"sql(, 2.0);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, doubleValue) VALUES (600, NULL, 34, 'half', )sql" +
                                 n(other) + R"sql(, 0.5);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (700, NULL, 59, 'never ended', )sql" +
                                 n(main) + R"sql();
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (800, 810, 66, 'nvtxt', )sql" +
                                 n(main) + R"sql();
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (850, 860, 59, 'lost domain', )sql" +
                                 n(main) + R"sql(, 99);
)sql");
  const Trace t = import_both(file);
  const RangeTable& r = t.ranges();
  ASSERT_EQ(r.size(), 7u);
  auto find = [&](std::string_view name) {
    for (std::size_t i = 0; i < r.size(); ++i)
      if (t.str(r.name[i]) == name) return i;
    ADD_FAILURE() << "no range " << name;
    return std::size_t{0};
  };
  const std::size_t step = find("step 0"), main_range = find("main"), load = find("load");
  EXPECT_EQ(r.kind_at(step), RangeKind::push_pop);
  EXPECT_EQ(r.color_at(step), 4278190335u);
  EXPECT_EQ(r.payload_at(step), -7);
  EXPECT_EQ(r.domain[step], 0u);                   // the default domain
  EXPECT_EQ(t.str(r.domain[main_range]), "NCCL");  // textId through StringIds, domain 3 named by eventType 75
  EXPECT_EQ(r.payload_at(main_range), 12);
  EXPECT_EQ(r.depth[main_range], 1);                 // inside "step 0"
  EXPECT_EQ(r.kind_at(load), RangeKind::start_end);  // on the thread that started it
  EXPECT_EQ(t.tracks()[r.track_at(load)].tid, 40u);
  EXPECT_EQ(r.payload_at(load), 3);
  const std::size_t tick = find("tick");
  EXPECT_EQ(r.kind_at(tick), RangeKind::mark);
  EXPECT_EQ(r.end[tick], r.start[tick]);
  EXPECT_EQ(r.payload_at(tick), 2);  // an integral double
  EXPECT_EQ(r.payload_at(find("half")), 0);
  EXPECT_EQ(t.meta().stat("import.nvtx_payloads_not_integral"), 1u);
  EXPECT_EQ(t.str(r.domain[find("lost domain")]), "domain 99");
  EXPECT_EQ(t.meta().stat("import.skipped.nvtx_range_without_end"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.nvtx_event_type_66"), 1u);
  // eventType 39 named the thread; "MPI Rank 2" gives the rank, before NCCL's communicator rank 6.
  bool named = false;
  for (const Track& tr : t.tracks()) named |= tr.tid == 40 && tr.name == "MPI Rank 2";
  EXPECT_TRUE(named);
  EXPECT_EQ(t.meta().rank, 2);
}

TEST_F(NsysSchema, NcclPayloadRank) {
  const std::string file = make_db("nccl.sqlite", kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, textId INTEGER, domainId INTEGER, jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (1, 75, 'NCCL', )sql" +
                                                      n(gtid(9, 9)) + R"sql(, 2);
INSERT INTO NVTX_EVENTS VALUES (5, 9, 59, 'ncclCommInitRank', )sql" +
                                                      n(gtid(9, 9)) + R"sql(, NULL, 2, NULL,
  '{"NCCL communicator ID": 77, "Rank": 6, "No. of ranks": 8}');
)sql");
  const Trace t = import_both(file);
  EXPECT_EQ(t.meta().rank, 6);
  EXPECT_EQ(t.meta().property("nsys.rank_from"), "NCCL NVTX payload");
}

TEST_F(NsysSchema, RankFromFileName) {
  const std::string file = make_db("train_rank7.sqlite", kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, )sql" + n(gtid(3, 3)) +
                                                             R"sql(, 1, 4, 0);
)sql");
  const Trace t = import_both(file);
  EXPECT_EQ(t.meta().rank, 7);
  EXPECT_EQ(t.meta().property("nsys.rank_from"), "file name");
}

// CUPTI numbers correlations per process: two processes of one report each
// have a launch with correlation 1; each kernel stays linked to its own.
TEST_F(NsysSchema, ProcessesKeepTheirOwnCorrelations) {
  std::string sql = kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
)sql";
  for (int pid : {100, 200}) {
    const int device = pid / 100 - 1;
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + n(1000 + pid) + ", " + n(2000 + pid) + ", " + n(device) +
           ", 7, 1, " + n(gpid(pid)) + ", 1);";
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + n(pid) + ", " + n(pid + 50) + ", 0, " +
           n(gtid(pid, pid)) + ", 1, 4, 0);";
  }
  const Trace t = import_both(make_db("two.sqlite", sql));
  ASSERT_EQ(t.kernels().size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const RowIndex a = t.kernels().api[i];
    ASSERT_NE(a, kNoRow);
    EXPECT_EQ(t.tracks()[t.api_calls().track_at(a)].pid, t.tracks()[t.kernels().track_at(i)].pid);
  }
  EXPECT_NE(t.kernels().correlation[0], t.kernels().correlation[1]);
  EXPECT_NE(t.meta().property("nsys.correlation_ids"), "");
  EXPECT_EQ(t.processes().size(), 2u);
}

// An export of a profile without CUDA tracing imports, and says so.
TEST_F(NsysSchema, NoGpuActivitySaysSo) {
  const std::string file = make_db("cpu.sqlite", kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER);
INSERT INTO NVTX_EVENTS VALUES (1, 5, 59, 'work', )sql" +
                                                     n(gtid(3, 3)) + R"sql();
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER);
INSERT INTO OSRT_API VALUES (1, 2, 27, )sql" + n(gtid(3, 3)) +
                                                     R"sql(, 7, 0, 0, 1), (3, 4, 27, )sql" + n(gtid(3, 3)) +
                                                     R"sql(, 7, 0, 0, 1);
)sql");
  const Trace t = import_both(file);
  EXPECT_EQ(t.kernels().size() + t.memcpys().size() + t.memsets().size(), 0u);
  EXPECT_EQ(t.ranges().size(), 1u);
  EXPECT_NE(t.meta().property("import.warning").find("no GPU activity"), std::string::npos);
  EXPECT_NE(t.meta().property("import.warning").find("no CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos);
  EXPECT_EQ(t.os_calls().size(), 2u);  // a CPU-only profile's OS runtime calls are imported
  EXPECT_EQ(t.meta().stat("import.skipped.table.OSRT_API"), 0u);
}

// Rows the model cannot place are counted by reason, the rest imported.
TEST_F(NsysSchema, BadRowsAreCountedNotImported) {
  const std::string file = make_db("bad.sqlite", kStrings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 5, 0, 7, 1, 0, 1, 2), (NULL, 5, 0, 7, 1, 0, 1, 2),
  (1, 5, NULL, 7, 1, 0, 1, 2), (1, 5, 0, NULL, 1, 0, 1, 2), (1, 5, 0, 7, 1, 0, 999, 2), (1, 5, 0, 7, 1, 0, NULL, 2),
  (9223372036854775800, 9223372036854775807, 0, 7, 1, 0, 1, 2);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (100);
)sql");
  const Trace t = import_both(file);
  ASSERT_EQ(t.kernels().size(), 2u);
  EXPECT_EQ(t.meta().stat("import.skipped.kernel_negative_duration"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.kernel_without_time"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.kernel_without_device"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.kernel_without_stream"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.kernel_invalid_time"), 1u);  // past int64 once the session start is added
  EXPECT_EQ(t.meta().stat("import.unknown_string_ids"), 1u);           // demangledName 999
  // No demangledName: the short name.
  bool short_name = false, unnamed = false;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    short_name |= t.str(t.kernels().name[i]) == "gemm";
    unnamed |= t.str(t.kernels().name[i]) == "<unnamed kernel>";
  }
  EXPECT_TRUE(short_name);
  EXPECT_TRUE(unnamed);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// GPU metrics as `nsys profile --gpu-metrics-devices` exports them: metric
// names (unit in brackets) per typeId in TARGET_INFO_GPU_METRICS, samples in
// GPU_METRICS (integer values, times from the session start). typeId's low
// byte is the GPU: TARGET_INFO_GPU id 3 is CUDA device 1. Metrics with a
// hw.* equivalent take its name (nsys' kept in the meta properties); the
// others keep nsys' name and unit.
TEST_F(NsysSchema, GpuMetricsBecomeCounterSeriesPerMetricAndGpu) {
  const std::string file = make_db("metrics.sqlite", kStrings + R"sql(
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1000000, '', '');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, totalMemory INTEGER,
  smCount INTEGER, uuid TEXT, cuDevice INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA A', 100, 132, 'uuid-a', 0), (1, 3, 'NVIDIA B', 100, 132, 'uuid-b', 1);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL,
  metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65792, 0, 'GH100', 0, 'SM Active [Throughput %]'),
  (65792, 0, 'GH100', 1, 'DRAM Read Bandwidth [Throughput %]'), (65792, 0, 'GH100', 2, 'Unitless'),
  (65795, 0, 'GH100', 0, 'SM Active [Throughput %]'), (65792, 0, 'GH100', 3, 'GR Active [Throughput %]'),
  (65792, 0, 'GH100', 4, 'SM Issue [Avg]');
CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp INTEGER, typeId INTEGER NOT NULL,
  metricId INTEGER NOT NULL, value INTEGER NOT NULL);
INSERT INTO GPU_METRICS VALUES (10, 100, 65792, 0, 40), (20, 200, 65792, 0, 55), (10, 100, 65792, 1, 7),
  (10, 100, 65792, 2, 3), (15, 150, 65795, 0, 90), (30, 300, 65792, 9, 1), (40, NULL, 65792, 0, 1),
  (10, 100, 65792, 3, 97), (10, 100, 65792, 4, 2);
)sql");
  const Trace t = import_both(file);
  auto samples = [&](std::string_view name, std::uint32_t device) {
    std::vector<std::pair<TimeNs, double>> v;
    const std::uint32_t s = t.find_counter_series(name, device);
    if (s == kNoSeries) return v;
    const RowRange r = t.rows_of(TableId::counters, s);
    for (RowIndex i = r.begin; i < r.end; ++i) v.emplace_back(t.counters().time[i], t.counters().value[i]);
    return v;
  };
  using V = std::vector<std::pair<TimeNs, double>>;
  EXPECT_EQ(samples("hw.sm_active", 0), (V{{1000100, 40}, {1000200, 55}}));
  EXPECT_EQ(samples("hw.sm_active", 1), (V{{1000150, 90}}));
  EXPECT_EQ(samples("hw.dram_read", 0), (V{{1000100, 7}}));  // a percent of the peak bandwidth, as nsys gives it
  EXPECT_EQ(samples("Unitless", 0), (V{{1000100, 3}}));
  EXPECT_EQ(samples("GR Active", 0), (V{{1000100, 97}}));    // no hw.* equivalent: nsys' name
  EXPECT_EQ(samples("SM Issue", 0), (V{{1000100, 2}}));      // not in percent: not hw.sm_issue
  EXPECT_EQ(samples("gpu metric 9", 0), (V{{1000300, 1}}));  // a metric id without a name
  EXPECT_EQ(samples("SM Active", 0), V{});
  for (const char* hw : {"hw.sm_active", "hw.dram_read"}) {
    const CounterSeries& cs = t.counter_series()[t.find_counter_series(hw, 0)];
    EXPECT_EQ(cs.unit, "%") << hw;
    EXPECT_TRUE(series_name::is_hardware_metric(cs)) << hw;
  }
  EXPECT_EQ(t.meta().property("nsys.gpu_metric.hw.sm_active"), "SM Active [Throughput %]");
  EXPECT_EQ(t.meta().property("nsys.gpu_metric.hw.dram_read"), "DRAM Read Bandwidth [Throughput %]");
  EXPECT_EQ(t.counter_series()[t.find_counter_series("GR Active", 0)].unit, "Throughput %");
  EXPECT_EQ(t.counter_series()[t.find_counter_series("SM Issue", 0)].unit, "Avg");
  EXPECT_EQ(t.counter_series()[t.find_counter_series("Unitless", 0)].unit, "");
  EXPECT_EQ(t.counter_series().size(), 7u);
  EXPECT_EQ(t.meta().stat("import.skipped.gpu_metric_incomplete"), 1u);
  EXPECT_EQ(t.meta().stat("import.gpu_metrics_without_name"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.table.GPU_METRICS"), 0u);
}

// OSRT_API as the 2024 schema has it: calls (eventClass 27) with their return
// value and nesting level, the marks of tracing started (31) and finished (32)
// counted, not imported; a call without a thread counted.
TEST_F(NsysSchema, OsRuntimeCallsWithNestingAndReturnValues) {
  const std::string file = make_db("osrt.sqlite", R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'fread'), (2, 'pthread_mutex_lock'), (3, 'mmap64'), (4, 'started');
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER,
  callchainId INTEGER NOT NULL);
INSERT INTO OSRT_API VALUES (1000, 1000, 31, )sql" + n(gtid(42, 42)) +
                                                      R"sql(, 4, 0, NULL, 0),
  (2000, 5000, 27, )sql" + n(gtid(42, 42)) + R"sql(, 1, 4096, 0, 1),
  (2100, 2300, 27, )sql" + n(gtid(42, 42)) + R"sql(, 2, -1, 1, 2),
  (3000, 3500, 27, )sql" + n(gtid(42, 43)) + R"sql(, 3, 140737488355328, 0, 3),
  (4000, 4100, 27, NULL, 2, 0, 0, 4),
  (6000, 6000, 32, )sql" + n(gtid(42, 42)) + R"sql(, 4, 0, NULL, 0);
)sql");
  const Trace t = import_both(file);
  const OsCallTable& o = t.os_calls();
  ASSERT_EQ(o.size(), 3u);
  // Sorted by (track, start): thread 42's fread and the lock inside it, then thread 43's mmap64.
  EXPECT_EQ(t.str(o.name[0]), "fread");
  EXPECT_EQ(o.status_at(0), 4096);
  EXPECT_EQ(o.nesting_at(0), 0u);
  EXPECT_EQ(t.str(o.name[1]), "pthread_mutex_lock");
  EXPECT_EQ(o.start[1], 2100);
  EXPECT_EQ(o.end[1], 2300);
  EXPECT_EQ(o.status_at(1), -1);
  EXPECT_EQ(o.nesting_at(1), 1u);
  EXPECT_EQ(t.tracks()[o.track_at(1)].tid, 42u);
  EXPECT_EQ(t.str(o.name[2]), "mmap64");
  EXPECT_EQ(o.status_at(2), 140737488355328);  // a pointer: 64 bits kept
  EXPECT_EQ(t.tracks()[o.track_at(2)].tid, 43u);
  EXPECT_EQ(t.meta().stat("import.skipped.osrt_start_marks"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.osrt_finish_marks"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.os_call_without_thread"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.table.OSRT_API"), 0u);
  EXPECT_EQ(t.api_calls().size(), 0u);  // OS calls are no CUDA API calls
  EXPECT_EQ(t.meta().property("nsys.osrt_api"), "");

  // An export traced without --trace=osrt has no OSRT_API table: said so.
  const Trace none = import_both(
      make_db("no-osrt.sqlite", kStrings + "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"));
  EXPECT_EQ(none.os_calls().size(), 0u);
  EXPECT_EQ(none.meta().property("nsys.osrt_api"), "absent");
}

}  // namespace
}  // namespace gpuscope
