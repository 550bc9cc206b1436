// The job view: its data (viewer/job_lanes.h) computed without a window from
// synthetic jobs written to disk (import/synthetic_job.h: every rank on its
// own clock, one rank slower), checked against what the job generator says
// is true; then the view drawn with ImGui's null backend and clicked.
#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "import/synthetic_job.h"
#include "job/job_files.h"
#include "store/gscope.h"
#include "support/test_traces.h"
#include "trace/error.h"
#include "viewer/job_lanes.h"
#include "viewer/view.h"

namespace gpuscope::viewer {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxVertices = 300'000;

class JobViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-jobview-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a job's rank files into dir_/name; returns the folder.
  std::string write_job(const std::string& name, const SyntheticJobOptions& o) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    const SyntheticJob job(o);
    for (std::uint32_t r = 0; r < o.ranks; ++r) {
      char file[32];
      std::snprintf(file, sizeof file, "rank-%05u.gscope", r);
      write_gscope(job.rank_trace(r), (d / file).string());
    }
    return d.string();
  }
  static SyntheticJobOptions options(std::uint32_t ranks, std::int32_t slow) {
    SyntheticJobOptions o;
    o.ranks = ranks;
    o.kernels = 2'000;
    o.slow_rank = slow;
    o.command_line = "train.py";
    return o;
  }

  fs::path dir_;
};

// [SECTION] The data, without a window

TEST_F(JobViewTest, JobInputsAreADirectoryOrMoreThanTwoFiles) {
  const std::string d = write_job("j", options(3, -1));
  EXPECT_TRUE(is_job_input({d}));
  EXPECT_TRUE(is_job_input({"a.gscope", "b.gscope", "c.gscope"}));
  EXPECT_FALSE(is_job_input({"a.gscope", "b.gscope"}));  // two files: compare
  EXPECT_FALSE(is_job_input({"a.gscope"}));
  // A report saved beside the traces (`report --json -o DIR/report.json`)
  // is not one of them, as for the CLI.
  std::ofstream(fs::path(d) / "report.json") << R"({"schema": "gpuscope.report/1", "source": "job"})";
  const std::vector<std::string> files = trace_files({d});
  ASSERT_EQ(files.size(), 3u);
  EXPECT_TRUE(std::is_sorted(files.begin(), files.end()));
  EXPECT_EQ(fs::path(files[0]).filename(), "rank-00000.gscope");
  fs::create_directories(dir_ / "empty");
  std::ofstream(dir_ / "empty" / "notes.txt") << "not a trace";
  try {
    trace_files({(dir_ / "empty").string()});
    FAIL() << "an empty folder must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "empty").string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no trace files"), std::string::npos) << e.what();
  }
}

