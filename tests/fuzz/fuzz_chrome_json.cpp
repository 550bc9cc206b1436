// libFuzzer target for the Chrome/Kineto JSON importer (plain and gzip).
// The input is written to an in-memory file (memfd) and imported through a
// path, as a user's file would be. The first byte picks the read-buffer size
// so that item boundaries fall everywhere. Any exception other than
// InputError, any crash, hang or sanitizer report is a bug, and so is any
// difference between the one-thread and the two-thread parse.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "import/chrome_json.h"
#include "import/open_trace.h"
#include "trace/budget.h"

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
  // A small budget: a .json.gz that expands a thousandfold is refused within
  // it (the run's -rss_limit_mb would catch one that is not).
  gpuscope::set_memory_budget(8u << 20);
  const int fd = memfd();
  if (fd < 0 || ::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  // Both parse modes (the calling thread alone; two threads merging in file
  // order) must give the same trace or the same error.
  std::string outcome[2];
  for (int threads = 1; threads <= 2; ++threads) {
    gpuscope::ChromeImportOptions options;
    options.buffer_bytes = buffer_bytes;
    options.parse_threads = threads;
    std::string& out = outcome[threads - 1];
    try {
      const gpuscope::Trace t = gpuscope::import_chrome_json(path, options);
      // Touch the result so that a bad table would be noticed by the sanitizers.
      for (std::size_t i = 0; i < t.kernels().size(); ++i) out.append(t.str(t.kernels().name[i])).push_back('|');
      for (std::size_t i = 0; i < t.ranges().size(); ++i) out.append(t.str(t.ranges().name[i])).push_back('|');
      for (std::size_t i = 0; i < t.api_calls().size(); ++i) out += std::to_string(t.api_calls().start[i]) + "|";
      out += std::to_string(t.tracks().size()) + " " + std::to_string(t.strings().size()) + " " +
             std::to_string(t.counters().size()) + " " + std::to_string(t.meta().stats.size());
    } catch (const gpuscope::InputError& e) {
      out = std::string("error: ") + e.what();
    }
  }
  if (outcome[0] != outcome[1]) {
    std::fprintf(stderr, "one thread: %s\ntwo threads: %s\n", outcome[0].substr(0, 300).c_str(),
                 outcome[1].substr(0, 300).c_str());
    __builtin_trap();
  }
  try {
    (void)gpuscope::detect_trace_file(path);
  } catch (const gpuscope::InputError&) {
  }
  return 0;
}
