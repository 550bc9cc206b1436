// View: the whole gpuscope-view UI, one immediate-mode frame at a time.
//
// The view is plain data (what is open, the visible time range, the
// selection, the highlighted matches); draw() rebuilds the UI from it every
// frame and never keeps widget objects. Like Tracy's View, the class is split
// over feature files:
//
//   view.cpp            frame layout, menus, toolbar, loading/error screens, keys
//   view_layout.cpp     the layout the user sized, remembered in ImGui's ini file
//   view_timeline.cpp   tracks, ruler, activity lanes, LOD drawing, zoom/pan, flows
//   view_details.cpp    the selected event, its launch and NVTX stack; tooltips
//   view_hotspots.cpp   per-kernel and per-category tables
//   view_ops.cpp        framework ops (per name or name × shapes) and their kernels
//   view_findings.cpp   the diagnosis list
//   view_summary.cpp    per-device numbers, steps and small charts
//   view_search.cpp     find by name, next/previous, highlighted matches
//   view_range.cpp      a selected time range: its length and statistics
//   view_histogram.cpp  the duration histogram of one name, stepping through a bin
//   view_compare.cpp    a second trace side by side
//   view_job.cpp        a job of many ranks on one clock (data: job_lanes.h)
//
// Nothing here touches OpenGL or GLFW: tests drive it with ImGui's null
// backend (build the font atlas, set DisplaySize, NewFrame, draw, Render) and
// assert on ImDrawData and on stats().
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/diff.h"
#include "trace/damage.h"
#include "viewer/colors.h"
#include "viewer/counter_lanes.h"
#include "viewer/document.h"
#include "viewer/file_browser.h"
#include "viewer/histogram.h"
#include "viewer/job_lanes.h"
#include "viewer/lod.h"
#include "viewer/match_set.h"
#include "viewer/op_table.h"
#include "viewer/range_stats.h"

#include <imgui.h>

