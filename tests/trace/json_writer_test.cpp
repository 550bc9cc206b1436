// json_writer.h: the one escaper (quotes, backslashes, control characters,
// invalid UTF-8 replaced as nlohmann's replace did), numbers (shortest
// round-trip digits in the layout nlohmann gave; NaN and infinity null; the
// Chrome export's to_chars form), and structure (nesting, separators,
// indentation, empty containers) — the bytes nlohmann's dump() gives for
// the same document.
#include "trace/json_writer.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpuscope::json {
namespace {

using ordered = nlohmann::ordered_json;

std::string str(std::string_view s) {
  std::string out;
  append_string(out, s);
  return out;
}
std::string num(double v) {
  std::string out;
  append_number(out, v);
  return out;
}
std::string dumped(const ordered& j, int indent = -1) {
  return j.dump(indent, ' ', false, ordered::error_handler_t::replace);
}

TEST(JsonString, QuotesBackslashesAndControlCharactersAreEscaped) {
  EXPECT_EQ(str(""), "\"\"");
  EXPECT_EQ(str("plain text"), "\"plain text\"");
  EXPECT_EQ(str("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(str("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
  EXPECT_EQ(str(std::string_view("\x00\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
  for (int c = 0; c < 0x20; ++c) {
    const std::string s(1, static_cast<char>(c));
    EXPECT_EQ(str(s), dumped(ordered(s))) << c;
  }
}

TEST(JsonString, ValidUtf8StaysAsItIs) {
  const std::string s = "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xed\x9f\xbf";
  EXPECT_EQ(str(s), "\"" + s + "\"");
}

TEST(JsonString, InvalidUtf8BecomesOneReplacementPerMaximalSubpart) {
  const std::string r = "\xef\xbf\xbd";
  std::string out;
  EXPECT_EQ(append_string(out,
                          "a\xff"
                          "b"),
            1u);
  EXPECT_EQ(out, "\"a" + r + "b\"");
  EXPECT_EQ(str("\xff\xfe"), "\"" + r + r + "\"");
  EXPECT_EQ(str("\xe2\x82"
                "A"),
            "\"" + r + "A\"");                                      // a cut 3-byte sequence: one
  EXPECT_EQ(str("end \xf0\x9f\x98"), "\"end " + r + "\"");          // cut at the end: one
  EXPECT_EQ(str("\xc0\xaf"), "\"" + r + r + "\"");                  // overlong
  EXPECT_EQ(str("\xe0\x80\x80"), "\"" + r + r + r + "\"");          // overlong
  EXPECT_EQ(str("\xed\xa0\x80"), "\"" + r + r + r + "\"");          // a surrogate
  EXPECT_EQ(str("\xf4\x90\x80\x80"), "\"" + r + r + r + r + "\"");  // above U+10FFFF
  EXPECT_EQ(str("\x80"), "\"" + r + "\"");
}

// The policy is nlohmann's error_handler_t::replace, byte for byte, on any
// bytes at all.
TEST(JsonString, SameBytesAsNlohmannReplaceOnRandomBytes) {
  std::mt19937 rng(7);
  const char pool[] = {'a',    '"',    '\\',   '\n',   '\x01', '\x7f', '\x80', '\xbf', '\xc2', '\xdf', '\xe0',
                       '\xed', '\xef', '\xf0', '\xf4', '\xf5', '\xff', '\xa0', '\x90', '\x8f', '\x9f'};
  for (int round = 0; round < 20000; ++round) {
    std::string s(rng() % 12, ' ');
    for (char& c : s) c = rng() % 3 ? pool[rng() % sizeof pool] : static_cast<char>(rng());
    ASSERT_EQ(str(s), dumped(ordered(s))) << testing::PrintToString(s);
  }
}

TEST(JsonNumber, LaidOutAsNlohmannDid) {
  EXPECT_EQ(num(0.0), "0.0");
  EXPECT_EQ(num(-0.0), "-0.0");
  EXPECT_EQ(num(1.0), "1.0");
  EXPECT_EQ(num(-2.5), "-2.5");
  EXPECT_EQ(num(0.1), "0.1");
  EXPECT_EQ(num(1e-4), "0.0001");
  EXPECT_EQ(num(1e-5), "1e-05");
  EXPECT_EQ(num(1.5e-7), "1.5e-07");
  EXPECT_EQ(num(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(num(1e15), "1e+15");
  EXPECT_EQ(num(1.5e16), "1.5e+16");
  EXPECT_EQ(num(1e300), "1e+300");
  EXPECT_EQ(num(5e-324), "5e-324");
  EXPECT_EQ(num(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  for (double v : {0.5, 3.0, 1234.5678, 1e-3, 2.0 / 3.0, 1e21, 7e-10, 99.99, 1e14, 123456.0})
    EXPECT_EQ(num(v), dumped(ordered(v))) << v;
}

TEST(JsonNumber, NanAndInfinityAreNull) {
  EXPECT_EQ(num(std::nan("")), "null");
  EXPECT_EQ(num(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(num(-std::numeric_limits<double>::infinity()), "null");
}

// Every double reads back as itself, never in more characters than
// nlohmann's Grisu2 gave. Grisu2 was not always shortest
// (36.487610599999996 for 36.4876106), nor, among 17 digits, always the
// closest to the double (…7.2615743e+229 for …7.2615744e+229).
TEST(JsonNumber, ShortestRoundTripDigits) {
  std::mt19937_64 rng(11);
  int shorter = 0;
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (i % 2) v = static_cast<double>(rng() % 1000000000) / 1e9 * 100.0;
    if (!std::isfinite(v)) continue;
    const std::string ours = num(v), theirs = dumped(ordered(v));
    ASSERT_EQ(ordered::parse(ours).get<double>(), v) << ours;
    ASSERT_LE(ours.size(), theirs.size()) << ours << " vs " << theirs;
    shorter += ours.size() < theirs.size();
  }
  EXPECT_GT(shorter, 0);
  EXPECT_EQ(num(36.4876106), "36.4876106");
}

TEST(JsonNumber, ChromeFormIsToChars) {
  std::string out;
  for (double v : {1.0, 0.25, 1e-5, 1e21, 1000.0}) append_shortest(out, v), out += ' ';
  EXPECT_EQ(out, "1 0.25 1e-05 1e+21 1000 ");
  out.clear();
  append_integer(out, std::numeric_limits<std::int64_t>::min());
  out += ' ';
  append_unsigned(out, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(out, "-9223372036854775808 18446744073709551615");
}

ordered sample_tree() {
  return ordered{{"schema", "x/1"},
                 {"empty_object", ordered::object()},
                 {"empty_array", ordered::array()},
                 {"n", 3},
                 {"u", std::numeric_limits<std::uint64_t>::max()},
                 {"f", 0.5},
                 {"t", true},
                 {"z", nullptr},
                 {"list", {1, "two", ordered::array(), ordered::object(), {{"deep", {{"er", {1, 2}}}}}}},
                 {"bad\xff key", "v\xe2\x82"}};
}

void write_sample(Writer& w) {
  w.begin_object();
  w.member("schema", "x/1");
  w.key("empty_object");
  w.begin_object();
  w.end_object();
  w.key("empty_array");
  w.begin_array();
  w.end_array();
  w.member("n", 3);
  w.member("u", std::numeric_limits<std::uint64_t>::max());
  w.member("f", 0.5);
  w.member("t", true);
  w.member("z", nullptr);
  w.key("list");
  w.begin_array();
  w.integer(1);
  w.string("two");
  w.begin_array();
  w.end_array();
  w.begin_object();
  w.end_object();
  w.begin_object();
  w.key("deep");
  w.begin_object();
  w.member("er", std::vector<int>{1, 2});
  w.end_object();
  w.end_object();
  w.end_array();
  w.member("bad\xff key", "v\xe2\x82");
  w.end_object();
}

TEST(JsonWriter, NestingAndEmptyContainersAsNlohmannDumps) {
  for (bool pretty : {true, false}) {
    std::string out;
    Writer w(out, pretty);
    write_sample(w);
    EXPECT_EQ(w.open_containers(), 0);
    EXPECT_EQ(w.replaced(), 2u);
    EXPECT_EQ(out, dumped(sample_tree(), pretty ? 2 : -1)) << out;
  }
}

TEST(JsonWriter, StartsAtADepth) {
  std::string out = "{\n  \"a\": ";
  Writer w(out, true, 1);
  w.value(std::vector<std::optional<double>>{1.0, std::nullopt});
  out += "\n}";
  EXPECT_EQ(out, dumped(ordered{{"a", {1.0, nullptr}}}, 2));
}

// A list written in ranges, each by its own writer, joins to the whole.
TEST(JsonWriter, ItemsOfAnArrayWrittenApart) {
  for (bool pretty : {true, false}) {
    std::string head = "[", a, b, tail;
    Writer w1 = Writer::inside(a, pretty, 0, 0);
    w1.integer(1);
    w1.string("x");
    Writer w2 = Writer::inside(b, pretty, 0, 2);
    w2.begin_object();
    w2.member("k", 2);
    w2.end_object();
    tail = pretty ? "\n]" : "]";
    EXPECT_EQ(head + a + b + tail, dumped(ordered{1, "x", {{"k", 2}}}, pretty ? 2 : -1));
  }
}

TEST(JsonWriter, ValuesByType) {
  std::string out;
  Writer w(out, false);
  w.begin_array();
  w.value(std::int32_t{-3});
  w.value(std::uint8_t{200});
  w.value(1.5f);
  w.value(std::string("s"));
  w.value(std::optional<int>());
  w.value(std::array<bool, 2>{true, false});
  w.value(std::vector<bool>{true});
  w.value(std::vector<std::string>{});
  w.value(std::vector<std::pair<std::string, unsigned>>{{"a", 1u}});
  w.raw("{\"pre\":1}");
  w.end_array();
  EXPECT_EQ(out, "[-3,200,1.5,\"s\",null,[true,false],[true],[],[[\"a\",1]],{\"pre\":1}]");
}

TEST(JsonWriter, ObjectsOfKeyValuesAndArraysOfItems) {
  std::string out;
  Writer w(out, false);
  const std::vector<int> items{1, 2};
  w.object(kv("name", std::string("n")), kv("none", nullptr),
           kv("items", [&](Writer& x) { x.array(items, [&](int i) { x.object(kv("i", i), kv("half", i / 2.0)); }); }),
           kv("empty", [](Writer& x) { x.object(); }));
  EXPECT_EQ(out, R"({"name":"n","none":null,"items":[{"i":1,"half":0.5},{"i":2,"half":1.0}],"empty":{}})");
  out.clear();
  Writer v(out, false);
  const unsigned device = 3;
  v.object(kv("a", or_null(true, device)), kv("b", or_null(false, device)));
  EXPECT_EQ(out, R"({"a":3,"b":null})");
}

TEST(JsonWriter, MisuseIsALogicError) {
  std::string out;
  Writer w(out);
  EXPECT_THROW(w.end_object(), std::logic_error);
  for (int i = 0; i < 64; ++i) w.begin_array();
  EXPECT_THROW(w.begin_array(), std::logic_error);
}

}  // namespace
}  // namespace gpuscope::json
