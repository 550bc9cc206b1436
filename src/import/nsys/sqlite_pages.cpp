#include "import/nsys/sqlite_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <thread>

namespace gpuscope::nsys {

using detail::be16;
using detail::be32;
using detail::varint;

// [SECTION] The mapped file ----------------------------------------------------------------------

std::unique_ptr<PageFile> PageFile::open(const Database& db, const LoadProgress& progress) {
  if (!db.utf8() || !db.rollback_journal() || db.page_count() < 2) return nullptr;
  const int fd = ::open(db.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 512) {
    ::close(fd);
    return nullptr;
  }
  std::uint8_t header[100];
  const bool read_ok = ::pread(fd, header, sizeof header, 0) == static_cast<ssize_t>(sizeof header);
  if (!read_ok || std::memcmp(header, "SQLite format 3", 16) != 0) {
    ::close(fd);
    return nullptr;
  }
  std::uint32_t page_size = be16(header + 16);
  if (page_size == 1) page_size = 65536;
  const std::uint32_t reserved = header[20];
  // Legacy (rollback journal) read and write versions only; a power-of-two
  // page size of 512..65536; at least 480 usable bytes, as SQLite requires.
  const bool ok = header[18] == 1 && header[19] == 1 && page_size >= 512 && page_size <= 65536 &&
                  (page_size & (page_size - 1)) == 0 && page_size - reserved >= 480;
  const auto file_pages = static_cast<std::uint64_t>(st.st_size) / (ok ? page_size : 1);
  // SQLite's page count must be what the file holds.
  if (!ok || static_cast<std::uint64_t>(db.page_count()) > file_pages || db.page_count() > 0x7fffffff) {
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<PageFile> f(new PageFile());
  f->path_ = db.path();
  f->progress_ = progress;
  f->page_size_ = page_size;
  f->usable_ = page_size - reserved;
  f->pages_ = static_cast<std::uint32_t>(db.page_count());
  f->map_bytes_ = std::size_t{f->pages_} * page_size;
  void* m = ::mmap(nullptr, f->map_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return nullptr;
  ::madvise(m, f->map_bytes_, MADV_SEQUENTIAL);
  f->base_ = static_cast<const std::uint8_t*>(m);
  return f;
}

PageFile::~PageFile() {
  if (base_) ::munmap(const_cast<std::uint8_t*>(base_), map_bytes_);
}

std::uint64_t PageFile::count(std::uint32_t root, std::string_view table) {
  std::uint64_t rows = 0;
  ScanState state;
  state.seen.assign(pages_ / 8 + 1, 0);
  walk(root, table, state, [&](std::uint32_t, const std::uint8_t*, std::uint32_t cells) { rows += cells; });
  return rows;
}

std::vector<PageFile::Part> PageFile::split(std::uint32_t root, std::string_view table, std::size_t parts) {
  // The subtrees a few levels down (at most 3), until there are plenty of them.
  std::vector<std::uint32_t> frontier{root};
  for (int level = 0; level < 3 && parts > 1 && frontier.size() < 16 * parts; ++level) {
    std::vector<std::uint32_t> next;
    for (std::uint32_t n : frontier) {
      if (n < 2 || n > pages_) corrupt(table, n, "page out of range");
      const std::uint8_t* p = page(n);
      if (p[0] != 0x05) return {Part{{root}, count(root, table)}};  // a leaf this high: a small tree
      const std::uint32_t cells = be16(p + 3);
      if (12 + 2 * cells > usable_) corrupt(table, n, "more cells than fit in a page");
      for (std::uint32_t i = 0; i < cells; ++i) {
        const std::uint32_t cell = be16(p + 12 + 2 * i);
        if (cell < 12 + 2 * cells || cell + 4 > usable_) corrupt(table, n, "cell offset out of range");
        next.push_back(be32(p + cell));
      }
      next.push_back(be32(p + 8));
    }
    frontier.swap(next);
  }
  // Rows under each (one walk over every leaf header), then runs of about
  // total / parts rows each. The walk touches every page of the table, so
  // it runs on `parts` threads, each over a run of subtrees with pages
  // marked of its own; a page two runs reach is corrupt, as in one walk.
  std::vector<std::uint64_t> rows(frontier.size(), 0);
  const std::size_t workers = std::clamp<std::size_t>(parts, 1, frontier.size());
  std::vector<ScanState> states(workers);
  std::vector<std::exception_ptr> errors(workers);
  auto count_run = [&](std::size_t w) {
    try {
      ScanState& state = states[w];
      state.seen.assign(pages_ / 8 + 1, 0);
      for (std::size_t i = frontier.size() * w / workers; i < frontier.size() * (w + 1) / workers; ++i)
        walk(frontier[i], table, state,
             [&](std::uint32_t, const std::uint8_t*, std::uint32_t cells) { rows[i] += cells; });
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  {
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(count_run, w);
    count_run(0);
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  for (std::size_t w = 1; w < workers; ++w)
    for (std::size_t b = 0; b < states[0].seen.size(); ++b) {
      if (const std::uint8_t both = states[0].seen[b] & states[w].seen[b]) {
        const auto n = static_cast<std::uint32_t>(b * 8 + static_cast<std::size_t>(__builtin_ctz(both)));
        corrupt(table, n, "page " + std::to_string(n) + " reached twice");
      }
      states[0].seen[b] |= states[w].seen[b];
    }
  std::uint64_t total = 0;
  for (std::uint64_t r : rows) total += r;
  std::vector<Part> out(1);
  for (std::size_t i = 0; i < frontier.size(); ++i) {
    if (out.back().rows > 0 && out.size() < parts && (out.back().rows + rows[i] / 2) * parts > total * out.size())
      out.emplace_back();
    out.back().roots.push_back(frontier[i]);
    out.back().rows += rows[i];
  }
  return out;
}

void PageFile::corrupt(std::string_view table, std::uint32_t page, std::string_view what) const {
  throw InputError(path_, "corrupt SQLite database: table " + std::string(table) + ", page " + std::to_string(page) +
                              ": " + std::string(what));
}

void PageFile::progress(std::uint64_t pages_done) {
  if (progress_.cancel && progress_.cancel->load()) throw InputError(path_, "cancelled");
  if (progress_.on_progress) progress_.on_progress(pages_done * page_size_, map_bytes_);
}

std::string_view PageFile::spilled(ScanState& state, std::uint32_t page_no, const std::uint8_t* c, std::size_t room,
                                   std::uint64_t size, std::string_view table) {
  const std::uint32_t max_local = usable_ - 35;
  // Spilled: the first bytes here, the rest on a chain of overflow pages
  // (each: 4-byte next page number, then usable - 4 bytes of payload).
  const std::uint64_t min_local = (std::uint64_t{usable_ - 12} * 32 / 255) - 23;
  const std::uint64_t k = min_local + ((size - min_local) % (usable_ - 4));
  const std::uint64_t local = k <= max_local ? k : min_local;
  if (local + 4 > room) corrupt(table, page_no, "cell runs past the page");
  if (size > std::uint64_t{pages_} * usable_) corrupt(table, page_no, "record larger than the file");
  std::string& scratch = state.scratch;
  std::vector<std::uint8_t>& seen = state.seen;
  scratch.assign(reinterpret_cast<const char*>(c), local);
  std::uint32_t next = be32(c + local);
  std::uint64_t left = size - local;
  while (left > 0) {
    if (next < 2 || next > pages_) corrupt(table, page_no, "overflow page out of range");
    // Each overflow page belongs to one record: seeing one twice means a
    // loop (and bounds the work by the file's size).
    if (seen[next >> 3] & (1u << (next & 7))) corrupt(table, page_no, "overflow page reached twice");
    seen[next >> 3] |= static_cast<std::uint8_t>(1u << (next & 7));
    const std::uint8_t* o = page(next);
    const std::uint64_t n = std::min<std::uint64_t>(left, usable_ - 4);
    scratch.append(reinterpret_cast<const char*>(o + 4), n);
    left -= n;
    next = be32(o);
  }
  return scratch;
}

// [SECTION] Records ------------------------------------------------------------------------------

RecordDecoder::RecordDecoder(const std::vector<int>& positions, const std::vector<bool>& rowid_alias) {
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const int slot = static_cast<int>(k);
    if (k < rowid_alias.size() && rowid_alias[k])
      rowid_slots_.push_back(slot);
    else if (positions[k] < 0)
      always_null_.push_back(slot);
    else
      wants_.push_back(Want{positions[k], slot});
  }
  std::sort(wants_.begin(), wants_.end(), [](const Want& a, const Want& b) { return a.position < b.position; });
  if (!wants_.empty()) slot_of_.assign(static_cast<std::size_t>(wants_.back().position) + 1, -1);
  for (const Want& w : wants_) {
    if (slot_of_[static_cast<std::size_t>(w.position)] >= 0) {
      slot_of_.clear();
      break;
    }
    slot_of_[static_cast<std::size_t>(w.position)] = w.slot;
  }
}

namespace {

// Bytes of a value by serial type, for the one-byte types (0..127). The
// reserved types 10 and 11 get a length no record has, so that the check of
// the end offset against the record's size refuses them too.
constexpr std::uint64_t kReserved = std::uint64_t{1} << 40;
struct SerialLengths {
  std::uint64_t len[128];
  constexpr SerialLengths() : len{} {
    constexpr std::uint64_t fixed[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, kReserved, kReserved};
    for (int t = 0; t < 128; ++t) len[t] = t < 12 ? fixed[t] : static_cast<std::uint64_t>((t - 12) / 2);
  }
};
constexpr SerialLengths kSerial;

// Whether the first `n` bytes at p are all below 0x80 (one-byte varints).
inline bool one_byte_types(const std::uint8_t* p, int n) {
  std::uint64_t high = 0;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    high |= w;
  }
  for (; i < n; ++i) high |= p[i];
  return (high & 0x8080808080808080ull) == 0;
}

inline std::uint64_t load_be64(const std::uint8_t* p) {
  std::uint64_t x;
  std::memcpy(&x, p, 8);
  return __builtin_bswap64(x);
}

// The value of serial type `type` whose `len` bytes start at p.
inline void decode_value(std::uint64_t type, const std::uint8_t* p, std::uint64_t len, SqlValue& v) {
  switch (type) {
    case 0: v.set_null(); return;
    case 1: v.set_int(static_cast<std::int8_t>(p[0])); return;
    case 2: v.set_int(static_cast<std::int16_t>((p[0] << 8) | p[1])); return;
    case 3:
      v.set_int(static_cast<std::int32_t>((std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                                          (std::uint32_t{p[2]} << 8)) >>
                8);
      return;
    case 4: v.set_int(static_cast<std::int32_t>(be32(p))); return;
    case 5:
      v.set_int(static_cast<std::int64_t>((std::uint64_t{be16(p)} << 48) | (std::uint64_t{be32(p + 2)} << 16)) >> 16);
      return;
    case 6: v.set_int(static_cast<std::int64_t>(load_be64(p))); return;
    case 7: {
      const std::uint64_t x = load_be64(p);
      double d;
      std::memcpy(&d, &x, sizeof d);
      if (std::isnan(d))  // a NaN reads as NULL, as SQLite reads it
        v.set_null();
      else
        v.set_real(d);
      return;
    }
    case 8:
    case 9: v.set_int(type == 9); return;
    default: v.set_bytes(type & 1 ? SqlValue::Type::text : SqlValue::Type::blob, reinterpret_cast<const char*>(p), len);
  }
}

}  // namespace

bool RecordDecoder::decode(std::int64_t rowid, std::string_view rec, SqlValue* out) const {
  for (int s : always_null_) out[s].set_null();
  for (int s : rowid_slots_) out[s].set_int(rowid);
  if (wants_.empty()) return true;
  const auto* r = reinterpret_cast<const std::uint8_t*>(rec.data());
  const std::size_t n = rec.size();
  std::uint64_t header_size = 0;
  const std::size_t k = varint(r, n, &header_size);
  if (!k || header_size < k || header_size > n) return false;
  // Pass 1: serial type and offset of every column up to the last one wanted
  // (a tight loop: one byte and a table lookup per column, normally).
  const int columns = wants_.back().position + 1;
  std::uint64_t type[kMaxColumns];
  std::uint64_t offset[kMaxColumns + 1];
  const std::uint8_t* h = r + k;
  const std::uint8_t* const header_end = r + header_size;
  std::uint64_t off = header_size;
  int have = 0;
  if (!slot_of_.empty() && header_end - h >= columns && one_byte_types(h, columns)) {
    // The usual record: every serial type one byte (ints, short texts), so
    // one pass decodes the values wanted as it finds them.
    for (int c = 0; c < columns; ++c) {
      const std::uint8_t t = h[c];
      const std::uint64_t len = kSerial.len[t];
      if (const int slot = slot_of_[static_cast<std::size_t>(c)]; slot >= 0) {
        if (t - 1u < 6u && off + 8 <= n) {  // an integer, with 8 bytes readable: one load and a shift
          out[slot].set_int(static_cast<std::int64_t>(load_be64(r + off)) >> (64 - 8 * len));
        } else {
          if (len > n - off) return false;  // also the reserved types 10 and 11
          decode_value(t, r + off, len, out[slot]);
        }
      }
      off += len;
      if (off > n) return false;  // keeps off <= n, so n - off above never wraps
    }
    return true;
  }
  for (; have < columns && h < header_end; ++have) {
    std::uint64_t t = *h, len;
    if (t < 0x80) {
      ++h;
      len = kSerial.len[t];
    } else {
      const std::size_t kk = varint(h, static_cast<std::size_t>(header_end - h), &t);
      if (!kk) return false;
      h += kk;
      len = t < 128 ? kSerial.len[t] : (t - 12) / 2;
    }
    if (len > n - off) return false;  // past the record (also serial types 10 and 11); off never wraps
    type[have] = t;
    offset[have] = off;
    off += len;
  }
  offset[have] = off;
  // Pass 2: the values wanted.
  for (const Want& w : wants_) {
    SqlValue& v = out[w.slot];
    if (w.position >= have) {  // a shorter record (columns added later): NULL
      v.set_null();
      continue;
    }
    const std::uint64_t t = type[w.position];
    const std::uint64_t at = offset[w.position];
    const std::uint64_t len = offset[w.position + 1] - at;
    if (t - 1 < 6 && at + 8 <= n) {  // an integer, with 8 bytes readable: one load and a shift
      v.set_int(static_cast<std::int64_t>(load_be64(r + at)) >> (64 - 8 * len));
    } else {
      decode_value(t, r + at, len, v);
    }
  }
  return true;
}

}  // namespace gpuscope::nsys