// Each rank's shift onto the job clock undoes its clock's offset: what the
// generator says rank r's clock reads minus true time, relative to rank 0's.
TEST_F(JobViewTest, RanksAreShiftedOntoOneClock) {
  const SyntheticJobOptions o = options(6, 4);
  const JobData job = load_job(list_trace_inputs({write_job("j", o)}));
  ASSERT_EQ(job.ranks.size(), 6u);
  const SyntheticJob truth(o);
  for (std::size_t i = 0; i < job.ranks.size(); ++i) {
    const JobRank& r = job.ranks[i];
    EXPECT_EQ(r.rank, static_cast<std::int32_t>(i));
    EXPECT_EQ(r.host, "synthetic-node-" + std::to_string(i));
    const TimeNs expected = truth.clock_offset(0) - truth.clock_offset(static_cast<std::uint32_t>(i));
    EXPECT_LT(std::llabs(r.offset - expected), 5'000) << "rank " << i << ": " << r.offset << " vs " << expected;
    ASSERT_EQ(r.gpus.size(), 1u);
    EXPECT_TRUE(r.gpus[0].linked);
    EXPECT_EQ(r.gpus[0].parts.size(), job.profile.collectives.size());
  }
  EXPECT_GT(job.window.end, job.window.start);
  EXPECT_TRUE(job.left_out.empty());
  // The clocks really are off (the shifts are not all ~0), so the check above can fail.
  TimeNs largest = 0;
  for (const JobRank& r : job.ranks) largest = std::max<TimeNs>(largest, std::llabs(r.offset));
  EXPECT_GT(largest, 1'000'000);
}

// The parts of one instance end together on the job clock (the synthetic
// collective ends within a microsecond on every rank once the last has
// arrived), the slow rank arrives last, and the others' wait is what the
// job analysis counted.
TEST_F(JobViewTest, InstancesLinkEveryRanksPartAndMarkTheLastArrival) {
  const JobData job = load_job(list_trace_inputs({write_job("j", options(6, 4))}));
  ASSERT_GT(job.profile.collectives.size(), 20u);
  std::size_t slow_last = 0;
  for (std::size_t i = 0; i < job.profile.collectives.size(); ++i) {
    const std::vector<InstancePart> parts = instance_parts(job, i);
    ASSERT_EQ(parts.size(), 6u);
    TimeNs min_end = parts[0].range.end, max_end = parts[0].range.end, waited = 0;
    std::size_t lasts = 0;
    for (const InstancePart& p : parts) {
      min_end = std::min(min_end, p.range.end);
      max_end = std::max(max_end, p.range.end);
      waited += p.waited_ns;
      EXPECT_GE(p.waited_ns, 0);
      lasts += p.last;
      if (p.last) {
        EXPECT_EQ(p.waited_ns, 0);
        slow_last += job.ranks[p.rank].rank == 4;
      }
    }
    EXPECT_EQ(lasts, 1u) << "instance " << i;
    EXPECT_LT(max_end - min_end, 10'000) << "instance " << i << ": the parts do not end together";
    EXPECT_EQ(waited, job.profile.collectives[i].wait_ns);
  }
  EXPECT_EQ(slow_last, job.profile.collectives.size());  // 1.3x slower: last at every one
  // Parts link to their instance only on the linked lane, and only as far as matched.
  EXPECT_EQ(instance_of(job, 2, 0, 7), 7);
  EXPECT_EQ(instance_of(job, 2, 0, job.profile.collectives.size()), -1);
  EXPECT_EQ(instance_of(job, 2, 1, 0), -1);  // no second GPU
  EXPECT_EQ(instance_of(job, 99, 0, 0), -1);
  EXPECT_TRUE(instance_parts(job, job.profile.collectives.size()).empty());
}

// A rank's other GPUs link to the instances when their parts are the linked
// lane's one for one; one part more, another kind or other bytes, and they
// stay unlinked. A GPU without communication is left alone.
TEST(JobLanes, SiblingGpusLinkOnlyWhenTheirPartsMatch) {
  auto lane = [](std::uint32_t device, bool linked, std::vector<CollectivePart> parts) {
    JobGpuLane g;
    g.device = device;
    g.linked = linked;
    g.parts = std::move(parts);
    return g;
  };
  const std::vector<CollectivePart> seq = {{100, 200, 4096, 1}, {300, 400, 0, 2}, {500, 600, 64, 1}};
  std::vector<CollectivePart> more = seq, kind = seq, bytes = seq, unknown = seq;
  more.push_back({700, 800, 64, 1});
  kind[1].kind = 3;
  bytes[0].bytes = 8192;
  unknown[2].bytes = 0;  // the trace does not say: no contradiction
  std::vector<JobGpuLane> gpus;
  gpus.push_back(lane(0, true, seq));
  gpus.push_back(lane(1, false, seq));
  gpus.push_back(lane(2, false, more));
  gpus.push_back(lane(3, false, kind));
  gpus.push_back(lane(4, false, bytes));
  gpus.push_back(lane(5, false, unknown));
  gpus.push_back(lane(6, false, {}));
  link_sibling_lanes(gpus);
  const bool expected[] = {true, true, false, false, false, true, false};
  for (std::size_t i = 0; i < gpus.size(); ++i) EXPECT_EQ(gpus[i].linked, expected[i]) << "GPU " << i;
  // Nothing linked to begin with (a rank whose digest has no collectives): nothing is.
  for (JobGpuLane& g : gpus) g.linked = false;
  link_sibling_lanes(gpus);
  for (const JobGpuLane& g : gpus) EXPECT_FALSE(g.linked);
}

TEST_F(JobViewTest, TheOverviewPutsTheSlowRankFirstAndNoRankWithoutOne) {
  const JobData slow = load_job(list_trace_inputs({write_job("slow", options(8, 5))}));
  const std::vector<RankWait> w = rank_waits(slow);
  ASSERT_EQ(w.size(), 8u);
  EXPECT_EQ(slow.ranks[w[0].rank].rank, 5);
  EXPECT_EQ(w[0].last_arrivals, slow.profile.collectives.size());
  EXPECT_GT(w[0].caused_ns, 0);
  EXPECT_EQ(w[0].waited_ns, 0);
  for (std::size_t i = 1; i < w.size(); ++i) {
    EXPECT_GE(w[i - 1].caused_ns, w[i].caused_ns);
    EXPECT_GT(w[i].waited_ns, 0);
  }
  // Without a slow rank the last arrivals are spread by the noise: no rank
  // is last at most of them.
  const JobData even = load_job(list_trace_inputs({write_job("even", options(8, -1))}));
  const std::vector<RankWait> e = rank_waits(even);
  ASSERT_EQ(e.size(), 8u);
  EXPECT_LT(e[0].last_arrivals * 2, even.profile.collectives.size());
  EXPECT_LT(e[0].caused_ns * 3, w[0].caused_ns);
}

// The utilization lane is the rank's histogram read on the job clock: over
// its whole span it is the device's utilization; outside it, nothing.
TEST_F(JobViewTest, UtilizationLanesReadTheHistogramOnTheJobClock) {
  const JobData job = load_job(list_trace_inputs({write_job("j", options(4, 1))}));
  for (const JobRank& r : job.ranks) {
    const JobGpuLane& lane = r.gpus[0];
    EXPECT_LE(lane.activity.buckets(), kJobLaneBuckets);
    const TimeNs begin = lane.activity.begin() + r.offset, end = lane.activity.end() + r.offset;
    LaneSample whole;
    sample_utilization(r, lane, begin, static_cast<double>(end - begin), std::span(&whole, 1));
    const DeviceSummary* d = nullptr;
    for (const DeviceSummary& s : job.profile.devices)
      if (s.rank == r.rank) d = &s;
    ASSERT_NE(d, nullptr);
    EXPECT_NEAR(whole.busy, d->utilization, 0.01) << "rank " << r.rank;
    EXPECT_GT(whole.busy, 0.5);
    LaneSample before;
    sample_utilization(r, lane, begin - 2 * (end - begin), static_cast<double>(end - begin), std::span(&before, 1));
    EXPECT_EQ(before.busy, 0.0f);
  }
  // Compact: a fixed-size histogram per GPU plus the communication kernels
  // and which instance each is.
  std::size_t parts = 0;
  for (const JobRank& r : job.ranks) parts += r.gpus[0].parts.size();
  EXPECT_LE(job_lane_bytes(job), job.ranks.size() * (kJobLaneBuckets + 1) * 16 +
                                     parts * (sizeof(CollectivePart) + 2 * sizeof(std::uint32_t)) +
                                     job.ranks.size() * 64);
}

// A damaged file and a rank given twice are left out, named with why; the
// others are read. No file readable, or files of different runs: an error.
TEST_F(JobViewTest, BadFilesAreNamedAndTheRestShown) {
  const std::string d = write_job("j", options(5, 2));
  const fs::path bad = fs::path(d) / "rank-00003.gscope";
  fs::resize_file(bad, 100);  // cut inside its first sections: nothing to recover
  fs::copy_file(fs::path(d) / "rank-00001.gscope", fs::path(d) / "rank-00001-again.gscope");
  const JobData job = load_job(list_trace_inputs({d}));
  ASSERT_EQ(job.ranks.size(), 4u);
  for (const JobRank& r : job.ranks) EXPECT_NE(r.rank, 3);
  bool named_bad = false, named_again = false, named_missing = false;
  for (const LeftOut& l : job.left_out) {
    named_bad = named_bad || (l.file == bad.string() && l.problem.find("byte") != std::string::npos);
    named_again = named_again || l.file.find("rank-00001") != std::string::npos;
    named_missing = named_missing || (l.file.empty() && l.problem.find("rank 3") != std::string::npos);
  }
  EXPECT_TRUE(named_bad);
  EXPECT_TRUE(named_again);
  EXPECT_TRUE(named_missing);
  EXPECT_EQ(rank_waits(job).size(), 4u);
  EXPECT_EQ(job.ranks[rank_waits(job)[0].rank].rank, 2);  // the slow rank is still found

  fs::create_directories(dir_ / "junk");
  std::ofstream(dir_ / "junk" / "a.json") << "{not json";
  std::ofstream(dir_ / "junk" / "b.json") << "";
  EXPECT_THROW(load_job(list_trace_inputs({(dir_ / "junk").string()})), job::Error);

  // One file given twice: its rank is kept once, the second named as the report names it.
  const std::string r0 = (fs::path(d) / "rank-00000.gscope").string(),
                    r1 = (fs::path(d) / "rank-00001.gscope").string();
  const JobData twice = load_job({.files = {r0, r1, r0}});
  EXPECT_EQ(twice.ranks.size(), 2u);
  ASSERT_FALSE(twice.left_out.empty());
  EXPECT_EQ(twice.left_out[0].file, r0);
  EXPECT_NE(twice.left_out[0].problem.find("rank 0 again"), std::string::npos) << twice.left_out[0].problem;

  SyntheticJobOptions other = options(3, -1);
  other.command_line = "eval.py";
  const std::string o = write_job("other", other);
  try {
    load_job({.files = {fs::path(d) / "rank-00000.gscope", fs::path(d) / "rank-00001.gscope",
                        fs::path(o) / "rank-00002.gscope"}});
    FAIL() << "files of different runs must be refused";
  } catch (const job::Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.py"), std::string::npos) << e.what();
  }
}

// Ranks without any communication kernel: nothing to link, no culprit; the
// lanes are drawn all the same.
TEST_F(JobViewTest, RanksWithoutCollectivesHaveNoInstancesAndNoCulprit) {
  fs::create_directories(dir_ / "plain");
  for (int r = 0; r < 3; ++r) {
    testing::TraceFactory f(r);
    f.device(0);
    for (TimeNs t = 0; t < 100'000; t += 10'000) f.kernel(0, 7, testing::names::kSgd, t + 1'000, t + 6'000);
    write_gscope(f.build(), (dir_ / "plain" / ("r" + std::to_string(r) + ".gscope")).string());
  }
  const JobData job = load_job(list_trace_inputs({(dir_ / "plain").string()}));
  ASSERT_EQ(job.ranks.size(), 3u);
  EXPECT_TRUE(job.profile.collectives.empty());
  for (const RankWait& w : rank_waits(job)) EXPECT_EQ(w.caused_ns, 0);
  EXPECT_EQ(instance_of(job, 0, 0, 0), -1);
  EXPECT_TRUE(instance_parts(job, 0).empty());
  for (const JobRank& r : job.ranks) EXPECT_FALSE(r.gpus.empty());
}

// [SECTION] The view, with ImGui's null backend

class JobViewFrames : public JobViewTest {
 protected:
  void SetUp() override {
    JobViewTest::SetUp();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1280, 800);
    io.DeltaTime = 1.0f / 60;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  }
  void TearDown() override {
    ImGui::DestroyContext();
    JobViewTest::TearDown();
  }
  ImDrawData* frame(View& v) {
    ImGui::NewFrame();
    v.draw();
    ImGui::Render();
    ImGui::GetIO().MouseWheel = 0;
    return ImGui::GetDrawData();
  }
  void click(View& v, float x, float y, bool twice = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(x, y);
    frame(v);
    for (int i = 0; i < (twice ? 2 : 1); ++i) {
      io.MouseDown[0] = true;
      frame(v);
      io.MouseDown[0] = false;
      frame(v);
    }
  }
  static void wait_idle(const View& v) {
    for (int i = 0; i < 4000 && v.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
};

TEST_F(JobViewFrames, ClickingAPartLinksItsInstanceAndMarksTheLastArrival) {
  View v;
  v.open_job(list_trace_inputs({write_job("j", options(6, 4))}));
  wait_idle(v);
  frame(v);
  ASSERT_NE(v.job(), nullptr) << v.load_error();
  frame(v);
  const JobStats& js = v.stats().job;
  EXPECT_TRUE(js.shown);
  EXPECT_EQ(js.ranks, 6u);
  EXPECT_EQ(js.overview_marked, 4);
  ASSERT_FALSE(js.overview_order.empty());
  EXPECT_EQ(js.overview_order.front(), 4);
  EXPECT_EQ(js.stragglers.front(), 4);
  ASSERT_EQ(js.rank_list.size(), 6u);
  EXPECT_EQ(js.rank_list[2].header, "rank 2 · synthetic-node-2 · rank-00002.gscope");
  EXPECT_EQ(js.instance, -1);

  // Zoomed in on instance 12: its parts are wide enough to click one by one.
  ASSERT_TRUE(v.select_instance(12));
  v.focus_instance();
  frame(v);
  frame(v);
  const ClickTarget* part = nullptr;
  for (const ClickTarget& t : v.stats().job.part_targets)
    if (t.label == "rank 1 #13") part = &t;
  ASSERT_NE(part, nullptr) << "instance 13 of rank 1 is not drawn next to 12";
  const ClickTarget p13 = *part;
  click(v, p13.x, p13.y);
  frame(v);
  EXPECT_EQ(v.selected_instance(), 13);
  // F focuses it: every rank's part in view (the slow rank's began off the right edge).
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  io.KeysDown['F'] = true;
  frame(v);
  io.KeysDown['F'] = false;
  frame(v);
  const JobStats& after = v.stats().job;
  EXPECT_EQ(after.instance, 13);
  EXPECT_EQ(after.last_arrival_rank, 4);
  EXPECT_NE(after.last_arrival_text.find("last arrival: rank 4, others waited "), std::string::npos);
  ASSERT_EQ(after.instance_parts.size(), 6u);
  float min_x1 = 1e9f, max_x1 = -1e9f;
  for (const JobPartStats& p : after.instance_parts) {
    min_x1 = std::min(min_x1, p.x1);
    max_x1 = std::max(max_x1, p.x1);
    EXPECT_TRUE(p.visible) << "rank " << p.rank << " x " << p.x0 << ".." << p.x1 << " y " << p.y;
    EXPECT_EQ(p.last, p.rank == 4);
  }
  EXPECT_LT(max_x1 - min_x1, 2.0f);  // aligned clocks: the parts end together on screen

  // Esc clears it.
  constexpr int kEscape = 301;  // any free slot of io.KeysDown, mapped like a backend would
  io.KeyMap[ImGuiKey_Escape] = kEscape;
  io.KeysDown[kEscape] = true;
  frame(v);
  io.KeysDown[kEscape] = false;
  frame(v);
  EXPECT_EQ(v.selected_instance(), -1);
}

// Zoomed out over 64 ranks of thousands of parts, the frame stays bounded:
// ranks below the viewport are only measured, parts fold into blocks.
TEST_F(JobViewFrames, ManyRanksDrawOnlyWhatIsVisible) {
  SyntheticJobOptions o = options(64, 37);
  o.kernels = 5'000;
  View v;
  v.open_job(list_trace_inputs({write_job("j", o)}));
  wait_idle(v);
  frame(v);
  ASSERT_NE(v.job(), nullptr) << v.load_error();
  const ImDrawData* dd = frame(v);
  const JobStats& js = v.stats().job;
  EXPECT_EQ(js.overview_marked, 37);
  ASSERT_EQ(js.rank_list.size(), 64u);
  std::size_t visible = 0;
  std::uint64_t drawn = 0;
  for (const JobRankStats& r : js.rank_list) {
    visible += r.visible;
    if (!r.visible) {
      EXPECT_EQ(r.parts_drawn + r.parts_folded, 0u);
    }
    drawn += r.parts_drawn;
  }
  EXPECT_GT(visible, 3u);
  EXPECT_LT(visible, 20u);
  EXPECT_EQ(drawn, 0u);  // every part is narrower than 3 px zoomed out: folded
  EXPECT_LT(static_cast<std::uint64_t>(dd->TotalVtxCount), kMaxVertices);
  EXPECT_FALSE(js.rank_list.at(37).visible);

  // Focusing an instance scrolls to its last arrival, far below the first screen.
  ASSERT_TRUE(v.select_instance(3));
  v.focus_instance();
  frame(v);
  frame(v);
  const JobStats& focused = v.stats().job;
  EXPECT_TRUE(focused.rank_list.at(37).visible);
  EXPECT_FALSE(focused.rank_list.at(0).visible);
  bool last_shown = false;
  for (const JobPartStats& p : focused.instance_parts) last_shown = last_shown || (p.last && p.visible && p.rank == 37);
  EXPECT_TRUE(last_shown);
}

// Double-clicking a rank's header opens its file in the single-trace view;
// "back to the job" returns to the job view where it was.
TEST_F(JobViewFrames, FileOpenChoosesAFolderAsAJob) {
  const std::string d = write_job("picked", options(3, 1));
  View v;
  v.open((fs::path(d) / "rank-00000.gscope").string());
  wait_idle(v);
  frame(v);
  frame(v);
  ASSERT_NE(v.document(), nullptr) << v.load_error();
  ImGuiIO& io = ImGui::GetIO();
  io.KeyCtrl = true;
  io.KeysDown['O'] = true;
  frame(v);
  io.KeyCtrl = false;
  io.KeysDown['O'] = false;
  frame(v);
  frame(v);
  ASSERT_TRUE(v.browser().is_open());
  EXPECT_EQ(v.browser().dir(), d);  // the folder of the open trace
  const FileBrowser::Drawn* button = nullptr;
  for (const FileBrowser::Drawn& x : v.browser().drawn())
    if (x.name == FileBrowser::kOpenFolder) button = &x;
  ASSERT_NE(button, nullptr);
  click(v, button->x, button->y);
  EXPECT_FALSE(v.browser().is_open());
  wait_idle(v);
  frame(v);
  frame(v);
  ASSERT_NE(v.job(), nullptr);
  EXPECT_EQ(v.job()->ranks.size(), 3u);
  EXPECT_TRUE(v.stats().job.shown);
}

TEST_F(JobViewFrames, OpeningARankInFullAndComingBack) {
  View v;
  v.open_job(list_trace_inputs({write_job("j", options(3, -1))}));
  wait_idle(v);
  frame(v);
  ASSERT_NE(v.job(), nullptr);
  frame(v);
  // The +/- folds a rank's lanes and unfolds them.
  const ClickTarget fold = v.stats().job.fold_targets.at(2);
  EXPECT_EQ(fold.label, "rank 2");
  EXPECT_EQ(v.stats().job.rank_list.at(2).lanes, 2u);
  click(v, fold.x, fold.y);
  frame(v);
  EXPECT_TRUE(v.stats().job.rank_list.at(2).collapsed);
  EXPECT_EQ(v.stats().job.rank_list.at(2).lanes, 0u);
  click(v, fold.x, fold.y);
  frame(v);
  EXPECT_FALSE(v.stats().job.rank_list.at(2).collapsed);

  const std::vector<ClickTarget> headers = v.stats().job.rank_targets;
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[1].label, "rank 1");
  const TimeNs start = v.view_start();
  click(v, headers[1].x, headers[1].y, /*twice=*/true);
  wait_idle(v);
  frame(v);
  frame(v);
  ASSERT_NE(v.document(), nullptr) << v.load_error();
  EXPECT_EQ(fs::path(v.document()->path()).filename(), "rank-00001.gscope");
  EXPECT_FALSE(v.stats().job.shown);
  const auto& panels = v.stats().panels;
  EXPECT_NE(std::find(panels.begin(), panels.end(), "back_to_job"), panels.end());
  v.back_to_job();
  frame(v);
  EXPECT_EQ(v.document(), nullptr);
  EXPECT_TRUE(v.stats().job.shown);
  EXPECT_EQ(v.view_start(), start);
  EXPECT_FALSE(v.stats().job.rank_list.at(1).collapsed);  // the double-click opened it, folded nothing
}

}  // namespace
}  // namespace gpuscope::viewer
