// The viewer's frames built with ImGui's null backend: no window, no GL — a
// font atlas, a display size, NewFrame / View::draw / Render, then assertions
// on ImDrawData and on what View::stats() says it drew. Input is synthetic
// (io.MousePos, io.MouseDown, io.MouseWheel, io.KeysDown as ImGui 1.86 reads them).
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <unistd.h>

#include "export/report_text.h"
#include "import/synthetic.h"
#include "store/gscope.h"
#include "support/test_traces.h"
#include "trace/error.h"
#include "trace/time_columns.h"
#include "viewer/colors.h"
#include "viewer/view.h"
#include "viewer/view_fixture.h"
#include "words/format.h"

namespace gpuscope::viewer {
namespace {

TEST_F(ViewTest, WelcomeScreenWithoutATrace) {
  View v;
  ImDrawData* dd = frame(v);
  EXPECT_TRUE(has_panel(v, "welcome"));
  EXPECT_GT(dd->TotalVtxCount, 0);
}

TEST_F(ViewTest, DrawsEveryTrackOfASmallTrace) {
  testing::TrainingTraceOptions o;
  o.kernels = 10'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  ImDrawData* dd = frame(v);
  const auto& ix = v.document()->index();
  EXPECT_EQ(v.stats().tracks.size(), ix.tracks().size());
  EXPECT_EQ(v.stats().groups.size(), ix.groups().size());
  EXPECT_TRUE(has_panel(v, "timeline"));
  EXPECT_TRUE(has_panel(v, "details"));
  EXPECT_GT(v.stats().drawn + v.stats().merged_blocks, 0u);
  EXPECT_GT(v.stats().lane_columns, 0u);
  EXPECT_LE(static_cast<std::uint64_t>(dd->TotalVtxCount), kMaxVertices);
  // Whole trace in view, with a little air at both ends.
  EXPECT_LE(v.view_start(), v.document()->trace().begin_time());
  EXPECT_GE(v.view_end(), v.document()->trace().end_time());
}

TEST_F(ViewTest, ZoomedOutLargeTraceFoldsIntoBoundedBlocks) {
  testing::TrainingTraceOptions o;
  o.kernels = 1'000'000;
  o.gpus = 2;
  o.streams = 4;
  View v;
  v.set_document(doc(o, false));
  ImGui::GetIO().DisplaySize = ImVec2(1280, 1400);  // every GPU track on screen
  frames(v, 2);
  ImDrawData* dd = frame(v);
  std::uint64_t blocks = 0, merged = 0;
  const std::uint64_t drawn = drawn_on_gpu(v, &blocks, &merged);
  std::uint64_t gpu_tracks = 0;
  for (const TrackStats& ts : v.stats().tracks)
    gpu_tracks += ts.visible && v.document()->trace().tracks()[ts.track].kind == TrackKind::gpu;
  EXPECT_EQ(gpu_tracks, 8u);
  // Every visible event is accounted for, one by one or inside a block…
  EXPECT_EQ(drawn + merged, visible_gpu_events(v));
  // …and the blocks are bounded by the screen, not by the trace.
  EXPECT_GT(blocks, 0u);
  EXPECT_LE(drawn + blocks, gpu_tracks * static_cast<std::uint64_t>(v.stats().timeline_width_px / 3 + 2));
  EXPECT_LE(static_cast<std::uint64_t>(dd->TotalVtxCount), kMaxVertices);
}

// The TensorFlow-like synthetic job with the report's pathologies (21.4%
// padding, 20% broadcast, one compute stream per GPU): at every zoom, from the whole run down to a
// fraction of a step, the kernels in view are accounted for per category
// exactly (one by one or inside folded blocks), and padding and broadcast
// show as colour; zoomed out, each stream is one block whose bands match the
// time shares and whose label says what it counts.
TEST_F(ViewTest, FoldedBlocksShowTheExactCategoryMixOfTheReportShapedSample) {
  SyntheticOptions so = SyntheticOptions::report_pathologies();
  so.kernels = 15'440;
  auto d = std::make_shared<Document>("report-pathologies.gscope", make_synthetic_trace(so));
  const Profile p = compute_profile(d->trace());
  d->set_profile(std::make_shared<const Profile>(p));
  View v;
  v.set_document(d);
  ImGui::GetIO().DisplaySize = ImVec2(1280, 2000);  // every track on screen
  const Trace& t = v.document()->trace();
  const KernelTable& k = t.kernels();
  std::array<double, kKernelCategoryCount> profile_share{};
  for (const CategoryTime& c : p.categories) profile_share[static_cast<std::size_t>(c.category)] = c.share;
  const auto padding = static_cast<std::size_t>(KernelCategory::padding);
  const auto broadcast = static_cast<std::size_t>(KernelCategory::broadcast);
  const auto convolution = static_cast<std::size_t>(KernelCategory::convolution);
  ASSERT_NEAR(profile_share[padding], 0.214, 0.002);
  ASSERT_NEAR(profile_share[broadcast], 0.20, 0.002);

  const TimeNs span = t.end_time() - t.begin_time();
  int level = 0;
  for (TimeNs window = span; window >= 1'000'000; window /= 2, ++level) {
    SCOPED_TRACE("window " + std::to_string(window) + " ns");
    const TimeNs from = t.begin_time() + (span - window) / 3;
    if (level == 0)
      v.zoom_to_all();
    else
      v.zoom_to(from, from + window);
    frames(v, 2);
    const FrameStats& st = v.stats();
    // Brute force: the kernels overlapping the view on the tracks drawn.
    CategoryTimes want{};
    std::size_t gpu_tracks = 0;
    for (const TrackStats& ts : st.tracks) {
      if (t.tracks()[ts.track].kind != TrackKind::gpu) continue;
      ASSERT_TRUE(ts.visible) << ts.label;
      ++gpu_tracks;
      const RowRange rr = t.rows_overlapping(TableId::kernels, ts.track, v.view_start(), v.view_end());
      for (RowIndex r = rr.begin; r < rr.end; ++r) want[k.category[r]] += k.end[r] - k.start[r];
    }
    EXPECT_EQ(gpu_tracks, 12u);
    double px = 0;
    for (int c = 0; c < kKernelCategoryCount; ++c) {
      const auto i = static_cast<std::size_t>(c);
      EXPECT_EQ(st.kernel_ns_single[i] + st.kernel_ns_folded[i], want[i]) << to_string(static_cast<KernelCategory>(c));
      px += st.kernel_px[i];
    }
    // Padding and broadcast are colour on screen whenever they are a visible
    // share of the time in view — always, in any window of a step or more.
    TimeNs in_view = 0;
    for (TimeNs x : want) in_view += x;
    for (std::size_t c : {padding, broadcast}) {
      const double share = static_cast<double>(want[c]) / static_cast<double>(std::max<TimeNs>(1, in_view));
      if (window >= p.steps.step_time.max) {
        EXPECT_GT(share, 0.05) << to_string(static_cast<KernelCategory>(c));
      }
      if (share > 0.05) {
        EXPECT_GT(st.kernel_px[c], 0) << "no " << to_string(static_cast<KernelCategory>(c)) << " colour";
      }
    }
    if (level == 0) {
      // The whole run: every kernel, most of them folded; the colours in
      // proportion to the time (bands are whole pixels of a 17-px row).
      for (const CategoryTime& c : p.categories)
        EXPECT_EQ(st.kernel_ns_single[static_cast<std::size_t>(c.category)] +
                      st.kernel_ns_folded[static_cast<std::size_t>(c.category)],
                  c.time_ns);
      EXPECT_GT(st.merged_blocks, 0u);
      for (std::size_t c : {padding, broadcast, convolution})
        EXPECT_NEAR(st.kernel_px[c] / px, profile_share[c], 0.04) << to_string(static_cast<KernelCategory>(c));
      EXPECT_GT(st.kernel_px[convolution], st.kernel_px[padding]);  // not one red block
      // A stream's kernels and memsets folded together, each counted.
      EXPECT_NE(std::find(st.folded_labels.begin(), st.folded_labels.end(), "3,780 kernels · 20 memsets"),
                st.folded_labels.end())
          << (st.folded_labels.empty() ? "no label" : st.folded_labels.front());
    }
  }
  EXPECT_GE(level, 8);
}

// A compute stream of kernels with a memset after every `memset_every` and
// a copy after every `copy_every` (the 10M-kernel synthetic trace's busiest
// stream holds 2,162,586 kernels and 15,338 memsets; nsys exports interleave
// copies with kernels): at every zoom each kind is on screen, and counted,
// where folding each kind alone drew the memsets' blocks over every kernel
// and the copies' blocks over the kernels' labels.
class MixedStream : public ViewTest {
 protected:
  void each_kind_at_every_zoom(int kernels, int memset_every, int copy_every, int min_levels) {
    testing::TraceFactory f;
    f.device(0);
    TimeNs t = 0;
    for (int i = 0; i < kernels; ++i) {
      f.kernel(0, 7, i % 2 ? "gemm_kernel" : "conv_kernel", t, t + 2'000, testing::TraceFactory::kNoLaunch);
      t += 3'000;
      if (i % memset_every == memset_every - 1) {
        f.memset(0, 7, t, t + 1'000);
        t += 1'500;
      }
      if (i % copy_every == copy_every - 1) {
        f.memcpy(0, 7, CopyKind::dtoh, MemoryKind::device, MemoryKind::pinned, 4096, t, t + 1'200);
        t += 1'500;
      }
    }
    auto d = std::make_shared<Document>("mixed.gscope", f.build());
    View v;
    v.set_document(d);
    const Trace& tr = v.document()->trace();
    std::vector<ImU32> kernel_shades, memset_shades;
    for (KernelCategory c : {tr.kernels().category_at(0), tr.kernels().category_at(1)})
      for (float f2 : {1.0f, 0.8f}) kernel_shades.push_back(scale_brightness(category_color(c), f2));
    for (float f2 : {1.0f, 0.62f}) memset_shades.push_back(scale_brightness(memset_color(), f2));
    std::vector<ImU32> copy_shades;
    for (float f2 : {1.0f, 0.62f}) copy_shades.push_back(scale_brightness(copy_color(CopyKind::dtoh), f2));
    auto is_one_of = [](ImU32 c, const std::vector<ImU32>& set) {
      return std::find(set.begin(), set.end(), c) != set.end();
    };
    const TimeNs span = tr.end_time() - tr.begin_time();
    int levels = 0;
    for (TimeNs window = span; window >= 20'000; window /= 4, ++levels) {
      SCOPED_TRACE("window " + std::to_string(window) + " ns");
      const TimeNs from = tr.begin_time() + (span - window) / 3;
      levels == 0 ? v.zoom_to_all() : v.zoom_to(from, from + window);
      frames(v, 2);
      const ImDrawData* dd = frame(v);
      const FrameStats& st = v.stats();
      const TrackStats* stream = nullptr;
      for (const TrackStats& ts : st.tracks)
        if (tr.tracks()[ts.track].kind == TrackKind::gpu) stream = &ts;
      ASSERT_NE(stream, nullptr);
      // Every op in view is drawn or folded, of each kind.
      const RowRange kr = tr.rows_overlapping(TableId::kernels, stream->track, v.view_start(), v.view_end());
      const RowRange mr = tr.rows_overlapping(TableId::memsets, stream->track, v.view_start(), v.view_end());
      EXPECT_EQ(stream->gpu_ops[0], kr.size());
      EXPECT_EQ(stream->gpu_ops[2], mr.size());
      const RowRange cr = tr.rows_overlapping(TableId::memcpys, stream->track, v.view_start(), v.view_end());
      EXPECT_EQ(stream->gpu_ops[1], cr.size());
      // What the screen shows across the row: the kernels' colours, and the memsets' where there are some.
      int kernel_px = 0, memset_px = 0, copy_px = 0, samples = 0;
      for (float x = st.timeline_x0 + 1; x < st.timeline_x0 + st.timeline_width_px - 1; x += 1, ++samples) {
        const TimeNs at = v.view_start() + static_cast<TimeNs>((x - st.timeline_x0) / st.timeline_width_px *
                                                               static_cast<double>(v.view_end() - v.view_start()));
        if (at < tr.begin_time() || at > tr.end_time()) continue;
        for (float y = stream->y + 1; y < stream->y + 17; y += 1) {
          const ImU32 c = color_at(dd, x, y);
          kernel_px += is_one_of(c, kernel_shades);
          memset_px += is_one_of(c, memset_shades);
          copy_px += is_one_of(c, copy_shades);
        }
      }
      EXPECT_GT(kernel_px, samples) << "kernels hidden";
      if (!mr.empty()) {
        EXPECT_GT(memset_px, 0) << "memsets hidden";
      }
      if (!cr.empty()) {
        EXPECT_GT(copy_px, 0) << "copies hidden";
      }
      if (levels == 0) {  // the whole stream: its count of both kinds written on it
        bool both = false;
        for (const std::string& l : st.folded_labels)
          both = both || (l.find(" kernels · ") != std::string::npos && l.find(" copies · ") != std::string::npos &&
                          l.ends_with(" memsets"));
        EXPECT_TRUE(both) << (st.folded_labels.empty() ? "no label" : st.folded_labels.front());
      }
    }
    EXPECT_GE(levels, min_levels);
  }
};

TEST_F(MixedStream, KernelsMemsetsAndCopiesShowAtEveryZoom) { each_kind_at_every_zoom(200'000, 200, 1'000, 5); }

// The 10M trace's busiest stream at its own scale: millions of kernels,
// thousands of memsets.
TEST_F(MixedStream, MillionsOfKernelsAndThousandsOfMemsetsShowAtEveryZoom) {
  each_kind_at_every_zoom(2'162'586, 141, 20'000, 7);  // 15,337 memsets, 108 copies
}

TEST_F(ViewTest, ZoomedInDrawsEachKernelAlone) {
  testing::TrainingTraceOptions o;
  o.kernels = 200'000;
  o.gpus = 1;
  o.streams = 3;
  View v;
  v.set_document(doc(o, false));
  const Trace& t = v.document()->trace();
  const TimeNs mid = t.kernels().start[t.kernels().size() / 2];
  v.zoom_to(mid, mid + 60'000);  // 60 µs: kernels (>= 1 µs) are >= 15 px wide
  ImDrawData* dd = frame(v);
  std::uint64_t blocks = 0, merged = 0;
  const std::uint64_t drawn = drawn_on_gpu(v, &blocks, &merged);
  EXPECT_EQ(blocks, 0u);
  EXPECT_EQ(drawn, visible_gpu_events(v));
  EXPECT_GT(drawn, 0u);
  EXPECT_LE(static_cast<std::uint64_t>(dd->TotalVtxCount), kMaxVertices);
}

TEST_F(ViewTest, WheelZoomKeepsTheTimeUnderTheMouse) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  const FrameStats& s = v.stats();
  const float mx = s.timeline_x0 + s.timeline_width_px * 0.3f;
  const float my = s.tracks[0].y + 5;
  const double span0 = static_cast<double>(v.view_end() - v.view_start());
  const double t_mouse = static_cast<double>(v.view_start()) + 0.3 * span0;
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(mx, my);
  frame(v);  // hover first
  io.MouseWheel = 2;
  frame(v);
  const double span1 = static_cast<double>(v.view_end() - v.view_start());
  EXPECT_NEAR(span1 / span0, 0.64, 0.01);
  const double t_after = static_cast<double>(v.view_start()) + 0.3 * span1;
  EXPECT_NEAR(t_after, t_mouse, span0 / 1000);
}

TEST_F(ViewTest, DragPansAndKeysZoomAndPan) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  const Trace& t = v.document()->trace();
  v.zoom_to(t.begin_time() + 1'000'000, t.begin_time() + 2'000'000);
  frame(v);
  ImGuiIO& io = ImGui::GetIO();
  const FrameStats& s = v.stats();
  const float y = s.tracks[0].y + 5;
  float x = s.timeline_x0 + 500;
  io.MousePos = ImVec2(x, y);
  frame(v);
  const TimeNs start0 = v.view_start();
  io.MouseDown[0] = true;
  frame(v);
  for (int i = 0; i < 10; ++i) {
    x -= 10;  // drag left by 100 px: later times come into view
    io.MousePos = ImVec2(x, y);
    frame(v);
  }
  io.MouseDown[0] = false;
  frame(v);
  const double ns_per_px = 1'000'000.0 / s.timeline_width_px;
  EXPECT_NEAR(static_cast<double>(v.view_start() - start0), 100 * ns_per_px, 3 * ns_per_px);
  EXPECT_FALSE(v.selection().valid());  // a drag is not a click

  // W zooms in, S out, D pans right, A left (held keys, smooth per frame).
  const double span0 = static_cast<double>(v.view_end() - v.view_start());
  io.KeysDown['W'] = true;
  frames(v, 10);
  io.KeysDown['W'] = false;
  const double span1 = static_cast<double>(v.view_end() - v.view_start());
  EXPECT_LT(span1, span0 * 0.9);
  io.KeysDown['S'] = true;
  frames(v, 20);
  io.KeysDown['S'] = false;
  EXPECT_GT(static_cast<double>(v.view_end() - v.view_start()), span1 * 1.3);
  const TimeNs before_pan = v.view_start();
  io.KeysDown['D'] = true;
  frames(v, 5);
  io.KeysDown['D'] = false;
  EXPECT_GT(v.view_start(), before_pan);
  const TimeNs before_left = v.view_start();
  io.KeysDown['A'] = true;
  frames(v, 5);
  io.KeysDown['A'] = false;
  EXPECT_LT(v.view_start(), before_left);
}

TEST_F(ViewTest, ClickSelectsAKernelShowsItsLaunchAndDrawsTheFlowArrow) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  o.gpus = 1;
  o.streams = 1;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  const Trace& t = v.document()->trace();
  const RowIndex k = 2000;
  const TimeNs ks = t.kernels().start[k], ke = t.kernels().end[k];
  const RowIndex api = t.launching_api(OpRef{OpTable::kernel, k});
  ASSERT_NE(api, kNoRow);
  v.zoom_to(t.api_calls().start[api] - 2'000, ke + 2'000);
  frame(v);
  const FrameStats& s = v.stats();
  const float x =
      s.timeline_x0 + static_cast<float>(static_cast<double>((ks + ke) / 2 - v.view_start()) /
                                         static_cast<double>(v.view_end() - v.view_start()) * s.timeline_width_px);
  ASSERT_EQ(t.tracks()[s.tracks[0].track].kind, TrackKind::gpu);
  const float y = s.tracks[0].y + 8;
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(x, y);
  frame(v);
  io.MouseDown[0] = true;
  frame(v);
  io.MouseDown[0] = false;
  frame(v);
  ASSERT_TRUE(v.selection().valid());
  EXPECT_EQ(v.selection().table, TableId::kernels);
  EXPECT_EQ(v.selection().row, k);
  frame(v);
  EXPECT_TRUE(v.stats().flow_arrow);
  EXPECT_TRUE(has_panel(v, "selection"));
  EXPECT_TRUE(has_panel(v, "launch"));
  EXPECT_TRUE(has_panel(v, "nvtx_stack"));  // the launch sits inside step / forward|backward
}

TEST_F(ViewTest, SelectKernelByNameAndFocus) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  frame(v);
  EXPECT_FALSE(v.select_kernel("no_such_kernel_anywhere"));
  ASSERT_TRUE(v.select_kernel("volta_sgemm_128x64_nn"));
  const Trace& t = v.document()->trace();
  EXPECT_EQ(t.str(t.kernels().name[v.selection().row]), "volta_sgemm_128x64_nn");
  // The first instance in time.
  for (RowIndex r = 0; r < t.kernels().size(); ++r)
    if (t.str(t.kernels().name[r]) == "volta_sgemm_128x64_nn") {
      ASSERT_GE(t.kernels().start[r], t.kernels().start[v.selection().row]);
    }
  v.focus_selection();
  frames(v, 2);
  EXPECT_LE(v.view_start(), t.kernels().start[v.selection().row]);
  EXPECT_GE(v.view_end(), t.kernels().end[v.selection().row]);
  EXPECT_TRUE(v.stats().flow_arrow);
  EXPECT_GT(v.stats().match_markers + v.stats().match_clusters + v.stats().match_ticks,
            0u);  // outlined or ticked  // the other instances are highlighted
}

TEST_F(ViewTest, SearchCountsAndStepsThroughMatches) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  frame(v);
  v.set_search("BROADCAST", false);
  const Trace& t = v.document()->trace();
  std::uint64_t want = 0;
  for (RowIndex r = 0; r < t.kernels().size(); ++r)
    want += t.str(t.kernels().name[r]).find("broadcast") != std::string_view::npos;
  EXPECT_EQ(v.matches().size(), want);
  frame(v);
  EXPECT_GT(v.stats().match_markers + v.stats().match_clusters + v.stats().match_ticks, 0u);  // outlined or ticked
  v.set_search("ward$", true);                                                                // forward, backward
  EXPECT_EQ(v.matches().size(), 2 * (t.ranges().size() / 3));
  v.set_search("([", true);  // a bad regex: no matches, no crash
  EXPECT_TRUE(v.matches().empty());
  frame(v);
}

TEST_F(ViewTest, PanelsShowTheProfile) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::hotspots);
  frames(v, 2);
  EXPECT_TRUE(has_panel(v, "hotspots"));
  EXPECT_EQ(v.stats().hotspot_rows, testing::training_kernel_names().size());
  EXPECT_GT(v.stats().category_rows, 0u);
  v.show(Panel::summary);
  frames(v, 2);
  EXPECT_TRUE(has_panel(v, "summary"));
  EXPECT_EQ(v.stats().summary_devices, 2u);
  // What the program is, as the report says it.
  EXPECT_EQ(v.stats().summary_workload, workload_line(v.document()->profile()->workload, false));
  EXPECT_NE(v.stats().summary_workload.find("training"), std::string::npos) << v.stats().summary_workload;
  v.show(Panel::findings);
  frames(v, 2);
  EXPECT_TRUE(has_panel(v, "findings"));
  EXPECT_EQ(v.stats().finding_rows, v.document()->profile()->findings.size());
}

