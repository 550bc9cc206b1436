// The hardware pass and the findings that read it, on traces with planted
// hardware series (hw.* as CUPTI PM sampling writes them, nvml.* as NVML):
// per-GPU means, samples attributed to the kernels running, busy-but-not-
// working, measured tensor-core idleness, throttled clocks; true and false
// cases, and no claim from too few samples.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "analysis/job/digest_codec.h"
#include "analysis/job/job.h"
#include "analysis/passes/hardware.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "import/nsys/nsys_sqlite.h"
#include "import/synthetic.h"
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
  for (const Step& st : p.steps.steps) {
    ASSERT_TRUE(st.hw.sm_active && st.hw.tensor_active && st.hw.dram_bytes_per_s) << st.name;
    EXPECT_NEAR(*st.hw.sm_active, 0.9, 1e-9);
    EXPECT_NEAR(*st.hw.dram_bytes_per_s, 2e11, 1e3);
    EXPECT_FALSE(st.hw.power_w);
    EXPECT_FALSE(st.hw.throttled);
  }
  // The text report shows the means, and the JSON keeps them.
  const std::string text = report_text(p);
  EXPECT_NE(text.find("Hardware (measured"), std::string::npos) << text;
  EXPECT_NE(text.find("hw.sm_active 90.0%"), std::string::npos) << text;
  const Profile back = parse_report_json(report_json(p), "r.json");
  ASSERT_EQ(back.devices.size(), 1u);
  EXPECT_EQ(back.devices[0].hw.metrics.size(), 4u);
  EXPECT_EQ(back.devices[0].hw.by_category.size(), hw.by_category.size());
}

