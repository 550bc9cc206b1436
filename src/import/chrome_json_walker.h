// JsonWalker: a cursor over JSON text that reads the values the importer
// needs and skips (while validating) the rest. Internal to src/import/.
//
// Why not simdjson's on-demand API for events: it moves token by token
// through a structural index built for the whole batch, ~100 tokens per Kineto
// event, which cost ~0.8 µs per event here; reading the few fields an event
// has straight from the text is 3–4× cheaper. The splitter
// (chrome_json_stream.cpp) has already checked that brackets balance, strings
// end and nesting is bounded, and the producer has validated UTF-8, so the
// walker checks the rest of the grammar: keys, ':' and ',', numbers, literals,
// escapes and control characters in strings.
//
// Precondition: the text is followed by at least 16 readable bytes (the
// batch buffers carry 64 bytes of padding), so string scans may load 16 bytes
// at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuscope::detail {

struct JsonSyntaxError {
  const char* at;
  const char* what;
};

class JsonWalker {
 public:
  explicit JsonWalker(const char* p) : p_(p) {}

  const char* pos() const { return p_; }
  char peek() const { return *p_; }

  // Whitespace between tokens: mostly none or one space, but pretty-printed
  // traces (Kineto's) indent each line, so longer runs go 16 bytes at a time.
  // Every run ends inside the item (the splitter has checked that it is
  // complete), so the 16-byte loads stay within the item and its padding.
  // The common cases inline (none, one space); runs out of line.
  [[gnu::always_inline]] void skip_ws() {
    if (static_cast<unsigned char>(*p_) > ' ') return;
    if (*p_ == ' ' && static_cast<unsigned char>(p_[1]) > ' ') {
      ++p_;
      return;
    }
    skip_ws_run();
  }

  [[gnu::noinline]] void skip_ws_run() {
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
    const __m128i cr = _mm_set1_epi8('\r'), tab = _mm_set1_epi8('\t');
    for (;;) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
      const __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, nl)),
                                      _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
      const unsigned other = ~static_cast<unsigned>(_mm_movemask_epi8(ws)) & 0xffffu;
      if (other) {
        p_ += __builtin_ctz(other);
        return;
      }
      p_ += 16;
    }
