// gpuscope-view as a user runs it: headless under Xvfb with Mesa's software
// OpenGL (xvfb-run), writing OUT.png and OUT.json. The tests assert on the
// JSON (what was drawn), cross-checked against the same trace opened here
// in-process, and on exit statuses and error messages — never on pixels.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/graph/savings.h"
#include "analysis/window_stats.h"
#include "export/report_text.h"
#include "import/chrome_json.h"
#include "import/open_trace.h"
#include "import/synthetic.h"
#include "store/gscope.h"
#include "support/real_traces.h"
#include "trace/damage.h"
#include "trace/trace.h"
#include "viewer/match_set.h"
#include "viewer/op_table.h"
#include "viewer/text.h"
#include "words/damage_text.h"
#include "words/format.h"

namespace gpuscope::viewer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t kMaxVertices = 300'000;

struct Result {
  int status = -1;
  std::string err;
};

class Headless : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(GPUSCOPE_XVFB_RUN).empty()) GTEST_SKIP() << "xvfb-run is not installed (apt-get install xvfb)";
    dir_ = fs::temp_directory_path() / cat("gpuscope-view-test-", std::to_string(::getpid()), "-",
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  static std::string quote(const std::string& s) {
    std::string q(1, '\'');
    for (char c : s) {
      if (c == '\'')
        q.append("'\\''");
      else
        q.push_back(c);
    }
    q.push_back('\'');
    return q;
  }
  // Runs `prefix program args…` with stderr captured; xvfb = run under xvfb-run.
  Result run(const std::string& program, const std::vector<std::string>& args, bool xvfb = true,
             const std::string& env_prefix = "") {
    std::string cmd = env_prefix;
    // The X authority file in the test's own folder: xvfb-run then makes no
    // temporary folder of its own, whose removal failed now and then when
    // several ran at once (xvfb-run's exit status 5 instead of the viewer's).
    if (xvfb)
      cmd += std::string(GPUSCOPE_XVFB_RUN) + " -a -f " + quote((dir_ / "Xauthority").string()) +
             " -s '-screen 0 1280x800x24' ";
    cmd += quote(program);
    for (const std::string& a : args) {
      cmd += ' ';
      cmd += quote(a);
    }
    const fs::path err = dir_ / "stderr.txt";
    cmd += " >/dev/null 2>";
    cmd += quote(err.string());
    const int raw = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    std::ifstream f(err);
    std::stringstream ss;
    ss << f.rdbuf();
    r.err = ss.str();
    return r;
  }
  Result view(const std::vector<std::string>& args) { return run(GPUSCOPE_VIEW_BIN, args); }

  json read_json(const fs::path& p) {
    std::ifstream f(p);
    EXPECT_TRUE(f.good()) << p;
    return json::parse(f);
  }
  // Checks the PNG signature and the IHDR size.
  static void expect_png(const fs::path& p, int w, int h) {
    std::ifstream f(p, std::ios::binary);
    ASSERT_TRUE(f.good()) << p;
    unsigned char b[24] = {};
    f.read(reinterpret_cast<char*>(b), 24);
    ASSERT_EQ(std::string(reinterpret_cast<char*>(b + 1), 3), "PNG");
    auto be32 = [&](int o) { return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]; };
    EXPECT_EQ(be32(16), w);
    EXPECT_EQ(be32(20), h);
  }
  static bool has(const json& arr, const std::string& s) {
    for (const auto& x : arr)
      if (x == s) return true;
    return false;
  }
  static bool no_temporaries(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().find(".tmp.") != std::string::npos) return false;
    return true;
  }
  // Events on the GPU tracks the JSON says were visible, overlapping its
  // visible range: GPU ops and GPU-side annotations (Kineto's gpu_user_annotation).
  static std::uint64_t visible_gpu_events(const Trace& t, const json& j) {
    const TimeNs a = j["visible_range"]["start_ns"], b = j["visible_range"]["end_ns"];
    std::uint64_t n = 0;
    for (const auto& tr : j["tracks"]) {
      if (!tr["visible"].get<bool>()) continue;
      const TrackId id = tr["track"];
      if (t.tracks()[id].kind != TrackKind::gpu) continue;
      for (TableId table : {TableId::kernels, TableId::memcpys, TableId::memsets, TableId::ranges})
        n += t.rows_overlapping(table, id, a, b).size();
    }
    return n;
  }
  static std::uint64_t sum_over_gpu_tracks(const Trace& t, const json& j, const char* key) {
    std::uint64_t n = 0;
    for (const auto& tr : j["tracks"])
      if (tr["visible"].get<bool>() && t.tracks()[tr["track"].get<TrackId>()].kind == TrackKind::gpu)
        n += tr[key].get<std::uint64_t>();
    return n;
  }

  fs::path dir_;
};

// [SECTION] Real traces --------------------------------------------------------------------

