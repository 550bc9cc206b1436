// `gpuscope stats`' tables: the numbers equal SQL over the Nsight Systems
// exports of tests/data/traces/nsys (kernels, API calls, memory copies, OS runtime calls, the
// summaries `nsys stats` prints from the same files), equal the report's where
// both show them, and the three formats carry them whole.
#include "export/stats_tables.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "import/open_trace.h"
#include "support/real_traces.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

// [SECTION] SQL over the export ------------------------------------------------------------------

struct SqlSummary {
  std::int64_t count = 0, total = 0, min = 0, max = 0, median = 0;
  double mean = 0, stddev = 0;
  std::int64_t bytes = 0, min_bytes = 0, max_bytes = 0;
};

// nsys writes API names with their version ("cudaMemcpy_v3020"); the report
// names them without it, as `nsys stats` does.
void strip_version(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* text = sqlite3_value_text(argv[0]);
  const std::string name = text ? reinterpret_cast<const char*>(text) : "";
  const std::string stripped = std::regex_replace(name, std::regex("_v[0-9]+$"), "");
  sqlite3_result_text(ctx, stripped.c_str(), -1, SQLITE_TRANSIENT);
}

class Export {
 public:
  explicit Export(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
    sqlite3_create_function(db_, "strip_version", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, strip_version,
                            nullptr, nullptr);
  }
  ~Export() { sqlite3_close(db_); }
  Export(const Export&) = delete;
  Export& operator=(const Export&) = delete;

  std::int64_t count(const std::string& sql) { return std::stoll(rows(sql).at(0).at(0)); }

  bool has_table(const std::string& name) {
    return !rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '" + name + "'").empty();
  }

  // The statistics of `rows_sql` (columns name, dur, bytes) per name, all in
  // SQL: the median is the lower middle value (row (n + 1) / 2 by duration).
  std::map<std::string, SqlSummary> summaries(const std::string& rows_sql) {
    const std::string sql =
        "WITH r AS (" + rows_sql +
        "), g AS (SELECT name, count(*) n, sum(dur) total, min(dur) mn, max(dur) mx, avg(dur) mean, "
        "sum(bytes) b, min(bytes) bmin, max(bytes) bmax FROM r GROUP BY name), "
        "m AS (SELECT name, dur, row_number() OVER (PARTITION BY name ORDER BY dur) rn FROM r) "
        "SELECT g.name, g.n, g.total, g.mn, g.mx, "
        "(SELECT m.dur FROM m WHERE m.name = g.name AND m.rn = (g.n + 1) / 2), g.mean, "
        "(SELECT sum((r.dur - g.mean) * (r.dur - g.mean)) FROM r WHERE r.name = g.name) / max(g.n - 1, 1), "
        "g.b, g.bmin, g.bmax FROM g";
    std::map<std::string, SqlSummary> out;
    for (const auto& row : rows(sql)) {
      SqlSummary s;
      s.count = std::stoll(row[1]);
      s.total = std::stoll(row[2]);
      s.min = std::stoll(row[3]);
      s.max = std::stoll(row[4]);
      s.median = std::stoll(row[5]);
      s.mean = std::stod(row[6]);
      s.stddev = s.count > 1 ? std::sqrt(std::stod(row[7])) : 0.0;
      s.bytes = row[8].empty() ? 0 : std::stoll(row[8]);
      s.min_bytes = row[9].empty() ? 0 : std::stoll(row[9]);
      s.max_bytes = row[10].empty() ? 0 : std::stoll(row[10]);
      out[row[0]] = s;
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db_) << "\n" << sql;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* v = sqlite3_column_text(st, c);
        row.emplace_back(v ? reinterpret_cast<const char*>(v) : "");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return out;
  }
  sqlite3* db_ = nullptr;
};

const char* const kKernelRows =
    "SELECT coalesce(d.value, s.value) name, k.end - k.start dur, NULL bytes FROM CUPTI_ACTIVITY_KIND_KERNEL k "
    "LEFT JOIN StringIds d ON d.id = k.demangledName LEFT JOIN StringIds s ON s.id = k.shortName";
// Runtime (eventClass 0) and driver (1) calls; 67 repeats a call with its backtrace.
const char* const kApiRows =
    "SELECT strip_version(s.value) name, a.end - a.start dur, NULL bytes FROM CUPTI_ACTIVITY_KIND_RUNTIME a "
    "JOIN StringIds s ON s.id = a.nameId WHERE a.eventClass IS NULL OR a.eventClass IN (0, 1)";