namespace gpuscope::viewer {

enum class Panel : std::uint8_t { timeline, range, histogram, hotspots, ops, findings, summary, compare };
inline constexpr Panel kPanels[] = {Panel::timeline, Panel::range,    Panel::histogram, Panel::hotspots,
                                    Panel::ops,      Panel::findings, Panel::summary,   Panel::compare};
std::string_view to_string(Panel p);
bool parse_panel(std::string_view s, Panel* out);
// Bars of a lane, one per pixel column x0 + i (i < heights.size()), each
// heights[i] pixels up from `bottom` (height_of(heights[i]); 0: none): a run
// of columns of equal height is one rectangle, so a flat lane costs a few
// vertices and a busy one at most 4 per column.
template <class Column, class HeightOf>
void draw_column_runs(ImDrawList* dl, float x0, float bottom, std::span<const Column> heights, ImU32 color,
                      HeightOf&& height_of) {
  for (std::size_t c = 0; c < heights.size();) {
    const int hc = height_of(heights[c]);
    std::size_t e = c + 1;
    while (e < heights.size() && height_of(heights[e]) == hc) ++e;
    if (hc > 0)
      dl->AddRectFilled(ImVec2(x0 + static_cast<float>(c), bottom - static_cast<float>(hc)),
                        ImVec2(x0 + static_cast<float>(e), bottom), color);
    c = e;
  }
}

// The next column of the current table, holding `text`.
void text_cell(std::string_view text);
// A square of `color` one text line high, the next item after it on the
// same line (a table row's category colour).
void color_swatch(ImU32 color);
// A horizontal bar `width` wide of `share` in [0, 1], in `color` over
// `background`, with the percentage after it.
void percent_bar(double share, ImU32 color, float width, ImU32 background);

struct Selection {
  TableId table = TableId::kernels;
  RowIndex row = kNoRow;
  bool valid() const { return row != kNoRow; }
  friend bool operator==(const Selection&, const Selection&) = default;
};

// What the last frame drew (the headless JSON and the tests read it).
struct TrackStats {
  std::string group, label;
  std::string label_shown;  // as written in the label column ("…" where cut)
  TrackId track = 0;
  float y = 0, height = 0;  // screen position of the track's rows this frame
  bool visible = false;     // on screen vertically
  bool collapsed = false;
  std::uint32_t rows = 0;                  // rows drawn
  std::uint64_t drawn = 0;                 // events drawn one by one
  std::uint64_t merged_blocks = 0;         // folded blocks
  std::uint64_t merged_events = 0;         // events inside them
  std::array<std::uint64_t, 3> gpu_ops{};  // kernels, memcpys, memsets drawn or folded (TableId order)
  bool compared = false;                   // B's, drawn under A's (the Compare view); `track` is B's
  std::uint64_t samples = 0;               // host samples of the thread (its samples row), 0 if none
  std::uint64_t samples_drawn = 0;         // sample ticks drawn (one per pixel column at most)
  std::uint64_t flame_boxes = 0;           // frames drawn in the flame chart below them
  std::uint32_t flame_rows = 0;            // rows of the flame chart (0: zoomed out)
};

// A counter lane as drawn: its series, where, and its peak.
struct CounterLaneStats {
  std::string group;                 // the GPU group it sits under, or "Counters"
  std::string label, series, unit;   // "memory allocated", "memory.allocated", "B"
  std::uint32_t device = kNoDevice;  // its GPU, kNoDevice for the others
  float y = 0, height = 0;
  bool visible = false;
  std::uint64_t columns = 0;  // pixel columns sampled (0 when off screen)
  double peak = 0;            // over the whole trace: the lane's scale
  TimeNs peak_time = 0;
  std::string peak_text;     // as written beside the label ("peak 3.00 GiB")
  bool peak_marked = false;  // the peak's time is in view and marked
  // Where the label column's texts went: the label (cut with "…" to leave
  // room for the peak) and the peak, both left of the lane's data.
  std::string label_shown;
  float label_x1 = 0, peak_x0 = 0, peak_x1 = 0;
};

struct GroupStats {
  std::string label;
  float y = 0;  // screen y of the group's header row
  bool collapsed = false;
};

// Where a clickable row or header was drawn this frame (screen centre of its
// label): the tests click there, through ImGui, like a user would.
struct ClickTarget {
  std::string label;
  float x = 0, y = 0;
};
// The centre of the last item drawn, under `label` (for FrameStats).
ClickTarget target(std::string label);

// The header row of the current table, drawn by hand (not TableHeadersRow)
// to note where each of its `columns` headers is (the tests click them).
void header_row(int columns, std::vector<ClickTarget>& targets);

// A row of the per-kernel hotspot table as drawn: what a user reads there.
struct HotspotRow {
  std::string name;      // as shown ("Eigen TensorPaddingOp #1")
  std::string kernel;    // the full demangled name
  std::string category;  // "padding"
  std::string total;     // as shown ("130.2 ms")
  std::string share;     // as shown ("10.7%")
  std::string count;     // as shown ("480")
};

// The job view as drawn (docs/viewer.md, "Jobs").
struct JobRankStats {
  std::int32_t rank = -1;
  std::string file, host, header;  // header: "rank 3 · host · file" as written
  TimeNs offset_ns = 0;            // its clock shift onto the job clock
  float y = 0;                     // screen y of its header
  bool visible = false;            // on screen vertically
  bool collapsed = false;
  std::uint32_t gpus = 0;
  std::uint64_t lanes = 0;         // lanes drawn (utilization and collective parts)
  std::uint64_t parts_drawn = 0;   // collective parts drawn one by one
  std::uint64_t parts_folded = 0;  // parts inside folded blocks
  // Its cell of the overview: the wait it made the others suffer, the wait
  // it suffered, the collectives it arrived last at, the steps it was critical in.
  TimeNs wait_caused_ns = 0, waited_ns = 0;
  std::uint64_t last_arrivals = 0, critical_steps = 0;
};
struct JobFindingStats {  // one of the job's findings, as listed in the details panel
  std::string id;
  TimeNs saving_ns = 0;
  std::string saving_source;  // "simulated", "rule_of_thumb"
  std::string text;           // as written
};
struct JobPartStats {  // one rank's part of the selected instance, as drawn
  std::int32_t rank = -1;
  float x0 = 0, x1 = 0, y = 0;  // screen position (x clipped to the timeline)
  TimeNs start_ns = 0, waited_ns = 0;
  bool visible = false;
  bool last = false;  // outlined as the last arrival
};
struct JobStats {
  bool shown = false;
  std::uint32_t ranks = 0, gpus = 0;
  std::string clock_alignment;
  std::vector<JobRankStats> rank_list;       // in timeline order
  std::vector<std::int32_t> overview_order;  // the overview's ranks, as listed (most wait caused first)
  std::int32_t overview_marked = -1;         // the rank the overview marks as making the others wait most
  std::vector<std::int32_t> stragglers;      // the stragglers listed beside it
  std::vector<JobFindingStats> findings;     // the job's findings, as the details panel lists them
  std::vector<std::string> left_out;         // "FILE: problem" as named in the window
  std::int64_t instance = -1;                // the selected collective instance
  std::string instance_kind;
  std::int32_t last_arrival_rank = -1;  // marked on the timeline
  TimeNs instance_wait_ns = 0;
  std::string last_arrival_text;  // "last arrival: rank R, others waited X"
  std::vector<JobPartStats> instance_parts;
  std::vector<ClickTarget> rank_targets;  // rank headers (label "rank R"): double-click opens the rank
  std::vector<ClickTarget> fold_targets;  // their +/- (label "rank R"): click folds its lanes
  std::vector<ClickTarget> part_targets;  // linked parts drawn one by one (label "rank R #i")
};

// The duration histogram as drawn: its title and numbers as written, each
// bin (bounds, count, where its bar is), the selected bin and the step text.
struct HistogramBin {
  TimeNs lo = 0, hi = 0;
  std::uint64_t count = 0;
  float x = 0, y = 0;  // a point on its bar (screen): a click there selects it
};
struct HistogramStats {
  bool shown = false;
  std::string title, summary;  // "kernel: …", "1,234 instances · min … · median … · p99 … · max … · total …"
  std::vector<HistogramBin> bins;
  std::int64_t selected_bin = -1;
  std::string step;  // "instance 3 of 120"
  ClickTarget next_target;
};

// A finding as the Findings tab wrote it, and an answer of "What would help?".
struct FindingRow {
  std::string id, title;
  std::string saving;  // as written: "saves 285.2 ms (simulated)", "saves ~355.6 ms (rule of thumb; simulating...)"
  TimeNs saving_ns = 0;
  std::string saving_source;  // "simulated", "rule_of_thumb"
};
struct HelpRow {
  std::string id, question, verdict, because;
};
struct PathRow {
  std::string label, time, share;  // "GPU compute", "12.3 ms", "45.6%"
};

struct FrameStats {
  TimeNs view_start = 0, view_end = 0;
  float timeline_x0 = 0, timeline_width_px = 0;  // screen x of view_start, and the width of the time axis
  std::vector<GroupStats> groups;
  std::vector<TrackStats> tracks;
  std::uint64_t drawn = 0, merged_blocks = 0, merged_events = 0;
  // Kernels in view by category: time drawn one by one and inside folded
  // blocks, and the pixels of each category's colour (events and bands).
  CategoryTimes kernel_ns_single{}, kernel_ns_folded{};
  std::array<double, kKernelCategoryCount> kernel_px{};
  std::vector<std::string> folded_labels;  // the first 64 labels written on folded blocks ("3,780 kernels")
  std::uint64_t lane_columns = 0;          // activity-lane columns sampled
  std::vector<CounterLaneStats> counter_lanes;
  std::vector<std::string> step_sparklines;  // summary: steps drawn with a memory sparkline
  std::uint64_t match_markers = 0;           // highlighted matches outlined one by one
  // Highlighted matches closer than 3 px, outlined as one cluster with their
  // count ("×12" where it fits); the matches in view on the visible tracks' lanes.
  std::uint64_t match_clusters = 0, match_cluster_events = 0, matches_in_view = 0;
  std::vector<std::string> match_cluster_labels;
  // Rows with more matches in view than can be outlined: a tick under each
  // (cluster of) match, and the row's count written at its end ("×570").
  std::uint64_t match_ticks = 0;
  std::vector<std::string> match_count_labels;
  bool flow_arrow = false;  // launch -> GPU op arrow drawn
  // The critical path (the toolbar's toggle): events of it underlined this
  // frame, and why there is none when the toggle is on ("computing", …).
  std::uint64_t critical_path_events = 0;
  std::string critical_path_status;
  std::uint64_t evidence_bands = 0;  // time ranges of the clicked finding drawn
  std::vector<std::string> panels;   // what this frame showed
  std::uint64_t hotspot_rows = 0, category_rows = 0, finding_rows = 0, summary_devices = 0, compare_rows = 0;
  // Clickable things on screen: hotspot column headers, hotspot rows (full
  // kernel names, in the table's current order), category rows, finding
  // titles (finding ids), legend entries (category names).
  std::vector<ClickTarget> hotspot_headers, hotspot_targets, category_targets, finding_targets, legend_targets;
  std::vector<std::pair<std::string, ImU32>> legend;   // every legend entry drawn: name and colour
  std::vector<HotspotRow> hotspot_list;                // the per-kernel rows drawn, in the table's order
  std::vector<ClickTarget> hotspot_histogram_targets;  // their "histogram" buttons (label: the full kernel name)
  // The Ops tab: rows after the filter, the column headers (and where they
  // are), each row drawn (cells as written, in column order), the rows'
  // name cells (label: the op name, "name shapes" per shapes), the selected
  // op's kernels, the "per shapes" toggle; or the message of a trace without ops.
  std::uint64_t op_rows = 0;
  std::vector<std::string> op_columns;
  std::vector<ClickTarget> op_headers, op_targets, op_kernel_targets;
  ClickTarget op_mode_target;
  std::vector<std::vector<std::string>> op_list;
  std::string selected_op;        // the op the side panel describes
  bool op_order_rebuilt = false;  // the table's order was recomputed this frame (sort, filter, mode or profile changed)
  std::string ops_message;
  std::string summary_workload;  // the summary's Workload line as drawn
  // The details panel's fields in order (name, mangled, start, duration,
  // device, stream, grid, ..., launched by, nvtx (outermost first)).
  std::vector<std::pair<std::string, std::string>> details;
  std::string source_badge;  // "CAPTURED", "IMPORTED", "SYNTHETIC" as drawn in the toolbar
  std::string tooltip;       // name of the event whose hover tooltip was shown, if any
  std::string message;       // the error or status shown instead of a trace, if any
  std::string damage;        // the storage-damage banner drawn above the timeline ("INCOMPLETE file: …"), if any
  JobStats job;
  float ruler_y = 0;                     // screen y of the middle of the time ruler
  float label_width = 0;                 // of the label column (track names)
  ClickTarget label_splitter;            // its right edge: drag to resize it
  ClickTarget bottom_splitter;           // the bar above the bottom panel: drag to resize it
  float bottom_height = 0;               // of the bottom panel (tabs), as laid out this frame
  std::vector<ClickTarget> tab_targets;  // the bottom panel's tabs ("Details", "Range", …)
  // The selected range as drawn: its band on the ruler (screen x, clipped),
  // the length written there, the Range tab's status ("computing", "done"),
  // its GPU rows and kernel rows (cells as written), its zoom button.
  std::pair<float, float> range_band{0, 0};
  std::string range_length, range_status;
  std::vector<std::vector<std::string>> range_device_rows, range_kernel_rows;
  ClickTarget range_zoom_target;
  HistogramStats histogram;
  // The Findings tab: the findings in order, how their savings stand, the
  // answers, the critical path's rows; the selected finding's ranges as
  // listed, "range 2 of 10", and its previous / next buttons.
  std::vector<FindingRow> finding_list;
  std::string savings_status;
  std::vector<HelpRow> help_rows;
  std::vector<PathRow> path_rows;
  // The idle time by cause as listed ("input loading  1.2 s  40.0%"), and
  // the host lines under them ("host (N samples, THREAD): path share").
  std::vector<std::string> idle_rows, host_idle_lines;
  std::vector<std::string> evidence_rows;
  std::string evidence_step;
  ClickTarget evidence_prev, evidence_next;
  // The Compare view: B's offset onto A's axis and how it is aligned (as
  // written above B's tracks), whether B's tracks were drawn under A's; the
  // Compare tab's table shown ("categories", "kernels", "ops", "findings"),
  // its column headers (where they are) and rows as drawn (cells in column
  // order, in the table's order); its tables' tabs and its two toggles.
  TimeNs compare_offset = 0;
  std::string compare_align, compare_table;
  std::string compare_message;  // "analysing...", or why there is nothing to compare
  bool compare_timeline = false;
  std::vector<ClickTarget> compare_headers, compare_tabs, compare_toggles;
  std::vector<std::vector<std::string>> compare_list;
  ClickTarget details_histogram_target;  // the Details tab's "histogram" button
};

class View {
 public:
  View();
  ~View();
  View(const View&) = delete;
  View& operator=(const View&) = delete;

