// Read-only access to an SQLite database for the importers of src/import/nsys
// (internal to them): the connection, its schema, prepared statements, and
// the one value type both table readers hand out (sqlite_table.h).
//
// The file is untrusted: it is opened read-only with SQLite's defensive mode
// on, only objects of type "table" (never views, never virtual tables) are
// read, and every SQLite error becomes an InputError naming the file, what
// was being read and SQLite's own message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace/error.h"
#include "trace/load_progress.h"

namespace gpuscope::nsys {

// A value as the database stores it (its storage class). Both table readers
// produce these, and every conversion below is the same for both, so that
// the direct page reader and SQLite's own give identical rows.
class SqlValue {
 public:
  enum class Type : std::uint8_t { null, integer, real, text, blob };

  Type type() const { return type_; }
  bool null() const { return type_ == Type::null; }
  // Integers as stored; reals truncated toward zero (NaN -> 0, clamped to
  // int64); text, blobs and NULL -> 0.
  std::int64_t as_int() const { return type_ == Type::integer ? u_.i : real_as_int(); }
  double as_real() const {  // integers converted; text, blobs and NULL -> 0
    return type_ == Type::real ? u_.d : type_ == Type::integer ? static_cast<double>(u_.i) : 0;
  }
  // Text as stored; anything else -> "" (numbers are not formatted).
  std::string_view as_text() const { return type_ == Type::text ? std::string_view(u_.p, n_) : std::string_view(); }

  void set_null() { type_ = Type::null; }
  void set_int(std::int64_t i) {
    type_ = Type::integer;
    u_.i = i;
  }
  void set_real(double d) {
    type_ = Type::real;
    u_.d = d;
  }
  // Text or blob bytes, valid until the reader moves on (at most 4 GiB: records are smaller).
  void set_bytes(Type t, const char* p, std::size_t n) {
    type_ = t;
    u_.p = p;
    n_ = static_cast<std::uint32_t>(n);
  }

 private:
  std::int64_t real_as_int() const;

  // 16 bytes: a row of 20 values fits in five cache lines.
  union {
    std::int64_t i;
    double d;
    const char* p;
  } u_{0};
  std::uint32_t n_ = 0;
  Type type_ = Type::null;
};

struct ColumnDef {
  std::string name;
  std::string type;          // declared type, as written
  int record_index = 0;      // position in the stored record
  bool rowid_alias = false;  // INTEGER PRIMARY KEY: the value is the rowid
  bool has_default = false;  // a DEFAULT other than NULL
};

struct TableDef {
  std::string name;
  std::int64_t root_page = 0;
  bool has_rowid = true;
  bool plain = false;  // an ordinary rowid table whose records hold exactly its columns
  std::vector<ColumnDef> columns;

  const ColumnDef* column(std::string_view name) const;  // case-insensitive; nullptr if absent
  bool has(std::string_view name) const { return column(name) != nullptr; }
};

class Database {
 public:
  // Opens `path` read-only and reads its schema inside a read transaction that
  // stays open while this object lives (no writer can change the file under
  // the readers). Throws InputError: not a database, encrypted, corrupt,
  // unreadable.
  Database(const std::string& path, const LoadProgress& progress);
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // The connection is opened without SQLite's own mutex (one thread at a
  // time): a reader that steps statements on a worker thread while others may
  // do the same holds this for as long as its statement lives.
  std::mutex& connection_lock() const { return connection_lock_; }

  // Tables (type "table", not virtual), by case-insensitive name.
  const TableDef* table(std::string_view name) const;
  bool has_table(std::string_view name) const { return table(name) != nullptr; }
  const std::vector<TableDef>& tables() const { return tables_; }
  // Views and virtual tables (never read): name, and "a view" or "a virtual table".
  const std::vector<std::pair<std::string, std::string>>& not_tables() const { return not_tables_; }

  std::int64_t page_count() const { return page_count_; }
  std::uint64_t file_bytes() const { return static_cast<std::uint64_t>(page_count_) * page_size_; }
  bool utf8() const { return utf8_; }
  bool rollback_journal() const { return rollback_journal_; }  // not WAL: the main file is the whole database

  // Rows of a table (SQLite's count(*)).
  std::uint64_t row_count(const TableDef& t) const;

  // Throws InputError "<file>: <doing>: <SQLite's message>".
  [[noreturn]] void fail(std::string_view doing) const;
  [[noreturn]] void fail(std::string_view doing, int rc) const;

 private:
  void read_schema();
  void read_columns(TableDef& t);
  int open_in_place();
  void close();  // the connection and the mapping

  std::string path_;
  sqlite3* db_ = nullptr;
  // A stream spooled by files::seekable_path, mapped for SQLite to read in place.
  void* image_ = nullptr;
  std::size_t image_bytes_ = 0;
  std::vector<TableDef> tables_;
  std::vector<std::pair<std::string, std::string>> not_tables_;
  std::unordered_map<std::string, std::size_t> by_name_;  // lower-case name -> index
  std::int64_t page_count_ = 0;
  std::uint64_t page_size_ = 0;
  bool utf8_ = true, rollback_journal_ = true;
  LoadProgress progress_;
  mutable std::mutex connection_lock_;
};

// A prepared statement; values of the current row by column index.
class Statement {
 public:
  Statement(const Database& db, const std::string& sql, std::string_view doing);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  bool step();  // true while there is a row; throws InputError on errors
  SqlValue value(int column) const;
  std::int64_t int64(int column) const { return value(column).as_int(); }
  std::string text(int column) const { return std::string(value(column).as_text()); }

 private:
  const Database& db_;
  sqlite3_stmt* st_ = nullptr;
  std::string doing_;
};

// "name" quoted as an SQL identifier.
std::string quote_identifier(std::string_view name);
std::string lower(std::string_view s);

}  // namespace gpuscope::nsys
