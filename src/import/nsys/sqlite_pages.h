// A direct reader of SQLite's file format for the big tables of an export
// (internal to src/import/nsys).
//
// Why: SQLite's own row-by-row API costs ~1 µs per 20-column row here
// (sqlite3_step plus one sqlite3_column_* call per value), so a 10M-kernel
// export would take ~20 s to read. Table b-tree pages of a database on disk
// are simple (https://www.sqlite.org/fileformat2.html): this walks them in
// rowid order straight from a read-only mapping of the file and decodes only
// the record fields asked for, about 20x faster.
//
// When: only where it reads exactly what SQLite would (Database decides per
// table, sqlite_table.h): a rollback-journal (not WAL) database in UTF-8,
// whose page count agrees with SQLite's, and ordinary rowid tables without
// generated columns or defaults on the columns read. The Database's read
// transaction is open throughout, so no writer can change the file.
//
// Trust: every offset, length, page number and varint is checked against the
// page or the file before use; a page is visited at most once and the tree
// at most 20 levels deep (SQLite's own limit), so any input ends in linear
// time. A problem throws InputError "corrupt SQLite database: …" naming the
// table and the page.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "import/nsys/sqlite_db.h"

namespace gpuscope::nsys {

// Big-endian fields and SQLite varints, bounds-checked.
namespace detail {

inline std::uint32_t be16(const std::uint8_t* p) { return (std::uint32_t{p[0]} << 8) | p[1]; }
inline std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// SQLite varint at p (at most `n` bytes available): returns its length, 0 if it runs past n.
inline std::size_t varint(const std::uint8_t* p, std::size_t n, std::uint64_t* v) {
  if (n > 0 && p[0] < 0x80) {
    *v = p[0];
    return 1;
  }
  std::uint64_t x = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    if (i >= n) return 0;
    x = (x << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  if (n < 9) return 0;
  *v = (x << 8) | p[8];
  return 9;
}

}  // namespace detail

class PageFile {
 public:
  // Maps the database file, or returns nullptr when it cannot be read
  // directly (the caller then uses SQLite for every table).
  static std::unique_ptr<PageFile> open(const Database& db, const LoadProgress& progress);
  PageFile(const PageFile&) = delete;
  PageFile& operator=(const PageFile&) = delete;
  ~PageFile();

  // Calls on_row(rowid, record bytes) for every row of the table b-tree rooted
  // at `root`, in rowid order. The bytes stay valid until the next call.
  // Throws InputError naming `table` for any structural problem.
  template <class OnRow>
  void scan(std::uint32_t root, std::string_view table, OnRow&& on_row) {
    scan(std::vector<std::uint32_t>{root}, table, on_row);
  }
  // The same for consecutive subtrees of one tree (a part from split()).
  template <class OnRow>
  void scan(const std::vector<std::uint32_t>& roots, std::string_view table, OnRow&& on_row);

  // The tree rooted at `root` as up to `parts` runs of consecutive subtrees
  // with about as many rows each, in key order, and the rows of each.
  struct Part {
    std::vector<std::uint32_t> roots;
    std::uint64_t rows = 0;
  };
  std::vector<Part> split(std::uint32_t root, std::string_view table, std::size_t parts);

  // Rows of the table b-tree rooted at `root` (the cell counts of its leaf
  // pages: no record is read). Throws InputError like scan().
  std::uint64_t count(std::uint32_t root, std::string_view table);

  [[noreturn]] void corrupt(std::string_view table, std::uint32_t page, std::string_view what) const;

 private:
  PageFile() = default;
  // What one scan marks and gathers (scans of different tables may run on
  // different threads at once).
  struct ScanState {
    std::vector<std::uint8_t> seen;  // one bit per page: visited
    std::string scratch;             // a record that spilled to overflow pages
  };
  // Visits the leaf pages of the tree in key order: on_leaf(page number, page,
  // cells). Pages already marked in state.seen (sized by the caller) are corrupt.
  template <class OnLeaf>
  void walk(std::uint32_t root, std::string_view table, ScanState& state, OnLeaf&& on_leaf);
  const std::uint8_t* page(std::uint32_t n) const { return base_ + std::size_t{n - 1} * page_size_; }
  // The payload of the leaf cell at `cell` (offset in its page) and its rowid;
  // a payload that spilled to overflow pages is gathered by spilled().
  std::string_view payload(ScanState& state, std::uint32_t page_no, const std::uint8_t* page, std::uint32_t cell,
                           std::int64_t* rowid, std::string_view table) {
    const std::uint8_t* c = page + cell;
    const std::size_t room = usable_ - cell;
    std::uint64_t size = 0, key = 0;
    const std::size_t a = detail::varint(c, room, &size);
    const std::size_t b = a ? detail::varint(c + a, room - a, &key) : 0;
    if (!b) corrupt(table, page_no, "cell runs past the page");
    *rowid = static_cast<std::int64_t>(key);
    if (size > usable_ - 35) return spilled(state, page_no, c + a + b, room - a - b, size, table);
    if (size > room - a - b) corrupt(table, page_no, "cell runs past the page");
    return std::string_view(reinterpret_cast<const char*>(c + a + b), size);
  }
  std::string_view spilled(ScanState& state, std::uint32_t page_no, const std::uint8_t* local_bytes, std::size_t room,
                           std::uint64_t size, std::string_view table);
  void progress(std::uint64_t pages_done);

