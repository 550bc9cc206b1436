// The hardware pass and the findings that read it, on traces with planted
// hardware series (hw.* as CUPTI PM sampling writes them, nvml.* as NVML):
// per-GPU means, samples attributed to the kernels running, busy-but-not-
// working, measured tensor-core idleness, throttled clocks; true and false
// cases, and no claim from too few samples.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "analysis/digest_codec.h"
#include "analysis/job.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TraceFactory;

constexpr TimeNs us = 1'000;
constexpr TimeNs ms = 1'000'000;

// `steps` steps of 10 ms on GPU 0, each one kernel `kernel` of 9 ms inside an
// NVTX step range; samples every 100 µs of each named series with the value
// `value(series, time)`.
struct Planted {
  int steps = 10;
  const char* kernel = "volta_sgemm_128x64_nn";
  std::vector<std::pair<std::string, std::string>> series;  // name, unit
};

template <class Value>
Trace planted(const Planted& p, Value value) {
  TraceFactory f;
  f.device(0, 132, 9, "NVIDIA H100");
  for (int s = 0; s < p.steps; ++s) {
    const TimeNs t = 1 * ms + s * 10 * ms;
    f.range("step " + std::to_string(s), t, t + 10 * ms);
    f.kernel(0, 7, p.kernel, t + 500 * us, t + 9500 * us, t + 100 * us);
  }
  std::vector<std::uint32_t> ids;
  for (const auto& [name, unit] : p.series) ids.push_back(f.builder().counter_series(name, 0, unit));
  for (TimeNs at = 1 * ms; at <= 1 * ms + p.steps * 10 * ms; at += 100 * us)
    for (std::size_t i = 0; i < ids.size(); ++i) f.builder().add_counter({at, ids[i], value(p.series[i].first, at)});
  return f.build();
}

const std::vector<std::pair<std::string, std::string>> kPm = {
    {"hw.sm_active", "%"}, {"hw.tensor_active", "%"}, {"hw.dram_read", "B/s"}, {"hw.dram_write", "B/s"}};

TEST(Hardware, MeansPerGpuAndSamplesByCategory) {
  const Trace t = planted({10, "volta_sgemm_128x64_nn", kPm}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_active" ? 90.0 : s == "hw.tensor_active" ? 2.0 : 1e11;
  });
  const Profile p = analyze(t);
  ASSERT_EQ(p.devices.size(), 1u);
  const DeviceHw& hw = p.devices[0].hw;
  ASSERT_EQ(hw.metrics.size(), 4u);
  EXPECT_EQ(hw.metrics[0].name, "hw.dram_read");  // by name
  const HwMetric* sm = nullptr;
  for (const HwMetric& m : hw.metrics)
    if (m.name == "hw.sm_active") sm = &m;
  ASSERT_TRUE(sm);
  EXPECT_DOUBLE_EQ(sm->mean, 90.0);
  EXPECT_EQ(sm->unit, "%");
  EXPECT_GT(sm->samples, 800u);
  ASSERT_FALSE(hw.by_category.empty());
  const HwCategory& gemm = hw.by_category.front();
  EXPECT_EQ(gemm.category, KernelCategory::gemm);
  // 9 ms of each 10 ms step runs the kernel: ~90 % of the samples are in it.
  EXPECT_NEAR(static_cast<double>(gemm.samples) / static_cast<double>(sm->samples), 0.9, 0.02);
  ASSERT_TRUE(gemm.sm_active && gemm.tensor_active && gemm.dram_bytes_per_s);
  EXPECT_NEAR(*gemm.sm_active, 0.9, 1e-9);
  EXPECT_NEAR(*gemm.tensor_active, 0.02, 1e-9);
  EXPECT_NEAR(*gemm.dram_bytes_per_s, 2e11, 1e3);  // read + write
  // The text report shows the means, and the JSON keeps them.
  const std::string text = report_text(p);
  EXPECT_NE(text.find("Hardware (measured"), std::string::npos) << text;
  EXPECT_NE(text.find("hw.sm_active 90.0%"), std::string::npos) << text;
  const Profile back = parse_report_json(report_json(p), "r.json");
  ASSERT_EQ(back.devices.size(), 1u);
  EXPECT_EQ(back.devices[0].hw.metrics.size(), 4u);
  EXPECT_EQ(back.devices[0].hw.by_category.size(), hw.by_category.size());
}

