// open_trace: any trace file gpuscope understands, chosen by its first bytes.
// (Written by the import engineer because every command needed the JSON
// branch before the export engineer's version landed; either may refine it.)
#include "import/open_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "import/chrome_json.h"
#include "store/gscope.h"

namespace gpuscope {

TraceFileKind detect_trace_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(path, "is a directory, expected a trace file");
  }
  unsigned char head[4096];
  std::size_t got = 0;
  while (got < sizeof head) {
    const ssize_t r = ::read(fd, head + got, sizeof head - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  if (got >= 2 && head[0] == 0x1f && head[1] == 0x8b) return TraceFileKind::chrome_json_gz;
  if (is_gscope_file(path)) return TraceFileKind::gscope;
  // JSON: the first byte that is not whitespace (after an optional UTF-8 BOM) opens an object or array.
  std::size_t i = got >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF ? 3 : 0;
  while (i < got && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i < got && (head[i] == '{' || head[i] == '[')) return TraceFileKind::chrome_json;
  return TraceFileKind::unknown;
}

Trace open_trace(const std::string& path, const LoadProgress& progress) {
  switch (detect_trace_file(path)) {
    case TraceFileKind::gscope: return read_gscope(path, nullptr, progress);
    case TraceFileKind::chrome_json:
    case TraceFileKind::chrome_json_gz: {
      ChromeImportOptions options;
      options.progress = progress;
      return import_chrome_json(path, options);
    }
    case TraceFileKind::unknown: break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && st.st_size == 0) throw InputError(path, "empty file: not a trace", 0);
  throw InputError(path,
                   "not a trace file gpuscope understands (expected a .gscope file, Chrome/Kineto trace JSON, or "
                   "gzip-compressed JSON)",
                   0);
}

}  // namespace gpuscope
