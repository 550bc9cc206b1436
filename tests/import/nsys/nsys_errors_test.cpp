// Files that are not usable Nsight Systems exports: corrupt, truncated,
// encrypted, other SQLite databases. Each is refused with the file and the
// problem, by the library (InputError) and by every command (exit 2, one line
// "gpuscope: error: <file>: <problem>", nothing written); none crashes.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "cli/run.h"
#include "export/sqlite_export.h"
#include "import/nsys/nsys_sqlite.h"
#include "import/nsys/nsys_test_db.h"
#include "import/open_trace.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

class NsysErrors : public testing::NsysTest {
 protected:
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }
  static std::string random_bytes(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  }
  // A small valid export of gpuscope's own, to damage.
  std::string good_export(const std::string& name) const {
    const std::string p = path(name);
    write_sqlite_trace(testing::every_table_trace(), p, SqliteExportOptions{.sync = false});
    return p;
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // The library refuses `file` with a message that contains `what`, both ways.
  static void expect_refused(const std::string& file, const std::string& what) {
    for (bool direct : {true, false}) {
      NsysImportOptions o;
      o.direct_read = direct;
      try {
        (void)import_nsys_sqlite(file, o);
        ADD_FAILURE() << file << " was accepted (direct " << direct << ")";
      } catch (const InputError& e) {
        EXPECT_EQ(e.file(), file);
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      }
    }
  }

  // Every command that reads a trace exits 2 with one line naming the file.
  void expect_cli_refuses(const std::string& file, const std::string& what) {
    if (!fs::exists(testing::gpuscope_binary())) GTEST_SKIP() << "gpuscope binary not built";
    const std::string out = path("out.gscope");
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"info", file}, {"report", file}, {"import", file, "-o", out}, {"export", file, "-o", path("x.json")}}) {
      const testing::RunResult r = testing::run_gpuscope(args, dir_);
      EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
      ASSERT_EQ(r.err_lines().size(), 1u) << args[0] << ": " << r.err;
      const std::string line = r.err_lines()[0];
      EXPECT_EQ(line.rfind("gpuscope: error: " + file + ": ", 0), 0u) << line;
      EXPECT_NE(line.find(what), std::string::npos) << line;
    }
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(path("x.json")));
  }
};

TEST_F(NsysErrors, EncryptedOrRandomBytes) {
  // An encrypted database (SQLCipher, SEE) has no readable header: random bytes.
  const std::string file = write("secret.sqlite", random_bytes(8192, 1));
  expect_refused(file, "not an SQLite database");
  expect_refused(file, "encrypted");
  EXPECT_THROW(open_trace(file), InputError);
  expect_cli_refuses(file, "encrypted");
}

TEST_F(NsysErrors, HeaderThenGarbage) {
  const std::string file = write("garbage.sqlite", std::string("SQLite format 3\0", 16) + random_bytes(8192, 2));
  expect_refused(file, "SQLite");
  expect_cli_refuses(file, "SQLite");
}

TEST_F(NsysErrors, TruncatedExport) {
  const std::string good = slurp(good_export("good.sqlite"));
  const std::string file = write("cut.sqlite", good.substr(0, good.size() / 2));
  expect_refused(file, "corrupt SQLite database");
  expect_cli_refuses(file, "corrupt SQLite database");
}

TEST_F(NsysErrors, DamagedPageOfATable) {
  const std::string p = good_export("damaged.sqlite");
  // The kernel table's root page: its type byte becomes one no b-tree page has.
  std::int64_t root = 0, page_size = 0;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'", -1, &st,
                       nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    root = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    page_size = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  std::string bytes = slurp(p);
  bytes[static_cast<std::size_t>((root - 1) * page_size)] = 0x42;
  const std::string file = write("damaged.sqlite", bytes);
  expect_refused(file, "corrupt SQLite database");
  expect_cli_refuses(file, "corrupt SQLite database");
}

TEST_F(NsysErrors, CellPointersPastThePage) {
  const std::string p = good_export("cells.sqlite");
  std::string bytes = slurp(p);
  // Every leaf page of every table (type 0x0d) gets a first cell pointer past its end.
  std::size_t page_size = (static_cast<unsigned char>(bytes[16]) << 8) | static_cast<unsigned char>(bytes[17]);
  if (page_size == 1) page_size = 65536;
  for (std::size_t at = page_size; at + page_size <= bytes.size(); at += page_size)
    if (bytes[at] == 0x0d && bytes[at + 3] | bytes[at + 4]) bytes[at + 8] = bytes[at + 9] = static_cast<char>(0xff);
  const std::string file = write("cells.sqlite", bytes);
  expect_refused(file, "corrupt");
}

TEST_F(NsysErrors, SqliteButNotAnExport) {
  const std::string file = make_db("other.sqlite",
                                   "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
                                   "INSERT INTO customers VALUES (1, 'x');");
  expect_refused(file, "not an Nsight Systems export");
  expect_cli_refuses(file, "not an Nsight Systems export");
  // StringIds alone is not enough either.
  const std::string strings = make_db("strings.sqlite", "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);");
  expect_refused(strings, "not an Nsight Systems export");
}

TEST_F(NsysErrors, DatabaseWithoutTables) {
  const std::string file = make_db("empty.sqlite", "CREATE TABLE t (x); DROP TABLE t;");
  expect_refused(file, "without tables");
  const std::string zero = write("zero.sqlite", "");
  expect_refused(zero, "empty file");
  expect_cli_refuses(zero, "empty file");
}

TEST_F(NsysErrors, MissingFile) { expect_refused(path("nope.sqlite"), "cannot open"); }

// A database in WAL mode (its latest pages may live in the -wal file) is read
// through SQLite only, which sees them.
TEST_F(NsysErrors, WalModeDatabaseIsRead) {
  const std::string file = make_db("wal.sqlite", R"sql(
PRAGMA journal_mode = WAL;
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'k');
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 1, 0, 1), (3, 4, 0, 7, 2, 0, 1);
)sql");
  EXPECT_EQ(import_nsys_sqlite(file).kernels().size(), 2u);
}

}  // namespace
}  // namespace gpuscope