TEST(Hardware, NoSeriesNoSummaryAndNoFindings) {
  const Trace t = planted({10, "volta_sgemm_128x64_nn", {}}, [](const std::string&, TimeNs) { return 0.0; });
  const Profile p = analyze(t);
  EXPECT_TRUE(p.devices[0].hw.metrics.empty());
  EXPECT_EQ(report_text(p).find("Hardware (measured"), std::string::npos);
  for (const char* id : {"busy-not-working", "clocks-throttled"}) EXPECT_FALSE(testing::find_finding(p, id)) << id;
}

TEST(Hardware, BusyButNotWorkingNamesTheKernels) {
  const Trace t =
      planted({10, "small_grid_kernel", {{"hw.sm_active", "%"}}}, [](const std::string&, TimeNs) { return 12.0; });
  const Profile p = analyze(t);
  const Finding* f = testing::find_finding(p, "busy-not-working");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->title.find("SMs were active only 12%"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("small_grid_kernel"), std::string::npos) << f->evidence;
  EXPECT_NE(f->evidence.find("upper bound"), std::string::npos) << f->evidence;
  ASSERT_FALSE(f->kernels.empty());
  EXPECT_EQ(f->kernels.front(), "small_grid_kernel");
  EXPECT_LE(f->saving_ns, p.devices[0].busy_ns);
}

TEST(Hardware, BusyAndWorkingOrTooFewSamplesGiveNone) {
  const Trace working =
      planted({10, "small_grid_kernel", {{"hw.sm_active", "%"}}}, [](const std::string&, TimeNs) { return 85.0; });
  EXPECT_FALSE(testing::find_finding(analyze(working), "busy-not-working"));
  // One step: ~90 samples while busy; with the threshold above that, no claim.
  AnalysisOptions few;
  few.thresholds.hw_min_samples = 100;
  const Trace low =
      planted({1, "small_grid_kernel", {{"hw.sm_active", "%"}}}, [](const std::string&, TimeNs) { return 5.0; });
  EXPECT_FALSE(testing::find_finding(analyze(low, few), "busy-not-working"));
  EXPECT_TRUE(testing::find_finding(analyze(low), "busy-not-working"));
}

TEST(Hardware, MeasuredTensorActivityDecidesNoTensorCores) {
  // By name this is a tensor-core kernel (16816): the names say nothing is wrong,
  // the counters say the tensor pipes were idle.
  const char* tc_kernel = "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x64_16816";
  const Trace idle = planted({10, tc_kernel, kPm}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_active" ? 90.0 : s == "hw.tensor_active" ? 1.0 : 1e11;
  });
  const Profile pi = analyze(idle);
  const Finding* f = testing::find_finding(pi, "no-tensor-cores");
  ASSERT_TRUE(f) << testing::describe_findings(pi);
  EXPECT_NE(f->title.find("measured"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("hw.tensor_active"), std::string::npos) << f->evidence;
  // An FP32 kernel by name whose tensor pipes the counters saw busy: no finding.
  const Trace busy = planted({10, "volta_sgemm_128x64_nn", kPm}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_active" ? 90.0 : s == "hw.tensor_active" ? 60.0 : 1e11;
  });
  const Profile pb = analyze(busy);
  EXPECT_FALSE(testing::find_finding(pb, "no-tensor-cores")) << testing::describe_findings(pb);
  // Without the counters, the names decide: the FP32 kernel gets the finding.
  const Trace names = planted({10, "volta_sgemm_128x64_nn", {}}, [](const std::string&, TimeNs) { return 0.0; });
  EXPECT_TRUE(testing::find_finding(analyze(names), "no-tensor-cores"));
}

// Steps 5..9 run 20 % longer, with a thermal reason in their samples.
Trace throttled_trace(bool slower, bool reason) {
  TraceFactory f;
  f.device(0, 132, 9, "NVIDIA H100");
  TimeNs t = 1 * ms;
  std::vector<TimeRange> hot;
  for (int s = 0; s < 10; ++s) {
    const TimeNs len = (s >= 5 && slower) ? 12 * ms : 10 * ms;
    f.range("step " + std::to_string(s), t, t + len);
    f.kernel(0, 7, "volta_sgemm_128x64_nn", t + 500 * us, t + len - 500 * us, t + 100 * us);
    if (s >= 5) hot.push_back({t, t + len});
    t += len;
  }
  const std::uint32_t thr = f.builder().counter_series("nvml.throttle_reasons", 0, "");
  const std::uint32_t clk = f.builder().counter_series("nvml.sm_clock", 0, "MHz");
  for (TimeNs at = 1 * ms; at < t; at += 1 * ms) {
    bool in_hot = false;
    for (const TimeRange& r : hot) in_hot = in_hot || (at >= r.start && at < r.end);
    f.builder().add_counter({at, thr, in_hot && reason ? 0x40 : 0.0});
    f.builder().add_counter({at, clk, in_hot ? 1400.0 : 1980.0});
  }
  return f.build();
}