#else
    while (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t') ++p_;
#endif
  }
  [[gnu::always_inline]] bool consume(char c) {
    if (*p_ != c) return false;
    ++p_;
    return true;
  }
  [[gnu::always_inline]] void expect(char c, const char* what) {
    if (*p_ != c) throw JsonSyntaxError{p_, what};
    ++p_;
  }

  // The string at the cursor (which must be at its opening quote): its raw
  // content between the quotes; `escaped` tells whether it holds a backslash.
  [[gnu::always_inline]] std::string_view string(bool* escaped) {
    const char* begin = ++p_;
    bool esc = false;
    for (;;) {
      p_ += find_string_special(p_);
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') break;
      if (c == '\\') {
        esc = true;
        const char e = p_[1];
        if (e == 'u') {
          for (int k = 2; k < 6; ++k)
            if (!is_hex(p_[k])) throw JsonSyntaxError{p_, "invalid \\u escape in a string"};
          p_ += 6;
        } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
          p_ += 2;
        } else {
          throw JsonSyntaxError{p_, "invalid escape in a string"};
        }
        continue;
      }
      throw JsonSyntaxError{p_, "control character in a string (must be escaped)"};
    }
    const std::string_view out(begin, static_cast<std::size_t>(p_ - begin));
    ++p_;
    *escaped = esc;
    return out;
  }

  // The number at the cursor, checked against JSON's grammar.
  std::string_view number() {
    const char* begin = p_;
    if (*p_ == '-') ++p_;
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      while (is_digit(*p_)) ++p_;
    } else {
      throw JsonSyntaxError{p_, "invalid number"};
    }
    if (*p_ == '.') {
      ++p_;
      if (!is_digit(*p_)) throw JsonSyntaxError{p_, "invalid number: digits must follow '.'"};
      while (is_digit(*p_)) ++p_;
    }
    if (*p_ == 'e' || *p_ == 'E') {
      ++p_;
      if (*p_ == '+' || *p_ == '-') ++p_;
      if (!is_digit(*p_)) throw JsonSyntaxError{p_, "invalid number: digits must follow the exponent"};
      while (is_digit(*p_)) ++p_;
    }
    if (is_digit(*p_) || *p_ == '.' || (*p_ >= 'a' && *p_ <= 'z') || (*p_ >= 'A' && *p_ <= 'Z'))
      throw JsonSyntaxError{p_, "invalid number"};
    return std::string_view(begin, static_cast<std::size_t>(p_ - begin));
  }

  bool at_number() const { return *p_ == '-' || is_digit(*p_); }

  // Fast paths for the numbers profilers write, fused with their checks: they
  // either read the whole number (cursor past it) exactly as number() and the
  // parser in chrome_json_text.h would, or leave the cursor where it was and
  // return false, and the caller takes the general path (which also reports
  // errors). tests/import check both paths give the same results.

  // An integer of at most 18 digits (no fraction, no exponent) into *out.
  [[gnu::always_inline]] bool try_small_int(std::int64_t* out) {
    const char* q = p_;
    const bool negative = *q == '-';
    q += negative;
    const char* digits = q;
    std::uint64_t v = 0;
    while (is_digit(*q) && q - digits < 19) v = v * 10 + static_cast<unsigned>(*q++ - '0');
    const std::ptrdiff_t n = q - digits;
    if (n == 0 || n > 18 || (n > 1 && *digits == '0') || !ends_number(*q)) return false;
    *out = negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    p_ = q;
    return true;
  }

  // A time in µs to ns: up to 16 integer digits, an optional fraction of 1-3
  // digits, no sign, no exponent (the fast path of parse_us_to_ns, fused).
  [[gnu::always_inline]] bool try_us_to_ns(std::int64_t* ns, bool* sub_us) {
    const char* q = p_;
    std::uint64_t whole = 0;
    while (is_digit(*q) && q - p_ < 17) whole = whole * 10 + static_cast<unsigned>(*q++ - '0');
    const std::ptrdiff_t n = q - p_;
    // whole * 1000 + 999 must fit in int64; 16 digits may not.
    if (n == 0 || n > 16 || (n > 1 && *p_ == '0') || whole > 9223372036854774ull) return false;
    std::uint64_t frac = 0;
    if (*q == '.') {
      const char* f = ++q;
      while (is_digit(*q) && q - f < 4) frac = frac * 10 + static_cast<unsigned>(*q++ - '0');
      static constexpr std::uint64_t kScale[4] = {0, 100, 10, 1};
      const std::ptrdiff_t k = q - f;
      if (k == 0 || k > 3) return false;
      frac *= kScale[k];
    }
    if (!ends_number(*q)) return false;
    *ns = static_cast<std::int64_t>(whole * 1000 + frac);
    *sub_us = frac != 0;
    p_ = q;
    return true;
  }

  // Skips the items of an object or array (`close` ends it) after its
  // opening bracket, item() skipping each one.
  template <class Item>
  void skip_items(char close, const char* missing_close, Item&& item) {
    ++p_;
    skip_ws();
    if (consume(close)) return;
    for (;;) {
      skip_ws();
      item();
      skip_ws();
      if (consume(',')) continue;
      expect(close, missing_close);
      return;
    }
  }

  // Skips one value of any type, checking its grammar.
  void skip_value() {
    switch (*p_) {
      case '"': {
        bool esc;
        string(&esc);
        return;
      }
      case '{':
        return skip_items('}', "expected ',' or '}' in an object", [&] {
          if (*p_ != '"') throw JsonSyntaxError{p_, "expected a key string"};
          bool esc;
          string(&esc);
          skip_ws();
          expect(':', "expected ':' after a key");
          skip_ws();
          skip_value();
        });
      case '[': return skip_items(']', "expected ',' or ']' in an array", [&] { skip_value(); });
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default:
        if (at_number()) {
          number();
          return;
        }
        throw JsonSyntaxError{p_, "expected a JSON value"};
    }
  }

 private:
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  // Whether c may follow a complete number: number() rejects digits, '.',
  // letters (an exponent, or garbage) after one.
  static bool ends_number(char c) {
    return !is_digit(c) && c != '.' && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
  }
  static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

  void literal(const char* word) {
    const std::size_t n = std::strlen(word);
    if (std::memcmp(p_, word, n) != 0) throw JsonSyntaxError{p_, "invalid literal"};
    p_ += n;
    if ((*p_ >= 'a' && *p_ <= 'z') || (*p_ >= 'A' && *p_ <= 'Z') || is_digit(*p_))
      throw JsonSyntaxError{p_, "invalid literal"};
  }

  // Offset of the first quote, backslash or control character from p.
  static std::size_t find_string_special(const char* p) {
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i ctrl_max = _mm_set1_epi8(0x1F);
    for (;; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      // bytes <= 0x1F: max(v, 0x1F) == 0x1F (unsigned)
      const __m128i ctrl = _mm_cmpeq_epi8(_mm_max_epu8(v, ctrl_max), ctrl_max);
      const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), ctrl);
      const int mask = _mm_movemask_epi8(hit);
      if (mask) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    }
#else
    for (;; ++i) {
      const unsigned char c = static_cast<unsigned char>(p[i]);
      if (c == '"' || c == '\\' || c < 0x20) return i;
    }
#endif
  }

  const char* p_;
};

}  // namespace gpuscope::detail
