// KeyTable (chrome_json_keys.h), the perfect-hash tables of keys the Chrome
// importer reads: every key finds its own value, and nothing else does, in
// particular keys that land in a key's slot (same length, first and last
// byte) but differ anywhere between.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "import/chrome_json_keys.h"

namespace gpuscope {
namespace {

using detail::chrome::KeyTable;

// Keys of every length from 1 to 21 (the compare reads 2-, 4- and 8-byte
// words that overlap), with the first and last bytes some of them share.
constexpr KeyTable<int, 12, 64> kTable({
    {"a", 0},
    {"ph", 1},
    {"cat", 2},
    {"grid", 3},
    {"bytes", 4},
    {"Bytes", 5},
    {"device", 6},
    {"Device Id", 7},
    {"External id", 8},
    {"external id", 9},
    {"Process Group Name", 10},
    {"wait_on_cuda_event_id", 11},
});

std::vector<std::string> keys() {
  return {"a",
          "ph",
          "cat",
          "grid",
          "bytes",
          "Bytes",
          "device",
          "Device Id",
          "External id",
          "external id",
          "Process Group Name",
          "wait_on_cuda_event_id"};
}

TEST(ChromeJsonKeys, EveryKeyFindsItsValue) {
  const std::vector<std::string> k = keys();
  for (std::size_t i = 0; i < k.size(); ++i) {
    const int* v = kTable.find(k[i]);
    ASSERT_NE(v, nullptr) << k[i];
    EXPECT_EQ(*v, static_cast<int>(i)) << k[i];
  }
}

TEST(ChromeJsonKeys, KeysFromTheTextNotTheLiteralsCompareByContent) {
  // A key as the reader sees it: a view into a larger text.
  const std::string text = R"({"External id":1,"registers per thread":2})";
  EXPECT_EQ(*kTable.find(std::string_view(text).substr(2, 11)), 8);
  EXPECT_EQ(kTable.find(std::string_view(text).substr(19, 20)), nullptr);
}

TEST(ChromeJsonKeys, NearMissesAreNotFound) {
  EXPECT_EQ(kTable.find(""), nullptr);
  EXPECT_EQ(kTable.find("b"), nullptr);
  EXPECT_EQ(kTable.find("gridx"), nullptr);
  EXPECT_EQ(kTable.find("gri"), nullptr);
  EXPECT_EQ(kTable.find("Grid"), nullptr);
  // Each key with one byte changed (the first and last kept: the same
  // slot): the compare must reject it, wherever the byte is.
  for (const std::string& key : keys()) {
    for (std::size_t at = 1; at + 1 < key.size(); ++at) {
      std::string other = key;
      other[at] = other[at] == 'x' ? 'y' : 'x';
      EXPECT_EQ(kTable.find(other), nullptr) << key << " changed at " << at << ": " << other;
    }
  }
}

}  // namespace
}  // namespace gpuscope
