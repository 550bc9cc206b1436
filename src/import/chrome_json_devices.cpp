// The Chrome JSON importer's devices (chrome_json_parser.h): Kineto's
// "deviceProperties" (one object per GPU, its keys a table here), and the
// trace's device list: the devices the events use, described when listed.
//
// [SECTION] deviceProperties
// [SECTION] The devices the events use
#include <algorithm>

#include "import/chrome_json_parser.h"

namespace gpuscope::detail::chrome {

// [SECTION] deviceProperties ---------------------------------------------------------------------

namespace {

// The integer properties kept as they are (clamped to 32 bits). Read once
// per device: a plain table.
struct DeviceKey {
  std::string_view key;
  std::uint32_t Device::*field;
};
constexpr DeviceKey kDeviceKeys[] = {
    {"numSms", &Device::sm_count},
    {"maxThreadsPerBlock", &Device::max_threads_per_block},
    {"maxThreadsPerMultiprocessor", &Device::max_threads_per_sm},
    {"maxBlocksPerMultiprocessor", &Device::max_blocks_per_sm},
    {"maxBlocksPerMultiProcessor", &Device::max_blocks_per_sm},
    {"regsPerMultiprocessor", &Device::registers_per_sm},
    {"sharedMemPerMultiprocessor", &Device::shared_memory_per_sm},
    {"warpSize", &Device::warp_size},
    {"clockRate", &Device::core_clock_khz},
    {"memoryClockRate", &Device::memory_clock_khz},
    {"memoryBusWidth", &Device::memory_bus_width_bits},
};

// Sets the integer property `key` of d (nothing for a key it does not know).
void set_device_integer(Device& d, std::string_view key, std::int64_t n, bool* has_id) {
  if (key == "id") {
    d.id = as_u32(n);
    *has_id = true;
  } else if (key == "totalGlobalMem") {
    d.memory_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(n, 0));
  } else if (key == "computeMajor") {
    d.compute_major = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, 0, 1000));
  } else if (key == "computeMinor") {
    d.compute_minor = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, 0, 1000));
  } else {
    for (const DeviceKey& k : kDeviceKeys)
      if (k.key == key) {
        d.*k.field = as_u32(n);
        return;
      }
  }
}

}  // namespace

// Each object with an "id" describes that device; other elements are checked, not used.
void EventParser::read_device_properties(EventReader& reader, Walker& w, const JsonBatch& b) {
  w.expect('[', "expected an array");
  w.skip_ws();
  if (w.consume(']')) return;
  for (;;) {
    w.skip_ws();
    if (w.peek() == '{') {
      Device d;
      bool has_id = false;
      reader.for_each_member(w, b, [&](std::string_view key) {
        if (is_key(key, "name") || is_key(key, "uuid")) {
          const RawString s = EventReader::read_string(w);
          if (s.present) (is_key(key, "name") ? d.name : d.uuid) = to_string(s, b);
          return;
        }
        std::int64_t n = 0;
        if (EventReader::read_int(w, &n)) set_device_integer(d, key, n, &has_id);
      });
      if (has_id) listed_devices_.push_back(std::move(d));
    } else {
      w.skip_value();
    }
    w.skip_ws();
    if (w.consume(',')) continue;
    w.expect(']', "expected ',' or ']' in an array");
    return;
  }
}

// [SECTION] The devices the events use -----------------------------------------------------------

// Memory events under the one listed device's number (the process's device
// 0, PyTorch's ordinal) while every GPU event is on one other number (ROCm
// traces put kernels on the physical device's): the process saw one GPU, so
// its memory is that GPU's. Said in "chrome.memory_device_renumbered"; with
// more than one device listed or used, nothing is guessed.
void EventParser::renumber_memory_device() {
  if (listed_devices_.size() != 1 || memory_devices_.size() != 1) return;
  const std::uint32_t from = memory_devices_[0];
  if (from != listed_devices_[0].id) return;
  std::vector<std::uint32_t> gpu = sync_devices_;
  for (const Track& t : builder_.tracks())
    if (t.kind == TrackKind::gpu) gpu.push_back(t.device);
  std::sort(gpu.begin(), gpu.end());
  gpu.erase(std::unique(gpu.begin(), gpu.end()), gpu.end());
  if (gpu.size() != 1 || gpu[0] == from) return;
  builder_.renumber_counter_series(from, gpu[0]);
  memory_devices_[0] = gpu[0];
  builder_.meta().set_property("chrome.memory_device_renumbered",
                               "memory events of device " + std::to_string(from) + " are device " +
                                   std::to_string(gpu[0]) +
                                   "'s: the only device listed, and the events' only other GPU");
}

// Devices: those the events use (GPU tracks, syncs, memory series),
// described by deviceProperties when listed there.
void EventParser::add_devices() {
  renumber_memory_device();
  std::vector<std::uint32_t> used = sync_devices_;
  for (const Track& t : builder_.tracks())
    if (t.kind == TrackKind::gpu) used.push_back(t.device);
  // Memory events of a GPU on which nothing of the trace ran, beside GPUs
  // that ran its work: kept, but no GPU's figures include them (counted).
  if (!used.empty()) {
    const auto& series = builder_.all_counter_series();
    const MemoryEventTable& m = builder_.tables().memory_events;
    std::uint64_t elsewhere = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      const std::uint32_t d = series[m.series[i]].device;
      elsewhere += d != kNoDevice && std::find(used.begin(), used.end(), d) == used.end();
    }
    if (elsewhere) builder_.meta().set_stat("import.unattributed.memory_events", elsewhere);
  }
  used.insert(used.end(), memory_devices_.begin(), memory_devices_.end());
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  // One GPU listed under another number than the one GPU the events use
  // (ROCm traces list the process's device 0 and put its kernels on the
  // physical device's number): the process saw one GPU, so it is that one.
  const bool one_renumbered = listed_devices_.size() == 1 && used.size() == 1 && listed_devices_[0].id != used[0];
  if (one_renumbered)
    builder_.meta().set_property("chrome.device_properties_renumbered",
                                 "listed device " + std::to_string(listed_devices_[0].id) + " is device " +
                                     std::to_string(used[0]) + ": the only one listed and the only one the events use");
  for (std::uint32_t id : used) {
    Device d;
    d.id = id;
    for (const Device& listed : listed_devices_)
      if (listed.id == id || one_renumbered) d = listed;
    d.id = id;
    builder_.add_device(d);
  }
  if (!listed_devices_.empty())
    builder_.meta().set_property("chrome.devices_listed", std::to_string(listed_devices_.size()));
}

}  // namespace gpuscope::detail::chrome
