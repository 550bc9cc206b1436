// The report's JSON on an analysed job (its keys against the doc:
// tests/export/report_fields_test.cpp), its round trip, its reader on
// malformed input; the text report and diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "analysis/graph/savings.h"
#include "analysis/passes/hta.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "import/open_trace.h"
#include "support/real_traces.h"
#include "support/test_traces.h"
#include "trace/error.h"

namespace gpuscope {
namespace {

using nlohmann::json;
using testing::TraceFactory;
namespace names = testing::names;
constexpr TimeNs us = 1'000;
constexpr TimeNs ms = 1'000'000;

// A job with something in every section: two ranks with steps, padding,
// communication, copies, syncs.
Profile sample_profile(TimeNs pad = 210 * us) {
  static std::vector<std::unique_ptr<Trace>> keep;
  TraceFactory r0(0), r1(1);
  r0.meta().host = "a";
  r1.meta().host = "b";
  for (TraceFactory* f : {&r0, &r1}) {
    TimeNs t = 1'000'000;
    for (int s = 0; s < 4; ++s) {
      const TimeNs s0 = t;
      f->kernel(0, 7, names::kConvTensorCore, t, t + 500 * us, t - 100 * us);
      f->kernel(0, 7, names::kPad, t + 501 * us, t + 501 * us + pad, t - 90 * us);
      t += 501 * us + pad;
      f->kernel(0, 13, names::kAllReduce, t, t + 200 * us, t - 300 * us);
      f->memcpy(0, 9, CopyKind::htod, MemoryKind::pageable, MemoryKind::device, 1 << 20, t, t + 50 * us);
      t += 201 * us;
      f->sync(SyncType::stream, 0, 7, t - 10 * us, t);
      f->range("step " + std::to_string(s), s0 - 100 * us, t);
    }
  }
  keep.push_back(std::make_unique<Trace>(r0.build()));
  keep.push_back(std::make_unique<Trace>(r1.build()));
  const JobInput in[] = {{keep[keep.size() - 2].get(), "rank0.gscope"}, {keep.back().get(), "rank1.gscope"}};
  return analyze_job(in);
}

bool is_share(const json& v) { return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1; }

TEST(ReportJson, HasTheDocumentedKeysAndTypes) {
  const Profile p = sample_profile();
  ASSERT_FALSE(p.findings.empty());
  const json j = json::parse(report_json(p));
  EXPECT_EQ(j["schema"], "gpuscope.report/1");
  for (const char* key : {"devices", "categories", "hotspots", "steps", "idle", "findings", "temporal_breakdown",
                          "launches", "ranks", "skew", "syncs", "memcpys", "step_summary", "trace_stats"})
    EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_EQ(j["devices"].size(), 2u);
  for (const json& d : j["devices"]) {
    for (const char* key : {"id", "span_ns", "busy_ns"}) EXPECT_TRUE(d[key].is_number_integer()) << key;
    EXPECT_TRUE(d["name"].is_string());
    for (const char* key : {"utilization", "kernel_concurrency", "memcpy_compute_overlap"})
      EXPECT_TRUE(is_share(d[key])) << key;
  }
  for (const json& c : j["categories"]) {
    EXPECT_TRUE(c["name"].is_string());
    EXPECT_TRUE(c["time_ns"].is_number_integer());
    EXPECT_TRUE(is_share(c["share"]));
  }
  ASSERT_EQ(j["temporal_breakdown"].size(), 2u);
  for (const json& t : j["temporal_breakdown"]) {
    for (const char* key : {"rank", "span_ns", "idle_ns", "compute_ns", "non_compute_ns"})
      EXPECT_TRUE(t[key].is_number_integer()) << key;
    for (const char* key : {"idle_share", "compute_share", "non_compute_share"}) EXPECT_TRUE(is_share(t[key])) << key;
  }
  for (const json& f : j["findings"]) {
    for (const char* key : {"id", "severity", "title", "evidence", "recommendation"}) EXPECT_TRUE(f[key].is_string());
    EXPECT_TRUE(f["saving_ns"].is_number_integer());
    ASSERT_TRUE(f["ranges"].is_array());
    for (const json& r : f["ranges"]) EXPECT_LE(r["start_ns"].get<std::int64_t>(), r["end_ns"].get<std::int64_t>());
  }
  EXPECT_EQ(j["steps"].size(), 8u);
  EXPECT_EQ(j["step_summary"]["source"], "nvtx");
  EXPECT_FALSE(j["clock_alignment"].get<std::string>().empty());
}

TEST(ReportJson, RoundTripsThroughTheReader) {
  const Profile p = sample_profile();
  const std::string text = report_json(p);
  const Profile back = parse_report_json(text, "saved.json");
  EXPECT_EQ(report_json(back), text);
  EXPECT_TRUE(looks_like_report_json(text));
  EXPECT_FALSE(looks_like_report_json("{\"traceEvents\": []}"));
  EXPECT_FALSE(looks_like_report_json("[1,2]"));
  // --top keeps the largest hotspots.
  ReportJsonOptions top1;
  top1.top = 1;
  EXPECT_EQ(json::parse(report_json(p, top1))["hotspots"].size(), 1u);
}

void expect_input_error(const std::string& text, const std::string& what) {
  try {
    parse_report_json(text, "bad.json");
    ADD_FAILURE() << "accepted: " << text.substr(0, 80);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.json");
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ReportJson, RefusesMalformedDocumentsWithAClearError) {
  const std::string good = report_json(sample_profile());
  expect_input_error("", "not valid JSON");
  expect_input_error(good.substr(0, good.size() / 2), "not valid JSON");
  expect_input_error("{\"schema\": \"gpuscope.report/9\"}", "is not gpuscope.report/1");
  expect_input_error("{\"schema\": 1}", "\"schema\": expected a string");
  expect_input_error("{\"schema\": 1623e142624633484000}", "number overflow");  // found by fuzz_report_json
  expect_input_error(std::string(100000, '[') + std::string(100000, ']'), "nested more than 32 levels");
  json j = json::parse(good);
  j["devices"][1]["span_ns"] = "long";
  expect_input_error(j.dump(), "\"devices[1].span_ns\": expected an integer");
  j = json::parse(good);
  j["findings"][0].erase("title");
  expect_input_error(j.dump(), "\"findings[0].title\": missing");
  j = json::parse(good);
  j["categories"][0]["name"] = "teleportation";
  expect_input_error(j.dump(), "unknown value \"teleportation\"");
  j = json::parse(good);
  j["findings"][0]["ranges"] = json::array({json{{"start_ns", 5}, {"end_ns", 1}}});
  expect_input_error(j.dump(), "ends before it starts");
  // Unknown keys are fine (a newer writer).
  j = json::parse(good);
  j["something_new"] = 42;
  EXPECT_NO_THROW(parse_report_json(j.dump(), "newer.json"));
}

// One recorded step has no spread to quote (no mean or median of one), and
// a step that holds several data-loader fetches holds several iterations of
// the loop: the Steps line says both.
// A trace of launch calls alone: its syncs are unknown, never "0".
TEST(ReportText, AFilteredTracesSyncsAreUnknown) {
  TraceFactory f;
  f.device(0);
  for (int i = 0; i < 120; ++i) f.kernel(0, 7, names::kRelu, 1 * ms + i * 50 * us, 1 * ms + i * 50 * us + 40 * us);
  const std::string text = report_text(analyze(f.build()));
  EXPECT_NE(text.find("Recording: every one of its 120 API calls launched a GPU op"), std::string::npos) << text;
  EXPECT_NE(text.find("Host syncs: unknown: the trace keeps only launch calls"), std::string::npos) << text;
  EXPECT_EQ(text.find("Host syncs: 0"), std::string::npos) << text;
}

// A trace whose GPU ops are a sample (one in 2,500 correlation ids): the
// critical path runs through the few ops kept and the gaps where the rest
// ran, so its split by kind is unknown, and no share of it is printed.
TEST(ReportText, ASampledTracesCriticalPathSplitIsUnknown) {
  TraceFactory f;
  f.device(0);
  for (std::uint32_t i = 0; i < 20; ++i) {
    KernelRow k;
    k.start = 1 * ms + TimeNs(i) * 2 * ms;
    k.end = k.start + 100 * us;
    k.track = f.builder().gpu_track(0, 7);
    k.name = f.builder().intern(names::kRelu);
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = k.block_y = k.block_z = 1;
    k.correlation = 1 + i * 2'500;
    f.builder().add_kernel(k);
  }
  const Trace t = f.build();
  const JobInput in{&t, "sampled.gscope"};
  const Profile p = graph::analyze_and_simulate(std::span<const JobInput>(&in, 1), {});
  ASSERT_EQ(p.workload.run, "sampled");
  ASSERT_GT(p.critical_path.length_ns, 0);
  const std::string text = report_text(p);
  EXPECT_NE(text.find("  not shown: the trace is a sample of the GPU's work (see Run above), most of its GPU ops are\n"
                      "  missing, so the path's split between GPU work, host time and GPU waits is unknown"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("by kind:"), std::string::npos) << text;
  EXPECT_EQ(text.find("on the path"), std::string::npos) << text;
}

TEST(ReportText, OneStepWithSeveralFetchesSaysSo) {
  TraceFactory f;
  f.device(0);
  f.range("ProfilerStep#3", 1 * ms, 40 * ms);
  TimeNs t = 2 * ms;
  for (int i = 0; i < 3; ++i) {
    f.range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t, t + 5 * ms);
    f.kernel(0, 7, names::kConvTensorCore, t + 6 * ms, t + 10 * ms, t + 5 * ms + 10 * us);
    t += 12 * ms;
  }
  const Trace tr = f.build();
  const Profile p = analyze(tr);
  ASSERT_EQ(p.steps.steps.size(), 1u);
  EXPECT_EQ(p.steps.input_fetches, 3u);
  const std::string text = report_text(p);
  EXPECT_NE(text.find("Steps: 1 from profiler_step · 39.0 ms (one step recorded: no step-to-step spread"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("median 39.0 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("3 data-loader fetches begin inside 1 step"), std::string::npos) << text;
}

// A slow step whose ops each took longer on the host says that the host ran
// slower and that the trace does not say why; one whose growth is one op's
// does not.
TEST(ReportText, SlowStepsSayWhatGrew) {
  Profile p;
  Step st;
  st.name = "ProfilerStep#1";
  st.range = {0, 20 * ms};
  p.steps.steps = {st, st, st, st};
  p.steps.source = StepSource::profiler_step;
  SlowStep spread{"ProfilerStep#9", 0, 0, 33 * ms, 25 * ms, 10 * ms, 4 * ms, 12 * ms, 12 * ms, {}};
  spread.ops = {
      {"aten::batch_norm", 6 * ms, 4 * ms}, {"aten::conv2d", 5 * ms, 3 * ms}, {"aten::relu_", 3 * ms, 2 * ms}};
  SlowStep one = spread;
  one.name = "ProfilerStep#5";
  one.ops = {{"aten::to", 9 * ms, 2 * ms}, {"aten::conv2d", 4 * ms, 3 * ms}, {"aten::relu_", 3 * ms, 2 * ms}};
  p.steps.slow_steps = {spread, one};
  std::string text;  // the lines unwrapped
  for (const char c : report_text(p))
    if (c == '\n')
      text += ' ';
    else if (c != ' ' || text.empty() || text.back() != ' ')
      text += c;
  const std::size_t a = text.find("ProfilerStep#9 (GPU 0): 33.0 ms against 25.0 ms (+8.0 ms)");
  const std::size_t b = text.find("ProfilerStep#5 (GPU 0)");
  ASSERT_NE(a, std::string::npos) << text;
  ASSERT_NE(b, std::string::npos) << text;
  const std::string first = text.substr(a, b - a), second = text.substr(b);
  EXPECT_NE(first.find("the same ops each took longer on the host"), std::string::npos) << first;
  EXPECT_NE(first.find("the trace does not record"), std::string::npos) << first;
  EXPECT_EQ(second.find("the same ops each took longer"), std::string::npos) << second;
  EXPECT_NE(second.find("aten::to 9.0 ms (2.0 ms)"), std::string::npos) << second;
}

// HTA's idle share a point or more away from the report's own: both are
// said, and the definitions that part them named.
TEST(ReportText, HtaIdleFarFromTheReportsOwnIsExplained) {
  Profile p = sample_profile();
  ASSERT_FALSE(p.temporal_breakdown.empty());
  TemporalBreakdown& t = p.temporal_breakdown.front();
  const DeviceSummary* d = nullptr;
  for (const DeviceSummary& x : p.devices) d = x.id == t.device && x.rank == t.rank ? &x : d;
  ASSERT_NE(d, nullptr);
  t.idle_share = 1.0 - d->utilization;
  EXPECT_EQ(report_text(p).find("HTA's differs by its definitions"), std::string::npos);
  t.idle_share = 1.0 - d->utilization + 0.04;
  const std::string text = report_text(p);
  EXPECT_NE(text.find("HTA's differs by its definitions"), std::string::npos) << text;
  EXPECT_NE(text.find("this report's idle for the GPU is"), std::string::npos) << text;
}

// aten::bmm inside aten::matmul with the same calls and FLOPs is the same
// math (the matmul's time also holds the copy it makes to make its input
// contiguous): TimeSformer's attention products are one row each.
TEST(ReportText, TheRooflineShowsAnOpInsideAnotherOfTheSameWorkOnce) {
  const Profile p = analyze(open_trace(testing::real_trace("tracelens-timesformer-h100.json.gz")));
  const std::string text = report_text(p);
  const std::size_t at = text.find("Roofline of the heaviest ops with a cost formula");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string table = text.substr(at, text.find("\n\n", at) - at);
  EXPECT_NE(table.find("aten::matmul bf16   [[8,12,3137,64],[8,12,64,3137]]"), std::string::npos) << table;
  EXPECT_EQ(table.find("aten::bmm bf16      [[96,3137,64],[96,64,3137]]"), std::string::npos) << table;
  EXPECT_NE(table.find("or an op inside one shown with its calls and FLOPs"), std::string::npos) << table;
}

// The range profiler's trace has host syncs but no GPU ops: whether the GPU
// idled after them is unknown, not 0 ns.
TEST(ReportText, SyncsWithoutGpuOpsLeaveTheIdleAfterThemUnknown) {
  const Profile p = analyze(open_trace(testing::real_trace("review/hta-cupti-range-profiler.json.gz")));
  ASSERT_TRUE(p.devices.empty());
  const std::string text = report_text(p);
  EXPECT_NE(text.find("GPU idle after them: unknown (the trace has no GPU ops)"), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU idle after them 0 ns"), std::string::npos) << text;
}

// A minor observation whose time lies inside a numbered finding's (a copy
// that blocked the host while the GPU idled for the finding's cause) says
// so; one elsewhere does not.
TEST(ReportText, AMinorObservationInsideANumberedFindingsTimeSaysSo) {
  Profile p = sample_profile();
  ASSERT_FALSE(p.findings.empty());
  p.findings[0].ranges = {{1'000'000, 500'000'000}};
  Finding m;
  m.id = "sync-memcpy";
  m.title = "1 copy blocks the host 463.1 ms";
  m.ranges = {{2'000'000, 465'000'000}};
  p.minor_findings = {m};
  EXPECT_NE(report_text(p).find("(sync-memcpy; its time lies inside finding 1's)"), std::string::npos)
      << report_text(p);
  p.minor_findings[0].ranges = {{600'000'000, 900'000'000}};
  EXPECT_EQ(report_text(p).find("its time lies inside finding"), std::string::npos) << report_text(p);
}

TEST(ReportText, ANegativeHtaShareIsShownAsZeroAndExplained) {
  Profile p = sample_profile();
  ASSERT_FALSE(p.temporal_breakdown.empty());
  TemporalBreakdown& t = p.temporal_breakdown.front();
  t.non_compute_share = 0;
  t.non_compute_note =
      "HTA's own non-compute figure is -0.030%: it rounds times to whole µs, and ops shorter than "
      "that rounding count against the busy time; shown as 0";
  const std::string text = report_text(p);
  EXPECT_EQ(text.find("non-compute -"), std::string::npos) << text;
  EXPECT_NE(text.find("non-compute 0.00%"), std::string::npos) << text;
  EXPECT_NE(text.find("HTA's own non-compute figure is -0.030%"), std::string::npos) << text;
  // A share that is not negative gets no note.
  t.non_compute_share = 0.1;
  t.non_compute_note.clear();
  EXPECT_EQ(report_text(p).find("HTA's own non-compute figure"), std::string::npos);
  // make_temporal_breakdown() is what says so: more compute than busy time.
  const TemporalBreakdown neg = make_temporal_breakdown(0, 0, 1'000'000, 500'000, 500'300);
  EXPECT_EQ(neg.non_compute_share, 0.0);
  EXPECT_EQ(neg.non_compute_ns, 0);
  EXPECT_NE(neg.non_compute_note.find("-0.030%"), std::string::npos) << neg.non_compute_note;
}

TEST(ReportText, ShowsFindingsFirstWithTheirNumbers) {
  const Profile p = sample_profile();
  const std::string text = report_text(p);
  const auto findings = text.find("Findings, the critical first, then by estimated saving");
  const auto gpus = text.find("GPUs (window");
  ASSERT_NE(findings, std::string::npos) << text;
  ASSERT_NE(gpus, std::string::npos);
  EXPECT_LT(findings, gpus);
  EXPECT_NE(text.find("padding-hotspot"), std::string::npos);
  EXPECT_NE(text.find("Eigen TensorPaddingOp"), std::string::npos);
  EXPECT_NE(text.find("HTA temporal breakdown"), std::string::npos);
  EXPECT_NE(text.find("Ranks and GPUs"), std::string::npos);
  EXPECT_NE(text.find("Clocks: "), std::string::npos);
  EXPECT_EQ(text.find("\n\n\n"), std::string::npos);
  ReportTextOptions two;
  two.top = 2;
  EXPECT_NE(report_text(p, two).find("Top 2 kernels"), std::string::npos);

  TraceFactory synthetic;
  const Trace t = synthetic.build();
  EXPECT_NE(report_text(analyze(t)).find("SYNTHETIC"), std::string::npos);
}

TEST(ReportText, ColoursSeveritiesOnlyWhenAsked) {
  const Profile p = sample_profile();
  ASSERT_FALSE(p.findings.empty());
  EXPECT_EQ(report_text(p).find('\033'), std::string::npos);
  ReportTextOptions colour;
  colour.colour = true;
  const std::string text = report_text(p, colour);
  const std::string tag = "[" + std::string(to_string(p.findings[0].severity)) + "]";
  const std::size_t at = text.find(tag);
  ASSERT_NE(at, std::string::npos) << text;
  ASSERT_GE(at, 2u);
  EXPECT_EQ(text[at - 1], 'm') << "no colour code before " << tag;
  EXPECT_EQ(text.substr(at + tag.size(), 4), "\033[0m");
}

// The verdict ("YES", "no", "n/a") the report gives to one of the usual questions.
std::string verdict(const std::string& text, const std::string& question) {
  const auto at = text.find("\n  " + question);
  if (at == std::string::npos) return "missing";
  std::size_t i = at + 3 + question.size();
  while (i < text.size() && text[i] == ' ') ++i;
  return text.substr(i, text.find(' ', i) - i);
}

// The reason of one of the usual questions' answers, by its id ("" if not asked).
std::string help_reason(const Profile& p, std::string_view id) {
  for (const HelpAnswer& a : p.helps)
    if (a.id == id) return a.reason;
  return {};
}

// Small kernels (8 blocks on 80 SMs) that never overlap, each launched after
// the previous one ended: more streams would not help, and the answer says why.
// One kernel of 2 µs in a step of a second: the report answers no question
// and does not call its minor observations "under 1% of the run".
TEST(ReportText, ASpanOfMicrosecondsAnswersNothingAndSaysWhy) {
  TraceFactory f;
  f.range("ProfilerStep#1", 1 * ms, 1001 * ms, 1, RangeKind::annotation, "user_annotation");
  f.kernel(0, 7, names::kRelu, 900 * ms, 900 * ms + 2 * us, 899 * ms, 5 * us);
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.workload.run, "tiny-span");
  const std::string text = report_text(p);
  EXPECT_NE(text.find("What would help? The usual changes, answered from this trace\n  not answered: the trace has "
                      "too little GPU work to tell (see Run above)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("under 1% of the run"), std::string::npos) << text;
  ASSERT_FALSE(p.minor_findings.empty()) << text;
  EXPECT_NE(text.find("the trace cannot tell what they cost"), std::string::npos) << text;
}

TEST(ReportText, MoreStreamsIsNoWhenTheGpuWaitsForTheHost) {
  TraceFactory f;
  for (int i = 0; i < 100; ++i) {
    const TimeNs start = 1'000'000 + i * 250 * us;
    f.kernel(0, 7, names::kRelu, start, start + 50 * us, start - 10 * us, 5'000, 8);
  }
  const Profile p = analyze(f.build());
  const std::string text = report_text(p);
  EXPECT_EQ(verdict(text, "more streams?"), "no") << text;
  EXPECT_NE(help_reason(p, "more-streams").find("GPU 0 waits for the host or for dependencies 19.8 ms"),
            std::string::npos)
      << text;
}

// Every op starts 5 ms after its launch returned, the first too, with
// nothing recorded on the GPU before it: no queue held it (the stream was
// empty), so the host's and the GPU's clocks disagree, or the GPU ran work
// the trace lacks. The report says so before any figure built on it; a
// trace whose first op starts at once says nothing.
TEST(ReportText, AFirstOpLongAfterItsLaunchWarnsOfTheClocks) {
  for (const TimeNs skew : {5 * ms, 10 * us}) {
    TraceFactory f;
    for (int i = 0; i < 20; ++i) {
      const TimeNs launch = 1 * ms + i * 100 * us;
      f.kernel(0, 7, names::kRelu, launch + 5 * us + skew + i * 40 * us, launch + 5 * us + skew + i * 40 * us + 30 * us,
               launch);
    }
    const Profile p = analyze(f.build());
    const std::string text = report_text(p);
    if (skew == 5 * ms) {
      EXPECT_NE(text.find("WARNING: the GPU's first op started 5.0 ms after its launch call returned, with no GPU "
                          "work recorded before it, and every launched op waited at least 5.0 ms"),
                std::string::npos)
          << text;
      // Nothing printed over the disagreeing clocks as if it were known.
      Profile q = p;
      q.critical_path.length_ns = 6'000, q.critical_path.gpu_wait_ns = 6'000;
      q.simulation.scope = "all 2 steps";
      const std::string path = report_text(q);
      EXPECT_NE(path.find("not shown: the host's and the GPU's clocks disagree, or unrecorded work held the GPU"),
                std::string::npos)
          << path;
      EXPECT_EQ(path.find("by kind:"), std::string::npos) << path;
      EXPECT_NE(path.find("; unreliable: see the WARNING above)"), std::string::npos) << path;
      // Neither cause is said as the one: the trace cannot tell them apart.
      EXPECT_NE(text.find("the trace cannot tell which"), std::string::npos) << text;
    } else {
      EXPECT_EQ(p.launches.first_op_delay_ns, 0);
    }
  }
}

// An op that started 3 ms after its launch call began bounds the clocks'
// disagreement: no op starts before its call does. The first op's 5 ms wait
// is then at least 2 ms of work the trace does not hold.
TEST(ReportText, AnOpSoonAfterItsCallBoundsTheClocksDisagreement) {
  TraceFactory f;
  for (int i = 0; i < 20; ++i) {
    const TimeNs launch = 1 * ms + i * 100 * us;
    f.kernel(0, 7, names::kRelu, launch + 5 * us + 5 * ms + i * 40 * us,
             launch + 5 * us + 5 * ms + i * 40 * us + 30 * us, launch);
  }
  // A graph launch-like call of 2.9 ms whose op starts 3 ms after it began.
  f.kernel(0, 7, names::kRelu, 20 * ms, 20 * ms + 30 * us, 17 * ms, 2900 * us);
  const Profile p = analyze(f.build());
  EXPECT_EQ(p.launches.clock_offset_bound_ns, 3 * ms);
  const std::string text = report_text(p);
  EXPECT_NE(text.find("clocks can disagree by at most 3.0 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("so at least 2.0 ms of that wait is the GPU running work the trace does not hold"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("the trace cannot tell which"), std::string::npos) << text;
}

// The launch line counts synchronous copy calls apart, in words that agree
// in number, and says so where they are the only launches.
TEST(ReportText, TheLaunchLineCountsSynchronousCopiesApart) {
  Profile p;
  p.launches.launches = 4;
  p.launches.cpu_launch = {4, 16'000, 4'000, 4'000, 4'000, 4'000};
  p.launches.synchronous_copies = 1;
  std::string text = report_text(p);
  EXPECT_NE(text.find("Launches: 4 (1 more copy by synchronous copy calls, not in these figures)"), std::string::npos)
      << text;
  p.launches.graph_ops = 50, p.launches.synchronous_copies = 2;
  text = report_text(p);
  EXPECT_NE(text.find("(50 more GPU ops replayed by graph launches, 2 more copies by synchronous copy calls, not in "
                      "these figures)"),
            std::string::npos)
      << text;
  p.launches = {};
  p.launches.synchronous_copies = 3;
  text = report_text(p);
  EXPECT_NE(text.find("Launches: none but 3 synchronous copy calls\n"), std::string::npos) << text;
}

// Idle time before a stream's first recorded op, 1 % of the span or more,
// is warned of at the top: the figures over it may count busy time as idle.
TEST(ReportText, IdleBeforeAStreamsFirstRecordedOpIsWarnedOf) {
  Profile p;
  DeviceSummary d;
  d.span_ns = 100 * ms;
  p.devices = {d};
  p.idle_charges.push_back({"unrecorded-gap", 2 * ms, "", ""});
  std::string text = report_text(p);
  EXPECT_NE(text.find("WARNING: 2.0 ms of the GPUs' idle time (2.0% of their span) ends with a stream's first op"),
            std::string::npos)
      << text;
  p.idle_charges.back().ns = 900 * us;
  text = report_text(p);
  EXPECT_EQ(text.find("first op in the trace, queued before that gap"), std::string::npos) << text;
}

// The same idle GPU, but each kernel was launched long before it ran: the
// GPU waited for work held by a dependency the trace does not show, and
// whether anything independent could have run meanwhile, it cannot tell.
TEST(ReportText, MoreStreamsIsUnknownWhenTheGpuWaitsForHeldWork) {
  TraceFactory f;
  for (int i = 0; i < 100; ++i) {
    const TimeNs start = 1'000'000 + i * 250 * us;
    f.kernel(0, 7, names::kRelu, start, start + 50 * us, start - 200 * us, 5'000, 8);
  }
  const Profile p = analyze(f.build());
  const std::string text = report_text(p), why = help_reason(p, "more-streams");
  EXPECT_EQ(verdict(text, "more streams?"), "unknown") << text;
  EXPECT_NE(why.find("GPU 0 waits 19.8 ms, longer than its 5.0 ms of kernels, 100.0% of it for work queued but held "
                     "by a dependency"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("the trace cannot tell"), std::string::npos) << why;
}

// Half the kernels have no launch in the trace, in short gaps: the launch
// wait the trace shows is nil, but the gaps those ops ended may be late
// launches too, so whether graphs help is a range, not a no.
TEST(ReportText, FewerLaunchesIsUnknownWhereOpsHaveNoLaunchInTheTrace) {
  TraceFactory f;
  for (int i = 0; i < 100; ++i) {
    const TimeNs start = 1'000'000 + i * 250 * us;
    f.kernel(0, 7, names::kRelu, start, start + 200 * us, i % 2 ? TraceFactory::kNoLaunch : start - 100 * us);
  }
  const Profile p = analyze(f.build());
  const std::string text = report_text(p), why = help_reason(p, "cuda-graphs");
  EXPECT_EQ(verdict(text, "fewer launches (CUDA graphs)?"), "unknown") << text;
  EXPECT_NE(why.find("50% of the GPU ops have no launch in the trace"), std::string::npos) << why;
  EXPECT_NE(why.find("the launch wait is between 0.0% and"), std::string::npos) << why;
}

// All launched, all early: the GPU idles a fifth of its span, but never for
// a launch; the answer is no, and it does not say the host keeps the queue
// filled "nearly all the time".
TEST(ReportText, FewerLaunchesIsNoWhereTheIdleTimeIsNotALaunchWait) {
  TraceFactory f;
  for (int i = 0; i < 100; ++i) {
    const TimeNs start = 1'000'000 + i * 250 * us;
    f.kernel(0, 7, names::kRelu, start, start + 200 * us, start - 100 * us);
  }
  const Profile p = analyze(f.build());
  const std::string text = report_text(p), why = help_reason(p, "cuda-graphs");
  EXPECT_EQ(verdict(text, "fewer launches (CUDA graphs)?"), "no") << text;
  EXPECT_NE(why.find("waits for something other than a launch, and graphs shorten neither"), std::string::npos) << why;
  EXPECT_EQ(why.find("nearly all the time"), std::string::npos) << why;
}

// Kernels that fill the GPU, but it is idle three times as long as it runs
// them, waiting for the host: the answer is about that idle time (another
// stream would have nothing to run in it), not only that no kernel fits
// beside the ones that run.
TEST(ReportText, MoreStreamsIsNoWhenTheGpuWaitsForTheHostThoughItsKernelsFillIt) {
  TraceFactory f;
  for (int i = 0; i < 100; ++i) {
    const TimeNs start = 1'000'000 + i * 200 * us;
    f.kernel(0, 7, names::kRelu, start, start + 50 * us, start - 10 * us, 5'000, 100'000);
  }
  const Profile p = analyze(f.build());
  const std::string text = report_text(p), why = help_reason(p, "more-streams");
  EXPECT_EQ(verdict(text, "more streams?"), "no") << text;
  EXPECT_NE(why.find("GPU 0 waits for the host or for dependencies 14.8 ms (for the host 100%)"), std::string::npos)
      << why;
  EXPECT_NE(why.find("while they run, kernels use 100% of GPU 0"), std::string::npos) << why;
  EXPECT_EQ(why.find("would not fit"), std::string::npos) << why;
  // Every cause of the idle counts in the wait, as in the GPUs table: a
  // gap ended by queued work too.
  Profile q = p;
  q.devices[0].idle_kernel_wait_ns = q.devices[0].idle_host_wait_ns / 3;
  q.devices[0].idle_host_wait_ns -= q.devices[0].idle_kernel_wait_ns;
  settle_findings(&q);
  EXPECT_NE(
      help_reason(q, "more-streams").find("GPU 0 waits for the host or for dependencies 14.8 ms (for the host 67%)"),
      std::string::npos)
      << help_reason(q, "more-streams");
}

// Steps in which the host preprocesses 6 ms before the GPU's first op, then
// 4 ms of GPU work. The GPU's span is all busy; the steps are not. Workers
// preparing the next input help where there is a next input: with two steps
// yes; with one, that input was the only one the GPU ran, so unknown.
TEST(ReportText, HostPreprocessingBeforeTheGpuAnswersWorkersAndStreams) {
  for (const int steps : {2, 1}) {
    SCOPED_TRACE(steps);
    TraceFactory f;
    for (int s = 0; s < steps; ++s) {
      const TimeNs t0 = s * 10 * ms;
      f.range("video_classification.py(129): preprocess", t0 + 100 * us, t0 + 6 * ms, 1, RangeKind::annotation,
              "python_function");
      for (int i = 0; i < 4; ++i)
        f.kernel(0, 7, names::kConvTensorCore, t0 + 6 * ms + i * ms, t0 + 7 * ms + i * ms,
                 t0 + 6 * ms - 50 * us + i * us, 1 * us);
      f.range("ProfilerStep#" + std::to_string(3 + s), t0, t0 + 10 * ms, 1, RangeKind::annotation, "user_annotation");
    }
    const std::string text = report_text(analyze(f.build()));
    EXPECT_EQ(verdict(text, "more data-loader workers?"), steps == 2 ? "YES" : "unknown") << text;
    if (steps == 2) continue;
    EXPECT_NE(text.find("the trace holds one step"), std::string::npos) << text;
    EXPECT_EQ(verdict(text, "more streams?"), "no") << text;
    EXPECT_NE(text.find("lies outside it with nothing launched"), std::string::npos) << text;
  }
}

// A bf16 product on an H100 whose kernel launches 16 blocks on 132 SMs:
// the report asks whether a larger batch would help, and says yes, with the
// launch that shows it. A trace with no sign of work too small for the GPU,
// and not launch-bound, is not asked (a batch size is not something it can
// judge).
TEST(ReportText, ALargerBatchIsAskedOnlyWhenTheWorkIsTooSmallForTheGpu) {
  TraceFactory f;
  f.device(0, 132, 9, "NVIDIA H100 80GB HBM3");
  f.cpu_op("aten::mm", 100 * us, 400 * us, "[[128,512],[512,512]]", R"(["c10::BFloat16","c10::BFloat16"])");
  f.kernel(0, 7, "sm90_xmma_gemm_bf16bf16_bf16f32", 1 * ms, 1 * ms + 50 * us, 200 * us, 5'000, 16);
  const std::string text = report_text(analyze(f.build()));
  EXPECT_EQ(verdict(text, "a larger batch per GPU?"), "YES") << text;
  // (as wrapped at 100 columns)
  EXPECT_NE(text.find("its main kernel launches 16 blocks on a GPU of\n"), std::string::npos) << text;
  EXPECT_NE(text.find("132 SMs; whether a larger batch fits in memory the"), std::string::npos) << text;
  EXPECT_NE(text.find("profile_memory=True) (finding 1)"), std::string::npos) << text;

  TraceFactory g;  // each kernel launched before the GPU ran dry: not launch-bound either
  for (int i = 0; i < 10; ++i) g.kernel(0, 7, names::kRelu, i * ms, i * ms + 500 * us, i * ms - 900 * us);
  EXPECT_EQ(verdict(report_text(analyze(g.build())), "a larger batch per GPU?"), "missing");
  // Launched late, the same kernels leave the GPU waiting for each launch: asked, and yes.
  TraceFactory h;
  for (int i = 0; i < 10; ++i) h.kernel(0, 7, names::kRelu, i * ms, i * ms + 500 * us, i * ms - 10 * us);
  EXPECT_EQ(verdict(report_text(analyze(h.build())), "a larger batch per GPU?"), "YES");
}

TEST(ReportText, SaysWhatPlacedAHotspotWhereItsNameDidNot) {
  TraceFactory f;
  for (int i = 0; i < 10; ++i) {
    const TimeNs start = 1'000'000 + i * 1'000 * us;
    // cuDNN's GEMM kernel of a convolution: the launching op makes it convolution.
    f.range("aten::cudnn_convolution", start - 20 * us, start - 1 * us, 1, RangeKind::annotation, "cpu_op");
    f.kernel(0, 7, "volta_sgemm_128x64_nn", start, start + 500 * us, start - 10 * us);
    f.kernel(0, 7, names::kRelu, start + 501 * us, start + 600 * us, start - 5 * us);
  }
  const std::string text = report_text(analyze(f.build()));
  EXPECT_NE(text.find("  #1 convolution, placed by launching op: a convolution op (\"conv\" in its name)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("#2 elementwise, placed by"), std::string::npos) << text;  // its name decided
}

TEST(ReportText, AnswersTheUsualQuestionsYesOrNoWithTheReason) {
  // The 2016 report's situation on one GPU: one stream always busy, 21%
  // padding and 20% broadcast: a layout change helps, more streams do not.
  TraceFactory f;
  TimeNs t = 1'000'000;
  for (int s = 0; s < 10; ++s) {
    const TimeNs s0 = t;
    for (auto [name, d] :
         {std::pair{names::kConvTensorCore, 590 * us}, {names::kPad, 210 * us}, {names::kBroadcast, 200 * us}}) {
      f.kernel(0, 7, name, t, t + d, t - 100 * us);
      t += d + 1 * us;
    }
    f.range("step " + std::to_string(s), s0 - 100 * us, t);
  }
  const Trace tr = f.build();
  const std::string text = report_text(analyze(tr));
  const auto answers = text.find("What would help?");
  ASSERT_NE(answers, std::string::npos) << text;
  EXPECT_LT(answers, text.find("Findings, the critical first, then by estimated saving"));
  EXPECT_EQ(verdict(text, "a different data layout?"), "YES") << text;
  EXPECT_NE(text.find("21.0%, broadcast 20.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("(findings 1,"), std::string::npos) << text;  // padding and broadcast, wrapped
  EXPECT_EQ(verdict(text, "more streams?"), "no") << text;
  EXPECT_NE(text.find("there is no idle time for another"), std::string::npos) << text;
  EXPECT_EQ(verdict(text, "more data-loader workers?"), "no") << text;
  EXPECT_EQ(verdict(text, "overlap all-reduce with backward?"), "n/a") << text;
  // Its convolution kernel's name says TF32 (tf32f32): bf16 could still halve that math.
  EXPECT_EQ(verdict(text, "mixed precision (tensor cores)?"), "unknown") << text;
  EXPECT_NE(text.find("names say TF32"), std::string::npos) << text;

  // The job with exposed communication and pageable copies: the all-reduce question is a yes.
  const std::string job = report_text(sample_profile());
  EXPECT_EQ(verdict(job, "overlap all-reduce with backward?"), "YES") << job;
  EXPECT_EQ(verdict(job, "rebalance the GPUs?"), "no") << job;
}

TEST(Diff, FixingThePaddingResolvesItsFinding) {
  const Profile before = sample_profile(210 * us), after = sample_profile(5 * us);
  const ProfileDiff d = diff_profiles(before, after);
  EXPECT_TRUE(d.per_step);
  EXPECT_EQ(d.before_steps, 4u);
  EXPECT_GT(d.before_step_ns, d.after_step_ns);
  bool resolved = false;
  for (const FindingDelta& f : d.findings)
    if (f.id == "padding-hotspot") resolved = f.change == FindingChange::resolved;
  EXPECT_TRUE(resolved);
  ASSERT_FALSE(d.categories.empty());
  EXPECT_EQ(d.categories.front().category, KernelCategory::padding);  // the largest change
  EXPECT_EQ(d.categories.front().before_ns, 210 * us);                // per step and GPU
  EXPECT_EQ(d.categories.front().after_ns, 5 * us);
  bool said = false;
  for (const std::string& s : d.summary) said = said || s.starts_with("Resolved padding-hotspot");
  EXPECT_TRUE(said);
  const json j = json::parse(diff_json(d));
  EXPECT_EQ(j["schema"], "gpuscope.diff/1");
  EXPECT_EQ(j["step_time_ns"]["before"].get<std::int64_t>(), d.before_step_ns);
  EXPECT_NE(diff_text(d).find("resolved  padding-hotspot"), std::string::npos) << diff_text(d);
  // A diff of a profile with itself changes nothing.
  const ProfileDiff same = diff_profiles(before, before);
  for (const FindingDelta& f : same.findings) EXPECT_EQ(f.change, FindingChange::unchanged) << f.id;
}

// The idle time by cause on both sides, per GPU and step, with the finding
// each run charges it to: the parts of a trace add up to its idle time per
// step, and a run compared with itself changes none of them.
TEST(Diff, ComparesTheIdleTimeByCause) {
  Profile before = sample_profile(210 * us);
  IdleCharge input;
  input.cause = "input-wait";
  input.ns = 8 * 40 * ms;  // 2 GPUs, 4 steps
  input.finding = "input-bound";
  IdleCharge other = input;
  other.cause = "other";
  other.ns = 8 * ms;
  other.finding.clear();
  before.idle_charges = {other, input};
  Profile after = sample_profile(5 * us);
  after.idle_charges = {other};
  const ProfileDiff d = diff_profiles(before, after);
  ASSERT_EQ(d.idle.size(), 2u);
  EXPECT_EQ(d.idle[0].cause, "input-wait");  // the report's order of causes
  EXPECT_EQ(d.idle[0].before_ns, 40 * ms);
  EXPECT_EQ(d.idle[0].after_ns, 0);
  EXPECT_EQ(d.idle[0].before_finding, "input-bound");
  EXPECT_EQ(d.idle[0].after_finding, "");
  EXPECT_EQ(d.idle[1].before_ns, d.idle[1].after_ns);
  const json j = json::parse(diff_json(d));
  EXPECT_EQ(j["idle"][0]["before_ns"].get<std::int64_t>(), 40 * ms);
  EXPECT_NE(diff_text(d).find("Idle time by cause (per GPU, per step)"), std::string::npos) << diff_text(d);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// The roofline table shows each piece of work once and does not list rows
// without figures: on ResNet-50 (V100), aten::_batch_norm_impl_index is
// aten::batch_norm's work, and the convolutions' recorded inputs lack their
// stride and padding.
TEST(ReportText, TheRooflineShowsEachPieceOfWorkOnceAndOnlyWithFigures) {
  const Profile p = analyze(open_trace(testing::real_trace("kineto-resnet50-v100-workers4.json.gz")));
  const std::string text = report_text(p);
  const std::size_t at = text.find("Roofline of the heaviest ops with a cost formula");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string table = text.substr(at, text.find("\n\n", at) - at);
  EXPECT_NE(table.find("aten::batch_norm fp32"), std::string::npos) << table;
  EXPECT_EQ(table.find("aten::_batch_norm_impl_index"), std::string::npos) << table;
  EXPECT_EQ(table.find("aten::cudnn_convolution fp32"), std::string::npos) << table;
  EXPECT_NE(table.find("rows left out: an op that launches nothing itself around an op shown"), std::string::npos)
      << table;
  EXPECT_NE(table.find("Heavier ops with a cost formula but no figures (aten::conv2d"), std::string::npos) << table;
  // The rows with figures launched under half of the kernel time: the rest
  // is said to be unmeasured, cuDNN's convolution kernels named.
  EXPECT_NE(table.find("These rows' ops launched 17.6% of kernel time themselves; the other 82.4%"), std::string::npos)
      << table;
  EXPECT_NE(table.find("cudnn::detail::dgrad_engine"), std::string::npos) << table;
  EXPECT_NE(table.find("how near the GPU's peak they run the trace cannot tell"), std::string::npos) << table;
}

// Rows with figures that launched most of the kernel time: no such line
// (TimeSformer's attention products, softmax and linears).
TEST(ReportText, ARooflineOverMostKernelTimeSaysNothingUnmeasured) {
  const Profile p = analyze(open_trace(testing::real_trace("tracelens-timesformer-h100.json.gz")));
  EXPECT_EQ(report_text(p).find("These rows' ops launched"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// Forward and backward GPU time per module, from the sequence numbers:
// hta-ns-resolution links every one of its 905 backward ops, but has no
// nn.Module ranges, so its one "(no module)" row's "forward" would be every
// GPU op outside the backward ops (the optimizer among them): no table, the
// section says what is unknown; an inference trace (AlexNet) has no section.
TEST(ReportText, ForwardAndBackwardPerModuleFromSequenceNumbers) {
  const Profile p = analyze(open_trace(testing::real_trace("hta-ns-resolution-v100.json.gz")));
  EXPECT_EQ(p.module_split.linked, 905u);
  const std::string text = report_text(p);
  EXPECT_NE(text.find("Forward and backward GPU time per nn.Module: unknown (the trace has no nn.Module ranges"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("bwd/fwd"), std::string::npos) << text;
  const std::string inference = report_text(analyze(open_trace(testing::real_trace("hta-alexnet.json.gz"))));
  EXPECT_EQ(inference.find("Forward and backward GPU time per nn.Module"), std::string::npos) << inference;
}

// A finding with a material share whose replayed fix shortens the step by
// under 1 %: a minor observation whose line says what the replay gave.
TEST(ReportText, AMinorLineSaysWhatItsReplayGave) {
  Profile p;
  p.window = {0, 1000 * ms};
  p.simulation.status = "simulated";
  p.simulation.replayed_step_ns = 100 * ms;
  Finding f;
  f.id = "host-sync";
  f.title = "21 host synchronizations leave the GPU idle 68 ms (6.8% of the run)";
  f.share = 0.068;
  f.saving_ns = 1300 * us;
  f.saving_source = SavingSource::simulated;
  f.fix = "--no-host-sync";
  f.predicted_step_ns = 100 * ms - 130 * us;
  p.findings.push_back(f);
  settle_findings(&p);
  ASSERT_TRUE(p.findings.empty());
  ASSERT_EQ(p.minor_findings.size(), 1u);
  std::string words;  // the wrapped lines' words, one space apart (no steps: the replayed trace)
  std::istringstream in(report_text(p));
  for (std::string w; in >> w;) words += w + " ";
  EXPECT_NE(words.find("(6.8% of the run) (host-sync; --no-host-sync shortens the replayed trace 100.0 ms by only "
                       "130.0 µs)"),
            std::string::npos)
      << words;
}

}  // namespace
}  // namespace gpuscope
