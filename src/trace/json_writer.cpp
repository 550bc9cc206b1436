// The JSON writer (json_writer.h): strings, numbers, structure.
//
// [SECTION] Strings
// [SECTION] Numbers
// [SECTION] The writer
#include "trace/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace gpuscope::json {

namespace {

// [SECTION] Strings -------------------------------------------------------------------------------

// Bytes copied as they are inside a string: printable ASCII but `"` and `\`.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

// How many bytes at p[0..n) (n ≥ 1, p[0] ≥ 0x80) start a well-formed UTF-8
// sequence, and whether they complete one. The ranges are the Unicode
// standard's table of well-formed sequences: no overlong forms, no
// surrogates, nothing above U+10FFFF. A byte that cannot start or continue
// one gives 0 (it is a maximal subpart of one byte).
struct Utf8Prefix {
  std::size_t bytes;
  bool complete;
};
Utf8Prefix utf8_prefix(const unsigned char* p, std::size_t n) {
  const unsigned char c = p[0];
  std::size_t len;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (c >= 0xc2 && c <= 0xdf)
    len = 2;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
  else
    return {0, false};
  std::size_t i = 1;
  for (; i < len && i < n; ++i) {
    const unsigned char b = p[i];
    if (i == 1 ? b < lo || b > hi : (b & 0xc0) != 0x80) break;
  }
  return {i, i == len};
}

void append_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default: {
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(u, sizeof u);
    }
  }
}

}  // namespace

std::size_t append_string(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t replaced = 0, i = 0;
  out += '"';
  while (i < n) {
    std::size_t run = i;  // plain printable ASCII goes in one append
    while (run < n && kPlain[p[run]]) ++run;
    out.append(s.data() + i, run - i);
    i = run;
    if (i == n) break;
    if (p[i] < 0x80) {
      append_escape(out, p[i]);
      ++i;
      continue;
    }
    const Utf8Prefix u = utf8_prefix(p + i, n - i);
    if (u.complete) {
      out.append(s.data() + i, u.bytes);
    } else {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++replaced;
    }
    i += u.bytes ? u.bytes : 1;
  }
  out += '"';
  return replaced;
}

// [SECTION] Numbers -------------------------------------------------------------------------------

void append_integer(std::string& out, std::int64_t v) {
  char buf[24];
  out.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

void append_unsigned(std::string& out, std::uint64_t v) {
  char buf[24];
  out.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

void append_shortest(std::string& out, double v) {
  char buf[32];
  out.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

// The shortest digits d1…dk and the exponent (std::to_chars' scientific
// form), laid out as printf's %g would with the point kept: fixed from 1e-4
// up to below 1e15 (digits10), an exponent of at least two digits
// otherwise.
void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[40];
  char* p = buf;
  if (std::signbit(v)) *p++ = '-', v = -v;
  if (v == 0) {
    std::memcpy(p, "0.0", 3);
    out.append(buf, static_cast<std::size_t>(p + 3 - buf));
    return;
  }
  char sci[32];
  const char* end = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific).ptr;
  char digits[20];
  int k = 0;
  const char* e = sci;
  for (; *e != 'e'; ++e)
    if (*e != '.') digits[k++] = *e;
  int exp10 = 0;
  std::from_chars(e + (e[1] == '+' ? 2 : 1), end, exp10);
  const int n = exp10 + 1;  // the point sits after n digits
  constexpr int kMinExp = -4, kMaxExp = 15;
  if (k <= n && n <= kMaxExp) {  // digits000.0
    std::memcpy(p, digits, static_cast<std::size_t>(k));
    std::memset(p + k, '0', static_cast<std::size_t>(n - k));
    p += n;
    *p++ = '.';
    *p++ = '0';
  } else if (0 < n && n <= kMaxExp) {  // dig.its
    std::memcpy(p, digits, static_cast<std::size_t>(n));
    p += n;
    *p++ = '.';
    std::memcpy(p, digits + n, static_cast<std::size_t>(k - n));
    p += k - n;
  } else if (kMinExp < n && n <= 0) {  // 0.000digits
    *p++ = '0';
    *p++ = '.';
    std::memset(p, '0', static_cast<std::size_t>(-n));
    p += -n;
    std::memcpy(p, digits, static_cast<std::size_t>(k));
    p += k;
  } else {  // d.igitse+XX
    *p++ = digits[0];
    if (k > 1) {
      *p++ = '.';
      std::memcpy(p, digits + 1, static_cast<std::size_t>(k - 1));
      p += k - 1;
    }
    *p++ = 'e';
    int x = n - 1;
    *p++ = x < 0 ? '-' : '+';
    if (x < 0) x = -x;
    if (x >= 100) *p++ = static_cast<char>('0' + x / 100);
    *p++ = static_cast<char>('0' + x / 10 % 10);
    *p++ = static_cast<char>('0' + x % 10);
  }
  out.append(buf, static_cast<std::size_t>(p - buf));
}

// [SECTION] The writer ----------------------------------------------------------------------------

Writer Writer::inside(std::string& out, bool pretty, int depth, std::size_t items) {
  Writer w(out, pretty, depth + 1);
  w.first_[0] = items == 0;
  w.open_ = 1;
  return w;
}

void Writer::key(std::string_view k) {
  separator();
  replaced_ += append_string(s_, k);
  s_ += pretty_ ? ": " : ":";
  after_key_ = true;
}

void Writer::separator() {
  bool& first = first_[static_cast<std::size_t>(open_ - 1)];
  if (!first) s_ += ',';
  first = false;
  if (pretty_) newline(depth_);
}

void Writer::open(char bracket) {
  before_value();
  if (open_ == kMaxDepth) throw std::logic_error("JSON writer: nested more than 64 levels");
  s_ += bracket;
  first_[static_cast<std::size_t>(open_++)] = true;
  ++depth_;
}

void Writer::close(char bracket) {
  if (open_ == 0) throw std::logic_error("JSON writer: closing a container that is not open");
  --depth_;
  const bool empty = first_[static_cast<std::size_t>(--open_)];
  if (pretty_ && !empty) newline(depth_);
  s_ += bracket;
}

}  // namespace gpuscope::json
