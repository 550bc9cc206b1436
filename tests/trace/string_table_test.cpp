#include "trace/string_table.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>

namespace gpuscope {
namespace {

TEST(StringTable, EmptyStringIsIdZero) {
  StringTable t;
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.get(0), "");
  EXPECT_EQ(t.intern(""), 0u);
  EXPECT_EQ(t.find(""), 0u);
}

TEST(StringTable, InternDeduplicatesAndSurvivesGrowth) {
  StringTable t;
  std::unordered_map<std::string, StringId> seen;
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string s = "kernel_" + std::to_string(rng() % 5000);
    const StringId id = t.intern(s);
    auto [it, inserted] = seen.try_emplace(s, id);
    EXPECT_EQ(it->second, id) << s;
    EXPECT_EQ(t.get(id), s);
  }
  EXPECT_EQ(t.size(), seen.size() + 1);
  for (const auto& [s, id] : seen) EXPECT_EQ(t.find(s), id);
  EXPECT_EQ(t.find("not there"), StringTable::kNoString);
}

TEST(StringTable, AppendRawRestoresIdsAndRejectsBadLengths) {
  StringTable t;
  EXPECT_FALSE(t.append_raw("abc", {1, 1}));  // lengths sum to 2, bytes are 3
  EXPECT_FALSE(t.append_raw("abc", {2, 5}));  // overflow
  EXPECT_EQ(t.size(), 1u);                    // unchanged
  ASSERT_TRUE(t.append_raw("abcdef", {1, 2, 3}));
  EXPECT_EQ(t.get(1), "a");
  EXPECT_EQ(t.get(2), "bc");
  EXPECT_EQ(t.get(3), "def");
  EXPECT_EQ(t.intern("bc"), 2u);  // found again after a raw append
  EXPECT_EQ(t.intern("new"), 4u);
}

}  // namespace
}  // namespace gpuscope
