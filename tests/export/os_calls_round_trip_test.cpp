// OS runtime calls (the os_calls table) through every file gpuscope writes:
// the .gscope file, the SQLite export (Nsight Systems' OSRT_API, read back by
// gpuscope and queryable with nsys' own osrt_sum SQL) and the Chrome trace
// (complete events of category "os_runtime"), on the CloverLeaf export's
// 1,828 calls.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "export/chrome_trace.h"
#include "export/sqlite_export.h"
#include "import/open_trace.h"
#include "store/gscope.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

using Call = std::tuple<TimeNs, TimeNs, std::uint32_t, std::uint32_t, std::string, std::int64_t, std::uint16_t>;

// Every call as (start, end, pid, tid, name, return value, nesting), in the table's order.
std::vector<Call> calls_of(const Trace& t) {
  const OsCallTable& o = t.os_calls();
  std::vector<Call> out;
  for (std::size_t i = 0; i < o.size(); ++i) {
    const Track& tr = t.tracks()[o.track_at(i)];
    out.emplace_back(o.start[i], o.end[i], tr.pid, tr.tid, std::string(t.str(o.name[i])), o.status_at(i),
                     o.nesting_at(i));
  }
  return out;
}

class OsCallsRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-osrt-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  const Trace& cloverleaf() {
    static const Trace t = open_trace(testing::real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite"));
    return t;
  }
  fs::path dir_;
};

TEST_F(OsCallsRoundTrip, GscopeKeepsEveryCall) {
  const std::vector<Call> before = calls_of(cloverleaf());
  ASSERT_EQ(before.size(), 1828u);
  const std::string file = (dir_ / "t.gscope").string();
  write_gscope(cloverleaf(), file);
  const Trace back = read_gscope(file);
  EXPECT_EQ(calls_of(back), before);
  EXPECT_EQ(back.api_calls().size(), cloverleaf().api_calls().size());
}

TEST_F(OsCallsRoundTrip, SqliteExportIsNsysOsrtApiAndReadsBack) {
  const std::string file = (dir_ / "t.sqlite").string();
  write_sqlite_trace(cloverleaf(), file);
  EXPECT_EQ(calls_of(open_trace(file)), calls_of(cloverleaf()));
  // nsys' osrt_sum groups OSRT_API rows of eventClass 27 by nameId: the export answers it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT count(*), sum(end - start), (SELECT count(*) FROM OSRT_API o JOIN StringIds s "
                               "ON s.id = o.nameId WHERE s.value = 'poll') FROM OSRT_API WHERE eventClass = 27",
                               -1, &st, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), 1828);
  EXPECT_EQ(sqlite3_column_int64(st, 1), 855689751);  // as in the nsys export
  EXPECT_EQ(sqlite3_column_int64(st, 2), 18);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(OsCallsRoundTrip, ChromeExportHasThemAsOsRuntimeEvents) {
  const std::string json = chrome_trace_json(cloverleaf());
  std::size_t n = 0, polls = 0;
  for (std::size_t at = json.find("\"cat\":\"os_runtime\""); at != std::string::npos;
       at = json.find("\"cat\":\"os_runtime\"", at + 1)) {
    ++n;
    const std::size_t end = json.find('}', at);
    polls += json.substr(at, end - at).find("\"name\":\"poll\"") != std::string::npos;
  }
  EXPECT_EQ(n, 1828u);
  EXPECT_EQ(polls, 18u);
  EXPECT_NE(json.find("\"return_value\":0"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope
