// Golden tests of the Chrome/Kineto JSON importer on every real trace in
// tests/data/traces. The expected numbers were computed independently by
// tests/import/golden_counts.py (Python's json module, numbers as Decimal so
// timestamps stay exact); its docstring says how each one is obtained.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "import/chrome_json.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

struct Golden {
  const char* file;
  std::size_t kernels, memcpys, memsets, api_calls, syncs, ranges;
  std::uint64_t flows;
  std::size_t steps;
  std::size_t linked;  // GPU ops whose correlation matches a runtime/driver call
  std::size_t ac2g;    // of those, the ones an ac2g/launch flow also links
  long long kernel_ns, first_kernel_ns;
  std::vector<std::uint32_t> devices;
  int rank, world_size;
  int sub_us;
  std::size_t memory_events;  // Kineto's [memory] events (allocations and frees)
};

// Output of: python3 tests/import/golden_counts.py tests/data/traces
const std::vector<Golden> kGolden = {
    {"hta-alexnet.json.gz",
     79,
     16,
     3,
     361,
     41,
     370,
     500,
     0,
     98,
     98,
     10692000LL,
     1695835573023613000LL,
     {0},
     0,
     0,
     0,
     0},
    {"hta-event-sync-multistream.json.gz",
     3,
     0,
     3,
     39,
     5,
     9,
     50,
     0,
     6,
     6,
     369000LL,
     1712867402348700000LL,
     {0},
     0,
     0,
     0,
     0},
    {"hta-event-sync.json.gz", 4, 1, 0, 12, 4, 14, 21, 1, 5, 5, 49000LL, 1707417525512145000LL, {0}, 0, 0, 0, 0},
    {"hta-ns-resolution-v100.json.gz",
     4350,
     1600,
     145,
     15329,
     0,
     23998,
     23234,
     5,
     6095,
     6095,
     468153602LL,
     1712195495505582988LL,
     {0},
     0,
     1,
     1,
     0},
    {"hta-sampled-rank0.json.gz",
     1154,
     40,
     10,
     1204,
     0,
     2403,
     0,
     2,
     1204,
     0,
     606519000LL,
     1682725898082228000LL,
     {0},
     0,
     128,
     0,
     0},
    {"hta-sampled-rank1.json.gz",
     1104,
     40,
     10,
     1154,
     0,
     2368,
     0,
     2,
     1154,
     0,
     651026000LL,
     1682725898082381000LL,
     {1},
     1,
     128,
     0,
     0},
    {"hta-triton.json.gz", 1, 0, 0, 2, 0, 7, 3, 1, 1, 1, 1760LL, 1730156791097444592LL, {0}, -1, 0, 1, 0},
    {"kineto-resnet50-v100-workers0.json.gz",
     8772,
     12,
     312,
     11923,
     0,
     23649,
     18192,
     6,
     9096,
     9096,
     591532000LL,
     1623142623531625000LL,
     {0},
     -1,
     0,
     0,
     12838},
    {"kineto-resnet50-v100-workers4.json.gz",
     8868,
     12,
     378,
     12085,
     0,
     20565,
     18516,
     6,
     9258,
     9258,
     594868000LL,
     1623212388476227000LL,
     {0},
     -1,
     0,
     0,
     10980},
    {"tracelens-bert-small-h100.json.gz",
     60,
     1,
     0,
     132,
     0,
     1869,
     193,
     2,
     61,
     61,
     307197LL,
     1752830083333430849LL,
     {0},
     -1,
     0,
     1,
     236},
    {"tracelens-timesformer-h100.json.gz",
     446,
     2,
     86,
     929,
     0,
     45875,
     1463,
     2,
     534,
     534,
     154855595LL,
     1752831015707342621LL,
     {0},
     -1,
     0,
     1,
     1264},
};

// A row prints as its file (gtest shows the parameter of a failing test).
void PrintTo(const Golden& g, std::ostream* os) { *os << g.file; }

std::string trace_path(const char* file) { return testing::real_trace(file); }

class GoldenTrace : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenTrace, MatchesIndependentCounts) {
  const Golden& g = GetParam();
  const std::string path = trace_path(g.file);
  const Trace t = import_chrome_json(path);

  EXPECT_EQ(t.meta().source, TraceSource::chrome_json);
  EXPECT_EQ(t.kernels().size(), g.kernels);
  EXPECT_EQ(t.memcpys().size(), g.memcpys);
  EXPECT_EQ(t.memsets().size(), g.memsets);
  EXPECT_EQ(t.api_calls().size(), g.api_calls);
  EXPECT_EQ(t.syncs().size(), g.syncs);
  EXPECT_EQ(t.ranges().size(), g.ranges);
  EXPECT_EQ(t.memory_events().size(), g.memory_events);
  EXPECT_EQ(t.meta().stat("import.skipped.flow"), g.flows);

  // Nothing else was dropped: every skip reason other than flows is zero.
  for (const auto& [key, value] : t.meta().stats)
    if (key.rfind("import.skipped.", 0) == 0 && key != "import.skipped.flow") ADD_FAILURE() << key << " = " << value;

