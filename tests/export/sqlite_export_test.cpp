// SQLite export: query the database back with SQLite and compare with the trace.
#include "export/sqlite_export.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "import/nsys/nsys_sqlite.h"
#include "import/synthetic.h"
#include "support/test_traces.h"
#include "trace/builder.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

// Runs a query and returns its rows as text ("NULL" for NULL).
class Query {
 public:
  explicit Query(const fs::path& file) {
    EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  ~Query() { sqlite3_close(db_); }
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db_);
    std::vector<std::vector<std::string>> out;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* text = sqlite3_column_text(st, c);
        row.push_back(text ? reinterpret_cast<const char*>(text) : "NULL");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return out;
  }
  std::string one(const std::string& sql) {
    const auto r = rows(sql);
    EXPECT_EQ(r.size(), 1u) << sql;
    return r.empty() || r[0].empty() ? "" : r[0][0];
  }

 private:
  sqlite3* db_ = nullptr;
};

class SqliteExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-sqlite-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SqliteExport, EveryTableIsQueryableAndExact) {
  const Trace t = testing::every_table_trace();
  const fs::path file = dir_ / "t.sqlite";
  const SqliteExportStats s = write_sqlite_trace(t, file.string());
  EXPECT_GT(s.rows, 0u);
  EXPECT_EQ(s.file_bytes, fs::file_size(file));
  Query q(file);

  EXPECT_EQ(q.one("SELECT value FROM GPUSCOPE_META WHERE key = 'source'"), "cupti");
  EXPECT_EQ(q.one("SELECT value FROM GPUSCOPE_META WHERE key = 'stat.capture.dropped_records'"), "12");
  EXPECT_EQ(q.one("SELECT value FROM GPUSCOPE_META WHERE key = 'property.key'"), "value\twith tab");

