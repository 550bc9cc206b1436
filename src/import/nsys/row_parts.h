// Reading a big table in parts, on several threads (internal to src/import/nsys).
//
// A 10M-kernel export has ~10M rows in each of its two big tables. Their
// b-trees split into subtrees of about equal size (PageFile::split); each
// part is decoded on its own thread into columns of its own, and the parts
// are appended in order afterwards, so the rows come out exactly as one
// thread would have read them. Only the direct page reader splits; through
// SQLite a table is one part.
//
// Rows are appended a block at a time: values go to small per-column arrays
// and each column grows by one insert() per 1,024 rows (TraceBuilder's add_*
// costs ~300 instructions per kernel in push_backs alone).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <type_traits>
#include <vector>

#include "trace/detail/fresh_memory.h"
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

// Room for `rows` rows in every stored non-sparse column, on huge pages for
// big ones and mapped before the rows are written (one call instead of a page
// fault per 2 MiB; on the reference VM a fault costs ~10 µs). `rows` comes
// from the file's page headers: callers bound it by the file's size
// (rows_bound), so that a crafted file cannot make it reserve more than a
// few times its own size.
template <class Table>
void reserve_rows(Table& t, std::size_t rows) {
  t.for_each_column([&](ColumnInfo info, auto& col) {
    if (info.flags & (kSparse | kDerived)) return;
    if (col.capacity() < rows) detail::regrow(col, rows);
    detail::populate(col.data() + col.size(), (col.capacity() - col.size()) * sizeof(col[0]));
  });
}

// At most one row per 16 bytes of the file: every real export's rows take
// more room than that (cell pointer, cell header, record header, values).
inline std::uint64_t rows_bound(std::uint64_t rows, std::uint64_t file_bytes) {
  return std::min<std::uint64_t>(rows, file_bytes / 16 + 1024);
}

// Appends the rows of `from` to `to`, column by column (sparse columns stay
// empty while both sides are all zero).
template <class Table>
void append_rows(Table& to, Table& from) {
  const std::size_t n_to = to.size(), n_from = from.size();
  int i = 0;
  to.for_each_column([&](ColumnInfo info, auto& dst) {
    int j = 0;
    from.for_each_column([&](ColumnInfo, auto& src) {
      if (j++ != i) return;
      if constexpr (std::is_same_v<decltype(dst), decltype(src)>) {
        if (info.flags & kDerived) return;
        if (info.flags & kSparse) {
          if (src.empty() && dst.empty()) return;
          if (dst.empty()) dst.resize(n_to);
          if (src.empty()) {
            dst.resize(n_to + n_from);
            return;
          }
        }
        dst.insert(dst.end(), src.begin(), src.end());
      }
    });
    ++i;
  });
}

// A block of up to 1,024 values of one column, appended with one insert().
template <class T, bool kSparseColumn = false>
struct ColumnBlock {
  T v[1024];
  bool any = false;  // a non-zero value (sparse columns)

  void set(std::size_t i, T x) {
    v[i] = x;
    if constexpr (kSparseColumn) any |= x != T{};
  }
  void flush(std::vector<T>& col, std::size_t rows_before, std::size_t n) {
    if constexpr (kSparseColumn) {
      if (col.empty()) {
        if (!any) return;
        col.resize(rows_before);
      }
      any = false;
    }
    col.insert(col.end(), v, v + n);
  }
};

inline std::uint16_t narrow16(std::uint32_t v) {
  return static_cast<std::uint16_t>(std::min<std::uint32_t>(v, 0xffff));
}