TEST_F(ViewTest, ClickingAGroupHeaderCollapsesIt) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(40, v.stats().groups[0].y + 8);
  frame(v);
  io.MouseDown[0] = true;
  frame(v);
  io.MouseDown[0] = false;
  frame(v);
  EXPECT_TRUE(v.stats().groups[0].collapsed);
  for (const TrackStats& ts : v.stats().tracks)
    if (ts.group == v.stats().groups[0].label) {
      EXPECT_TRUE(ts.collapsed);
    }
}

TEST_F(ViewTest, ClickingATrackNameCollapsesItsRows) {
  testing::TrainingTraceOptions o;
  o.kernels = 2'000;
  o.gpus = 1;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  const Trace& t = v.document()->trace();
  auto cpu_track = [&]() -> const TrackStats* {  // the thread: NVTX depths + API calls + syncs
    for (const TrackStats& ts : v.stats().tracks)
      if (ts.visible && t.tracks()[ts.track].kind == TrackKind::cpu) return &ts;
    return nullptr;
  };
  ASSERT_NE(cpu_track(), nullptr);
  const TrackStats before = *cpu_track();
  ASSERT_GT(before.rows, 1u);
  click(v, 40, before.y + 5);
  ASSERT_NE(cpu_track(), nullptr);
  EXPECT_TRUE(cpu_track()->collapsed);
  EXPECT_LT(cpu_track()->height, before.height);
  click(v, 40, cpu_track()->y + 5);  // and back
  EXPECT_FALSE(cpu_track()->collapsed);
  EXPECT_EQ(cpu_track()->height, before.height);
}