TEST_F(Headless, EveryRealTraceOpensInTheTimeline) {
  for (const std::string& name : testing::real_trace_files()) {
    const fs::path file = testing::real_trace(name);
    SCOPED_TRACE(file.filename().string());
    const fs::path png = dir_ / (file.stem().string() + ".png");
    const Result r = view({file.string(), "--screenshot", png.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    expect_png(png, 1280, 800);
    const json j = read_json(dir_ / (file.stem().string() + ".json"));
    const Trace t = import_chrome_json(file.string());
    EXPECT_EQ(j["source"], "imported");
    EXPECT_TRUE(j["error"].is_null());
    EXPECT_EQ(j["trace"]["kernels"], t.kernels().size());
    EXPECT_EQ(j["trace"]["tracks"], t.tracks().size());
    EXPECT_TRUE(has(j["panels"], "timeline"));
    EXPECT_FALSE(j["tracks"].empty());
    EXPECT_GT(j["vertices"].get<std::uint64_t>(), 0u);
    EXPECT_LE(j["vertices"].get<std::uint64_t>(), kMaxVertices);
    // Every GPU event in view is drawn alone or counted inside a folded block.
    EXPECT_EQ(sum_over_gpu_tracks(t, j, "drawn") + sum_over_gpu_tracks(t, j, "merged_events"),
              visible_gpu_events(t, j));
    if (t.kernels().size() > 0) {
      EXPECT_GT(j["drawn_items"].get<std::uint64_t>() + j["merged_blocks"].get<std::uint64_t>(), 0u);
    }
    EXPECT_EQ(j["analysis"], "done");
  }
  EXPECT_TRUE(no_temporaries(dir_));
}

// PyTorch's allocator events drawn as lanes under the GPU: the JSON says
// which lanes, their peak (the trace's largest "Total Allocated" / "Total
// Reserved") and that the peak is marked with the whole trace in view.
TEST_F(Headless, MemoryLanesShowThePeaksOfTheTrace) {
  const std::string file = testing::real_trace("tracelens-bert-small-h100.json.gz");
  const fs::path png = dir_ / "bert.png";
  const Result r = view({file, "--screenshot", png.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "bert.json");
  std::map<std::string, json> lanes;
  for (const auto& l : j["counter_lanes"])
    if (l["device"] == 0) lanes[l["series"].get<std::string>()] = l;
  ASSERT_TRUE(lanes.count("memory.allocated")) << j["counter_lanes"].dump();
  ASSERT_TRUE(lanes.count("memory.reserved"));
  EXPECT_EQ(lanes["memory.allocated"]["peak"].get<double>(), 101305344.0);
  EXPECT_EQ(lanes["memory.reserved"]["peak"].get<double>(), 121634816.0);
  EXPECT_EQ(lanes["memory.allocated"]["peak_text"], "peak 96.6 MiB");
  EXPECT_TRUE(lanes["memory.allocated"]["visible"].get<bool>());
  EXPECT_TRUE(lanes["memory.allocated"]["peak_marked"].get<bool>());
  EXPECT_GT(lanes["memory.allocated"]["columns"].get<std::uint64_t>(), 0u);
}

TEST_F(Headless, HotspotsFindingsAndSummaryShowTheAnalysis) {
  const std::string file = testing::real_trace("kineto-resnet50-v100-workers0.json.gz");
  const Trace t = import_chrome_json(file);
  // The report's findings, which the viewer shows: after the replay.
  const JobInput in{&t, "trace"};
  Profile p = analyze_job(std::span<const JobInput>(&in, 1));
  graph::simulate_findings(std::span<const JobInput>(&in, 1), &p);
  for (const char* v : {"hotspots", "findings", "summary"}) {
    SCOPED_TRACE(v);
    const fs::path png = dir_ / cat(v, ".png");
    const Result r = view({file, "--screenshot", png.string(), "--view", v, "--size", "1400x900"});
    ASSERT_EQ(r.status, 0) << r.err;
    expect_png(png, 1400, 900);
    const json j = read_json(dir_ / cat(v, ".json"));
    EXPECT_EQ(j["view"], v);
    EXPECT_TRUE(has(j["panels"], v));
    EXPECT_LE(j["vertices"].get<std::uint64_t>(), kMaxVertices);
    if (std::string(v) == "hotspots") {
      EXPECT_EQ(j["rows"]["hotspots"], p.hotspots.size());
      EXPECT_EQ(j["rows"]["categories"], p.categories.size());
    } else if (std::string(v) == "findings") {
      EXPECT_EQ(j["rows"]["findings"], p.findings.size());
      ASSERT_EQ(j["findings"].size(), p.findings.size());  // in the report's order: FindingsAreTheReports
      EXPECT_TRUE(has(j["findings"], "input-bound"));      // the workers=0 run waits for its DataLoader
    } else {
      EXPECT_EQ(j["rows"]["summary_devices"], p.devices.size());
    }
  }
}

// One Profile: on every real trace the Findings tab shows what `gpuscope
// report --json` says — the same findings in the same order, the same
// savings from the same source (simulated where the report simulates), the
// same answers to "What would help?", and the critical path.
TEST_F(Headless, FindingsAreTheReportsOnEveryRealTrace) {
  for (const std::string& name : testing::real_trace_files()) {
    SCOPED_TRACE(name);
    const std::string file = testing::real_trace(name);
    const fs::path out = dir_ / "report.json";
    ASSERT_EQ(run(GPUSCOPE_CLI_BIN, {"report", file, "--json", "-o", out.string()}, /*xvfb=*/false).status, 0);
    const json report = read_json(out);
    const Result r =
        view({file, "--screenshot", (dir_ / "f.png").string(), "--view", "findings", "--size", "1400x900"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = read_json(dir_ / "f.json");
    EXPECT_EQ(j["analysis"], "done");
    const json& savings = j["savings"];
    EXPECT_EQ(savings["state"], "simulated");
    const json& rows = savings["rows"];
    ASSERT_EQ(rows.size(), report["findings"].size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const json& want = report["findings"][i];
      EXPECT_EQ(rows[i]["id"], want["id"]) << i;
      EXPECT_EQ(rows[i]["title"], want["title"]) << i;
      EXPECT_EQ(rows[i]["saving_ns"], want["saving_ns"]) << want["id"];
      EXPECT_EQ(rows[i]["saving_source"], want["saving_source"]) << want["id"];
      if (want["saving_source"] == "simulated" && want["saving_note"] == "") {
        EXPECT_EQ(rows[i]["saving"], cat("saves ", format::duration(want["saving_ns"].get<TimeNs>()), " (simulated)"));
      }
    }
    const json& helps = savings["helps"];
    ASSERT_EQ(helps.size(), report["helps"].size());
    for (std::size_t i = 0; i < helps.size(); ++i) {
      EXPECT_EQ(helps[i]["id"], report["helps"][i]["id"]);
      std::string verdict = report["helps"][i]["verdict"];
      verdict = verdict == "yes" ? "YES" : verdict == "not_applicable" ? "n/a" : verdict;
      EXPECT_EQ(helps[i]["verdict"], verdict) << helps[i]["id"];
      EXPECT_TRUE(helps[i]["because"].get<std::string>().starts_with(report["helps"][i]["reason"].get<std::string>()));
    }
    // The critical path by kind: every kind with time, as the report's.
    const json& path = report["critical_path"];
    const std::pair<const char*, const char*> kinds[] = {
        {"GPU compute", "gpu_compute_ns"}, {"communication", "communication_ns"}, {"copies", "copy_ns"},
        {"CPU launch", "cpu_launch_ns"},   {"CPU other", "cpu_other_ns"},         {"input wait", "input_wait_ns"},
        {"sync wait", "sync_wait_ns"},     {"gaps before GPU ops", "gpu_gap_ns"}};
    std::map<std::string, std::string> drawn;
    for (const json& row : savings["critical_path"]) drawn[row["label"]] = row["time"];
    for (const auto& [label, key] : kinds) {
      const TimeNs ns = path[key];
      if (ns > 0) {
        EXPECT_EQ(drawn[label], format::duration(ns)) << label;
      }
    }
  }
}

TEST_F(Headless, SelectZoomsToTheKernelAndDrawsItsLaunch) {
  const std::string file = testing::real_trace("hta-alexnet.json.gz");
  const fs::path png = dir_ / "select.png";
  const Result r = view({file, "--screenshot", png.string(), "--select", "max_pool_forward_nchw"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "select.json");
  ASSERT_TRUE(j["selection"].is_object());
  EXPECT_EQ(j["selection"]["table"], "kernels");
  EXPECT_NE(j["selection"]["name"].get<std::string>().find("max_pool_forward_nchw"), std::string::npos);
  EXPECT_EQ(j["selection"]["category"], "pooling");
  EXPECT_EQ(j["selection"]["launching_api"], "cudaLaunchKernel");
  EXPECT_TRUE(j["flow_arrow"].get<bool>());
  EXPECT_TRUE(has(j["panels"], "launch"));
  EXPECT_TRUE(has(j["panels"], "nvtx_stack"));
  EXPECT_LE(j["visible_range"]["start_ns"].get<TimeNs>(), j["selection"]["start_ns"].get<TimeNs>());
  EXPECT_GE(j["visible_range"]["end_ns"].get<TimeNs>(), j["selection"]["end_ns"].get<TimeNs>());
  // The first instance in time.
  const Trace t = import_chrome_json(file);
  for (RowIndex k = 0; k < t.kernels().size(); ++k) {
    if (t.str(t.kernels().name[k]).find("max_pool_forward_nchw") != std::string_view::npos) {
      EXPECT_GE(t.kernels().start[k], j["selection"]["start_ns"].get<TimeNs>());
    }
  }
  // The Details panel shows the kernel's launch configuration, from the trace.
  const RowIndex k = j["selection"]["row"];
  std::map<std::string, std::string> details;
  for (const auto& kv : j["selection"]["details"]) details[kv[0].get<std::string>()] = kv[1].get<std::string>();
  EXPECT_EQ(details["grid"],
            cat("(", std::to_string(t.kernels().grid_x[k]), ", ", std::to_string(t.kernels().grid_y[k]), ", ",
                std::to_string(t.kernels().grid_z[k]), ")"));
  EXPECT_EQ(details["registers / thread"], std::to_string(t.kernels().registers[k]));
  EXPECT_TRUE(details.contains("shared memory"));
  // 256 threads, 26 registers, no shared memory on cc 8.0 (the trace's limits; no block slots in it): 26 × 32 = 832
  // → 1024 registers per warp, 16 warps per bank, 64 warps: 8 blocks by registers and by warp slots.
  ASSERT_EQ(t.kernels().registers[k], 26);
  EXPECT_EQ(details["theoretical occupancy"], "100.0% (8 blocks, 64 warps per SM; limits: trace + table cc 8.0)");
  EXPECT_EQ(details["occupancy limited by"], "block size");
  EXPECT_TRUE(details.contains("stream"));
  EXPECT_TRUE(details.contains("device"));
  EXPECT_EQ(details["launched by"], "cudaLaunchKernel");
  // An unknown kernel: exit 2, a one-line reason, and the pictures still written.
  const Result bad = view({file, "--screenshot", (dir_ / "none.png").string(), "--select", "no_such_kernel"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("no kernel named 'no_such_kernel'"), std::string::npos) << bad.err;
}

TEST_F(Headless, ZoomAndFindAreHonoured) {
  const std::string file = testing::real_trace("kineto-resnet50-v100-workers4.json.gz");
  const Result r = view({file, "--screenshot", (dir_ / "z.png").string(), "--zoom", "100ms:250ms", "--find", "sgemm"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "z.json");
  EXPECT_EQ(j["visible_range"]["start_offset_ns"], 100'000'000);
  EXPECT_EQ(j["visible_range"]["end_offset_ns"], 250'000'000);
  const Trace t = import_chrome_json(file);
  const MatchSet m = MatchSet::by_names(t, match_names(t.strings(), "sgemm", false));
  EXPECT_GT(m.size(), 0u);
  EXPECT_EQ(j["highlight"]["matches"], m.size());
  // The matches in view marked: outlined one by one, or (over 64 on a row) a tick each and the row's count.
  EXPECT_GT(j["matches_in_view"].get<std::uint64_t>(), 0u);
  EXPECT_GT(j["match_markers"].get<std::uint64_t>() + j["match_ticks"].get<std::uint64_t>(), 0u);
}

// Times as the viewer writes them, with decimals ("1.5 ms"), and --select-op
// with --zoom: the op's first kernel in view is selected and the view stays.
TEST_F(Headless, ZoomTakesDecimalsAndSelectOpKeepsTheZoom) {
  const std::string file = testing::real_trace("tracelens-bert-small-h100.json.gz");
  const Trace t = import_chrome_json(file);
  const TimeNs span = t.end_time() - t.begin_time();
  const TimeNs a = span / 2, b = span / 2 + span / 8;
  const std::string zoom =
      format::fixed(static_cast<double>(a) / 1e6, 3) + "ms:" + format::fixed(static_cast<double>(b) / 1e6, 3) + "ms";
  ASSERT_NE(zoom.find('.'), std::string::npos) << zoom;
  const Profile p = analyze(t);
  const OpRow* addmm = nullptr;
  for (const OpRow& o : p.op_names)
    if (o.name == "aten::addmm") addmm = &o;
  ASSERT_NE(addmm, nullptr);
  const MatchSet kernels = op_kernels(t, *addmm, false);
  // Decimals, then the same range in ns: the view is where it was asked to be, and the op's
  // first kernel in it is selected.
  for (const std::string& z : {zoom, std::to_string(a) + ":" + std::to_string(b)}) {
    SCOPED_TRACE(z);
    const Result r = view({file, "--screenshot", (dir_ / "z.png").string(), "--zoom", z, "--select-op", "aten::addmm"});
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = read_json(dir_ / "z.json");
    const TimeNs va = j["visible_range"]["start_offset_ns"], vb = j["visible_range"]["end_offset_ns"];
    EXPECT_NEAR(static_cast<double>(va), static_cast<double>(a), 1'000);
    EXPECT_NEAR(static_cast<double>(vb), static_cast<double>(b), 1'000);
    EXPECT_EQ(j["highlight"]["label"], "op: aten::addmm");
    const std::optional<MatchRef> first = kernels.first_from(t, t.begin_time() + va);
    ASSERT_TRUE(first.has_value());
    ASSERT_LE(t.kernels().start[first->row], t.begin_time() + vb) << "an addmm kernel in view";
    ASSERT_TRUE(j["selection"].is_object());
    EXPECT_EQ(j["selection"]["row"], first->row);
  }
}

// --range: the range's statistics in the frame JSON, which are window_stats()
// over it — and over the whole trace, the report's numbers.
TEST_F(Headless, RangeWritesItsStatisticsIntoTheFrameJson) {
  const std::string file = testing::real_trace("kineto-resnet50-v100-workers0.json.gz");
  const Trace t = import_chrome_json(file);
  const Result r = view({file, "--screenshot", (dir_ / "r.png").string(), "--range", "100ms:150.5ms"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "r.json");
  EXPECT_EQ(j["view"], "range");
  EXPECT_TRUE(has(j["panels"], "range"));
  const json& range = j["range"];
  ASSERT_TRUE(range.is_object());
  EXPECT_EQ(range["start_offset_ns"], 100'000'000);
  EXPECT_EQ(range["end_offset_ns"], 150'500'000);
  EXPECT_EQ(range["length"], "50.5 ms");
  EXPECT_EQ(range["status"], "done");
  const WindowStats want = window_stats(t, {t.begin_time() + 100'000'000, t.begin_time() + 150'500'000});
  const json& stats = range["stats"];
  ASSERT_TRUE(stats.is_object());
  EXPECT_EQ(stats["kernels"], want.kernels);
  EXPECT_EQ(stats["kernel_time_ns"], want.kernel_time_ns);
  ASSERT_EQ(stats["devices"].size(), want.devices.size());
  EXPECT_EQ(stats["devices"][0]["busy_ns"], want.devices[0].busy_ns);
  EXPECT_EQ(stats["devices"][0]["kernel_concurrency"], want.devices[0].kernel_concurrency);
  ASSERT_FALSE(stats["kernel_names"].empty());
  EXPECT_EQ(stats["kernel_names"][0]["name"], want.kernel_names[0].name);
  EXPECT_EQ(range["device_rows"][0][1], format::duration(want.devices[0].busy_ns));

  // The whole trace as the range: the report's totals.
  const Profile p = analyze(t);
  const std::string whole = "0:" + std::to_string(t.end_time() - t.begin_time() + 1);
  ASSERT_EQ(view({file, "--screenshot", (dir_ / "w.png").string(), "--range", whole}).status, 0);
  const json w = read_json(dir_ / "w.json");
  EXPECT_EQ(w["range"]["stats"]["kernel_time_ns"], p.kernel_time_ns);
  EXPECT_EQ(w["range"]["stats"]["devices"][0]["busy_ns"], p.devices[0].busy_ns);
  EXPECT_EQ(w["range"]["stats"]["kernel_names"][0]["total_ns"], p.hotspots[0].stats.total);

  EXPECT_EQ(view({file, "--screenshot", (dir_ / "b.png").string(), "--range", "5ms:1ms"}).status, 2);
}

TEST_F(Headless, CompareTwoTraces) {
  const std::string a = testing::real_trace("kineto-resnet50-v100-workers0.json.gz");
  const std::string b = testing::real_trace("kineto-resnet50-v100-workers4.json.gz");
  const Result r = view({a, b, "--screenshot", (dir_ / "c.png").string(), "--view", "compare"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "c.json");
  EXPECT_EQ(j["view"], "compare");
  EXPECT_EQ(j["compare_file"], b);
  EXPECT_GT(j["rows"]["compare"].get<std::uint64_t>(), 0u);
  // B analysed, its tracks under A's, moved so its first step starts where A's does.
  const json& c = j["compare"];
  EXPECT_EQ(c["file"], b);
  EXPECT_EQ(c["analysis"], "done");
  EXPECT_TRUE(c["timeline"].get<bool>());
  EXPECT_EQ(c["align"], "aligned on the first step");
  EXPECT_EQ(c["table"], "categories");
  EXPECT_EQ(c["rows"].size(), j["rows"]["compare"].get<std::size_t>());
  std::size_t a_tracks = 0, b_tracks = 0;
  for (const json& t : j["tracks"]) (t["trace"] == "B" ? b_tracks : a_tracks) += 1;
  EXPECT_GT(a_tracks, 0u);
  EXPECT_GT(b_tracks, 0u);
}

TEST_F(Headless, OpensAGscopeFile) {
  SyntheticOptions so;
  so.kernels = 20'000;
  so.gpus = 2;
  const Trace t = make_synthetic_trace(so);
  const fs::path file = dir_ / "synthetic.gscope";
  write_gscope(t, file.string());
  const Result r = view({file.string(), "--screenshot", (dir_ / "g.png").string(), "--view", "summary"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "g.json");
  EXPECT_EQ(j["source"], "synthetic");
  EXPECT_EQ(j["trace"]["kernels"], t.kernels().size());
  EXPECT_EQ(j["trace"]["devices"], 2);
  EXPECT_EQ(j["rows"]["summary_devices"], 2);
  EXPECT_EQ(j["analysis"], "done");
}

// [SECTION] What a user reads ---------------------------------------------------------------

// The TensorFlow-like synthetic job with the report's pathologies (Eigen's
// padding and broadcast kernels), written to the test's folder.
fs::path report_shaped(const fs::path& dir) {
  SyntheticOptions so = SyntheticOptions::report_pathologies();
  so.kernels = 15'440;
  const fs::path file = dir / "report-pathologies.gscope";
  write_gscope(make_synthetic_trace(so), file.string());
  return file;
}

// The report-shaped job: the hotspot table names Eigen's padding and
// broadcast kernels as the report does, as distinct rows, with the report's
// numbers; the UI font is DejaVu Sans with no stand-ins.
TEST_F(Headless, HotspotsNameTheEigenOpsAsTheReportDoes) {
  const fs::path kReportSample = report_shaped(dir_);
  const Result r = view(
      {kReportSample.string(), "--screenshot", (dir_ / "h.png").string(), "--view", "hotspots", "--size", "1400x1000"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "h.json");
  EXPECT_FALSE(j["font"]["file"].is_null()) << j["font"];
  EXPECT_TRUE(j["font"]["ascii_stand_ins"].empty());

  const Profile p = analyze(read_gscope(kReportSample.string()));
  std::vector<std::string_view> names;
  for (const Hotspot& h : p.hotspots) names.push_back(h.name);
  const std::vector<std::string> shown = format::short_kernel_names(names, format::kTableNameWidth);
  const json& rows = j["hotspot_rows"];
  ASSERT_GE(rows.size(), 10u);  // what fits on screen, in the table's order: by total time
  std::set<std::string> distinct;
  std::map<std::string, json> by_name;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Hotspot& h = p.hotspots[i];
    EXPECT_EQ(rows[i]["kernel"], h.name);
    EXPECT_EQ(rows[i]["name"], shown[i]);
    EXPECT_EQ(rows[i]["category"], std::string(to_string(h.category)));
    EXPECT_EQ(rows[i]["share"], format::percent1(h.share));
    EXPECT_EQ(rows[i]["total"], format::duration(h.stats.total));
    EXPECT_EQ(rows[i]["count"], format::count(h.stats.count));
    EXPECT_EQ(rows[i]["name"].get<std::string>().find("EigenMetaKernel"), std::string::npos) << rows[i];
    distinct.insert(rows[i]["name"].get<std::string>());
    by_name[rows[i]["name"].get<std::string>()] = rows[i];
  }
  EXPECT_EQ(distinct.size(), rows.size()) << "two rows read the same";
  ASSERT_TRUE(by_name.contains("Eigen TensorBroadcastingOp")) << rows;
  EXPECT_EQ(by_name["Eigen TensorBroadcastingOp"]["category"], "broadcast");
  EXPECT_EQ(by_name["Eigen TensorBroadcastingOp"]["share"], "20.0%");
  ASSERT_TRUE(by_name.contains("Eigen TensorPaddingOp #1")) << rows;
  ASSERT_TRUE(by_name.contains("Eigen TensorPaddingOp #2")) << rows;
  EXPECT_EQ(by_name["Eigen TensorPaddingOp #1"]["category"], "padding");
  EXPECT_EQ(by_name["Eigen TensorPaddingOp #2"]["category"], "padding");
  EXPECT_NE(by_name["Eigen TensorPaddingOp #1"]["kernel"], by_name["Eigen TensorPaddingOp #2"]["kernel"]);
  EXPECT_NE(by_name["Eigen TensorPaddingOp #1"]["total"].get<std::string>().find(" ms"), std::string::npos);
}

// Zoomed out, each compute stream of the report-shaped job is one folded
// block: labelled with what it counts, coloured by the exact category mix.
TEST_F(Headless, ZoomedOutTheReportShapedSampleShowsPaddingAndBroadcast) {
  const fs::path kReportSample = report_shaped(dir_);
  const Result r = view({kReportSample.string(), "--screenshot", (dir_ / "t.png").string(), "--size", "1280x1400"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "t.json");
  EXPECT_TRUE(has(j["folded_labels"], "3,780 kernels · 20 memsets")) << j["folded_labels"];  // each kind counted
  const Profile p = analyze(read_gscope(kReportSample.string()));
  std::map<std::string, json> by;
  double px = 0;
  for (const auto& c : j["kernels_by_category"]) {
    by[c["category"].get<std::string>()] = c;
    px += c["px"].get<double>();
  }
  for (const CategoryTime& c : p.categories) {
    const std::string name(to_string(c.category));
    ASSERT_TRUE(by.contains(name)) << name;
    EXPECT_EQ(by[name]["single_ns"].get<TimeNs>() + by[name]["folded_ns"].get<TimeNs>(), c.time_ns) << name;
  }
  EXPECT_NEAR(by["padding"]["px"].get<double>() / px, 0.214, 0.04);
  EXPECT_NEAR(by["broadcast"]["px"].get<double>() / px, 0.20, 0.04);
  EXPECT_NEAR(by["convolution"]["px"].get<double>() / px, 0.426, 0.04);
}

// Without the font file: a one-line note naming it, ASCII stand-ins, a normal exit.
TEST_F(Headless, AMissingFontFallsBackToAsciiWithANote) {
  const fs::path font = dir_ / "no-such-font.ttf";
  const fs::path kReportSample = report_shaped(dir_);
  const Result r = view({kReportSample.string(), "--screenshot", (dir_ / "f.png").string(), "--view", "hotspots",
                         "--font", font.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("gpuscope-view: note: " + font.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fonts-dejavu-core"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const json j = read_json(dir_ / "f.json");
  EXPECT_TRUE(j["font"]["file"].is_null());
  EXPECT_TRUE(has(j["font"]["ascii_stand_ins"], "U+2192")) << j["font"];
  EXPECT_TRUE(has(j["font"]["ascii_stand_ins"], "U+0394")) << j["font"];
  EXPECT_GT(j["hotspot_rows"].size(), 0u);
}

// Host samples of a real Nsight Systems export (CloverLeaf: 1,531 on thread
// "cuda-cloverleaf"): a samples row per sampled thread, the flame chart once
// zoomed in to a few sampling intervals, and in the Findings tab the
// report's line of where the host was during each idle cause.
TEST_F(Headless, HostSamplesShowAsASamplesRowAndInTheFindings) {
  const std::string file = testing::real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite");
  const Trace t = open_trace(file);
  const StringId domain = t.strings().find(kHostSampleDomain);
  std::vector<TimeNs> at;  // the samples' offsets from the trace start
  for (std::size_t i = 0; i < t.ranges().size(); ++i)
    if (t.ranges().domain[i] == domain && t.ranges().kind_at(i) == RangeKind::mark)
      at.push_back(t.ranges().start[i] - t.begin_time());
  std::sort(at.begin(), at.end());
  ASSERT_EQ(at.size(), 1531u);
  const TimeNs first = at[at.size() / 2], second = at[at.size() / 2 + 1];
  ASSERT_GT(second, first);
  const std::string zoom =
      cat(std::to_string(first - (second - first) * 4), ":", std::to_string(first + (second - first) * 4));
  Result r = view({file, "--screenshot", (dir_ / "samples.png").string(), "--size", "1280x2400", "--zoom", zoom});
  ASSERT_EQ(r.status, 0) << r.err;
  json j = read_json(dir_ / "samples.json");
  std::uint64_t samples = 0, flame_boxes = 0;
  bool cloverleaf = false;
  for (const auto& tr : j["tracks"]) {
    samples += tr["samples"].get<std::uint64_t>();
    flame_boxes += tr["flame_boxes"].get<std::uint64_t>();
    if (tr["samples"].get<std::uint64_t>() > 0 && tr["flame_rows"].get<std::uint64_t>() > 0)
      cloverleaf = cloverleaf || tr["label"].get<std::string>().find("cuda-cloverleaf") != std::string::npos;
  }
  EXPECT_EQ(samples, 1531u);
  EXPECT_GT(flame_boxes, 0u);
  EXPECT_TRUE(cloverleaf) << j["tracks"].dump();

  r = view({file, "--screenshot", (dir_ / "findings.png").string(), "--view", "findings", "--size", "1400x2000"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = read_json(dir_ / "findings.json");
  const Profile p = analyze(t);
  std::vector<std::string> lines;
  for (const IdleCharge& c : p.idle_charges)
    for (const HostWhere& w : p.host_while_idle)
      if (w.cause == c.cause) lines.push_back(host_where_line(w));
  ASSERT_FALSE(lines.empty());  // the export has samples in its idle time
  EXPECT_EQ(j["savings"]["host_while_idle"].get<std::vector<std::string>>(), lines);
  EXPECT_EQ(j["savings"]["idle"].size(), p.idle_charges.size());
}

// [SECTION] Scale ----------------------------------------------------------------------------

// A million kernels (the 10M trace is in the benchmark: generating it takes
// longer than a CI test should), fully zoomed out: folded blocks bounded by
// the screen, every event accounted for.
TEST_F(Headless, LargeSyntheticTraceZoomedOutFoldsIntoBoundedBlocks) {
  const std::uint64_t n = 1'000'000;
  const Result r =
      view({"--synthetic", std::to_string(n), "--screenshot", (dir_ / "out.png").string(), "--size", "1280x1400"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "out.json");
  EXPECT_EQ(j["source"], "synthetic");
  EXPECT_EQ(j["trace"]["kernels"], n);
  SyntheticOptions so;
  so.kernels = n;
  const Trace t = make_synthetic_trace(so);
  const std::uint64_t drawn = sum_over_gpu_tracks(t, j, "drawn"), blocks = sum_over_gpu_tracks(t, j, "merged_blocks");
  std::uint64_t gpu_tracks = 0;
  for (const auto& tr : j["tracks"])
    gpu_tracks += tr["visible"].get<bool>() && t.tracks()[tr["track"].get<TrackId>()].kind == TrackKind::gpu;
  EXPECT_GE(gpu_tracks, 8u);
  EXPECT_GT(blocks, 0u);
  EXPECT_LE(drawn + blocks, gpu_tracks * (j["timeline_width_px"].get<std::uint64_t>() / 3 + 2));
  EXPECT_EQ(drawn + sum_over_gpu_tracks(t, j, "merged_events"), visible_gpu_events(t, j));
  EXPECT_LE(j["vertices"].get<std::uint64_t>(), kMaxVertices);
}

TEST_F(Headless, LargeSyntheticTraceZoomedInDrawsKernelsOneByOne) {
  const std::uint64_t n = 1'000'000;
  SyntheticOptions so;
  so.kernels = n;
  const Trace t = make_synthetic_trace(so);
  // 40 µs in the middle of the run: every op there is at least 3 px wide?
  const TimeNs from = (t.end_time() - t.begin_time()) / 2, to = from + 40'000;
  const Result r = view({"--synthetic", std::to_string(n), "--screenshot", (dir_ / "in.png").string(), "--zoom",
                         cat(std::to_string(from), ":", std::to_string(to))});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "in.json");
  const double ns_per_px = 40'000.0 / j["timeline_width_px"].get<double>();
  TimeNs shortest = std::numeric_limits<TimeNs>::max();
  const TimeNs a = j["visible_range"]["start_ns"], b = j["visible_range"]["end_ns"];
  for (const auto& tr : j["tracks"]) {
    if (!tr["visible"].get<bool>() || t.tracks()[tr["track"].get<TrackId>()].kind != TrackKind::gpu) continue;
    const RowRange rr = t.rows_overlapping(TableId::kernels, tr["track"], a, b);
    for (RowIndex k = rr.begin; k < rr.end; ++k)
      shortest = std::min(shortest, t.kernels().end[k] - t.kernels().start[k]);
  }
  const std::uint64_t drawn = sum_over_gpu_tracks(t, j, "drawn");
  EXPECT_GT(drawn, 0u);
  EXPECT_EQ(drawn + sum_over_gpu_tracks(t, j, "merged_events"), visible_gpu_events(t, j));
  if (static_cast<double>(shortest) >= 3 * ns_per_px) {
    EXPECT_EQ(sum_over_gpu_tracks(t, j, "merged_blocks"), 0u);
  }
}

// [SECTION] Bad input and environment ------------------------------------------------------

TEST_F(Headless, CorruptFileShowsTheErrorAndExitsWithTwo) {
  const fs::path bad = dir_ / "corrupt.json";
  {
    std::ofstream f(bad);
    f << "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": ";  // cut mid-event
  }
  const Result r = view({bad.string(), "--screenshot", (dir_ / "bad.png").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("gpuscope-view: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
  expect_png(dir_ / "bad.png", 1280, 800);  // the window, showing the error
  const json j = read_json(dir_ / "bad.json");
  ASSERT_TRUE(j["error"].is_string());
  EXPECT_NE(j["error"].get<std::string>().find(bad.string()), std::string::npos);
  EXPECT_TRUE(has(j["panels"], "error"));
  EXPECT_TRUE(no_temporaries(dir_));

  // Garbage bytes and a gzip stream cut in half fail the same way.
  const fs::path garbage = dir_ / "garbage.gscope";
  {
    std::ofstream f(garbage, std::ios::binary);
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((i * 7919) & 0xff));
  }
  EXPECT_EQ(view({garbage.string(), "--screenshot", (dir_ / "g.png").string()}).status, 2);
  const fs::path half = dir_ / "half.json.gz";
  {
    const fs::path src = fs::path(testing::real_trace("hta-ns-resolution-v100.json.gz"));
    std::ifstream in(src, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream out(half, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  // Cut in half, the gzip stream still holds complete events: they open, under the banner that says so.
  const Result h = view({half.string(), "--screenshot", (dir_ / "h.png").string()});
  EXPECT_EQ(h.status, 0) << h.err;
  const json hj = read_json(dir_ / "h.json");
  ASSERT_TRUE(hj["damage"].is_string()) << hj.dump();
  EXPECT_EQ(hj["damage"].get<std::string>().rfind("INCOMPLETE file: truncated at byte ", 0), 0u) << hj["damage"];
  EXPECT_TRUE(has(hj["panels"], "damage_banner"));
  EXPECT_EQ(view({(dir_ / "missing.json").string(), "--screenshot", (dir_ / "m.png").string()}).status, 2);
}

// A .gscope cut inside its first sections holds nothing to show: the window
// says which file, where and what is missing, and the run exits with 2.
// A folder of 500 files none of which is a trace: a clear error naming them
// (exit 2), not an abort on ImGui's 64k vertices of one draw list.
TEST_F(Headless, AFolderOfFiveHundredUnreadableFilesIsAClearError) {
  const fs::path folder = dir_ / "bad";
  fs::create_directories(folder);
  for (int i = 0; i < 500; ++i) std::ofstream(folder / cat("rank-", std::to_string(i), ".json")) << "garbage";
  const Result r = view({folder.string(), "--screenshot", (dir_ / "bad.png").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("none of the 500 files can be analysed"), std::string::npos) << r.err.substr(0, 400);
  const json j = read_json(dir_ / "bad.json");
  EXPECT_TRUE(has(j["panels"], "error"));
  EXPECT_NE(j["message"].get<std::string>().find("rank-499.json"), std::string::npos);
  EXPECT_LT(j["vertices"].get<std::uint64_t>(), 65'536u);
}

TEST_F(Headless, NothingRecoverableShowsWhereAndExitsWithTwo) {
  SyntheticOptions so;
  so.kernels = 2'000;
  const fs::path whole = dir_ / "whole.gscope", cut = dir_ / "cut.gscope";
  write_gscope(make_synthetic_trace(so), whole.string());
  fs::copy_file(whole, cut);
  fs::resize_file(cut, 200);  // the header, the contents and the start of the strings
  const Result r = view({cut.string(), "--screenshot", (dir_ / "c.png").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(cut.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing could be recovered"), std::string::npos) << r.err;
  expect_png(dir_ / "c.png", 1280, 800);
  const json j = read_json(dir_ / "c.json");
  EXPECT_TRUE(has(j["panels"], "error"));
  const std::string message = j["message"];
  EXPECT_NE(message.find(cut.string()), std::string::npos) << message;
  EXPECT_NE(message.find("at byte"), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  EXPECT_TRUE(j["damage"].is_null());
}

// A .gscope of 4 GPUs cut short: what survived opens, and the banner says
// it was cut, where, and which GPUs lost everything — not "1 GPU".
TEST_F(Headless, PartlyRecoverableOpensUnderADamageBanner) {
  SyntheticOptions so;
  so.kernels = 300'000;  // several kernel chunks, stored GPU by GPU
  so.gpus = 4;
  const fs::path whole = dir_ / "whole.gscope", cut = dir_ / "cut.gscope";
  write_gscope(make_synthetic_trace(so), whole.string());
  fs::copy_file(whole, cut);
  const std::uint64_t size = fs::file_size(whole) / 5;
  fs::resize_file(cut, size);
  const Trace part = read_gscope(cut.string());
  const std::vector<std::uint32_t> empty = device_coverage(part).without_data();
  ASSERT_FALSE(empty.empty());
  const Result r = view({cut.string(), "--screenshot", (dir_ / "p.png").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "p.json");
  EXPECT_TRUE(has(j["panels"], "damage_banner"));
  EXPECT_TRUE(has(j["panels"], "timeline"));
  ASSERT_TRUE(j["damage"].is_string());
  const std::string banner = j["damage"];
  EXPECT_EQ(banner, damage_headline(part.meta().damage, device_coverage(part)));
  EXPECT_NE(banner.find("truncated at byte " + format::count(size)), std::string::npos) << banner;
  EXPECT_NE(banner.find(" have no data"), std::string::npos) << banner;
  EXPECT_EQ(j["trace"]["kernels"], part.kernels().size());

  // An intact file has no banner.
  ASSERT_EQ(view({whole.string(), "--screenshot", (dir_ / "w.png").string()}).status, 0);
  const json w = read_json(dir_ / "w.json");
  EXPECT_TRUE(w["damage"].is_null());
  EXPECT_FALSE(has(w["panels"], "damage_banner"));
}

TEST_F(Headless, NoDisplayIsAClearMessage) {
  const Result r = run(GPUSCOPE_VIEW_BIN, {testing::real_trace("hta-triton.json.gz")}, /*xvfb=*/false,
                       "env -u DISPLAY -u WAYLAND_DISPLAY ");
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("no display"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("xvfb-run"), std::string::npos) << r.err;
  const Result s =
      run(GPUSCOPE_VIEW_BIN, {testing::real_trace("hta-triton.json.gz"), "--screenshot", (dir_ / "x.png").string()},
          false, "env -u DISPLAY -u WAYLAND_DISPLAY ");
  EXPECT_EQ(s.status, 3);
  EXPECT_FALSE(fs::exists(dir_ / "x.png"));
}

TEST_F(Headless, BadFlagsAndUnwritableOutputExitWithTwo) {
  const std::string file = testing::real_trace("hta-triton.json.gz");
  const std::string png = (dir_ / "o.png").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{file, "--screenshot", png, "--size", "10x10"},
        std::vector<std::string>{file, "--screenshot", png, "--view", "flamegraph"},
        std::vector<std::string>{file, "--screenshot", png, "--zoom", "5ms:1ms"},
        std::vector<std::string>{file, "--screenshot", png, "--frames", "0"},
        std::vector<std::string>{"--screenshot", png}, std::vector<std::string>{file, "--no-such-flag"}}) {
    const Result r = run(GPUSCOPE_VIEW_BIN, args, /*xvfb=*/false);
    EXPECT_EQ(r.status, 2) << args.back();
    EXPECT_NE(r.err.find("gpuscope-view: error: "), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
  }
  EXPECT_FALSE(fs::exists(png));
  const Result r = view({file, "--screenshot", "/nonexistent-dir/o.png"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("/nonexistent-dir/o.png"), std::string::npos) << r.err;
}

// The Ops tab on a real PyTorch trace recorded with shapes: the rows per
// name × shapes in the analysis' order, with its numbers as the report writes
// them; --select-op highlights the op's kernels (as many as the analysis
// counts under it) and selects the first, launched inside that op.
TEST_F(Headless, OpsTabShowsTheOpTableAndSelectsAnOpsKernels) {
  const std::string file = testing::real_trace("tracelens-bert-small-h100.json.gz");
  const Trace t = import_chrome_json(file);
  const Profile p = analyze(t);
  ASSERT_FALSE(p.ops.empty());
  const Result r = view(
      {file, "--screenshot", (dir_ / "ops.png").string(), "--view", "ops", "--ops-by-shapes", "--size", "1600x1000"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_png(dir_ / "ops.png", 1600, 1000);
  const json j = read_json(dir_ / "ops.json");
  EXPECT_TRUE(has(j["panels"], "ops"));
  EXPECT_TRUE(j["ops_by_shapes"].get<bool>());
  EXPECT_EQ(j["rows"]["ops"], p.ops.size());
  EXPECT_EQ(j["ops_message"], "");
  const json& rows = j["op_rows"];
  ASSERT_GE(rows.size(), 10u);  // what fits on screen, most GPU time first
  bool some_rate = false;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const OpRow& o = p.ops[i];
    EXPECT_EQ(rows[i]["op"], o.name);
    EXPECT_EQ(rows[i]["GPU total"], format::duration(o.gpu_total_ns));
    EXPECT_EQ(rows[i]["TFLOP/s"], o.achieved_tflops ? format::fixed(*o.achieved_tflops, 1) : "–") << o.name;
    EXPECT_EQ(rows[i]["roofline"], o.roofline_fraction ? format::percent1(*o.roofline_fraction) : "–") << o.name;
    some_rate = some_rate || o.achieved_tflops.has_value();
  }
  EXPECT_TRUE(some_rate) << "the trace recorded shapes: some GEMM has a rate";

  const Result s =
      view({file, "--screenshot", (dir_ / "op.png").string(), "--view", "ops", "--select-op", "aten::addmm"});
  ASSERT_EQ(s.status, 0) << s.err;
  const json k = read_json(dir_ / "op.json");
  EXPECT_EQ(k["selected_op"], "aten::addmm");
  EXPECT_EQ(k["highlight"]["label"], "op: aten::addmm");
  std::uint64_t kernels_under = 0;
  for (const OpRow& o : p.op_names)
    if (o.name == "aten::addmm") kernels_under = o.kernels_total;
  EXPECT_GT(kernels_under, 0u);
  EXPECT_EQ(k["highlight"]["matches"], kernels_under);
  ASSERT_TRUE(k["selection"].is_object());
  const RowIndex row = k["selection"]["row"];
  const RowIndex op = t.launching_op(OpRef{OpTable::kernel, row});
  ASSERT_NE(op, kNoRow);
  EXPECT_EQ(t.str(t.ranges().name[op]), "aten::addmm");

  // The same through `gpuscope view`, which passes the flags on.
  const Result cli = run(GPUSCOPE_CLI_BIN, {"view", file, "--screenshot", (dir_ / "cli.png").string(), "--view", "ops",
                                            "--ops-by-shapes", "--select-op", "aten::addmm"});
  ASSERT_EQ(cli.status, 0) << cli.err;
  const json c = read_json(dir_ / "cli.json");
  EXPECT_TRUE(c["ops_by_shapes"].get<bool>());
  EXPECT_EQ(c["selected_op"], "aten::addmm");

  const Result bad = view({file, "--screenshot", (dir_ / "none.png").string(), "--select-op", "aten::nothing"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("no framework op named 'aten::nothing'"), std::string::npos) << bad.err;
}

// A trace without framework ops: the tab says so, and what would give them.
TEST_F(Headless, OpsTabOfATraceWithoutOpsSaysWhatWouldGiveThem) {
  const fs::path file = dir_ / "kernels-only.json";
  std::ofstream(file) << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,)"
                      << R"( "ts": 10, "dur": 5, "args": {"device": 0, "stream": 7}}]})";
  const Result r = view({file.string(), "--screenshot", (dir_ / "o.png").string(), "--view", "ops"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "o.json");
  EXPECT_TRUE(has(j["panels"], "ops"));
  EXPECT_EQ(j["rows"]["ops"], 0);
  const std::string m = j["ops_message"];
  EXPECT_TRUE(m.starts_with("no framework ops in this trace: ")) << m;
  EXPECT_NE(m.find("record_shapes=True"), std::string::npos) << m;
  EXPECT_NE(m.find("NVTX"), std::string::npos) << m;
}

TEST_F(Headless, GpuscopeViewRunsTheViewer) {
  const std::string file = testing::real_trace("hta-triton.json.gz");
  const Result r =
      run(GPUSCOPE_CLI_BIN, {"view", file, "--screenshot", (dir_ / "v.png").string(), "--view", "summary"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "v.json");
  EXPECT_EQ(j["view"], "summary");
  EXPECT_EQ(j["file"], file);
  // The toolbar's critical-path toggle, passed on.
  const Result c = run(GPUSCOPE_CLI_BIN, {"view", file, "--screenshot", (dir_ / "c.png").string(), "--critical-path"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(read_json(dir_ / "c.json")["critical_path_status"], "");
}

// [SECTION] Jobs of many ranks

// A synthetic job (gpuscope synth --ranks): every rank on its own clock,
// rank 5 computing 1.3x slower, so it arrives last at every collective.
class HeadlessJob : public Headless {
 protected:
  std::string synth_job(std::uint32_t ranks, std::int32_t slow, std::uint64_t kernels = 4000) {
    const std::string out = (dir_ / "job").string();
    const Result r = run(GPUSCOPE_CLI_BIN,
                         {"synth", "--ranks", std::to_string(ranks), "--kernels", std::to_string(kernels),
                          "--slow-rank", std::to_string(slow), "-o", out},
                         /*xvfb=*/false);
    EXPECT_EQ(r.status, 0) << r.err;
    return out;
  }
};

TEST_F(HeadlessJob, TheSlowRankIsMarkedAndArrivesLastAtTheSelectedInstance) {
  const std::string job = synth_job(8, 5);
  const Result r = view({job, "--screenshot", (dir_ / "j.png").string(), "--select-instance", "10"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_png(dir_ / "j.png", 1280, 800);
  const json j = read_json(dir_ / "j.json");
  EXPECT_TRUE(has(j["panels"], "job"));
  EXPECT_TRUE(has(j["panels"], "job_overview"));
  const json& jb = j["job"];
  ASSERT_TRUE(jb.is_object());
  EXPECT_EQ(jb["ranks"], 8);
  EXPECT_EQ(jb["rank_list"].size(), 8u);
  EXPECT_EQ(jb["rank_list"][5]["header"], "rank 5 · synthetic-node-5 · rank-00005.gscope");
  EXPECT_EQ(jb["overview_marked"], 5);
  EXPECT_EQ(jb["overview_order"][0], 5);
  EXPECT_EQ(jb["stragglers"][0], 5);
  EXPECT_TRUE(jb["left_out"].empty());
  const json& inst = jb["instance"];
  ASSERT_TRUE(inst.is_object());
  EXPECT_EQ(inst["index"], 10);
  EXPECT_EQ(inst["last_arrival_rank"], 5);
  EXPECT_NE(inst["last_arrival_text"].get<std::string>().find("last arrival: rank 5, others waited "),
            std::string::npos);
  // Aligned clocks: the parts of one instance end together on screen (the
  // ranks' clocks are off by up to 2 s: unaligned they would be far apart),
  // and the last arrival starts after every other part.
  ASSERT_EQ(inst["parts"].size(), 8u);
  double min_x1 = 1e9, max_x1 = -1e9, last_x0 = 0, others_max_x0 = -1e9;
  for (const json& p : inst["parts"]) {
    EXPECT_TRUE(p["visible"].get<bool>()) << p.dump();
    const double x0 = p["x0"], x1 = p["x1"];
    min_x1 = std::min(min_x1, x1);
    max_x1 = std::max(max_x1, x1);
    EXPECT_EQ(p["last"].get<bool>(), p["rank"] == 5);
    if (p["rank"] == 5)
      last_x0 = x0;
    else
      others_max_x0 = std::max(others_max_x0, x0);
  }
  EXPECT_LT(max_x1 - min_x1, 2.0);
  EXPECT_GT(last_x0, others_max_x0 + 5);
}

TEST_F(HeadlessJob, ACorruptFileAmongTheRanksIsNamedAndTheOthersShown) {
  const std::string job = synth_job(6, 2);
  const fs::path bad = fs::path(job) / "rank-00003.gscope";
  fs::resize_file(bad, 100);
  const Result r = view({job, "--screenshot", (dir_ / "j.png").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = read_json(dir_ / "j.json");
  EXPECT_TRUE(has(j["panels"], "left_out"));
  const json& jb = j["job"];
  EXPECT_EQ(jb["ranks"], 5);
  bool named = false;
  for (const json& l : jb["left_out"]) {
    const std::string line = l;
    named = named || (line.starts_with(bad.string() + ": ") && line.find("byte") != std::string::npos);
  }
  EXPECT_TRUE(named) << jb["left_out"].dump();
  for (const json& f : jb["files"]) EXPECT_NE(f, bad.string());
  EXPECT_EQ(jb["overview_marked"], 2);
}

TEST_F(HeadlessJob, JobFlagsAreCheckedAndGpuscopeViewOpensAJob) {
  const std::string job = synth_job(3, 1, 1000);
  const std::string png = (dir_ / "j.png").string();
  const std::string one = (fs::path(job) / "rank-00000.gscope").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{one, "--screenshot", png, "--select-instance", "1"},
        std::vector<std::string>{job, "--screenshot", png, "--find", "nccl"},
        std::vector<std::string>{job, "--screenshot", png, "--view", "hotspots"}}) {
    const Result r = run(GPUSCOPE_VIEW_BIN, args, /*xvfb=*/false);
    EXPECT_EQ(r.status, 2) << args.back();
    EXPECT_NE(r.err.find("gpuscope-view: error: "), std::string::npos) << r.err;
  }
  const Result none = view({job, "--screenshot", png, "--select-instance", "99999"});
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("no collective instance 99999"), std::string::npos) << none.err;
  const Result cli = run(GPUSCOPE_CLI_BIN, {"view", job, "--screenshot", png, "--select-instance", "2"});
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(read_json(dir_ / "j.json")["job"]["instance"]["index"], 2);
}

// The job view's figures are the report's for the same folder, computed by
// the same pipeline (job/job_files.h): each rank's clock shift and waits,
// the instances, the findings with their simulated savings, and what the
// report leaves out — here an entry that is no trace and a damaged rank.
TEST_F(HeadlessJob, TheJobsFiguresAreTheReportsForTheSameFolder) {
  const fs::path job = synth_job(8, 5, 2000);
  std::ofstream(job / "notes.txt") << "not a trace";
  fs::resize_file(job / "rank-00006.gscope", 100);
  const fs::path report_path = dir_ / "report.json";
  const Result rep = run(GPUSCOPE_CLI_BIN, {"report", job.string(), "--json", "-o", report_path.string()}, false);
  ASSERT_EQ(rep.status, 0) << rep.err;
  const json report = read_json(report_path);
  const Result r = view({job.string(), "--screenshot", (dir_ / "j.png").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const json jb = read_json(dir_ / "j.json")["job"];
  ASSERT_TRUE(jb.is_object());

  ASSERT_EQ(jb["ranks"], report["ranks"].size());
  EXPECT_EQ(jb["collectives"], report["collectives"].size());
  EXPECT_EQ(jb["clock_alignment"], report["clock_alignment"]);
  EXPECT_EQ(jb["simulation"], report["simulation"]["status"]);
  std::map<std::int64_t, json> row_of, straggler_of;
  for (const json& row : report["ranks"]) row_of[row["rank"].get<std::int64_t>()] = row;
  for (const json& s : report["stragglers"]) straggler_of[s["rank"].get<std::int64_t>()] = s;
  for (const json& rank : jb["rank_list"]) {
    const std::int64_t n = rank["rank"];
    ASSERT_TRUE(row_of.count(n) && straggler_of.count(n)) << n;
    EXPECT_EQ(rank["file"], row_of[n]["source_file"]);
    EXPECT_EQ(rank["offset_ns"], row_of[n]["clock_offset_ns"]);
    for (const char* key : {"wait_caused_ns", "waited_ns", "last_arrivals", "critical_steps"})
      EXPECT_EQ(rank[key], straggler_of[n][key]) << "rank " << n << ": " << key;
  }
  ASSERT_EQ(jb["findings"].size(), report["findings"].size());
  for (std::size_t i = 0; i < jb["findings"].size(); ++i) {
    EXPECT_EQ(jb["findings"][i]["id"], report["findings"][i]["id"]);
    EXPECT_EQ(jb["findings"][i]["saving_ns"], report["findings"][i]["saving_ns"]);
    EXPECT_EQ(jb["findings"][i]["saving_source"], report["findings"][i]["saving_source"]);
  }
  std::vector<std::string> want;
  for (const json& l : report["left_out"])
    want.push_back(l["file"].get<std::string>().empty()
                       ? l["problem"].get<std::string>()
                       : l["file"].get<std::string>() + ": " + l["problem"].get<std::string>());
  EXPECT_EQ(jb["left_out"].get<std::vector<std::string>>(), want);
  EXPECT_EQ(want.size(), 3u);  // notes.txt, the damaged rank, and its rank without a file

  // Every instance's last arrival and wait, as the report's.
  for (std::size_t i : {std::size_t{0}, std::size_t{7}, report["collectives"].size() - 1}) {
    const Result s =
        view({job.string(), "--screenshot", (dir_ / "s.png").string(), "--select-instance", std::to_string(i)});
    ASSERT_EQ(s.status, 0) << s.err;
    const json inst = read_json(dir_ / "s.json")["job"]["instance"];
    EXPECT_EQ(inst["last_arrival_rank"], report["collectives"][i]["last_rank"]) << i;
    EXPECT_EQ(inst["wait_ns"], report["collectives"][i]["wait_ns"]) << i;
  }
}

// The real pair of HTA rank traces (ranks 0 and 1 of a 128-rank job) as a
// job folder: the view names what `gpuscope report --json` computes for the
// same folder — the stragglers' order, each rank's clock shift, the missing
// ranks, and the last arrival of the instance with the most wait.
TEST_F(HeadlessJob, TheRealRankPairShowsWhatTheReportComputes) {
  const fs::path job = dir_ / "hta";
  fs::create_directories(job);
  for (const char* f : {"hta-sampled-rank0.json.gz", "hta-sampled-rank1.json.gz"})
    fs::create_symlink(testing::real_trace(f), job / f);
  const fs::path report_path = dir_ / "report.json";
  const Result rep =
      run(GPUSCOPE_CLI_BIN, {"report", job.string(), "--json", "--no-simulation", "-o", report_path.string()}, false);
  ASSERT_EQ(rep.status, 0) << rep.err;
  const json report = read_json(report_path);
  ASSERT_FALSE(report["collectives"].empty());
  std::size_t worst = 0;
  for (std::size_t i = 0; i < report["collectives"].size(); ++i)
    if (report["collectives"][i]["wait_ns"].get<std::int64_t>() >
        report["collectives"][worst]["wait_ns"].get<std::int64_t>())
      worst = i;

  const Result r =
      view({job.string(), "--screenshot", (dir_ / "j.png").string(), "--select-instance", std::to_string(worst)});
  ASSERT_EQ(r.status, 0) << r.err;
  const json jb = read_json(dir_ / "j.json")["job"];
  ASSERT_TRUE(jb.is_object());
  EXPECT_EQ(jb["ranks"], 2);
  EXPECT_EQ(jb["collectives"], report["collectives"].size());
  EXPECT_EQ(jb["clock_alignment"], report["clock_alignment"]);
  // The view names the ranks that made the others wait (at most 3), in the report's order.
  std::size_t waited_for = 0;
  for (const json& s : report["stragglers"]) waited_for += s["wait_caused_ns"].get<std::int64_t>() > 0;
  ASSERT_EQ(jb["stragglers"].size(), std::min<std::size_t>(waited_for, 3));
  for (std::size_t i = 0; i < jb["stragglers"].size(); ++i)
    EXPECT_EQ(jb["stragglers"][i], report["stragglers"][i]["rank"]);
  EXPECT_EQ(jb["overview_marked"], report["stragglers"][0]["rank"]);
  for (const json& rank : jb["rank_list"])
    for (const json& row : report["ranks"])
      if (row["rank"] == rank["rank"]) {
        EXPECT_EQ(rank["offset_ns"], row["clock_offset_ns"]);
      }
  bool missing_named = false;
  for (const json& l : jb["left_out"])
    missing_named = missing_named || l.get<std::string>().find("ranks 2–127") != std::string::npos;
  EXPECT_TRUE(missing_named) << jb["left_out"].dump();
  const json& inst = jb["instance"];
  const json& want = report["collectives"][worst];
  EXPECT_EQ(inst["last_arrival_rank"], want["last_rank"]);
  EXPECT_EQ(inst["wait_ns"], want["wait_ns"]);
  for (const json& p : inst["parts"])
    if (p["last"].get<bool>()) {
      EXPECT_EQ(p["start_ns"], want["last_arrival_ns"]);
    }
}

}  // namespace
}  // namespace gpuscope::viewer
