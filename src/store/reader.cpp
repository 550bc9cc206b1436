// The .gscope reader.
//
// [SECTION] Byte sources (a file read with pread, or memory)
// [SECTION] Headers
// [SECTION] The reader: header, footer index
// [SECTION] The memory budget
// [SECTION] The sections, in file order
// [SECTION] What was lost, and the trace
// [SECTION] Public entry points
//
// Policy for damage (docs/format.md, "Reading damaged files"): a section whose
// header is intact but whose payload is not (checksum, decompression, decoding,
// an id out of range) is skipped if nothing later can depend on it (row chunks,
// devices, processes, meta, contents, unknown tags); a damaged strings, tracks
// or counter series section, or the end of a truncated file stops the load
// there. A damaged section header is stepped over: to the next index entry, or
// without an index to the next intact header. Everything loaded is kept; what
// was lost is counted (exactly from the index or the contents section, else
// from the headers of what was not loaded) into TraceMeta::damage, and a file
// of which no row could be read is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "store/detail/bytes.h"
#include "store/detail/format.h"
#include "store/detail/reader.h"
#include "store/detail/sections.h"
#include "trace/budget.h"

namespace gpuscope::store_detail {

namespace {

// [SECTION] Byte sources ----------------------------------------------------------------------

class Source {
 public:
  virtual ~Source() = default;
  std::uint64_t size() const { return size_; }
  // Returns [offset, offset + n), valid until the next call. The caller checks bounds.
  virtual const std::uint8_t* read(std::uint64_t offset, std::size_t n) = 0;

 protected:
  std::uint64_t size_ = 0;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const std::uint8_t> bytes) : bytes_(bytes) { size_ = bytes.size(); }
  const std::uint8_t* read(std::uint64_t offset, std::size_t) override { return bytes_.data() + offset; }

 private:
  std::span<const std::uint8_t> bytes_;
};

class FileSource final : public Source {
 public:
  FileSource(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int err = errno;
      ::close(fd_);
      throw InputError(path, std::string("cannot stat: ") + std::strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd_);
      throw InputError(path, "is a directory, not a trace file");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~FileSource() override { ::close(fd_); }

  const std::uint8_t* read(std::uint64_t offset, std::size_t n) override {
    if (buf_size_ < n) {
      buf_ = std::make_unique_for_overwrite<std::uint8_t[]>(n);
      buf_size_ = n;
    }
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd_, buf_.get() + got, n - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError(path_, std::string("read failed: ") + std::strerror(errno), offset + got);
      if (r == 0) throw InputError(path_, "the file shrank while it was read", offset + got);
      got += static_cast<std::size_t>(r);
    }
    return buf_.get();
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::unique_ptr<std::uint8_t[]> buf_;
  std::size_t buf_size_ = 0;
};

// [SECTION] Headers -------------------------------------------------------------------------------

struct SectionHeader {
  std::uint16_t tag = 0;
  std::uint8_t codec = 0;
  std::uint32_t items = 0;
  std::uint64_t raw = 0, stored = 0, checksum = 0;
};

// Parses a 40-byte section header; returns an empty string or why it is bad.
std::string parse_section_header(const std::uint8_t* h, SectionHeader& out) {
  if (std::memcmp(h, kSectionSync.data(), 4) != 0) return "no section marker";
  std::uint8_t checked[kSectionHeaderBytes - 4];
  std::memcpy(checked, h, kSecHeaderCheck);
  std::memcpy(checked + kSecHeaderCheck, h + kSecRaw, kSectionHeaderBytes - kSecRaw);
  if ((XXH3_64bits(checked, sizeof checked) & 0xffffffffu) != load_le(h + kSecHeaderCheck, 4))
    return "section header checksum mismatch";
  out.tag = static_cast<std::uint16_t>(load_le(h + kSecTag, 2));
  out.codec = h[kSecCodec];
  out.items = static_cast<std::uint32_t>(load_le(h + kSecItems, 4));
  out.raw = load_le(h + kSecRaw, 8);
  out.stored = load_le(h + kSecStored, 8);
  out.checksum = load_le(h + kSecChecksum, 8);
  return {};
}

bool is_row_tag(std::uint16_t tag) { return tag >= kTagRowsBase && tag < kTagRowsBase + kTableCount; }

// Sections nothing later refers to by id: losing one loses only itself.
bool skippable(std::uint16_t tag) { return tag != kTagStrings && tag != kTagTracks && tag != kTagCounterSeries; }

std::string tag_name(std::uint16_t tag) {
  switch (tag) {
    case kTagStrings: return "strings";
    case kTagTracks: return "tracks";
    case kTagDevices: return "devices";
    case kTagProcesses: return "processes";
    case kTagCounterSeries: return "counter series";
    case kTagMeta: return "meta";
    case kTagContents: return "contents";
    case kTagFooter: return "footer";
    default: break;
  }
  if (is_row_tag(tag)) return std::string(to_string(static_cast<TableId>(tag - kTagRowsBase)));
  return "unknown tag " + std::to_string(tag);
}

// What a file that is not .gscope looks like, for the error message.
std::string describe_foreign(const std::uint8_t* p, std::size_t n) {
  std::size_t i = 0;
  if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) i = 3;  // UTF-8 BOM
  while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) ++i;
  if (i < n && (p[i] == '{' || p[i] == '['))
    return "not a .gscope file: it looks like JSON (a Chrome/Kineto trace? open it as JSON)";
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return "not a .gscope file: it is gzip-compressed data";
  if (n >= 8 && std::memcmp(p, kMagic.data(), std::min<std::size_t>(n, 8)) != 0 && std::memcmp(p, "\x89GSC", 4) == 0)
    return "not a .gscope file: damaged magic bytes";
  return "not a .gscope file: wrong magic bytes";
}