// CUPTI's copy kinds by name; unified-memory migrations (11-13) count as their direction.
const char* const kCopyRows =
    "SELECT CASE copyKind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA' WHEN 4 THEN 'AtoH' "
    "WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD' WHEN 9 THEN 'HtoH' "
    "WHEN 10 THEN 'PtoP' WHEN 11 THEN 'HtoD' WHEN 12 THEN 'DtoH' WHEN 13 THEN 'DtoD' ELSE 'unknown' END name, "
    "end - start dur, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY";

// OS runtime calls as Nsight Systems' osrt_sum selects them: every call (eventClass 27), nested ones included.
const char* const kOsrtRows =
    "SELECT s.value name, o.end - o.start dur, NULL bytes FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId "
    "WHERE o.eventClass = 27";

// [SECTION] Reading the tables -------------------------------------------------------------------

const StatsTable& table_of(const std::vector<StatsTable>& tables, StatsReport r) {
  for (const StatsTable& t : tables)
    if (t.report == r) return t;
  ADD_FAILURE() << "no table " << to_string(r);
  return tables.front();
}

std::size_t column(const StatsTable& t, const std::string& key) {
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    if (t.columns[c].key == key) return c;
  ADD_FAILURE() << "no column " << key << " in " << to_string(t.report);
  return 0;
}

std::int64_t integer(const StatsTable& t, const std::vector<StatsCell>& row, const std::string& key) {
  return std::get<std::int64_t>(row[column(t, key)]);
}
double real(const StatsTable& t, const std::vector<StatsCell>& row, const std::string& key) {
  return std::get<double>(row[column(t, key)]);
}
const std::string& name_of(const StatsTable&, const std::vector<StatsCell>& row) {
  return std::get<std::string>(row.back());
}

void expect_equal_to_sql(const StatsTable& t, const std::map<std::string, SqlSummary>& sql, bool sizes) {
  ASSERT_EQ(t.rows.size(), sql.size()) << to_string(t.report);
  for (const auto& row : t.rows) {
    const std::string& name = name_of(t, row);
    const auto it = sql.find(name);
    ASSERT_NE(it, sql.end()) << to_string(t.report) << ": " << name << " is not in the export";
    const SqlSummary& s = it->second;
    SCOPED_TRACE(std::string(to_string(t.report)) + ": " + name);
    EXPECT_EQ(integer(t, row, t.columns[2].key), s.count);
    EXPECT_EQ(integer(t, row, "total_ns"), s.total);
    EXPECT_EQ(integer(t, row, "min_ns"), s.min);
    EXPECT_EQ(integer(t, row, "max_ns"), s.max);
    EXPECT_EQ(integer(t, row, "median_ns"), s.median);
    EXPECT_NEAR(real(t, row, "mean_ns"), s.mean, 1e-6 * std::max(1.0, s.mean));
    EXPECT_NEAR(real(t, row, "stddev_ns"), s.stddev, 1e-6 * std::max(1.0, s.stddev));
    if (sizes) {
      EXPECT_EQ(integer(t, row, "total_bytes"), s.bytes);
      EXPECT_EQ(integer(t, row, "min_bytes"), s.min_bytes);
      EXPECT_EQ(integer(t, row, "max_bytes"), s.max_bytes);
    }
  }
}

// [SECTION] Against SQL and against the report ------------------------------------------------------

class NsysStats : public ::testing::TestWithParam<const char*> {};

