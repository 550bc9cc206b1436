// The timeline's own time labels and ruler ticks (pure functions, no ImGui):
// offsets from the trace start and exact timestamps. Durations, shares,
// counts, sizes and bandwidth are written by words/format.h, as in the
// report; these use the same unit names (ns, µs, ms, s).
#pragma once

#include <cstdint>
#include <string>

#include "trace/types.h"

namespace gpuscope::viewer {

// A time offset from the trace start for ruler labels, printed with just enough
// decimals for `step_ns` to be distinguishable: offset 1'500'000 with step
// 500'000 -> "1.5 ms".
std::string format_offset(TimeNs offset_ns, TimeNs step_ns);

// An exact offset in seconds with all 9 decimals: "42.226422000 s".
std::string format_timestamp(TimeNs offset_ns);

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
