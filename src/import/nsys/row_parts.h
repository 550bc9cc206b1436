// Reading a big table in parts, on several threads (internal to src/import/nsys).
//
// A 10M-kernel export has ~10M rows in each of its two big tables. Their
// b-trees split into subtrees of about equal size (PageFile::split, which
// counts each subtree's rows from its leaf headers); the table's columns are
// sized for all of them at once (size_columns), and each part decodes its
// rows on its own thread straight into its own range of them (RowWriter).
// Afterwards the rows a part skipped are closed up (close_gaps), so the rows
// come out exactly as one thread would have read them, and no row is copied
// twice. Only the direct page reader splits;
// through SQLite a table is one part, counted by SQLite.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include "trace/fresh_memory.h"
#include "trace/parallel.h"
#include "trace/row_values.h"
#include "trace/tables.h"

namespace gpuscope::nsys {

// At most one row per 16 bytes of the file, for a reservation made from a
// count the file claims: every real export's rows take more room than that
// (cell pointer, cell header, record header, values), and a crafted file
// cannot make it reserve more than a few times its own size.
inline std::uint64_t rows_bound(std::uint64_t rows, std::uint64_t file_bytes) {
  return std::min<std::uint64_t>(rows, file_bytes / 16 + 1024);
}

// Rows of a table that parts may write directly: at most one per 8 bytes of
// the file. Every row of the tables read in parts takes more than that (a
// 2-byte cell pointer, the cell's size and rowid, a record header of one
// byte per column: 12 bytes at least), so only a crafted file, whose leaf
// headers claim cells that overlap, counts more; it is refused before any
// memory is set aside for its count.
inline bool rows_fit(std::uint64_t rows, std::uint64_t file_bytes) { return rows <= file_bytes / 8 + 1024; }

// Every stored non-sparse column of `t` sized for `rows` rows, on huge pages
// for big ones and mapped before it is written, the columns shared out over
// `threads` threads (mapping fresh memory is most of the cost of a column on
// the VMs we measure on: ~10 us per 4 KiB page faulted). The parts then write
// their rows in place (RowWriter), so no part's rows are copied again.
template <class Table>
void size_columns(Table& t, std::size_t rows, unsigned threads) {
  std::size_t columns = 0;
  t.for_each_column([&](ColumnInfo, auto&) { ++columns; });
  run_jobs(columns, threads, [&](std::size_t c) {
    std::size_t i = 0;
    t.for_each_column([&](ColumnInfo info, auto& col) {
      if (i++ != c || (info.flags & (kSparse | kDerived))) return;
      detail::prepare_column(col, rows);
      col.resize(rows);
    });
  });
}

// After every part wrote its rows: the rows of part p, written[p] of them
// from base[p], moved down to follow the part before it (a part writes fewer
// rows than it holds when it skips some), and the columns cut to the rows
// written. Sparse columns are merge_sparse()'s. Returns the rows.
template <class Table>
std::size_t close_gaps(Table& t, const std::vector<std::size_t>& base, const std::vector<std::size_t>& written) {
  std::size_t rows = 0;
  for (std::size_t n : written) rows += n;
  t.for_each_column([&](ColumnInfo info, auto& col) {
    if (info.flags & (kSparse | kDerived)) return;
    for (std::size_t p = 0, at = 0; p < base.size(); at += written[p], ++p)
      if (at != base[p] && written[p] > 0)
        std::memmove(col.data() + at, col.data() + base[p], written[p] * sizeof(col[0]));
    col.resize(rows);
  });
  return rows;
}

// A part's rows written in place, as TraceBuilder::add_* stores them
// (trace/row_values.h): from row `base` of the table's columns (sized by
// size_columns), at most `capacity` of them (the rows its pages hold). The
// part's sparse columns are its own (sparse(): empty while all zero, else
// sized for `capacity` rows; merge_sparse() joins them).
template <class Table, class Row>
class RowWriter {
 public:
  RowWriter(Table& t, std::size_t base, std::size_t capacity) : capacity_(capacity) {
    std::size_t c = 0;
    t.for_each_row_column(Row{}, [&](auto tag, auto& col, auto) {
      if constexpr ((decltype(tag)::flags & kSparse) == 0) dense_.at(c) = col.data() + base;
      ++c;
    });
  }
  // False when the part holds no room for another row (its pages changed).
  bool add(const Row& row) {
    if (n_ == capacity_) [[unlikely]]
      return false;
    const std::size_t i = n_++;
    std::size_t c = 0;
    sparse_.for_each_row_column(detail::stored_row(row), [&](auto tag, auto& own, auto value) {
      using T = typename std::remove_cvref_t<decltype(own)>::value_type;
      const T x = detail::to_column<T>(value);
      if constexpr ((decltype(tag)::flags & kSparse) != 0) {
        if (x != T{} && own.empty()) own.resize(capacity_);
        if (!own.empty()) own[i] = x;
      } else {
        static_cast<T*>(dense_[c])[i] = x;
      }
      ++c;
    });
    return true;
  }
  std::size_t rows() const { return n_; }  // written so far
  const Table& sparse() const { return sparse_; }

 private:
  std::size_t n_ = 0, capacity_;
  std::array<void*, 32> dense_{};  // by column: where this part's rows of a non-sparse one start
  Table sparse_;                   // only its sparse columns are used
};

// Each sparse column of `t` from its parts' (parts[p].sparse(), written[p]
// rows each): stays empty when every part's is.
template <class Table, class Row>
void merge_sparse(Table& t, const std::vector<std::size_t>& written, const std::vector<RowWriter<Table, Row>>& parts) {
  std::size_t rows = 0;
  for (std::size_t n : written) rows += n;
  std::size_t c = 0;
  t.for_each_column([&](ColumnInfo info, auto& col) {
    const std::size_t column = c++;
    if ((info.flags & (kSparse | kDerived)) != kSparse) return;
    using Column = std::remove_cvref_t<decltype(col)>;
    auto part_column = [&](std::size_t p) -> const Column& {
      const Column* found = nullptr;
      std::size_t k = 0;
      parts[p].sparse().for_each_column([&](ColumnInfo, const auto& own) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(own)>, Column>) {
          if (k == column) found = &own;
        }
        ++k;
      });
      return *found;
    };
    bool any = false;
    for (std::size_t p = 0; p < parts.size(); ++p) any |= !part_column(p).empty();
    if (!any) return;
    col.assign(rows, typename Column::value_type{});
    for (std::size_t p = 0, at = 0; p < parts.size(); at += written[p], ++p) {
      const Column& v = part_column(p);
      if (!v.empty()) std::copy_n(v.begin(), written[p], col.begin() + static_cast<std::ptrdiff_t>(at));
    }
  });
}

}  // namespace gpuscope::nsys