// Kernel rows into a KernelTable, as TraceBuilder::add_kernel stores them.
class KernelAppender {
 public:
  explicit KernelAppender(KernelTable& t) : t_(t) {}
  void add(const KernelRow& r) {
    const std::size_t i = n_;
    start_.set(i, r.start);
    end_.set(i, r.end);
    track_.set(i, r.track);
    correlation_.set(i, r.correlation);
    name_.set(i, r.name);
    mangled_.set(i, r.mangled == r.name ? StringId{0} : r.mangled);
    grid_x_.set(i, r.grid_x);
    grid_y_.set(i, narrow16(r.grid_y));
    grid_z_.set(i, narrow16(r.grid_z));
    block_x_.set(i, narrow16(r.block_x));
    block_y_.set(i, narrow16(r.block_y));
    block_z_.set(i, narrow16(r.block_z));
    registers_.set(i, r.registers);
    static_smem_.set(i, r.static_smem);
    dynamic_smem_.set(i, r.dynamic_smem);
    graph_id_.set(i, r.graph_id);
    graph_node_id_.set(i, r.graph_node_id);
    if (++n_ == 1024) flush();
  }
  void flush() {
    const std::size_t before = t_.size();
    start_.flush(t_.start, before, n_);
    end_.flush(t_.end, before, n_);
    track_.flush(t_.track, before, n_);
    correlation_.flush(t_.correlation, before, n_);
    name_.flush(t_.name, before, n_);
    mangled_.flush(t_.mangled, before, n_);
    grid_x_.flush(t_.grid_x, before, n_);
    grid_y_.flush(t_.grid_y, before, n_);
    grid_z_.flush(t_.grid_z, before, n_);
    block_x_.flush(t_.block_x, before, n_);
    block_y_.flush(t_.block_y, before, n_);
    block_z_.flush(t_.block_z, before, n_);
    registers_.flush(t_.registers, before, n_);
    static_smem_.flush(t_.static_smem, before, n_);
    dynamic_smem_.flush(t_.dynamic_smem, before, n_);
    graph_id_.flush(t_.graph_id, before, n_);
    graph_node_id_.flush(t_.graph_node_id, before, n_);
    n_ = 0;
  }
  std::size_t rows() const { return t_.size() + n_; }  // appended so far, the block included

 private:
  KernelTable& t_;
  std::size_t n_ = 0;
  ColumnBlock<TimeNs> start_, end_;
  ColumnBlock<TrackId> track_;
  ColumnBlock<std::uint32_t> correlation_;
  ColumnBlock<StringId> name_;
  ColumnBlock<StringId, true> mangled_;
  ColumnBlock<std::uint32_t> grid_x_;
  ColumnBlock<std::uint16_t> grid_y_, grid_z_, block_x_, block_y_, block_z_, registers_;
  ColumnBlock<std::uint32_t> static_smem_, dynamic_smem_;
  ColumnBlock<std::uint32_t, true> graph_id_;
  ColumnBlock<std::uint64_t, true> graph_node_id_;
};

// API call rows into an ApiCallTable, as TraceBuilder::add_api_call stores them.
class ApiCallAppender {
 public:
  explicit ApiCallAppender(ApiCallTable& t) : t_(t) {}
  void add(const ApiCallRow& r) {
    const std::size_t i = n_;
    start_.set(i, r.start);
    end_.set(i, r.end);
    track_.set(i, r.track);
    correlation_.set(i, r.correlation);
    name_.set(i, r.name);
    domain_.set(i, static_cast<std::uint8_t>(r.domain));
    cbid_.set(i, r.cbid);
    status_.set(i, r.status);
    if (++n_ == 1024) flush();
  }
  void flush() {
    const std::size_t before = t_.size();
    start_.flush(t_.start, before, n_);
    end_.flush(t_.end, before, n_);
    track_.flush(t_.track, before, n_);
    correlation_.flush(t_.correlation, before, n_);
    name_.flush(t_.name, before, n_);
    domain_.flush(t_.domain, before, n_);
    cbid_.flush(t_.cbid, before, n_);
    status_.flush(t_.status, before, n_);
    n_ = 0;
  }
  std::size_t rows() const { return t_.size() + n_; }

 private:
  ApiCallTable& t_;
  std::size_t n_ = 0;
  ColumnBlock<TimeNs> start_, end_;
  ColumnBlock<TrackId> track_;
  ColumnBlock<std::uint32_t> correlation_;
  ColumnBlock<StringId> name_;
  ColumnBlock<std::uint8_t> domain_;
  ColumnBlock<std::uint32_t, true> cbid_;
  ColumnBlock<std::int32_t, true> status_;
};

}  // namespace gpuscope::nsys