TEST_P(NsysStats, EqualSqlOverTheExport) {
  const std::string path = testing::real_trace(GetParam());
  const Trace trace = open_trace(path);
  StatsOptions o;
  o.reports = {StatsReport::kernels, StatsReport::api, StatsReport::memcpy, StatsReport::osrt};
  const std::vector<StatsTable> tables = stats_tables(trace, nullptr, o);
  Export db(path);
  expect_equal_to_sql(table_of(tables, StatsReport::kernels), db.summaries(kKernelRows), false);
  expect_equal_to_sql(table_of(tables, StatsReport::api), db.summaries(kApiRows), false);
  expect_equal_to_sql(table_of(tables, StatsReport::memcpy), db.summaries(kCopyRows), true);
  const StatsTable& osrt = table_of(tables, StatsReport::osrt);
  expect_equal_to_sql(osrt, db.summaries(kOsrtRows), false);
  std::int64_t calls = 0;
  double os_shares = 0;
  for (const auto& row : osrt.rows) calls += integer(osrt, row, "calls"), os_shares += real(osrt, row, "share");
  EXPECT_EQ(calls, db.count("SELECT count(*) FROM OSRT_API WHERE eventClass = 27"));
  if (osrt.rows.empty()) {
    EXPECT_EQ(osrt.note, "no OS runtime calls recorded: the export's OSRT_API table holds no calls");
  } else {
    EXPECT_NEAR(os_shares, 1.0, 1e-9);
    EXPECT_EQ(osrt.note, "");  // no call ran inside another (SELECT max(nestingLevel) FROM OSRT_API -> 0)
  }
  // Shares of the kernel total add up to one.
  double shares = 0;
  const StatsTable& k = table_of(tables, StatsReport::kernels);
  for (const auto& row : k.rows) shares += real(k, row, "share");
  EXPECT_NEAR(shares, 1.0, 1e-9);
}

TEST_P(NsysStats, EqualTheReportWhereBothShowThem) {
  const Trace trace = open_trace(testing::real_trace(GetParam()));
  const Profile p = analyze(trace);
  StatsOptions o;
  o.reports = {StatsReport::kernels, StatsReport::memcpy, StatsReport::steps};
  const std::vector<StatsTable> tables = stats_tables(trace, &p, o);
  const StatsTable& k = table_of(tables, StatsReport::kernels);
  std::map<std::string, const std::vector<StatsCell>*> by_name;
  for (const auto& row : k.rows) by_name[name_of(k, row)] = &row;
  ASSERT_FALSE(p.hotspots.empty());
  for (const Hotspot& h : p.hotspots) {
    SCOPED_TRACE(h.name);
    ASSERT_TRUE(by_name.count(h.name));
    const auto& row = *by_name[h.name];
    EXPECT_EQ(integer(k, row, "calls"), static_cast<std::int64_t>(h.stats.count));
    EXPECT_EQ(integer(k, row, "total_ns"), h.stats.total);
    EXPECT_EQ(integer(k, row, "median_ns"), h.stats.median);
    EXPECT_EQ(integer(k, row, "min_ns"), h.stats.min);
    EXPECT_EQ(integer(k, row, "max_ns"), h.stats.max);
    EXPECT_EQ(static_cast<TimeNs>(real(k, row, "mean_ns")), h.stats.mean);  // the report's mean is truncated
    EXPECT_NEAR(real(k, row, "share"), h.share, 1e-12);
  }
  const StatsTable& m = table_of(tables, StatsReport::memcpy);
  std::int64_t count = 0, bytes = 0, time = 0;
  for (const auto& row : m.rows) {
    count += integer(m, row, "count");
    bytes += integer(m, row, "total_bytes");
    time += integer(m, row, "total_ns");
  }
  EXPECT_EQ(count, static_cast<std::int64_t>(p.memcpys.count));
  EXPECT_EQ(bytes, static_cast<std::int64_t>(p.memcpys.bytes));
  EXPECT_EQ(time, p.memcpys.time_ns);
  const StatsTable& s = table_of(tables, StatsReport::steps);
  ASSERT_EQ(s.rows.size(), p.steps.steps.size());
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    EXPECT_EQ(integer(s, s.rows[i], "duration_ns"), p.steps.steps[i].range.duration());
    EXPECT_EQ(integer(s, s.rows[i], "compute_ns"), p.steps.steps[i].compute_ns);
  }
}

