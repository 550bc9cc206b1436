// tests/data/traces holds exactly the files the tests expect, each with its
// provenance row, HTA's reference numbers and the license texts beside it: a
// clone of the repository has every input its tests read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "support/real_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using testing::real_nsys_files;
using testing::real_review_files;
using testing::real_trace;
using testing::real_trace_files;
using testing::real_traces_dir;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TestData, FolderHoldsExactlyTheListedFiles) {
  ASSERT_TRUE(fs::is_directory(real_traces_dir())) << "missing test data folder: " << real_traces_dir();
  std::set<std::string> want(real_trace_files().begin(), real_trace_files().end());
  want.insert(real_nsys_files().begin(), real_nsys_files().end());
  want.insert(real_review_files().begin(), real_review_files().end());
  for (const std::string& f : want) EXPECT_TRUE(fs::is_regular_file(real_traces_dir() / f)) << "missing: " << f;
  // Any trace or export in the folder is in the list (so every-trace suites run on it).
  for (const auto& e : fs::recursive_directory_iterator(real_traces_dir())) {
    const std::string rel = fs::relative(e.path(), real_traces_dir()).generic_string();
    if (rel.ends_with(".json.gz") || rel.ends_with(".sqlite")) {
      EXPECT_TRUE(want.count(rel)) << rel << " is in tests/data/traces but not in tests/support/real_traces.h";
    }
  }
  EXPECT_EQ(real_trace_files().size(), 11u);
}

TEST(TestData, EveryTraceHasItsHtaReference) {
  const std::string ref = slurp(real_trace("hta-reference.json"));
  for (const std::string& f : real_trace_files())
    EXPECT_NE(ref.find("\"" + f + "\": {"), std::string::npos) << f << " has no entry in hta-reference.json";
}

TEST(TestData, ReadmeHasAProvenanceRowForEveryFileAndTheLicensesAreThere) {
  const std::string readme = slurp(real_trace("README.md"));
  for (const auto* list : {&real_trace_files(), &real_nsys_files(), &real_review_files()})
    for (const std::string& f : *list) EXPECT_NE(readme.find("| " + f + " |"), std::string::npos) << f;
  for (const char* license : {"pytorch-kineto.txt", "HolisticTraceAnalysis.txt", "TraceLens.txt", "pipit.txt"}) {
    const std::string text = slurp(real_trace(std::string("LICENSES/") + license));
    EXPECT_NE(text.find("Copyright"), std::string::npos) << license;
    EXPECT_NE(readme.find(std::string("LICENSES/") + license), std::string::npos) << license;
  }
}

}  // namespace
}  // namespace gpuscope
