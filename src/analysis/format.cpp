#include "analysis/format.h"

#include <algorithm>
#include <cstdio>

namespace gpuscope::format {

namespace {
std::string printf1(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
}  // namespace

std::string duration(TimeNs ns) {
  if (ns < 0) {
    std::string out(1, '-');
    out += duration(-ns);
    return out;
  }
  const double v = static_cast<double>(ns);
  if (ns < 1'000) return printf1("%.0f ns", v);
  if (ns < 1'000'000) return printf1("%.1f µs", v / 1e3);
  if (ns < 1'000'000'000) return printf1("%.1f ms", v / 1e6);
  return printf1("%.2f s", v / 1e9);
}

std::string percent(double share) {
  return printf1(share >= 0.0995 || share <= -0.0995 || share == 0 ? "%.0f%%" : "%.1f%%", share * 100);
}

std::string percent1(double share) { return printf1("%.1f%%", share * 100); }

std::string fixed(double v, int decimals) {
  char f[16];
  std::snprintf(f, sizeof f, "%%.%df", std::clamp(decimals, 0, 9));
  return printf1(f, v);
}

std::string count(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

std::string bytes(std::uint64_t b) {
  const double v = static_cast<double>(b);
  if (b < 1024) return std::to_string(b) + " B";
  if (b < 1024 * 1024) return printf1("%.1f KB", v / 1024);
  if (b < 1024ull * 1024 * 1024) return printf1("%.1f MB", v / (1024 * 1024));
  return printf1("%.2f GB", v / (1024.0 * 1024 * 1024));
}

std::string short_kernel_name(std::string_view name, std::size_t width) {
  // Eigen's kernels are one EigenMetaKernel template: name the op inside.
  if (name.find("Eigen") != std::string_view::npos)
    for (std::string_view op : {"TensorPaddingOp", "TensorBroadcastingOp", "TensorShufflingOp", "TensorReductionOp",
                                "TensorConversionOp", "TensorCwiseBinaryOp", "TensorCwiseUnaryOp"})
      if (name.find(op) != std::string_view::npos) return "Eigen " + std::string(op);
  std::string_view core = name;
  if (core.starts_with("void ")) core.remove_prefix(5);
  // Drop template arguments and parameter lists, keep "(anonymous namespace)".
  std::string out;
  int angle = 0, paren = 0;
  for (std::size_t i = 0; i < core.size(); ++i) {
    const char c = core[i];
    if (c == '<')
      ++angle;
    else if (c == '>')
      angle = std::max(0, angle - 1);
    else if (angle == 0 && c == '(' && !core.substr(i).starts_with("(anonymous namespace)"))
      ++paren;
    else if (angle == 0 && c == ')' && paren > 0)
      --paren;
    else if (angle == 0 && paren == 0)
      out.push_back(c);
  }
  if (out.empty()) out = std::string(core.substr(0, width));
  if (out.size() > width) out = out.substr(0, width > 3 ? width - 3 : 0) + "...";
  return out;
}

std::vector<std::string> short_kernel_names(const std::vector<std::string_view>& names, std::size_t width) {
  std::vector<std::string> shorts;
  shorts.reserve(names.size());
  for (std::string_view n : names) shorts.push_back(short_kernel_name(n, width));
  std::vector<std::string> out = shorts;
  std::vector<bool> done(names.size(), false);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (done[i]) continue;
    std::vector<std::size_t> rows;          // every row showing shorts[i]
    std::vector<std::string_view> kernels;  // the distinct full names behind it, in list order
    for (std::size_t j = i; j < names.size(); ++j) {
      if (shorts[j] != shorts[i]) continue;
      done[j] = true;
      rows.push_back(j);
      if (std::find(kernels.begin(), kernels.end(), names[j]) == kernels.end()) kernels.push_back(names[j]);
    }
    if (kernels.size() < 2) continue;  // one kernel (perhaps listed twice): its name is enough
    for (std::size_t j : rows) {
      const auto k = std::find(kernels.begin(), kernels.end(), names[j]) - kernels.begin();
      out[j] = shorts[j] + " #" + std::to_string(k + 1);
    }
  }
  return out;
}

}  // namespace gpuscope::format