// Each sample goes to the longest kernel in flight at its time, of equally
// long ones the last to start (a brute force over the kernels here): kernels
// of several categories overlapping on three streams, lengths that repeat,
// and series sampled at times of their own (DRAM read and write apart, so
// that a DRAM sample time is the union of both).
TEST(Hardware, SamplesGoToTheLongestKernelInFlight) {
  TraceFactory f;
  f.device(0, 132, 9, "NVIDIA H100");
  const char* names[] = {"volta_sgemm_128x64_nn",
                         "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                         "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >()",
                         "void cunn_SoftMaxForward<4, float, float, float, cunn::SoftMaxForwardEpilogue>()"};
  const TimeNs lengths[] = {20 * us, 50 * us, 50 * us, 200 * us, 900 * us, 50 * us};
  struct K {
    TimeNs start, end;
    std::string name;
  };
  std::vector<K> kernels;
  std::uint32_t lcg = 12345;
  auto next = [&] { return lcg = lcg * 1664525u + 1013904223u, lcg >> 8; };
  for (std::uint32_t stream = 0; stream < 3; ++stream)
    for (TimeNs at = 1 * ms + stream; at < 20 * ms;) {
      // Starts 3 ns apart stay apart across the streams: no two kernels start together.
      const TimeNs len = lengths[next() % 6], start = at + 3 * static_cast<TimeNs>(next() % 40) * us;
      kernels.push_back({start, start + len, names[next() % 4]});
      f.kernel(0, 7 + stream, kernels.back().name, start, start + len, start - 5 * us);
      at = start + len + 3;
    }
  const std::uint32_t sm = f.builder().counter_series("hw.sm_active", 0, "%");
  const std::uint32_t issue = f.builder().counter_series("hw.sm_issue", 0, "%");
  const std::uint32_t read = f.builder().counter_series("hw.dram_read", 0, "B/s");
  const std::uint32_t write = f.builder().counter_series("hw.dram_write", 0, "B/s");
  for (TimeNs at = 1 * ms; at <= 21 * ms; at += 37 * us) f.builder().add_counter({at, sm, 10.0});
  for (TimeNs at = 1 * ms + 1; at <= 21 * ms; at += 53 * us) f.builder().add_counter({at, issue, 50.0});
  for (TimeNs at = 1 * ms; at <= 21 * ms; at += 37 * us) f.builder().add_counter({at, read, 1e11});
  for (TimeNs at = 1 * ms; at <= 21 * ms; at += 41 * us) f.builder().add_counter({at, write, 1e11});
  const Trace t = f.build();

  // The brute force: the kernel's name at `at`, empty when none runs.
  auto kernel_at = [&](TimeNs at) {
    const K* best = nullptr;
    for (const K& k : kernels)
      if (k.start <= at && at < k.end &&
          (!best || k.end - k.start > best->end - best->start ||
           (k.end - k.start == best->end - best->start && k.start > best->start)))
        best = &k;
    return best ? best->name : std::string();
  };
  std::map<std::string, KernelCategory> category;
  for (RowIndex i = 0; i < t.kernels().size(); ++i)
    category[std::string(t.str(t.kernels().name[i]))] = t.kernels().category_at(i);
  std::map<KernelCategory, std::uint64_t> want_sm, want_issue, want_dram;
  std::map<std::string, std::uint64_t> low;
  std::set<TimeNs> dram_times;
  for (TimeNs at = 1 * ms; at <= 21 * ms; at += 37 * us) dram_times.insert(at);
  for (TimeNs at = 1 * ms; at <= 21 * ms; at += 41 * us) dram_times.insert(at);
  for (TimeNs at = 1 * ms; at <= 21 * ms; at += 37 * us)
    if (const std::string k = kernel_at(at); !k.empty()) ++want_sm[category[k]], ++low[k];
  for (TimeNs at = 1 * ms + 1; at <= 21 * ms; at += 53 * us)
    if (const std::string k = kernel_at(at); !k.empty()) ++want_issue[category[k]];
  for (TimeNs at : dram_times)
    if (const std::string k = kernel_at(at); !k.empty()) ++want_dram[category[k]];
  ASSERT_GE(want_sm.size(), 3u);  // the kernels' names are of several categories

  const Profile p = analyze(t);
  ASSERT_EQ(p.devices.size(), 1u);
  const DeviceHw& hw = p.devices[0].hw;
  std::map<KernelCategory, std::uint64_t> got_sm, got_issue, got_dram;
  for (const HwCategory& c : hw.by_category) {
    if (c.samples) got_sm[c.category] = c.samples;
    if (c.issue_samples) got_issue[c.category] = c.issue_samples;
    if (c.dram_samples) got_dram[c.category] = c.dram_samples;
  }
  EXPECT_EQ(got_sm, want_sm);
  EXPECT_EQ(got_issue, want_issue);
  EXPECT_EQ(got_dram, want_dram);
  // Every sm_active sample is low (10 %): the kernels most often in flight at them, by count, then name.
  std::vector<std::pair<std::uint64_t, std::string>> by_count;
  for (const auto& [name, n] : low) by_count.emplace_back(n, name);
  std::sort(by_count.begin(), by_count.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<std::string> want_low;
  for (std::size_t i = 0; i < by_count.size() && i < 5; ++i) want_low.push_back(by_count[i].second);
  EXPECT_EQ(hw.low_kernels, want_low);
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
  // Per step: the throttled flag and the mean clock of its samples.
  ASSERT_EQ(p.steps.steps.size(), 10u);
  for (const Step& st : p.steps.steps) {
    const bool hot = st.index >= 5;
    EXPECT_EQ(st.hw.throttled, hot) << st.name;
    ASSERT_TRUE(st.hw.sm_clock_mhz) << st.name;
    EXPECT_NEAR(*st.hw.sm_clock_mhz, hot ? 1400.0 : 1980.0, 1e-9) << st.name;
    EXPECT_FALSE(st.hw.sm_active) << st.name;  // no such series
  }
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

// [SECTION] Memory-bound kernels ----------------------------------------------------------

const std::vector<std::pair<std::string, std::string>> kBound = {
    {"hw.sm_active", "%"}, {"hw.sm_issue", "%"}, {"hw.dram_read", "%"}, {"hw.dram_write", "%"}};
constexpr const char* kElementwise = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>";

TEST(Hardware, MemoryBoundCategoryFromDramAndIssue) {
  // DRAM in percent of peak, as Nsight Systems gives it: 50 + 25 = 75 %, with 10 % instruction issue.
  const Trace t = planted({10, kElementwise, kBound}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_active" ? 90.0 : s == "hw.sm_issue" ? 10.0 : s == "hw.dram_read" ? 50.0 : 25.0;
  });
  const Profile p = analyze(t);
  ASSERT_FALSE(p.devices[0].hw.by_category.empty());
  const HwCategory& c = p.devices[0].hw.by_category.front();
  EXPECT_EQ(c.category, KernelCategory::elementwise);
  ASSERT_TRUE(c.dram_share && c.sm_issue);
  EXPECT_NEAR(*c.dram_share, 0.75, 1e-9);
  EXPECT_NEAR(*c.sm_issue, 0.10, 1e-9);
  EXPECT_GT(c.dram_samples, 800u);
  EXPECT_EQ(c.issue_samples, c.dram_samples);
  ASSERT_TRUE(c.dram_bytes_per_s);  // an H100 by name: its datasheet's 3.35 TB/s converts the percent
  EXPECT_NEAR(*c.dram_bytes_per_s, 0.75 * 3.35e12, 1e6);
  const Finding* f = testing::find_finding(p, "memory-bound-kernels");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_EQ(f->severity, Severity::warning);  // all the kernel time
  EXPECT_NE(f->title.find("elementwise kernels (100.0% of kernel time)"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("at 75% of the peak bandwidth"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("issuing 10%"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("fewer than 20 samples"), std::string::npos) << f->evidence;
  EXPECT_NE(f->recommendation.find("Fusion pays"), std::string::npos) << f->recommendation;
  // PyTorch's kernels, run eagerly: fusion is torch.compile's; no optimizer
  // ran, so no fused optimizer is advised.
  ASSERT_EQ(p.workload.framework, "pytorch");
  EXPECT_NE(f->recommendation.find("(torch.compile; fused bias"), std::string::npos) << f->recommendation;
  EXPECT_EQ(f->recommendation.find("optimizer ("), std::string::npos) << f->recommendation;
  ASSERT_FALSE(f->kernels.empty());
  EXPECT_NEAR(static_cast<double>(f->saving_ns), static_cast<double>(p.kernel_time_ns) / 2, 1e3);
  // The JSON report carries the per-category numbers.
  const auto j = nlohmann::json::parse(report_json(p));
  const auto& cat = j.at("devices").at(0).at("hw").at("by_category").at(0);
  EXPECT_NEAR(cat.at("dram_share").get<double>(), 0.75, 1e-9);
  EXPECT_EQ(cat.at("dram_samples").get<std::uint64_t>(), c.dram_samples);
}

// The same memory-bound kernels, the compiler's (Triton) or a program's own:
// fusion is not told as torch.compile to a run that is compiled already, nor
// to one with no framework.
TEST(Hardware, MemoryBoundFusionAdviceFitsTheProgram) {
  auto memory_bound = [](const std::string& s, TimeNs) {
    return s == "hw.sm_active" ? 90.0 : s == "hw.sm_issue" ? 10.0 : s == "hw.dram_read" ? 50.0 : 25.0;
  };
  const Profile compiled = analyze(planted({10, "triton_poi_fused_add_mul_0", kBound}, memory_bound));
  ASSERT_EQ(compiled.workload.execution, "compiled") << compiled.workload.execution_evidence;
  const Finding* f = testing::find_finding(compiled, "memory-bound-kernels");
  ASSERT_TRUE(f) << testing::describe_findings(compiled);
  EXPECT_NE(f->recommendation.find("(already compiled: fuse the ops it leaves eager"), std::string::npos)
      << f->recommendation;
  const Profile own = analyze(planted({10, "saxpy_kernel", kBound}, memory_bound));
  ASSERT_EQ(own.workload.framework, "unknown");
  const Finding* g = testing::find_finding(own, "memory-bound-kernels");
  ASSERT_TRUE(g) << testing::describe_findings(own);
  EXPECT_EQ(g->recommendation.find("torch.compile"), std::string::npos) << g->recommendation;
  EXPECT_NE(g->recommendation.find("(one kernel for the chain"), std::string::npos) << g->recommendation;
}

TEST(Hardware, DramInBytesPerSecondAgainstThePeak) {
  // CUPTI's B/s on an H100 (3.35 TB/s by its datasheet): 2.5 TB/s is 75 %.
  const Trace t = planted({10, kElementwise, {{"hw.sm_issue", "%"}, {"hw.dram_read", "B/s"}}},
                          [](const std::string& s, TimeNs) { return s == "hw.sm_issue" ? 10.0 : 2.5e12; });
  const Profile p = analyze(t);
  const HwCategory& c = p.devices[0].hw.by_category.front();
  ASSERT_TRUE(c.dram_share);
  EXPECT_NEAR(*c.dram_share, 2.5 / 3.35, 1e-9);
  EXPECT_TRUE(testing::find_finding(p, "memory-bound-kernels")) << testing::describe_findings(p);
}

TEST(Hardware, ComputeBoundUnknownPeakOrTooFewSamplesGiveNoMemoryBound) {
  // High DRAM but high issue: compute-bound, not memory-bound.
  const Trace busy = planted({10, kElementwise, kBound}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_issue" ? 70.0 : s == "hw.dram_read" ? 50.0 : 25.0;
  });
  const Profile pb = analyze(busy);
  EXPECT_FALSE(testing::find_finding(pb, "memory-bound-kernels")) << testing::describe_findings(pb);
  // Low issue but low DRAM: latency-bound or small, not this finding.
  const Trace light = planted({10, kElementwise, kBound}, [](const std::string& s, TimeNs) {
    return s == "hw.sm_issue" ? 10.0 : s == "hw.dram_read" ? 20.0 : 10.0;
  });
  EXPECT_FALSE(testing::find_finding(analyze(light), "memory-bound-kernels"));
  // The same memory-bound samples, but fewer than the minimum: no claim.
  const auto memory = [](const std::string& s, TimeNs) {
    return s == "hw.sm_issue" ? 10.0 : s == "hw.dram_read" ? 50.0 : 25.0;
  };
  AnalysisOptions few;
  few.thresholds.hw_min_samples = 2000;
  EXPECT_FALSE(
      testing::find_finding(analyze(planted({10, kElementwise, kBound}, memory), few), "memory-bound-kernels"));
  // DRAM in B/s on a GPU whose peak bandwidth nothing gives: no share, no claim.
  TraceFactory f;
  f.device(0, 132, 9, "Unknown GPU");
  f.range("step 0", 1 * ms, 11 * ms);
  f.kernel(0, 7, kElementwise, 1 * ms, 11 * ms, 900 * us);
  const std::uint32_t issue = f.builder().counter_series("hw.sm_issue", 0, "%");
  const std::uint32_t read = f.builder().counter_series("hw.dram_read", 0, "B/s");
  for (TimeNs at = 1 * ms; at <= 11 * ms; at += 100 * us) {
    f.builder().add_counter({at, issue, 10.0});
    f.builder().add_counter({at, read, 2.5e12});
  }
  const Profile pu = analyze(f.build());
  ASSERT_FALSE(pu.devices[0].hw.by_category.empty());
  EXPECT_FALSE(pu.devices[0].hw.by_category.front().dram_share);
  EXPECT_TRUE(pu.devices[0].hw.by_category.front().dram_bytes_per_s);
  EXPECT_FALSE(testing::find_finding(pu, "memory-bound-kernels"));
}

// [SECTION] One kernel's samples ----------------------------------------------------------

TEST(Hardware, KernelSampleMeansWhileItRan) {
  // Each step's kernel runs 9 ms; samples every 100 µs, the value the time in ms.
  const Trace t = planted({2, "volta_sgemm_128x64_nn", {{"hw.sm_active", "%"}, {"nvml.power", "W"}}},
                          [](const std::string&, TimeNs at) { return static_cast<double>(at / ms); });
  ASSERT_EQ(t.kernels().size(), 2u);
  const std::vector<KernelSampleMean> m = kernel_sample_means(t, 0);
  ASSERT_EQ(m.size(), 1u);  // hw.* only
  EXPECT_EQ(m[0].name, "hw.sm_active");
  EXPECT_EQ(m[0].unit, "%");
  // Kernel 1.5 .. 10.5 ms: the samples at 1.5, 1.6, … 10.5 ms, both ends included.
  EXPECT_EQ(m[0].samples, 91u);
  double sum = 0;
  for (int i = 0; i <= 90; ++i) sum += static_cast<double>((1 * ms + 500 * us + i * 100 * us) / ms);
  EXPECT_NEAR(m[0].mean, sum / 91, 1e-9);
  EXPECT_EQ(m[0].interval_ns, 100 * us);
  // A kernel shorter than the interval, between two samples: none, and the interval says why.
  TraceFactory f;
  f.device(0, 132, 9, "NVIDIA H100");
  f.kernel(0, 7, "tiny_kernel", 1 * ms + 20 * us, 1 * ms + 70 * us, 1 * ms);
  f.kernel(1, 7, "other_gpu_kernel", 1 * ms, 2 * ms, 1 * ms);
  const std::uint32_t sm = f.builder().counter_series("hw.sm_active", 0, "%");
  for (TimeNs at = 0; at <= 2 * ms; at += 100 * us) f.builder().add_counter({at, sm, 50.0});
  const Trace short_kernel = f.build();
  RowIndex tiny = kNoRow, other = kNoRow;
  for (RowIndex i = 0; i < short_kernel.kernels().size(); ++i)
    (short_kernel.str(short_kernel.kernels().name[i]) == "tiny_kernel" ? tiny : other) = i;
  const std::vector<KernelSampleMean> none = kernel_sample_means(short_kernel, tiny);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].samples, 0u);
  EXPECT_EQ(none[0].interval_ns, 100 * us);
  EXPECT_TRUE(kernel_sample_means(short_kernel, other).empty());  // GPU 1 has no series
  EXPECT_TRUE(kernel_sample_means(short_kernel, 99).empty());     // no such row
}

// [SECTION] An Nsight Systems export with GPU metrics -------------------------------------

// nsys' tables as `nsys profile --gpu-metrics-devices=all` exports them: one
// elementwise kernel of 10 ms on an H100, GPU metrics every 100 µs.
std::string planted_nsys_export(const std::string& path) {
  std::string sql = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>'),
  (2, 'vectorized_elementwise_kernel');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, totalMemory INTEGER, clockRate INTEGER,
  smCount INTEGER, smMajor INTEGER, smMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 85520809984, 1980000000, 132, 9, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000000, 11000000, 0, 1, 7, 1, 0, 1, 2, 32, 1024, 1, 1, 256, 1, 1, 0, 0);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL,
  metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65536, 0, 'GH100', 0, 'SMs Active [Throughput %]'),
  (65536, 0, 'GH100', 1, 'SM Issue [Throughput %]'), (65536, 0, 'GH100', 2, 'DRAM Read Bandwidth [Throughput %]'),
  (65536, 0, 'GH100', 3, 'DRAM Write Bandwidth [Throughput %]'), (65536, 0, 'GH100', 4, 'GR Active [Throughput %]'),
  (65536, 0, 'GH100', 5, 'GPC Clock Frequency [MHz]');
CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp INTEGER, typeId INTEGER NOT NULL,
  metricId INTEGER NOT NULL, value INTEGER NOT NULL);
)sql";
  const int values[] = {88, 12, 55, 20, 99, 1980};
  sql += "BEGIN;\n";
  for (TimeNs at = 1 * ms; at <= 11 * ms; at += 100 * us)
    for (int m = 0; m < 6; ++m)
      sql += "INSERT INTO GPU_METRICS VALUES (" + std::to_string(at) + ", " + std::to_string(at) + ", 65536, " +
             std::to_string(m) + ", " + std::to_string(values[m]) + ");\n";
  sql += "COMMIT;\n";
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return path;
}

TEST(Hardware, NsysGpuMetricsGiveTheDeviceSummary) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("gpuscope-hw-nsys-" + std::to_string(::getpid()) + ".sqlite"))
          .string();
  std::filesystem::remove(path);
  const Trace t = import_nsys_sqlite(planted_nsys_export(path));
  std::filesystem::remove(path);
  const Profile p = analyze(t);
  ASSERT_EQ(p.devices.size(), 1u);
  const DeviceHw& hw = p.devices[0].hw;
  std::vector<std::string> names;
  for (const HwMetric& m : hw.metrics) names.push_back(m.name);
  // The four with a hw.* equivalent; GR Active and the GPC clock keep nsys' names, outside hw.
  EXPECT_EQ(names, (std::vector<std::string>{"hw.dram_read", "hw.dram_write", "hw.sm_active", "hw.sm_issue"}));
  EXPECT_NE(t.find_counter_series("GR Active", 0), kNoSeries);
  ASSERT_FALSE(hw.by_category.empty());
  const HwCategory& c = hw.by_category.front();
  EXPECT_EQ(c.category, KernelCategory::elementwise);
  EXPECT_EQ(c.samples, 100u);  // 1.0 .. 10.9 ms: the sample at the kernel's end is after it
  ASSERT_TRUE(c.sm_active && c.sm_issue && c.dram_share);
  EXPECT_NEAR(*c.sm_active, 0.88, 1e-9);
  EXPECT_NEAR(*c.sm_issue, 0.12, 1e-9);
  EXPECT_NEAR(*c.dram_share, 0.75, 1e-9);
  EXPECT_TRUE(testing::find_finding(p, "memory-bound-kernels")) << testing::describe_findings(p);
  EXPECT_FALSE(testing::find_finding(p, "busy-not-working")) << testing::describe_findings(p);
}