INSTANTIATE_TEST_SUITE_P(RealExports, NsysStats,
                         ::testing::Values("nsys/nsys2024-cloverleaf-a100-mpi.sqlite",
                                           "nsys/nsys2022-saxpy-mpi-openacc.sqlite"),
                         [](const auto& info) {
                           std::string n = info.param;
                           n = n.substr(5, n.find('.') - 5);
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// [SECTION] Formats ---------------------------------------------------------------------------------

// RFC 4180 fields of one CSV line (quotes doubled inside quoted fields).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::vector<StatsTable> cloverleaf_kernels() {
  const Trace trace = open_trace(testing::real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite"));
  StatsOptions o;
  o.reports = {StatsReport::kernels};
  return stats_tables(trace, nullptr, o);
}

TEST(StatsCsv, OneReportIsPlainCsvWithFullNames) {
  const std::vector<StatsTable> tables = cloverleaf_kernels();
  const std::string csv = stats_csv(tables);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < csv.size();) {
    const std::size_t nl = csv.find('\n', at);
    lines.push_back(csv.substr(at, nl - at));
    at = nl + 1;
  }
  ASSERT_EQ(lines.size(), tables[0].rows.size() + 1);
  EXPECT_EQ(lines[0], "share,total_ns,calls,mean_ns,median_ns,min_ns,max_ns,stddev_ns,category,name");
  for (std::size_t i = 0; i < tables[0].rows.size(); ++i) {
    const std::vector<std::string> f = csv_fields(lines[i + 1]);
    ASSERT_EQ(f.size(), 10u) << lines[i + 1];
    EXPECT_EQ(f[9], name_of(tables[0], tables[0].rows[i]));  // names with commas, whole
    EXPECT_EQ(std::stoll(f[1]), integer(tables[0], tables[0].rows[i], "total_ns"));
    EXPECT_DOUBLE_EQ(std::stod(f[3]), real(tables[0], tables[0].rows[i], "mean_ns"));  // reads back exactly
  }
}

TEST(StatsCsv, SeveralReportsAreSectionsWithTheirNames) {
  testing::TraceFactory f;
  f.kernel(0, 7, "k \"quoted\", named", 0, 100);
  const Trace t = f.build();
  StatsOptions o;
  o.reports = {StatsReport::kernels, StatsReport::memset};
  const std::string csv = stats_csv(stats_tables(t, nullptr, o));
  EXPECT_EQ(csv.rfind("# kernels: CUDA kernels, by name\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("\"k \"\"quoted\"\", named\""), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n\n# memset: Memsets, by memory kind (time and bytes)\nshare,total_ns,count,"),
            std::string::npos)
      << csv;
}

TEST(StatsJson, CarriesEveryCellWithItsKey) {
  const std::vector<StatsTable> tables = cloverleaf_kernels();
  const auto j = nlohmann::json::parse(stats_json(tables, "clover.sqlite"));
  EXPECT_EQ(j["schema"], "gpuscope.stats/1");
  EXPECT_EQ(j["file"], "clover.sqlite");
  const auto& r = j["reports"].at(0);
  EXPECT_EQ(r["report"], "kernels");
  ASSERT_EQ(r["rows"].size(), tables[0].rows.size());
  for (std::size_t i = 0; i < tables[0].rows.size(); ++i) {
    EXPECT_EQ(r["rows"][i]["name"], name_of(tables[0], tables[0].rows[i]));
    EXPECT_EQ(r["rows"][i]["calls"], integer(tables[0], tables[0].rows[i], "calls"));
    EXPECT_EQ(r["rows"][i]["mean_ns"].get<double>(), real(tables[0], tables[0].rows[i], "mean_ns"));
  }
}

TEST(StatsText, ShortensLongNamesOnlyWithAKeyThatTellsThemApart) {
  const std::vector<StatsTable> tables = cloverleaf_kernels();
  EXPECT_EQ(stats_text(tables).find("Names shortened"), std::string::npos) << "nothing shortened unless asked";
  StatsTextOptions o;
  o.max_name = 60;
  const std::string text = stats_text(tables, o);
  std::size_t shortened = 0;
  for (const auto& row : tables[0].rows) {
    const std::string& name = name_of(tables[0], row);
    if (name.size() <= 60) {
      EXPECT_NE(text.find("  " + name + "\n"), std::string::npos) << name;
      continue;
    }
    ++shortened;
    std::string key = std::to_string(shortened);
    key.insert(0, 1, '[');
    key.push_back(']');
    EXPECT_NE(text.find("  " + key + " " + name.substr(0, 20)), std::string::npos) << key;  // in the table
    EXPECT_NE(text.find("    " + key + " " + name + "\n"), std::string::npos) << key;       // in full, under it
  }
  EXPECT_GT(shortened, 10u);
  EXPECT_NE(text.find("  Names shortened above, in full:\n"), std::string::npos);
}

TEST(StatsTables, ReportNamesAndNsysNames) {
  StatsReport r{};
  EXPECT_TRUE(parse_stats_report("kernels", &r));
  EXPECT_EQ(r, StatsReport::kernels);
  EXPECT_TRUE(parse_stats_report("cuda_api_sum", &r));
  EXPECT_EQ(r, StatsReport::api);
  EXPECT_TRUE(parse_stats_report("nvtx_sum", &r));
  EXPECT_EQ(r, StatsReport::ranges);
  EXPECT_TRUE(parse_stats_report("osrt_sum", &r));
  EXPECT_EQ(r, StatsReport::osrt);
  EXPECT_TRUE(parse_stats_report("osrt", &r));
  EXPECT_FALSE(parse_stats_report("osrt_summary", &r));
  for (StatsReport x : all_stats_reports()) EXPECT_TRUE(parse_stats_report(to_string(x), &r));
  EXPECT_EQ(default_stats_reports().size(), all_stats_reports().size() - 1);
}

// osrt_sum's definition: a nested call counts in its own row and inside the
// call around it; the note says how many ran nested.
TEST(StatsTables, OsCallsCountNestedCallsAsNsysDoes) {
  TraceBuilder b;
  const TrackId cpu = b.cpu_track(1, 1);
  b.add_os_call(OsCallRow{100, 400, cpu, b.intern("fread"), 64, 0});
  b.add_os_call(OsCallRow{150, 250, cpu, b.intern("pthread_mutex_lock"), 0, 1});
  b.add_os_call(OsCallRow{500, 600, cpu, b.intern("pthread_mutex_lock"), 0, 0});
  const Trace t = b.freeze();
  StatsOptions o;
  o.reports = {StatsReport::osrt};
  const StatsTable r = stats_tables(t, nullptr, o).at(0);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(name_of(r, r.rows[0]), "fread");
  EXPECT_EQ(integer(r, r.rows[0], "total_ns"), 300);
  EXPECT_EQ(name_of(r, r.rows[1]), "pthread_mutex_lock");
  EXPECT_EQ(integer(r, r.rows[1], "calls"), 2);
  EXPECT_EQ(integer(r, r.rows[1], "total_ns"), 200);
  EXPECT_NEAR(real(r, r.rows[0], "share"), 0.6, 1e-12);  // of 500 ns listed, not of the threads' time
  EXPECT_EQ(r.note,
            "1 calls ran inside another traced OS call; each is counted in its own row and in the time of the call "
            "around it, as Nsight Systems' osrt_sum counts them");
}

// A trace without OS runtime calls says why: its source cannot record them,
// or recorded none.
TEST(StatsTables, NoOsCallsSaysWhetherTheSourceCouldRecordThem) {
  auto note = [](TraceSource source, std::string_view osrt_api) {
    TraceBuilder b;
    b.meta().source = source;
    if (!osrt_api.empty()) b.meta().set_property("nsys.osrt_api", osrt_api);
    const Trace t = b.freeze();
    StatsOptions o;
    o.reports = {StatsReport::osrt};
    const StatsTable r = stats_tables(t, nullptr, o).at(0);
    EXPECT_TRUE(r.rows.empty());
    return r.note;
  };
  EXPECT_EQ(note(TraceSource::nsys_sqlite, ""),
            "no OS runtime calls recorded: the export's OSRT_API table holds no calls");
  EXPECT_NE(note(TraceSource::nsys_sqlite, "absent").find("the export has no OSRT_API table"), std::string::npos);
  EXPECT_NE(note(TraceSource::chrome_json, "").find("Chrome/Kineto JSON traces do not record them"), std::string::npos);
  EXPECT_NE(note(TraceSource::cupti, "").find("gpuscope capture does not record them"), std::string::npos);
  EXPECT_NE(note(TraceSource::synthetic, "").find("synthetic traces have none"), std::string::npos);
}

TEST(StatsTables, RangesLeaveMarksOutAndSayHowMany) {
  testing::TraceFactory f;
  f.kernel(0, 7, "k", 0, 100);
  f.range("step", 0, 50);
  f.range("step", 60, 90);
  f.range("checkpoint", 70, 70, 1, RangeKind::mark);
  const Trace t = f.build();
  StatsOptions o;
  o.reports = {StatsReport::ranges};
  const StatsTable r = stats_tables(t, nullptr, o).at(0);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(integer(r, r.rows[0], "instances"), 2);
  EXPECT_EQ(integer(r, r.rows[0], "total_ns"), 80);
  EXPECT_EQ(integer(r, r.rows[0], "median_ns"), 30);  // the lower middle of {30, 50}
  EXPECT_EQ(r.note, "1 marks (instants, no duration) are not listed");
}

}  // namespace
}  // namespace gpuscope
