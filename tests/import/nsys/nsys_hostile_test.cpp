// Hostile Nsight Systems exports: values of the wrong type or range in the
// columns the importer reads are counted under import.coerced.<table>.<column>
// (or the row refused, for a time that is not an integer), a view in place of
// a table is refused, a table the others show the export had is a stated
// loss, a file cut inside its pages is INCOMPLETE, and a table too large for
// the memory budget is refused before it is read. Both readers (the direct
// page reader and SQLite's) give the same.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/run.h"
#include "export/sqlite_export.h"
#include "import/nsys/nsys_sqlite.h"
#include "import/nsys/nsys_test_db.h"
#include "support/test_traces.h"
#include "trace/budget.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSchema = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel_v7000'), (3, 'other_kernel');
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, cbid INTEGER);
)sql";

constexpr const char* kKernelTable = R"sql(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER,
  gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
)sql";

class NsysHostile : public testing::NsysTest {
 protected:
  // Both readers; the same trace (rows and stats) from each.
  static std::vector<Trace> both(const std::string& file) {
    std::vector<Trace> out;
    for (bool direct : {true, false}) {
      NsysImportOptions o;
      o.direct_read = direct;
      out.push_back(import_nsys_sqlite(file, o));
    }
    EXPECT_EQ(out[0].meta().stats, out[1].meta().stats);
    EXPECT_EQ(out[0].kernels().size(), out[1].kernels().size());
    return out;
  }
};

TEST_F(NsysHostile, EveryCoercedValueIsCountedByTableAndColumn) {
  const std::string file = make_db("coerced.sqlite", std::string(kSchema) + kKernelTable + R"sql(
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (100, 200, 0, 7, 1, 0, 1, 1, 1, 1, 1, 128, 1, 1),                      -- clean
  ('abc', 874000000, 0, 7, 2, 0, 1, 1, 1, 1, 1, 128, 1, 1),              -- a time that is text: refused
  (300, 400, 'x', 7, 3, 0, 1, 1, 1, 1, 1, 128, 1, 1),                    -- device 'x'
  (500, 600, 0, 'y', 4, 0, 1, 1, -5, 1, 1, 128, 1, 1),                   -- stream 'y', gridX -5
  (700, 800, 0, 7, 5, 0, 1, 1, 9223372036854775807, 1, 1, 128, 1, 1),    -- gridX 2^63-1
  (900, 1000, 0, 7, 6, 0, NULL, NULL, 1, 1, 1, 128, 1, 1),               -- no name
  (1100, 1200, 0, 7, 1099511627776, 0, 3, 3, 1, 1, 1, 128, 1, 1),        -- correlation 2^40
  (1300, 1400, 0, 7, 8, 0, 1, 1, 1.5, 1, 1, 128, 1, 1);                  -- gridX a real
)sql");
  for (const Trace& t : both(file)) {
    EXPECT_EQ(t.kernels().size(), 7u);
    EXPECT_EQ(t.meta().stat("import.skipped.kernel_invalid_time"), 1u);
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.deviceId"), 1u);
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.streamId"), 1u);
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.gridX"), 3u);
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.demangledName"), 1u);
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.correlationId"), 1u);
    // The kernel without a name is not given another kernel's.
    std::size_t unnamed = 0;
    for (RowIndex i = 0; i < t.kernels().size(); ++i) unnamed += t.str(t.kernels().name[i]) == "<unnamed kernel>";
    EXPECT_EQ(unnamed, 1u);
  }
  // Every command that reads the file says so.
  if (!fs::exists(testing::gpuscope_binary())) GTEST_SKIP() << "gpuscope binary not built";
  const testing::RunResult info = testing::run_gpuscope({"info", file}, dir_);
  EXPECT_NE(info.out.find("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.gridX"), std::string::npos) << info.out;
  const testing::RunResult report = testing::run_gpuscope({"report", file}, dir_);
  EXPECT_NE(report.out.find("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.gridX = 3"), std::string::npos) << report.out;
  const testing::RunResult import = testing::run_gpuscope({"import", file, "-o", path("x.gscope")}, dir_);
  EXPECT_NE(import.err.find("coerced CUPTI_ACTIVITY_KIND_KERNEL.gridX: 3"), std::string::npos) << import.err;
  const testing::RunResult exported = testing::run_gpuscope({"export", file, "-o", path("x.json")}, dir_);
  EXPECT_EQ(exported.status, 0) << exported.err;
  EXPECT_NE(exported.err.find("import.skipped.kernel_invalid_time 1"), std::string::npos) << exported.err;
  EXPECT_NE(exported.err.find("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.deviceId 1"), std::string::npos)
      << exported.err;
  const testing::RunResult stats = testing::run_gpuscope({"stats", file}, dir_);
  EXPECT_EQ(stats.status, 0) << stats.err;
  EXPECT_NE(stats.err.find("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.deviceId 1"), std::string::npos) << stats.err;
}