TEST_F(ViewTest, ALoadErrorIsShownInTheWindow) {
  View v;
  v.open_with("broken.json", [](const LoadProgress&) -> Trace {
    throw InputError("broken.json", "not a trace: expected '{' or '['", 0);
  });
  for (int i = 0; i < 200 && v.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  frames(v, 2);
  EXPECT_TRUE(has_panel(v, "error"));
  EXPECT_NE(v.stats().message.find("broken.json"), std::string::npos);
  EXPECT_NE(v.load_error().find("not a trace"), std::string::npos);
  EXPECT_EQ(v.document(), nullptr);
}

TEST_F(ViewTest, ProgressWhileLoadingThenTheTraceThenIdle) {
  std::atomic<bool> release{false};
  View v;
  v.open_with("slow.gscope", [&](const LoadProgress& p) {
    p.on_progress(10, 100);
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    testing::TrainingTraceOptions o;
    o.kernels = 1000;
    return testing::training_trace(o);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  frame(v);
  EXPECT_TRUE(has_panel(v, "loading"));
  EXPECT_TRUE(v.busy());
  release = true;
  for (int i = 0; i < 400 && v.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(v.busy());
  frames(v, 2);
  ASSERT_NE(v.document(), nullptr);
  EXPECT_TRUE(has_panel(v, "timeline"));
  EXPECT_NE(v.document()->profile(), nullptr);
  // Nothing moves: after a few frames the view asks for no more.
  frames(v, 5);
  EXPECT_FALSE(v.animating());
  ImGui::GetIO().MousePos = ImVec2(300, 300);
  frame(v);
  EXPECT_TRUE(v.animating());
}

TEST_F(ViewTest, CompareShowsCategoriesSideBySide) {
  testing::TrainingTraceOptions o;
  o.kernels = 3'000;
  View v;
  v.set_document(doc(o));
  v.open_compare_with("b.gscope", [](const LoadProgress&) {
    testing::TrainingTraceOptions ob;
    ob.kernels = 4'000;
    ob.seed = 2;
    return testing::training_trace(ob);
  });
  for (int i = 0; i < 400 && v.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  frames(v, 3);
  EXPECT_TRUE(has_panel(v, "compare"));
  ASSERT_NE(v.compare_document(), nullptr);
  EXPECT_GT(v.stats().compare_rows, 0u);
}

// The critical-path toggle underlines the path of the visible steps; the
// details say whether the selection is on it and its slack (0 on it).
TEST_F(ViewTest, CriticalPathToggleDrawsThePathAndDetailsGiveSlack) {
  testing::TrainingTraceOptions o;
  o.kernels = 3'000;
  View v;
  std::shared_ptr<Document> d = doc(o);
  const PathOverlay overlay = compute_path_overlay(d->trace());
  ASSERT_TRUE(overlay.ready()) << overlay.status;
  ASSERT_FALSE(overlay.segments.empty());
  d->set_path_overlay(std::make_shared<const PathOverlay>(overlay));
  v.set_document(d);
  frame(v);
  EXPECT_EQ(v.stats().critical_path_events, 0u);  // off by default
  EXPECT_EQ(v.stats().critical_path_status, "");
  v.set_show_critical_path(true);
  frames(v, 2);
  EXPECT_GT(v.stats().critical_path_events, 0u);
  EXPECT_EQ(v.stats().critical_path_status.rfind("on each of ", 0), 0u) << v.stats().critical_path_status;
  auto field = [&](std::string_view key) -> std::string {
    for (const auto& [k, value] : v.stats().details)
      if (k == key) return value;
    return "<missing " + std::string(key) + ">";
  };
  // Every event drawn is on a path; the one that ends the trace has no slack.
  EXPECT_LE(v.stats().critical_path_events, overlay.segments.size());
  TimeNs least = -1;
  for (const PathOverlay::Segment& s : overlay.segments) {
    const TimeNs sl = overlay.slack_of(s.table, s.row);
    if (sl >= 0 && (least < 0 || sl < least)) least = sl;
  }
  EXPECT_EQ(least, 0);
  // A kernel on an early step's path: it decides that step's length, yet
  // has slack to the trace's end — said as such, never "yes" beside a bare
  // "slack 57.3 ms".
  const PathOverlay::Segment* on = nullptr;
  for (const PathOverlay::Segment& s : overlay.segments)
    if (s.table == TableId::kernels && s.step >= 0 && overlay.slack_of(s.table, s.row) > 0) on = on ? on : &s;
  ASSERT_NE(on, nullptr);
  v.select(Selection{TableId::kernels, on->row});
  frames(v, 2);
  const std::string step = std::to_string(overlay.step_index[on->step]);
  EXPECT_EQ(field("critical path"), "yes: it decides step " + step + "'s length (no slack within the step)");
  EXPECT_EQ(field("slack"), "<missing slack>");
  EXPECT_EQ(
      field("slack to the trace's end")
          .rfind(format::duration(overlay.slack_of(TableId::kernels, on->row)) + " (nothing after step " + step, 0),
      0u)
      << field("slack to the trace's end");
  // One on a path with no slack at all: it decides its step and the end.
  const PathOverlay::Segment* last = nullptr;
  for (const PathOverlay::Segment& s : overlay.segments)
    if (s.table == TableId::kernels && s.step >= 0 && overlay.slack_of(s.table, s.row) == 0) last = &s;
  ASSERT_NE(last, nullptr);
  v.select(Selection{TableId::kernels, last->row});
  frames(v, 2);
  EXPECT_EQ(field("slack"), "0");
  EXPECT_TRUE(field("critical path").ends_with("'s length, and the trace's end")) << field("critical path");
  RowIndex off = kNoRow;
  for (RowIndex r = 0; r < d->trace().kernels().size() && off == kNoRow; ++r)
    if (overlay.path_of(TableId::kernels, r) == PathOverlay::kOffPath && overlay.slack_of(TableId::kernels, r) > 0)
      off = r;
  ASSERT_NE(off, kNoRow);
  v.select(Selection{TableId::kernels, off});
  frames(v, 2);
  EXPECT_EQ(field("critical path"), "no");
  EXPECT_EQ(field("slack").rfind(format::duration(overlay.slack_of(TableId::kernels, off)) + " (", 0), 0u)
      << field("slack");
}

// The Details tab of a kernel: each hw.* series' mean over the samples taken
// while it ran, with their count, or why there is none.
TEST_F(ViewTest, DetailsOfAKernelGiveItsHardwareSamples) {
  testing::TraceFactory f;
  f.device(0, 132, 9, "NVIDIA H100");
  f.kernel(0, 7, "long_kernel", 1'000'000, 2'000'000, 900'000);
  f.kernel(0, 7, "tiny_kernel", 2'020'000, 2'070'000, 1'900'000);
  const std::uint32_t sm = f.builder().counter_series("hw.sm_active", 0, "%");
  const std::uint32_t read = f.builder().counter_series("hw.dram_read", 0, "B/s");
  for (TimeNs at = 0; at <= 3'000'000; at += 100'000) {
    f.builder().add_counter({at, sm, at < 1'500'000 ? 40.0 : 60.0});
    f.builder().add_counter({at, read, 2e12});
  }
  auto d = std::make_shared<Document>("hw.gscope", f.build());
  d->set_profile(std::make_shared<const Profile>(compute_profile(d->trace())));
  View v;
  v.set_document(d);
  frame(v);
  auto field = [&](std::string_view key) -> std::string {
    for (const auto& [k, value] : v.stats().details)
      if (k == key) return value;
    return "<missing " + std::string(key) + ">";
  };
  const Trace& t = d->trace();
  for (RowIndex r = 0; r < t.kernels().size(); ++r) {
    v.select(Selection{TableId::kernels, r});
    frames(v, 2);
    if (t.str(t.kernels().name[r]) == "long_kernel") {
      // 1.0 .. 2.0 ms: 11 samples, 5 of 40 % and 6 of 60 %.
      EXPECT_EQ(field("hw.sm_active"), format::percent1((5 * 0.40 + 6 * 0.60) / 11) + " (mean of 11 samples)");
      EXPECT_EQ(field("hw.dram_read"), format::bandwidth(2e12) + " (mean of 11 samples)");
    } else {
      EXPECT_EQ(field("hw.sm_active"),
                "not sampled: ran shorter than the interval (" + format::duration(100'000) + ")");
    }
  }
}

// A trace too big for the viewer's graph: no path, and the toggle says why.
TEST_F(ViewTest, CriticalPathOfATraceTooBigSaysWhy) {
  testing::TrainingTraceOptions o;
  o.kernels = 3'000;
  std::shared_ptr<Document> d = doc(o);
  const PathOverlay overlay = compute_path_overlay(d->trace(), 100);
  EXPECT_FALSE(overlay.ready());
  EXPECT_NE(overlay.status.find("GPU ops"), std::string::npos) << overlay.status;
  d->set_path_overlay(std::make_shared<const PathOverlay>(overlay));
  View v;
  v.set_document(d);
  v.set_show_critical_path(true);
  frames(v, 2);
  EXPECT_EQ(v.stats().critical_path_events, 0u);
  EXPECT_EQ(v.stats().critical_path_status, overlay.status);
}

TEST_F(ViewTest, DetailsShowEveryFieldOfTheSelection) {
  testing::TrainingTraceOptions o;
  o.kernels = 3'000;
  View v;
  v.set_document(doc(o));
  frame(v);
  auto field = [&](std::string_view key) -> std::string {
    for (const auto& [k, value] : v.stats().details)
      if (k == key) return value;
    return "<missing " + std::string(key) + ">";
  };
  // A kernel: demangled and mangled names, launch configuration, resources, where, launched by whom, NVTX.
  ASSERT_TRUE(v.select_kernel("_Z21volta_sgemm_128x64_nnPKfS0_Pfiii"));  // by its mangled name
  frames(v, 2);
  EXPECT_EQ(field("name"), "volta_sgemm_128x64_nn");
  EXPECT_EQ(field("mangled"), "_Z21volta_sgemm_128x64_nnPKfS0_Pfiii");
  EXPECT_EQ(field("grid"), "(128, 1, 1)");
  EXPECT_EQ(field("block"), "(256, 1, 1)");
  EXPECT_EQ(field("registers / thread"), "32");
  // The synthetic GPU gives no compute capability: no limits, so no occupancy, and the panel says why.
  EXPECT_NE(field("theoretical occupancy").find("unknown: no limits"), std::string::npos)
      << field("theoretical occupancy");
  EXPECT_NE(field("shared memory").find("4.0 KiB static + 16.0 KiB dynamic"), std::string::npos)
      << field("shared memory");
  EXPECT_NE(field("device").find("Test GPU"), std::string::npos);
  EXPECT_EQ(field("stream").rfind("<missing", 0), std::string::npos);
  EXPECT_EQ(field("launched by"), "cudaLaunchKernel");
  std::vector<std::string> nvtx;
  for (const auto& [k, value] : v.stats().details)
    if (k == "nvtx") nvtx.push_back(value);
  ASSERT_EQ(nvtx.size(), 2u);
  EXPECT_EQ(nvtx[0], "step");  // outermost first
  EXPECT_TRUE(nvtx[1] == "forward" || nvtx[1] == "backward");
  // A copy: bytes and bandwidth (64 MiB in 50 µs).
  const Trace& t = v.document()->trace();
  ASSERT_GT(t.memcpys().size(), 0u);
  v.select(Selection{TableId::memcpys, 0});
  frames(v, 2);
  EXPECT_EQ(field("name"), "Memcpy HtoD");
  EXPECT_NE(field("bytes").find("67,108,864"), std::string::npos) << field("bytes");
  EXPECT_NE(field("bandwidth").find("1.34 TB/s"), std::string::npos) << field("bandwidth");
  EXPECT_EQ(field("launched by"), "cudaMemcpyAsync");
}

TEST_F(ViewTest, TheSourceIsVisibleInEveryPanel) {
  for (const auto& [source, badge] :
       {std::pair{TraceSource::cupti, "CAPTURED"}, std::pair{TraceSource::chrome_json, "IMPORTED"},
        std::pair{TraceSource::synthetic, "SYNTHETIC"}}) {
    testing::TrainingTraceOptions o;
    o.kernels = 1'000;
    o.source = source;
    View v;
    v.set_document(doc(o));
    for (Panel p : {Panel::timeline, Panel::hotspots, Panel::findings, Panel::summary}) {
      v.show(p);
      frames(v, 2);
      EXPECT_EQ(v.stats().source_badge, badge) << to_string(p);
    }
  }
}

// [SECTION] Interaction with the panels ---------------------------------------------------

TEST_F(ViewTest, HotspotClickHighlightsInstancesAndStepsThroughThem) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::hotspots);
  frames(v, 2);
  const Trace& t = v.document()->trace();
  ASSERT_FALSE(v.stats().hotspot_targets.empty());
  const ClickTarget row = v.stats().hotspot_targets[0];
  std::vector<TimeNs> starts;  // the instances, in time order
  for (RowIndex r = 0; r < t.kernels().size(); ++r)
    if (t.str(t.kernels().name[r]) == row.label) starts.push_back(t.kernels().start[r]);
  std::sort(starts.begin(), starts.end());
  ASSERT_GE(starts.size(), 2u);

  click(v, row);
  EXPECT_EQ(v.matches_label(), "kernel: " + row.label);
  EXPECT_EQ(v.matches().size(), starts.size());
  ASSERT_TRUE(v.selection().valid());
  ASSERT_EQ(v.selection().table, TableId::kernels);
  const RowIndex first = v.selection().row;
  EXPECT_EQ(t.str(t.kernels().name[first]), row.label);
  EXPECT_EQ(t.kernels().start[first], starts[0]);  // the whole trace is in view: the first instance
  EXPECT_LE(v.view_start(), t.kernels().start[first]);
  EXPECT_GE(v.view_end(), t.kernels().end[first]);
  frame(v);
  EXPECT_GT(v.stats().match_markers + v.stats().match_clusters + v.stats().match_ticks, 0u);  // outlined or ticked

  // A second click on the same row steps to the next instance.
  const ClickTarget* again = find_target(v.stats().hotspot_targets, row.label);
  ASSERT_NE(again, nullptr);
  click(v, *again);
  ASSERT_TRUE(v.selection().valid());
  EXPECT_NE(v.selection().row, first);
  EXPECT_EQ(t.str(t.kernels().name[v.selection().row]), row.label);
  EXPECT_EQ(t.kernels().start[v.selection().row], starts[1]);
  EXPECT_LE(v.view_start(), t.kernels().start[v.selection().row]);
  EXPECT_GE(v.view_end(), t.kernels().end[v.selection().row]);
}

TEST_F(ViewTest, HotspotHeadersSortTheTable) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::hotspots);
  frames(v, 4);  // the fixed-fit columns take their widths over the first frames
  std::map<std::string, Hotspot> by_name;
  for (const Hotspot& h : v.document()->profile()->hotspots) by_name[h.name] = h;
  auto column = [&](auto key) {
    std::vector<double> out;
    for (const ClickTarget& t : v.stats().hotspot_targets) out.push_back(key(by_name.at(t.label)));
    return out;
  };
  auto total = [](const Hotspot& h) { return static_cast<double>(h.stats.total); };
  auto count = [](const Hotspot& h) { return static_cast<double>(h.stats.count); };
  ASSERT_EQ(v.stats().hotspot_targets.size(), by_name.size());
  std::vector<double> col = column(total);  // the default: total, largest first
  EXPECT_TRUE(std::is_sorted(col.rbegin(), col.rend()));

  const ClickTarget* header = find_target(v.stats().hotspot_headers, "count");
  ASSERT_NE(header, nullptr);
  const ClickTarget h = *header;
  click(v, h);
  frame(v);
  col = column(count);
  EXPECT_TRUE(std::is_sorted(col.rbegin(), col.rend())) << "count, descending";
  EXPECT_NE(col.front(), col.back());
  click(v, h);
  frame(v);
  col = column(count);
  EXPECT_TRUE(std::is_sorted(col.begin(), col.end())) << "count, ascending";
}

TEST_F(ViewTest, CategoryRowAndLegendHighlightTheCategory) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  const Trace& t = v.document()->trace();
  auto kernels_of = [&](std::string_view category) {
    std::uint64_t n = 0;
    for (RowIndex r = 0; r < t.kernels().size(); ++r) n += to_string(t.kernels().category_at(r)) == category;
    return n;
  };
  // The legend above the ruler.
  ASSERT_FALSE(v.stats().legend_targets.empty());
  const ClickTarget legend = v.stats().legend_targets.back();
  click(v, legend);
  EXPECT_EQ(v.matches_label(), "category: " + legend.label);
  EXPECT_EQ(v.matches().size(), kernels_of(legend.label));
  // A row of the per-category table.
  v.show(Panel::hotspots);
  frames(v, 2);
  ASSERT_FALSE(v.stats().category_targets.empty());
  const ClickTarget row = v.stats().category_targets.front();
  click(v, row);
  EXPECT_EQ(v.matches_label(), "category: " + row.label);
  EXPECT_EQ(v.matches().size(), kernels_of(row.label));
  EXPECT_TRUE(v.selection().valid());
}

TEST_F(ViewTest, FindingClickZoomsToItsEvidence) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  ImGui::GetIO().DisplaySize = ImVec2(1280, 1400);
  v.set_document(doc(o));
  v.show(Panel::findings);
  frames(v, 2);
  const Profile& p = *v.document()->profile();
  const Finding* f = nullptr;
  const ClickTarget* target = nullptr;
  for (const Finding& candidate : p.findings) {
    const ClickTarget* ct = find_target(v.stats().finding_targets, candidate.id);
    if (!candidate.ranges.empty() && ct) {
      f = &candidate;
      target = ct;
      break;
    }
  }
  ASSERT_NE(f, nullptr) << "no finding with evidence ranges on the test trace";
  EXPECT_EQ(v.stats().finding_targets.size(), p.findings.size());
  // The first range (the heaviest) in view, with some air, not all of them at once (FindingsTab steps on).
  const TimeRange first = f->ranges.front();
  click(v, *target);
  frame(v);
  EXPECT_LE(v.view_start(), first.start);
  EXPECT_GE(v.view_end(), first.end);
  EXPECT_LE(v.view_end() - v.view_start(), 2 * first.duration() + 4'000 + 1000);
  EXPECT_GT(v.stats().evidence_bands, 0u);
  if (!f->kernels.empty()) {
    EXPECT_EQ(v.matches_label(), "finding: " + f->id);
    EXPECT_GT(v.matches().size(), 0u);
  }
}

TEST_F(ViewTest, HoveringAKernelShowsItsTooltip) {
  testing::TrainingTraceOptions o;
  o.kernels = 2'000;
  o.gpus = 1;
  o.streams = 1;
  View v;
  v.set_document(doc(o));
  const Trace& t = v.document()->trace();
  const RowIndex k = 700;
  const TimeNs ks = t.kernels().start[k], ke = t.kernels().end[k];
  v.zoom_to(ks - (ke - ks), ke + (ke - ks));  // the kernel is the middle third of the view
  frames(v, 2);
  const FrameStats& s = v.stats();
  ASSERT_EQ(t.tracks()[s.tracks[0].track].kind, TrackKind::gpu);
  ImGui::GetIO().MousePos = ImVec2(s.timeline_x0 + s.timeline_width_px / 2, s.tracks[0].y + 8);
  frames(v, 2);
  EXPECT_EQ(v.stats().tooltip, t.str(t.kernels().name[k]));
  ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  frame(v);
  EXPECT_TRUE(v.stats().tooltip.empty());
}

// Counter lanes: memory and power under their GPU, a host series under
// "Counters"; each scaled to its peak, the peak marked when in view, the
// level under the mouse in a tooltip; the summary draws a memory sparkline
// per step.
TEST_F(ViewTest, CounterLanesUnderEachGpuWithTheirPeak) {
  testing::TraceFactory f;
  f.device(0);
  TraceBuilder& b = f.builder();
  const std::uint32_t mem = b.counter_series(series_name::kMemoryAllocated, 0, "B");
  const std::uint32_t power = b.counter_series("power", 0, "W");
  const std::uint32_t rss = b.counter_series("rss", kNoDevice, "");
  constexpr TimeNs ms = 1'000'000;
  for (int s = 0; s < 4; ++s) {
    const TimeNs t0 = 1 * ms + s * 10 * ms;
    f.kernel(0, 7, "gemm", t0 + ms / 10, t0 + 9 * ms, t0);
    f.range("step " + std::to_string(s), t0, t0 + 10 * ms);
    b.add_counter(CounterRow{t0 + 2 * ms, mem, double(std::int64_t{1} << 30)});
    b.add_counter(CounterRow{t0 + 5 * ms, mem, double(std::int64_t{s == 2 ? 5 : 3} << 30)});  // the peak: step 2
    b.add_counter(CounterRow{t0 + 8 * ms, mem, double(std::int64_t{1} << 30)});
    b.add_counter(CounterRow{t0 + 3 * ms, power, 250.0 + s});
  }
  b.add_counter(CounterRow{2 * ms, rss, 1e9});
  auto d = std::make_shared<Document>("memory.gscope", f.build());
  d->set_profile(std::make_shared<const Profile>(compute_profile(d->trace())));
  View v;
  v.set_document(d);
  frames(v, 2);
  auto lane = [&](std::string_view series) -> const CounterLaneStats* {
    for (const CounterLaneStats& l : v.stats().counter_lanes)
      if (l.series == series) return &l;
    return nullptr;
  };
  ASSERT_EQ(v.stats().counter_lanes.size(), 3u);
  EXPECT_EQ(v.stats().counter_lanes[0].series, "memory.allocated");  // memory first
  const CounterLaneStats* m = lane("memory.allocated");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->device, 0u);
  EXPECT_EQ(m->label, "memory allocated");
  EXPECT_TRUE(m->visible);
  EXPECT_GT(m->columns, 0u);
  EXPECT_DOUBLE_EQ(m->peak, double(5ll << 30));
  EXPECT_EQ(m->peak_time, 1 * ms + 20 * ms + 5 * ms);
  EXPECT_EQ(m->peak_text, "peak 5.00 GiB");
  EXPECT_TRUE(m->peak_marked);
  ASSERT_TRUE(lane("power"));
  EXPECT_EQ(lane("power")->peak_text, "peak 253 W");
  // Labels and peaks stay in the label column: no text over a lane's data.
  const ImDrawData* dd = frame(v);
  for (const CounterLaneStats& l : v.stats().counter_lanes) {
    const float x0 = v.stats().timeline_x0;
    EXPECT_EQ(glyphs_in(dd, x0, l.y, x0 + v.stats().timeline_width_px, l.y + l.height), 0) << l.label;
    EXPECT_LE(l.label_x1, x0) << l.label;
    EXPECT_GT(l.peak_x0, x0 - v.stats().label_width) << l.label;
    EXPECT_LE(l.peak_x1, x0) << l.label;
    EXPECT_GT(glyphs_in(dd, l.peak_x0, l.y, l.peak_x1, l.y + l.height), 0) << l.label << ": its peak is written";
  }
  ASSERT_TRUE(lane("rss"));
  EXPECT_EQ(lane("rss")->group, "Counters");
  EXPECT_EQ(lane("rss")->device, kNoDevice);
  EXPECT_GT(lane("rss")->y, m->y);  // after the GPU groups

  // Hover the memory lane in step 0's middle: its level there.
  const float x = v.stats().timeline_x0 +
                  static_cast<float>(double(6 * ms - v.view_start()) / double(v.view_end() - v.view_start())) *
                      v.stats().timeline_width_px;
  ImGui::GetIO().MousePos = ImVec2(x, m->y + 12);
  frames(v, 2);
  EXPECT_EQ(v.stats().tooltip, "memory.allocated");
  ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);

  // Zoomed to step 0: the peak (in step 2) is out of view, still the scale.
  v.zoom_to(1 * ms, 11 * ms);
  frames(v, 2);
  ASSERT_TRUE(lane("memory.allocated"));
  EXPECT_FALSE(lane("memory.allocated")->peak_marked);
  EXPECT_DOUBLE_EQ(lane("memory.allocated")->peak, double(5ll << 30));

  v.show(Panel::summary);
  frames(v, 2);
  EXPECT_EQ(v.stats().step_sparklines, (std::vector<std::string>{"step 0", "step 1", "step 2", "step 3"}));
}

TEST_F(ViewTest, FindBoxCtrlFTypeThenEnterAndShiftEnterStep) {
  testing::TrainingTraceOptions o;
  o.kernels = 3'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  const Trace& t = v.document()->trace();
  std::vector<std::pair<TimeNs, RowIndex>> want;  // sgemm kernels in time order
  for (RowIndex r = 0; r < t.kernels().size(); ++r)
    if (t.str(t.kernels().name[r]).find("sgemm") != std::string_view::npos) want.emplace_back(t.kernels().start[r], r);
  std::sort(want.begin(), want.end());
  ASSERT_GE(want.size(), 3u);

  ImGuiIO& io = ImGui::GetIO();
  constexpr int kEnter = 300;  // any free slot of io.KeysDown, mapped like a backend would
  io.KeyMap[ImGuiKey_Enter] = kEnter;
  auto press = [&](int key, bool shift) {
    io.KeyShift = shift;
    io.KeysDown[key] = true;
    frame(v);
    io.KeysDown[key] = false;
    frame(v);
    io.KeyShift = false;
  };
  io.KeyCtrl = true;
  press('F', false);
  io.KeyCtrl = false;
  frame(v);
  io.AddInputCharactersUTF8("SGEMM");
  frames(v, 2);
  EXPECT_EQ(v.matches_label(), "search: SGEMM");
  EXPECT_EQ(v.matches().size(), want.size());
  press(kEnter, false);  // next: the first match (the whole trace is in view)
  ASSERT_TRUE(v.selection().valid());
  EXPECT_EQ(v.selection().row, want[0].second);
  press(kEnter, false);
  EXPECT_EQ(v.selection().row, want[1].second);
  EXPECT_LE(v.view_start(), want[1].first);  // centred on it
  EXPECT_GE(v.view_end(), want[1].first);
  press(kEnter, true);  // Shift+Enter: previous
  EXPECT_EQ(v.selection().row, want[0].second);
  press(kEnter, true);  // before the first: wraps to the last
  EXPECT_EQ(v.selection().row, want.back().second);
}

// [SECTION] Opening by drop and by the file browser --------------------------------------

// The bottom panel holds only its tabs while there is nothing to show (no
// selection on the Details tab), and grows back when there is.
TEST_F(ViewTest, TheBottomPanelIsCollapsedWhileEmpty) {
  testing::TrainingTraceOptions o;
  o.kernels = 2'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  const float display = ImGui::GetIO().DisplaySize.y;
  EXPECT_LT(v.stats().bottom_height, display * 0.12f);
  v.select(Selection{TableId::kernels, 0});
  frames(v, 2);
  EXPECT_GT(v.stats().bottom_height, display * 0.2f);
  v.show(Panel::hotspots);
  v.select(Selection{});
  frames(v, 2);
  EXPECT_GT(v.stats().bottom_height, display * 0.2f) << "another tab keeps its room";
}

class OpenFilesTest : public ViewTest {
 protected:
  void SetUp() override {
    ViewTest::SetUp();
    dir_ = std::filesystem::temp_directory_path() / ("gpuscope-view-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "sub");
    testing::TrainingTraceOptions o;
    o.kernels = 1'000;
    write_gscope(testing::training_trace(o), (dir_ / "a.gscope").string());
    o.kernels = 2'000;
    o.seed = 7;
    write_gscope(testing::training_trace(o), (dir_ / "sub" / "b.gscope").string());
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    ViewTest::TearDown();
  }
  std::filesystem::path dir_;
};

TEST_F(OpenFilesTest, DroppedFilesOpenAndCompare) {
  View v;
  v.on_files_dropped({(dir_ / "a.gscope").string(), (dir_ / "sub" / "b.gscope").string()});
  wait_idle(v);
  frames(v, 3);
  ASSERT_NE(v.document(), nullptr) << v.load_error();
  EXPECT_EQ(v.document()->path(), (dir_ / "a.gscope").string());
  EXPECT_EQ(v.document()->trace().kernels().size(), 1'000u);
  ASSERT_NE(v.compare_document(), nullptr);
  EXPECT_EQ(v.compare_document()->trace().kernels().size(), 2'000u);
  EXPECT_TRUE(has_panel(v, "compare"));
  // A file that is not a trace: the error in the window, no crash.
  std::ofstream(dir_ / "junk.json") << "{\"traceEvents\": [ {\"ph\": ";
  v.on_files_dropped({(dir_ / "junk.json").string()});
  wait_idle(v);
  frames(v, 2);
  EXPECT_EQ(v.document(), nullptr);
  EXPECT_TRUE(has_panel(v, "error"));
  EXPECT_NE(v.stats().message.find("junk.json"), std::string::npos);
}

TEST_F(OpenFilesTest, FileBrowserListsFoldersFirstAndFiltersTraces) {
  std::ofstream(dir_ / "notes.txt") << "x";
  std::ofstream(dir_ / "t.json.gz") << "x";
  std::string error;
  std::vector<FileBrowser::Entry> e = FileBrowser::list(dir_.string(), false, &error);
  EXPECT_TRUE(error.empty());
  ASSERT_EQ(e.size(), 3u);
  EXPECT_TRUE(e[0].is_dir);
  EXPECT_EQ(e[0].name, "sub");
  EXPECT_EQ(e[1].name, "a.gscope");
  EXPECT_GT(e[1].size, 0u);
  EXPECT_EQ(e[2].name, "t.json.gz");
  EXPECT_EQ(FileBrowser::list(dir_.string(), true, &error).size(), 4u);  // with notes.txt
  EXPECT_TRUE(FileBrowser::list((dir_ / "missing").string(), false, &error).empty());
  EXPECT_NE(error.find("missing"), std::string::npos);
}

TEST_F(OpenFilesTest, CtrlOBrowsesToAFileAndOpensIt) {
  View v;
  v.open((dir_ / "a.gscope").string());
  wait_idle(v);
  frames(v, 2);
  ASSERT_NE(v.document(), nullptr) << v.load_error();
  ImGuiIO& io = ImGui::GetIO();
  io.KeyCtrl = true;
  io.KeysDown['O'] = true;
  frame(v);
  io.KeyCtrl = false;
  io.KeysDown['O'] = false;
  frames(v, 2);
  ASSERT_TRUE(v.browser().is_open());
  EXPECT_TRUE(has_panel(v, "file_browser"));
  EXPECT_EQ(v.browser().dir(), dir_.string());  // the folder of the open trace
  // Opaque: nothing of the timeline shows through the file list (its
  // background is the first thing its window draws).
  const ImGuiWindow* dialog = ImGui::FindWindowByName("Open a trace");
  ASSERT_NE(dialog, nullptr);
  ASSERT_FALSE(dialog->DrawList->VtxBuffer.empty());
  EXPECT_EQ(dialog->DrawList->VtxBuffer[0].col >> IM_COL32_A_SHIFT, 255u);
  auto double_click = [&](std::string_view name) {
    const FileBrowser::Drawn* d = nullptr;
    for (const FileBrowser::Drawn& x : v.browser().drawn())
      if (x.name == name) d = &x;
    ASSERT_NE(d, nullptr) << name;
    io.MousePos = ImVec2(d->x, d->y);
    frames(v, 30);  // half a second: the next two clicks are a new double-click, not a triple-click
    for (int i = 0; i < 2; ++i) {
      io.MouseDown[0] = true;
      frame(v);
      io.MouseDown[0] = false;
      frame(v);
    }
  };
  double_click("sub");
  EXPECT_EQ(v.browser().dir(), (dir_ / "sub").string());
  double_click("b.gscope");
  EXPECT_FALSE(v.browser().is_open());
  wait_idle(v);
  frames(v, 2);
  ASSERT_NE(v.document(), nullptr) << v.load_error();
  EXPECT_EQ(v.document()->path(), (dir_ / "sub" / "b.gscope").string());
  EXPECT_EQ(v.document()->trace().kernels().size(), 2'000u);
}

// [SECTION] Ops tab ------------------------------------------------------------------------

class OpsTabTest : public ViewTest {
 protected:
  static const OpRow& row_named(const std::vector<OpRow>& rows, std::string_view name) {
    for (const OpRow& r : rows)
      if (r.name == name) return r;
    ADD_FAILURE() << "no op row " << name;
    return rows.front();
  }
};

TEST_F(OpsTabTest, ListsTheProfilesOpsAndSortsByItsHeaders) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::ops);
  frames(v, 4);
  const Profile& p = *v.document()->profile();
  ASSERT_FALSE(p.op_names.empty());
  EXPECT_TRUE(has_panel(v, "ops"));
  EXPECT_EQ(v.stats().op_rows, p.op_names.size());
  ASSERT_EQ(v.stats().op_targets.size(), p.op_names.size());
  for (std::size_t i = 0; i < p.op_names.size(); ++i)  // the default: GPU total, largest first
    EXPECT_EQ(v.stats().op_targets[i].label, p.op_names[i].name);
  // Cells as written; no shapes were recorded: the roofline columns read "–", never 0.
  const std::vector<std::string>& cols = v.stats().op_columns;
  const auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  ASSERT_LT(col("TFLOP/s"), cols.size());
  ASSERT_EQ(v.stats().op_list.size(), p.op_names.size());
  for (std::size_t i = 0; i < p.op_names.size(); ++i) {
    const std::vector<std::string>& cells = v.stats().op_list[i];
    EXPECT_EQ(cells[col("op")], p.op_names[i].name);
    EXPECT_EQ(cells[col("GPU total")], format::duration(p.op_names[i].gpu_total_ns));
    EXPECT_EQ(cells[col("TFLOP/s")], "–");
    EXPECT_EQ(cells[col("roofline")], "–");
    EXPECT_EQ(cells[col("bound")], "–");
  }

  const ClickTarget* header = find_target(v.stats().op_headers, "CPU self");
  ASSERT_NE(header, nullptr);
  const ClickTarget h = *header;
  auto cpu_self = [&] {
    std::vector<TimeNs> out;
    for (const ClickTarget& t : v.stats().op_targets) out.push_back(row_named(p.op_names, t.label).cpu_self_ns);
    return out;
  };
  click(v, h);
  frame(v);
  std::vector<TimeNs> c = cpu_self();
  EXPECT_TRUE(std::is_sorted(c.rbegin(), c.rend())) << "CPU self, descending";
  EXPECT_NE(c.front(), c.back());
  click(v, h);
  frame(v);
  c = cpu_self();
  EXPECT_TRUE(std::is_sorted(c.begin(), c.end())) << "CPU self, ascending";
}

TEST_F(OpsTabTest, TheOrderIsNotRebuiltEveryFrame) {
  testing::TrainingTraceOptions o;
  o.kernels = 1'000'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::ops);
  frame(v);
  frame(v);
  for (int i = 0; i < 5; ++i) {
    frame(v);
    EXPECT_FALSE(v.stats().op_order_rebuilt) << "frame " << i;
    EXPECT_GT(v.stats().op_rows, 0u);
  }
  v.set_ops_by_shapes(true);  // a new mode: one rebuild, then none
  frame(v);
  EXPECT_TRUE(v.stats().op_order_rebuilt);
  frame(v);
  EXPECT_FALSE(v.stats().op_order_rebuilt);
}

TEST_F(OpsTabTest, ClickingAnOpHighlightsItsKernelsAndStepsThroughThem) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::ops);
  frames(v, 3);
  const Trace& t = v.document()->trace();
  const Profile& p = *v.document()->profile();
  const ClickTarget* target = find_target(v.stats().op_targets, "forward");
  ASSERT_NE(target, nullptr);
  click(v, *target);
  EXPECT_EQ(v.matches_label(), "op: forward");
  const MatchSet expected = op_kernels(t, row_named(p.op_names, "forward"), false);
  ASSERT_GE(expected.size(), 2u);
  EXPECT_EQ(v.matches().size(), expected.size());
  ASSERT_TRUE(v.selection().valid());
  ASSERT_EQ(v.selection().table, TableId::kernels);
  const RowIndex first = v.selection().row;
  // The selected kernel was launched inside a "forward" range, and is in view.
  const RowIndex op = t.launching_op(OpRef{OpTable::kernel, first});
  ASSERT_NE(op, kNoRow);
  EXPECT_EQ(t.str(t.ranges().name[op]), "forward");
  EXPECT_LE(v.view_start(), t.kernels().start[first]);
  EXPECT_GE(v.view_end(), t.kernels().end[first]);
  frame(v);
  EXPECT_GT(v.stats().match_markers + v.stats().match_clusters + v.stats().match_ticks, 0u);  // outlined or ticked
  EXPECT_EQ(v.stats().selected_op, "forward");
  ASSERT_FALSE(v.stats().op_kernel_targets.empty());

  // Again: the next kernel of the op.
  const ClickTarget* again = find_target(v.stats().op_targets, "forward");
  ASSERT_NE(again, nullptr);
  click(v, *again);
  ASSERT_TRUE(v.selection().valid());
  EXPECT_NE(v.selection().row, first);
  EXPECT_EQ(t.str(t.ranges().name[t.launching_op(OpRef{OpTable::kernel, v.selection().row})]), "forward");

  // One of its kernels, as a hotspot row: every instance of that kernel.
  frame(v);
  const ClickTarget k = v.stats().op_kernel_targets.front();
  click(v, k);
  EXPECT_EQ(v.matches_label(), "kernel: " + k.label);
  ASSERT_TRUE(v.selection().valid());
  EXPECT_EQ(t.str(t.kernels().name[v.selection().row]), k.label);
}