TEST(Hardware, ThrottledStepsSlowerThanTheOthers) {
  const Profile p = analyze(throttled_trace(true, true));
  const Finding* f = testing::find_finding(p, "clocks-throttled");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->title.find("hardware thermal slowdown"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("5 of 10 steps"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("20.0% longer"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("1400 MHz"), std::string::npos) << f->evidence;
  EXPECT_NE(f->evidence.find("1980 MHz"), std::string::npos) << f->evidence;
  EXPECT_NEAR(static_cast<double>(f->saving_ns), 5.0 * 2 * ms, 0.5 * ms);
}

TEST(Hardware, ThrottlingThatCostsNothingOrIdleReasonsGiveNone) {
  // Throttled but not slower: no finding.
  EXPECT_FALSE(testing::find_finding(analyze(throttled_trace(false, true)), "clocks-throttled"));
  // Slower, but no thermal or power reason in the samples: not this finding.
  EXPECT_FALSE(testing::find_finding(analyze(throttled_trace(true, false)), "clocks-throttled"));
}

TEST(Hardware, TheDigestKeepsIt) {
  const Trace t = planted({10, "small_grid_kernel", kPm}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_active" ? 12.0 : s == "hw.tensor_active" ? 2.0 : 1e11;
  });
  const RankDigest d = digest_rank(t, "r.json");
  const RankDigest back = decode_digest(encode_digest(d));
  ASSERT_EQ(back.profile.devices.size(), 1u);
  const DeviceHw& a = d.profile.devices[0].hw;
  const DeviceHw& b = back.profile.devices[0].hw;
  EXPECT_FALSE(a.metrics.empty());
  EXPECT_EQ(b.metrics.size(), a.metrics.size());
  EXPECT_EQ(b.low_kernels, a.low_kernels);
  EXPECT_EQ(b.busy_samples, a.busy_samples);
  EXPECT_EQ(report_json(back.profile), report_json(d.profile));
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

TEST(Hardware, DiffShowsEachSeriesBeforeAndAfter) {
  const Trace low = planted({10, "small_grid_kernel", kPm}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_active" ? 20.0 : s == "hw.tensor_active" ? 2.0 : 1e11;
  });
  const Trace high =
      planted({10, "small_grid_kernel", {{"hw.sm_active", "%"}}}, [](const std::string&, TimeNs) { return 80.0; });
  const ProfileDiff d = diff_profiles(analyze(low), analyze(high));
  ASSERT_EQ(d.hardware.size(), 4u);
  const HwDelta* sm = nullptr;
  const HwDelta* tensor = nullptr;
  for (const HwDelta& h : d.hardware) {
    if (h.name == "hw.sm_active") sm = &h;
    if (h.name == "hw.tensor_active") tensor = &h;
  }
  ASSERT_TRUE(sm && tensor);
  ASSERT_TRUE(sm->before && sm->after);
  EXPECT_NEAR(*sm->before, 20.0, 1e-9);
  EXPECT_NEAR(*sm->after, 80.0, 1e-9);
  EXPECT_GT(sm->after_samples, 0u);
  EXPECT_TRUE(tensor->before);
  EXPECT_FALSE(tensor->after);  // the after side did not measure it
  const std::string text = diff_text(d);
  EXPECT_NE(text.find("Hardware (measured by the GPUs' counters)"), std::string::npos) << text;
  EXPECT_NE(text.find("20.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("80.0%"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(diff_json(d));
  ASSERT_EQ(j.at("hardware").size(), 4u);
  for (const auto& h : j.at("hardware")) EXPECT_EQ(h.at("after").is_null(), h.at("name") != "hw.sm_active") << h.dump();
  // Without hardware series on either side: no rows, no table.
  const Trace plain = planted({10, "small_grid_kernel", {}}, [](const std::string&, TimeNs) { return 0.0; });
  const ProfileDiff none = diff_profiles(analyze(plain), analyze(plain));
  EXPECT_TRUE(none.hardware.empty());
  EXPECT_EQ(diff_text(none).find("Hardware (measured"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope
