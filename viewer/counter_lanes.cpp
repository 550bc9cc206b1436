#include "viewer/counter_lanes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "words/format.h"

namespace gpuscope::viewer {

namespace {

bool is_memory(const CounterSeries& s) { return s.name.starts_with("memory."); }

}  // namespace

std::vector<CounterLane> counter_lanes(const Trace& trace, std::uint32_t device) {
  std::vector<CounterLane> lanes;
  const CounterTable& c = trace.counters();
  for (std::uint32_t s = 0; s < trace.counter_series().size(); ++s) {
    if (trace.counter_series()[s].device != device) continue;
    const RowRange rows = trace.rows_of(TableId::counters, s);
    CounterLane lane;
    lane.series = s;
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
      const double v = c.value[i];
      if (!std::isfinite(v)) continue;
      if (!lane.peak.valid || v > lane.peak.value) lane.peak = {v, c.time[i], true};
      lane.floor = std::min(lane.floor, v);
    }
    if (lane.peak.valid) lanes.push_back(lane);
  }
  std::stable_sort(lanes.begin(), lanes.end(), [&](const CounterLane& a, const CounterLane& b) {
    const CounterSeries &x = trace.counter_series()[a.series], &y = trace.counter_series()[b.series];
    if (is_memory(x) != is_memory(y)) return is_memory(x);
    return x.name < y.name;
  });
  return lanes;
}

void sample_counter(const Trace& trace, std::uint32_t series, TimeNs start, double ns_per_column, std::size_t columns,
                    std::vector<CounterColumn>& out) {
  out.assign(columns, CounterColumn{});
  const RowRange rows = trace.rows_of(TableId::counters, series);
  const std::vector<TimeNs>& time = trace.counters().time;
  const std::vector<double>& value = trace.counters().value;
  // i: the first sample after the current column's start.
  std::size_t i = static_cast<std::size_t>(std::upper_bound(time.begin() + rows.begin, time.begin() + rows.end, start) -
                                           time.begin());
  for (std::size_t c = 0; c < columns; ++c) {
    const auto t1 = static_cast<TimeNs>(static_cast<double>(start) + ns_per_column * static_cast<double>(c + 1));
    CounterColumn& col = out[c];
    auto take = [&](double v) {
      if (!std::isfinite(v)) return;
      col.max = col.has ? std::max(col.max, v) : v;
      col.has = true;
    };
    if (i > rows.begin) take(value[i - 1]);  // the level the column starts at
    while (i < rows.end && time[i] < t1) take(value[i++]);
  }
}

std::optional<double> counter_value_at(const Trace& trace, std::uint32_t series, TimeNs t) {
  const RowRange rows = trace.rows_of(TableId::counters, series);
  const std::vector<TimeNs>& time = trace.counters().time;
  const auto it = std::upper_bound(time.begin() + rows.begin, time.begin() + rows.end, t);
  if (it == time.begin() + rows.begin) return std::nullopt;
  return trace.counters().value[static_cast<std::size_t>(it - time.begin()) - 1];
}

std::string format_counter_value(double v, std::string_view unit) {
  if (!std::isfinite(v)) return "n/a";
  if (unit == "B") {
    std::string out(v < 0 ? "-" : "");
    out += format::bytes(static_cast<std::uint64_t>(std::abs(v)));
    return out;
  }
  char buf[64];
  if (unit == "%")
    std::snprintf(buf, sizeof buf, "%.1f %%", v);
  else if (unit.empty())
    std::snprintf(buf, sizeof buf, "%.4g", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g %.*s", v, static_cast<int>(unit.size()), unit.data());
  return buf;
}

std::string counter_label(const CounterSeries& s) {
  std::string label = s.name;
  if (label.starts_with("memory.")) {
    label.replace(0, 7, "memory ");
    std::replace(label.begin(), label.end(), '_', ' ');
  }
  if (!s.unit.empty() && s.unit != "B") label += " (" + s.unit + ")";
  return label;
}

}  // namespace gpuscope::viewer