// The Details tab of a kernel names the op that launched it and the ops around that one.
TEST_F(OpsTabTest, DetailsOfTheSelectedKernelNameItsOpAndCallPath) {
  testing::TrainingTraceOptions o;
  o.kernels = 2'000;
  View v;
  v.set_document(doc(o));
  frames(v, 2);
  ASSERT_TRUE(v.select_op("backward"));
  v.show(Panel::timeline);
  frames(v, 3);
  const auto& d = v.stats().details;
  auto field = [&](std::string_view key) -> std::string {
    for (const auto& [k, val] : d)
      if (k == key) return val;
    return "(missing)";
  };
  EXPECT_EQ(field("op"), "backward");
  EXPECT_EQ(field("call path"), "step");
}

TEST_F(OpsTabTest, PerShapesToggleAndFilter) {
  testing::TrainingTraceOptions o;
  o.kernels = 5'000;
  View v;
  v.set_document(doc(o));
  v.show(Panel::ops);
  frames(v, 3);
  const Profile& p = *v.document()->profile();
  EXPECT_FALSE(v.ops_by_shapes());
  click(v, v.stats().op_mode_target);
  frame(v);
  EXPECT_TRUE(v.ops_by_shapes());
  EXPECT_EQ(v.stats().op_rows, p.ops.size());
  EXPECT_NE(std::find(v.stats().op_columns.begin(), v.stats().op_columns.end(), "shapes"), v.stats().op_columns.end());
  EXPECT_TRUE(v.select_op("backward"));
  EXPECT_EQ(v.matches_label(), "op: backward");
  EXPECT_FALSE(v.select_op("no such op"));
}

TEST_F(OpsTabTest, ATraceWithoutOpsSaysSoAndWhatWouldGiveThem) {
  testing::TrainingTraceOptions o;
  o.kernels = 2'000;
  o.ranges = false;
  View v;
  v.set_document(doc(o));
  v.show(Panel::ops);
  frames(v, 2);
  EXPECT_TRUE(has_panel(v, "ops"));
  EXPECT_EQ(v.stats().op_rows, 0u);
  EXPECT_TRUE(v.stats().ops_message.starts_with("no framework ops in this trace: ")) << v.stats().ops_message;
  EXPECT_NE(v.stats().ops_message.find("NVTX"), std::string::npos);
  EXPECT_FALSE(v.select_op("forward"));
}

}  // namespace
}  // namespace gpuscope::viewer