  // ProfilerStep#N ranges (CPU side and GPU side).
  std::size_t steps = 0;
  for (std::size_t i = 0; i < t.ranges().size(); ++i)
    if (t.str(t.ranges().name[i]).rfind("ProfilerStep#", 0) == 0) ++steps;
  EXPECT_EQ(steps, g.steps);

  // Correlation links: every GPU op that has a launching call in the file has it.
  std::size_t linked = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) linked += t.kernels().api[i] != kNoRow;
  for (std::size_t i = 0; i < t.memcpys().size(); ++i) linked += t.memcpys().api[i] != kNoRow;
  for (std::size_t i = 0; i < t.memsets().size(); ++i) linked += t.memsets().api[i] != kNoRow;
  EXPECT_EQ(linked, g.linked);
  EXPECT_GE(linked, g.ac2g);
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const RowIndex api = t.kernels().api[i];
    if (api == kNoRow) continue;
    EXPECT_EQ(t.api_calls().correlation[api], t.kernels().correlation[i]);
    const std::string_view name = t.str(t.api_calls().name[api]);
    EXPECT_TRUE(name.find("Launch") != std::string_view::npos || name.find("launch") != std::string_view::npos ||
                name.find("Graph") != std::string_view::npos)
        << name;
  }

  // Exact nanoseconds: the sum of kernel durations and the first kernel start.
  long long kernel_ns = 0;
  TimeNs first = std::numeric_limits<TimeNs>::max();
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    kernel_ns += t.kernels().end[i] - t.kernels().start[i];
    first = std::min(first, t.kernels().start[i]);
  }
  EXPECT_EQ(kernel_ns, g.kernel_ns);
  EXPECT_EQ(first, g.first_kernel_ns);

  // Devices the GPU ops ran on, described by deviceProperties when present.
  std::vector<std::uint32_t> devices;
  for (const Device& d : t.devices()) devices.push_back(d.id);
  EXPECT_EQ(devices, g.devices);
  for (const Device& d : t.devices()) {
    if (t.meta().property("chrome.devices_listed").empty()) continue;
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.sm_count, 0u);
    EXPECT_GT(d.memory_bytes, 0u);
    EXPECT_GT(d.compute_major, 0);
  }

  EXPECT_EQ(t.meta().rank, g.rank);
  EXPECT_EQ(t.meta().world_size, g.world_size);
  EXPECT_EQ(t.meta().property("chrome.sub_us_timestamps"), g.sub_us ? "1" : "0");
  EXPECT_EQ(t.meta().producer.rfind("PyTorch Profiler (Kineto)", 0), 0u) << t.meta().producer;
  EXPECT_GT(t.meta().start_time_ns, 0);

  // Kernel launch geometry comes through.
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    ASSERT_GT(t.kernels().grid_x[i], 0u);
    ASSERT_GT(t.kernels().block_x[i], 0u);
  }

  // Every GPU track has a name; the process of the rank has its name.
  for (const Track& tr : t.tracks())
    if (tr.kind == TrackKind::gpu) {
      EXPECT_EQ(tr.name, "stream " + std::to_string(tr.stream));
    }
  bool named_process = false;
  for (const Process& p : t.processes()) named_process |= !p.name.empty() && p.pid < 0xF0000000u;
  EXPECT_TRUE(named_process);
}

INSTANTIATE_TEST_SUITE_P(RealTraces, GoldenTrace, ::testing::ValuesIn(kGolden),
                         [](const auto& info) { return testing::trace_test_name(info.param.file); });

// The table above has one row for each real trace, and only those.
TEST(GoldenTrace, TableCoversEveryTrace) {
  std::set<std::string> listed;
  for (const Golden& g : kGolden) EXPECT_TRUE(listed.insert(g.file).second) << "listed twice: " << g.file;
  const std::set<std::string> want(testing::real_trace_files().begin(), testing::real_trace_files().end());
  EXPECT_EQ(listed, want);
}

// The sub-µs trace keeps nanoseconds that a double of the epoch would lose:
// "ts": 1712195495505582.988 with "dur": 4.928 is the first kernel in the file.
TEST(GoldenTrace, SubMicrosecondTimestampsAreExact) {
  const std::string path = trace_path("hta-ns-resolution-v100.json.gz");
  const Trace t = import_chrome_json(path);
  bool found = false;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    if (t.kernels().correlation[i] != 135071) continue;
    found = true;
    EXPECT_EQ(t.kernels().start[i], 1712195495505582988LL);
    EXPECT_EQ(t.kernels().end[i], 1712195495505582988LL + 4928);
  }
  EXPECT_TRUE(found);
  // cudaLaunchKernel "ts": 1712195495505543.2xx — the runtime call of that kernel.
  for (std::size_t i = 0; i < t.api_calls().size(); ++i)
    if (t.api_calls().correlation[i] == 135071) {
      EXPECT_EQ(t.api_calls().end[i] - t.api_calls().start[i], 41768);
    }
  EXPECT_EQ(t.meta().property("chrome.ts_origin_ns"), "0");
}

