// libFuzzer target for the Chrome/Kineto JSON importer (plain and gzip).
// The input is written to an in-memory file (memfd) and imported through a
// path, as a user's file would be. The first byte picks the read-buffer size
// so that item boundaries fall everywhere. Any exception other than
// InputError, any crash, hang or sanitizer report is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "import/chrome_json.h"
#include "import/open_trace.h"

namespace {
int memfd() {
  static const int fd = ::memfd_create("fuzz_chrome_json", 0);
  return fd;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr std::size_t kBuffers[] = {16, 17, 33, 64, 100, 1024, 4096};
  const std::size_t buffer_bytes = kBuffers[data[0] % (sizeof kBuffers / sizeof kBuffers[0])];
  ++data;
  --size;
  const int fd = memfd();
  if (fd < 0 || ::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  gpuscope::ChromeImportOptions options;
  options.buffer_bytes = buffer_bytes;
  try {
    const gpuscope::Trace t = gpuscope::import_chrome_json(path, options);
    // Touch the result so that a bad table would be noticed by the sanitizers.
    std::size_t n = 0;
    for (std::size_t i = 0; i < t.kernels().size(); ++i) n += t.str(t.kernels().name[i]).size();
    for (std::size_t i = 0; i < t.ranges().size(); ++i) n += t.str(t.ranges().name[i]).size();
    if (n == 0xdeadbeef) std::puts("");
  } catch (const gpuscope::InputError&) {
  }
  try {
    (void)gpuscope::detect_trace_file(path);
  } catch (const gpuscope::InputError&) {
  }
  return 0;
}