// gpuscope's own SQLite export, edited after it was written: its reader counts the same way.
TEST_F(NsysHostile, CoercedValuesOfAGpuscopeExportAreCountedToo) {
  const std::string file = path("own.sqlite");
  write_sqlite_trace(testing::every_table_trace(), file, SqliteExportOptions{.sync = false});
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = -5, correlationId = 'x' "
                         "WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);"
                         "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET cbid = 1099511627776 "
                         "WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  for (const Trace& t : both(file)) {
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.gridX"), 1u);
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_KERNEL.correlationId"), 1u);
    EXPECT_EQ(t.meta().stat("import.coerced.CUPTI_ACTIVITY_KIND_RUNTIME.cbid"), 1u);
  }
}

TEST_F(NsysHostile, AViewInPlaceOfATableIsRefused) {
  const std::string file = make_db("view.sqlite", std::string(kSchema) + R"sql(
CREATE TABLE hidden (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, demangledName INTEGER);
INSERT INTO hidden VALUES (1, 2, 0, 7, 1);
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM hidden;
)sql");
  for (bool direct : {true, false}) {
    NsysImportOptions o;
    o.direct_read = direct;
    try {
      (void)import_nsys_sqlite(file, o);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(e.reason().find("CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"), std::string::npos) << e.reason();
    }
  }
}

TEST_F(NsysHostile, ADroppedTableIsAStatedLoss) {
  const std::string no_kernels = make_db("no-kernels.sqlite", std::string(kSchema) + R"sql(
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 0, 4294967297, 1, 2, 0, 211), (30, 40, 0, 4294967297, 2, 2, 0, 211);
)sql");
  for (const Trace& t : both(no_kernels))
    EXPECT_EQ(t.meta().stat("import.missing_table.CUPTI_ACTIVITY_KIND_KERNEL"), 2u);
  const std::string no_runtime = make_db("no-runtime.sqlite", std::string(R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'gemm_kernel');
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
)sql") + kKernelTable + R"sql(
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 7, 1, 0, 1, 1, 1, 1, 1, 128, 1, 1),
                                              (300, 400, 0, 7, 2, 0, 1, 1, 1, 1, 1, 128, 1, 1);
)sql");
  for (const Trace& t : both(no_runtime))
    EXPECT_EQ(t.meta().stat("import.missing_table.CUPTI_ACTIVITY_KIND_RUNTIME"), 2u);
}

// Cut inside its last page: SQLite reads the part that is there without a
// word; the header says how long the file was.
TEST_F(NsysHostile, AFileCutInsideAPageIsIncomplete) {
  std::string sql = std::string(kSchema) + kKernelTable + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ";
  for (int i = 0; i < 200; ++i)
    sql += std::string(i ? "," : "") + "(" + std::to_string(i * 100) + "," + std::to_string(i * 100 + 50) + ",0,7," +
           std::to_string(i + 1) + ",0,1,1,1,1,1,128,1,1)";
  const std::string whole = make_db("whole.sqlite", sql + ";", 512);
  std::string bytes;
  {
    std::ifstream in(whole, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string cut = path("cut.sqlite");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 200);
  std::vector<Trace> traces;
  try {
    traces = both(cut);
  } catch (const InputError& e) {
    GTEST_SKIP() << "this SQLite refuses the cut file itself: " << e.what();
  }
  for (const Trace& t : traces) {
    EXPECT_TRUE(t.meta().damage.truncated);
    EXPECT_EQ(t.meta().damage.file_bytes, bytes.size() - 200);
    ASSERT_FALSE(t.meta().damage.problems.empty());
    EXPECT_NE(t.meta().damage.problems[0].find("truncated: the database header says"), std::string::npos);
  }
  if (!fs::exists(testing::gpuscope_binary())) GTEST_SKIP() << "gpuscope binary not built";
  const testing::RunResult info = testing::run_gpuscope({"info", cut}, dir_);
  EXPECT_NE(info.out.find("INCOMPLETE"), std::string::npos) << info.out;
}

TEST_F(NsysHostile, ATableLargerThanTheBudgetIsRefusedBeforeItIsRead) {
  std::string sql = std::string(kSchema) + kKernelTable + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ";
  for (int i = 0; i < 1000; ++i)
    sql += std::string(i ? "," : "") + "(" + std::to_string(i * 100) + "," + std::to_string(i * 100 + 50) + ",0,7," +
           std::to_string(i + 1) + ",0,1,1,1,1,1,128,1,1)";
  const std::string file = make_db("big.sqlite", sql + ";");
  const ScopedMemoryBudget budget(32 << 10);
  try {
    (void)import_nsys_sqlite(file);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(e.reason().find("table CUPTI_ACTIVITY_KIND_KERNEL holds 1000 rows"), std::string::npos) << e.reason();
    EXPECT_NE(e.reason().find("over the memory budget of 32 KiB"), std::string::npos) << e.reason();
  }
}

}  // namespace
}  // namespace gpuscope
