// The .gscope reader under its memory budget (trace/budget.h): a small file
// that declares more rows, or more string bytes, than the budget allows is
// refused before the memory is taken, naming the section and the claim; long
// names are cut to kMaxNameBytes and counted.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "store/detail/reader.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "support/hostile_files.h"
#include "trace/budget.h"

namespace gpuscope {
namespace {

using testing::TempDir;

std::string refusal(const std::string& path, std::uint64_t budget) {
  set_memory_budget(budget);
  try {
    (void)read_gscope(path);
    set_memory_budget(0);
    return "accepted";
  } catch (const InputError& e) {
    set_memory_budget(0);
    return e.reason();
  }
}

// The bomb: 20M identical kernels in ~64 KB.
TEST(GscopeBudget, TwentyMillionIdenticalKernelsAreRefusedByTheirIndex) {
  TempDir dir;
  const std::string file = dir.file("bomb.gscope");
  testing::write_identical_kernels_gscope(file, 20'000'000);
  EXPECT_LT(std::filesystem::file_size(file), 200'000u);
  const std::string why = refusal(file, 256u << 20);
  EXPECT_NE(why.find("the footer index declares 20000000 rows (kernels 20000000)"), std::string::npos) << why;
  EXPECT_NE(why.find("over the memory budget of 256 MiB"), std::string::npos) << why;
}

// Without a footer (a capture killed before it finished) there is no
// declaration to refuse: the sections are loaded until the next would pass
// the budget.
TEST(GscopeBudget, AnUnfinishedFileStopsAtTheSectionThatWouldPassTheBudget) {
  TempDir dir;
  const std::string file = dir.file("unfinished.gscope");
  testing::write_identical_kernels_gscope(file, 2'000'000, /*finish=*/false);
  const std::string why = refusal(file, 32u << 20);
  EXPECT_NE(why.find("(kernels) declares 65536 rows"), std::string::npos) << why;
  EXPECT_NE(why.find("over the memory budget of 32 MiB"), std::string::npos) << why;
  // Within the budget it loads, every row.
  EXPECT_EQ(read_gscope(file).kernels().size(), 2'000'000u);
}

TEST(GscopeBudget, LongNamesAreCutAndCounted) {
  TempDir dir;
  const std::string file = dir.file("names.gscope");
  testing::write_long_names_gscope(file, 200, 100'000);
  EXPECT_LT(std::filesystem::file_size(file), 100'000u);
  const Trace t = read_gscope(file);
  ASSERT_EQ(t.kernels().size(), 200u);
  for (RowIndex i = 0; i < t.kernels().size(); ++i) EXPECT_EQ(t.str(t.kernels().name[i]).size(), kMaxNameBytes);
  EXPECT_EQ(t.meta().stat("trace.truncated_names"), 200u);
  // The strings a section declares count against the budget before it is decompressed.
  const std::string why = refusal(file, 4u << 20);
  EXPECT_NE(why.find("(strings) declares"), std::string::npos) << why;
}

TEST(GscopeBudget, TheReaderOptionOverridesTheProcessBudget) {
  TempDir dir;
  const std::string file = dir.file("bomb.gscope");
  testing::write_identical_kernels_gscope(file, 1'000'000);
  const std::vector<std::uint8_t> bytes = testing::read_bytes(file);
  store_detail::ReadOptions o;
  o.memory_budget = 8u << 20;
  EXPECT_THROW(store_detail::read_gscope_bytes(bytes, "bomb.gscope", nullptr, o), InputError);
  o.memory_budget = 1u << 30;
  EXPECT_EQ(store_detail::read_gscope_bytes(bytes, "bomb.gscope", nullptr, o).kernels().size(), 1'000'000u);
}

}  // namespace
}  // namespace gpuscope
