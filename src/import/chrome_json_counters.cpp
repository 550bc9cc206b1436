// The Chrome JSON importer's counters (chrome_json_parser.h): counter (C)
// events, one series per numeric arg, and Kineto's [memory] events, the
// allocator's series per device.
//
// [SECTION] Counter events
// [SECTION] Memory events
#include <algorithm>

#include "import/chrome_json_parser.h"

namespace gpuscope::detail::chrome {

// [SECTION] Counter events -----------------------------------------------------------------------

// The series of that name, device and unit, made on first use.
std::uint32_t EventParser::named_series(std::string name, std::uint32_t device, std::string_view unit) {
  std::string lookup = name;
  lookup.append(1, '\x1f').append(std::to_string(device)).append(1, '\x1f').append(unit);
  auto it = series_.find(lookup);
  if (it != series_.end()) return it->second;
  const std::uint32_t id = builder_.counter_series(name, device, unit);
  series_.emplace(std::move(lookup), id);
  return id;
}

// Each numeric arg of a C event is one series, "<name>.<arg>" ("<name> <id>.<arg>" with an id).
// A GPU's hardware series as gpuscope's Chrome export writes them ("hw.*",
// "nvml.*" on the GPU's process, one arg named after the unit) come back as
// they were: that name, unit and device.
void EventParser::add_counter(Event& ev, const JsonBatch& b) {
  if (ev.args.numbers.empty()) return skip(Skip::counter_without_values);
  std::string base = to_string(ev.name, b);
  if (ev.id.kind == IdValue::Kind::none && ev.args.numbers.size() == 1 &&
      (base.starts_with(series_name::kHardwarePrefix) || base.starts_with(series_name::kNvmlPrefix)) &&
      ev.pid.kind == IdValue::Kind::number && ev.pid.number >= 0 && ev.pid.number < 0xffffffffLL) {
    const auto& [key, value] = ev.args.numbers.front();
    std::string unit = to_string(key, b);
    if (unit == "value") unit.clear();
    const std::uint32_t id = named_series(std::move(base), static_cast<std::uint32_t>(ev.pid.number), unit);
    builder_.add_counter(CounterRow{ev.ts, id, value});
    return;
  }
  if (ev.id.kind == IdValue::Kind::number)
    base.append(1, ' ').append(std::to_string(ev.id.number));
  else if (ev.id.kind == IdValue::Kind::string)
    base.append(1, ' ').append(unescape(ev.id.text, b));
  for (const auto& [key, value] : ev.args.numbers) {
    std::string series = base + "." + to_string(key, b);
    auto it = series_.find(series);
    std::uint32_t id;
    if (it != series_.end()) {
      id = it->second;
    } else {
      id = builder_.counter_series(series);
      series_.emplace(std::move(series), id);
    }
    builder_.add_counter(CounterRow{ev.ts, id, value});
  }
}

// [SECTION] Memory events ------------------------------------------------------------------------

std::uint32_t EventParser::memory_series(std::uint32_t device, MemorySeries which) {
  const std::uint64_t key = (std::uint64_t{device} << 2) | static_cast<std::uint64_t>(which);
  auto it = memory_series_.find(key);
  if (it != memory_series_.end()) return it->second;
  const std::string_view name = which == MemorySeries::allocated     ? series_name::kMemoryAllocated
                                : which == MemorySeries::since_start ? series_name::kMemoryAllocatedSinceStart
                                                                     : series_name::kMemoryReserved;
  const std::uint32_t id = builder_.counter_series(name, device, "B");
  memory_series_.emplace(key, id);
  if (which == MemorySeries::since_start) since_start_series_.push_back(id);
  if (device != kNoDevice && std::find(memory_devices_.begin(), memory_devices_.end(), device) == memory_devices_.end())
    memory_devices_.push_back(device);
  return id;
}

// A [memory] event: one row of memory_events on the device's allocated
// series; with "Total Allocated" / "Total Reserved" (current Kineto) also a
// sample of the allocated and reserved series. Without the totals (2021
// schema) the event belongs to the "since start" series, whose samples
// finish() adds up from the changes. Device Type 0 is the host (c10's CPU),
// 1 a GPU (CUDA, also ROCm's as PyTorch masquerades it) and 6 a GPU under
// c10's HIP type (ROCm builds that record it as such).
void EventParser::add_memory_event(const Event& ev) {
  const Args& a = ev.args;
  if (!(a.present & kArgMemBytes)) return skip(Skip::memory_without_bytes);
  std::uint32_t device = kNoDevice;
  const bool has_id = (a.present & kArgMemDevice) && a.mem_device >= 0 && a.mem_device <= 0xffffffffLL;
  if (a.present & kArgMemDeviceType) {
    if (a.mem_device_type == 1 || a.mem_device_type == 6) {
      if (!has_id) return skip(Skip::memory_on_other_device);
      device = static_cast<std::uint32_t>(a.mem_device);
    } else if (a.mem_device_type != 0) {
      return skip(Skip::memory_on_other_device);
    }
  } else if (has_id) {
    device = static_cast<std::uint32_t>(a.mem_device);
  }
  const bool absolute = a.present & kArgTotalAllocated;
  const std::uint32_t series = memory_series(device, absolute ? MemorySeries::allocated : MemorySeries::since_start);
  MemoryEventRow r;
  r.time = ev.ts;
  r.series = series;
  r.bytes = a.mem_bytes;
  if ((a.present & kArgAddr) && a.addr > 0) r.address = static_cast<std::uint64_t>(a.addr);
  builder_.add_memory_event(r);
  if (absolute) builder_.add_counter(CounterRow{ev.ts, series, static_cast<double>(a.total_allocated)});
  if ((a.present & kArgTotalReserved) && device != kNoDevice)
    builder_.add_counter(
        CounterRow{ev.ts, memory_series(device, MemorySeries::reserved), static_cast<double>(a.total_reserved)});
}

// The samples of each "since start" series: its changes added up in time
// order (file order among equal times), from 0 before the first.
void EventParser::add_since_start_samples() {
  const MemoryEventTable& m = builder_.tables().memory_events;
  for (std::uint32_t series : since_start_series_) {
    std::vector<RowIndex> rows;
    for (std::size_t i = 0; i < m.size(); ++i)
      if (m.series[i] == series) rows.push_back(static_cast<RowIndex>(i));
    std::stable_sort(rows.begin(), rows.end(), [&](RowIndex x, RowIndex y) { return m.time[x] < m.time[y]; });
    std::int64_t level = 0;
    for (RowIndex i : rows) {
      level += m.bytes[i];
      builder_.add_counter(CounterRow{m.time[i], series, static_cast<double>(level)});
    }
  }
}

}  // namespace gpuscope::detail::chrome