// baseTimeNanoseconds: ts is relative to it; the model's clock is absolute.
TEST(GoldenTrace, BaseTimeNanosecondsIsTheOrigin) {
  const std::string path = trace_path("hta-triton.json.gz");
  const Trace t = import_chrome_json(path);
  EXPECT_EQ(t.meta().property("chrome.ts_origin_ns"), "1727743122000000000");
  ASSERT_EQ(t.kernels().size(), 1u);
  // "ts": 2413669097444.592, "dur": 1.76
  EXPECT_EQ(t.kernels().start[0], 1727743122000000000LL + 2413669097444592LL);
  EXPECT_EQ(t.kernels().end[0] - t.kernels().start[0], 1760);
  EXPECT_EQ(t.str(t.kernels().name[0]), "triton_poi_fused_add_cos_sin_0");
  // Launched through the driver API.
  ASSERT_NE(t.kernels().api[0], kNoRow);
  EXPECT_EQ(t.api_calls().domain_at(t.kernels().api[0]), ApiDomain::driver);
  EXPECT_EQ(t.str(t.api_calls().name[t.kernels().api[0]]), "cuLaunchKernel");
}

// The 2021 schema: cat "Kernel"/"Memcpy", tid "stream 7", memcpy kinds from names.
TEST(GoldenTrace, Schema2021) {
  const std::string path = trace_path("kineto-resnet50-v100-workers0.json.gz");
  const Trace t = import_chrome_json(path);
  EXPECT_EQ(t.meta().producer, "PyTorch Profiler (Kineto), 2021 schema");
  std::set<std::uint32_t> streams;
  for (const Track& tr : t.tracks())
    if (tr.kind == TrackKind::gpu) streams.insert(tr.stream);
  EXPECT_EQ(streams, std::set<std::uint32_t>{7});
  ASSERT_EQ(t.memcpys().size(), 12u);
  std::size_t htod_pageable = 0;
  for (std::size_t i = 0; i < t.memcpys().size(); ++i)
    htod_pageable += t.memcpys().kind_at(i) == CopyKind::htod && t.memcpys().src_kind_at(i) == MemoryKind::pageable &&
                     t.memcpys().dst_kind_at(i) == MemoryKind::device;
  EXPECT_GT(htod_pageable, 0u);
  // "Operator" is the 2021 name of cpu_op.
  const StringId cpu_op = t.strings().find("cpu_op");
  ASSERT_NE(cpu_op, StringTable::kNoString);
  std::size_t ops = 0;
  for (std::size_t i = 0; i < t.ranges().size(); ++i) ops += t.ranges().domain[i] == cpu_op;
  EXPECT_EQ(ops, 23646u);  // X events with cat "Operator" (python: golden_counts.py's ranges, by category)
  // Devices listed: 4; used: 1, with its properties.
  EXPECT_EQ(t.meta().property("chrome.devices_listed"), "4");
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.devices()[0].name, "Tesla V100-DGXS-32GB");
  EXPECT_EQ(t.devices()[0].sm_count, 80u);
  EXPECT_EQ(t.devices()[0].compute_major, 7);
}

// cuda_sync events become syncs on the waiting thread, typed from their name.
TEST(GoldenTrace, CudaSyncEvents) {
  const std::string path = trace_path("hta-alexnet.json.gz");
  const Trace t = import_chrome_json(path);
  std::size_t by_type[5] = {};
  for (std::size_t i = 0; i < t.syncs().size(); ++i) {
    ++by_type[static_cast<int>(t.syncs().type_at(i))];
    EXPECT_EQ(t.tracks()[t.syncs().track_at(i)].kind, TrackKind::cpu);
    EXPECT_EQ(t.syncs().device[i], 0u);
  }
  // Counter({'Stream Wait Event': 20, 'Stream Sync': 16, 'Context Sync': 5})
  EXPECT_EQ(by_type[static_cast<int>(SyncType::stream_wait_event)], 20u);
  EXPECT_EQ(by_type[static_cast<int>(SyncType::stream)], 16u);
  EXPECT_EQ(by_type[static_cast<int>(SyncType::context)], 5u);
  EXPECT_EQ(by_type[static_cast<int>(SyncType::unknown)], 0u);
}

TEST(GoldenTrace, EventSyncKeepsTheEventAndNoStream) {
  const std::string path = trace_path("hta-event-sync-multistream.json.gz");
  const Trace t = import_chrome_json(path);
  std::size_t event_syncs = 0;
  for (std::size_t i = 0; i < t.syncs().size(); ++i) {
    if (t.syncs().type_at(i) != SyncType::event) continue;
    ++event_syncs;
    EXPECT_EQ(t.syncs().stream[i], kNoId);  // "stream": -1
    EXPECT_NE(t.syncs().event[i], kNoId);   // "wait_on_cuda_event_id": 9, …
  }
  EXPECT_EQ(event_syncs, 3u);
}

}  // namespace
}  // namespace gpuscope
