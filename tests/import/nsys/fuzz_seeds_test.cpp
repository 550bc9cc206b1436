// The seed corpus of tests/fuzz/fuzz_nsys_sqlite: small valid databases of
// each shape, with 512-byte pages (so that a few rows make a tree of several
// levels). With GPUSCOPE_WRITE_FUZZ_SEEDS=1 this test (re)writes them; it
// always checks that the committed seeds import, so a change that breaks
// them fails here.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "export/sqlite_export.h"
#include "import/nsys/nsys_sqlite.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

void run_sql(const std::string& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string g(std::int64_t pid, std::int64_t tid) {
  return std::to_string((std::int64_t{1} << 48) | (pid << 24) | tid);
}

void write_seeds(const std::string& dir) {
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(dir)) fs::remove(e.path());
  const std::string strings =
      "PRAGMA page_size = 512; CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO StringIds VALUES (1, 'void k<int>(int)'), (2, 'k'), (3, 'cudaLaunchKernel_v7000'),"
      "(4, 'cuCtxSynchronize'), (5, 'main'), (6, '" +
      std::string(700, 'x') + "');";
  // The 2024 shape: eventClass, META_DATA_EXPORT, ENUM tables, syncs, streams.
  std::string s24 = strings + R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_SCHEMA_VERSION', '3.13.2');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1696392839587175550, '2023-10-04T04:13:59', '');
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', ''), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', '');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, totalMemory INTEGER, clockRate INTEGER,
  smCount INTEGER, uuid TEXT, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA A100', 1000, 1410000000, 108, 'u', 0, 8, 0);
CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER, hwId INTEGER, vmId INTEGER, processId INTEGER,
  contextId INTEGER, priority INTEGER, flag INTEGER);
INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (7, 0, 1, 9, 1, 0, 3);
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (5, 0, )sql" +
                    g(9, 9) + R"sql();
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,
  mangledName INTEGER, registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
  blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER,
  dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER, eventId INTEGER);
CREATE TABLE OSRT_API (start INTEGER, end INTEGER, globalTid INTEGER, nameId INTEGER);
INSERT INTO OSRT_API VALUES (1, 2, )sql" +
                    g(9, 9) + R"sql(, 5);
)sql";
  for (int i = 0; i < 40; ++i) {
    const std::string t = std::to_string(1000 * i), c = std::to_string(2 * i + 1);
    s24 += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + t + ", " + t + " + 50, " + (i % 9 ? "0" : "1") + ", " +
           g(9, 9) + ", " + c + ", " + (i % 9 ? "3" : "4") + ", 0, NULL);";
    s24 += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + t + " + 60, " + t + " + 400, 0, 1, 7, " + c + ", " +
           g(9, 0) + ", 1, 2, NULL, 32, 64, 1, 1, 256, 1, 1, 0, " + std::to_string(i) + ", NULL);";
    if (i % 10 == 0)
      s24 += "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (" + t + " + 500, " + t + " + 600, 0, 1, 7, " + c + ", " +
             g(9, 0) + ", 4096, 1, 0, 2);";
    if (i % 10 == 9)
      s24 += "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (" + t + " + 10, " + t +
             " + 40, 0, 1, "
             "4294967295, " +
             c + ", " + g(9, 0) + ", 1, 4294967295);";
  }
  run_sql(dir + "/nsys2024-like.sqlite", s24);
  // The 2022 shape: EXPORT_META_DATA, backtrace copies, NVTX with a domain, a long string (overflow pages).
  const std::string s22 = strings + R"sql(
CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_VERSION', '2022.2.1.31');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,
  mangledName INTEGER, registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
  blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 1, 7, 1, )sql" +
                          g(9, 0) + R"sql(, 6, 2, NULL, 26, 2, 1, 1, 512, 1, 1, 0, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER, name INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (50, 90, 0, )sql" +
                          g(9, 9) + R"sql(, 1, 3, 0, NULL, NULL),
  (50, 90, 67, )sql" + g(9, 9) +
                          R"sql(, 1, 3, 0, 1, NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (1, 75, 'MPI', )sql" +
                          g(9, 9) + R"sql(, 1);
INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid) VALUES (2, 39, 'MPI Rank 0', )sql" +
                          g(9, 9) + R"sql();
INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) VALUES (3, 300, 59, 5, )sql" +
                          g(9, 9) + R"sql(, 1);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, color, int64Value) VALUES (40, 60, 59, 'saxpy', )sql" +
                          g(9, 9) + R"sql(, 4278190335, 3);
INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid) VALUES (70, 34, 'mark', )sql" +
                          g(9, 9) + R"sql();
)sql";
  run_sql(dir + "/nsys2022-like.sqlite", s22);
  // gpuscope's own export of a trace with one of everything, repacked into 512-byte pages.
  write_sqlite_trace(testing::every_table_trace(), dir + "/gpuscope-export.sqlite", SqliteExportOptions{.sync = false});
  run_sql(dir + "/gpuscope-export.sqlite", "PRAGMA page_size = 512; VACUUM;");
  // Hostile values (docs/robustness.md): text, reals and out-of-range numbers
  // in integer columns, a NULL name, a string id far past the table's rows.
  const std::string hostile = R"sql(
PRAGMA page_size = 512;
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel_v7000'), (16000000, 'far');
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, cbid INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 0, 4294967297, 1, 2, 0, 211),
  ('x', 40, 'y', 4294967297, 99999999999, 2, 0, 211);
)sql";
  run_sql(dir + "/coerced.sqlite", hostile + R"sql(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER,
  gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 7, 1, 0, 1, 1, 1, 1, 1, 128, 1, 1),
  ('abc', 874000000, 0, 7, 2, 0, 1, 1, 1, 1, 1, 128, 1, 1), (300, 400, 'x', 7, 3, 0, 1, 1, 1, 1, 1, 128, 1, 1),
  (500, 600, 0, 'y', 4, 0, 1, 1, -5, 1, 1, 128, 1, 1), (700, 800, 0, 7, 5, 0, 1, 1, 9223372036854775807, 1, 1, 128, 1, 1),
  (900, 1000, 0, 7, 6, 0, NULL, NULL, 1, 1, 1, 128, 1, 1),
  (1100, 1200, 0, 7, 1099511627776, 0, 16000000, 3, 1.5, 1, 1, 128, 1, 1);
)sql");
  // A view in place of the kernel table: refused.
  run_sql(dir + "/refused-view.sqlite", hostile + R"sql(
CREATE TABLE hidden (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, demangledName INTEGER);
INSERT INTO hidden VALUES (1, 2, 0, 7, 1);
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM hidden;
)sql");
}

TEST(NsysFuzzSeeds, CommittedSeedsImport) {
  const std::string dir = GPUSCOPE_NSYS_FUZZ_CORPUS_DIR;
  if (const char* w = std::getenv("GPUSCOPE_WRITE_FUZZ_SEEDS"); w && std::string(w) == "1") write_seeds(dir);
  int seeds = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    SCOPED_TRACE(e.path().string());
    EXPECT_LE(fs::file_size(e.path()), 24u * 1024) << "keep seeds small";
    ++seeds;
    if (e.path().filename().string().starts_with("refused-")) {
      EXPECT_THROW(import_nsys_sqlite(e.path().string()), InputError);
      continue;
    }
    Trace t;
    EXPECT_NO_THROW(t = import_nsys_sqlite(e.path().string()));
    EXPECT_GT(t.tables().rows(TableId::kernels), 0u);
  }
  EXPECT_GE(seeds, 3);
}

}  // namespace
}  // namespace gpuscope
