// The kernel category table on every kernel name of the real traces in
// tests/data/traces: each distinct name has the category reviewed in
// tests/trace/data/kernel_categories.tsv, and the table lists no name that no
// trace has. A new trace adds its names to the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "import/chrome_json.h"
#include "support/real_traces.h"
#include "trace/kernel_category.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

TEST(KernelCategoryGolden, EveryKernelNameInTheRealTracesHasItsReviewedCategory) {
  const fs::path table = fs::path(GPUSCOPE_SOURCE_DIR) / "tests/trace/data/kernel_categories.tsv";
  std::ifstream in(table);
  ASSERT_TRUE(in) << "missing test data: " << table;
  std::map<std::string, std::string> want;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << table << ": no tab in: " << line;
    want[line.substr(tab + 1)] = line.substr(0, tab);
  }
  std::set<std::string> seen;
  for (const std::string& file : testing::real_trace_files()) {
    const Trace t = import_chrome_json(testing::real_trace(file));
    for (std::size_t i = 0; i < t.kernels().size(); ++i) {
      const std::string name(t.str(t.kernels().name[i]));
      if (!seen.insert(name).second) continue;
      auto it = want.find(name);
      if (it == want.end()) {
        ADD_FAILURE() << file << ": kernel not in kernel_categories.tsv (review and add it): " << name;
        continue;
      }
      // The table reviews the name rules; a kernel its launching op placed
      // elsewhere (a GEMM of a convolution) is checked by the op rule.
      EXPECT_EQ(std::string(to_string(classify_kernel(name))), it->second) << name;
      if (t.kernels().category_rule_at(i) == CategoryRuleKind::launching_op) {
        const RowIndex op = t.launching_op({OpTable::kernel, static_cast<RowIndex>(i)});
        // A fill or copy under a pad op a few levels up is padding.
        bool in_pad = false;
        for (RowIndex r = op; r != kNoRow; r = t.parent_op(r)) in_pad = in_pad || is_pad_op(t.str(t.ranges().name[r]));
        if (in_pad && t.kernels().category_at(i) == KernelCategory::padding) continue;
        EXPECT_EQ(t.kernels().category_at(i), classify_by_op(t.str(t.ranges().name[op]), classify_kernel(name)))
            << name;
      }
    }
  }
  for (const auto& [name, category] : want) EXPECT_TRUE(seen.count(name)) << "in the table but in no trace: " << name;
}

}  // namespace
}  // namespace gpuscope
