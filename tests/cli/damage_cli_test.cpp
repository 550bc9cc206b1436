// Damaged files as a user meets them: storage damage said first by report,
// info, export and diff, apart from recording drops; nothing recoverable is
// exit 2 with one line naming the file, the byte and what is missing; JSON
// cut short loads its complete events and says where it stopped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_gpuscope;
using testing::RunResult;
using testing::slurp;

std::string thousands(std::uint64_t v) {
  std::string d = std::to_string(v), out;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

class DamageCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-damage-cli-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(const std::vector<std::string>& args) { return run_gpuscope(args, dir_); }

  // A 4-GPU synthetic .gscope (several kernel chunks, stored GPU by GPU).
  fs::path four_gpus() {
    const RunResult r = run({"synth", "-o", "whole.gscope", "--kernels", "300000", "--gpus", "4"});
    EXPECT_EQ(r.status, 0) << r.err;
    return dir_ / "whole.gscope";
  }
  // A copy of `from` cut to `bytes`.
  fs::path cut(const fs::path& from, std::uint64_t bytes, const std::string& name) {
    fs::copy_file(from, dir_ / name, fs::copy_options::overwrite_existing);
    fs::resize_file(dir_ / name, bytes);
    return dir_ / name;
  }

  // Exit 2, exactly one line on stderr, naming the file and what is missing.
  static void expect_nothing_recovered(const RunResult& r, const fs::path& file, const std::string& why) {
    EXPECT_EQ(r.status, 2) << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("gpuscope: error: " + file.filename().string() + " (at byte ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(why), std::string::npos) << lines[0];
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  fs::path dir_;
};

// [SECTION] Partly recoverable ----------------------------------------------------------------

TEST_F(DamageCli, ReportStatesStorageDamageFirstAndApartFromRecordingDrops) {
  const fs::path whole = four_gpus();
  const std::uint64_t size = fs::file_size(whole) / 5;
  const fs::path part = cut(whole, size, "cut.gscope");
  const RunResult r = run({"report", "cut.gscope"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(first.rfind("INCOMPLETE file: truncated at byte " + thousands(size) + "; about ", 0), 0u) << first;
  EXPECT_NE(first.find(" % of the kernels survive ("), std::string::npos) << first;
  EXPECT_NE(first.find("have no data"), std::string::npos) << first;
  EXPECT_NE(r.out.find("The numbers below cover only what survived."), std::string::npos);
  EXPECT_NE(r.out.find("with data (4 in the trace)"), std::string::npos) << r.out.substr(0, 1200);
  // Rows lost in storage are not records lost while recording.
  EXPECT_EQ(r.out.find("while recording"), std::string::npos);
  EXPECT_EQ(r.out.find("dropped-records"), std::string::npos);
  EXPECT_EQ(r.out.find("4 GPUs"), std::string::npos);

  const RunResult j = run({"report", "cut.gscope", "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const json doc = json::parse(j.out);
  const json& q = doc.at("trace_quality");
  EXPECT_FALSE(q.at("complete").get<bool>());
  EXPECT_TRUE(q.at("truncated").get<bool>());
  EXPECT_GT(q.at("rows_lost").get<std::uint64_t>(), 0u);
  ASSERT_EQ(q.at("files").size(), 1u);
  const json& f = q["files"][0];
  EXPECT_EQ(f.at("headline").get<std::string>(), first);
  EXPECT_EQ(f.at("file_bytes").get<std::uint64_t>(), size);
  EXPECT_EQ(f.at("devices_declared"), json({0, 1, 2, 3}));
  EXPECT_LT(f.at("devices_with_data").size(), 4u);
  EXPECT_EQ(f.at("dropped_records").get<std::uint64_t>(), 0u);
  bool kernels = false;
  for (const json& t : f.at("rows_lost"))
    if (t.at("table") == "kernels") {
      kernels = true;
      EXPECT_EQ(t.at("count"), "exact");
      EXPECT_EQ(t.at("loaded").get<std::uint64_t>() + t.at("lost").get<std::uint64_t>(), 300'000u);
    }
  EXPECT_TRUE(kernels) << f.dump();

  // An intact file: complete, nothing said.
  const RunResult w = run({"report", "whole.gscope", "--json"});
  ASSERT_EQ(w.status, 0) << w.err;
  const json wq = json::parse(w.out).at("trace_quality");
  EXPECT_TRUE(wq.at("complete").get<bool>());
  EXPECT_EQ(wq["files"][0].at("headline"), "");
  EXPECT_EQ(run({"report", "whole.gscope"}).out.find("INCOMPLETE"), std::string::npos);
}

TEST_F(DamageCli, InfoExportAndDiffSayItToo) {
  const fs::path whole = four_gpus();
  const std::uint64_t size = fs::file_size(whole) / 5;
  cut(whole, size, "cut.gscope");
  const RunResult info = run({"info", "cut.gscope"});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(info.out.rfind("INCOMPLETE file: truncated at byte " + thousands(size), 0), 0u) << info.out;
  EXPECT_NE(info.out.find("  rows lost    "), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("  no data      GPU "), std::string::npos) << info.out;
  const RunResult ij = run({"info", "cut.gscope", "--json"});
  ASSERT_EQ(ij.status, 0) << ij.err;
  const json iq = json::parse(ij.out).at("trace_quality");
  EXPECT_TRUE(iq.at("truncated").get<bool>());
  EXPECT_EQ(iq.at("file_bytes").get<std::uint64_t>(), size);

  const RunResult e = run({"export", "cut.gscope", "-o", "cut.json"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.err.find("gpuscope: warning: cut.gscope: INCOMPLETE file: truncated at byte"), std::string::npos)
      << e.err;
  EXPECT_TRUE(fs::exists(dir_ / "cut.json"));

  const RunResult d = run({"diff", "whole.gscope", "cut.gscope"});
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_NE(d.out.find("INCOMPLETE file: truncated at byte " + thousands(size)), std::string::npos)
      << d.out.substr(0, 1000);
  // Before the numbers compared.
  EXPECT_LT(d.out.find("INCOMPLETE"),
            d.out.find("Step time") == std::string::npos ? d.out.size() : d.out.find("Step time"));
}

// [SECTION] Nothing recoverable ---------------------------------------------------------------

TEST_F(DamageCli, NothingRecoverableIsExitTwoForEveryCommand) {
  const fs::path whole = four_gpus();
  for (const std::uint64_t bytes : {std::uint64_t{60}, std::uint64_t{200}, std::uint64_t{3000}}) {
    SCOPED_TRACE("cut to " + std::to_string(bytes) + " bytes");
    const fs::path bad = cut(whole, bytes, "bad.gscope");
    expect_nothing_recovered(run({"report", "bad.gscope"}), bad, "nothing could be recovered: ");
    expect_nothing_recovered(run({"report", "bad.gscope", "--json", "-o", "r.json"}), bad,
                             "nothing could be recovered: ");
    expect_nothing_recovered(run({"export", "bad.gscope", "-o", "x.json"}), bad, "truncated");
    expect_nothing_recovered(run({"diff", "whole.gscope", "bad.gscope"}), bad, "nothing could be recovered: ");
    expect_nothing_recovered(run({"diff", "bad.gscope", "whole.gscope", "-o", "d.txt"}), bad, "at byte");
    expect_nothing_recovered(run({"info", "bad.gscope"}), bad, "nothing could be recovered: ");
    EXPECT_FALSE(fs::exists(dir_ / "r.json"));
    EXPECT_FALSE(fs::exists(dir_ / "x.json"));
    EXPECT_FALSE(fs::exists(dir_ / "d.txt"));
  }
}

// [SECTION] JSON cut short --------------------------------------------------------------------

TEST_F(DamageCli, JsonCutShortLoadsWhatWasCompleteOrFailsWithTwo) {
  const std::string src = slurp(testing::real_trace("hta-ns-resolution-v100.json.gz"));
  ASSERT_GT(src.size(), 1000u);
  { std::ofstream(dir_ / "half.json.gz", std::ios::binary) << src.substr(0, src.size() / 2); }
  const RunResult r = run({"report", "half.json.gz"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(first.rfind("INCOMPLETE file: truncated at byte " + thousands(src.size() / 2), 0), 0u) << first;
  EXPECT_NE(r.out.find("the gzip stream ends early, at byte " + std::to_string(src.size() / 2)), std::string::npos)
      << r.out.substr(0, 1500);

  // A plain JSON text cut inside its second event keeps the first.
  const std::string text =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, )"
      R"("args": {"device": 0, "stream": 7}}, {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 5, )";
  { std::ofstream(dir_ / "cut.json", std::ios::binary) << text; }
  const RunResult c = run({"report", "cut.json"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out.rfind("INCOMPLETE file: truncated at byte " + thousands(text.size()), 0), 0u) << c.out;
  EXPECT_NE(c.out.find("inside an event that starts at byte"), std::string::npos) << c.out.substr(0, 1500);

  // Cut before the first event ends: nothing usable remains.
  { std::ofstream(dir_ / "none.json", std::ios::binary) << text.substr(0, 60); }
  expect_nothing_recovered(run({"report", "none.json"}), dir_ / "none.json", "no event could be recovered");
  { std::ofstream(dir_ / "none.json.gz", std::ios::binary) << src.substr(0, 40); }
  const RunResult g = run({"export", "none.json.gz", "-o", "n.json"});
  EXPECT_EQ(g.status, 2) << g.err;
  EXPECT_NE(g.err.find("none.json.gz"), std::string::npos) << g.err;
  EXPECT_NE(g.err.find("truncated"), std::string::npos) << g.err;
  EXPECT_FALSE(fs::exists(dir_ / "n.json"));
}

}  // namespace
}  // namespace gpuscope
