// Reading one table of an export row by row (internal to src/import/nsys):
// the columns asked for by name, in that order, a column the table lacks as
// NULL, rows in rowid order. Through the direct page reader (sqlite_pages.h)
// where the table allows it, else through SQLite; both give the same values.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "import/nsys/sqlite_db.h"
#include "import/nsys/sqlite_pages.h"

namespace gpuscope::nsys {

class TableReader {
 public:
  // `pages` may be null (no direct reading for this database).
  TableReader(const Database& db, PageFile* pages, const TableDef& table, std::vector<std::string_view> columns)
      : db_(db), table_(table), names_(columns.begin(), columns.end()) {
    bool direct = pages != nullptr && table.plain;
    for (std::string_view name : columns) {
      const ColumnDef* c = table.column(name);
      positions_.push_back(c ? c->record_index : -1);
      rowid_alias_.push_back(c && c->rowid_alias);
      present_.push_back(c != nullptr);
      if (c && c->has_default) direct = false;  // a short record would mean the default, not NULL
      if (c && c->record_index >= RecordDecoder::kMaxColumns) direct = false;
    }
    pages_ = direct ? pages : nullptr;
  }

  bool direct() const { return pages_ != nullptr; }

  bool has(std::size_t k) const { return present_[k]; }
  const std::string& table_name() const { return table_.name; }
  const std::vector<std::string>& columns() const { return names_; }

  // Calls on_row(const SqlValue* values) for every row; values[k] is the k-th
  // column asked for. Throws InputError for corrupt or unreadable data.
  template <class OnRow>
  void for_each(OnRow&& on_row) {
    if (pages_)
      scan_direct({static_cast<std::uint32_t>(table_.root_page)}, on_row);
    else
      scan_sqlite(on_row);
  }

  // The table as up to `parts` parts of about equal size that can be read on
  // different threads (one part through SQLite): their count.
  std::size_t split(std::size_t parts) {
    if (pages_)
      parts_ = pages_->split(static_cast<std::uint32_t>(table_.root_page), table_.name, parts);
    else
      parts_ = {PageFile::Part{}};
    return parts_.size();
  }
  std::uint64_t rows(std::size_t part) const { return parts_[part].rows; }  // 0 through SQLite (not counted)
  // for_each() over one part of split(), in key order.
  template <class OnRow>
  void for_each(std::size_t part, OnRow&& on_row) {
    if (pages_)
      scan_direct(parts_[part].roots, on_row);
    else
      scan_sqlite(on_row);
  }

 private:
  template <class OnRow>
  void scan_direct(const std::vector<std::uint32_t>& roots, OnRow& on_row) {
    std::vector<SqlValue> values(names_.size());
    const RecordDecoder decoder(positions_, rowid_alias_);
    pages_->scan(roots, table_.name, [&](std::int64_t rowid, std::string_view record) {
      if (!decoder.decode(rowid, record, values.data())) return false;
      on_row(static_cast<const SqlValue*>(values.data()));
      return true;
    });
  }
  template <class OnRow>
  void scan_sqlite(OnRow& on_row) {
    std::vector<SqlValue> values(names_.size());
    std::string sql = "SELECT ";
    for (std::size_t k = 0; k < names_.size(); ++k) {
      if (k) sql += ", ";
      sql += present_[k] ? quote_identifier(names_[k]) : "NULL";
    }
    if (names_.empty()) sql += "NULL";
    sql += " FROM " + quote_identifier(table_.name);
    if (table_.has_rowid) sql += " ORDER BY rowid";
    // Parts of several tables may be read on different threads (run_jobs):
    // those read through SQLite take turns on the one connection.
    const std::lock_guard<std::mutex> turn(db_.connection_lock());
    Statement st(db_, sql, "reading " + table_.name);
    while (st.step()) {
      for (std::size_t k = 0; k < names_.size(); ++k) values[k] = st.value(static_cast<int>(k));
      on_row(static_cast<const SqlValue*>(values.data()));
    }
  }

  const Database& db_;
  const TableDef& table_;
  std::vector<std::string> names_;
  std::vector<int> positions_;
  std::vector<bool> rowid_alias_, present_;
  PageFile* pages_ = nullptr;
  std::vector<PageFile::Part> parts_;
};

}  // namespace gpuscope::nsys
