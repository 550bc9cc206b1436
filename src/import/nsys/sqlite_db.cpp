#include "import/nsys/sqlite_db.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <limits>

namespace gpuscope::nsys {

std::int64_t SqlValue::real_as_int() const {
  if (type_ != Type::real || std::isnan(u_.d)) return 0;
  // 2^63 is exactly representable; anything at or above it does not fit.
  if (u_.d >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
  if (u_.d <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(u_.d);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string quote_identifier(std::string_view name) {
  std::string q = "\"";
  for (char c : name) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

const ColumnDef* TableDef::column(std::string_view n) const {
  const std::string key = lower(n);
  for (const ColumnDef& c : columns)
    if (lower(c.name) == key) return &c;
  return nullptr;
}

namespace {

// What an SQLite result code means for the person who handed us the file.
std::string describe(int rc, const char* message) {
  const std::string sqlite_says = std::string("SQLite: ") + (message ? message : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_NOTADB: return "not an SQLite database, or an encrypted one (" + sqlite_says + ")";
    case SQLITE_CORRUPT: return "corrupt SQLite database (" + sqlite_says + ")";
    case SQLITE_CANTOPEN: return "cannot open (" + sqlite_says + ")";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "the database is locked by a program writing it (" + sqlite_says + ")";
    case SQLITE_IOERR: return "cannot read (" + sqlite_says + ")";
    case SQLITE_NOMEM: return "out of memory (" + sqlite_says + ")";
    default: return sqlite_says;
  }
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return lower(s.substr(i, prefix.size())) == prefix;
}

}  // namespace

// [SECTION] Database ------------------------------------------------------------------------------

Database::Database(const std::string& path, const LoadProgress& progress) : path_(path), progress_(progress) {
  // A relative name that starts with "file:" would be read as a URI.
  const std::string name = path.rfind("file:", 0) == 0 ? "./" + path : path;
  // A stream spooled into memory by files::seekable_path ("/proc/self/fd/N")
  // has no name SQLite can open (it follows the link to "/memfd:… (deleted)"):
  // SQLite reads its bytes in place instead.
  const int rc = path.rfind("/proc/self/fd/", 0) == 0
                     ? open_in_place()
                     : sqlite3_open_v2(name.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = describe(rc, db_ ? sqlite3_errmsg(db_) : nullptr);
    close();
    throw InputError(path_, why);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
#endif
  sqlite3_busy_timeout(db_, 2000);
  if (progress_.cancel)
    sqlite3_progress_handler(
        db_, 100000, [](void* p) { return static_cast<Database*>(p)->progress_.cancel->load() ? 1 : 0; }, this);
  try {
    char* err = nullptr;
    if (const int b = sqlite3_exec(db_, "PRAGMA cell_size_check = ON; BEGIN", nullptr, nullptr, &err); b != SQLITE_OK) {
      const std::string why = describe(b, err);
      sqlite3_free(err);
      throw InputError(path_, why);
    }
    read_schema();
  } catch (...) {
    close();
    throw;
  }
}

int Database::open_in_place() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) {
    if (fd >= 0) ::close(fd);
    return SQLITE_CANTOPEN;
  }
  image_bytes_ = static_cast<std::size_t>(st.st_size);
  image_ = ::mmap(nullptr, image_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (image_ == MAP_FAILED) {
    image_ = nullptr;
    return SQLITE_NOMEM;
  }
  const int rc = sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return rc;
  const auto bytes = static_cast<sqlite3_int64>(image_bytes_);
  return sqlite3_deserialize(db_, "main", static_cast<unsigned char*>(image_), bytes, bytes,
                             SQLITE_DESERIALIZE_READONLY);
}

Database::~Database() {
  if (db_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  close();
}

void Database::close() {
  sqlite3_close(db_);
  db_ = nullptr;
  if (image_) ::munmap(image_, image_bytes_);
  image_ = nullptr;
}

void Database::fail(std::string_view doing) const { fail(doing, sqlite3_extended_errcode(db_)); }

void Database::fail(std::string_view doing, int rc) const {
  if ((rc & 0xff) == SQLITE_INTERRUPT && progress_.cancel && progress_.cancel->load())
    throw InputError(path_, "cancelled");
  throw InputError(path_, std::string(doing) + ": " + describe(rc, sqlite3_errmsg(db_)));
}

const TableDef* Database::table(std::string_view name) const {
  const auto it = by_name_.find(lower(name));
  return it == by_name_.end() ? nullptr : &tables_[it->second];
}

void Database::read_schema() {
  {
    Statement enc(*this, "PRAGMA encoding", "reading the schema");
    utf8_ = enc.step() && lower(enc.text(0)) == "utf-8";
    Statement pages(*this, "PRAGMA page_count", "reading the schema");
    page_count_ = pages.step() ? pages.int64(0) : 0;
    Statement size(*this, "PRAGMA page_size", "reading the schema");
    page_size_ = size.step() ? static_cast<std::uint64_t>(std::max<std::int64_t>(0, size.int64(0))) : 0;
    Statement journal(*this, "PRAGMA journal_mode", "reading the schema");
    rollback_journal_ = journal.step() && lower(journal.text(0)) != "wal";
  }
  Statement st(*this, "SELECT name, rootpage, sql, type FROM sqlite_master WHERE type IN ('table', 'view')",
               "reading the schema");
  while (st.step()) {
    TableDef t;
    t.name = st.text(0);
    t.root_page = st.int64(1);
    if (lower(t.name).rfind("sqlite_", 0) == 0) continue;  // SQLite's own
    if (st.value(3).as_text() == "view") {
      not_tables_.push_back({t.name, "a view"});
      continue;
    }
    if (starts_with_ci(st.value(2).as_text(), "create virtual")) {
      not_tables_.push_back({t.name, "a virtual table"});
      continue;
    }
    if (by_name_.count(lower(t.name))) continue;
    by_name_.emplace(lower(t.name), tables_.size());
    tables_.push_back(std::move(t));
  }
  for (TableDef& t : tables_) read_columns(t);
}

void Database::read_columns(TableDef& t) {
  Statement st(*this, "PRAGMA table_xinfo(" + quote_identifier(t.name) + ")", "reading the columns of " + t.name);
  bool plain = true;
  int pk_columns = 0, index = 0;
  while (st.step()) {
    ColumnDef c;
    c.name = st.text(1);
    c.type = st.text(2);
    const SqlValue dflt = st.value(4);
    c.has_default = !dflt.null() && lower(dflt.as_text()) != "null";
    const std::int64_t pk = st.int64(5), hidden = st.int64(6);
    if (hidden != 0) plain = false;  // generated or hidden columns are not stored as written
    const std::string n = lower(c.name);
    if (n == "rowid" || n == "oid" || n == "_rowid_") plain = false;
    pk_columns += pk > 0;
    c.rowid_alias = pk == 1 && lower(c.type) == "integer";
    c.record_index = index++;
    t.columns.push_back(std::move(c));
  }
  if (pk_columns != 1)
    for (ColumnDef& c : t.columns) c.rowid_alias = false;
  // WITHOUT ROWID tables have no rowid to select.
  sqlite3_stmt* probe = nullptr;
  const bool has_rowid = sqlite3_prepare_v2(db_, ("SELECT rowid FROM " + quote_identifier(t.name) + " LIMIT 0").c_str(),
                                            -1, &probe, nullptr) == SQLITE_OK;
  sqlite3_finalize(probe);
  t.has_rowid = has_rowid;
  if (!has_rowid) {
    plain = false;
    for (ColumnDef& c : t.columns) c.rowid_alias = false;
  }
  t.plain = plain && t.root_page >= 2;
}

std::uint64_t Database::row_count(const TableDef& t) const {
  Statement st(*this, "SELECT count(*) FROM " + quote_identifier(t.name), "counting the rows of " + t.name);
  return st.step() ? static_cast<std::uint64_t>(std::max<std::int64_t>(0, st.int64(0))) : 0;
}

// [SECTION] Statement -----------------------------------------------------------------------------

Statement::Statement(const Database& db, const std::string& sql, std::string_view doing) : db_(db), doing_(doing) {
  if (const int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &st_, nullptr); rc != SQLITE_OK) {
    sqlite3_finalize(st_);
    st_ = nullptr;
    db.fail(doing_, rc);
  }
}

Statement::~Statement() { sqlite3_finalize(st_); }

bool Statement::step() {
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(doing_, rc);
}

SqlValue Statement::value(int column) const {
  SqlValue v;
  switch (sqlite3_column_type(st_, column)) {
    case SQLITE_INTEGER: v.set_int(sqlite3_column_int64(st_, column)); break;
    case SQLITE_FLOAT: v.set_real(sqlite3_column_double(st_, column)); break;
    case SQLITE_TEXT: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, column));
      v.set_bytes(SqlValue::Type::text, p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(st_, column)));
      break;
    }
    case SQLITE_BLOB: {
      const auto* p = static_cast<const char*>(sqlite3_column_blob(st_, column));
      v.set_bytes(SqlValue::Type::blob, p ? p : "",
                  p ? static_cast<std::size_t>(sqlite3_column_bytes(st_, column)) : 0);
      break;
    }
    default: break;
  }
  return v;
}

}  // namespace gpuscope::nsys
