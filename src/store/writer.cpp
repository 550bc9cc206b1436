// .gscope writers: the section writer, write_gscope (atomic), GscopeAppender (live).
//
// [SECTION] SectionWriter
// [SECTION] Writing a trace's parts (shared by both writers)
// [SECTION] write_gscope
// [SECTION] GscopeAppender
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>
// For ZSTD_c_literalCompressionMode (an experimental parameter: a zstd that
// does not know it refuses it, and the writer then keeps the default).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <stdexcept>

#include "store/detail/format.h"
#include "store/detail/section_writer.h"
#include "trace/files.h"

#ifndef GPUSCOPE_VERSION_STRING
#define GPUSCOPE_VERSION_STRING "unknown"
#endif

namespace gpuscope::store_detail {

// [SECTION] SectionWriter ---------------------------------------------------------------------

struct SectionWriter::Zstd {
  ZSTD_CCtx* ctx = nullptr;
  ~Zstd() { ZSTD_freeCCtx(ctx); }
};

SectionWriter::SectionWriter(int fd, std::string path, const GscopeWriteOptions& options)
    : fd_(fd), path_(std::move(path)), options_(options), zstd_(std::make_unique<Zstd>()) {
  if (options_.compress) {
    zstd_->ctx = ZSTD_createCCtx();
    if (!zstd_->ctx) throw std::bad_alloc();
    ZSTD_CCtx_setParameter(zstd_->ctx, ZSTD_c_compressionLevel, options_.zstd_level);
    ZSTD_CCtx_setParameter(zstd_->ctx, ZSTD_c_checksumFlag, 0);  // the section checksum covers it
    ZSTD_CCtx_setParameter(zstd_->ctx, ZSTD_c_contentSizeFlag, 1);
    // Literals stored as they are instead of Huffman-coded: the byte planes'
    // low bytes are close to random, so coding them saves little (7.7 vs 6.9
    // bytes per kernel on the 10M synthetic trace) and decoding them is most
    // of zstd's time in a load (43 vs 134 ms per 10M kernels).
    if (!options_.huffman_literals)
      ZSTD_CCtx_setParameter(zstd_->ctx, ZSTD_c_literalCompressionMode, ZSTD_ps_disable);  // a hint: errors ignored
  }
}

SectionWriter::~SectionWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SectionWriter::fail(const std::string& what, int err) const {
  throw InputError(path_, what + ": " + std::strerror(err));
}

void SectionWriter::write_all(const std::uint8_t* a, std::size_t na, const std::uint8_t* b, std::size_t nb) {
  iovec iov[2] = {{const_cast<std::uint8_t*>(a), na}, {const_cast<std::uint8_t*>(b), nb}};
  int first = 0;
  while (first < 2) {
    const ssize_t n = ::writev(fd_, iov + first, 2 - first);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
    }
    if (n == 0) fail("write failed", EIO);
    offset_ += static_cast<std::uint64_t>(n);
    std::size_t left = static_cast<std::size_t>(n);
    while (first < 2 && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < 2) {
      iov[first].iov_base = static_cast<std::uint8_t*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
}

void SectionWriter::write_header() {
  const std::string writer = "gpuscope " GPUSCOPE_VERSION_STRING;
  ByteWriter h;
  h.raw(kMagic.data(), kMagic.size());
  h.fixed(kFormatVersion, 4);
  h.fixed(kHeaderFixedBytes + writer.size() + 8, 4);
  h.fixed(writer.size(), 2);
  h.raw(writer.data(), writer.size());
  h.fixed(XXH3_64bits(h.data(), h.size()), 8);
  write_all(h.data(), h.size(), nullptr, 0);
}

void SectionWriter::write_section(std::uint16_t tag, std::uint32_t items, const ByteWriter& payload) {
  // Never write what no reader would accept.
  if (payload.size() > kMaxRawSectionBytes)
    throw InputError(path_, "a section of " + std::to_string(payload.size()) + " bytes exceeds the format's limit of " +
                                std::to_string(kMaxRawSectionBytes) + " (a string that long?)");
  const std::uint8_t* stored = payload.data();
  std::size_t stored_len = payload.size();
  Codec codec = Codec::none;
  if (zstd_->ctx && payload.size() >= 64) {
    compressed_.resize(ZSTD_compressBound(payload.size()));
    const std::size_t n =
        ZSTD_compress2(zstd_->ctx, compressed_.data(), compressed_.size(), payload.data(), payload.size());
    if (ZSTD_isError(n)) throw InputError(path_, std::string("zstd: ") + ZSTD_getErrorName(n));
    if (n < payload.size()) {
      stored = compressed_.data();
      stored_len = n;
      codec = Codec::zstd;
    }
  }
  std::uint8_t h[kSectionHeaderBytes] = {};
  std::memcpy(h, kSectionSync.data(), 4);
  store_le(h + kSecTag, tag, 2);
  h[kSecCodec] = static_cast<std::uint8_t>(codec);
  h[kSecFlags] = 0;
  store_le(h + kSecItems, items, 4);
  store_le(h + kSecRaw, payload.size(), 8);
  store_le(h + kSecStored, stored_len, 8);
  store_le(h + kSecChecksum, XXH3_64bits(stored, stored_len), 8);
  std::uint8_t checked[kSectionHeaderBytes - 4];
  std::memcpy(checked, h, kSecHeaderCheck);
  std::memcpy(checked + kSecHeaderCheck, h + kSecRaw, kSectionHeaderBytes - kSecRaw);
  store_le(h + kSecHeaderCheck, XXH3_64bits(checked, sizeof checked) & 0xffffffffu, 4);

  if (tag != kTagFooter) footer_.sections.push_back(IndexEntry{offset_, tag, items});
  write_all(h, sizeof h, stored, stored_len);
}

void SectionWriter::write_footer() {
  ByteWriter payload;
  encode_footer(footer_, payload);
  const std::uint64_t footer_offset = offset_;
  write_section(kTagFooter, 0, payload);
  std::uint8_t trailer[kTrailerBytes];
  store_le(trailer, footer_offset, 8);
  std::memcpy(trailer + 8, kEndMagic.data(), 8);
  write_all(trailer, sizeof trailer, nullptr, 0);
}

void SectionWriter::sync() {
  while (::fdatasync(fd_) != 0) {
    if (errno == EINTR) continue;
    if (errno == EINVAL || errno == EROFS) return;  // special files (pipes, /dev/null): nothing to sync
    fail("fdatasync failed", errno);
  }
}

void SectionWriter::close() {
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) fail("close failed", errno);
}

// [SECTION] Writing a trace's parts --------------------------------------------------------------

namespace {

// Strings go out in sections of at most this many strings / bytes, so no
// section comes near the reader's raw-size limit.
constexpr std::uint32_t kStringsPerSection = 1u << 20;
constexpr std::uint64_t kStringBytesPerSection = 16ull << 20;

// The records of `now` that `written` does not hold as they are (new or
// changed), in one section with `tag`; then `written` is `now`.
template <class Record>
void write_changed(SectionWriter& w, std::uint16_t tag, void (*encode)(std::span<const Record>, ByteWriter&),
                   const std::vector<Record>& now, std::vector<Record>& written, ByteWriter& payload) {
  std::vector<Record> changed;
  for (const Record& r : now)
    if (std::find(written.begin(), written.end(), r) == written.end()) changed.push_back(r);
  if (changed.empty()) return;
  payload.clear();
  encode(changed, payload);
  w.write_section(tag, static_cast<std::uint32_t>(changed.size()), payload);
  written = now;
}

}  // namespace

void write_trace_parts(SectionWriter& w, WrittenState& state, const TraceParts& p, std::uint32_t rows_per_chunk) {
  ByteWriter payload;

  // Strings, in id order.
  const StringId nstrings = p.strings.size();
  while (state.strings < nstrings) {
    StringId end = state.strings;
    std::uint64_t bytes = 0;
    while (end < nstrings && end - state.strings < kStringsPerSection && bytes < kStringBytesPerSection)
      bytes += p.strings.get(end++).size();
    payload.clear();
    encode_strings(p.strings, state.strings, end, payload);
    w.write_section(kTagStrings, end - state.strings, payload);
    w.footer().strings = end;
    state.strings = end;
  }

  // Tracks: new ones and renamed ones.
  {
    std::vector<TrackId> ids;
    for (std::size_t i = 0; i < p.tracks.size(); ++i)
      if (i >= state.tracks.size() || state.tracks[i].name != p.tracks[i].name) ids.push_back(static_cast<TrackId>(i));
    if (!ids.empty()) {
      payload.clear();
      encode_tracks(p.tracks, ids, payload);
      w.write_section(kTagTracks, static_cast<std::uint32_t>(ids.size()), payload);
      state.tracks = p.tracks;
      w.footer().tracks = p.tracks.size();
    }
  }

  // Devices and processes: new or changed records (readers replace by id / pid).
  write_changed(w, kTagDevices, encode_devices, p.devices, state.devices, payload);
  write_changed(w, kTagProcesses, encode_processes, p.processes, state.processes, payload);

  const auto nseries = static_cast<std::uint32_t>(p.counter_series.size());
  if (state.counter_series < nseries) {
    payload.clear();
    encode_counter_series(p.counter_series, state.counter_series, nseries, payload);
    w.write_section(kTagCounterSeries, nseries - state.counter_series, payload);
    state.counter_series = nseries;
    w.footer().counter_series = nseries;
  }

  if (!state.meta_written || !(state.meta == p.meta)) {
    payload.clear();
    encode_meta(p.meta, payload);
    w.write_section(kTagMeta, 1, payload);
    state.meta = p.meta;
    state.meta_written = true;
  }

  // Rows, table by table, in chunks.
  ColumnScratch scratch;
  // At most 2^20 rows: a row is at most 8 bytes per column, so a chunk stays
  // under the reader's raw-size limit whatever the data.
  const std::uint32_t chunk = std::clamp<std::uint32_t>(rows_per_chunk, 1, kMaxWriterRowsPerChunk);
  for (int ti = 0; ti < kTableCount; ++ti) {
    const auto id = static_cast<TableId>(ti);
    const std::size_t rows = p.tables.rows(id);
    for (std::size_t begin = 0; begin < rows; begin += chunk) {
      const std::size_t n = std::min<std::size_t>(chunk, rows - begin);
      payload.clear();
      encode_rows(p.tables, id, begin, n, payload, scratch);
      w.write_section(static_cast<std::uint16_t>(kTagRowsBase + ti), static_cast<std::uint32_t>(n), payload);
      w.footer().table_rows[ti] += n;
    }
  }
}

}  // namespace gpuscope::store_detail

