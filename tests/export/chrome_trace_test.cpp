// Chrome trace export: parse the output back and check every invariant, the
// exact ns of every event, gzip, atomic files, and real traces.
#include "export/chrome_trace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "export/chrome_check.h"
#include "import/open_trace.h"
#include "import/synthetic.h"
#include "support/real_traces.h"
#include "support/test_traces.h"
#include "trace/builder.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;
using testing::check_chrome_json;
using testing::every_table_trace;
using testing::kT0;
using testing::to_ns;

std::map<std::uint64_t, nlohmann::json> by_correlation(const testing::ParsedChrome& p, std::string_view cat) {
  std::map<std::uint64_t, nlohmann::json> out;
  for (const auto& e : p.events)
    if (e.value("ph", "") == "X" && e.value("cat", "") == cat) out[e.at("args").at("correlation")] = e;
  return out;
}

TEST(ChromeExport, FormatsMicrosecondsExactly) {
  EXPECT_EQ(format_chrome_us(0), "0.000");
  EXPECT_EQ(format_chrome_us(1), "0.001");
  EXPECT_EQ(format_chrome_us(999), "0.999");
  EXPECT_EQ(format_chrome_us(1000), "1.000");
  EXPECT_EQ(format_chrome_us(123456789), "123456.789");
  EXPECT_EQ(format_chrome_us(std::numeric_limits<std::int64_t>::max()), "9223372036854775.807");
  // Against a brute-force reference: snprintf of the integer parts.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const std::int64_t ns = static_cast<std::int64_t>(rng() >> (1 + rng() % 63));
    char ref[48];
    std::snprintf(ref, sizeof ref, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
    ASSERT_EQ(format_chrome_us(ns), ref);
  }
}

