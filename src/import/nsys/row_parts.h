// Reading a big table in parts, on several threads (internal to src/import/nsys).
//
// A 10M-kernel export has ~10M rows in each of its two big tables. Their
// b-trees split into subtrees of about equal size (PageFile::split, which
// counts each subtree's rows from its leaf headers); the table's columns are
// sized for all of them at once (size_columns), and each part decodes its
// rows on its own thread straight into its own range of them (KernelWriter,
// ApiCallWriter). Afterwards the rows a part skipped are closed up
// (close_gaps), so the rows come out exactly as one thread would have read
// them, and no row is copied twice. Only the direct page reader splits;
// through SQLite a table is one part, counted by SQLite.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "trace/fresh_memory.h"
#include "trace/tables.h"

namespace gpuscope::nsys {

// Runs job(part) for parts 0..n-1 on up to `threads` threads (the calling
// one included); rethrows the first exception of a part after all finished.
template <class Job>
void run_parts(std::size_t n, unsigned threads, Job&& job) {
  const std::size_t workers = std::min<std::size_t>(threads > 0 ? threads : 1, n);
  if (workers <= 1) {
    for (std::size_t p = 0; p < n; ++p) job(p);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  auto loop = [&] {
    for (std::size_t p; (p = next.fetch_add(1)) < n;) {
      try {
        job(p);
      } catch (...) {
        errors[p] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < workers; ++i) pool.emplace_back(loop);
  loop();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

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
  run_parts(columns, threads, [&](std::size_t c) {
    std::size_t i = 0;
    t.for_each_column([&](ColumnInfo info, auto& col) {
      if (i++ != c || (info.flags & (kSparse | kDerived))) return;
      detail::prepare_column(col, rows);
      col.resize(rows);
    });
  });
}

// A part's sparse column: empty while all its values are zero, then sized
// for the part's `capacity` rows (merged by merge_sparse()).
template <class T>
struct SparsePart {
  std::vector<T> values;
  void set(std::size_t i, T x, std::size_t capacity) {
    if (x != T{} && values.empty()) values.resize(capacity);
    if (!values.empty()) values[i] = x;
  }
};

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

// A sparse column from its parts' values (values_of(p): part p's, empty
// while all zero): stays empty when every part's is.
template <class T, class ValuesOf>
void merge_sparse(std::vector<T>& col, const std::vector<std::size_t>& written, ValuesOf&& values_of) {
  std::size_t rows = 0;
  bool any = false;
  for (std::size_t p = 0; p < written.size(); ++p) {
    rows += written[p];
    any |= !values_of(p).empty();
  }
  if (!any) return;
  col.assign(rows, T{});
  for (std::size_t p = 0, at = 0; p < written.size(); at += written[p], ++p) {
    const std::vector<T>& v = values_of(p);
    if (!v.empty()) std::copy_n(v.begin(), written[p], col.begin() + static_cast<std::ptrdiff_t>(at));
  }
}

inline std::uint16_t narrow16(std::uint32_t v) {
  return static_cast<std::uint16_t>(std::min<std::uint32_t>(v, 0xffff));
}

// Kernel rows in place, as TraceBuilder::add_kernel stores them: a part's
// rows from row `base` of the table's columns (sized by size_columns), at
// most `capacity` of them (the rows its pages hold).
class KernelWriter {
 public:
  KernelWriter(KernelTable& t, std::size_t base, std::size_t capacity)
      : capacity_(capacity),
        start_(t.start.data() + base),
        end_(t.end.data() + base),
        track_(t.track.data() + base),
        correlation_(t.correlation.data() + base),
        name_(t.name.data() + base),
        grid_x_(t.grid_x.data() + base),
        grid_y_(t.grid_y.data() + base),
        grid_z_(t.grid_z.data() + base),
        block_x_(t.block_x.data() + base),
        block_y_(t.block_y.data() + base),
        block_z_(t.block_z.data() + base),
        registers_(t.registers.data() + base),
        static_smem_(t.static_smem.data() + base),
        dynamic_smem_(t.dynamic_smem.data() + base) {}
  // False when the part holds no room for another row (its pages changed).
  bool add(const KernelRow& r) {
    if (n_ == capacity_) [[unlikely]]
      return false;
    const std::size_t i = n_++;
    start_[i] = r.start;
    end_[i] = r.end;
    track_[i] = r.track;
    correlation_[i] = r.correlation;
    name_[i] = r.name;
    mangled.set(i, r.mangled == r.name ? StringId{0} : r.mangled, capacity_);
    grid_x_[i] = r.grid_x;
    grid_y_[i] = narrow16(r.grid_y);
    grid_z_[i] = narrow16(r.grid_z);
    block_x_[i] = narrow16(r.block_x);
    block_y_[i] = narrow16(r.block_y);
    block_z_[i] = narrow16(r.block_z);
    registers_[i] = r.registers;
    static_smem_[i] = r.static_smem;
    dynamic_smem_[i] = r.dynamic_smem;
    graph_id.set(i, r.graph_id, capacity_);
    graph_node_id.set(i, r.graph_node_id, capacity_);
    return true;
  }
  std::size_t rows() const { return n_; }  // written so far

  // The sparse columns of this part, by KernelTable column.
  SparsePart<StringId> mangled;
  SparsePart<std::uint32_t> graph_id;
  SparsePart<std::uint64_t> graph_node_id;

 private:
  std::size_t n_ = 0, capacity_;
  TimeNs *start_, *end_;
  TrackId* track_;
  std::uint32_t* correlation_;
  StringId* name_;
  std::uint32_t* grid_x_;
  std::uint16_t *grid_y_, *grid_z_, *block_x_, *block_y_, *block_z_, *registers_;
  std::uint32_t *static_smem_, *dynamic_smem_;
};

// API call rows in place, as TraceBuilder::add_api_call stores them.
class ApiCallWriter {
 public:
  ApiCallWriter(ApiCallTable& t, std::size_t base, std::size_t capacity)
      : capacity_(capacity),
        start_(t.start.data() + base),
        end_(t.end.data() + base),
        track_(t.track.data() + base),
        correlation_(t.correlation.data() + base),
        name_(t.name.data() + base),
        domain_(t.domain.data() + base) {}
  bool add(const ApiCallRow& r) {
    if (n_ == capacity_) [[unlikely]]
      return false;
    const std::size_t i = n_++;
    start_[i] = r.start;
    end_[i] = r.end;
    track_[i] = r.track;
    correlation_[i] = r.correlation;
    name_[i] = r.name;
    domain_[i] = static_cast<std::uint8_t>(r.domain);
    cbid.set(i, r.cbid, capacity_);
    status.set(i, r.status, capacity_);
    return true;
  }
  std::size_t rows() const { return n_; }

  SparsePart<std::uint32_t> cbid;
  SparsePart<std::int32_t> status;

 private:
  std::size_t n_ = 0, capacity_;
  TimeNs *start_, *end_;
  TrackId* track_;
  std::uint32_t* correlation_;
  StringId* name_;
  std::uint8_t* domain_;
};

}  // namespace gpuscope::nsys
