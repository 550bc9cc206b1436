// libFuzzer target: gpuscope-view's flag-value parsers (--size, --zoom and the
// durations inside it) on arbitrary text. They must never crash, and what
// they accept must make sense: sizes in range, zoom start < end, durations
// non-negative and within 10^15 ns; what they refuse must say why.
// Seeds: tests/fuzz/corpus/fuzz_viewer_options/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

// The viewer is not built in the fuzz tree (no ImGui there); its parsers have
// no dependency beyond trace/types.h: tests/fuzz/CMakeLists.txt compiles
// viewer/options.cpp into this target.
#include "../../viewer/options.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::string_view s(reinterpret_cast<const char*>(data), size);
  std::string error;
  int w = 0, h = 0;
  if (viewer::parse_size(s, &w, &h, &error)) {
    if (w < 64 || w > 16384 || h < 64 || h > 16384) std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  error.clear();
  TimeNs a = 0, b = 0;
  if (viewer::parse_zoom(s, &a, &b, &error)) {
    if (a < 0 || b <= a || b > 1'000'000'000'000'000) std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  error.clear();
  TimeNs d = 0;
  if (viewer::parse_duration(s, &d, &error)) {
    if (d < 0 || d > 1'000'000'000'000'000) std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  (void)viewer::json_path_for(s);
  return 0;
}
