// Why no CUDA process could be captured: asks the CUDA driver directly
// (dlopen libcuda.so.1, cuInit, cuDeviceGetCount), without linking it, so
// gpuscope runs on machines that have no driver at all.
//
// Never call this inside an injected process's InitializeInjection (that runs
// inside cuInit): only from the CLI, or in-process after CUPTI refused.
#pragma once

#include <string>

namespace gpuscope::capture {

struct DriverProbe {
  enum class Result { no_driver, no_device, devices } result = Result::no_driver;
  int device_count = 0;
  std::string detail;  // "libcuda.so.1: cannot open shared object file…", "cuInit: CUDA_ERROR_NO_DEVICE"
};

DriverProbe probe_cuda_driver() noexcept;

// One line for people: "no CUDA device: <why>" / "no CUDA driver: <why>" /
// "N CUDA device(s)".
std::string describe(const DriverProbe& p);

}  // namespace gpuscope::capture