  // [SECTION] Opening traces
  void open(std::string path);                               // loads on a worker thread
  void open_with(std::string label, Loader::Source source);  // any Trace producer (synthetic, tests)
  void open_compare(std::string path);
  void open_compare_with(std::string label, Loader::Source source);
  void set_compare_document(std::shared_ptr<Document> doc);  // an already loaded B (tests, benchmarks)
  void close_compare();
  // The Compare view's toggles: B's tracks under A's; B aligned on the first
  // step (else on its start).
  void set_compare_timeline(bool on) { show_compare_timeline_ = on; }
  void set_compare_align_by_step(bool on) { compare_align_by_step_ = on; }
  void set_document(std::shared_ptr<Document> doc);  // an already loaded trace (tests)
  // A job of many ranks (docs/viewer.md, "Jobs"): the files read on a worker,
  // then shown as one timeline on the job clock.
  void open_job(TraceInputs inputs);
  void set_job(std::shared_ptr<const JobData> job);  // an already loaded job (tests)
  const JobData* job() const { return job_.get(); }
  // Opens ranks[i]'s file in the single-trace view; back_to_job() returns.
  void open_rank(std::size_t i);
  void back_to_job();
  // Selects collective instance `index` (links its parts on every rank and
  // marks the last arrival). False if there is none.
  bool select_instance(std::int64_t index);
  std::int64_t selected_instance() const { return job_instance_; }
  // Zooms so the selected instance sits in the middle fifth of the view.
  void focus_instance();
  void on_files_dropped(const std::vector<std::string>& paths);

