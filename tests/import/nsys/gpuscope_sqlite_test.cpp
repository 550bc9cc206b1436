// gpuscope's own SQLite export (src/export/sqlite_export.cpp) read back:
// every table of the trace that was exported, compared column by column
// (store/trace_equal.h), for a trace with one of everything, random traces,
// synthetic traces, the real Chrome/Kineto traces and the real nsys exports.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "export/sqlite_export.h"
#include "import/chrome_json.h"
#include "import/nsys/nsys_sqlite.h"
#include "import/nsys/nsys_test_db.h"
#include "import/open_trace.h"
#include "import/synthetic.h"
#include "store/trace_equal.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

class GpuscopeSqlite : public testing::NsysTest {
 protected:
  // Exports `t` to `name`, then runs `sql` on the file (an export edited
  // into what another writer, or an older one, would have written).
  std::string edited_export(const Trace& t, const std::string& name, const std::string& sql) {
    const std::string file = path(name);
    write_sqlite_trace(t, file, SqliteExportOptions{.sync = false});
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
    sqlite3_free(err);
    sqlite3_close(db);
    return file;
  }
  // Exports `t`, reads the file back both ways, and compares with `t`.
  void round_trip(const Trace& t, const std::string& name = "t.sqlite") {
    const std::string file = path(name);
    write_sqlite_trace(t, file, SqliteExportOptions{.sync = false});
    EXPECT_EQ(detect_trace_file(file), TraceFileKind::nsys_sqlite);
    {
      SCOPED_TRACE("direct page reader");
      testing::expect_traces_equal(t, import_nsys_sqlite(file));
    }
    {
      SCOPED_TRACE("SQLite only");
      testing::expect_traces_equal(t, testing::import_slow(file));
    }
  }
};

TEST_F(GpuscopeSqlite, EveryTableRoundTrips) { round_trip(testing::every_table_trace()); }

TEST_F(GpuscopeSqlite, HardwareMetricSeriesRoundTrip) { round_trip(testing::hardware_metrics_trace()); }

// The GPU metric tables alone, as an nsys export has them (gpuscope's own
// tables dropped, so the file reads as nsys'): every hardware series comes
// back with its name, unit, device and exact samples (NaN aside: the table
// has no place for it); the series of no device is not among them.
TEST_F(GpuscopeSqlite, GpuMetricTablesReadAsAnNsysExport) {
  const Trace t = testing::hardware_metrics_trace();
  std::string drop;
  for (const char* table :
       {"GPUSCOPE_META", "GPUSCOPE_STREAMS", "GPUSCOPE_TRACKS", "GPUSCOPE_OTHER_API_CALLS", "GPUSCOPE_ANNOTATIONS",
        "GPUSCOPE_COUNTER_SERIES", "GPUSCOPE_COUNTERS", "GPUSCOPE_MEMORY_EVENTS", "ENUM_GPUSCOPE_KERNEL_CATEGORY"})
    drop += std::string("DROP TABLE ") + table + ";";
  const std::string file = edited_export(t, "nsys-shaped.sqlite", drop);
  auto check = [&](const Trace& back) {
    EXPECT_EQ(back.meta().source, TraceSource::nsys_sqlite);
    std::size_t series = 0;
    for (std::uint32_t s = 0; s < t.counter_series().size(); ++s) {
      const CounterSeries& cs = t.counter_series()[s];
      const std::uint32_t b = back.find_counter_series(cs.name, cs.device);
      if (!series_name::is_hardware_metric(cs)) {
        EXPECT_EQ(b, kNoSeries) << cs.name;
        continue;
      }
      ASSERT_NE(b, kNoSeries) << cs.name << " of GPU " << cs.device;
      EXPECT_EQ(back.counter_series()[b], cs);
      std::vector<std::pair<TimeNs, double>> want, got;
      for (RowIndex i = t.rows_of(TableId::counters, s).begin; i < t.rows_of(TableId::counters, s).end; ++i)
        if (!std::isnan(t.counters().value[i])) want.emplace_back(t.counters().time[i], t.counters().value[i]);
      for (RowIndex i = back.rows_of(TableId::counters, b).begin; i < back.rows_of(TableId::counters, b).end; ++i)
        got.emplace_back(back.counters().time[i], back.counters().value[i]);
      EXPECT_EQ(got, want) << cs.name;
      ++series;
    }
    EXPECT_EQ(series, 12u);
    EXPECT_EQ(back.counter_series().size(), 12u);
  };
  check(import_nsys_sqlite(file));
  check(testing::import_slow(file));
}

// Random traces: every stored column, sparse columns present and absent, ids
// and sizes up to their types' maxima, tids that do not fit nsys' 24 bits.
// (Extreme times are left out: rows of one track with the same start and end
// that the export splits over two tables can read back in another order.)
TEST_F(GpuscopeSqlite, RandomTracesRoundTrip) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::RandomTraceOptions o;
    o.extreme_values = false;
    o.sparse_columns = seed % 3 != 0;
    round_trip(testing::random_trace(seed, o));
    if (HasFatalFailure()) return;
  }
}

TEST_F(GpuscopeSqlite, SyntheticTracesRoundTrip) {
  SyntheticOptions o;
  o.kernels = 20'000;
  round_trip(make_synthetic_trace(o), "clean.sqlite");
  SyntheticOptions r = SyntheticOptions::report_pathologies();
  r.kernels = 5'000;
  r.gpus = 2;
  round_trip(make_synthetic_trace(r), "report.sqlite");
}

