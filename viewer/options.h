// Parsing of gpuscope-view's flag values (no ImGui, no GL, so the fuzz target
// and the unit tests can use it alone). Every parser returns false and sets
// `error` to a one-line reason on bad input; none of them throws.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/types.h"

namespace gpuscope::viewer {

// "1280x800" (also "1280X800"); each side 64..16384 pixels.
bool parse_size(std::string_view s, int* width, int* height, std::string* error);

// A duration: a number with an optional unit — ns (default), µs (or us), ms, s —
// "1500", "250us", "2ms", "1.5ms", "0.25s"; decimals rounded to the nearest
// ns. Non-negative; at most 10^15 ns.
bool parse_duration(std::string_view s, TimeNs* out, std::string* error);

// "START:END": two durations measured from the start of the trace, START < END
// (--zoom and --range).
bool parse_zoom(std::string_view s, TimeNs* start, TimeNs* end, std::string* error);

// "OUT.png" -> "OUT.json" (any other name: NAME + ".json").
std::string json_path_for(std::string_view png_path);

}  // namespace gpuscope::viewer