  std::string path_;
  const std::uint8_t* base_ = nullptr;
  std::size_t map_bytes_ = 0;
  std::uint32_t page_size_ = 0, usable_ = 0, pages_ = 0;
  LoadProgress progress_;
};

// Decodes the fields of a record (SQLite's record format) at the record
// positions asked for, in any order, into SqlValues.
class RecordDecoder {
 public:
  static constexpr int kMaxColumns = 128;  // record index of any column wanted (Database checks)

  // positions[k] = record index of the k-th value wanted, or -1 for a column
  // the table does not have (always NULL); rowid_alias[k]: the value is the
  // rowid (an INTEGER PRIMARY KEY column, stored as NULL in the record).
  RecordDecoder(const std::vector<int>& positions, const std::vector<bool>& rowid_alias);

  // False if the record is malformed (its header runs past it, a reserved
  // serial type, a value past its end). Text and blob values point into `rec`.
  bool decode(std::int64_t rowid, std::string_view rec, SqlValue* out) const;

 private:
  struct Want {
    int position;  // record index
    int slot;      // index into the output
  };
  std::vector<Want> wants_;  // by position, ascending
  std::vector<int> always_null_, rowid_slots_;
  // slot_of_[record index] = output slot, -1 if not wanted; empty when a
  // column is wanted twice (then only the two-pass decoding is used).
  std::vector<int> slot_of_;
};

// [SECTION] Implementation of the page walk (a template, so the row callback inlines) ------------

template <class OnRow>
void PageFile::scan(const std::vector<std::uint32_t>& roots, std::string_view table, OnRow&& on_row) {
  ScanState state;
  state.seen =
      std::vector<std::uint8_t>(std::size_t{pages_} / 8 + 1);  // zeroed (assign() draws a false -Wnonnull from GCC 12)
  for (std::uint32_t root : roots)
    walk(root, table, state, [&](std::uint32_t page_no, const std::uint8_t* p, std::uint32_t cells) {
      for (std::uint32_t i = 0; i < cells; ++i) {
        const std::uint32_t cell = detail::be16(p + 8 + 2 * i);
        if (cell < 8 + 2 * cells || cell >= usable_) corrupt(table, page_no, "cell offset out of range");
        std::int64_t rowid = 0;
        const std::string_view rec = payload(state, page_no, p, cell, &rowid, table);
        if (!on_row(rowid, rec)) corrupt(table, page_no, "malformed record (row " + std::to_string(rowid) + ")");
      }
    });
}

template <class OnLeaf>
void PageFile::walk(std::uint32_t root, std::string_view table, ScanState& state, OnLeaf&& on_leaf) {
  constexpr int kMaxDepth = 20;  // SQLite's BTCURSOR_MAX_DEPTH
  struct Frame {
    std::uint32_t page, next, cells;
  };
  Frame stack[kMaxDepth];
  int depth = 0;
  std::uint64_t visited = 0;
  std::vector<std::uint8_t>& seen = state.seen;  // sized by the caller
  auto push = [&](std::uint32_t n, std::uint32_t from) {
    if (n < 2 || n > pages_) corrupt(table, from, "child page " + std::to_string(n) + " out of range");
    if (seen[n >> 3] & (1u << (n & 7))) corrupt(table, from, "page " + std::to_string(n) + " reached twice");
    seen[n >> 3] |= static_cast<std::uint8_t>(1u << (n & 7));
    if (depth == kMaxDepth) corrupt(table, n, "b-tree deeper than 20 levels");
    const std::uint8_t* p = page(n);
    if (p[0] != 0x05 && p[0] != 0x0d) corrupt(table, n, "not a table b-tree page");
    const std::uint32_t cells = detail::be16(p + 3);
    const std::uint32_t header = p[0] == 0x05 ? 12 : 8;
    if (header + 2 * cells > usable_) corrupt(table, n, "more cells than fit in a page");
    stack[depth++] = Frame{n, 0, cells};
    if ((++visited & 1023) == 0) progress(visited);
  };
  push(root, root);
  while (depth > 0) {
    Frame& f = stack[depth - 1];
    const std::uint8_t* p = page(f.page);
    if (p[0] == 0x05) {  // interior: left children in key order, then the right-most
      if (f.next > f.cells) {
        --depth;
        continue;
      }
      std::uint32_t child;
      if (f.next < f.cells) {
        const std::uint32_t cell = detail::be16(p + 12 + 2 * f.next);
        if (cell < 12 + 2 * f.cells || cell + 4 > usable_) corrupt(table, f.page, "cell offset out of range");
        child = detail::be32(p + cell);
      } else {
        child = detail::be32(p + 8);
      }
      ++f.next;
      push(child, f.page);
      continue;
    }
    on_leaf(f.page, p, f.cells);
    --depth;
  }
}

}  // namespace gpuscope::nsys
