// The direct page reader (src/import/nsys/sqlite_pages.h) against SQLite's
// own: the same values, in the same order, for every storage class and width,
// records that spill to overflow pages, columns added later (short records),
// rowid aliases, page sizes 512 and 65536, trees several levels deep, and a
// table read in parts; tables it must not read directly (WITHOUT ROWID, a
// DEFAULT on a column added later, UTF-16) go through SQLite.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "import/nsys/nsys_test_db.h"
#include "import/nsys/sqlite_pages.h"
#include "import/nsys/sqlite_table.h"

namespace gpuscope::nsys {
namespace {

struct Value {
  bool null;
  std::int64_t i;
  double d;
  std::string text;
  bool operator==(const Value&) const = default;
};

std::vector<std::vector<Value>> read_all(TableReader& r, std::size_t columns, int part = -1) {
  std::vector<std::vector<Value>> rows;
  auto take = [&](const SqlValue* v) {
    std::vector<Value> row;
    for (std::size_t k = 0; k < columns; ++k)
      row.push_back(Value{v[k].null(), v[k].as_int(), v[k].as_real(), std::string(v[k].as_text())});
    rows.push_back(std::move(row));
  };
  if (part < 0)
    r.for_each(take);
  else
    r.for_each(static_cast<std::size_t>(part), take);
  return rows;
}

class SqlitePages : public testing::NsysTest {
 protected:
  // Random rows: every column gets integers of every width (and the extremes),
  // reals (integral or not), texts (some longer than a page), blobs and NULLs.
  std::string random_table(const std::string& name, int page_size, int rows, std::uint32_t seed) {
    std::mt19937_64 rng(seed);
    auto value = [&]() -> std::string {
      switch (rng() % 9) {
        case 0: return "NULL";
        case 1: return std::to_string(static_cast<std::int64_t>(rng()) >> (rng() % 64));
        case 2: return rng() % 2 ? "9223372036854775807" : "-9223372036854775808";
        case 3: return std::to_string(static_cast<int>(rng() % 3));  // 0 and 1 have serial types of their own
        case 4: return std::to_string(static_cast<double>(rng() % 1000) / 8.0);
        case 5: return "'" + std::string(rng() % 3 == 0 ? 2000 + rng() % 70000 : rng() % 40, 'a' + rng() % 26) + "'";
        case 6: return "x'" + std::string(2 * (rng() % 20), '7') + "'";
        case 7: return "'é日本'";
        default: return std::to_string(-static_cast<std::int64_t>(rng() % 100000));
      }
    };
    std::string sql =
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b REAL, c TEXT, d BLOB, e);"
        "BEGIN;";
    for (int i = 0; i < rows; ++i)
      sql += "INSERT INTO t (a, b, c, d, e) VALUES (" + value() + ", " + value() + ", " + value() + ", " + value() +
             ", " + value() + ");";
    sql += "COMMIT; ALTER TABLE t ADD COLUMN f INTEGER; BEGIN;";
    for (int i = 0; i < rows / 4; ++i) sql += "INSERT INTO t (a, f) VALUES (" + value() + ", " + value() + ");";
    sql += "COMMIT; DELETE FROM t WHERE id % 17 = 3;";  // free cells and pages in the tree
    return make_db(name, sql, page_size);
  }