  // [SECTION] Layout (remembered between runs in ImGui's ini file)
  // What the user sized: the label column and the bottom panel's share of
  // the height, on the Details tab and on the others.
  struct Layout {
    float label_width = 200;
    float details_fraction = 0.30f, panel_fraction = 0.58f;
  };
  const Layout& layout() const { return layout_; }
  void set_layout(const Layout& l);
  // Adds the layout to the ini file ImGui reads and writes ([GpuscopeView][Layout]):
  // call once after ImGui::CreateContext, before the first frame.
  void register_layout_settings();

  // [SECTION] Frames
  // Builds the whole UI (call between ImGui::NewFrame and ImGui::Render).
  void draw();
  // True while something moves (a drag, a held key, a change in the last
  // frames): render again now. False: nothing changes until the next input
  // event or until busy() work finishes, so the caller may sleep.
  bool animating() const;
  const FrameStats& stats() const { return stats_; }

  // [SECTION] Programmatic control (headless flags, tests)
  void show(Panel p);
  Panel panel() const { return panel_; }
  void zoom_to(TimeNs start, TimeNs end);
  void zoom_to_all();
  TimeNs view_start() const { return view_start_; }
  TimeNs view_end() const { return view_start_ + static_cast<TimeNs>(view_span_); }
  // Selects the first instance (by start) of the kernel named `name` (exact
  // demangled or mangled name, else the first name containing it) inside the
  // visible range if there is one there, else anywhere. False if none.
  bool select_kernel(std::string_view name);
  void select(Selection s);
  // Zooms so the selection (and the API call that launched it) is in view.
  void focus_selection();
  const Selection& selection() const { return selection_; }
  // Draw the critical path of the visible steps (the toolbar's toggle).
  void set_show_critical_path(bool on) { show_critical_path_ = on; }
  bool show_critical_path() const { return show_critical_path_; }
  void set_search(std::string_view text, bool regex);
  // The Ops tab: per name × shapes (true) or per name; selecting an op (the
  // first row of that name) highlights its kernels and selects the first in
  // view (else the first of all) without moving the view. False if none.
  void set_ops_by_shapes(bool on) { op_by_shapes_ = on; }
  bool ops_by_shapes() const { return op_by_shapes_; }
  bool select_op(std::string_view name);
  // A selected time range (docs/viewer.md, "Range selection"): its statistics
  // are computed on a worker (range_stats() is null until they are ready).
  void select_range(TimeNs start, TimeNs end);
  void clear_range();
  void clear_selection();  // Escape: selection, matches, evidence and range
  void zoom_to_range();
  std::optional<TimeRange> range() const { return range_; }
  std::shared_ptr<const WindowStats> range_stats() const;
  // The duration histogram of every instance of a name: kernels (table
  // kernels) or ops and NVTX ranges (table ranges); false if none.
  // show_histogram_of() takes a kernel's name, else a range's. A bin
  // selected highlights its instances and selects the first; selecting it
  // again steps to the next.
  bool show_histogram(TableId table, StringId name);
  bool show_histogram_of(std::string_view name);
  void select_histogram_bin(std::size_t bin);
  const DurationHistogram* histogram() const { return histogram_ ? &*histogram_ : nullptr; }
  // A finding's evidence, one time range at a time (a click on the finding):
  // its kernels highlighted, its first range zoomed to; step_evidence()
  // goes to the next (or previous) range, wrapping. False: no such finding.
  bool select_finding(std::string_view id);
  void step_evidence(bool forward);
  const std::string& selected_finding() const { return evidence_label_; }
  std::size_t evidence_index() const { return evidence_index_; }
  const std::vector<TimeRange>& evidence() const { return evidence_; }
  const MatchSet& matches() const { return matches_; }
  const std::string& matches_label() const { return matches_label_; }
  double last_frame_ms() const { return last_frame_ms_; }

