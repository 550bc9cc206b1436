// The sentences about a damaged file (src/words/damage_text.h), from damage
// data built by hand: what the readers hand out (tests/store/damage_test.cpp
// checks that data on damaged files) turned into the headline, the rows lost
// and the GPU lists that report, info and the viewer print.
//
// [SECTION] Headline
// [SECTION] Rows lost and GPU lists
#include "words/damage_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {
namespace {

TableLoss& kernels(FileDamage& d) { return d.tables[static_cast<int>(TableId::kernels)]; }

DeviceCoverage gpus(std::vector<std::uint32_t> declared, std::vector<std::uint32_t> with_data) {
  return {std::move(declared), std::move(with_data)};
}

// [SECTION] Headline ---------------------------------------------------------------------------

TEST(DamageHeadline, IntactFileSaysNothing) { EXPECT_EQ(damage_headline(FileDamage{}, gpus({0, 1}, {0})), ""); }

TEST(DamageHeadline, CutFileNamesTheByteTheShareAndTheGpusWithoutData) {
  FileDamage d;
  d.truncated = true;
  d.file_bytes = 1'234'567;
  kernels(d) = {.loaded = 480, .lost = 520, .count = LossCount::exact};
  EXPECT_EQ(damage_headline(d, gpus({0, 1, 2, 3}, {0})),
            "INCOMPLETE file: truncated at byte 1,234,567; about 48 % of the kernels survive (480 of 1,000); "
            "GPUs 1–3 have no data");
  EXPECT_EQ(damage_headline(d, gpus({0, 1}, {0})),
            "INCOMPLETE file: truncated at byte 1,234,567; about 48 % of the kernels survive (480 of 1,000); "
            "GPU 1 has no data");
}

TEST(DamageHeadline, CutAfterTheKernelsSaysAllSurvive) {
  FileDamage d;
  d.truncated = true;
  d.file_bytes = 218'551;
  kernels(d) = {.loaded = 45'840, .lost = 0, .count = LossCount::exact};
  EXPECT_EQ(damage_headline(d, gpus({0}, {0})),
            "INCOMPLETE file: truncated at byte 218,551; all 45,840 kernels survive");
}

TEST(DamageHeadline, CutWithoutTotalsSaysWhatIsNotKnown) {
  FileDamage d;
  d.truncated = true;
  d.file_bytes = 8'322;
  kernels(d) = {.loaded = 1, .lost = 0, .count = LossCount::at_least};
  EXPECT_EQ(
      damage_headline(d, gpus({0}, {0})),
      "INCOMPLETE file: truncated at byte 8,322; 1 kernels survive; the file does not say how many followed the cut");
  kernels(d) = {.loaded = 2'000, .lost = 1'024, .count = LossCount::at_least};
  EXPECT_EQ(damage_headline(d, gpus({0}, {0})),
            "INCOMPLETE file: truncated at byte 8,322; at least 1,024 kernels lost (2,000 survive; the file does not "
            "say how many more followed)");
}

TEST(DamageHeadline, DamagedSectionsSayWhereAndHowMuch) {
  FileDamage d;
  d.intact_bytes = 3'420;
  d.bytes_lost = 196'384;
  d.damaged_sections = 1;
  kernels(d) = {.loaded = 0, .lost = 45'840, .count = LossCount::exact};
  EXPECT_EQ(damage_headline(d, gpus({0}, {0})),
            "INCOMPLETE file: damaged after byte 3,420 (1 damaged part, 196,384 bytes not loaded); 0 % of the kernels "
            "survive (0 of 45,840)");
  d.damaged_sections = 2;
  kernels(d) = {.loaded = 600, .lost = 400, .count = LossCount::estimate};
  EXPECT_EQ(damage_headline(d, gpus({0}, {0})),
            "INCOMPLETE file: damaged after byte 3,420 (2 damaged parts, 196,384 bytes not loaded); about 60 % of "
            "the kernels survive (600 of about 1,000, estimated)");
}

TEST(DamageHeadline, SharesAtTheEdgesAreNeverRoundedToAllOrNothing) {
  FileDamage d;
  d.truncated = true;
  d.file_bytes = 10;
  kernels(d) = {.loaded = 1, .lost = 999, .count = LossCount::exact};
  EXPECT_NE(damage_headline(d, {}).find("; less than 1 % of the kernels survive (1 of 1,000)"), std::string::npos);
  kernels(d) = {.loaded = 999, .lost = 1, .count = LossCount::exact};
  EXPECT_NE(damage_headline(d, {}).find("; more than 99 % of the kernels survive (999 of 1,000)"), std::string::npos);
}

TEST(DamageHeadline, DamagedIndexLosesNothing) {
  FileDamage d;
  d.intact_bytes = 9'000;
  d.damaged_sections = 1;
  d.problems = {"the index is damaged"};
  EXPECT_EQ(damage_headline(d, gpus({0}, {0})), "DAMAGED file, nothing lost: 1 damaged part after byte 9,000");
}

// [SECTION] Rows lost and GPU lists ------------------------------------------------------------

TEST(RowsLostText, NamesEachTableWithHowWellItsLossIsKnown) {
  FileDamage d;
  EXPECT_EQ(rows_lost_text(d), "none");
  kernels(d) = {.loaded = 0, .lost = 65'536, .count = LossCount::exact};
  d.tables[static_cast<int>(TableId::api_calls)] = {.loaded = 0, .lost = 1'024, .count = LossCount::at_least};
  EXPECT_EQ(rows_lost_text(d), "65,536 kernels, at least 1,024 api_calls");
  d.tables[static_cast<int>(TableId::ranges)] = {.loaded = 0, .lost = 300, .count = LossCount::estimate};
  EXPECT_EQ(rows_lost_text(d), "65,536 kernels, at least 1,024 api_calls, ~300 ranges (~: estimated)");
}

TEST(DeviceListText, JoinsRunsOfThreeOrMore) {
  EXPECT_EQ(device_list_text({}), "");
  EXPECT_EQ(device_list_text({0}), "0");
  EXPECT_EQ(device_list_text({1, 2, 3}), "1–3");
  EXPECT_EQ(device_list_text({0, 1}), "0, 1");
  EXPECT_EQ(device_list_text({0, 2, 5, 6, 7}), "0, 2, 5–7");
}

}  // namespace
}  // namespace gpuscope