  void expect_same(const std::string& file, const std::string& table, std::vector<std::string_view> columns,
                   bool direct_expected) {
    const Database db(file, {});
    const std::unique_ptr<PageFile> pages = PageFile::open(db, {});
    ASSERT_TRUE(pages != nullptr);
    const TableDef* t = db.table(table);
    ASSERT_TRUE(t != nullptr);
    TableReader direct(db, pages.get(), *t, columns), slow(db, nullptr, *t, columns);
    EXPECT_EQ(direct.direct(), direct_expected);
    const auto a = read_all(direct, columns.size()), b = read_all(slow, columns.size());
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "row " << i;
    // In parts, on any split: the same rows in the same order.
    for (std::size_t parts : {2, 3, 7}) {
      TableReader split(db, pages.get(), *t, columns);
      const std::size_t n = split.split(parts);
      std::vector<std::vector<Value>> joined;
      std::uint64_t counted = 0;
      for (std::size_t p = 0; p < n; ++p) {
        const auto part = read_all(split, columns.size(), static_cast<int>(p));
        if (direct_expected) {
          EXPECT_EQ(part.size(), split.rows(p));
        }
        counted += split.rows(p);
        joined.insert(joined.end(), part.begin(), part.end());
      }
      if (direct_expected) {
        EXPECT_EQ(counted, a.size());
      }
      EXPECT_EQ(joined, a) << parts << " parts";
    }
  }
};

TEST_F(SqlitePages, EveryStorageClassAndWidth) {
  for (int page_size : {512, 4096, 65536}) {
    SCOPED_TRACE("page size " + std::to_string(page_size));
    std::string name = "t";  // (not "t" + std::string&&: GCC 12 warns falsely there, -Wrestrict)
    name += std::to_string(page_size) + ".sqlite";
    const std::string file = random_table(name, page_size, 3000, page_size);
    expect_same(file, "t", {"id", "a", "b", "c", "d", "e", "f", "nope", "a"}, true);
    expect_same(file, "t", {"f", "c"}, true);  // any order, a subset
  }
}

TEST_F(SqlitePages, DeepTreeAndCounts) {
  std::string sql = "CREATE TABLE k (start INTEGER, end INTEGER, name INTEGER); BEGIN;";
  for (int i = 0; i < 60000; ++i)
    sql += "INSERT INTO k VALUES (" + std::to_string(i * 1000) + ", " + std::to_string(i * 1000 + 7) + ", " +
           std::to_string(i % 13) + ");";
  sql += "COMMIT;";
  const std::string file = make_db("deep.sqlite", sql, 512);
  expect_same(file, "k", {"start", "end", "name"}, true);
  const Database db(file, {});
  const auto pages = PageFile::open(db, {});
  EXPECT_EQ(pages->count(static_cast<std::uint32_t>(db.table("k")->root_page), "k"), 60000u);
}

// A child page two interior cells point to is refused when the table is
// split, whether its two copies fall in one run of subtrees or in two that
// are counted on different threads.
TEST_F(SqlitePages, PageReachedTwiceIsRefusedWhenSplitting) {
  std::string sql = "CREATE TABLE k (start INTEGER, end INTEGER); BEGIN;";
  for (int i = 0; i < 60000; ++i)
    sql += "INSERT INTO k VALUES (" + std::to_string(i) + ", " + std::to_string(i + 7) + ");";
  sql += "COMMIT;";
  const std::string file = make_db("twice.sqlite", sql, 512);
  std::uint32_t root = 0;
  {
    const Database db(file, {});
    root = static_cast<std::uint32_t>(db.table("k")->root_page);
  }
  // The root's right-most child becomes its first cell's child: the two
  // copies are the first and the last subtrees, in different runs.
  FILE* f = std::fopen(file.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::uint8_t page[512];
  ASSERT_EQ(std::fseek(f, static_cast<long>(root - 1) * 512, SEEK_SET), 0);
  ASSERT_EQ(std::fread(page, 1, sizeof page, f), sizeof page);
  ASSERT_EQ(page[0], 0x05);  // an interior table page
  ASSERT_GE((page[3] << 8) | page[4], 2);
  const int cell0 = (page[12] << 8) | page[13];
  std::memcpy(page + 8, page + cell0, 4);
  ASSERT_EQ(std::fseek(f, static_cast<long>(root - 1) * 512, SEEK_SET), 0);
  ASSERT_EQ(std::fwrite(page, 1, sizeof page, f), sizeof page);
  std::fclose(f);
  const Database db(file, {});
  const auto pages = PageFile::open(db, {});
  ASSERT_NE(pages, nullptr);
  for (std::size_t parts : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(parts) + " parts");
    try {
      pages->split(root, "k", parts);
      ADD_FAILURE() << "not refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("reached twice"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("table k"), std::string::npos) << e.what();
    }
  }
}

TEST_F(SqlitePages, TablesReadThroughSqlite) {
  const std::string file = make_db("special.sqlite", R"sql(
CREATE TABLE w (id INTEGER PRIMARY KEY, v TEXT) WITHOUT ROWID;
INSERT INTO w VALUES (2, 'b'), (1, 'a');
CREATE TABLE d (x INTEGER);
INSERT INTO d VALUES (1);
ALTER TABLE d ADD COLUMN y TEXT DEFAULT 'later';
INSERT INTO d VALUES (2, 'set');
CREATE TABLE g (x INTEGER, y INTEGER GENERATED ALWAYS AS (x * 2) VIRTUAL);
INSERT INTO g (x) VALUES (21);
)sql");
  expect_same(file, "w", {"id", "v"}, false);
  expect_same(file, "d", {"x", "y"}, false);  // a short record means the DEFAULT
  expect_same(file, "d", {"x"}, true);        // without y, the table is read directly
  expect_same(file, "g", {"x", "y"}, false);
  const Database db(file, {});
  TableReader r(db, nullptr, *db.table("d"), {"y"});
  const auto rows = read_all(r, 1);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0].text, "later");
}

