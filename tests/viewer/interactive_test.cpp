// gpuscope-view driven as a user drives it: the real window on an Xvfb
// display, the mouse and keys moved by xdotool (XTEST), and what each frame
// drew read from --frame-json (the headless OUT.json's content, written
// after every frame). The tests assert on that JSON; they never read pixels.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "analysis/window_stats.h"
#include "import/chrome_json.h"
#include "support/real_traces.h"
#include "trace/trace.h"
#include "viewer/text.h"
#include "words/format.h"

extern char** environ;

namespace gpuscope::viewer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A child process started here, ended (by its id) when the test ends.
class Child {
 public:
  Child() = default;
  explicit Child(const std::vector<std::string>& argv, const fs::path& log = {}) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!log.empty()) {
      posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
    }
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  Child(Child&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
  Child& operator=(Child&& o) noexcept {
    std::swap(pid_, o.pid_);
    return *this;
  }
  ~Child() { stop(); }
  bool running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (::waitpid(pid_, nullptr, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

class Interactive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(GPUSCOPE_XVFB).empty() || std::string(GPUSCOPE_XDOTOOL).empty())
      GTEST_SKIP() << "Xvfb or xdotool is not installed (apt-get install xvfb xdotool)";
    dir_ = fs::temp_directory_path() / cat("gpuscope-view-ui-", std::to_string(::getpid()), "-",
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);  // the viewer's remembered layout: the test's own, empty
    start_display();
  }
  void TearDown() override {
    viewer_.stop();
    display_.stop();
    if (!dir_.empty() && !::testing::Test::HasFailure()) fs::remove_all(dir_);
  }

  // An Xvfb server on the first free display from :90.
  void start_display() {
    for (int n = 90; n < 140; ++n) {
      const std::string num = std::to_string(n);
      const fs::path socket = cat("/tmp/.X11-unix/X", num);
      if (fs::exists(socket) || fs::exists(cat("/tmp/.X", num, "-lock"))) continue;
      // Larger than the window, so the pointer can come into it from outside.
      display_ =
          Child({GPUSCOPE_XVFB, cat(":", num), "-screen", "0", "1400x900x24", "-nolisten", "tcp"}, dir_ / "xvfb.log");
      for (int i = 0; i < 100 && !fs::exists(socket); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (display_.running()) {
        display_name_ = cat(":", num);
        ::setenv("DISPLAY", display_name_.c_str(), 1);
        return;
      }
    }
    FAIL() << "no Xvfb display could be started";
  }

  // gpuscope-view on the display, writing its frames' JSON; returns once a frame is written.
  void start_viewer(std::vector<std::string> args) {
    std::vector<std::string> argv = {GPUSCOPE_VIEW_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--frame-json", frame_json().string(), "--size", "1280x800"});
    viewer_ = Child(argv, dir_ / "viewer.log");
    frame([](const json& j) { return j.contains("panels"); });
    // The pointer comes into the window from outside, as a hand's does: GLFW
    // then tracks it whether or not the window has the keyboard focus.
    for (int attempt = 0; attempt < 3; ++attempt) {
      xdo("mousemove 1390 890");
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      move(640, 400);
      if (frame_within(3, [](const json& j) { return j["mouse"] == json::array({640.0, 400.0}); })) return;
    }
    ADD_FAILURE() << "the viewer does not see the pointer";
  }
  // Whether a frame for which `ready` holds comes within `seconds`.
  bool frame_within(int seconds, const std::function<bool(const json&)>& ready) {
    for (int i = 0; i < seconds * 20; ++i) {
      std::ifstream f(frame_json());
      try {
        if (f.good() && ready(json::parse(f))) return true;
      } catch (const json::exception&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  fs::path frame_json() const { return dir_ / "frame.json"; }

  // The latest frame for which `ready` holds, waiting for it (120 s at most:
  // CI runs these beside the fuzz targets' build on two cores).
  json frame(const std::function<bool(const json&)>& ready, const char* what = "the frame") {
    json last;
    for (int i = 0; i < 2400; ++i) {
      std::ifstream f(frame_json());
      if (f.good()) {
        try {
          last = json::parse(f);
          if (ready(last)) return last;
        } catch (const json::exception&) {  // written through a rename: whole or absent; try again
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    json brief = json::object();  // what tells where the view was
    for (const char* k : {"view", "visible_range", "range", "selection", "highlight", "panels", "message", "mouse"})
      if (last.contains(k)) brief[k] = last[k];
    if (brief.contains("range") && brief["range"].is_object()) brief["range"].erase("stats");
    ADD_FAILURE() << "timed out waiting for " << what << "; last frame: " << brief.dump();
    return last;
  }
  // The frame once everything the viewer loads or computes is ready and drawn.
  json settled(const std::function<bool(const json&)>& also = [](const json&) { return true; }) {
    return frame([&](const json& j) { return j.value("analysis", "") == "done" && also(j); }, "a settled frame");
  }

  // xdotool on the display, in the window's coordinates.
  void xdo(const std::string& args) {
    const std::string cmd = cat("DISPLAY=", display_name_, " ", GPUSCOPE_XDOTOOL, " ", args, " >/dev/null 2>&1");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::string window() {
    if (window_.empty()) {
      const std::string out = (dir_ / "wid").string();
      const std::string cmd = cat("DISPLAY=", display_name_, " ", GPUSCOPE_XDOTOOL,
                                  " search --sync --name '^gpuscope-view$' > ", out, " 2>/dev/null");
      EXPECT_EQ(std::system(cmd.c_str()), 0);
      std::ifstream f(out);
      std::getline(f, window_);
    }
    return window_;
  }
  void move(float x, float y) {
    xdo(cat("mousemove --window ", window(), " ", std::to_string(static_cast<int>(x)), " ",
            std::to_string(static_cast<int>(y))));
  }
  // Move, press, release, a frame apart each, as a hand does.
  void click(float x, float y) {
    const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(120)); };
    move(x, y);
    pause();
    xdo("mousedown 1");
    pause();
    xdo("mouseup 1");
    pause();
  }
  // Press, move in steps, release: a drag, a frame apart each (ImGui 1.86
  // reads the mouse once a frame: a press and a move in one frame would
  // press where the move went, which a hand is never fast enough to do).
  void drag(float xa, float ya, float xb, float yb) {
    const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(120)); };
    move(xa, ya);
    pause();
    xdo("mousedown 1");
    pause();
    for (int i = 1; i <= 5; ++i) {
      move(xa + (xb - xa) * static_cast<float>(i) / 5, ya + (yb - ya) * static_cast<float>(i) / 5);
      pause();
    }
    xdo("mouseup 1");
  }
  // A tab of the bottom panel, where the latest frame drew it.
  void click_tab(const std::string& label) {
    const json j = frame([&](const json& f) { return f["tabs"].contains(label); }, "the tab");
    click(j["tabs"][label]["x"], j["tabs"][label]["y"]);
  }
  // A key held for a few frames (ImGui 1.86 sees a key only if a frame starts while it is down).
  void key(const std::string& k) {
    xdo(cat("keydown ", k));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    xdo(cat("keyup ", k));
  }
  // What `where` finds in the latest frame, the panel under it scrolled with
  // the wheel until it is in the window (null: not in the frame).
  // Each turn of the wheel waits for the frame that moved it (a loaded
  // machine draws late: a stale position would scroll past it).
  json on_screen(const std::function<json(const json&)>& where) {
    json t;
    for (int i = 0; i < 30; ++i) {
      const json j = settled();
      t = where(j);
      if (!t.is_object()) return t;
      const float y = t["y"], top = j["bottom_splitter"]["y"].get<float>() + 30;
      if (y >= top && y < 770) return t;
      move(t["x"].get<float>(), std::max(top + 20, 400.0f));
      xdo(y < top ? "click 4" : "click 5");  // the wheel, up or down
      frame_within(5, [&](const json& f) {
        const json n = where(f);
        return !n.is_object() || n["y"].get<float>() != y;
      });
    }
    ADD_FAILURE() << "not scrolled into the window: " << t.dump();
    return t;
  }
  // A screenshot of the display, to look at when a test fails (xwd: X's own dump format).
  void keep_screenshot(const std::string& name) {
    const std::string cmd =
        cat("DISPLAY=", display_name_, " xwd -root -silent > ", (dir_ / (name + ".xwd")).string(), " 2>/dev/null");
    (void)std::system(cmd.c_str());
  }

  fs::path dir_;
  Child display_, viewer_;
  std::string display_name_, window_;
};

// Drag on the ruler: the range's length on the ruler, the Range tab with its
// statistics (window_stats() over it, the report's numbers); Z zooms to it.
TEST_F(Interactive, DragOnTheRulerSelectsARangeAndShowsItsStatistics) {
  const std::string file = testing::real_trace("kineto-resnet50-v100-workers0.json.gz");
  start_viewer({file});
  const json j0 = settled();
  const float x0 = j0["timeline_x0"], w = j0["timeline_width_px"], ruler = j0["ruler_y"];
  drag(x0 + w * 0.2f, ruler, x0 + w * 0.45f, ruler);
  const json j = settled([](const json& f) { return f["range"].is_object() && f["range"]["status"] == "done"; });
  EXPECT_EQ(j["view"], "range");
  const json& r = j["range"];
  // The range is where the mouse went (a pixel is view / width ns).
  const double ns_per_px = (j0["visible_range"]["duration_ns"].get<double>()) / w;
  const double want_start = j0["visible_range"]["start_ns"].get<double>() + ns_per_px * static_cast<int>(w * 0.2f);
  EXPECT_NEAR(r["start_ns"].get<double>(), want_start, 2 * ns_per_px);
  EXPECT_EQ(r["length"], format::duration(r["duration_ns"].get<TimeNs>()));
  const Trace t = import_chrome_json(file);
  const WindowStats want = window_stats(t, {r["start_ns"].get<TimeNs>(), r["end_ns"].get<TimeNs>()});
  EXPECT_EQ(r["stats"]["kernels"], want.kernels);
  EXPECT_EQ(r["stats"]["kernel_time_ns"], want.kernel_time_ns);
  ASSERT_FALSE(r["device_rows"].empty());
  EXPECT_EQ(r["device_rows"][0][1], format::duration(want.devices.at(0).busy_ns));
  ASSERT_FALSE(r["kernel_rows"].empty());
  EXPECT_EQ(r["kernel_rows"][0][2], format::duration(want.kernel_names.at(0).total_ns));

  key("z");
  const json z =
      frame([&](const json& f) { return f["visible_range"]["duration_ns"] < r["duration_ns"].get<double>() * 1.2; },
            "the zoom to the range");
  EXPECT_LE(z["visible_range"]["start_ns"].get<TimeNs>(), r["start_ns"].get<TimeNs>());
  EXPECT_GE(z["visible_range"]["end_ns"].get<TimeNs>(), r["end_ns"].get<TimeNs>());
  keep_screenshot("range");
}

// Hotspots > a kernel's "histogram": the durations of its instances; a
// click on a bar selects the first of them on the timeline, another the next.
TEST_F(Interactive, AHistogramOfAKernelAndItsBinsInstancesOneAfterAnother) {
  const std::string file = testing::real_trace("kineto-resnet50-v100-workers0.json.gz");
  start_viewer({file});
  settled();
  click_tab("Hotspots");
  const json hot = settled([](const json& f) { return !f["hotspot_histogram_buttons"].empty(); });
  const json& button = hot["hotspot_histogram_buttons"][0];
  const std::string kernel = button["kernel"];
  click(button["x"], button["y"]);
  const json h = settled([](const json& f) { return f["histogram"].is_object() && f["histogram"]["shown"] == true; });
  EXPECT_EQ(h["view"], "histogram");
  EXPECT_EQ(h["histogram"]["name"], kernel);
  const Trace t = import_chrome_json(file);
  const StringId id = t.strings().find(kernel);
  std::uint64_t n = 0;
  for (RowIndex r = 0; r < t.kernels().size(); ++r) n += t.kernels().name[r] == id;
  EXPECT_EQ(h["histogram"]["count"], n);
  // The fullest bar.
  const json& bins = h["histogram"]["bins"];
  std::size_t best = 0;
  for (std::size_t b = 0; b < bins.size(); ++b)
    if (bins[b]["count"] > bins[best]["count"]) best = b;
  const TimeNs lo = bins[best]["lo_ns"], hi = bins[best]["hi_ns"];
  click(bins[best]["x"], bins[best]["y"]);
  const json s1 = settled([](const json& f) { return f["selection"].is_object() && !f["histogram"]["step"].empty(); });
  EXPECT_EQ(s1["histogram"]["selected_bin"], best);
  EXPECT_EQ(s1["highlight"]["matches"], bins[best]["count"]);
  const TimeNs d1 = s1["selection"]["end_ns"].get<TimeNs>() - s1["selection"]["start_ns"].get<TimeNs>();
  EXPECT_GE(d1, lo);
  EXPECT_LT(d1, hi);
  EXPECT_EQ(s1["selection"]["name"], kernel);
  if (bins[best]["count"].get<int>() > 1) {
    const std::string step1 = s1["histogram"]["step"];
    click(bins[best]["x"], bins[best]["y"]);
    const json s2 = settled([&](const json& f) { return f["histogram"]["step"] != step1; });
    EXPECT_GT(s2["selection"]["start_ns"].get<TimeNs>(), s1["selection"]["start_ns"].get<TimeNs>());
    const TimeNs d2 = s2["selection"]["end_ns"].get<TimeNs>() - s2["selection"]["start_ns"].get<TimeNs>();
    EXPECT_GE(d2, lo);
    EXPECT_LT(d2, hi);
  }
}

// Findings > a finding: its first time range shown; ] and the next button
// step to the following ones, the view going with them.
TEST_F(Interactive, AFindingsEvidenceIsSteppedThroughRangeByRange) {
  const std::string file = std::string(GPUSCOPE_SOURCE_DIR) + "/assets/sample-report-job.gscope";
  start_viewer({file});
  settled();
  click_tab("Findings");
  settled([](const json& j) { return !j["finding_titles"].empty(); });
  const std::string id = "padding-hotspot";  // over kernels: they are highlighted
  const json title = on_screen([&](const json& j) {
    for (const json& t : j["finding_titles"])
      if (t["id"] == id) return t;
    return json();
  });
  ASSERT_TRUE(title.is_object()) << id;
  click(title["x"], title["y"]);
  auto shows = [](const json& j, const json& range) {
    return j["visible_range"]["start_ns"] <= range["start_ns"] && j["visible_range"]["end_ns"] >= range["end_ns"];
  };
  // The view moves to a range in the frames after the one that selects it:
  // wait for a frame that shows it (a view that never gets there times out).
  auto at_range = [&](int index) {
    return [&shows, index](const json& j) {
      const json& e = j["savings"]["evidence"];
      return e.is_object() && e["index"] == index && shows(j, e["current"]);
    };
  };
  const json s0 = settled(at_range(0));
  const json& e0 = s0["savings"]["evidence"];
  EXPECT_EQ(e0["finding"], id);
  ASSERT_GE(e0["count"].get<int>(), 3);
  EXPECT_EQ(e0["step"], cat("range 1 of ", std::to_string(e0["count"].get<int>())));
  EXPECT_EQ(s0["highlight"]["label"], cat("finding: ", id));

  key("bracketright");
  const json s1 = settled(at_range(1));
  EXPECT_NE(s1["visible_range"]["start_ns"], s0["visible_range"]["start_ns"]);

  const json next = on_screen([](const json& j) { return j["savings"]["evidence"]["next"]; });
  click(next["x"], next["y"]);
  const json s2 = settled(at_range(2));
  EXPECT_EQ(s2["savings"]["evidence"]["step"], cat("range 3 of ", std::to_string(e0["count"].get<int>())));
}

// Two traces: B's tracks under A's, and the Compare tab's kernel and finding
// tables holding what `gpuscope diff --json` computes, sorted by a click on
// a header; the alignment toggle moves B from its first step to its start.
TEST_F(Interactive, TwoTracesComparedAsGpuscopeDiffComparesThem) {
  const std::string a = testing::real_trace("kineto-resnet50-v100-workers0.json.gz");
  const std::string b = testing::real_trace("kineto-resnet50-v100-workers4.json.gz");
  const fs::path out = dir_ / "diff.json";
  const std::string cmd = cat(GPUSCOPE_CLI_BIN, " diff ", a, " ", b, " --json --top 50 -o ", out.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream diff_file(out);
  const json diff = json::parse(diff_file);

  start_viewer({a, b, "--view", "compare"});
  auto compared = [](const json& j) { return j.contains("compare") && j["compare"]["analysis"] == "done"; };
  const json j0 = settled([&](const json& j) { return compared(j) && j["compare"]["tabs"].contains("Kernels"); });
  EXPECT_TRUE(j0["compare"]["timeline"].get<bool>());
  EXPECT_EQ(j0["compare"]["align"], "aligned on the first step");
  const TimeNs by_step = j0["compare"]["offset_ns"];

  click(j0["compare"]["tabs"]["Kernels"]["x"], j0["compare"]["tabs"]["Kernels"]["y"]);
  const json k = settled([&](const json& j) { return compared(j) && j["compare"]["table"] == "kernels"; });
  const json& rows = k["compare"]["rows"];
  ASSERT_EQ(rows.size(), diff["kernels"].size());
  for (std::size_t i = 0; i < rows.size(); ++i) {  // the diff's order
    const json& want = diff["kernels"][i];
    EXPECT_EQ(rows[i][0], want["name"]) << i;
    EXPECT_EQ(rows[i][2], format::duration(want["before_ns"].get<TimeNs>())) << i;
    EXPECT_EQ(rows[i][3], format::duration(want["after_ns"].get<TimeNs>())) << i;
  }
  // "change": largest first after a click.
  const json& header = k["compare"]["headers"]["change"];
  click(header["x"], header["y"]);
  const json sorted = settled([&](const json& j) { return compared(j) && j["compare"]["rows"] != rows; });
  std::map<std::string, TimeNs> change;
  for (const json& want : diff["kernels"])
    change[want["name"]] = want["after_ns"].get<TimeNs>() - want["before_ns"].get<TimeNs>();
  std::vector<TimeNs> col;
  for (const json& r : sorted["compare"]["rows"]) col.push_back(change.at(r[0]));
  EXPECT_TRUE(std::is_sorted(col.rbegin(), col.rend()));

  click(sorted["compare"]["tabs"]["Findings"]["x"], sorted["compare"]["tabs"]["Findings"]["y"]);
  const json f = settled([&](const json& j) { return compared(j) && j["compare"]["table"] == "findings"; });
  ASSERT_EQ(f["compare"]["rows"].size(), diff["findings"].size());
  for (std::size_t i = 0; i < diff["findings"].size(); ++i) {
    EXPECT_EQ(f["compare"]["rows"][i][0], diff["findings"][i]["id"]);
    EXPECT_EQ(f["compare"]["rows"][i][1], diff["findings"][i]["change"]);
  }

  const json& align = f["compare"]["toggles"]["align on step"];
  click(align["x"], align["y"]);
  const json s = settled([&](const json& j) { return compared(j) && j["compare"]["align"] == "aligned on the start"; });
  EXPECT_NE(s["compare"]["offset_ns"].get<TimeNs>(), by_step);
  keep_screenshot("compare");
}

}  // namespace
}  // namespace gpuscope::viewer