namespace gpuscope {

using namespace store_detail;

// [SECTION] write_gscope ------------------------------------------------------------------------

void write_gscope(const Trace& trace, const std::string& path, const GscopeWriteOptions& options) {
  files::OutputFile out(path);
  // The section writer closes its own descriptor; the file's stays open for commit().
  const int fd = ::fcntl(out.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw InputError(path, std::string("cannot write: ") + std::strerror(errno));
  SectionWriter w(fd, path, options);
  w.write_header();
  {
    // What the file will hold, first: a copy cut short still says how much it had.
    Contents contents;
    for (int t = 0; t < kTableCount; ++t) contents.table_rows[t] = trace.tables().rows(static_cast<TableId>(t));
    contents.strings = trace.strings().size();
    contents.tracks = trace.tracks().size();
    contents.counter_series = trace.counter_series().size();
    ByteWriter payload;
    encode_contents(contents, payload);
    w.write_section(kTagContents, 0, payload);
  }
  WrittenState state;
  write_trace_parts(w, state,
                    TraceParts{trace.strings(), trace.tracks(), trace.devices(), trace.processes(),
                               trace.counter_series(), trace.meta(), trace.tables()},
                    options.rows_per_chunk);
  w.write_footer();
  if (options.sync) w.sync();
  w.close();
  out.commit();
}

// [SECTION] GscopeAppender ------------------------------------------------------------------------

namespace {

class FileAppender final : public GscopeAppender {
 public:
  FileAppender(int fd, const std::string& path, const GscopeWriteOptions& options)
      : writer_(fd, path, options), options_(options) {
    guarded([&] { writer_.write_header(); });
  }

  void append(TraceBuilder& chunk) override {
    guarded([&] {
      const TraceTables& t = chunk.tables();
      write_trace_parts(writer_, state_,
                        TraceParts{chunk.strings(), chunk.tracks(), chunk.devices(), chunk.processes(),
                                   chunk.all_counter_series(), chunk.meta(), t},
                        options_.rows_per_chunk);
      chunk.clear_rows();
    });
  }

  void flush() override {
    guarded([&] { writer_.sync(); });
  }

  void finish() override {
    guarded([&] {
      writer_.write_footer();
      writer_.sync();
      writer_.close();
      finished_ = true;
    });
  }

  std::uint64_t bytes_written() const override { return writer_.offset(); }

 private:
  template <class F>
  void guarded(F&& f) {
    if (finished_) throw std::logic_error("GscopeAppender: " + writer_.path() + " is already finished");
    if (failed_)
      throw InputError(writer_.path(), "an earlier write failed; the file ends at its last complete section");
    try {
      f();
    } catch (...) {
      failed_ = true;
      throw;
    }
  }

  SectionWriter writer_;
  GscopeWriteOptions options_;
  WrittenState state_;
  bool finished_ = false, failed_ = false;
};

}  // namespace

std::unique_ptr<GscopeAppender> GscopeAppender::open(const std::string& path, const GscopeWriteOptions& options) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path, std::string("cannot create: ") + std::strerror(errno));
  return std::make_unique<FileAppender>(fd, path, options);
}

}  // namespace gpuscope