TEST_F(SqlitePages, Utf16DatabaseIsReadThroughSqlite) {
  const std::string file = make_db("utf16.sqlite",
                                   "PRAGMA encoding = 'UTF-16le'; CREATE TABLE t (v TEXT);"
                                   "INSERT INTO t VALUES ('日本');");
  const Database db(file, {});
  EXPECT_FALSE(db.utf8());
  EXPECT_EQ(PageFile::open(db, {}), nullptr);
  TableReader r(db, nullptr, *db.table("t"), {"v"});
  const auto rows = read_all(r, 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].text, "日本");
}

// A record placed at the very end of a readable page, with an unreadable
// page after it: any read past the record's end faults, in any build.
class GuardedRecord {
 public:
  explicit GuardedRecord(std::string_view bytes) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    map_ = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (map_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    size_ = 2 * page;
    mprotect(map_ + page, page, PROT_NONE);
    char* at = map_ + page - bytes.size();
    std::memcpy(at, bytes.data(), bytes.size());
    view_ = std::string_view(at, bytes.size());
  }
  GuardedRecord(const GuardedRecord&) = delete;
  GuardedRecord& operator=(const GuardedRecord&) = delete;
  ~GuardedRecord() { munmap(map_, size_); }
  std::string_view view() const { return view_; }

 private:
  char* map_ = nullptr;
  std::size_t size_ = 0;
  std::string_view view_;
};

// Records whose header promises more bytes than the record holds are refused
// without reading past their end: a long value in a column before the one
// wanted (one-byte serial types, the fast path), and a serial type whose
// length is beyond any record (a nine-byte varint, the general path).
TEST(RecordDecoder, RefusesValuesPastTheRecord) {
  const RecordDecoder decoder({1}, {false});
  SqlValue out[1];
  // Header of 3 bytes: its size, a 57-byte text (type 127), an int8 (type 1);
  // then one byte of data where 58 are due.
  const GuardedRecord short_record(std::string_view("\x03\x7f\x01\x05", 4));
  EXPECT_FALSE(decoder.decode(1, short_record.view(), out));
  // Header of 11 bytes: its size, serial type 2^57 + 12 as a varint, an int8.
  const GuardedRecord huge(std::string_view("\x0b\x81\x80\x80\x80\x80\x80\x80\x80\x0c\x01\x05", 12));
  EXPECT_FALSE(decoder.decode(1, huge.view(), out));
  // The same shape, well formed, decodes: an empty text, then 5.
  const GuardedRecord good(std::string_view("\x03\x0d\x01\x05", 4));
  ASSERT_TRUE(decoder.decode(1, good.view(), out));
  EXPECT_EQ(out[0].as_int(), 5);
}

// A REAL holding a NaN (any payload) reads as NULL, as SQLite reads it, so
// the direct reader and SQLite agree on such a file.
TEST(RecordDecoder, NanReadsAsNull) {
  const RecordDecoder decoder({0}, {false});
  SqlValue out[1];
  const std::string_view nan_record("\x02\x07\x7f\xf0\x00\x00\x00\x00\xfe\x00", 10);
  ASSERT_TRUE(decoder.decode(1, nan_record, out));
  EXPECT_TRUE(out[0].null());
  const std::string_view real_record("\x02\x07\x40\x72\xc8\x00\x00\x00\x00\x00", 10);  // 300.5
  ASSERT_TRUE(decoder.decode(1, real_record, out));
  EXPECT_FALSE(out[0].null());
  EXPECT_EQ(out[0].as_real(), 300.5);
}

}  // namespace
}  // namespace gpuscope::nsys