TEST(ChromeExport, EveryTableRoundTripsToTheNanosecond) {
  const Trace t = every_table_trace();
  ChromeExportStats stats;
  std::string json;
  stats = write_chrome_trace(t, [&](std::string_view s) { json.append(s); });
  const auto p = check_chrome_json(json);
  EXPECT_EQ(stats.json_bytes, json.size());
  EXPECT_EQ(stats.events, p.events.size());
  EXPECT_EQ(stats.skipped_non_finite_counters, 2u);
  EXPECT_EQ(p.base, (kT0 - 1'500) / 1000 * 1000);

  // Kernels: exact times, Kineto's args, pid = device and tid = stream.
  const auto kernels = by_correlation(p, "kernel");
  ASSERT_EQ(kernels.size(), 4u);  // the graph launch's two kernels share correlation 6
  const KernelTable& k = t.kernels();
  std::size_t matched = 0;
  for (const auto& e : p.events) {
    if (e.value("cat", "") != "kernel") continue;
    const auto corr = e.at("args").at("correlation").get<std::uint32_t>();
    const std::int64_t start = p.base + to_ns(e.at("ts"));
    for (std::size_t i = 0; i < k.size(); ++i) {
      if (k.correlation[i] != corr || k.start[i] != start) continue;
      ++matched;
      EXPECT_EQ(p.base + to_ns(e.at("ts")) + to_ns(e.at("dur")), k.end[i]);
      EXPECT_EQ(e.at("pid"), 0);
      EXPECT_EQ(e.at("tid"), t.tracks()[k.track_at(i)].stream);
      EXPECT_EQ(e.at("args").at("device"), 0);
      EXPECT_EQ(e.at("args").at("stream"), t.tracks()[k.track_at(i)].stream);
      EXPECT_EQ(e.at("args").at("grid"), nlohmann::json::array({k.grid_x[i], k.grid_y[i], k.grid_z[i]}));
      EXPECT_EQ(e.at("args").at("block"), nlohmann::json::array({k.block_x[i], k.block_y[i], k.block_z[i]}));
      EXPECT_EQ(e.at("args").at("registers per thread"), k.registers[i]);
      EXPECT_EQ(e.at("args").at("shared memory"), k.static_smem[i] + k.dynamic_smem[i]);
      EXPECT_DOUBLE_EQ(e.at("args").at("blocks per SM").get<double>(), k.grid_x[i] * k.grid_y[i] / 100.0);
      EXPECT_DOUBLE_EQ(e.at("args").at("warps per SM").get<double>(), k.grid_x[i] * k.grid_y[i] / 100.0 * 8);
    }
  }
  EXPECT_EQ(matched, k.size());
  const auto& first = kernels.at(1);
  EXPECT_EQ(first.at("args").at("mangled name"), "_Z6kernelIJEEvi");
  // Quotes, backslashes and control characters survive; invalid UTF-8 became U+FFFD.
  EXPECT_EQ(first.at("name"),
            "void kernel<\"quoted\", \\back>(int)\n\x01 bad utf8: \xef\xbf\xbd\xef\xbf\xbd end \xe2\x82\xac");

  // Copies: name, bytes, bandwidth in GB/s (bytes per ns).
  const auto copies = by_correlation(p, "gpu_memcpy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies.at(2).at("name"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copies.at(2).at("args").at("bytes"), 1'000'000);
  EXPECT_DOUBLE_EQ(copies.at(2).at("args").at("memory bandwidth (GB/s)").get<double>(), 1000.0);
  const auto sets = by_correlation(p, "gpu_memset");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets.at(3).at("name"), "Memset (Device)");
  EXPECT_EQ(sets.at(3).at("args").at("memory bandwidth (GB/s)"), 0);

  // API calls: runtime and driver, status only when it failed.
  const auto runtime = by_correlation(p, "cuda_runtime");
  const auto driver = by_correlation(p, "cuda_driver");
  EXPECT_EQ(runtime.size(), 5u);
  ASSERT_EQ(driver.size(), 1u);
  EXPECT_EQ(driver.at(4).at("name"), "cuLaunchKernel");
  EXPECT_EQ(runtime.at(5).at("args").at("status"), 700);
  EXPECT_FALSE(runtime.at(1).at("args").contains("status"));
  EXPECT_EQ(runtime.at(1).at("pid"), 1234);
  EXPECT_EQ(runtime.at(1).at("tid"), 1240);
  EXPECT_EQ(p.base + to_ns(runtime.at(4 - 2).at("ts")), kT0 + 6'000);

  // Flows: from every launching call to its (first) op, at the right places.
  std::map<std::uint64_t, nlohmann::json> starts, ends;
  for (const auto& e : p.events) {
    if (e.value("ph", "") == "s") starts[e.at("id")] = e;
    if (e.value("ph", "") == "f") ends[e.at("id")] = e;
  }
  EXPECT_EQ(starts.size(), 5u);  // calls 1, 2, 3, 4, 6 launched something; 5 (a sync) did not
  EXPECT_EQ(starts.count(5), 0u);
  EXPECT_EQ(p.base + to_ns(starts.at(1).at("ts")), kT0);
  EXPECT_EQ(p.base + to_ns(ends.at(1).at("ts")), kT0 + 5'001);
  EXPECT_EQ(ends.at(1).at("tid"), 7);
  EXPECT_EQ(p.base + to_ns(ends.at(6).at("ts")), kT0 + 30'000);  // the graph's first kernel
  EXPECT_EQ(ends.count(999), 0u);

  // Ranges: NVTX, imported annotations (their category), marks, GPU annotations.
  std::map<std::string, nlohmann::json> ranges;
  for (const auto& e : p.events)
    if (e.contains("cat") && e.contains("name") && e.at("name").is_string()) ranges[e.at("name")] = e;
  EXPECT_EQ(ranges.at("step 0").at("cat"), "user_annotation");
  EXPECT_EQ(ranges.at("step 0").at("args").at("domain"), "my-domain");
  EXPECT_EQ(ranges.at("step 0").at("args").at("color"), "#12ab34");
  EXPECT_EQ(ranges.at("step 0").at("args").at("payload"), -5);
  EXPECT_EQ(p.base + to_ns(ranges.at("step 0").at("ts")), kT0 - 1'500);
  EXPECT_EQ(to_ns(ranges.at("step 0").at("dur")), 201'500);
  EXPECT_EQ(ranges.at("aten::conv2d").at("cat"), "cpu_op");
  EXPECT_EQ(ranges.at("aten::conv2d").at("args").at("External id"), 42);
  EXPECT_EQ(ranges.at("checkpoint").at("ph"), "i");
  EXPECT_FALSE(ranges.at("checkpoint").contains("dur"));
  EXPECT_EQ(ranges.at("forward").at("cat"), "gpu_user_annotation");
  EXPECT_EQ(ranges.at("forward").at("pid"), 0);
  EXPECT_EQ(ranges.at("forward").at("tid"), 7);

  // Syncs as Kineto writes them: on the GPU, tid = stream or -1.
  std::vector<nlohmann::json> syncs;
  for (const auto& e : p.events)
    if (e.value("cat", "") == "cuda_sync") syncs.push_back(e);
  ASSERT_EQ(syncs.size(), 3u);
  std::map<std::string, nlohmann::json> sync_by_name;
  for (const auto& e : syncs) sync_by_name[e.at("name")] = e;
  EXPECT_EQ(sync_by_name.at("Stream Sync").at("tid"), 7);
  EXPECT_EQ(sync_by_name.at("Stream Sync").at("args").at("correlation"), 5);
  EXPECT_EQ(sync_by_name.at("Context Sync").at("tid"), -1);
  EXPECT_EQ(sync_by_name.at("Context Sync").at("pid"), 0);
  EXPECT_EQ(sync_by_name.at("Event Sync").at("pid"), 1234);  // device unknown: on the waiting thread
  EXPECT_EQ(sync_by_name.at("Event Sync").at("args").at("wait_on_cuda_event_id"), 3);

  // Counters: finite samples only; series without a device on the process.
  std::vector<nlohmann::json> counters;
  for (const auto& e : p.events)
    if (e.value("ph", "") == "C") counters.push_back(e);
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0].at("name"), "power");
  EXPECT_EQ(counters[0].at("pid"), 0);
  EXPECT_EQ(counters[0].at("args").at("W"), 300.5);
  EXPECT_EQ(counters[1].at("pid"), 1234);
  EXPECT_EQ(counters[1].at("args").at("value"), 1e9);
  EXPECT_EQ(ranges.at("buffer_flush").at("cat"), "overhead");
  // OS runtime calls: their own category, the return value, the nesting level of a nested one.
  EXPECT_EQ(ranges.at("fread").at("cat"), "os_runtime");
  EXPECT_EQ(ranges.at("fread").at("args").at("return_value"), 4096);
  EXPECT_FALSE(ranges.at("fread").at("args").contains("nesting"));
  EXPECT_EQ(p.base + to_ns(ranges.at("fread").at("ts")), kT0 + 152'000);
  EXPECT_EQ(to_ns(ranges.at("fread").at("dur")), 8'000);
  EXPECT_EQ(ranges.at("pthread_mutex_lock").at("args").at("return_value"), -11);
  EXPECT_EQ(ranges.at("pthread_mutex_lock").at("args").at("nesting"), 1);

  // Document-level metadata.
  const auto& doc = p.doc;
  EXPECT_EQ(doc.at("schemaVersion"), 1);
  EXPECT_EQ(doc.at("distributedInfo").at("rank"), 3);
  EXPECT_EQ(doc.at("distributedInfo").at("world_size"), 8);
  ASSERT_EQ(doc.at("deviceProperties").size(), 1u);
  EXPECT_EQ(doc.at("deviceProperties")[0].at("name"), "Test GPU");
  EXPECT_EQ(doc.at("deviceProperties")[0].at("numSms"), 100);
  EXPECT_EQ(doc.at("deviceProperties")[0].at("totalGlobalMem"), 1ull << 34);
  EXPECT_EQ(doc.at("gpuscope").at("source"), "cupti");
  EXPECT_EQ(doc.at("gpuscope").at("host"), "host \"quoted\"");
  EXPECT_EQ(doc.at("gpuscope").at("stats").at("capture.dropped_records"), 12);
  EXPECT_EQ(doc.at("gpuscope").at("properties").at("key"), "value\twith tab");

  // Names of processes and threads.
  std::map<std::pair<std::uint64_t, std::int64_t>, std::string> thread_names;
  std::map<std::uint64_t, std::string> process_names, labels;
  for (const auto& e : p.events) {
    if (e.value("ph", "") != "M") continue;
    if (e.at("name") == "thread_name")
      thread_names[{e.at("pid").get<std::uint64_t>(), e.at("tid").get<std::int64_t>()}] = e.at("args").at("name");
    if (e.at("name") == "process_name") process_names[e.at("pid")] = e.at("args").at("name");
    if (e.at("name") == "process_labels") labels[e.at("pid")] = e.at("args").at("labels");
  }
  EXPECT_EQ(process_names.at(0), "GPU 0");
  EXPECT_EQ(labels.at(0), "Test GPU");
  EXPECT_EQ(process_names.at(1234), "python3");
  EXPECT_EQ(labels.at(1234), "CPU");
  EXPECT_EQ((thread_names.at({0, 7})), "stream 7 (compute)");
  EXPECT_EQ((thread_names.at({0, 9})), "stream 9");
  EXPECT_EQ((thread_names.at({1234, 1241})), "thread 1241");
}

TEST(ChromeExport, OpInputsAreKinetoArgs) {
  testing::TraceFactory f;
  f.cpu_op("aten::conv2d", kT0, kT0 + 100, "[[8,3,16,16],[8,3,3,3],[8],[],[],[],[]]",
           R"(["float","float","float","","","","Scalar"])");
  f.cpu_op("aten::odd", kT0 + 200, kT0 + 300, "[[1,2],oops", "");  // not JSON: kept as text
  const auto p = check_chrome_json(chrome_trace_json(f.build()));
  std::map<std::string, nlohmann::json> args;
  for (const auto& e : p.events)
    if (e.value("cat", "") == "cpu_op") args[e.at("name")] = e.at("args");
  EXPECT_EQ(args.at("aten::conv2d").at("Input Dims"), nlohmann::json::parse("[[8,3,16,16],[8,3,3,3],[8],[],[],[],[]]"));
  EXPECT_EQ(args.at("aten::conv2d").at("Input type"),
            nlohmann::json::parse(R"(["float","float","float","","","","Scalar"])"));
  EXPECT_EQ(args.at("aten::odd").at("Input Dims"), "[[1,2],oops");
  EXPECT_FALSE(args.at("aten::odd").contains("Input type"));
}

// PyTorch's autograd link is written as Kineto writes it, on every op with
// a sequence number, and read back the same.
TEST(ChromeExport, SequenceNumbersAreKinetoArgs) {
  testing::TraceFactory f;
  f.autograd_op("aten::addmm", kT0, kT0 + 100, 0, 0);
  f.autograd_op("AddmmBackward0", kT0 + 200, kT0 + 300, 0, 1, 2);
  f.cpu_op("aten::add", kT0 + 400, kT0 + 500, "", "");
  const Trace t = f.build();
  const std::string json = chrome_trace_json(t);
  const auto p = check_chrome_json(json);
  std::map<std::string, nlohmann::json> args;
  for (const auto& e : p.events)
    if (e.value("cat", "") == "cpu_op") args[e.at("name")] = e.at("args");
  EXPECT_EQ(args.at("aten::addmm").at("Sequence number"), 0);
  EXPECT_EQ(args.at("aten::addmm").at("Fwd thread id"), 0);
  EXPECT_EQ(args.at("AddmmBackward0").at("Sequence number"), 0);
  EXPECT_EQ(args.at("AddmmBackward0").at("Fwd thread id"), 1);
  EXPECT_FALSE(args.at("aten::add").contains("Sequence number"));
  EXPECT_FALSE(args.at("aten::add").contains("Fwd thread id"));
}

TEST(ChromeExport, HostSamplesAreSampleEventsOverSharedStackFrames) {
  testing::TraceFactory f;
  f.range("aten::mm", kT0, kT0 + 10);  // an event of the thread, so it has a name
  auto sample = [&](TimeNs at, std::string_view stack, std::uint32_t tid) {
    RangeRow r;
    r.track = f.builder().cpu_track(testing::TraceFactory::kPid, tid);
    r.start = r.end = at;
    r.name = f.builder().intern(stack);
    r.domain = f.builder().intern("host_sample");
    r.kind = RangeKind::mark;
    f.builder().add_range(r);
  };
  sample(kT0 + 1, "train.py(50): main;train.py(30): step;loader.py(9): __next__", 1);
  sample(kT0 + 2, "train.py(50): main;train.py(31): step", 1);
  sample(kT0 + 3, "train.py(50): main;train.py(30): step;loader.py(9): __next__", 2);
  const auto p = check_chrome_json(chrome_trace_json(f.build()));
  const nlohmann::json& frames = p.doc.at("stackFrames");
  EXPECT_EQ(frames.size(), 4u);  // main, step@30, __next__, step@31: the shared frame once
  std::vector<std::vector<std::string>> stacks;
  for (const auto& e : p.events) {
    if (e.value("ph", "") != "P") continue;
    EXPECT_EQ(e.value("cat", ""), "host_sample");
    std::vector<std::string> names;
    for (std::string id = e.at("sf");;) {
      names.insert(names.begin(), frames.at(id).at("name").get<std::string>());
      if (!frames.at(id).contains("parent")) break;
      id = frames.at(id).at("parent");
    }
    stacks.push_back(names);
  }
  ASSERT_EQ(stacks.size(), 3u);
  EXPECT_EQ(stacks[0],
            (std::vector<std::string>{"train.py(50): main", "train.py(30): step", "loader.py(9): __next__"}));
  EXPECT_EQ(stacks[1], (std::vector<std::string>{"train.py(50): main", "train.py(31): step"}));
  EXPECT_EQ(stacks[2], stacks[0]);
  for (const auto& e : p.events) EXPECT_NE(e.value("ph", ""), "i") << "no sample left as an instant event";
}

TEST(ChromeExport, EmptyTraceIsAValidDocument) {
  TraceBuilder b;
  const Trace t = b.freeze();
  const auto p = check_chrome_json(chrome_trace_json(t));
  EXPECT_TRUE(p.events.empty());
  EXPECT_EQ(p.base, 0);
  EXPECT_FALSE(p.doc.contains("distributedInfo"));
}

TEST(ChromeExport, FlowsCanBeLeftOut) {
  const Trace t = every_table_trace();
  ChromeExportOptions o;
  o.flows = false;
  const auto p = check_chrome_json(chrome_trace_json(t, o));
  for (const auto& e : p.events) EXPECT_NE(e.at("ph"), "s");
}

TEST(ChromeExport, NegativeAndHugeTimesStayExact) {
  TraceBuilder b;
  const TrackId s = b.gpu_track(0, 1);
  KernelRow k;
  k.track = s;
  k.start = -2'000'000'123;
  k.end = -1'999'999'999;
  b.add_kernel(k);
  k.start = 5'000'000'001;
  k.end = 5'000'000'002;
  b.add_kernel(k);
  const Trace t = b.freeze();
  const auto p = check_chrome_json(chrome_trace_json(t));
  EXPECT_EQ(p.base, -2'000'001'000);
  std::vector<std::pair<std::int64_t, std::int64_t>> got;
  for (const auto& e : p.events)
    if (e.value("cat", "") == "kernel") got.push_back({p.base + to_ns(e.at("ts")), to_ns(e.at("dur"))});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(std::int64_t{-2'000'000'123}, std::int64_t{124}));
  EXPECT_EQ(got[1], std::make_pair(std::int64_t{5'000'000'001}, std::int64_t{1}));
}

TEST(ChromeExport, SyntheticTraceExportsEveryKernelExactly) {
  SyntheticOptions o;
  o.kernels = 6'000;
  o.gpus = 3;
  const Trace t = make_synthetic_trace(o);
  const auto p = check_chrome_json(chrome_trace_json(t));
  EXPECT_EQ(p.doc.at("gpuscope").at("source"), "synthetic");
  EXPECT_NE(p.doc.at("traceName").get<std::string>().find("synthetic"), std::string::npos);
  std::map<std::uint32_t, std::pair<TimeNs, TimeNs>> kernel_by_corr;
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    kernel_by_corr[t.kernels().correlation[i]] = {t.kernels().start[i], t.kernels().end[i]};
  std::size_t kernels = 0, flows = 0;
  for (const auto& e : p.events) {
    if (e.value("ph", "") == "f") ++flows;
    if (e.value("cat", "") != "kernel") continue;
    ++kernels;
    const auto& [start, end] = kernel_by_corr.at(e.at("args").at("correlation"));
    ASSERT_EQ(p.base + to_ns(e.at("ts")), start);
    ASSERT_EQ(p.base + to_ns(e.at("ts")) + to_ns(e.at("dur")), end);
  }
  EXPECT_EQ(kernels, t.kernels().size());
  EXPECT_EQ(flows, t.kernels().size() + t.memcpys().size() + t.memsets().size());
  // Every process is labelled synthetic.
  for (const auto& e : p.events)
    if (e.value("ph", "") == "M" && e.at("name") == "process_name") {
      EXPECT_NE(e.at("args").at("name").get<std::string>().find("synthetic"), std::string::npos) << e.dump();
    }
}

// [SECTION] Files

class ChromeExportFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-export-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static std::string gunzip(const fs::path& p) {
    gzFile f = gzopen(p.c_str(), "rb");
    EXPECT_NE(f, nullptr);
    std::string out;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    EXPECT_EQ(n, 0);
    gzclose(f);
    return out;
  }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  fs::path dir_;
};

TEST_F(ChromeExportFile, WritesPlainJson) {
  const Trace t = every_table_trace();
  const fs::path out = dir_ / "t.json";
  const ChromeExportStats s = write_chrome_trace_file(t, out.string());
  const std::string text = read_file(out);
  EXPECT_EQ(text, chrome_trace_json(t));
  EXPECT_EQ(s.file_bytes, text.size());
  EXPECT_EQ(s.json_bytes, text.size());
  EXPECT_EQ(entries(), 1u) << "no temporary file left behind";
}

// A GPU's hardware series (hw.* and nvml.*, as the capture writes them) come
// back from the Chrome export with their name, unit and device.
TEST_F(ChromeExportFile, HardwareSeriesRoundTripWithTheirDevice) {
  testing::TraceFactory f;
  f.device(0);
  f.device(1);
  f.kernel(0, 7, "k", 1'000, 50'000);
  f.kernel(1, 7, "k", 1'000, 50'000);
  const std::uint32_t sm0 = f.builder().counter_series("hw.sm_active", 0, "%");
  const std::uint32_t sm1 = f.builder().counter_series("hw.sm_active", 1, "%");
  const std::uint32_t thr = f.builder().counter_series("nvml.throttle_reasons", 1, "");
  const std::uint32_t power = f.builder().counter_series("power", 0, "W");
  for (TimeNs at = 2'000; at < 50'000; at += 10'000) {
    f.builder().add_counter({at, sm0, 40.5});
    f.builder().add_counter({at, sm1, 90.0});
    f.builder().add_counter({at, thr, 64.0});
    f.builder().add_counter({at, power, 300.0});
  }
  const Trace t = f.build();
  const fs::path out = dir_ / "hw.json";
  write_chrome_trace_file(t, out.string());
  const Trace back = open_trace(out.string());
  std::map<std::tuple<std::string, std::uint32_t, std::string>, std::vector<double>> got;
  for (std::size_t i = 0; i < back.counters().size(); ++i) {
    const CounterSeries& cs = back.counter_series()[back.counters().series[i]];
    got[{cs.name, cs.device, cs.unit}].push_back(back.counters().value[i]);
  }
  EXPECT_EQ(got[std::make_tuple(std::string("hw.sm_active"), 0u, std::string("%"))], std::vector<double>(5, 40.5));
  EXPECT_EQ(got[std::make_tuple(std::string("hw.sm_active"), 1u, std::string("%"))], std::vector<double>(5, 90.0));
  EXPECT_EQ(got[std::make_tuple(std::string("nvml.throttle_reasons"), 1u, std::string())],
            std::vector<double>(5, 64.0));
  // Other series keep the importer's general form: "<name>.<arg>", no device.
  EXPECT_EQ(got[std::make_tuple(std::string("power.W"), kNoDevice, std::string())], std::vector<double>(5, 300.0));
}

TEST_F(ChromeExportFile, GzipRoundTrips) {
  SyntheticOptions so;
  so.kernels = 10'000;
  const Trace t = make_synthetic_trace(so);
  const fs::path out = dir_ / "t.json.gz";
  ChromeExportOptions o;
  o.gzip = true;
  const ChromeExportStats s = write_chrome_trace_file(t, out.string(), o);
  const std::string raw = read_file(out);
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x8b);
  EXPECT_EQ(s.file_bytes, raw.size());
  EXPECT_LT(s.file_bytes * 5, s.json_bytes) << "compressed";
  const std::string text = gunzip(out);
  EXPECT_EQ(text.size(), s.json_bytes);
  EXPECT_EQ(text, chrome_trace_json(t));
  check_chrome_json(text);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(ChromeExportFile, FailureLeavesNoFileAndKeepsTheOldOne) {
  const Trace t = every_table_trace();
  // A path under a regular file cannot be created, even by root.
  const fs::path blocker = dir_ / "not-a-dir";
  std::ofstream(blocker) << "old";
  try {
    write_chrome_trace_file(t, (blocker / "t.json").string());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), (blocker / "t.json").string());
    EXPECT_NE(e.reason().find("cannot create"), std::string::npos) << e.reason();
  }
  EXPECT_THROW(write_chrome_trace_file(t, (dir_ / "missing-dir" / "t.json.gz").string(), {}), InputError);
  // The target is a directory: the rename fails, the temporary file goes.
  fs::create_directories(dir_ / "is-a-dir.json" / "x");
  EXPECT_THROW(write_chrome_trace_file(t, (dir_ / "is-a-dir.json").string()), InputError);
  EXPECT_EQ(read_file(blocker), "old");
  EXPECT_EQ(entries(), 2u) << "only the blocker and the directory remain";
}

// [SECTION] Real traces

// Order-independent views of a trace's events, for round-trip comparisons.
using Row = std::tuple<std::uint32_t, std::int64_t, TimeNs, TimeNs, std::uint32_t, std::string>;

std::vector<Row> gpu_ops(const Trace& t) {
  std::vector<Row> rows;
  auto where = [&](TrackId id) { return std::pair(t.tracks()[id].device, std::int64_t{t.tracks()[id].stream}); };
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const auto [d, s] = where(t.kernels().track_at(i));
    rows.emplace_back(d, s, t.kernels().start[i], t.kernels().end[i], t.kernels().correlation[i],
                      std::string(t.str(t.kernels().name[i])));
  }
  for (std::size_t i = 0; i < t.memcpys().size(); ++i) {
    const auto [d, s] = where(t.memcpys().track_at(i));
    rows.emplace_back(
        d, s, t.memcpys().start[i], t.memcpys().end[i], t.memcpys().correlation[i],
        "memcpy " + std::to_string(t.memcpys().bytes[i]) + " " + std::string(to_string(t.memcpys().kind_at(i))));
  }
  for (std::size_t i = 0; i < t.memsets().size(); ++i) {
    const auto [d, s] = where(t.memsets().track_at(i));
    rows.emplace_back(d, s, t.memsets().start[i], t.memsets().end[i], t.memsets().correlation[i],
                      "memset " + std::to_string(t.memsets().bytes[i]));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<Row> api_calls(const Trace& t) {
  std::vector<Row> rows;
  const ApiCallTable& a = t.api_calls();
  for (std::size_t i = 0; i < a.size(); ++i)
    rows.emplace_back(t.tracks()[a.track_at(i)].pid, t.tracks()[a.track_at(i)].tid, a.start[i], a.end[i],
                      a.correlation[i], std::string(t.str(a.name[i])) + "/" + std::string(to_string(a.domain_at(i))));
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<Row> ranges(const Trace& t) {
  std::vector<Row> rows;
  const RangeTable& r = t.ranges();
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Track& tr = t.tracks()[r.track_at(i)];
    rows.emplace_back(tr.kind == TrackKind::gpu ? tr.device : tr.pid,
                      tr.kind == TrackKind::gpu ? std::int64_t{tr.stream} : std::int64_t{tr.tid}, r.start[i], r.end[i],
                      0, std::string(t.str(r.name[i])));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// Every real trace, imported and exported: the invariants hold and every
// kernel keeps its exact start and end.
class ChromeExportRealTrace : public ::testing::TestWithParam<std::string> {};

TEST_P(ChromeExportRealTrace, ExportsExactly) {
  const Trace t = open_trace(testing::real_trace(GetParam()));
  const auto p = check_chrome_json(chrome_trace_json(t));
  std::multimap<std::uint32_t, std::pair<TimeNs, TimeNs>> kernels;
  for (std::size_t i = 0; i < t.kernels().size(); ++i)
    kernels.insert({t.kernels().correlation[i], {t.kernels().start[i], t.kernels().end[i]}});
  std::size_t seen = 0;
  for (const auto& e : p.events) {
    if (e.value("cat", "") != "kernel") continue;
    ++seen;
    const std::pair<TimeNs, TimeNs> got{p.base + to_ns(e.at("ts")), p.base + to_ns(e.at("ts")) + to_ns(e.at("dur"))};
    const auto range = kernels.equal_range(e.at("args").at("correlation"));
    bool found = false;
    for (auto it = range.first; it != range.second && !found; ++it) found = it->second == got;
    EXPECT_TRUE(found) << e.dump();
  }
  EXPECT_EQ(seen, t.kernels().size());

  // Round trip: our export, imported again, has the same events to the ns.
  const fs::path again = fs::temp_directory_path() / ("gpuscope-roundtrip-" + std::to_string(::getpid()) + ".json");
  write_chrome_trace_file(t, again.string());
  const Trace back = open_trace(again.string());
  fs::remove(again);
  EXPECT_EQ(gpu_ops(back), gpu_ops(t));
  EXPECT_EQ(api_calls(back), api_calls(t));
  EXPECT_EQ(ranges(back), ranges(t));
  EXPECT_EQ(back.devices().size(), t.devices().size());
}

INSTANTIATE_TEST_SUITE_P(RealTraces, ChromeExportRealTrace, ::testing::ValuesIn(testing::real_trace_files()),
                         testing::TraceFileName());

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

TEST(ChromeExportGolden, SyntheticTraceRoundTripsThroughTheImporter) {
  SyntheticOptions o;
  o.kernels = 4'000;
  o.gpus = 2;
  const Trace t = make_synthetic_trace(o);
  const fs::path file =
      fs::temp_directory_path() / ("gpuscope-synth-roundtrip-" + std::to_string(::getpid()) + ".json");
  write_chrome_trace_file(t, file.string());
  const Trace back = open_trace(file.string());
  fs::remove(file);
  EXPECT_EQ(gpu_ops(back), gpu_ops(t));
  EXPECT_EQ(api_calls(back), api_calls(t));
  EXPECT_EQ(ranges(back), ranges(t));
  ASSERT_EQ(back.syncs().size(), t.syncs().size());
  for (std::size_t i = 0; i < t.syncs().size(); ++i) {
    EXPECT_EQ(back.syncs().start[i], t.syncs().start[i]);
    EXPECT_EQ(back.syncs().end[i], t.syncs().end[i]);
    EXPECT_EQ(back.syncs().type_at(i), t.syncs().type_at(i));
  }
  // Counter series may be numbered differently: compare (time, value) pairs.
  auto samples = [](const Trace& x) {
    std::vector<std::pair<TimeNs, double>> v;
    for (std::size_t i = 0; i < x.counters().size(); ++i) v.emplace_back(x.counters().time[i], x.counters().value[i]);
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(samples(back), samples(t));
  EXPECT_EQ(back.devices().size(), t.devices().size());
}

}  // namespace
}  // namespace gpuscope