// [SECTION] The reader: header, footer index ----------------------------------------------------

class Reader {
 public:
  Reader(Source& src, const std::string& name, const ReadOptions& options, const LoadProgress& progress)
      : src_(src),
        name_(name),
        options_(options),
        progress_(progress),
        budget_(options.memory_budget ? options.memory_budget : memory_budget()) {
    builder_.limit_names(kMaxNameBytes);
  }

  Trace read(GscopeReadReport& rep) {
    rep = GscopeReadReport{};
    rep.file_bytes = src_.size();
    read_header(rep);
    read_footer(rep);
    read_sections(rep);
    return finish(rep);
  }

 private:
  // File header: magic, version, size, writer, checksum. Anything wrong here
  // means nothing can be trusted: throw.
  void read_header(GscopeReadReport& rep) {
    const std::uint64_t size = src_.size();
    if (size == 0) throw InputError(name_, "empty file (not a .gscope trace)", 0);
    const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(size, 64));
    const std::uint8_t* p = src_.read(0, first);
    if (first < kMagic.size() || std::memcmp(p, kMagic.data(), kMagic.size()) != 0) {
      if (first < kMagic.size() && std::memcmp(p, kMagic.data(), first) == 0)
        throw InputError(name_, "truncated .gscope header", size);
      throw InputError(name_, describe_foreign(p, first), 0);
    }
    if (size < kHeaderFixedBytes) throw InputError(name_, "truncated .gscope header", size);
    const auto version = static_cast<std::uint32_t>(load_le(p + 8, 4));
    rep.format_version = version;
    if (version > kFormatVersion)
      throw InputError(name_,
                       "written in .gscope format version " + std::to_string(version) +
                           ", newer than this gpuscope reads (version " + std::to_string(kFormatVersion) +
                           "); open it with a newer gpuscope",
                       8);
    if (version == 0) throw InputError(name_, "invalid .gscope format version 0", 8);
    const std::uint64_t hsize = load_le(p + 12, 4);
    const std::uint64_t wlen = load_le(p + 16, 2);
    if (hsize != kHeaderFixedBytes + wlen + 8)
      throw InputError(name_, "corrupt .gscope header (inconsistent size)", 12);
    if (hsize > size) throw InputError(name_, "truncated .gscope header", size);
    p = src_.read(0, static_cast<std::size_t>(hsize));
    if (XXH3_64bits(p, hsize - 8) != load_le(p + hsize - 8, 8))
      throw InputError(name_, "corrupt .gscope header (checksum mismatch)", hsize - 8);
    rep.writer.assign(reinterpret_cast<const char*>(p + kHeaderFixedBytes), wlen);
    header_end_ = hsize;
  }

  // Trailer -> footer section -> index. Any doubt: no index (sections are then
  // read in order, which loads the same data, only without skipping help).
  void read_footer(GscopeReadReport& rep) {
    const std::uint64_t size = src_.size();
    if (size < header_end_ + kSectionHeaderBytes + kTrailerBytes) return;
    const std::uint8_t* t = src_.read(size - kTrailerBytes, kTrailerBytes);
    if (std::memcmp(t + 8, kEndMagic.data(), 8) != 0) return;
    const std::uint64_t at = load_le(t, 8);
    footer_seen_ = true;
    auto damaged = [&](const std::string& why) {
      ++rep.corrupt_sections;
      note_problem(at < size ? at : size - kTrailerBytes);
      rep.problems.push_back("footer index" + (at < size ? " at byte " + std::to_string(at) : std::string()) + ": " +
                             why + "; sections read in order instead");
    };
    if (at < header_end_ || at > size - kTrailerBytes - kSectionHeaderBytes) return damaged("bad offset");
    SectionHeader h;
    const std::string why = parse_section_header(src_.read(at, kSectionHeaderBytes), h);
    if (!why.empty()) return damaged(why);
    if (h.tag != kTagFooter || h.stored != size - kTrailerBytes - kSectionHeaderBytes - at)
      return damaged("not a footer section");
    try {
      const std::span<const std::uint8_t> payload = load_payload(at, h);
      Footer f = decode_footer(ByteCursor(payload.data(), payload.size()));
      // The index must describe sections in file order, inside the data.
      std::uint64_t next = header_end_;
      std::uint64_t rows[kTableCount] = {};
      for (const IndexEntry& e : f.sections) {
        if (e.offset < next || e.offset > at || at - e.offset < kSectionHeaderBytes)
          throw FormatError("section offsets out of order");
        next = e.offset + kSectionHeaderBytes;
        if (is_row_tag(e.tag)) {
          if (e.items > kMaxRowsPerChunk) throw FormatError("row count over the limit");
          rows[e.tag - kTagRowsBase] += e.items;
        }
      }
      for (int t = 0; t < kTableCount; ++t)
        if (rows[t] != f.table_rows[t]) throw FormatError("row totals disagree with the index");
      check_declared_rows(rows, "the footer index", at);
      for (int t = 0; t < kTableCount; ++t) {
        // Reserve the final size up front, but never more than the file could
        // plausibly hold (a corrupt total must not make a giant allocation).
        ctx_.reserve_rows[t] = std::min<std::uint64_t>(rows[t], (size << 6) + (1u << 20));
      }
      index_ = std::move(f.sections);
      have_index_ = true;
      data_end_ = at;
    } catch (const FormatError& e) {
      damaged(e.what());
    }
  }

  // Verifies the checksum and decompresses; throws FormatError.
  std::span<const std::uint8_t> load_payload(std::uint64_t at, const SectionHeader& h) {
    const std::uint8_t* stored = src_.read(at + kSectionHeaderBytes, static_cast<std::size_t>(h.stored));
    if (options_.verify_checksums && XXH3_64bits(stored, h.stored) != h.checksum)
      throw FormatError("checksum mismatch");
    if (h.raw > kMaxRawSectionBytes) throw FormatError("raw length over the limit");
    if (h.raw > options_.max_raw_bytes - raw_total_) throw FormatError("decompressed size over the reader's limit");
    raw_total_ += h.raw;
    switch (static_cast<Codec>(h.codec)) {
      case Codec::none:
        if (h.raw != h.stored) throw FormatError("raw and stored lengths differ");
        return {stored, static_cast<std::size_t>(h.stored)};
      case Codec::zstd: {
        const unsigned long long content = ZSTD_getFrameContentSize(stored, h.stored);
        if (content != h.raw) throw FormatError("zstd frame size differs from the section header");
        if (raw_cap_ < h.raw) {
          raw_ = std::make_unique_for_overwrite<std::uint8_t[]>(h.raw);
          raw_cap_ = h.raw;
        }
        if (!dctx_) dctx_.reset(ZSTD_createDCtx());
        if (!dctx_) throw std::bad_alloc();
        const std::size_t n = ZSTD_decompressDCtx(dctx_.get(), raw_.get(), h.raw, stored, h.stored);
        if (ZSTD_isError(n)) throw FormatError(std::string("zstd: ") + ZSTD_getErrorName(n));
        if (n != h.raw) throw FormatError("zstd frame shorter than its header says");
        return {raw_.get(), static_cast<std::size_t>(h.raw)};
      }
    }
    throw FormatError("unknown codec " + std::to_string(h.codec));
  }

  void apply(std::uint16_t tag, std::uint32_t items, std::span<const std::uint8_t> payload) {
    const ByteCursor in(payload.data(), payload.size());
    switch (tag) {
      case kTagStrings: return decode_strings(in, builder_);
      case kTagTracks: return decode_tracks(in, builder_);
      case kTagDevices: return decode_devices(in, builder_);
      case kTagProcesses: return decode_processes(in, builder_);
      case kTagCounterSeries: return decode_counter_series(in, builder_);
      case kTagMeta: return decode_meta(in, builder_);
      case kTagContents: return read_contents(in);
      default: break;
    }
    if (is_row_tag(tag)) return decode_rows(static_cast<TableId>(tag - kTagRowsBase), in, items, builder_, ctx_);
    ++unknown_sections_;  // a section kind from a later version: not needed to read this one
  }

  // What the file declares it holds (written first): without an index, how
  // big to make each column, and afterwards what a cut cost.
  void read_contents(const ByteCursor& in) {
    contents_ = decode_contents(in);
    have_contents_ = true;
    check_declared_rows(contents_.table_rows, "the contents section", applying_at_);
    if (have_index_) return;
    for (int t = 0; t < kTableCount; ++t)
      ctx_.reserve_rows[t] = std::min<std::uint64_t>(contents_.table_rows[t], (src_.size() << 6) + (1u << 20));
  }

  // [SECTION] The memory budget --------------------------------------------------------------

  // Refuses a file whose declared rows would take more than the budget,
  // before any of it is reserved: "the contents section declares 20,000,000
  // rows (kernels 20,000,000)".
  void check_declared_rows(const std::uint64_t (&rows)[kTableCount], std::string_view section, std::uint64_t at) {
    std::uint64_t bytes = 0, total = 0;
    std::string which;
    for (int t = 0; t < kTableCount; ++t) {
      if (!rows[t]) continue;
      total += rows[t];
      std::uint64_t b = 0;
      if (__builtin_mul_overflow(rows[t], row_memory_bytes(static_cast<TableId>(t)), &b) ||
          __builtin_add_overflow(bytes, b, &bytes))
        bytes = ~std::uint64_t{0};
      which +=
          (which.empty() ? "" : ", ") + std::string(to_string(static_cast<TableId>(t))) + " " + std::to_string(rows[t]);
    }
    check_memory_claim(name_, std::string(section) + " declares " + std::to_string(total) + " rows (" + which + ")",
                       bytes, budget_, at);
  }

  // Refuses a section whose decompressed payload, and the rows or strings it
  // declares, would take the load past the budget, before it is decompressed.
  void check_section_budget(const SectionHeader& h, std::uint64_t section_no, std::uint64_t pos) {
    auto add = [](std::uint64_t a, std::uint64_t b) { return a + b < a ? ~std::uint64_t{0} : a + b; };
    std::uint64_t adds = h.raw;  // the decompression buffer
    std::string what = "section " + std::to_string(section_no) + " (" + tag_name(h.tag) + ") declares ";
    if (is_row_tag(h.tag)) {
      adds = add(adds, std::uint64_t{h.items} * row_memory_bytes(static_cast<TableId>(h.tag - kTagRowsBase)));
      what += std::to_string(h.items) + " rows and ";
    } else if (h.tag == kTagStrings) {
      adds = add(adds, h.raw);  // the bytes, kept
    }
    what += std::to_string(h.raw) + " bytes";
    const std::uint64_t have = builder_.memory_bytes();
    check_memory_claim(name_, what + " after " + memory_size_text(have) + " loaded", add(have, adds), budget_, pos);
  }

  // [SECTION] The sections, in file order ----------------------------------------------------

  // Where the walk over the sections is.
  struct Walk {
    std::size_t next_entry = 0;  // with an index: its next entry
    std::uint64_t pos = 0;
    std::uint64_t section_no = 0;
  };

  void problem(GscopeReadReport& rep, const Walk& w, std::uint64_t at, std::uint16_t tag, bool tag_known,
               const std::string& what) {
    note_problem(at);
    rep.problems.push_back("section " + std::to_string(w.section_no) +
                           (tag_known ? " (" + tag_name(tag) + ")" : std::string()) + " at byte " + std::to_string(at) +
                           ": " + what);
  }
  void note_problem(std::uint64_t at) { first_problem_ = std::min(first_problem_, at); }
  void lose_rows(std::uint16_t tag, std::uint64_t items) {
    if (is_row_tag(tag)) lost_rows_[tag - kTagRowsBase] += items;
  }

  void read_sections(GscopeReadReport& rep) {
    const std::uint64_t size = src_.size();
    if (!have_index_) data_end_ = size;
    Walk w{0, header_end_, 0};
    for (;; ++w.section_no) {
      if (progress_.cancel && progress_.cancel->load(std::memory_order_relaxed)) throw InputError(name_, "cancelled");
      if (progress_.on_progress) progress_.on_progress(w.pos, size);
      std::uint16_t expected_tag = 0;
      std::uint32_t expected_items = 0;
      if (have_index_) {
        if (w.next_entry == index_.size()) break;
        w.pos = index_[w.next_entry].offset;
        expected_tag = index_[w.next_entry].tag;
        expected_items = index_[w.next_entry].items;
        ++w.next_entry;
      } else if (w.pos == size) {
        // Every section is intact, but the writer never wrote its footer: it
        // was stopped (killed), or the file was cut where a section ended.
        note_problem(size);
        truncated_ = rest_unknown_ = true;
        rep.problems.push_back("no footer: the writer did not finish (killed?) or the file was cut there; loaded the " +
                               std::to_string(w.section_no) + " complete sections before byte " + std::to_string(size));
        break;
      }
      if (!read_section(rep, w, expected_tag, expected_items)) break;
    }
    if (progress_.on_progress) progress_.on_progress(size, size);
  }

  // Reads the section at w.pos and moves w.pos past it; false when the load stops there.
  bool read_section(GscopeReadReport& rep, Walk& w, std::uint16_t expected_tag, std::uint32_t expected_items) {
    const std::uint64_t pos = w.pos;
    if (pos > data_end_ || data_end_ - pos < kSectionHeaderBytes) {
      problem(rep, w, pos, 0, false, "truncated section header; the file ends here");
      truncated_ = true;
      stop(rep, w, pos, data_end_);
      return false;
    }
    SectionHeader h;
    std::string why = parse_section_header(src_.read(pos, kSectionHeaderBytes), h);
    if (why.empty() && have_index_ && (h.tag != expected_tag || h.items != expected_items))
      why = "section header disagrees with the footer index";
    if (!why.empty()) return step_over_damaged_header(rep, w, why, expected_tag, expected_items);
    if (h.stored > data_end_ - pos - kSectionHeaderBytes) {
      problem(rep, w, pos, h.tag, true,
              "truncated: " + std::to_string(h.stored) + " payload bytes declared, " +
                  std::to_string(data_end_ - pos - kSectionHeaderBytes) + " present");
      truncated_ = !have_index_;
      lose_rows(h.tag, h.items);
      stop(rep, w, pos, data_end_);
      return false;
    }
    if (h.tag == kTagFooter && !have_index_) {
      // A footer the trailer did not lead to (damaged trailer, or bytes after it).
      if (!footer_seen_) {
        ++rep.corrupt_sections;
        note_problem(pos);
        // Fewer bytes than a whole trailer after the footer: the file was cut there.
        const bool cut = src_.size() - (pos + kSectionHeaderBytes + h.stored) < kTrailerBytes;
        truncated_ = truncated_ || cut;
        rep.problems.push_back("footer at byte " + std::to_string(pos) + ": trailer " +
                               (cut ? "cut short (the file ends at byte " + std::to_string(src_.size()) + ")"
                                    : std::string("missing or damaged")) +
                               "; the sections before it were loaded");
      }
      footer_seen_ = true;
      return false;
    }
    const std::uint64_t end = pos + kSectionHeaderBytes + h.stored;
    check_section_budget(h, w.section_no, pos);
    applying_at_ = pos;
    try {
      apply(h.tag, h.items, load_payload(pos, h));
      ++rep.sections_read;
    } catch (const FormatError& e) {
      ++rep.corrupt_sections;
      if (!skippable(h.tag)) {
        problem(rep, w, pos, h.tag, true, std::string(e.what()) + "; nothing after it was loaded");
        stop(rep, w, pos, end);
        return false;
      }
      problem(rep, w, pos, h.tag, true,
              std::string(e.what()) +
                  (is_row_tag(h.tag) ? "; " + std::to_string(h.items) + " rows skipped" : std::string("; skipped")));
      rep.bytes_lost += end - pos;
      lose_rows(h.tag, h.items);
    }
    w.pos = end;
    return true;
  }

  // A section header that cannot be trusted (its length, so where the next
  // section starts, is unknown). With an index the next entry says where;
  // without one the reader looks for the next intact header (marker and
  // header check). What the damaged section defined, if strings, tracks or
  // counter series, is then missing: rows that refer to it fail their id
  // checks and are counted lost, and a later section of the same kind stops
  // the load (its first id no longer follows on).
  bool step_over_damaged_header(GscopeReadReport& rep, Walk& w, const std::string& why, std::uint16_t expected_tag,
                                std::uint32_t expected_items) {
    const std::uint64_t pos = w.pos;
    ++rep.corrupt_sections;
    if (have_index_) {
      if (skippable(expected_tag)) {
        const std::uint64_t end = w.next_entry < index_.size() ? index_[w.next_entry].offset : data_end_;
        problem(rep, w, pos, expected_tag, true, why + "; skipped");
        rep.bytes_lost += end - pos;
        lose_rows(expected_tag, expected_items);
        return true;
      }
      problem(rep, w, pos, expected_tag, true, why + "; nothing after it was loaded");
      lose_rows(expected_tag, expected_items);
      stop(rep, w, pos, data_end_);
      return false;
    }
    estimate_damaged_section(pos);
    const std::uint64_t next = find_section(pos + 1);
    if (next >= data_end_) {
      problem(rep, w, pos, 0, false, why + "; no intact section follows, nothing after it was loaded");
      rep.bytes_lost += data_end_ - pos;
      rest_unknown_ = true;
      return false;
    }
    problem(rep, w, pos, 0, false,
            why + "; " + std::to_string(next - pos) + " bytes skipped, to the next intact section at byte " +
                std::to_string(next));
    rep.bytes_lost += next - pos;
    w.pos = next;
    return true;
  }

  // The rows a damaged section header claims, if its fields look like a row
  // chunk's: an estimate (its check failed, so they may be wrong). Otherwise
  // what it held is unknown.
  void estimate_damaged_section(std::uint64_t at) {
    const std::uint8_t* h = src_.read(at, kSectionHeaderBytes);
    const auto tag = static_cast<std::uint16_t>(load_le(h + kSecTag, 2));
    const auto items = static_cast<std::uint32_t>(load_le(h + kSecItems, 4));
    if (is_row_tag(tag) && items <= kMaxWriterRowsPerChunk) {
      lost_rows_[tag - kTagRowsBase] += items;
      estimated_[tag - kTagRowsBase] = true;
    } else if (tag > kTagContents && !is_row_tag(tag)) {
      rest_unknown_ = true;  // not even its kind is known
    }
  }

  // The offset of the next intact section header at or after `from`, or
  // data_end_ if there is none.
  std::uint64_t find_section(std::uint64_t from) {
    constexpr std::size_t kBlock = 1u << 20;
    while (from < data_end_ && data_end_ - from >= kSectionHeaderBytes) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kBlock + kSectionHeaderBytes, data_end_ - from));
      const std::uint8_t* p = src_.read(from, n);
      for (std::size_t i = 0; i + kSectionHeaderBytes <= n; ++i) {
        const void* hit = ::memmem(p + i, n - i, kSectionSync.data(), kSectionSync.size());
        if (!hit) break;
        i = static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - p);
        if (i + kSectionHeaderBytes > n) break;
        SectionHeader h;
        const std::uint64_t at = from + i;
        if (parse_section_header(p + i, h).empty() && h.stored <= data_end_ - at - kSectionHeaderBytes) return at;
      }
      if (n < kBlock + kSectionHeaderBytes) break;
      from += kBlock;  // the next block overlaps this one by a header's length
    }
    return data_end_;
  }

  // The load stops at `from`: everything from there to the end of the data is
  // lost. With an index, its entries say which rows; without one, the headers
  // of the sections after `after` (the end of the section stopped at, when its
  // header was intact) still say how many rows they held.
  void stop(GscopeReadReport& rep, const Walk& w, std::uint64_t from, std::uint64_t after) {
    rep.bytes_lost += data_end_ > from ? data_end_ - from : 0;
    if (have_index_) {
      for (std::size_t i = w.next_entry; i < index_.size(); ++i) lose_rows(index_[i].tag, index_[i].items);
      return;
    }
    count_rest(after);
  }

  // Adds up the rows of the intact section headers from `pos` to the end of
  // the data (not their payloads: nothing there is loaded).
  void count_rest(std::uint64_t pos) {
    for (;;) {
      if (pos >= data_end_ || data_end_ - pos < kSectionHeaderBytes) {
        rest_unknown_ = true;  // the file ends without a footer: more may have followed
        return;
      }
      SectionHeader h;
      if (!parse_section_header(src_.read(pos, kSectionHeaderBytes), h).empty()) {
        estimate_damaged_section(pos);
        pos = find_section(pos + 1);
        continue;
      }
      if (h.stored > data_end_ - pos - kSectionHeaderBytes) {
        lose_rows(h.tag, h.items);
        rest_unknown_ = true;
        return;
      }
      if (h.tag == kTagFooter) return;
      lose_rows(h.tag, h.items);
      pos += kSectionHeaderBytes + h.stored;
    }
  }

  // [SECTION] What was lost, and the trace ------------------------------------------------------

  // This read's losses, table by table: exact with an index, or when the
  // contents section (the totals a file declares first) covers what was
  // loaded; else counted from section headers (a lower bound when the file
  // ends without saying what followed, an estimate when a damaged header's
  // count is in it).
  FileDamage damage_found(const GscopeReadReport& rep) {
    FileDamage d;
    d.truncated = truncated_;
    d.file_bytes = rep.file_bytes;
    d.intact_bytes = std::min(first_problem_, rep.file_bytes);
    d.bytes_lost = rep.bytes_lost;
    d.damaged_sections = rep.corrupt_sections;
    d.problems = rep.problems;
    bool declared = have_contents_ && !have_index_;
    builder_.tables().for_each_table([&](TableId id, const auto& t) {
      declared = declared && contents_.table_rows[static_cast<int>(id)] >= t.size();
    });
    builder_.tables().for_each_table([&](TableId id, const auto& t) {
      const int i = static_cast<int>(id);
      TableLoss& loss = d.tables[i];
      loss.loaded = t.size();
      if (declared) {
        loss.lost = contents_.table_rows[i] - t.size();
      } else {
        loss.lost = lost_rows_[i];
        if (!have_index_)
          loss.count = estimated_[i] ? LossCount::estimate : rest_unknown_ ? LossCount::at_least : LossCount::exact;
      }
    });
    return d;
  }

  Trace finish(GscopeReadReport& rep) {
    rep.complete = have_index_ && rep.problems.empty();
    TraceMeta& meta = builder_.meta();
    FileDamage damage = damage_found(rep);
    rep.rows_lost = damage.rows_lost();
    refuse_if_nothing_recovered(damage);
    // freeze() recomputes this from the rows; keeping the saved value would double it.
    std::erase_if(meta.stats, [](const auto& kv) { return kv.first == "trace.duplicate_api_correlations"; });
    if (!footer_seen_) meta.add_stat("store.unfinished", 1);
    if (rep.bytes_lost) meta.add_stat("store.truncated_bytes", rep.bytes_lost);
    if (rep.corrupt_sections) meta.add_stat("store.corrupt_sections", rep.corrupt_sections);
    for (int t = 0; t < kTableCount; ++t)
      if (damage.tables[t].lost)
        meta.add_stat("store.lost_rows." + std::string(to_string(static_cast<TableId>(t))), damage.tables[t].lost);
    if (unknown_sections_) meta.add_stat("store.unknown_sections", unknown_sections_);
    if (ctx_.unknown_columns) meta.add_stat("store.unknown_columns", ctx_.unknown_columns);
    // What an earlier file lost (saved in the meta) stays said; this file's own losses come with it.
    if (damage.any()) {
      if (meta.damage.any()) damage.add_earlier(meta.damage);
      meta.damage = std::move(damage);
    } else if (meta.damage.any()) {
      for (int t = 0; t < kTableCount; ++t) meta.damage.tables[t].loaded = damage.tables[t].loaded;
    }
    shrink_and_reserve();
    try {
      return builder_.freeze(TraceBuilder::Rows::checked);  // decode_rows checked each chunk
    } catch (const TraceError& e) {
      throw InputError(name_, std::string("inconsistent trace: ") + e.what());
    }
  }

  // A damaged file of which not one row could be read is refused, not shown
  // as an empty trace: the first problem says where and why.
  void refuse_if_nothing_recovered(const FileDamage& d) const {
    if (!d.any()) return;
    bool maybe_lost = false;
    for (const TableLoss& t : d.tables) {
      if (t.loaded) return;
      maybe_lost = maybe_lost || t.lost || t.count != LossCount::exact;
    }
    if (!maybe_lost) return;  // the file held no rows: nothing was lost
    throw InputError(name_, "nothing could be recovered: " + d.problems.front(), d.intact_bytes);
  }

  void shrink_and_reserve() {
    // Columns grown geometrically (no index, or lost chunks) give back the slack.
    builder_.tables().for_each_table([](TableId, auto& table) {
      table.for_each_column([](ColumnInfo, auto& col) {
        if (col.capacity() != col.size()) col.shrink_to_fit();
      });
    });
    // freeze() fills the derived columns with assign()/resize(), which reuse
    // capacity: reserving them here gets them huge pages too.
    builder_.tables().for_each_table([](TableId, auto& table) {
      const std::size_t n = table.size();
      table.for_each_column([n](ColumnInfo info, auto& col) {
        if (info.flags & kDerived) reserve_column(col, n);
      });
    });
  }

  struct DctxFree {
    void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
  };

  Source& src_;
  const std::string& name_;
  const ReadOptions& options_;
  const LoadProgress& progress_;
  const std::uint64_t budget_;
  TraceBuilder builder_;
  RowDecodeContext ctx_;
  std::uint64_t header_end_ = 0, data_end_ = 0;
  std::uint64_t applying_at_ = 0;  // the section being applied (named when its claims are refused)
  bool have_index_ = false, footer_seen_ = false;
  bool have_contents_ = false;
  Contents contents_;
  bool truncated_ = false;     // the data ends inside a section, or without a footer
  bool rest_unknown_ = false;  // without an index: what followed a stop is not (fully) known
  bool estimated_[kTableCount] = {};
  std::uint64_t first_problem_ = ~std::uint64_t{0};
  std::vector<IndexEntry> index_;
  std::unique_ptr<ZSTD_DCtx, DctxFree> dctx_;
  std::unique_ptr<std::uint8_t[]> raw_;
  std::uint64_t raw_cap_ = 0, raw_total_ = 0, unknown_sections_ = 0;
  std::uint64_t lost_rows_[kTableCount] = {};
};

