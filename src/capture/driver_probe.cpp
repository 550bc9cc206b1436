#include "capture/driver_probe.h"

#include <dlfcn.h>

namespace gpuscope::capture {

namespace {
using CuInit = int (*)(unsigned);
using CuDeviceGetCount = int (*)(int*);
using CuGetErrorName = int (*)(int, const char**);

std::string error_name(void* lib, int code) {
  const char* name = nullptr;
  if (auto f = reinterpret_cast<CuGetErrorName>(::dlsym(lib, "cuGetErrorName")); f && f(code, &name) == 0 && name)
    return name;
  return "CUDA error " + std::to_string(code);
}
}  // namespace

DriverProbe probe_cuda_driver() noexcept {
  DriverProbe p;
  try {
    // RTLD_NOLOAD first: in-process, the driver may already be loaded.
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!lib) lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = ::dlerror();
      p.result = DriverProbe::Result::no_driver;
      p.detail = why ? why : "libcuda.so.1 could not be loaded";
      return p;
    }
    auto cu_init = reinterpret_cast<CuInit>(::dlsym(lib, "cuInit"));
    auto cu_count = reinterpret_cast<CuDeviceGetCount>(::dlsym(lib, "cuDeviceGetCount"));
    if (!cu_init || !cu_count) {
      p.result = DriverProbe::Result::no_driver;
      p.detail = "libcuda.so.1 has no cuInit (not a CUDA driver?)";
      return p;  // the library stays loaded: unloading a driver is never worth the risk
    }
    if (const int rc = cu_init(0); rc != 0) {
      p.result = DriverProbe::Result::no_device;
      p.detail = "cuInit: " + error_name(lib, rc);
      return p;
    }
    int n = 0;
    if (const int rc = cu_count(&n); rc != 0 || n == 0) {
      p.result = DriverProbe::Result::no_device;
      p.detail = rc != 0 ? "cuDeviceGetCount: " + error_name(lib, rc) : "the driver sees 0 devices";
      return p;
    }
    p.result = DriverProbe::Result::devices;
    p.device_count = n;
  } catch (...) {
    p.detail = "probe failed";
  }
  return p;
}

std::string describe(const DriverProbe& p) {
  switch (p.result) {
    case DriverProbe::Result::no_driver: return "no CUDA device: the CUDA driver is not installed (" + p.detail + ")";
    case DriverProbe::Result::no_device: return "no CUDA device: " + p.detail;
    case DriverProbe::Result::devices: return std::to_string(p.device_count) + " CUDA device(s)";
  }
  return p.detail;
}

}  // namespace gpuscope::capture
