// Device state through NVML, loaded at run time (dlopen "libnvidia-ml.so.1",
// which comes with the driver: the build needs no NVML package): SM and
// memory clocks, power draw and limit, temperature, the driver's
// clock-throttle reasons and device memory used, per device, as a
// SampleSource for the Sampler (about 100 Hz).
//
// Where NVML cannot be used (no driver, library absent, no device) load_nvml()
// says why in one line and the capture goes on without these series.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capture/sampler.h"

namespace gpuscope::capture {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";
inline constexpr std::int64_t kNvmlPeriodNs = 10'000'000;  // 100 Hz

// The NVML entry points used, as function pointers (tests provide fakes).
// Return codes are nvmlReturn_t (0 = NVML_SUCCESS).
struct NvmlApi {
  using Device = void*;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*device_count)(unsigned*) = nullptr;
  int (*device_handle)(unsigned, Device*) = nullptr;
  int (*clock)(Device, int type, unsigned* mhz) = nullptr;      // type 1 SM, 2 memory
  int (*max_clock)(Device, int type, unsigned* mhz) = nullptr;  // optional
  int (*power)(Device, unsigned* milliwatts) = nullptr;
  int (*power_limit)(Device, unsigned* milliwatts) = nullptr;     // enforced limit
  int (*temperature)(Device, int sensor, unsigned* c) = nullptr;  // sensor 0: the GPU die
  int (*throttle_reasons)(Device, unsigned long long*) = nullptr;
  int (*memory_info)(Device, std::uint64_t info[3]) = nullptr;              // total, free, used (nvmlMemory_t)
  int (*mig_mode)(Device, unsigned* current, unsigned* pending) = nullptr;  // optional
};

// NVML's clock-throttle (clock event) reasons, as the driver reports them.
namespace throttle {
inline constexpr unsigned long long kGpuIdle = 0x1;
inline constexpr unsigned long long kApplicationsClocks = 0x2;
inline constexpr unsigned long long kSwPowerCap = 0x4;
inline constexpr unsigned long long kHwSlowdown = 0x8;
inline constexpr unsigned long long kSyncBoost = 0x10;
inline constexpr unsigned long long kSwThermal = 0x20;
inline constexpr unsigned long long kHwThermal = 0x40;
inline constexpr unsigned long long kHwPowerBrake = 0x80;
inline constexpr unsigned long long kThermal = kSwThermal | kHwThermal;
inline constexpr unsigned long long kPower = kSwPowerCap | kHwPowerBrake;
}  // namespace throttle
// "sw power cap, hw thermal" for a mask of reasons ("none" for 0).
std::string describe_throttle_reasons(unsigned long long mask);

// The series names NVML samples are written under (per device).
namespace nvml_series {
inline constexpr const char* kSmClock = "nvml.sm_clock";           // MHz
inline constexpr const char* kMemoryClock = "nvml.memory_clock";   // MHz
inline constexpr const char* kPower = "nvml.power";                // W
inline constexpr const char* kPowerLimit = "nvml.power_limit";     // W
inline constexpr const char* kTemperature = "nvml.temperature";    // °C
inline constexpr const char* kThrottle = "nvml.throttle_reasons";  // bit mask, as above
inline constexpr const char* kMemoryUsed = "nvml.memory_used";     // B
}  // namespace nvml_series

struct NvmlDeviceInfo {
  std::uint32_t index = 0;
  unsigned max_sm_clock_mhz = 0;  // 0 when NVML does not say
  bool mig = false;               // MIG mode on: per-instance counters are not the whole GPU
};

class NvmlSource final : public SampleSource {
 public:
  // Initializes NVML through `api` and finds its devices; ok() false and
  // message() why when it cannot.
  explicit NvmlSource(const NvmlApi& api);
  ~NvmlSource() override;  // nvmlShutdown
  NvmlSource(const NvmlSource&) = delete;
  NvmlSource& operator=(const NvmlSource&) = delete;

  bool ok() const { return ok_; }
  std::string message() const override { return message_; }
  const std::vector<NvmlDeviceInfo>& devices() const { return info_; }
  const std::vector<SampleSeries>& series() const override { return series_; }
  bool read(std::int64_t now_ns, std::vector<Sample>* out) override;
  // Values NVML could not give (counted per read, never fatal).
  std::uint64_t failed_values() const { return failed_values_; }

 private:
  std::string error(const char* call, int rc) const;

  NvmlApi api_;
  bool ok_ = false, initialized_ = false;
  std::string message_;
  std::vector<NvmlApi::Device> handles_;
  std::vector<NvmlDeviceInfo> info_;
  std::vector<SampleSeries> series_;
  std::uint64_t failed_values_ = 0;
};

// NVML from the driver's library (dlopen; the library stays loaded). Returns
// nullptr and *why ("libnvidia-ml.so.1: cannot open shared object file: …",
// "… has no nvmlInit_v2") when it cannot be loaded.
std::unique_ptr<NvmlSource> load_nvml(std::string* why, const char* library = kNvmlLibrary);

}  // namespace gpuscope::capture
