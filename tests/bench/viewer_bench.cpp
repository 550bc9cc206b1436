// The viewer's frame cost on a 10M-kernel synthetic trace (targets:
// first frame <= 2 s after the file is read; every frame <= 8 ms of CPU and
// <= 300k vertices at any zoom). Frames are built with ImGui's null backend —
// NewFrame, View::draw, Render — which is all the CPU work of a real frame
// except the GL driver's (rasterization is the GPU's, or llvmpipe's, job).
//
//   build/bench/bench_viewer [--benchmark_filter=...]
//   GPUSCOPE_BENCH_KERNELS=1000000 build/bench/bench_viewer   (a smaller trace)
//   GPUSCOPE_BENCH_VERBOSE=1 build/bench/bench_viewer --benchmark_filter=ZoomSweep   (every frame's cost)
//   build/bench/bench_viewer --benchmark_filter=BM_JobFrame   (the job view: 64 ranks of 100k kernels)
//   build/bench/bench_viewer --benchmark_filter='BM_PanelFrame|BM_CompareFrame'   (each tab; two traces)
#include <benchmark/benchmark.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include <unistd.h>

#include "import/synthetic.h"
#include "import/synthetic_job.h"
#include "store/gscope.h"
#include "viewer/view.h"

namespace gv = gpuscope::viewer;
using gpuscope::TimeNs;

namespace {

std::uint64_t kernels_wanted() {
  const char* env = std::getenv("GPUSCOPE_BENCH_KERNELS");
  return env ? std::strtoull(env, nullptr, 10) : 10'000'000;
}

// CPU time of this thread: on a shared or loaded machine wall time mostly
// measures the other load.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One document for the whole program (generating 10M kernels takes a while).
std::shared_ptr<gv::Document> document() {
  static std::shared_ptr<gv::Document> d = [] {
    gpuscope::SyntheticOptions o;
    o.kernels = kernels_wanted();
    return std::make_shared<gv::Document>("synthetic", gpuscope::make_synthetic_trace(o));
  }();
  return d;
}

void ensure_profile() {
  if (!document()->profile())
    document()->set_profile(std::make_shared<const gpuscope::Profile>(gv::compute_profile(document()->trace())));
}

struct ImGuiNull {
  ImGuiNull() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1920, 1080);
    io.DeltaTime = 1.0f / 60;
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
  }
  ~ImGuiNull() { ImGui::DestroyContext(); }
  ImDrawData* frame(gv::View& v) {
    ImGui::NewFrame();
    v.draw();
    ImGui::Render();
    return ImGui::GetDrawData();
  }
};

void report(benchmark::State& state, const gv::View& v, const ImDrawData* dd) {
  state.counters["vertices"] = dd->TotalVtxCount;
  state.counters["drawn"] = static_cast<double>(v.stats().drawn);
  state.counters["folded_blocks"] = static_cast<double>(v.stats().merged_blocks);
  state.counters["folded_events"] = static_cast<double>(v.stats().merged_events);
  state.counters["kernels"] = static_cast<double>(v.document()->trace().kernels().size());
}

// Stage 1 of loading after the read: the timeline index (track lanes and the
// precomputed utilization / concurrency lanes), then the first frame.
// (Document's constructor builds exactly this index; the shared document
// already has one, so the timing builds a second.)
void BM_FirstFrameAfterRead(benchmark::State& state) {
  const std::shared_ptr<gv::Document> doc = document();  // generated outside the timing
  ImGuiNull imgui;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_s();
    const gv::TimelineIndex ix = gv::TimelineIndex::build(doc->trace());
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = thread_cpu_s();
    gv::View v;
    v.set_document(doc);
    ImDrawData* dd = imgui.frame(v);
    const auto t2 = std::chrono::steady_clock::now();
    const double c2 = thread_cpu_s();
    state.SetIterationTime(std::chrono::duration<double>(t2 - t0).count());
    state.counters["index_s"] = std::chrono::duration<double>(t1 - t0).count();
    state.counters["index_cpu_s"] = c1 - c0;
    state.counters["first_cpu_s"] = c2 - c0;  // index + first frame, CPU
    state.counters["frame_ms"] = std::chrono::duration<double, std::milli>(t2 - t1).count();
    state.counters["index_MB"] = static_cast<double>(ix.memory_bytes()) / 1e6;
    state.counters["trace_MB"] = static_cast<double>(doc->trace().memory_bytes()) / 1e6;
    report(state, v, dd);
  }
}
BENCHMARK(BM_FirstFrameAfterRead)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