Trace read_from(Source& src, const std::string& name, GscopeReadReport* report, const ReadOptions& options,
                const LoadProgress& progress) {
  GscopeReadReport local;
  GscopeReadReport& rep = report ? *report : local;
  try {
    Reader reader(src, name, options, progress);
    return reader.read(rep);
  } catch (const std::bad_alloc&) {
    throw InputError(name, "not enough memory to load this trace");
  } catch (const std::length_error&) {
    throw InputError(name, "not enough memory to load this trace");
  }
}

}  // namespace

// [SECTION] Public entry points -----------------------------------------------------------------

Trace read_gscope_bytes(std::span<const std::uint8_t> bytes, const std::string& name, GscopeReadReport* report,
                        const ReadOptions& options, const LoadProgress& progress) {
  MemorySource src(bytes);
  return read_from(src, name, report, options, progress);
}

std::uint64_t header_size(std::span<const std::uint8_t> b) {
  if (b.size() < kHeaderFixedBytes || std::memcmp(b.data(), kMagic.data(), kMagic.size()) != 0) return 0;
  const std::uint64_t hsize = load_le(b.data() + 12, 4);
  return hsize <= b.size() ? hsize : 0;
}

std::vector<SectionInfo> list_sections(std::span<const std::uint8_t> b) {
  std::vector<SectionInfo> out;
  std::uint64_t pos = header_size(b);
  if (pos == 0) return out;
  while (b.size() - pos >= kSectionHeaderBytes) {
    SectionHeader h;
    if (!parse_section_header(b.data() + pos, h).empty()) break;
    if (h.stored > b.size() - pos - kSectionHeaderBytes) break;
    out.push_back(SectionInfo{pos, h.tag, h.codec, h.items, h.raw, h.stored});
    pos += kSectionHeaderBytes + h.stored;
  }
  return out;
}

}  // namespace gpuscope::store_detail

namespace gpuscope {

bool is_gscope_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::uint8_t magic[8];
  std::size_t got = 0;
  while (got < sizeof magic) {
    const ssize_t r = ::read(fd, magic + got, sizeof magic - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  return got == sizeof magic && std::memcmp(magic, store_detail::kMagic.data(), sizeof magic) == 0;
}

Trace read_gscope(const std::string& path, GscopeReadReport* report, const LoadProgress& progress) {
  store_detail::FileSource src(path);
  return store_detail::read_from(src, path, report, store_detail::ReadOptions{}, progress);
}

}  // namespace gpuscope
