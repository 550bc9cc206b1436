#include "words/format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace gpuscope::format {

// [SECTION] Numbers --------------------------------------------------------------------------

namespace {

std::string printf1(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// `v` in the first of `units` (printf formats, each `step` times the one
// before) whose printed number stays below `step`: rounding never writes
// "1000.0 µs" or "1024.0 KiB", the next unit takes over.
std::string in_units(double v, std::initializer_list<const char*> units, double step) {
  const char* const* u = units.begin();
  for (; u + 1 != units.end(); ++u, v /= step) {
    std::string s = printf1(*u, v);
    if (std::strtod(s.c_str(), nullptr) < step) return s;
  }
  return printf1(*u, v);
}

}  // namespace

std::string duration(TimeNs ns) {
  if (ns < 0) {
    std::string out(1, '-');
    out += duration(ns == std::numeric_limits<TimeNs>::min() ? std::numeric_limits<TimeNs>::max() : -ns);
    return out;
  }
  if (ns < 1'000) return std::to_string(ns) + " ns";
  return in_units(static_cast<double>(ns) / 1e3, {"%.1f µs", "%.1f ms", "%.2f s"}, 1000);
}

std::string signed_duration(TimeNs ns) {
  std::string out = duration(ns);
  if (ns > 0) out.insert(out.begin(), '+');
  return out;
}

std::string percent(double share) {
  return printf1(share >= 0.0995 || share <= -0.0995 || share == 0 ? "%.0f%%" : "%.1f%%", share * 100);
}

std::string percent1(double share) { return printf1("%.1f%%", share * 100); }

std::string signed_percent1(double share) { return printf1("%+.1f%%", share * 100); }

std::string points(double share_change) { return printf1("%+.1f pts", share_change * 100); }

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

std::string count(std::uint64_t n, std::string_view one, std::string_view many) {
  return count(n) + " " + std::string(n == 1 ? one : many);
}

std::string bytes(std::uint64_t b) {
  if (b < 1024) return std::to_string(b) + " B";
  return in_units(static_cast<double>(b) / 1024, {"%.1f KiB", "%.1f MiB", "%.2f GiB"}, 1024);
}

std::string bandwidth(double bytes_per_second) {
  if (!(bytes_per_second > 0) || !std::isfinite(bytes_per_second)) return "n/a";
  const char* units[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  double v = bytes_per_second;
  std::size_t u = 0;
  // Three significant digits; a value that rounds up to 1000 moves to the next unit.
  while (u + 1 < std::size(units) && v >= 999.5) {
    v /= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, v >= 99.95 ? "%.0f %s" : v >= 9.995 ? "%.1f %s" : "%.2f %s", v, units[u]);
  return buf;
}

// [SECTION] Kernel names ---------------------------------------------------------------------

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";

// Characters an operator's name is made of ("operator<", "operator()", "operator->*").
bool operator_char(char c) { return std::string_view("<>()[]=!+-*/%&|^~,").find(c) != std::string_view::npos; }

// Whether `top` ends with the keyword "operator" (not "reduce_operator").
bool is_operator_keyword_end(std::string_view top) {
  if (!top.ends_with("operator")) return false;
  if (top.size() == 8) return true;
  const char before = top[top.size() - 9];
  return !(std::isalnum(static_cast<unsigned char>(before)) || before == '_');
}

// The one parser of kernel names: the name up to the end of its parameter
// list, without its return type and without every bracketed part (template
// arguments, the parameter list, lambda bodies "{lambda(int)#1}", array
// bounds), spaces trimmed; whatever follows the parameter list (" const",
// "[clone .kd]", stray bytes) goes too. Kept: "(anonymous namespace)",
// operator names, and "->" (an arrow, not a bracket).
// "void at::native::(anonymous namespace)::foo<int>(float*)" -> "at::native::(anonymous namespace)::foo".
std::string qualified_function_name(std::string_view name) {
  std::string top;
  top.reserve(name.size());
  int depth = 0;
  bool parameters = false;  // the outermost open bracket is a '('
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (depth == 0 && name.substr(i).starts_with(kAnonymous)) {
      top += kAnonymous;
      i += kAnonymous.size() - 1;
      continue;
    }
    if (depth == 0 && is_operator_keyword_end(top)) {
      // The operator's own characters are its name: "operator()" keeps "()",
      // then the parameter list that follows is a bracket again.
      const std::size_t n = name.substr(i, 2) == "()" || name.substr(i, 2) == "[]" ? 2 : 0;
      std::size_t e = i + n;
      if (n == 0)
        while (e < name.size() && operator_char(name[e]) && name[e] != '(') ++e;
      if (e > i) {
        top.append(name.substr(i, e - i));
        i = e - 1;
        continue;
      }
    }
    if (c == '>' && i > 0 && name[i - 1] == '-') {  // "->"
      if (depth == 0) top += c;
      continue;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (depth == 0) parameters = c == '(';
      ++depth;
      continue;
    }
    if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (depth > 0) --depth;
      if (depth == 0 && parameters) break;  // the function's parameter list: the name is complete
      continue;
    }
    if (depth == 0) top += c;
  }
  std::string_view out = top;
  while (!out.empty() && out.back() == ' ') out.remove_suffix(1);
  while (!out.empty() && out.front() == ' ') out.remove_prefix(1);
  if (out.starts_with("void ")) out.remove_prefix(5);
  while (!out.empty() && out.front() == ' ') out.remove_prefix(1);
  if (out == "::") return {};
  return std::string(out);
}

// Eigen's kernels are one EigenMetaKernel template: the op inside names it.
std::string_view eigen_op(std::string_view name) {
  if (name.find("Eigen") == std::string_view::npos) return {};
  for (std::string_view op : {"TensorPaddingOp", "TensorBroadcastingOp", "TensorShufflingOp", "TensorReductionOp",
                              "TensorConversionOp", "TensorCwiseBinaryOp", "TensorCwiseUnaryOp"})
    if (name.find(op) != std::string_view::npos) return op;
  return {};
}

// At most `width` bytes, "..." at the end when cut, never inside a UTF-8 sequence.
std::string cut(std::string s, std::size_t width) {
  if (s.size() <= width) return s;
  std::size_t keep = width > 3 ? width - 3 : 0;
  while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
  s.resize(keep);
  return s + "...";
}

}  // namespace

std::string short_kernel_name(std::string_view name, std::size_t width) {
  if (const std::string_view op = eigen_op(name); !op.empty()) return cut("Eigen " + std::string(op), width);
  std::string q = qualified_function_name(name);
  return cut(q.empty() ? std::string(name) : std::move(q), width);
}

std::string nsys_short_name(std::string_view demangled) {
  std::string q = qualified_function_name(demangled);
  if (const std::size_t colons = q.rfind("::"); colons != std::string::npos) q.erase(0, colons + 2);
  if (const std::size_t space = q.rfind(' '); space != std::string::npos) q.erase(0, space + 1);  // a return type
  return q.empty() ? std::string(demangled) : q;
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