// [SECTION] Synthetic traces with hardware series -----------------------------------------

SyntheticOptions synth_hw() {
  SyntheticOptions o;
  o.kernels = 6'000;
  o.gpus = 1;
  o.hardware_metrics = true;
  return o;
}

TEST(Hardware, SyntheticPaddingAndBroadcastAreBusyNotWorking) {
  SyntheticOptions o = synth_hw();
  o.padding_share = 0.45;
  o.broadcast_share = 0.40;
  const Profile p = analyze(make_synthetic_trace(o));
  const Finding* f = testing::find_finding(p, "busy-not-working");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  bool named = false;
  for (const std::string& k : f->kernels)
    named = named || k.find("TensorPadding") != std::string::npos || k.find("TensorBroadcasting") != std::string::npos;
  EXPECT_TRUE(named) << f->evidence;
  // The same job without the planted kernels: its SMs are busy while kernels run.
  const Profile clean = analyze(make_synthetic_trace(synth_hw()));
  EXPECT_FALSE(testing::find_finding(clean, "busy-not-working")) << testing::describe_findings(clean);
  ASSERT_TRUE(clean.devices[0].hw.busy_sm_active);
  EXPECT_GT(*clean.devices[0].hw.busy_sm_active, 0.7);
}

TEST(Hardware, SyntheticThrottledStretchIsClocksThrottled) {
  SyntheticOptions o = synth_hw();
  o.throttle_share = 0.5;
  const Profile p = analyze(make_synthetic_trace(o));
  const Finding* f = testing::find_finding(p, "clocks-throttled");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->title.find("software thermal slowdown"), std::string::npos) << f->title;
  const DeviceHw& hw = p.devices[0].hw;
  EXPECT_NEAR(static_cast<double>(hw.throttled_steps), static_cast<double>(hw.throttled_steps + hw.other_steps) / 2,
              1.5);
  ASSERT_TRUE(hw.throttled_sm_clock_mhz && hw.sm_clock_max_mhz);
  EXPECT_EQ(*hw.throttled_sm_clock_mhz, 1410);
  EXPECT_EQ(*hw.sm_clock_max_mhz, 1980);
  // Kernels slowed by the clock ratio (1980 / 1410): the steps by nearly as much.
  const double slower = static_cast<double>(hw.throttled_step_mean_ns) / static_cast<double>(hw.other_step_mean_ns);
  EXPECT_GT(slower, 1.2);
  EXPECT_LT(slower, 1.45);
  const Profile cool = analyze(make_synthetic_trace(synth_hw()));
  EXPECT_FALSE(testing::find_finding(cool, "clocks-throttled")) << testing::describe_findings(cool);
  EXPECT_EQ(cool.devices[0].hw.throttle_samples, 0u);
}