  const Document* document() const { return doc_.get(); }
  const Document* compare_document() const { return compare_doc_.get(); }
  const Loader& loader() const { return loader_; }
  const FileBrowser& browser() const { return browser_; }
  // Still reading, indexing or analysing either trace.
  bool busy() const;
  // The load error of the main trace, empty if none.
  std::string load_error() const;

 private:
  // What the timeline keeps per drawn document. The compare pass draws B's
  // tracks with these swapped in (draw_compare_groups); A's are the members.
  struct TimelineState {
    std::shared_ptr<Document> doc;
    std::unordered_map<StringId, std::string> short_names;
    std::vector<std::uint8_t> group_collapsed, track_collapsed;
    std::vector<float> track_y;
    std::unordered_map<std::uint32_t, std::vector<CounterLane>> counter_lanes;
    const Document* counter_lanes_for = nullptr;
  };

  // view.cpp
  void poll_loaders();
  void adopt(std::shared_ptr<Document> doc);
  void draw_menu_bar();
  void draw_toolbar();
  void draw_status_bar();
  void draw_welcome();
  void draw_loading(const Loader& loader, const char* what);
  void draw_error(const std::string& message);
  void draw_damage_banner();
  void draw_bottom_panel(float height);
  void layout_changed();  // view_layout.cpp: the ini file is written again
  void unregister_layout_settings();
  void handle_global_keys();
  std::string_view short_label(StringId name);      // cached format::short_kernel_name()
  static std::string_view verdict_text(Verdict v);  // an answer as the Findings tab writes it ("YES", "n/a")
  // view_timeline.cpp
  struct FoldedBlock {
    TimeNs start, end;
    const TrackRow* row;
    MultiLodItem item;  // positions in each of the row's segments
  };
  struct RowSpan {  // where a row is drawn this frame
    float left, right, y;
    float mouse_x;   // -inf unless the mouse is over the row
    float digit_px;  // width of a digit: labels narrower than two are not tried
    float char_px;   // width of an "m": how many characters of an event's name fit
  };
  void draw_timeline(float height);
  void label_splitter(float x0, float top, float bottom);
  void draw_evidence_bands(ImDrawList* dl, float x0, float width, float top, float bottom);
  enum class GroupFilter : std::uint8_t { all, gpus, hosts };  // hosts: CPU processes and the counters of none
  float draw_groups(ImDrawList* dl, float left, float x0, float width, float y, float top, float bottom,
                    GroupFilter which);
  void timeline_hover_and_click(float x0);
  void timeline_input(float x0, float width, float top, float bottom);
  static constexpr float kMinVisiblePx = 3;  // events narrower than this fold into blocks (timeline and job)
  void draw_ruler(ImDrawList* dl, float x0, float y0, float width);
  void draw_legend();
  bool legend_entry(std::string_view name, ImU32 color, bool marker, bool& first);  // true: clicked
  const std::vector<NamedColor>& legend_kinds();
  // view_range.cpp
  static constexpr float kRulerHeight = 22;
  TimeNs time_at(float x, float x0, float width) const;
  void ruler_input(float x0, float y0, float width);
  bool range_drag_on_tracks(bool over, float x0, float width);  // true: the mouse is selecting a range
  void draw_range_on_ruler(ImDrawList* dl, float x0, float y0, float width);
  void draw_range_overlay(ImDrawList* dl, float x0, float width, float top, float bottom);
  void draw_range_panel();
  void draw_range_devices(const WindowStats& ws);
  void draw_range_streams(const WindowStats& ws);
  // view_histogram.cpp
  void draw_histogram();
  void draw_histogram_bars(const DurationHistogram& h, float height);
  void draw_histogram_steps(const DurationHistogram& h);
  void histogram_of_selection();  // of the selected kernel's or range's name (H)
  float draw_activity_lanes(ImDrawList* dl, const DeviceActivity& a, float x0, float y, float width);
  // view_counters.cpp
  const std::vector<CounterLane>& lanes_of(std::uint32_t device);
  // Lanes of `device`'s series (kNoDevice: those of no GPU) from y down; their height.
  float draw_counter_lanes(ImDrawList* dl, std::uint32_t device, const std::string& group, float label_x, float x0,
                           float y, float width);
  void draw_counter_lane(ImDrawList* dl, const CounterLane& lane, float label_x, float x0, float y, float width,
                         CounterLaneStats& ls);
  void draw_step_sparkline(const Step& s, float width, float height);
  void draw_track(ImDrawList* dl, const TrackInfo& info, float x0, float y, float width, TrackStats& ts);
  void draw_row(ImDrawList* dl, const TrackRow& row, float x0, float y, float width, TrackStats& ts);
  static constexpr std::size_t kMaxFlameRows = 12;  // deeper frames are in the tooltip and the details
  std::size_t flame_rows(const TrackInfo& info) const;
  void draw_samples(ImDrawList* dl, const TrackInfo& info, float x0, float y, float width, TrackStats& ts);
  void draw_flame(ImDrawList* dl, const ThreadSamples& s, std::size_t rows, float x0, float y, float width,
                  TrackStats& ts);
  void draw_folded(ImDrawList* dl, const TrackRow& row, const MultiLodItem& it, float xa, float xb, const RowSpan& span,
                   TrackStats& ts);
  void draw_kernel_bands(ImDrawList* dl, const CategoryTimes& mix, RowIndex first_row, float xa, float xb, float top,
                         float bottom, float visible_w);
  void draw_single(ImDrawList* dl, const LaneSegment& seg, RowIndex r, float xa, float xb, const RowSpan& span,
                   TrackStats& ts);
  void folded_tooltip(const FoldedBlock& b);
  CategoryTimes folded_kernel_time(const LaneSegment& seg, RowIndex first, RowIndex last) const;
  void draw_matches(ImDrawList* dl, const TrackInfo& info, float x0, float y, float width);
  void draw_match_cluster(ImDrawList* dl, TimeNs start, TimeNs end, std::uint64_t count, float ry, float x0,
                          float width, bool ticks);
  void draw_match_count(ImDrawList* dl, std::uint64_t count, float ry, float x0, float width);
  void draw_flow(ImDrawList* dl, float x0, float width);
  void draw_critical_path(ImDrawList* dl, float x0, float width);
  bool row_position(TableId table, RowIndex row, float* y) const;  // screen y of the row holding an event
  ImU32 event_color(TableId table, RowIndex row) const;
  std::string_view event_label(TableId table, RowIndex row);
  float track_height(const TrackInfo& info, bool collapsed) const;
  void center_on(TimeNs start, TimeNs end);
  double px_per_ns(float width) const { return static_cast<double>(width) / view_span_; }
  TimeRange content_range() const;  // what zoom_to_all shows: the trace, or the job on its clock
  // view_job.cpp
  void adopt_job(std::shared_ptr<const JobData> job);
  void draw_job(float height);
  void draw_job_toolbar();
  void draw_job_loading();
  void draw_job_left_out();
  void draw_job_overview(float height);
  void draw_job_timeline(float height);
  float draw_job_rank(ImDrawList* dl, std::size_t r, float left, float x0, float width, float y, float top,
                      float bottom);
  void draw_job_parts(ImDrawList* dl, std::size_t r, std::size_t g, float x0, float width, float y, JobRankStats& rs);
  void draw_job_instance(ImDrawList* dl, float x0, float width, float top, float bottom);
  void draw_job_details(float height);
  void draw_job_arrivals();
  void draw_job_findings();
  // view_details.cpp
  void draw_details();
  void draw_details_name(TableId table, RowIndex r);
  void draw_details_fields(TableId table, RowIndex r);
  void draw_details_of_kind(TableId table, RowIndex r);
  void draw_details_context(TableId table, RowIndex r);  // the launch, or what a call launched; the NVTX stack
  void draw_details_path(TableId table, RowIndex r);     // on the critical path or not, and its slack
  void draw_nvtx_stack(TrackId track, TimeNs t, bool own);
  void detail_row(const char* key, const std::string& value);
  void tooltip_for(TableId table, RowIndex row);
  void sample_tooltip(const ThreadSamples& s, std::size_t i);
  void draw_sample_details(const ThreadSamples& s, std::size_t i);
  std::string event_name(TableId table, RowIndex row) const;
  std::vector<RowIndex> nvtx_stack(TrackId track, TimeNs t) const;
  // A panel that shows analysis results: records that it was drawn and returns
  // the profile, or draws "analysing..." / the analysis error and returns null.
  std::shared_ptr<const Profile> panel_profile(const char* panel);
  // Counts `panel` as drawn; false when there is no document, or when `open`
  // is false, after saying `none` (greyed) in the panel instead.
  bool panel_open(const char* panel, bool open, const char* none);
  // Two children side by side: `side` is min(max_side, side_share × the
  // width) wide at the right, `main` takes the rest.
  using ProfilePart = void (View::*)(const Profile&);
  void side_by_side(const Profile& profile, const char* main_id, ProfilePart main, const char* side_id,
                    ProfilePart side, float max_side, float side_share);
  // view_hotspots.cpp
  void draw_hotspots();
  void draw_kernel_table(const Profile& profile);
  void draw_category_table(const Profile& profile);
  void sort_hotspots(const Profile& profile, ImGuiTableSortSpecs* specs);
  void highlight_kernel(std::string_view name);
  void highlight_category(KernelCategory c);
  // view_ops.cpp
  void draw_ops();
  void draw_op_table(const Profile& profile);
  void draw_selected_op(const Profile& profile);
  void sort_ops(const Profile& profile, ImGuiTableSortSpecs* specs);
  // index into the mode's rows; move_view: centre the first kernel (a click), else keep the view (select_op)
  void highlight_op(const Profile& profile, std::uint32_t index, bool move_view = true);
  bool op_selected(const Profile& profile, std::uint32_t index) const;
  // view_findings.cpp
  void draw_findings();
  void show_evidence(std::size_t i);
  std::string saving_text(const Profile& p, const Finding& f) const;
  void draw_savings_status(const Profile& p);
  void draw_finding(const Profile& p, std::size_t i);
  void draw_evidence_list(const Profile& p, const Finding& f);
  void draw_helps(const Profile& p);
  void draw_idle_charges(const Profile& p);
  void draw_path_breakdown(const Profile& p);
  // view_summary.cpp
  void draw_summary();
  void draw_summary_workload(const WorkloadKind& w);
  void draw_summary_devices(const Profile& p);
  void draw_summary_categories(const Profile& p);
  void draw_summary_steps(const StepSummary& steps);
  void draw_summary_launches(const Profile& p, const TraceMeta& meta);
  // view_search.cpp
  void draw_search_bar();
  void run_search();
  void step_match(bool forward);
  // view_compare.cpp
  void draw_compare();
  void swap_timeline_state(TimelineState& other);
  void update_compare_alignment();
  TimeRange pan_range() const;  // where the view may go: A's content, and B's on A's axis
  float draw_compare_groups(ImDrawList* dl, float left, float x0, float width, float y, float top, float bottom,
                            GroupFilter which);
  void draw_compare_diff(const std::shared_ptr<const Profile>& a, const std::shared_ptr<const Profile>& b);
  void draw_compare_totals(const Profile& a, const Profile& b);  // step time and utilization, A and B
  void draw_compare_categories(const Profile& a, const Profile& b);

