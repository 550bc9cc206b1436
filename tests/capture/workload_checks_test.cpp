// The GPU check's trace checker (workload_checks.h), validated on CPU with
// synthetic CUPTI records of what capture_workload does: it must accept a
// faithful trace and reject one that lost overlap, correlation or records.
#include "capture/workload_checks.h"

#include <gtest/gtest.h>

#include "capture/cupti_records.h"
#include "capture/record_decoder.h"

namespace gpuscope::capture::workload {
namespace {

using namespace gpuscope::capture::testing;

constexpr std::uint32_t kPid = 500, kTid = 501;
constexpr std::uint64_t kMs = 1'000'000, kT0 = 1'700'000'000'000'000'000ull;

struct Options {
  bool serial_streams = false;
  bool drop_one_launch = false;
  bool only_graph = false;
};

Trace synthesize(const Options& o, std::uint64_t dropped = 0) {
  RecordBuffer r;
  std::uint32_t corr = 0;
  auto api = [&](std::uint32_t cbid, std::uint64_t at, bool driver = false) {
    ++corr;
    if (o.drop_one_launch && corr == 3) return corr;
    r.add(api_record(driver, cbid, at, at + 1000, kPid, kTid, corr));
    return corr;
  };
  auto range = [&](std::uint32_t id, const char* name, std::uint64_t a, std::uint64_t b) {
    r.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, a, id, kPid, kTid, name));
    r.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, b, id, kPid, kTid, nullptr));
  };
  CUpti_ActivityDevice5 dev;
  std::memset(&dev, 0, sizeof dev);
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.name = "NVIDIA H200";
  dev.numMultiprocessors = 132;
  r.add(dev);
  r.add(context_record(1, 0, 7));
  auto stream_sync = [&](std::uint64_t at, std::uint32_t stream) {
    const std::uint32_t c = api(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, at);
    r.add(sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, at, at + 500, c, 1, stream, 0));
  };
  if (!o.only_graph) {
    range(1, "workload", kT0, kT0 + 100 * kMs);
    range(2, "overlap", kT0 + 1 * kMs, kT0 + 30 * kMs);
    for (int i = 0; i < kSpinKernelsPerStream; ++i) {
      const std::uint64_t a = kT0 + 2 * kMs + i * 4 * kMs;
      const std::uint64_t b = o.serial_streams ? a + 2 * kMs : a + kMs / 2;
      auto k1 = kernel_record(a, a + 2 * kMs, 0, 13, api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, a - 5000),
                              "_Z11spin_kernelx");
      auto k2 = kernel_record(b, b + 2 * kMs, 0, 14, api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, a - 4000),
                              "_Z11spin_kernelx");
      r.add(k1);
      r.add(k2);
    }
    stream_sync(kT0 + 28 * kMs, 13);
    stream_sync(kT0 + 29 * kMs, 14);
    range(3, "copies", kT0 + 31 * kMs, kT0 + 50 * kMs);
    std::uint64_t at = kT0 + 32 * kMs;
    auto copy = [&](CUpti_ActivityMemcpyKind kind, CUpti_ActivityMemoryKind src, CUpti_ActivityMemoryKind dst) {
      const std::uint32_t c = api(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, at);
      r.add(memcpy_record(at + 2000, at + 500'000, 0, 13, c, kCopyBytes, kind, src, dst));
      at += kMs;
    };
    for (int i = 0; i < kPageableCopies; ++i)
      copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    for (int i = 0; i < kPinnedCopiesEachWay; ++i) {
      copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
      copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    }
    for (int i = 0; i < kMemsets; ++i) {
      const std::uint32_t c = api(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, at);
      r.add(memset_record(at + 1000, at + 5000, 0, 13, c, kCopyBytes, 0));
      at += kMs;
    }
    stream_sync(kT0 + 49 * kMs, 13);
  }
  {
    if (!o.only_graph) range(4, "graph", kT0 + 51 * kMs, kT0 + 70 * kMs);
    std::uint64_t at = kT0 + 52 * kMs;
    for (int launch = 0; launch < kGraphLaunches; ++launch) {
      const std::uint32_t c = api(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, at);
      for (int node = 0; node < kGraphNodes; ++node) {
        auto k = kernel_record(at + 10'000 + node * 100'000, at + 90'000 + node * 100'000, 0, 13, c,
                               "_Z17graph_node_kernelPfii");
        k.graphId = 9;
        k.graphNodeId = 100 + node;
        r.add(k);
      }
      at += kMs;
    }
    if (!o.only_graph) stream_sync(kT0 + 69 * kMs, 13);
  }
  if (!o.only_graph) {
    range(5, "nccl", kT0 + 71 * kMs, kT0 + 90 * kMs);
    for (int i = 0; i < kAllReduces; ++i) {
      const std::uint64_t at = kT0 + 72 * kMs + i * kMs;
      r.add(kernel_record(at + 10'000, at + 200'000, 0, 13, api(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, at, true),
                          "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
    }
  }
  TraceBuilder b;
  RecordDecoder d(b, DecoderOptions{kPid, false});
  d.decode(r.data(), r.size());
  d.finish(kT0 + 200 * kMs);
  d.write_stats(b.meta());
  b.meta().set_stat(stat_key::kDroppedRecords, dropped);
  return b.freeze();
}

std::string failures(const std::vector<Check>& checks) {
  std::string f;
  for (const Check& c : checks)
    if (!c.ok) f += c.name + " (" + c.detail + "); ";
  return f;
}

bool failed(const std::vector<Check>& checks, std::string_view name) {
  for (const Check& c : checks)
    if (c.name == name) return !c.ok;
  ADD_FAILURE() << "no check named " << name;
  return false;
}

TEST(WorkloadChecks, AcceptAFaithfulCapture) {
  const auto checks = check_workload(synthesize({}), Expect::full, /*with_nccl=*/true);
  EXPECT_EQ(failures(checks), "");
  EXPECT_GE(checks.size(), 14u);
}

TEST(WorkloadChecks, RejectSerializedStreams) {
  const auto checks = check_workload(synthesize({.serial_streams = true}), Expect::full, true);
  EXPECT_TRUE(failed(checks, "two streams overlap"));
}

TEST(WorkloadChecks, RejectAMissingLaunch) {
  const auto checks = check_workload(synthesize({.drop_one_launch = true}), Expect::full, true);
  EXPECT_TRUE(failed(checks, "correlation complete"));
}

TEST(WorkloadChecks, RejectDroppedRecords) {
  const auto checks = check_workload(synthesize({}, /*dropped=*/3), Expect::full, true);
  EXPECT_TRUE(failed(checks, "no dropped records"));
}

TEST(WorkloadChecks, CaptureRangesExpectOnlyTheirPhase) {
  const Trace graph_only = synthesize({.only_graph = true});
  EXPECT_EQ(failures(check_workload(graph_only, Expect::range_graph, true)), "");
  // The same trace is not a full capture.
  EXPECT_TRUE(failed(check_workload(graph_only, Expect::full, true), "spin kernels"));
  // Nor a copies-range capture.
  EXPECT_TRUE(failed(check_workload(graph_only, Expect::range_copies, true), "pageable copies"));
}

}  // namespace
}  // namespace gpuscope::capture::workload
