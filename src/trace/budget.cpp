#include "trace/budget.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "trace/error.h"
#include "trace/trace.h"

namespace gpuscope {

namespace {

std::atomic<std::uint64_t> g_budget{0};   // 0: the default
thread_local std::uint64_t t_budget = 0;  // ScopedMemoryBudget's, 0: none

char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

bool equals_upper(std::string_view s, std::string_view upper_text) {
  if (s.size() != upper_text.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (upper(s[i]) != upper_text[i]) return false;
  return true;
}

// 1234567 -> "1,234,567", for the exact byte counts of a budget error (people
// read words/'s numbers; trace/'s errors keep their own).
std::string thousands(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (auto i = static_cast<std::ptrdiff_t>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), 1, ',');
  return s;
}

}  // namespace

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::uint64_t default_memory_budget() {
  const std::uint64_t phys = physical_memory_bytes();
  if (phys == 0) return std::uint64_t{4} << 30;
  return std::max<std::uint64_t>(phys / 4, std::uint64_t{256} << 20);
}

std::uint64_t memory_budget() {
  if (t_budget) return t_budget;
  if (const std::uint64_t b = g_budget.load(std::memory_order_relaxed)) return b;
  // GPUSCOPE_MAX_MEMORY (a size as parse_memory_size() reads it), read once.
  static const std::uint64_t from_env = [] {
    const char* v = std::getenv("GPUSCOPE_MAX_MEMORY");
    const std::optional<std::uint64_t> b = v ? parse_memory_size(v) : std::nullopt;
    return b ? *b : 0;
  }();
  return from_env ? from_env : default_memory_budget();
}

void set_memory_budget(std::uint64_t bytes) { g_budget.store(bytes, std::memory_order_relaxed); }

ScopedMemoryBudget::ScopedMemoryBudget(std::uint64_t bytes) : previous_(t_budget) {
  if (bytes) t_budget = bytes;
}
ScopedMemoryBudget::~ScopedMemoryBudget() { t_budget = previous_; }

std::optional<std::uint64_t> parse_memory_size(std::string_view text) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  std::size_t digits = 0;
  while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
  if (digits == 0 || digits > 30) return std::nullopt;
  const std::string number(text.substr(0, digits));
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value) || value <= 0) return std::nullopt;
  std::string_view unit = text.substr(digits);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  double scale = 0;
  if (unit == "%") {
    const std::uint64_t phys = physical_memory_bytes();
    if (phys == 0 || value > 100) return std::nullopt;
    scale = static_cast<double>(phys) / 100;
  } else if (unit.empty() || equals_upper(unit, "B")) {
    scale = 1;
  } else {
    static constexpr std::string_view kUnits = "KMGT";
    const std::size_t power = kUnits.find(upper(unit.front()));
    const std::string_view rest = unit.substr(1);
    if (power == std::string_view::npos || !(rest.empty() || equals_upper(rest, "B") || equals_upper(rest, "IB")))
      return std::nullopt;
    scale = std::ldexp(1.0, 10 * static_cast<int>(power + 1));
  }
  const double bytes = value * scale;
  if (bytes < 1 || bytes >= 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::string memory_size_text(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, v < 10 && v != std::floor(v) ? "%.1f %s" : "%.0f %s", v, kUnits[u]);
  return buf;
}

void check_memory_claim(const std::string& file, std::string_view what, std::uint64_t bytes, std::uint64_t budget,
                        std::uint64_t offset) {
  if (bytes <= budget) return;
  throw InputError(file,
                   std::string(what) + " (" + memory_size_text(bytes) + " in memory), over the memory budget of " +
                       memory_size_text(budget) + " (--max-memory; " + thousands(bytes) + " > " + thousands(budget) +
                       " bytes)",
                   offset);
}

std::uint64_t row_memory_bytes(TableId table) {
  static const auto sizes = [] {
    std::array<std::uint64_t, kTableCount> s{};
    const TraceTables t;
    t.for_each_table([&](TableId id, const auto& tab) {
      tab.for_each_column([&](ColumnInfo, const auto& col) {
        s[static_cast<int>(id)] += sizeof(typename std::remove_cvref_t<decltype(col)>::value_type);
      });
    });
    return s;
  }();
  return sizes[static_cast<int>(table)];
}

}  // namespace gpuscope
