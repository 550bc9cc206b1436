#include "capture/nvml_source.h"

#include <dlfcn.h>

namespace gpuscope::capture {

namespace {

constexpr int kNvmlSuccess = 0;
constexpr int kClockSm = 1, kClockMemory = 2;
constexpr int kTemperatureGpu = 0;

// The order of the series of one device.
enum DeviceSeries : std::uint32_t { kSm, kMem, kPowerDraw, kLimit, kTemp, kReasons, kUsed, kPerDevice };

struct ReasonName {
  unsigned long long bit;
  const char* name;
};
constexpr ReasonName kReasonNames[] = {
    {throttle::kGpuIdle, "idle"},
    {throttle::kApplicationsClocks, "applications clocks"},
    {throttle::kSwPowerCap, "sw power cap"},
    {throttle::kHwSlowdown, "hw slowdown"},
    {throttle::kSyncBoost, "sync boost"},
    {throttle::kSwThermal, "sw thermal"},
    {throttle::kHwThermal, "hw thermal"},
    {throttle::kHwPowerBrake, "hw power brake"},
};

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

}  // namespace

std::string describe_throttle_reasons(unsigned long long mask) {
  std::string s;
  unsigned long long known = 0;
  for (const ReasonName& r : kReasonNames) {
    known |= r.bit;
    if (mask & r.bit) {
      if (!s.empty()) s += ", ";
      s += r.name;
    }
  }
  if (mask & ~known) {
    if (!s.empty()) s += ", ";
    s += "other";
  }
  return s.empty() ? "none" : s;
}

NvmlSource::NvmlSource(const NvmlApi& api) : api_(api) {
  if (!api_.init || !api_.device_count || !api_.device_handle) {
    message_ = "NVML is incomplete (no nvmlInit/nvmlDeviceGetCount)";
    return;
  }
  if (const int rc = api_.init(); rc != kNvmlSuccess) {
    message_ = error("nvmlInit", rc);
    return;
  }
  initialized_ = true;
  unsigned n = 0;
  if (const int rc = api_.device_count(&n); rc != kNvmlSuccess) {
    message_ = error("nvmlDeviceGetCount", rc);
    return;
  }
  if (n == 0) {
    message_ = "NVML sees no device";
    return;
  }
  for (unsigned i = 0; i < n; ++i) {
    NvmlApi::Device d = nullptr;
    if (const int rc = api_.device_handle(i, &d); rc != kNvmlSuccess) {
      message_ = error("nvmlDeviceGetHandleByIndex", rc) + " for device " + std::to_string(i);
      return;
    }
    NvmlDeviceInfo info;
    info.index = i;
    unsigned mhz = 0;
    if (api_.max_clock && api_.max_clock(d, kClockSm, &mhz) == kNvmlSuccess) info.max_sm_clock_mhz = mhz;
    unsigned current = 0, pending = 0;
    if (api_.mig_mode && api_.mig_mode(d, &current, &pending) == kNvmlSuccess) info.mig = current != 0;
    handles_.push_back(d);
    info_.push_back(info);
    const auto add = [&](const char* name, const char* unit) { series_.push_back({name, i, unit, "nvml"}); };
    add(nvml_series::kSmClock, "MHz");
    add(nvml_series::kMemoryClock, "MHz");
    add(nvml_series::kPower, "W");
    add(nvml_series::kPowerLimit, "W");
    add(nvml_series::kTemperature, "°C");
    add(nvml_series::kThrottle, "mask");
    add(nvml_series::kMemoryUsed, "B");
  }
  ok_ = true;
}

NvmlSource::~NvmlSource() {
  if (initialized_ && api_.shutdown) api_.shutdown();
}

std::string NvmlSource::error(const char* call, int rc) const {
  const char* text = api_.error_string ? api_.error_string(rc) : nullptr;
  return std::string(call) + ": " + (text ? text : "NVML error " + std::to_string(rc));
}

bool NvmlSource::read(std::int64_t now_ns, std::vector<Sample>* out) {
  if (!ok_) return false;
  for (std::size_t d = 0; d < handles_.size(); ++d) {
    const NvmlApi::Device h = handles_[d];
    const std::uint32_t base = static_cast<std::uint32_t>(d) * kPerDevice;
    const auto put = [&](std::uint32_t which, bool good, double value) {
      if (good)
        out->push_back({now_ns, base + which, value});
      else
        ++failed_values_;
    };
    // Each call first, then its value (arguments have no evaluation order).
    unsigned sm = 0, mem = 0, power = 0, limit = 0, temp = 0;
    unsigned long long reasons = 0;
    std::uint64_t memory[3] = {0, 0, 0};
    const bool sm_ok = api_.clock && api_.clock(h, kClockSm, &sm) == kNvmlSuccess;
    const bool mem_ok = api_.clock && api_.clock(h, kClockMemory, &mem) == kNvmlSuccess;
    const bool power_ok = api_.power && api_.power(h, &power) == kNvmlSuccess;
    const bool limit_ok = api_.power_limit && api_.power_limit(h, &limit) == kNvmlSuccess;
    const bool temp_ok = api_.temperature && api_.temperature(h, kTemperatureGpu, &temp) == kNvmlSuccess;
    const bool reasons_ok = api_.throttle_reasons && api_.throttle_reasons(h, &reasons) == kNvmlSuccess;
    const bool memory_ok = api_.memory_info && api_.memory_info(h, memory) == kNvmlSuccess;
    put(kSm, sm_ok, sm);
    put(kMem, mem_ok, mem);
    put(kPowerDraw, power_ok, power / 1000.0);
    put(kLimit, limit_ok, limit / 1000.0);
    put(kTemp, temp_ok, temp);
    put(kReasons, reasons_ok, static_cast<double>(reasons));
    put(kUsed, memory_ok, static_cast<double>(memory[2]));
  }
  return true;
}

std::unique_ptr<NvmlSource> load_nvml(std::string* why, const char* library) {
  void* lib = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    if (why) *why = "NVML not loaded: " + std::string(e ? e : library);
    return nullptr;
  }
  NvmlApi api;
  api.init = symbol<int (*)()>(lib, "nvmlInit_v2");
  api.shutdown = symbol<int (*)()>(lib, "nvmlShutdown");
  api.error_string = symbol<const char* (*)(int)>(lib, "nvmlErrorString");
  api.device_count = symbol<int (*)(unsigned*)>(lib, "nvmlDeviceGetCount_v2");
  api.device_handle = symbol<int (*)(unsigned, NvmlApi::Device*)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  api.clock = symbol<int (*)(NvmlApi::Device, int, unsigned*)>(lib, "nvmlDeviceGetClockInfo");
  api.max_clock = symbol<int (*)(NvmlApi::Device, int, unsigned*)>(lib, "nvmlDeviceGetMaxClockInfo");
  api.power = symbol<int (*)(NvmlApi::Device, unsigned*)>(lib, "nvmlDeviceGetPowerUsage");
  api.power_limit = symbol<int (*)(NvmlApi::Device, unsigned*)>(lib, "nvmlDeviceGetEnforcedPowerLimit");
  api.temperature = symbol<int (*)(NvmlApi::Device, int, unsigned*)>(lib, "nvmlDeviceGetTemperature");
  // The newer name first (clock events), then the one older drivers have.
  api.throttle_reasons =
      symbol<int (*)(NvmlApi::Device, unsigned long long*)>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!api.throttle_reasons)
    api.throttle_reasons =
        symbol<int (*)(NvmlApi::Device, unsigned long long*)>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  api.memory_info = symbol<int (*)(NvmlApi::Device, std::uint64_t*)>(lib, "nvmlDeviceGetMemoryInfo");
  api.mig_mode = symbol<int (*)(NvmlApi::Device, unsigned*, unsigned*)>(lib, "nvmlDeviceGetMigMode");
  if (!api.init || !api.device_count || !api.device_handle) {
    if (why) *why = std::string("NVML not usable: ") + library + " has no nvmlInit_v2/nvmlDeviceGetCount_v2";
    return nullptr;  // the library stays loaded, as the driver's libraries do
  }
  auto source = std::make_unique<NvmlSource>(api);
  if (!source->ok()) {
    if (why) *why = "NVML not usable: " + source->message();
    return nullptr;
  }
  return source;
}

}  // namespace gpuscope::capture
