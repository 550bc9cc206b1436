#include "import/chrome_json_text.h"

#include <limits>

namespace gpuscope::detail {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// 2^63: the magnitude of INT64_MIN, the largest one an int64 can hold.
constexpr std::uint64_t kMagnitudeLimit = std::uint64_t{1} << 63;

// value = value * 10 + d, false if the result would exceed kMagnitudeLimit.
bool push_digit(std::uint64_t* value, unsigned d) {
  std::uint64_t v = 0;
  if (__builtin_mul_overflow(*value, std::uint64_t{10}, &v) || __builtin_add_overflow(v, std::uint64_t{d}, &v) ||
      v > kMagnitudeLimit)
    return false;
  *value = v;
  return true;
}
}  // namespace

namespace {

// Fast path for what profilers write: up to 16 integer digits (an epoch in
// µs has 16), an optional fraction of up to 3 digits, no sign, no exponent.
// False when `s` is not of that form (the general path decides).
bool parse_plain_us_to_ns(std::string_view s, std::int64_t* ns, bool* sub_us) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  std::uint64_t whole = 0;
  while (i < n && i < 16 && is_digit(s[i])) whole = whole * 10 + static_cast<unsigned>(s[i++] - '0');
  // whole * 1000 + 999 must fit in int64; 16 digits may not.
  if (i == 0 || (i > 1 && s[0] == '0') || whole > 9223372036854774ull || (i < n && is_digit(s[i]))) return false;
  std::uint64_t frac = 0;
  std::size_t frac_digits = 0;
  if (i < n) {
    if (s[i] != '.' || n - i - 1 < 1 || n - i - 1 > 3) return false;
    for (std::size_t k = i + 1; k < n; ++k) {
      if (!is_digit(s[k])) return false;
      frac = frac * 10 + static_cast<unsigned>(s[k] - '0');
      ++frac_digits;
    }
  }
  static constexpr std::uint64_t kScale[4] = {1000, 100, 10, 1};
  frac *= kScale[frac_digits];
  *ns = static_cast<std::int64_t>(whole * 1000 + frac);
  if (sub_us) *sub_us = frac != 0;
  return true;
}

// A JSON number's parts: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
struct NumberParts {
  bool negative = false;
  std::size_t int_begin = 0, int_end = 0, frac_begin = 0, frac_end = 0;
  std::int64_t exp10 = 0;  // clamped to ±100000: beyond, far outside int64 ns either way
};

// Splits `s` into its parts; false when it is not a JSON number.
bool split_number(std::string_view s, NumberParts* p) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  if (i < n && s[i] == '-') {
    p->negative = true;
    ++i;
  }
  p->int_begin = i;
  while (i < n && is_digit(s[i])) ++i;
  p->int_end = i;
  if (p->int_end == p->int_begin) return false;
  if (p->int_end - p->int_begin > 1 && s[p->int_begin] == '0') return false;  // leading zero
  p->frac_begin = p->frac_end = i;
  if (i < n && s[i] == '.') {
    p->frac_begin = ++i;
    while (i < n && is_digit(s[i])) ++i;
    p->frac_end = i;
    if (p->frac_end == p->frac_begin) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
    const std::size_t exp_begin = i;
    for (; i < n && is_digit(s[i]); ++i)
      if (p->exp10 < 100000) p->exp10 = p->exp10 * 10 + (s[i] - '0');
    if (i == exp_begin) return false;
    if (exp_negative) p->exp10 = -p->exp10;
  }
  return i == n;
}

}  // namespace

