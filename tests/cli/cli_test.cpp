// The gpuscope executable as a user meets it: exit codes, one-line errors,
// --help of every command, and no partial output file, ever.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/run.h"
#include "export/chrome_check.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using testing::run_gpuscope;
using testing::RunResult;
using testing::slurp;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-cli-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(const std::vector<std::string>& args) { return run_gpuscope(args, dir_); }

  // Exit 2, exactly one line on stderr in the house style, naming `what`.
  static void expect_one_line_error(const RunResult& r, const std::string& what) {
    EXPECT_EQ(r.status, 2) << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("gpuscope: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(what), std::string::npos) << lines[0];
  }

  std::set<std::string> files() const {
    std::set<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) names.insert(fs::relative(e.path(), dir_).string());
    return names;
  }

  std::string synth(const std::string& name, std::uint64_t kernels, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"synth", "-o", name, "--kernels", std::to_string(kernels)};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // standard output carries only what was asked for
    EXPECT_EQ(r.err.rfind("gpuscope: wrote " + name + ": synthetic trace", 0), 0u) << r.err;  // the status line
    return (dir_ / name).string();
  }

  fs::path dir_;
};

// [SECTION] Help, version, usage errors

TEST_F(Cli, EveryCommandHasHelp) {
  const RunResult top = run({"--help"});
  ASSERT_EQ(top.status, 0);
  EXPECT_TRUE(top.err.empty());
  // Every subcommand listed in the top-level help answers --help with its usage.
  std::vector<std::string> commands;
  const auto at = top.out.find("Subcommands:");
  ASSERT_NE(at, std::string::npos) << top.out;
  std::istringstream lines(top.out.substr(at));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word;
    if (words >> word) commands.push_back(word);
  }
  for (const char* required : {"info", "export", "synth"})
    EXPECT_NE(std::find(commands.begin(), commands.end(), required), commands.end()) << required;
  for (const std::string& c : commands) {
    const RunResult r = run({c, "--help"});
    EXPECT_EQ(r.status, 0) << c;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << c;
    EXPECT_TRUE(r.err.empty()) << c << ": " << r.err;
  }
  const RunResult v = run({"--version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("gpuscope ", 0), 0u) << v.out;
}

TEST_F(Cli, UsageErrorsAreOneLineWithExitTwo) {
  expect_one_line_error(run({}), "subcommand is required");
  expect_one_line_error(run({"frobnicate"}), "unknown command 'frobnicate'");
  expect_one_line_error(run({"info"}), "FILE is required");
  expect_one_line_error(run({"info", "a", "b"}), "not expected");
  expect_one_line_error(run({"info", "--bogus", "x"}), "--bogus");
  expect_one_line_error(run({"export", "x.gscope"}), "--output is required");
  expect_one_line_error(run({"synth", "-o", "x.gscope"}), "--kernels is required");
  expect_one_line_error(run({"synth", "-o", "x.gscope", "--kernels", "abc"}), "--kernels");
  expect_one_line_error(run({"synth", "-o", "x.gscope", "--kernels", "10", "--gpus", "0"}), "gpus must be 1..64");
  expect_one_line_error(run({"synth", "-o", "x.gscope", "--kernels", "10", "--preset", "fast"}), "--preset");
  expect_one_line_error(run({"synth", "-o", "x.gscope", "--kernels", "10", "--padding-share", "0.95"}),
                        "padding share");
  expect_one_line_error(run({"synth", "-o", "x.txt", "--kernels", "10"}), "x.txt: cannot tell the format");
  EXPECT_TRUE(files().empty()) << "nothing written by failed commands";
}

// [SECTION] synth, info, export end to end

TEST_F(Cli, SynthThenInfoSaysSyntheticAndCountsEverything) {
  const std::string file = synth("run.gscope", 4321, {"--gpus", "3", "--seed", "9"});
  const RunResult text = run({"info", "run.gscope"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("synthetic"), std::string::npos);
  EXPECT_NE(text.out.find("4,321"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("nothing was lost"), std::string::npos);

  const RunResult js = run({"info", "--json", "run.gscope"});
  ASSERT_EQ(js.status, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j.at("schema"), "gpuscope.info/1");
  EXPECT_EQ(j.at("format"), "gscope");
  EXPECT_EQ(j.at("source"), "synthetic");
  EXPECT_EQ(j.at("source_kind"), "synthetic");
  EXPECT_EQ(j.at("tables").at("kernels"), 4321);
  EXPECT_EQ(j.at("devices").size(), 3u);
  EXPECT_EQ(j.at("properties").at("synthetic.seed"), "9");
  EXPECT_EQ(j.at("command_line"), "gpuscope synth -o run.gscope --kernels 4321 --gpus 3 --seed 9");
  EXPECT_TRUE(j.at("gscope").at("complete").get<bool>());
  std::uint64_t per_track = 0;
  for (const auto& t : j.at("tracks")) per_track += t.at("rows").value("kernels", 0u);
  EXPECT_EQ(per_track, 4321u);
}

TEST_F(Cli, SynthPresetsAndKnobsReachTheTrace) {
  synth("report.gscope", 3000, {"--preset", "report", "--seed", "2"});
  auto j = nlohmann::json::parse(run({"info", "--json", "report.gscope"}).out);
  EXPECT_EQ(j.at("properties").at("synthetic.padding_share"), "0.214");
  EXPECT_EQ(j.at("properties").at("synthetic.workload_shape"), "true");
  EXPECT_EQ(j.at("properties").at("synthetic.pageable_input"), "true");
  EXPECT_EQ(j.at("properties").at("synthetic.overlap_communication"), "false");
  synth("knobs.gscope", 3000,
        {"--preset", "report", "--padding-share", "0.1", "--straggler", "1", "--input-wait-us", "250", "--loop-host-us",
         "40"});
  j = nlohmann::json::parse(run({"info", "--json", "knobs.gscope"}).out);
  EXPECT_EQ(j.at("properties").at("synthetic.padding_share"), "0.1");
  EXPECT_EQ(j.at("properties").at("synthetic.broadcast_share"), "0.2");  // the preset's, not overridden
  EXPECT_EQ(j.at("properties").at("synthetic.straggler_gpu"), "1");
  EXPECT_EQ(j.at("properties").at("synthetic.straggler_slowdown"), "1.3");
  EXPECT_EQ(j.at("properties").at("synthetic.input_wait_ns"), "250000");
  EXPECT_EQ(j.at("properties").at("synthetic.loop_host_ns"), "40000");
  // The default network's knobs on its own shape.
  synth("clean.gscope", 3000,
        {"--streams", "3", "--kernels-per-step", "300", "--no-sync", "--pageable-input", "--loop-host-us", "5"});
  j = nlohmann::json::parse(run({"info", "--json", "clean.gscope"}).out);
  EXPECT_EQ(j.at("properties").at("synthetic.compute_streams"), "3");
  EXPECT_EQ(j.at("properties").at("synthetic.kernels_per_step"), "300");
  EXPECT_EQ(j.at("properties").at("synthetic.pageable_input"), "true");
  EXPECT_EQ(j.at("properties").at("synthetic.prefetch_input"), "false");
  EXPECT_EQ(j.at("tables").at("syncs"), 0);
  synth("tuned.gscope", 3000, {"--preset", "tuned"});
  j = nlohmann::json::parse(run({"info", "--json", "tuned.gscope"}).out);
  EXPECT_EQ(j.at("properties").at("synthetic.workload_shape"), "true");
  EXPECT_EQ(j.at("properties").at("synthetic.padding_share"), "0");
  EXPECT_EQ(j.at("properties").at("synthetic.overlap_weight_update"), "true");
  // The workload's network has its own layers, buckets and streams.
  for (const char* flag : {"--streams", "--layers", "--kernels-per-step", "--buckets"})
    expect_one_line_error(run({"synth", "-o", "x.gscope", "--kernels", "10", "--preset", "report", flag, "3"}), flag);
  expect_one_line_error(run({"synth", "-o", "x.gscope", "--kernels", "10", "--preset", "tuned", "--ops"}), "--ops");
  expect_one_line_error(run({"synth", "-o", "job", "--kernels", "10", "--ranks", "2", "--pageable-input"}),
                        "--pageable-input");
}

TEST_F(Cli, ExportWritesCheckedChromeJsonPlainAndGzip) {
  synth("run.gscope", 3000);
  const RunResult plain = run({"export", "run.gscope", "-o", "run.json"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.err.find("gpuscope: wrote run.json"), std::string::npos) << plain.err;
  EXPECT_TRUE(plain.out.empty()) << plain.out;
  const std::string text = slurp(dir_ / "run.json");
  const auto p = testing::check_chrome_json(text);
  EXPECT_EQ(p.doc.at("gpuscope").at("source"), "synthetic");
  std::size_t kernels = 0;
  for (const auto& e : p.events) kernels += e.value("cat", "") == "kernel";
  EXPECT_EQ(kernels, 3000u);

  const RunResult gz = run({"export", "run.gscope", "-o", "run.json.gz", "--gzip-level", "6"});
  ASSERT_EQ(gz.status, 0) << gz.err;
  gzFile f = gzopen((dir_ / "run.json.gz").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string unzipped;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) unzipped.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  EXPECT_EQ(unzipped, text);

  const RunResult direct = run({"synth", "-o", "direct.json", "--kernels", "500"});
  ASSERT_EQ(direct.status, 0) << direct.err;
  testing::check_chrome_json(slurp(dir_ / "direct.json"));
  EXPECT_EQ(files(), (std::set<std::string>{"run.gscope", "run.json", "run.json.gz", "direct.json"}));
}

TEST_F(Cli, ExportWritesSqliteByNameOrFlag) {
  synth("run.gscope", 2000);
  const RunResult r = run({"export", "run.gscope", "-o", "run.sqlite"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("SQLite"), std::string::npos) << r.err;
  const std::string head = slurp(dir_ / "run.sqlite").substr(0, 16);
  EXPECT_EQ(head, std::string("SQLite format 3\0", 16));
  const RunResult flag = run({"export", "run.gscope", "-o", "run.out", "--format", "sqlite"});
  ASSERT_EQ(flag.status, 0) << flag.err;
  EXPECT_EQ(slurp(dir_ / "run.out").substr(0, 15), "SQLite format 3");
  expect_one_line_error(run({"export", "run.gscope", "-o", "x.json", "--format", "perfetto"}), "--format");
  EXPECT_EQ(files(), (std::set<std::string>{"run.gscope", "run.sqlite", "run.out"}));
}

// [SECTION] Bad input, bad output: one line, exit 2, nothing written

TEST_F(Cli, BadInputsNameTheFileAndWriteNothing) {
  std::ofstream(dir_ / "garbage.bin") << "this is not a trace\x01\x02";
  std::ofstream(dir_ / "empty.gscope");
  {
    std::ofstream bad(dir_ / "bad.gscope", std::ios::binary);
    bad << "\x89GSCOPE\n" << std::string(40, '\xff');  // right magic, corrupt header
  }
  fs::create_directories(dir_ / "a-directory");
  const std::set<std::string> before = files();
  for (const std::string input : {"garbage.bin", "empty.gscope", "bad.gscope", "a-directory", "missing.gscope"}) {
    SCOPED_TRACE(input);
    // "<file>: <problem>" or "<file> (at byte N): <problem>"
    for (const RunResult& r : {run({"info", input}), run({"export", input, "-o", "out.json"}),
                               run({"export", input, "-o", "out.json.gz"})}) {
      expect_one_line_error(r, input);
      EXPECT_EQ(r.err.rfind("gpuscope: error: " + input, 0), 0u) << r.err;
    }
  }
  EXPECT_EQ(files(), before) << "no output, no temporary file";
  EXPECT_NE(run({"info", "empty.gscope"}).err.find("empty file"), std::string::npos);
}

TEST_F(Cli, UnwritableOutputsNameTheFileAndLeaveNothing) {
  synth("run.gscope", 1000);
  std::ofstream(dir_ / "plain-file") << "x";
  const std::set<std::string> before = files();
  expect_one_line_error(run({"export", "run.gscope", "-o", "no-such-dir/out.json"}),
                        "no-such-dir/out.json: cannot create");
  expect_one_line_error(run({"export", "run.gscope", "-o", "plain-file/out.json.gz"}), "plain-file/out.json.gz:");
  expect_one_line_error(run({"synth", "-o", "no-such-dir/s.gscope", "--kernels", "100"}), "no-such-dir/s.gscope");
  expect_one_line_error(run({"synth", "-o", "plain-file/s.json", "--kernels", "100"}), "plain-file/s.json");
  expect_one_line_error(run({"export", "run.gscope", "-o", "out.csv"}), "out.csv: cannot tell the format");
  expect_one_line_error(run({"export", "run.gscope", "-o", "no-such-dir/out.sqlite"}), "no-such-dir/out.sqlite:");
  EXPECT_EQ(files(), before);
}

TEST_F(Cli, ExportOverAnExistingFileReplacesItWhole) {
  synth("run.gscope", 1000);
  std::ofstream(dir_ / "out.json") << "old contents";
  ASSERT_EQ(run({"export", "run.gscope", "-o", "out.json"}).status, 0);
  testing::check_chrome_json(slurp(dir_ / "out.json"));
  // A failed export leaves the old file as it was.
  std::ofstream(dir_ / "out.json") << "old contents";
  expect_one_line_error(run({"export", "missing.gscope", "-o", "out.json"}), "missing.gscope");
  EXPECT_EQ(slurp(dir_ / "out.json"), "old contents");
}

// What the op ranges could not give: shapes that do not parse, ops that
// overlap without nesting, GPU ops without a launching op (a correlation id
// no launch call has, none at all, a launch outside every op), in text and JSON.
TEST_F(Cli, InfoCountsWhatTheOpRangesCouldNotGive) {
  std::ofstream(dir_ / "ops.json") << R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 100,
   "args": {"Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 200, "dur": 100,
   "args": {"Input Dims": [[64, "x"]]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::a", "pid": 1, "tid": 1, "ts": 400, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::b", "pid": 1, "tid": 1, "ts": 450, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
   "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 600, "dur": 5,
   "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 20, "dur": 10,
   "args": {"device": 0, "stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 40, "dur": 10,
   "args": {"device": 0, "stream": 7, "correlation": 77}},
  {"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 7, "ts": 60, "dur": 10,
   "args": {"device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "k4", "pid": 0, "tid": 7, "ts": 620, "dur": 10,
   "args": {"device": 0, "stream": 7, "correlation": 2}}
]})";
  const RunResult text = run({"info", "ops.json"});
  ASSERT_EQ(text.status, 0) << text.err;
  // Each label's line gives the count after it.
  auto after = [&](const std::string& label) {
    const std::size_t at = text.out.find("  " + label + " ");
    if (at == std::string::npos) return std::string("(no line: " + label + ")");
    std::size_t from = text.out.find_first_not_of(' ', at + 2 + label.size());
    return text.out.substr(from, text.out.find('\n', from) - from);
  };
  EXPECT_EQ(after("op calls"), "4") << text.out;
  EXPECT_EQ(after("with a launching op"), "1 of 4 GPU ops");
  EXPECT_EQ(after("no correlation id"), "1");
  EXPECT_EQ(after("unmatched correlation"), "1 (no launch call has it)");
  EXPECT_EQ(after("launched outside ops"), "1");
  EXPECT_EQ(after("calls with shapes"), "2");
  EXPECT_EQ(after("unreadable shapes"), "1 (no FLOPs or bytes given for them)");
  EXPECT_EQ(after("overlapping ops"), "1 (ranges overlapping another without nesting)");

  const RunResult js = run({"info", "--json", "ops.json"});
  ASSERT_EQ(js.status, 0) << js.err;
  const auto ops = nlohmann::json::parse(js.out).at("ops");
  EXPECT_EQ(ops.at("op_calls"), 4);
  EXPECT_EQ(ops.at("gpu_ops"), 4);
  EXPECT_EQ(ops.at("attributed"), 1);
  EXPECT_EQ(ops.at("unattributed"), 3);
  EXPECT_EQ(ops.at("no_correlation"), 1);
  EXPECT_EQ(ops.at("unmatched_correlation"), 1);
  EXPECT_EQ(ops.at("with_shapes"), 2);
  EXPECT_EQ(ops.at("malformed_shapes"), 1);
  EXPECT_EQ(ops.at("overlapping"), 1);
  EXPECT_EQ(ops.at("shapes_recorded"), true);
}

// [SECTION] Real traces (Chrome JSON through open_trace)

TEST_F(Cli, ARealTraceOpensInInfoAndExport) {
  const std::string trace = testing::real_trace("hta-alexnet.json.gz");
  const RunResult info = run({"info", trace});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("imported"), std::string::npos);
  const RunResult ex = run({"export", trace, "-o", "alexnet.json"});
  ASSERT_EQ(ex.status, 0) << ex.err;
  testing::check_chrome_json(slurp(dir_ / "alexnet.json"));
}

}  // namespace
}  // namespace gpuscope