  friend class ViewTestAccess;

  // Documents
  Loader loader_, compare_loader_;
  std::shared_ptr<Document> doc_, compare_doc_;
  std::string compare_error_;
  std::unordered_map<StringId, std::string> short_names_;
  TimelineState compare_state_;  // B's, while it is not being drawn
  bool compare_pass_ = false;    // drawing B: no hover, selection or highlights (they are A's)
  bool show_compare_timeline_ = true;
  bool compare_align_by_step_ = true;
  TimeNs compare_offset_ = 0;       // added to B's times to put them on A's axis
  std::string compare_align_text_;  // how B is aligned, as written above its tracks
  std::shared_ptr<const Profile> compare_diff_for_a_, compare_diff_for_b_;  // the diff below is of these two
  std::optional<ProfileDiff> compare_diff_;
  static constexpr std::size_t kCompareRows = 50;            // kernels and ops listed (gpuscope diff --top)
  std::array<std::vector<std::uint32_t>, 4> compare_order_;  // sorted views of its kernels, ops, findings, answers
  DeviceCoverage coverage_;                                  // GPUs of the open trace declared and with data
  std::string damage_headline_;                              // what storage lost of the open file; empty when intact
  FileBrowser browser_;
  bool browser_for_compare_ = false;

  // Layout
  Panel panel_ = Panel::timeline;
  bool panel_requested_ = false;  // select panel_'s tab in the next frame
  Layout layout_;

