// Time formatting and ruler ticks for the timeline (pure functions, no ImGui).
//
// Times inside are int64 ns; only the text shown to a person is converted, and
// the unit is chosen so that 3–4 significant digits are visible ("1.25 ms",
// "830 us", "12.0 s").
#pragma once

#include <cstdint>
#include <string>

#include "trace/types.h"

namespace gpuscope::viewer {

// "0 ns", "950 ns", "1.25 us", "830 us", "12.5 ms", "3.20 s", "2 min 05 s".
std::string format_duration(TimeNs ns);

// A time offset from the trace start for ruler labels, printed with just enough
// decimals for `step_ns` to be distinguishable: offset 1'500'000 with step
// 500'000 -> "1.5 ms".
std::string format_offset(TimeNs offset_ns, TimeNs step_ns);

// An exact offset in seconds with all 9 decimals: "42.226422000 s".
std::string format_timestamp(TimeNs offset_ns);

// Bytes per second as "12.3 GB/s" (decimal units, as nvidia-smi and nsys print).
std::string format_bandwidth(double bytes_per_second);
// "4.00 MiB", "512 B".
std::string format_bytes(std::uint64_t bytes);

// Ruler: major ticks every `step_ns` (1, 2 or 5 × 10^k ns, never below 1 ns),
// chosen as the smallest such step whose spacing on screen is at least
// `min_px` pixels; `first` is the first multiple of step_ns >= view start,
// measured from `origin`.
struct RulerTicks {
  TimeNs step_ns = 1;
  TimeNs first = 0;  // absolute time of the first major tick
};
RulerTicks ruler_ticks(TimeNs origin, TimeNs view_start, TimeNs view_end, double width_px, double min_px);

}  // namespace gpuscope::viewer
