// The rule registry (finding_rules(), the table in src/analysis/findings/registry.cpp)
// against docs/findings.md: the doc's rule table lists exactly the
// registry's rules, in its order, with its severity policy; and the
// findings analyze() gives carry registered ids.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

const std::string kDocPath = std::string(GPUSCOPE_SOURCE_DIR) + "/docs/findings.md";

struct DocRow {
  std::string id, severity;
};

// The rows of the doc's rule table: the first table whose header starts
// with "| id |"; its columns are id, tests, threshold, severity, saving.
std::vector<DocRow> documented_rules() {
  std::ifstream in(kDocPath);
  std::vector<DocRow> rows;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.starts_with("| id |")) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    if (!line.starts_with("| `")) continue;  // the |---| line
    // "| a | b | c |" -> a, b, c
    std::vector<std::string> cells;
    const std::string body = line.substr(2, line.size() - (line.ends_with(" |") ? 4 : 2));
    for (std::size_t at = 0;;) {
      const std::size_t end = body.find(" | ", at);
      cells.push_back(body.substr(at, end - at));
      if (end == std::string::npos) break;
      at = end + 3;
    }
    EXPECT_EQ(cells.size(), 5u) << line;
    if (cells.size() < 4) continue;
    rows.push_back({cells[0].substr(1, cells[0].find('`', 1) - 1), cells[3]});
  }
  return rows;
}

TEST(FindingRules, TheDocListsExactlyTheRegisteredRulesInOrder) {
  const std::vector<DocRow> doc = documented_rules();
  ASSERT_FALSE(doc.empty()) << kDocPath << ": no rule table";
  std::vector<std::string> documented, registered;
  for (const DocRow& r : doc) documented.push_back(r.id);
  for (const FindingRule& r : finding_rules()) registered.push_back(std::string(r.id));
  EXPECT_EQ(documented, registered) << kDocPath
                                    << " must list the rules of src/analysis/findings/registry.cpp's kRules, "
                                    << "in the same order";
}

TEST(FindingRules, TheDocStatesEachRulesSeverityPolicy) {
  const std::vector<DocRow> doc = documented_rules();
  for (const FindingRule& r : finding_rules()) {
    const DocRow* row = nullptr;
    for (const DocRow& d : doc)
      if (d.id == r.id) row = &d;
    if (!row) continue;  // the test above reports it
    EXPECT_EQ(row->severity, r.severity) << r.id;
  }
}

TEST(FindingRules, IdsAreUniqueAndEveryRuleIsDescribed) {
  std::set<std::string_view> seen;
  for (const FindingRule& r : finding_rules()) {
    EXPECT_TRUE(seen.insert(r.id).second) << r.id;
    EXPECT_FALSE(r.summary.empty()) << r.id;
    EXPECT_FALSE(r.severity.empty()) << r.id;
    for (char c : r.id) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '-') << r.id;
  }
}

TEST(FindingRules, FindingsCarryRegisteredIds) {
  // A padding-heavy single stream with a host gap: several rules fire.
  testing::TraceFactory f;
  constexpr TimeNs us = 1'000;
  TimeNs t = 1'000'000;
  for (int s = 0; s < 6; ++s) {
    const TimeNs s0 = t;
    f.kernel(0, 7, testing::names::kPad, t, t + 300 * us, t - 100 * us);
    f.kernel(0, 7, testing::names::kConvTensorCore, t + 301 * us, t + 600 * us, t - 90 * us);
    t += 5'000 * us;
    f.range("step " + std::to_string(s), s0 - 100 * us, t);
  }
  const Trace trace = f.build();
  const Profile p = analyze(trace);
  ASSERT_GE(p.findings.size(), 2u);
  std::set<std::string_view> registered;
  for (const FindingRule& r : finding_rules()) registered.insert(r.id);
  for (const Finding& finding : p.findings) EXPECT_TRUE(registered.count(finding.id)) << finding.id;
}

}  // namespace
}  // namespace gpuscope