// Real traces of other tools, imported, exported, read back.
TEST_F(GpuscopeSqlite, RealTracesRoundTrip) {
  std::vector<std::string> files = testing::real_trace_files();
  files.insert(files.end(), testing::real_nsys_files().begin(), testing::real_nsys_files().end());
  int n = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const Trace t = open_trace(testing::real_trace(file));
    round_trip(t, "real-" + std::to_string(n++) + ".sqlite");
  }
}

// The source survives (a synthetic trace stays marked synthetic), and the
// writer's own StringIds rows (kernel short names) do not become strings.
TEST_F(GpuscopeSqlite, SourceAndMetaSurvive) {
  SyntheticOptions o;
  o.kernels = 1'000;
  const Trace t = make_synthetic_trace(o);
  const std::string file = path("s.sqlite");
  write_sqlite_trace(t, file, SqliteExportOptions{.sync = false});
  const Trace back = import_nsys_sqlite(file);
  EXPECT_EQ(back.meta().source, TraceSource::synthetic);
  EXPECT_EQ(back.meta().producer, t.meta().producer);
  EXPECT_EQ(back.strings().size(), t.strings().size());  // the writer's extra StringIds rows are not the trace's
}

// Exports written before GPUSCOPE_TRACKS and GPUSCOPE_META.string_count
// existed: tracks come from GPUSCOPE_STREAMS, ThreadNames and the rows.
TEST_F(GpuscopeSqlite, OlderExportWithoutTrackTable) {
  const Trace t = testing::every_table_trace();
  const std::string file = edited_export(
      t, "old.sqlite", "DROP TABLE GPUSCOPE_TRACKS; DELETE FROM GPUSCOPE_META WHERE key = 'string_count';");
  const Trace back = import_nsys_sqlite(file);
  EXPECT_EQ(back.kernels().size(), t.kernels().size());
  EXPECT_EQ(back.api_calls().size(), t.api_calls().size());
  EXPECT_EQ(back.ranges().size(), t.ranges().size());
  ASSERT_EQ(back.tracks().size(), t.tracks().size());
  for (std::size_t i = 0; i < t.tracks().size(); ++i) {
    EXPECT_EQ(back.tracks()[i].kind, t.tracks()[i].kind);
    EXPECT_EQ(back.tracks()[i].name, t.tracks()[i].name) << i;
  }
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    EXPECT_EQ(back.str(back.kernels().name[i]), t.str(t.kernels().name[i]));
}

// The big tables read in parts, each written in place: rows a part skips
// (the gaps closed afterwards), sparse values in one part only, and rowids
// with holes, read the same on 1 to 4 threads as through SQLite alone.
TEST_F(GpuscopeSqlite, TablesReadInPartsAgreeWithSqlite) {
  SyntheticOptions o;
  o.kernels = 40'000;
  const Trace t = make_synthetic_trace(o);
  const std::string file =
      edited_export(t, "parts.sqlite",
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start - 1 WHERE rowid % 997 = 3;"
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphId = 7, graphNodeId = rowid "
                    "  WHERE rowid BETWEEN 31000 AND 31100;"
                    "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid BETWEEN 12000 AND 12500;"
                    "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = start - 5 WHERE rowid % 1009 = 5;"
                    "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 2 WHERE rowid BETWEEN 30000 AND 30010;");
  const Trace slow = testing::import_slow(file);
  ASSERT_LT(slow.kernels().size(), t.kernels().size() - 500);
  ASSERT_FALSE(slow.kernels().graph_id.empty());
  ASSERT_FALSE(slow.api_calls().status.empty());
  EXPECT_GT(slow.meta().stat("import.skipped.kernel_negative_duration"), 30u);
  EXPECT_GT(slow.meta().stat("import.skipped.api_call_negative_duration"), 30u);
  for (unsigned threads = 1; threads <= 4; ++threads) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    NsysImportOptions opt;
    opt.threads = threads;
    testing::expect_traces_equal(slow, import_nsys_sqlite(file, opt));
  }
}

// API call tables that only SQLite can read (a column named "oid" makes a
// table's records other than its columns), several of them: their parts run
// on different threads and take turns on the one connection, and the trace
// is the one SQLite alone reads.
TEST_F(GpuscopeSqlite, SeveralTablesThroughSqliteOnThreads) {
  SyntheticOptions o;
  o.kernels = 20'000;
  const Trace t = make_synthetic_trace(o);
  const std::string file =
      edited_export(t, "sqlite-parts.sqlite",
                    "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                    "  WHERE rowid % 3 = 1;"
                    "INSERT INTO GPUSCOPE_OTHER_API_CALLS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                    "  WHERE rowid % 3 = 2;"
                    "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid % 3 != 0;"
                    "ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME ADD COLUMN oid INTEGER;"
                    "ALTER TABLE CUPTI_ACTIVITY_KIND_DRIVER ADD COLUMN oid INTEGER;"
                    "ALTER TABLE GPUSCOPE_OTHER_API_CALLS ADD COLUMN oid INTEGER;");
  const Trace slow = testing::import_slow(file);
  ASSERT_EQ(slow.api_calls().size(), t.api_calls().size());
  for (int round = 0; round < 5; ++round)
    for (unsigned threads = 2; threads <= 4; ++threads) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      NsysImportOptions opt;
      opt.threads = threads;
      testing::expect_traces_equal(slow, import_nsys_sqlite(file, opt));
    }
}

}  // namespace
}  // namespace gpuscope