  // Timeline
  static constexpr float kMinLabelWidth = 80;
  bool label_splitter_hot_ = false;  // the mouse is on the label column's edge (or dragging it): not a label click
  TimeNs view_start_ = 0;
  double view_span_ = 1;  // ns across the timeline width (double: zoom is continuous)
  float scroll_y_ = 0;
  std::vector<std::uint8_t> group_collapsed_, track_collapsed_;
  bool dragging_ = false;
  float drag_last_x_ = 0, drag_last_y_ = 0;
  float timeline_width_ = 1000;  // of the last frame, for key zoom/pan around the centre
  std::optional<MatchRef> hovered_;
  std::optional<FoldedBlock> hovered_block_;
  std::vector<LaneSample> lane_buf_;                                           // reused every frame
  std::unordered_map<std::uint32_t, std::vector<CounterLane>> counter_lanes_;  // by device, for counter_lanes_for_
  const Document* counter_lanes_for_ = nullptr;
  std::vector<CounterColumn> counter_buf_;  // reused every frame
  std::vector<float> track_y_;              // per TrackInfo: screen y of its first row this frame, NaN if hidden
  bool click_pending_ = false;              // left button went down on the tracks area
  float click_x_ = 0, click_y_ = 0;

  // Legend: the other kinds the open trace draws (computed once per document)
  std::vector<NamedColor> legend_kinds_;
  const Document* legend_for_ = nullptr;

