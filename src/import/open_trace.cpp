// open_trace: any trace file gpuscope reads, chosen by its first bytes.
//
// Names lie (a .json that is gzip, a .gscope renamed .trace), contents do not:
// .gscope files start with their magic, gzip with 1f 8b, JSON with '{' or '['
// after optional whitespace and a UTF-8 BOM, SQLite with "SQLite format 3\0".
// Only an unknown file named like a database (.sqlite, .sqlite3, .db) goes to
// the SQLite importer anyway, whose error says why it is not one (an
// encrypted database has no readable header).
#include "import/open_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "import/chrome_json.h"
#include "import/nsys/nsys_sqlite.h"
#include "store/gscope.h"
#include "trace/files.h"

namespace gpuscope {

namespace {

struct Head {
  std::uint8_t bytes[64];
  std::size_t size = 0;
  std::uint64_t file_size = 0;
};

// Reads the first bytes. Throws InputError when the file cannot be read.
Head read_head(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  Head h;
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw InputError(path, "is a directory, not a trace file");
    }
    h.file_size = static_cast<std::uint64_t>(st.st_size);
  }
  while (h.size < sizeof h.bytes) {
    const ssize_t r = ::read(fd, h.bytes + h.size, sizeof h.bytes - h.size);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int e = errno;
      ::close(fd);
      throw InputError(path, std::string("cannot read: ") + std::strerror(e));
    }
    if (r == 0) break;
    h.size += static_cast<std::size_t>(r);
  }
  ::close(fd);
  return h;
}

constexpr const char* kNotATrace =
    "not a trace file gpuscope reads (expected .gscope, Chrome trace JSON, .json.gz or an Nsight Systems SQLite "
    "export)";

TraceFileKind classify(const Head& h) {
  const std::uint8_t* p = h.bytes;
  const std::size_t n = h.size;
  // "\x89GSC" is enough: a damaged .gscope magic still goes to the .gscope
  // reader, whose error says exactly what is wrong with it.
  if (n >= 4 && p[0] == 0x89 && p[1] == 'G' && p[2] == 'S' && p[3] == 'C') return TraceFileKind::gscope;
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return TraceFileKind::chrome_json_gz;
  if (is_sqlite_header(p, n)) return TraceFileKind::nsys_sqlite;
  std::size_t i = 0;
  if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) i = 3;  // UTF-8 BOM
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) ++i;
  if (i < n && (p[i] == '{' || p[i] == '[')) return TraceFileKind::chrome_json;
  return TraceFileKind::unknown;
}

}  // namespace

std::string seekable_trace_path(const std::string& path) {
  return files::seekable_path(path, 10, [&](std::span<const std::uint8_t> bytes) {
    Head h;
    h.size = std::min(bytes.size(), sizeof h.bytes);
    std::memcpy(h.bytes, bytes.data(), h.size);
    if (classify(h) != TraceFileKind::unknown || named_like_sqlite(path)) return;
    if (h.size == 0) throw InputError(files::input_name(path), "empty (not a trace)");
    throw InputError(files::input_name(path), std::string(kNotATrace) + "; its first bytes are none of these");
  });
}

TraceFileKind detect_trace_file(const std::string& path) { return classify(read_head(seekable_trace_path(path))); }

bool named_like_sqlite(const std::string& path) {
  for (const char* ext : {".sqlite", ".sqlite3", ".db"}) {
    const std::size_t n = std::strlen(ext);
    if (path.size() > n && path.compare(path.size() - n, n, ext) == 0) return true;
  }
  return false;
}

Trace open_trace(const std::string& path, const LoadProgress& progress) {
  // A pipe or FIFO is read once into memory; errors still name what the user gave.
  const std::string file = seekable_trace_path(path);
  try {
    const Head head = read_head(file);
    switch (classify(head)) {
      case TraceFileKind::gscope: return read_gscope(file, nullptr, progress);
      case TraceFileKind::chrome_json:
      case TraceFileKind::chrome_json_gz: {
        ChromeImportOptions options;
        options.progress = progress;
        return import_chrome_json(file, options);  // it reads gzip or plain itself
      }
      case TraceFileKind::nsys_sqlite: {
        NsysImportOptions options;
        options.progress = progress;
        return import_nsys_sqlite(file, options);
      }
      case TraceFileKind::unknown: break;
    }
    if (head.size == 0) throw InputError(file, "empty file (not a trace)");
    if (named_like_sqlite(path)) return import_nsys_sqlite(file);  // throws: says what is wrong with it
    throw InputError(file, kNotATrace);
  } catch (const InputError& e) {
    if (file == path) throw;
    throw InputError(files::input_name(path), e.reason(), e.offset());
  }
}

}  // namespace gpuscope