  // Kernels: every one, exact times, names through StringIds, nsys-style ids.
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), std::to_string(t.kernels().size()));
  const auto first = q.rows(
      "SELECT k.start, k.end, k.streamId, k.correlationId, d.value, s.value, m.value, k.gridX, k.blockX, "
      "k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory, k.globalPid >> 24, e.name "
      "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = k.demangledName "
      "JOIN StringIds s ON s.id = k.shortName LEFT JOIN StringIds m ON m.id = k.mangledName "
      "JOIN ENUM_GPUSCOPE_KERNEL_CATEGORY e ON e.id = k.category WHERE k.correlationId = 1");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0][0], std::to_string(testing::kT0 + 5'001));
  EXPECT_EQ(first[0][1], std::to_string(testing::kT0 + 105'777));
  EXPECT_EQ(first[0][2], "7");
  EXPECT_EQ(first[0][4], std::string(t.str(t.kernels().name[0])));  // raw bytes, invalid UTF-8 included
  EXPECT_EQ(first[0][5], "kernel");
  EXPECT_EQ(first[0][6], "_Z6kernelIJEEvi");
  EXPECT_EQ(first[0][7], "200");
  EXPECT_EQ(first[0][8], "256");
  EXPECT_EQ(first[0][9], "64");
  EXPECT_EQ(first[0][10], "1024");
  EXPECT_EQ(first[0][11], "4096");
  EXPECT_EQ(first[0][12], "1234");  // launched by pid 1234
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId = 5"), "2");

  // The launch of each kernel through correlationId, as nsys users join them.
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                  "ON r.correlationId = k.correlationId"),
            "3");  // kernels 1 and the two graph kernels (6); 4 was a driver launch, 999 has none
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER"), "1");
  EXPECT_EQ(q.one("SELECT returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 5"), "700");
  EXPECT_EQ(q.one("SELECT (globalTid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 1"),
            "1234");
  EXPECT_EQ(q.one("SELECT globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 1"), "1240");

  // Copies with CUPTI's enum values, and the enum tables to name them.
  EXPECT_EQ(q.one("SELECT o.label || ' ' || s.label || '->' || d.label || ' ' || c.bytes FROM "
                  "CUPTI_ACTIVITY_KIND_MEMCPY c JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = c.copyKind "
                  "JOIN ENUM_CUDA_MEM_KIND s ON s.id = c.srcKind JOIN ENUM_CUDA_MEM_KIND d ON d.id = c.dstKind"),
            "HtoD pageable->device 1000000");
  EXPECT_EQ(q.one("SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMSET"), "4096");

  // Syncs: NULL where there is no device/stream/event.
  const auto syncs = q.rows(
      "SELECT y.label, s.deviceId, s.streamId, s.eventId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s "
      "JOIN ENUM_CUPTI_SYNC_TYPE y ON y.id = s.syncType ORDER BY s.start");
  ASSERT_EQ(syncs.size(), 3u);
  EXPECT_EQ(syncs[0], (std::vector<std::string>{"stream", "0", "7", "NULL"}));
  EXPECT_EQ(syncs[1], (std::vector<std::string>{"context", "0", "NULL", "NULL"}));
  EXPECT_EQ(syncs[2], (std::vector<std::string>{"event", "NULL", "NULL", "3"}));

  // NVTX: the push/pop range and the mark (no end); annotations apart.
  const auto nvtx = q.rows(
      "SELECT n.text, n.eventType, n.end, n.color, n.int64Value, d.value FROM NVTX_EVENTS n "
      "LEFT JOIN StringIds d ON d.id = n.domainId ORDER BY n.start");
  ASSERT_EQ(nvtx.size(), 2u);
  EXPECT_EQ(nvtx[0][0], "step 0");
  EXPECT_EQ(nvtx[0][1], "59");
  EXPECT_EQ(nvtx[0][2], std::to_string(testing::kT0 + 200'000));
  EXPECT_EQ(nvtx[0][3], std::to_string(0xff12ab34u));
  EXPECT_EQ(nvtx[0][4], "-5");
  EXPECT_EQ(nvtx[0][5], "my-domain");
  EXPECT_EQ(nvtx[1][0], "checkpoint");
  EXPECT_EQ(nvtx[1][1], "34");
  EXPECT_EQ(nvtx[1][2], "NULL");
  const auto ann = q.rows(
      "SELECT n.value, c.value, a.deviceId, a.streamId, a.correlationId FROM GPUSCOPE_ANNOTATIONS a "
      "JOIN StringIds n ON n.id = a.nameId JOIN StringIds c ON c.id = a.categoryId ORDER BY a.start");
  ASSERT_EQ(ann.size(), 2u);
  EXPECT_EQ(ann[0], (std::vector<std::string>{"aten::conv2d", "cpu_op", "NULL", "NULL", "42"}));
  EXPECT_EQ(ann[1], (std::vector<std::string>{"forward", "gpu_user_annotation", "0", "7", "NULL"}));

  // Counters: NaN becomes NULL, infinity stays.
  const auto counters = q.rows(
      "SELECT s.name, s.unit, c.value FROM GPUSCOPE_COUNTERS c JOIN GPUSCOPE_COUNTER_SERIES s ON s.id = c.seriesId "
      "ORDER BY c.timestamp");
  ASSERT_EQ(counters.size(), 4u);
  EXPECT_EQ(counters[0], (std::vector<std::string>{"power", "W", "300.5"}));
  EXPECT_EQ(counters[1][2], "NULL");
  EXPECT_EQ(counters[2][2], "Inf");

  EXPECT_EQ(q.one("SELECT name FROM TARGET_INFO_GPU"), "Test GPU");
  EXPECT_EQ(q.one("SELECT smCount FROM TARGET_INFO_GPU"), "100");
  EXPECT_EQ(q.one("SELECT name FROM PROCESSES WHERE pid = 1234"), "python3");
  EXPECT_EQ(q.one("SELECT count(*) FROM PROFILER_OVERHEAD"), "1");
  EXPECT_EQ(q.one("SELECT name FROM GPUSCOPE_STREAMS WHERE streamId = 7"), "stream 7 (compute)");
}

// The name a series has in TARGET_INFO_GPU_METRICS when its device's peak
// bandwidth is unknown: nsys' where nsys measures the same in the same unit.
std::string exported_metric_name(const CounterSeries& cs) {
  if (cs.name == "hw.sm_active") return "SMs Active [Throughput %]";
  if (cs.name == "hw.tensor_active") return "Tensor Active [Throughput %]";
  return series_name::nsys_metric_name(cs);
}

// Hardware-metric series also go into nsys' own GPU metric tables, with the
// columns nsys writes; other series stay in GPUSCOPE_COUNTERS alone.
TEST_F(SqliteExport, HardwareMetricsInNsysGpuMetricTables) {
  const Trace t = testing::hardware_metrics_trace();
  const fs::path file = dir_ / "hw.sqlite";
  write_sqlite_trace(t, file.string(), SqliteExportOptions{.sync = false});
  Query q(file);
  auto columns = [&](const std::string& table) {
    std::string s;
    for (const auto& r : q.rows("SELECT name, type, \"notnull\" FROM pragma_table_info('" + table + "')"))
      s += r[0] + " " + r[1] + (r[2] == "1" ? " NOT NULL" : "") + ", ";
    return s;
  };
  EXPECT_EQ(columns("TARGET_INFO_GPU_METRICS"),
            "typeId INTEGER NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL, ");
  EXPECT_EQ(columns("GPU_METRICS"),
            "timestamp INTEGER NOT NULL, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value INTEGER NOT NULL, ");

  // Six metrics on each of two GPUs; the same metric has the same id on both.
  EXPECT_EQ(q.one("SELECT count(*) FROM TARGET_INFO_GPU_METRICS"), "12");
  EXPECT_EQ(q.one("SELECT count(DISTINCT metricId) FROM TARGET_INFO_GPU_METRICS"), "6");
  EXPECT_EQ(q.one("SELECT group_concat(DISTINCT typeId) FROM TARGET_INFO_GPU_METRICS"), "0,1");
  EXPECT_EQ(q.one("SELECT DISTINCT typeName FROM TARGET_INFO_GPU_METRICS"), "NVIDIA H200");
  EXPECT_EQ(q.one("SELECT count(*) FROM TARGET_INFO_GPU_METRICS WHERE metricName = 'SMs Active [Throughput %]'"), "2");
  EXPECT_EQ(q.one("SELECT count(*) FROM TARGET_INFO_GPU_METRICS WHERE metricName = 'Tensor Active [Throughput %]'"),
            "2");
  // DRAM in B/s on a GPU of unknown peak bandwidth: no percent to give, gpuscope's name.
  EXPECT_EQ(q.one("SELECT count(*) FROM TARGET_INFO_GPU_METRICS WHERE metricName = 'hw.dram_read [B/s]'"), "2");
  EXPECT_EQ(q.one("SELECT count(*) FROM TARGET_INFO_GPU_METRICS WHERE metricName = 'nvml.throttle_reasons'"), "2");
  EXPECT_EQ(q.one("SELECT count(*) FROM TARGET_INFO_GPU_METRICS WHERE metricName LIKE 'power%'"), "0");

  // Every finite sample of those series, exact; the NaN stays in GPUSCOPE_COUNTERS only.
  EXPECT_EQ(q.one("SELECT count(*) FROM GPU_METRICS"), "60");
  EXPECT_EQ(q.one("SELECT count(*) FROM GPUSCOPE_COUNTERS"), "62");
  const CounterTable& c = t.counters();
  std::size_t checked = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const CounterSeries& cs = t.counter_series()[c.series[i]];
    if (!series_name::is_hardware_metric(cs) || std::isnan(c.value[i])) continue;
    const auto r = q.rows(
        "SELECT g.value FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, metricId) "
        "WHERE g.timestamp = " +
        std::to_string(c.time[i]) + " AND g.typeId = " + std::to_string(cs.device) + " AND m.metricName = '" +
        exported_metric_name(cs) + "'");
    ASSERT_EQ(r.size(), 1u) << cs.name << " at " << c.time[i];
    EXPECT_EQ(std::stod(r[0][0]), c.value[i]) << cs.name;
    ++checked;
  }
  EXPECT_EQ(checked, 60u);
  // Integral values are stored as integers, as nsys stores them; fractions stay REAL.
  EXPECT_EQ(q.one("SELECT typeof(value) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, metricId) "
                  "WHERE m.metricName = 'nvml.sm_clock [MHz]' AND g.typeId = 0 LIMIT 1"),
            "integer");
  EXPECT_EQ(q.one("SELECT typeof(value) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, metricId) "
                  "WHERE m.metricName = 'nvml.power [W]' AND g.typeId = 0 LIMIT 1"),
            "real");
}

// Export, then import what nsys' tables hold (the file without gpuscope's
// own tables reads as an nsys export): hw.* series leave under nsys' names
// and come back as hw.* series in percent of peak; DRAM in B/s becomes a
// percent of the device's peak bandwidth; NVML's series keep their names.
TEST_F(SqliteExport, HardwareMetricsRoundTripThroughNsysTables) {
  TraceBuilder b;
  b.meta().source = TraceSource::cupti;
  Device dev;
  dev.id = 0;
  dev.name = "NVIDIA H200";
  dev.peak_memory_bandwidth = 4.8e12;
  b.add_device(dev);
  const TrackId gpu = b.gpu_track(0, 7);
  const StringId name = b.intern("vectorized_elementwise_kernel");
  KernelRow k;
  k.start = testing::kT0;
  k.end = testing::kT0 + 1'000'000;
  k.track = gpu;
  k.name = name;
  b.add_kernel(k);
  const std::uint32_t sm = b.counter_series("hw.sm_active", 0, "%");
  const std::uint32_t issue = b.counter_series("hw.sm_issue", 0, "%");
  const std::uint32_t read = b.counter_series("hw.dram_read", 0, "B/s");
  const std::uint32_t clock = b.counter_series("nvml.sm_clock", 0, "MHz");
  for (int i = 0; i < 4; ++i) {
    const TimeNs at = testing::kT0 + 100'000 * (i + 1);
    b.add_counter({at, sm, 80.0 + i});
    b.add_counter({at, issue, 12.5});
    b.add_counter({at, read, 2.4e12});
    b.add_counter({at, clock, 1980});
  }
  const Trace t = b.freeze();
  const fs::path file = dir_ / "round.sqlite";
  write_sqlite_trace(t, file.string(), SqliteExportOptions{.sync = false});
  {
    Query q(file);
    EXPECT_EQ(q.one("SELECT group_concat(metricName, '|') FROM (SELECT metricName FROM TARGET_INFO_GPU_METRICS "
                    "ORDER BY metricName)"),
              "DRAM Read Bandwidth [Throughput %]|SM Issue [Throughput %]|SMs Active [Throughput %]|"
              "nvml.sm_clock [MHz]");
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  std::string drop;
  {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'GPUSCOPE%'",
                                 -1, &st, nullptr),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
      drop += "DROP TABLE " + std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) + ";";
    sqlite3_finalize(st);
  }
  EXPECT_EQ(sqlite3_exec(db, drop.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  const Trace back = import_nsys_sqlite(file.string());
  EXPECT_EQ(back.meta().source, TraceSource::nsys_sqlite);  // read as an nsys export
  auto values = [&](std::string_view series) {
    std::vector<double> v;
    const std::uint32_t s = back.find_counter_series(series, 0);
    if (s == kNoSeries) return v;
    const RowRange r = back.rows_of(TableId::counters, s);
    for (RowIndex i = r.begin; i < r.end; ++i) v.push_back(back.counters().value[i]);
    return v;
  };
  EXPECT_EQ(values("hw.sm_active"), (std::vector<double>{80, 81, 82, 83}));
  EXPECT_EQ(values("hw.sm_issue"), (std::vector<double>{12.5, 12.5, 12.5, 12.5}));
  const std::vector<double> dram = values("hw.dram_read");
  ASSERT_EQ(dram.size(), 4u);
  EXPECT_NEAR(dram[0], 50.0, 1e-9);  // 2.4 TB/s of 4.8 TB/s
  EXPECT_EQ(values("nvml.sm_clock"), (std::vector<double>{1980, 1980, 1980, 1980}));
  for (const char* hw : {"hw.sm_active", "hw.sm_issue", "hw.dram_read"})
    EXPECT_EQ(back.counter_series()[back.find_counter_series(hw, 0)].unit, "%") << hw;
  EXPECT_EQ(back.counter_series()[back.find_counter_series("nvml.sm_clock", 0)].unit, "MHz");
  EXPECT_EQ(back.meta().property("nsys.gpu_metric.hw.sm_active"), "SMs Active [Throughput %]");
}

TEST_F(SqliteExport, NoHardwareMetricsLeaveTheGpuMetricTablesEmpty) {
  const fs::path file = dir_ / "e.sqlite";
  write_sqlite_trace(testing::every_table_trace(), file.string(), SqliteExportOptions{.sync = false});
  Query q(file);
  EXPECT_EQ(q.one("SELECT count(*) FROM TARGET_INFO_GPU_METRICS"), "0");
  EXPECT_EQ(q.one("SELECT count(*) FROM GPU_METRICS"), "0");
}

TEST_F(SqliteExport, SyntheticTraceKeepsEveryRowAndSaysSynthetic) {
  SyntheticOptions o;
  o.kernels = 5'000;
  o.gpus = 2;
  const Trace t = make_synthetic_trace(o);
  const fs::path file = dir_ / "s.db";
  write_sqlite_trace(t, file.string());
  Query q(file);
  EXPECT_EQ(q.one("SELECT value FROM GPUSCOPE_META WHERE key = 'source'"), "synthetic");
  EXPECT_NE(q.one("SELECT value FROM GPUSCOPE_META WHERE key = 'note'").find("not a measurement"), std::string::npos);
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), "5000");
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), std::to_string(t.api_calls().size()));
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                  "ON r.correlationId = k.correlationId"),
            "5000");
  EXPECT_EQ(q.one("SELECT count(*) FROM NVTX_EVENTS"), std::to_string(t.ranges().size()));
  EXPECT_EQ(q.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"), std::to_string(t.syncs().size()));
  // Sums of kernel time are exact.
  TimeNs total = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) total += t.kernels().end[i] - t.kernels().start[i];
  EXPECT_EQ(q.one("SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), std::to_string(total));
  EXPECT_EQ(q.one("SELECT count(DISTINCT category) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE category = 13"), "0")
      << "no kernel is 'other'";
}

TEST_F(SqliteExport, FailureLeavesNothing) {
  const Trace t = testing::every_table_trace();
  std::ofstream(dir_ / "plain-file") << "x";
  EXPECT_THROW(write_sqlite_trace(t, (dir_ / "plain-file" / "t.sqlite").string()), InputError);
  EXPECT_THROW(write_sqlite_trace(t, (dir_ / "missing" / "t.sqlite").string()), InputError);
  fs::create_directories(dir_ / "dir.sqlite" / "x");
  EXPECT_THROW(write_sqlite_trace(t, (dir_ / "dir.sqlite").string()), InputError);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 2u) << "only plain-file and dir.sqlite";
}

}  // namespace
}  // namespace gpuscope