bool parse_us_to_ns(std::string_view s, std::int64_t* ns, bool* sub_us) {
  if (parse_plain_us_to_ns(s, ns, sub_us)) return true;
  NumberParts p;
  if (!split_number(s, &p)) return false;
  // The value is D * 10^(exp10 - frac_digits) µs, D = all digits as an
  // integer; in ns that is D * 10^(scale) with scale = exp10 - frac_digits + 3.
  // Walk the digits, keeping those at or above 1 ns, rounding on the first one below.
  const std::int64_t frac_digits = static_cast<std::int64_t>(p.frac_end - p.frac_begin);
  const std::int64_t scale = p.exp10 - frac_digits + 3;
  const std::size_t int_len = p.int_end - p.int_begin;
  const std::int64_t total_digits = static_cast<std::int64_t>(int_len) + frac_digits;
  // Digit k (0 = most significant) has weight 10^(scale + total_digits - 1 - k) ns.
  auto digit_at = [&](std::int64_t k) -> int {
    if (static_cast<std::size_t>(k) < int_len) return s[p.int_begin + static_cast<std::size_t>(k)] - '0';
    return s[p.frac_begin + (static_cast<std::size_t>(k) - int_len)] - '0';
  };
  std::uint64_t value = 0;
  bool below_us = false;  // any nonzero digit with weight < 1000 ns
  bool round_up = false;
  for (std::int64_t k = 0; k < total_digits; ++k) {
    const std::int64_t weight = scale + total_digits - 1 - k;  // power of ten in ns
    const int d = digit_at(k);
    if (weight < 3 && d != 0) below_us = true;
    if (weight >= 0) {
      if (!push_digit(&value, static_cast<unsigned>(d))) return false;
    } else if (weight == -1) {
      round_up = d >= 5;
    }
  }
  // Digits that were all above ns but followed by implicit zeros (scale > 0).
  if (scale > 0 && value != 0) {
    for (std::int64_t k = 0; k < scale; ++k)
      if (!push_digit(&value, 0)) return false;
  }
  if (round_up) ++value;  // value <= 2^63 here, so this cannot wrap; the range is checked next
  if (value > kMagnitudeLimit || (value == kMagnitudeLimit && !p.negative)) return false;
  if (value == kMagnitudeLimit)
    *ns = std::numeric_limits<std::int64_t>::min();
  else
    *ns = p.negative ? -static_cast<std::int64_t>(value) : static_cast<std::int64_t>(value);
  if (sub_us) *sub_us = below_us;
  return true;
}

bool parse_json_int(std::string_view s, std::int64_t* out) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && s[i] == '-') {
    negative = true;
    ++i;
  }
  if (i == s.size()) return false;
  if (s.size() - i > 1 && s[i] == '0') return false;
  std::uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i]) || !push_digit(&v, static_cast<unsigned>(s[i] - '0'))) return false;
  }
  if (!negative && v == kMagnitudeLimit) return false;
  if (v == kMagnitudeLimit)
    *out = std::numeric_limits<std::int64_t>::min();
  else
    *out = negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  return true;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_hex4(std::string_view raw, std::size_t at, std::uint32_t* out) {
  if (at + 4 > raw.size()) return false;
  std::uint32_t v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const int h = hex_value(raw[at + k]);
    if (h < 0) return false;
    v = v * 16 + static_cast<std::uint32_t>(h);
  }
  *out = v;
  return true;
}

void append_utf8(std::uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}
}  // namespace

bool json_unescape(std::string_view raw, std::string* out) {
  std::size_t i = 0;
  while (i < raw.size()) {
    const char c = raw[i];
    if (c != '\\') {
      out->push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= raw.size()) return false;
    const char e = raw[i + 1];
    i += 2;
    switch (e) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        std::uint32_t cp = 0;
        if (!read_hex4(raw, i, &cp)) return false;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
          std::uint32_t lo = 0;
          if (i + 6 > raw.size() || raw[i] != '\\' || raw[i + 1] != 'u' || !read_hex4(raw, i + 2, &lo) || lo < 0xDC00 ||
              lo > 0xDFFF)
            return false;
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        }
        append_utf8(cp, out);
        break;
      }
      default: return false;
    }
  }
  return true;
}

}  // namespace gpuscope::detail