TEST(Hardware, SyntheticTensorActivityDecidesNoTensorCores) {
  const Profile off = analyze(make_synthetic_trace(synth_hw()));
  const Finding* f = testing::find_finding(off, "no-tensor-cores");
  ASSERT_TRUE(f) << testing::describe_findings(off);
  EXPECT_NE(f->title.find("measured"), std::string::npos) << f->title;
  SyntheticOptions o = synth_hw();
  o.tensor_cores = true;
  const Profile on = analyze(make_synthetic_trace(o));
  EXPECT_FALSE(testing::find_finding(on, "no-tensor-cores")) << testing::describe_findings(on);
}

TEST(Hardware, SyntheticElementwiseWorkIsMemoryBound) {
  const Profile p = analyze(make_synthetic_trace(synth_hw()));
  const Finding* f = testing::find_finding(p, "memory-bound-kernels");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  EXPECT_NE(f->title.find("normalization"), std::string::npos) << f->title;
  EXPECT_EQ(f->title.find("convolution"), std::string::npos) << f->title;
  // FP32 convolutions issue at a high rate: named compute-bound, where a faster kernel pays.
  EXPECT_NE(f->evidence.find("Compute-bound (issue ≥ 50%): convolution"), std::string::npos) << f->evidence;
  EXPECT_NE(f->recommendation.find("compute-bound convolution"), std::string::npos) << f->recommendation;
  // The text report gives the per-category numbers the finding reads.
  const std::string text = report_text(p);
  EXPECT_NE(text.find("by kernel category (of peak; samples): "), std::string::npos) << text;
  EXPECT_NE(text.find("normalization SMs "), std::string::npos) << text;
  // Without the series: nothing measured, no claim.
  SyntheticOptions plain = synth_hw();
  plain.hardware_metrics = false;
  const Profile pp = analyze(make_synthetic_trace(plain));
  EXPECT_FALSE(testing::find_finding(pp, "memory-bound-kernels"));
  EXPECT_TRUE(pp.devices[0].hw.metrics.empty());
}

}  // namespace
}  // namespace gpuscope
