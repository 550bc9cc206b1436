#include "capture/python_hook.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

namespace gpuscope::capture {

namespace fs = std::filesystem;

std::optional<std::string> parse_framework_list(std::string_view list, std::string* error) {
  if (list == "none") return std::string();
  static constexpr std::string_view kItems[] = {"ops", "shapes", "modules", "stacks"};
  std::set<std::string_view> seen;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    const std::string_view item = list.substr(pos, comma - pos);
    bool known = false;
    for (std::string_view k : kItems) known |= k == item;
    if (!known) {
      if (error) {
        if (item.empty())
          *error = "an empty item";
        else
          error->assign("unknown item '").append(item).append("' (ops, shapes, modules, stacks or none)");
      }
      return std::nullopt;
    }
    seen.insert(item);
    pos = comma + 1;
  }
  if ((seen.count("shapes") || seen.count("stacks")) && !seen.count("ops")) {
    if (error) *error = "shapes and stacks are recorded with ops: add ops";
    return std::nullopt;
  }
  std::string out;
  for (std::string_view k : kItems) {
    if (!seen.count(k)) continue;
    if (!out.empty()) out.push_back(',');
    out.append(k);
  }
  return out;
}

std::optional<double> parse_host_sampling(std::string_view text, std::string* error) {
  if (text == "off") return 0.0;
  double hz = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), hz);
  if (ec != std::errc() || end != text.data() + text.size() || !(hz >= 1 && hz <= kMaxHostSamplingHz)) {
    if (error) {
      // Reserved first: GCC 12 warns falsely (-Wrestrict) on appends it cannot size.
      std::string e;
      e.reserve(text.size() + 64);
      e.push_back('\'');
      e.append(text);
      e.append("' is not a rate from 1 to 10000 (samples per second) or off");
      *error = std::move(e);
    }
    return std::nullopt;
  }
  return hz;
}

std::string find_python_hook_dir() {
  std::error_code ec;
  auto is_hook = [&](const fs::path& p) { return fs::exists(p / "sitecustomize.py", ec); };
  if (const char* v = std::getenv(kEnvPythonHook); v && *v) return is_hook(v) ? fs::absolute(v).string() : "";
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path p = exe.parent_path().parent_path() / "share" / "gpuscope" / "pyhook";
    if (is_hook(p)) return fs::weakly_canonical(p, ec).string();
  }
#ifdef GPUSCOPE_PYTHON_HOOK_DIR
  if (is_hook(GPUSCOPE_PYTHON_HOOK_DIR)) return GPUSCOPE_PYTHON_HOOK_DIR;
#endif
  return {};
}

std::map<std::string, std::string> python_hook_environment(const std::string& hook_dir, const std::string& host_dir,
                                                           const std::string& framework, double sampling_hz,
                                                           bool nvtx) {
  std::map<std::string, std::string> env;
  const char* path = std::getenv("PYTHONPATH");
  std::string python_path = hook_dir;
  if (path && *path) python_path.append(":").append(path);
  env["PYTHONPATH"] = python_path;
  env[kEnvHostDir] = host_dir;
  env[kEnvFramework] = framework.empty() ? "none" : framework;
  char hz[32];
  const auto r = std::to_chars(hz, hz + sizeof hz, sampling_hz);
  env[kEnvHostSampling] = sampling_hz > 0 ? std::string(hz, static_cast<std::size_t>(r.ptr - hz)) : std::string("off");
  // TensorFlow's op ranges (NVTX domain "tensorflow-core"). Nothing for JAX:
  // XLA's switch for its annotations is an XLA_FLAGS option that only recent
  // versions know, and XLA refuses to start on one it does not (docs/capture.md).
  if (nvtx && !std::getenv("TF_ENABLE_NVTX_RANGES")) env.emplace("TF_ENABLE_NVTX_RANGES", "1");
  return env;
}

}  // namespace gpuscope::capture
