// The host half of `gpuscope capture`: what the Python startup hook records
// (--framework, --host-sampling), where the hook lives, and the environment
// that installs it for the captured program only (docs/capture.md).
//
// The hook is the folder src/capture/pyhook/ (a sitecustomize.py and the
// package gpuscope_hook/), built into <build>/share/gpuscope/pyhook and
// installed as <prefix>/share/gpuscope/pyhook. `gpuscope capture` puts it
// first on the program's PYTHONPATH and names a directory for the host files.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::capture {

inline constexpr const char* kEnvHostDir = "GPUSCOPE_CAPTURE_HOST_DIR";
inline constexpr const char* kEnvFramework = "GPUSCOPE_CAPTURE_FRAMEWORK";
inline constexpr const char* kEnvHostSampling = "GPUSCOPE_CAPTURE_HOST_SAMPLING";
// Read by `gpuscope capture`: the hook folder to use instead of the installed one.
inline constexpr const char* kEnvPythonHook = "GPUSCOPE_PYTHON_HOOK";

// Python stacks around ops cost far more than the rest (docs/PERFORMANCE.md): asked for by name.
inline constexpr std::string_view kDefaultFramework = "ops,shapes,modules";
inline constexpr double kMaxHostSamplingHz = 10000;

// "ops,shapes,modules,stacks" (any subset; shapes and stacks need ops) or
// "none" -> the normalized list ("" for none); nullopt and *error otherwise.
std::optional<std::string> parse_framework_list(std::string_view list, std::string* error);
// "HZ" (1 to 10000) or "off" -> samples per second (0 for off); nullopt and *error otherwise.
std::optional<double> parse_host_sampling(std::string_view text, std::string* error);

// The hook folder: $GPUSCOPE_PYTHON_HOOK, else share/gpuscope/pyhook beside
// the executable's bin/ (installed and build trees alike); "" if none exists.
std::string find_python_hook_dir();

// The variables that install the hook for the program: PYTHONPATH with the
// hook first, the host file directory and the options. With NVTX traced,
// TensorFlow's NVTX op ranges (TF_ENABLE_NVTX_RANGES=1) unless the program's
// environment sets them itself.
std::map<std::string, std::string> python_hook_environment(const std::string& hook_dir, const std::string& host_dir,
                                                           const std::string& framework, double sampling_hz, bool nvtx);

}  // namespace gpuscope::capture
