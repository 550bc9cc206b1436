#include "viewer/time_format.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace gpuscope::viewer {
namespace {

// Prints `value / scale` with `decimals` digits after the point, rounding half
// away from zero in integer arithmetic, so 1'999'999 ns never prints "2.000 ms"
// as "1.1000 ms" the way a careless double path can.
std::string fixed_point(std::int64_t value, std::int64_t scale, int decimals, const char* unit) {
  std::int64_t pow10 = 1;
  for (int i = 0; i < decimals; ++i) pow10 *= 10;
  const bool negative = value < 0;
  // |value| may be INT64_MIN: go through unsigned.
  const std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  const std::uint64_t s = static_cast<std::uint64_t>(scale);
  const std::uint64_t p = static_cast<std::uint64_t>(pow10);
  // Rounded fixed-point value: mag * p / s, computed without overflow.
  const std::uint64_t whole = mag / s, rest = mag % s;
  const std::uint64_t frac_scaled = (rest * p + s / 2) / s;  // rest < s <= 6e10, p <= 1e3: fits
  std::uint64_t int_part = whole, frac_part = frac_scaled;
  if (frac_part >= p) {
    int_part += 1;
    frac_part -= p;
  }
  char buf[64];
  if (decimals == 0)
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 " %s", negative ? "-" : "", int_part, unit);
  else
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%0*" PRIu64 " %s", negative ? "-" : "", int_part, decimals, frac_part,
                  unit);
  return buf;
}

struct Unit {
  std::int64_t scale;
  const char* name;
};
constexpr Unit kUnits[] = {{1, "ns"}, {1'000, "µs"}, {1'000'000, "ms"}, {1'000'000'000, "s"}};

}  // namespace

std::string format_offset(TimeNs offset_ns, TimeNs step_ns) {
  if (step_ns <= 0) step_ns = 1;
  const std::uint64_t mag =
      offset_ns < 0 ? 0 - static_cast<std::uint64_t>(offset_ns) : static_cast<std::uint64_t>(offset_ns);
  // The offset's own unit, but never one so large that the step would need
  // more than 3 decimals: deep zoom into a long trace prints "1000000.5 µs".
  int u = 3;
  while (u > 0 && (mag < static_cast<std::uint64_t>(kUnits[u].scale) || kUnits[u].scale > 1000 * step_ns)) --u;
  if (mag == 0)  // the origin: in the step's unit ("0 ms" beside "1 ms")
    for (u = 3; u > 0 && kUnits[u].scale > step_ns;) --u;
  // Decimals: enough that one step changes the last printed digit.
  int decimals = 0;
  std::int64_t resolution = kUnits[u].scale;
  while (resolution > step_ns && resolution >= 10) {
    resolution /= 10;
    ++decimals;
  }
  return fixed_point(offset_ns, kUnits[u].scale, decimals, kUnits[u].name);
}

std::string format_timestamp(TimeNs offset_ns) { return fixed_point(offset_ns, 1'000'000'000, 9, "s"); }

RulerTicks ruler_ticks(TimeNs origin, TimeNs view_start, TimeNs view_end, double width_px, double min_px) {
  RulerTicks r;
  const double span = static_cast<double>(view_end - view_start);
  if (!(width_px > 0) || !(span > 0)) {
    r.first = view_start;
    return r;
  }
  const double min_step = span * min_px / width_px;  // ns that `min_px` pixels cover
  // Smallest 1/2/5 × 10^k >= min_step, in integers (steps fit easily in int64).
  TimeNs step = 1;
  for (TimeNs decade = 1;; decade *= 10) {
    bool found = false;
    for (TimeNs m : {1, 2, 5}) {
      if (static_cast<double>(decade * m) >= min_step) {
        step = decade * m;
        found = true;
        break;
      }
    }
    if (found || decade > std::numeric_limits<TimeNs>::max() / 100) break;
  }
  r.step_ns = step;
  // First multiple of step (relative to origin) at or after view_start; floor
  // division that is right for negative offsets too.
  const TimeNs rel = view_start - origin;
  TimeNs q = rel / step;
  if (rel % step != 0 && rel > 0) ++q;
  r.first = origin + q * step;
  return r;
}

}  // namespace gpuscope::viewer