  // Range selection
  std::optional<TimeRange> range_;
  TimeNs range_anchor_ = 0;         // where the drag started
  bool range_dragging_ = false;     // a drag is selecting a range
  bool tracks_range_drag_ = false;  // … with Shift on the tracks
  RangeStatsWorker range_worker_;
  std::array<std::vector<std::uint32_t>, 3> range_order_;  // sorted views of its kernels, categories, ops
  std::vector<std::string> range_kernel_names_;            // its kernels as shown (short, numbered)
  std::shared_ptr<const WindowStats> range_names_for_;     // the statistics those names are of

  // Duration histogram
  std::optional<DurationHistogram> histogram_;
  std::int64_t histogram_bin_ = -1;

  // Selection, highlights, search
  Selection selection_;
  MatchSet matches_;
  std::string matches_label_;  // "search: conv", "kernel: foo", "category: padding"
  std::optional<MatchRef> match_cursor_;
  char search_text_[256] = {};
  bool search_regex_ = false;
  bool focus_search_ = false;  // Ctrl+F: put the keyboard in the search box next frame
  std::string search_error_;
  std::vector<TimeRange> evidence_;           // of the finding clicked last
  std::string evidence_label_;                // its id
  std::size_t evidence_index_ = 0;            // the range shown
  std::vector<std::uint32_t> hotspot_order_;  // sorted view of Profile::hotspots
  std::vector<std::string> hotspot_names_;    // short names of Profile::hotspots, numbered where they collide
  const Profile* hotspot_order_for_ = nullptr;
  std::string highlighted_kernel_;  // the hotspot row clicked last
  // Ops tab: the sorted, filtered view of Profile::op_names or ::ops,
  // recomputed only when the sort, the filter, the mode or the profile changes.
  bool op_by_shapes_ = false;
  char op_filter_[128] = {};
  OpColumn op_sort_column_ = OpColumn::gpu_total;
  bool op_sort_ascending_ = false;
  std::vector<std::uint32_t> op_order_;
  const Profile* op_order_for_ = nullptr;
  std::string op_order_filter_;
  bool op_order_by_shapes_ = false;
  const Profile* selected_op_for_ = nullptr;  // the op row clicked last: its profile, index and mode
  std::uint32_t selected_op_ = 0;
  bool selected_op_by_shapes_ = false;
  std::uint64_t selected_op_kernel_count_ = 0;
  std::vector<OpRowKernel> selected_op_kernels_;        // its heaviest kernels
  std::vector<std::string> selected_op_kernel_labels_;  // … as the hotspot table names them
  bool show_critical_path_ = false;

  // Job view
  JobLoader job_loader_;
  std::shared_ptr<const JobData> job_;
  std::vector<RankWait> job_waits_;  // rank_waits(*job_), computed once
  std::vector<std::uint8_t> job_collapsed_;
  std::int64_t job_instance_ = -1;
  std::int64_t job_scroll_to_ = -1;  // a rank to bring into view next frame
  std::vector<float> job_rank_y_;    // per rank: screen y of its header this frame, for the instance marks
  std::optional<std::int64_t> job_hovered_instance_;
  std::optional<TimeRange> job_hovered_block_;
  std::string job_drop_error_;
  TimeNs job_view_start_ = 0;  // the job view's range while a rank is open in full
  double job_view_span_ = 0;   // why the files dropped as a job cannot be opened

  // Frame bookkeeping
  FrameStats stats_;
  const Profile* profile_seen_ = nullptr;
  ImVec2 last_mouse_{-1, -1};
  int redraw_frames_ = 2;  // frames still to draw after the last change
  double last_frame_ms_ = 0;
};

}  // namespace gpuscope::viewer
