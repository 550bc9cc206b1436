#include "options.h"  // relative: the fuzz tree compiles this file without the viewer's include path

#include <charconv>

#include "text.h"

namespace gpuscope::viewer {

bool parse_size(std::string_view s, int* width, int* height, std::string* error) {
  const std::size_t x = s.find_first_of("xX");
  if (x == std::string_view::npos) {
    *error = cat("size must look like 1280x800, got '", s, "'");
    return false;
  }
  auto side = [&](std::string_view part, int* out) {
    int v = 0;
    const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || p != part.data() + part.size() || part.empty()) return false;
    *out = v;
    return v >= 64 && v <= 16384;
  };
  int w = 0, h = 0;
  if (!side(s.substr(0, x), &w) || !side(s.substr(x + 1), &h)) {
    *error = cat("size must be WIDTHxHEIGHT with each side 64..16384 pixels, got '", s, "'");
    return false;
  }
  *width = w;
  *height = h;
  return true;
}

bool parse_duration(std::string_view s, TimeNs* out, std::string* error) {
  // Whole part, then an optional fraction: "1.5ms", as the viewer writes times.
  std::uint64_t v = 0;
  const char* const end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  const char* q = p;
  std::string_view fraction;
  if (ec == std::errc() && q < end && *q == '.') {
    const char* f = ++q;
    while (q < end && *q >= '0' && *q <= '9') ++q;
    fraction = std::string_view(f, static_cast<std::size_t>(q - f));
  }
  if (ec != std::errc() || p == s.data() || (q > p && fraction.empty())) {
    *error = cat("'", s, "' is not a time (a number with an optional unit ns, µs (or us), ms or s)");
    return false;
  }
  const std::string_view unit = s.substr(static_cast<std::size_t>(q - s.data()));
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "ns")
    scale = 1;
  else if (unit == "us" || unit == "µs")
    scale = 1'000;
  else if (unit == "ms")
    scale = 1'000'000;
  else if (unit == "s")
    scale = 1'000'000'000;
  if (scale == 0) {
    *error = cat("'", s, "': unknown unit '", unit, "' (use ns, µs (or us), ms or s)");
    return false;
  }
  constexpr std::uint64_t kMax = 1'000'000'000'000'000ull;  // 10^15 ns ≈ 11.6 days
  if (v > kMax / scale) {
    *error = cat("'", s, "' is too large (at most 10^15 ns)");
    return false;
  }
  // The fraction to the nearest ns: its first 9 digits (a unit is at most 10^9 ns) as
  // billionths of the unit; 10^9 × 10^9 fits 64 bits.
  std::uint64_t billionths = 0;
  for (std::size_t i = 0; i < 9; ++i) billionths = billionths * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  const bool round_up = fraction.size() > 9 && fraction[9] >= '5';
  const std::uint64_t part = (billionths * scale + (round_up ? scale : 0) + 500'000'000) / 1'000'000'000;
  if (v * scale + part > kMax) {
    *error = cat("'", s, "' is too large (at most 10^15 ns)");
    return false;
  }
  *out = static_cast<TimeNs>(v * scale + part);
  return true;
}

bool parse_zoom(std::string_view s, TimeNs* start, TimeNs* end, std::string* error) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos) {
    *error = cat("zoom must be START:END (from the start of the trace, e.g. 0:5ms), got '", s, "'");
    return false;
  }
  TimeNs a = 0, b = 0;
  if (!parse_duration(s.substr(0, colon), &a, error) || !parse_duration(s.substr(colon + 1), &b, error)) return false;
  if (b <= a) {
    *error = cat("zoom end must be after its start, got '", s, "'");
    return false;
  }
  *start = a;
  *end = b;
  return true;
}

std::string json_path_for(std::string_view png_path) {
  std::string s(png_path);
  if (s.size() >= 4) {
    std::string ext = s.substr(s.size() - 4);
    for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (ext == ".png") return s.substr(0, s.size() - 4) + ".json";
  }
  return s + ".json";
}

}  // namespace gpuscope::viewer