// Steady frames at a given zoom: 0 = whole trace, else a window of that many
// ns in the middle of the run. Each iteration pans by a few pixels so nothing
// could be reused between frames (nothing is).
void BM_Frame(benchmark::State& state) {
  ImGuiNull imgui;
  gv::View v;
  v.set_document(document());
  const gpuscope::Trace& t = document()->trace();
  const TimeNs window = state.range(0) == 0 ? t.end_time() - t.begin_time() : state.range(0);
  const TimeNs mid = t.begin_time() + (t.end_time() - t.begin_time()) / 2 - window / 2;
  v.zoom_to(mid, mid + window);
  imgui.frame(v);
  ImDrawData* dd = nullptr;
  TimeNs shift = 0;
  for (auto _ : state) {
    shift += window / 500;
    v.zoom_to(mid + shift % (window / 10 + 1), mid + shift % (window / 10 + 1) + window);
    dd = imgui.frame(v);
  }
  report(state, v, dd);
}
BENCHMARK(BM_Frame)
    ->ArgName("window_ns")
    ->Arg(0)              // whole trace
    ->Arg(1'000'000'000)  // 1 s
    ->Arg(100'000'000)    // 100 ms
    ->Arg(10'000'000)     // 10 ms: a step or two
    ->Arg(1'000'000)      // 1 ms
    ->Arg(100'000)        // 100 µs: single kernels
    ->Unit(benchmark::kMillisecond);

// "Every frame, at any zoom": one frame at each of ~24 zoom levels (the
// whole trace, then halving down to 10 µs) at three positions each, repeated
// per iteration. Counters: worst_cpu_ms is the costliest (level, position)
// taking each one's cheapest repetition — the frame's own cost, without the
// other tenants of a shared VM (whose stolen time lands in thread CPU time
// too); raw_max_cpu_ms is the single worst frame measured, noise included.
void BM_ZoomSweep(benchmark::State& state) {
  ImGuiNull imgui;
  gv::View v;
  v.set_document(document());
  imgui.frame(v);
  const gpuscope::Trace& t = document()->trace();
  const double span = static_cast<double>(t.end_time() - t.begin_time());
  const bool verbose = std::getenv("GPUSCOPE_BENCH_VERBOSE") != nullptr;
  std::vector<double> best;  // per (level, position): cheapest repetition
  double raw_max = 0, sum_ms = 0, frames = 0, worst_vtx = 0, worst_items = 0;
  for (auto _ : state) {
    std::size_t k = 0;
    for (double w = span; w >= 10'000; w /= 2)
      for (double pos : {0.25, 0.5, 0.75}) {
        const TimeNs s = t.begin_time() + static_cast<TimeNs>((span - w) * pos);
        v.zoom_to(s, s + static_cast<TimeNs>(w));
        const double c0 = thread_cpu_s();
        const ImDrawData* dd = imgui.frame(v);
        const double ms = (thread_cpu_s() - c0) * 1e3;
        if (verbose)
          std::fprintf(stderr, "window %.0f ns at %.2f: %.3f ms, %d vertices, %llu drawn, %llu folded\n", w, pos, ms,
                       dd->TotalVtxCount, static_cast<unsigned long long>(v.stats().drawn),
                       static_cast<unsigned long long>(v.stats().merged_blocks));
        if (k == best.size()) best.push_back(ms);
        best[k] = std::min(best[k], ms);
        ++k;
        raw_max = std::max(raw_max, ms);
        sum_ms += ms;
        ++frames;
        worst_vtx = std::max(worst_vtx, static_cast<double>(dd->TotalVtxCount));
        worst_items = std::max(worst_items, static_cast<double>(v.stats().drawn + v.stats().merged_blocks));
      }
  }
  state.counters["frames"] = static_cast<double>(best.size());
  state.counters["worst_cpu_ms"] = *std::max_element(best.begin(), best.end());
  state.counters["mean_cpu_ms"] = sum_ms / frames;
  state.counters["raw_max_cpu_ms"] = raw_max;
  state.counters["worst_vertices"] = worst_vtx;
  state.counters["worst_items"] = worst_items;
}
BENCHMARK(BM_ZoomSweep)->Iterations(5)->Unit(benchmark::kMillisecond);

// The other panels on the same trace (they read the Profile, not the trace),
// the timeline above them included. Range: the middle second selected, its
// statistics ready; histogram: of the kernel with the most time; compare: the
// trace compared with itself, B's tracks drawn under A's and the diff's tables.
void BM_PanelFrame(benchmark::State& state) {
  ensure_profile();
  ImGuiNull imgui;
  gv::View v;
  v.set_document(document());
  const auto panel = static_cast<gv::Panel>(state.range(0));
  const gpuscope::Trace& t = document()->trace();
  if (panel == gv::Panel::range) {
    const TimeNs mid = t.begin_time() + (t.end_time() - t.begin_time()) / 2;
    v.select_range(mid, mid + 1'000'000'000);
    while (!v.range_stats()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } else if (panel == gv::Panel::histogram) {
    v.show_histogram_of(document()->profile()->hotspots.front().name);
  } else if (panel == gv::Panel::compare) {
    v.set_compare_document(document());
  }
  v.show(panel);
  imgui.frame(v);
  ImDrawData* dd = nullptr;
  for (auto _ : state) dd = imgui.frame(v);
  report(state, v, dd);
  state.SetLabel(std::string(gv::to_string(v.panel())));
}
BENCHMARK(BM_PanelFrame)
    ->Arg(static_cast<int>(gv::Panel::hotspots))
    ->Arg(static_cast<int>(gv::Panel::ops))
    ->Arg(static_cast<int>(gv::Panel::findings))
    ->Arg(static_cast<int>(gv::Panel::summary))
    ->Arg(static_cast<int>(gv::Panel::range))
    ->Arg(static_cast<int>(gv::Panel::histogram))
    ->Arg(static_cast<int>(gv::Panel::compare))
    ->Unit(benchmark::kMillisecond);

// The trace compared with itself, A's GPU groups collapsed (a click on each
// header) so that B's GPU tracks are on screen: both traces' timelines in one
// frame, the whole trace in view (the Compare tab's cost: BM_PanelFrame/7).
void BM_CompareFrame(benchmark::State& state) {
  ensure_profile();
  ImGuiNull imgui;
  gv::View v;
  v.set_document(document());
  v.set_compare_document(document());
  v.show(gv::Panel::timeline);  // the Details tab, empty: the timeline has the window
  imgui.frame(v);
  ImGuiIO& io = ImGui::GetIO();
  for (int clicks = 0, more = 1; more && clicks < 64; ++clicks) {  // A's GPUs, one at a time
    more = 0;
    for (const gv::GroupStats& g : v.stats().groups)
      if (!g.collapsed && g.label.starts_with("GPU ") && g.y < io.DisplaySize.y / 2) {
        io.MousePos = ImVec2(30, g.y + 5);
        imgui.frame(v);
        io.MouseDown[0] = true;
        imgui.frame(v);
        io.MouseDown[0] = false;
        imgui.frame(v);
        more = 1;
        break;
      }
  }
  io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  ImDrawData* dd = imgui.frame(v);
  for (auto _ : state) dd = imgui.frame(v);
  std::uint64_t b_tracks = 0;
  for (const gv::TrackStats& ts : v.stats().tracks) b_tracks += ts.compared && ts.visible;
  state.counters["b_tracks"] = static_cast<double>(b_tracks);
  report(state, v, dd);
}
BENCHMARK(BM_CompareFrame)->Unit(benchmark::kMillisecond);

// Clicking the heaviest framework op: its kernels found (one pass over the
// ranges and one over the kernels), highlighted, the first selected.
void BM_SelectOp(benchmark::State& state) {
  ensure_profile();
  ImGuiNull imgui;
  gv::View v;
  v.set_document(document());
  v.show(gv::Panel::ops);
  imgui.frame(v);
  const auto& ops = document()->profile()->op_names;
  if (ops.empty()) {
    state.SkipWithError("the synthetic trace has no framework ops");
    return;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    // The two heaviest in turn: each a fresh click, not a step to the op's next kernel.
    v.select_op(ops[i++ % std::min<std::size_t>(2, ops.size())].name);
    benchmark::DoNotOptimize(v.matches().size());
  }
  state.counters["kernels"] = static_cast<double>(v.matches().size());
}
BENCHMARK(BM_SelectOp)->Unit(benchmark::kMillisecond)->Iterations(4);

// Searching every name and building the match lists (on a keystroke).
void BM_Search(benchmark::State& state) {
  ImGuiNull imgui;
  gv::View v;
  v.set_document(document());
  for (auto _ : state) {
    v.set_search("bn_fw_tr", false);
    benchmark::DoNotOptimize(v.matches().size());
  }
  state.counters["matches"] = static_cast<double>(v.matches().size());
}
BENCHMARK(BM_Search)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

// The job view: 64 synthetic ranks of 100k kernels (rank 37 slow), written
// to a temporary folder once and read with load_job. Frames of the whole job,
// of 100 ms and 1 ms from its start, and of instance 4000 focused; each
// iteration pans by a few pixels. CPU time of the frame's thread.
std::shared_ptr<const gv::JobData> job() {
  static std::shared_ptr<const gv::JobData> j = [] {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("gpuscope-bench-job-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    gpuscope::SyntheticJobOptions o;
    o.ranks = 64;
    o.kernels = 100'000;
    o.slow_rank = 37;
    const gpuscope::SyntheticJob synth(o);
    std::vector<std::string> files;
    for (std::uint32_t r = 0; r < o.ranks; ++r) {
      files.push_back((dir / ("rank-" + std::to_string(1000 + r) + ".gscope")).string());
      gpuscope::write_gscope(synth.rank_trace(r), files.back());
    }
    auto loaded = std::make_shared<const gv::JobData>(gv::load_job({.files = files}));
    fs::remove_all(dir);
    return loaded;
  }();
  return j;
}

void BM_JobFrame(benchmark::State& state) {
  ImGuiNull imgui;
  gv::View v;
  v.set_job(job());
  const gpuscope::TimeRange w = job()->window;
  const TimeNs window = state.range(0) == 0 ? w.end - w.start : state.range(0);
  TimeNs start = w.start;
  if (state.range(0) < 0) {
    v.select_instance(4000);
    v.focus_instance();
    imgui.frame(v);
    start = v.view_start();
  }
  const TimeNs span = state.range(0) < 0 ? v.view_end() - v.view_start() : window;
  imgui.frame(v);
  ImDrawData* dd = nullptr;
  double cpu = 0;
  TimeNs shift = 0;
  for (auto _ : state) {
    shift += span / 500;
    v.zoom_to(start + shift % (span / 10 + 1), start + shift % (span / 10 + 1) + span);
    const double c0 = thread_cpu_s();
    dd = imgui.frame(v);
    cpu += thread_cpu_s() - c0;
  }
  state.counters["frame_cpu_ms"] = 1e3 * cpu / static_cast<double>(state.iterations());
  state.counters["vertices"] = dd->TotalVtxCount;
  state.counters["lane_MB"] = static_cast<double>(gv::job_lane_bytes(*job())) / 1e6;
}
BENCHMARK(BM_JobFrame)
    ->ArgName("window_ns")
    ->Arg(0)            // the whole job
    ->Arg(100'000'000)  // 100 ms
    ->Arg(1'000'000)    // 1 ms
    ->Arg(-1)           // instance 4000 focused
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
