// Counter series as timeline lanes: memory (allocated, reserved), power, any
// Chrome `C` counter. A series is a step function (each sample holds until the
// next); a lane shows, per pixel column, the highest level the column covers,
// so a short peak stays visible at any zoom. Sampling is O(columns + samples
// in view) after one binary search.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace.h"

namespace gpuscope::viewer {

struct CounterColumn {
  double max = 0;    // highest level in the column
  bool has = false;  // false before the series' first sample
};

struct CounterPeak {
  double value = 0;
  TimeNs time = 0;  // when it was first reached
  bool valid = false;
};

// The series of one lane and its peak over the whole trace (the lane's scale).
struct CounterLane {
  std::uint32_t series = 0;
  CounterPeak peak;
  double floor = 0;  // the lowest sample, or 0 when none is negative
};

// Every series with samples, in display order: for `device` (kNoDevice: the
// series that belong to no GPU), memory first, then by name.
std::vector<CounterLane> counter_lanes(const Trace& trace, std::uint32_t device);

// Per column c of `columns`, [start + c·ns_per_column, start + (c+1)·ns_per_column).
void sample_counter(const Trace& trace, std::uint32_t series, TimeNs start, double ns_per_column, std::size_t columns,
                    std::vector<CounterColumn>& out);

// The level at `t`: the last sample at or before it; nothing before the first.
std::optional<double> counter_value_at(const Trace& trace, std::uint32_t series, TimeNs t);

// "1.23 GiB" for bytes, "245.1 W", "37.5 %", else the number and the unit.
std::string format_counter_value(double value, std::string_view unit);

// The lane's label: "memory allocated", "power (W)", the series' name otherwise.
std::string counter_label(const CounterSeries& s);

}  // namespace gpuscope::viewer
