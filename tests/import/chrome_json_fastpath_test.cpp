// The importer's fast paths against their general paths on the same input:
// the walker's fused number readers (chrome_json_walker.h) against number() +
// the parsers of chrome_json_text.h, and the column growth and text buffers of
// import_memory.h (rows and their order unchanged).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "import/chrome_json_text.h"
#include "import/chrome_json_walker.h"
#include "import/import_memory.h"

namespace gpuscope {
namespace {

using detail::JsonSyntaxError;
using detail::JsonWalker;

// `text` followed by `after` and 64 bytes of padding (the walker's precondition).
std::vector<char> padded(const std::string& text, char after) {
  std::vector<char> buf(text.begin(), text.end());
  buf.push_back(after);
  buf.resize(buf.size() + 64, '\0');
  return buf;
}

struct GeneralResult {
  bool ok = false;  // number() accepted it and the parser gave a value
  std::int64_t value = 0;
  bool sub_us = false;
  std::ptrdiff_t end = 0;  // cursor after number()
};

GeneralResult general_int(const std::vector<char>& buf) {
  GeneralResult r;
  JsonWalker w(buf.data());
  try {
    const std::string_view tok = w.number();
    r.ok = detail::parse_json_int(tok, &r.value);
    r.end = w.pos() - buf.data();
  } catch (const JsonSyntaxError&) {
  }
  return r;
}

GeneralResult general_time(const std::vector<char>& buf) {
  GeneralResult r;
  JsonWalker w(buf.data());
  try {
    const std::string_view tok = w.number();
    r.ok = detail::parse_us_to_ns(tok, &r.value, &r.sub_us);
    r.end = w.pos() - buf.data();
  } catch (const JsonSyntaxError&) {
  }
  return r;
}

// Whichever path the fast reader takes, the result is the general path's.
void check_number_text(const std::string& text, char after) {
  const std::vector<char> buf = padded(text, after);
  {
    JsonWalker w(buf.data());
    std::int64_t v = 0;
    const bool fast = w.try_small_int(&v);
    const GeneralResult g = general_int(buf);
    if (fast) {
      ASSERT_TRUE(g.ok) << text << " then '" << after << "'";
      EXPECT_EQ(v, g.value) << text;
      EXPECT_EQ(w.pos() - buf.data(), g.end) << text;
    } else {
      EXPECT_EQ(w.pos(), buf.data()) << text;  // untouched: the caller takes the general path
    }
  }
  {
    JsonWalker w(buf.data());
    std::int64_t ns = 0;
    bool sub = false;
    const bool fast = w.try_us_to_ns(&ns, &sub);
    const GeneralResult g = general_time(buf);
    if (fast) {
      ASSERT_TRUE(g.ok) << text << " then '" << after << "'";
      EXPECT_EQ(ns, g.value) << text;
      EXPECT_EQ(sub, g.sub_us) << text;
      EXPECT_EQ(w.pos() - buf.data(), g.end) << text;
    } else {
      EXPECT_EQ(w.pos(), buf.data()) << text;
    }
  }
}

TEST(ChromeJsonFastPath, NumbersEdgeCases) {
  const char* texts[] = {"0",
                         "-0",
                         "7",
                         "-7",
                         "00",
                         "01",
                         "-01",
                         "1.",
                         "1.5",
                         "-1.5",
                         "0.001",
                         "0.0005",
                         "1.2345",
                         "12.345",
                         "1e3",
                         "1E3",
                         "1.5e3",
                         "-",
                         "--1",
                         "+1",
                         "123456789012345678",
                         "1234567890123456789",
                         "-123456789012345678",
                         "9223372036854775807",
                         "-9223372036854775808",
                         "9223372036854775808",
                         "1712195495505583.123",
                         "9223372036854774.999",
                         "9223372036854775.807",
                         "9223372036854775",
                         "12345678901234567",
                         "1712195495505583",
                         "0.1",
                         "0.12",
                         "0.123",
                         "0.1234",
                         ".5",
                         "5a",
                         "5x",
                         "a"};
  for (const char* t : texts)
    for (char after : {',', '}', ']', ' ', '\n', '"', ':',    '.',    'e',    'E',
                       'x', '5', '-', '+', '\0', '/', '\x7f', '\x80', '\xfa', '\xff'})
      check_number_text(t, after);
}

// number()'s token (its digit runs are read 8 bytes at a time) against a
// byte-by-byte reading of the grammar, for digit runs of every length around
// the 8-byte steps and every kind of byte after them.
TEST(ChromeJsonFastPath, NumberTokenEndsWhereTheGrammarSays) {
  auto reference_end = [](const std::string& s) -> std::size_t {  // s holds a valid number, then other bytes
    std::size_t i = 0;
    if (s[i] == '-') ++i;
    if (s[i] == '0')
      ++i;
    else
      while (s[i] >= '0' && s[i] <= '9') ++i;
    if (s[i] == '.') {
      ++i;
      while (s[i] >= '0' && s[i] <= '9') ++i;
    }
    return i;
  };
  std::mt19937_64 rng(7);
  const char afters[] = {',', '}', ' ', '/', ':', '\0', '\x7f', '\x80', '\xfa', '\xff', '"'};
  for (int int_digits = 1; int_digits <= 30; ++int_digits)
    for (int frac_digits = -1; frac_digits <= 26; ++frac_digits)
      for (char after : afters) {
        std::string text(1, static_cast<char>('1' + rng() % 9));
        for (int i = 1; i < int_digits; ++i) text += static_cast<char>('0' + rng() % 10);
        if (frac_digits >= 0) {
          text += '.';
          for (int i = 0; i < std::max(frac_digits, 1); ++i) text += static_cast<char>('0' + rng() % 10);
        }
        const std::string with_after = text + after;
        const std::vector<char> buf = padded(with_after, ' ');
        JsonWalker w(buf.data());
        try {
          const std::string_view tok = w.number();
          EXPECT_EQ(tok.size(), reference_end(with_after + std::string(64, ' '))) << text << " then " << int(after);
          EXPECT_EQ(tok, text);
        } catch (const JsonSyntaxError&) {
          ADD_FAILURE() << "rejected " << text << " then " << int(after);
        }
        std::int64_t v = 0;
        JsonWalker f(buf.data());
        if (frac_digits < 0 && int_digits <= 18) {  // the fast integer reader must take it, with its value
          ASSERT_TRUE(f.try_small_int(&v)) << text;
          EXPECT_EQ(std::to_string(v), text);
        }
      }
}

TEST(ChromeJsonFastPath, NumbersRandom) {
  std::mt19937_64 rng(42);
  auto digits = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('0' + rng() % 10);
    return s;
  };
  const char afters[] = {',', '}', ']', ' ', '.', 'e', '1'};
  for (int iter = 0; iter < 100000; ++iter) {
    std::string text;
    if (rng() % 6 == 0) text += '-';
    text += digits(1 + static_cast<int>(rng() % 20));
    if (rng() % 2) {
      text.push_back('.');
      text.append(digits(static_cast<int>(rng() % 6)));
    }
    if (rng() % 10 == 0) {
      text.push_back('e');
      text.append(std::to_string(static_cast<int>(rng() % 7) - 3));
    }
    check_number_text(text, afters[rng() % sizeof afters]);
    if (HasFatalFailure()) return;
  }
}

TEST(ChromeJsonFastPath, WhitespaceRunsOfEveryLength) {
  for (int n = 0; n < 70; ++n) {
    for (const char* unit : {" ", "\n", "\t", "\r\n", " \n  "}) {
      std::string text;
      while (static_cast<int>(text.size()) < n) text += unit;
      text.resize(static_cast<std::size_t>(n));
      text += "x";
      const std::vector<char> buf = padded(text, ' ');
      JsonWalker w(buf.data());
      w.skip_ws();
      EXPECT_EQ(w.pos() - buf.data(), n) << n << " " << unit[0];
      EXPECT_EQ(w.peek(), 'x');
    }
  }
}

TEST(ImportMemory, GrowColumnKeepsRowsAndOrder) {
  std::vector<std::int64_t> col;
  for (int i = 0; i < 1000; ++i) col.push_back(i * 7 - 3);
  const std::vector<std::int64_t> before = col;
  detail::grow_column(col, 100, 0);  // enough room already or not: contents equal
  EXPECT_EQ(col, before);
  EXPECT_GE(col.capacity() - col.size(), 100u);
  detail::grow_column(col, 1u << 20, 3u << 20);  // big: huge-page advised buffer
  EXPECT_EQ(col, before);
  EXPECT_GE(col.capacity(), 3u << 20);
  const std::int64_t* data = col.data();
  detail::grow_column(col, 10, 0);  // room already: no reallocation
  EXPECT_EQ(col.data(), data);
  for (int i = 0; i < 2000000; ++i) col.push_back(i);
  EXPECT_EQ(col[999], before[999]);
  EXPECT_EQ(col.back(), 1999999);
}

TEST(ImportMemory, GrowTableSkipsEmptySparseAndDerivedColumns) {
  KernelTable k;
  for (int i = 0; i < 10; ++i) {
    k.start.push_back(i);
    k.end.push_back(i + 1);
  }
  k.graph_id.assign(10, 5);  // a sparse column in use grows too
  detail::grow_table(k, 5000, 0);
  EXPECT_GE(k.start.capacity(), 5010u);
  EXPECT_GE(k.graph_id.capacity(), 5010u);
  EXPECT_EQ(k.mangled.capacity(), 0u);   // sparse, empty: stays empty
  EXPECT_EQ(k.category.capacity(), 0u);  // derived
  EXPECT_EQ(k.start[9], 9);
  EXPECT_EQ(k.graph_id[9], 5u);
}

TEST(ImportMemory, GrowthReportsUntouchedMemoryAndPrefaultKeepsContents) {
  std::vector<std::uint32_t> col(1000);
  for (std::uint32_t i = 0; i < col.size(); ++i) col[i] = i * 3;
  std::vector<detail::MemoryRange> untouched;
  detail::grow_column(col, 100000, 0, &untouched);
  ASSERT_EQ(untouched.size(), 1u);
  EXPECT_EQ(untouched[0].begin, static_cast<void*>(col.data() + col.size()));
  EXPECT_EQ(untouched[0].bytes, (col.capacity() - col.size()) * sizeof(std::uint32_t));
  // Faulting in memory (written, unwritten, or all of it) changes no value.
  detail::prefault_pages(untouched[0]);
  detail::prefault_pages(detail::MemoryRange{col.data(), col.capacity() * sizeof(std::uint32_t)});
  for (std::uint32_t i = 0; i < col.size(); ++i) ASSERT_EQ(col[i], i * 3);
  col.resize(col.capacity(), 7);
  EXPECT_EQ(col.back(), 7u);
  detail::grow_column(col, 1, 0, &untouched);  // no room: grows again, one more range
  EXPECT_EQ(untouched.size(), 2u);
}

TEST(ImportMemory, TextBuffers) {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{4} << 20, (std::size_t{4} << 20) + 3}) {
    detail::TextBuffer b = detail::alloc_text_buffer(bytes);
    ASSERT_NE(b.get(), nullptr);
    if (bytes >= detail::kHugePageBytes) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.get()) % detail::kHugePageBytes, 0u);
    }
    std::memset(b.get(), 'x', bytes);
    EXPECT_EQ(b[bytes - 1], 'x');
  }
}

}  // namespace
}  // namespace gpuscope
