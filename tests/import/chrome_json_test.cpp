// Unit tests of the Chrome JSON importer: generic Chrome traces, Kineto
// snippets, exact time arithmetic (against a brute-force reference), buffer
// boundaries, and malformed input (clear InputError with an offset, never a
// crash).
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "import/chrome_json.h"
#include "import/chrome_json_text.h"
#include "support/autograd_links.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

// [SECTION] Helpers ---------------------------------------------------------------------------

std::string temp_path(const std::string& name) {
  // One folder per test process, removed when the process exits.
  static const struct Dir {
    std::string path = ::testing::TempDir() + "gpuscope_import_" + std::to_string(::getpid());
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } dir;
  return dir.path + "/" + name;
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string gzip(const std::string& bytes) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::string out(libdeflate_gzip_compress_bound(c, bytes.size()), '\0');
  out.resize(libdeflate_gzip_compress(c, bytes.data(), bytes.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

Trace import_text(const std::string& json, std::size_t buffer_bytes = 0) {
  ChromeImportOptions options;
  options.buffer_bytes = buffer_bytes;
  return import_chrome_json(write_file("t.json", json), options);
}

// The InputError of importing `json`, or a test failure if it imports.
InputError import_error(const std::string& json, std::size_t buffer_bytes = 0, const std::string& name = "bad.json") {
  ChromeImportOptions options;
  options.buffer_bytes = buffer_bytes;
  const std::string path = write_file(name, json);
  try {
    import_chrome_json(path, options);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    return e;
  }
  ADD_FAILURE() << "imported without error: " << json.substr(0, 200);
  return InputError(path, "no error");
}

std::size_t count_ranges(const Trace& t, std::string_view name) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < t.ranges().size(); ++i) n += t.str(t.ranges().name[i]) == name;
  return n;
}

RowIndex find_range(const Trace& t, std::string_view name) {
  for (RowIndex i = 0; i < t.ranges().size(); ++i)
    if (t.str(t.ranges().name[i]) == name) return i;
  return kNoRow;
}

// A small trace of the current Kineto schema (every category the importer maps).
const char* kKineto = R"J({
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150000000000, "computeMajor": 9, "computeMinor": 0,
     "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerMultiprocessor": 65536,
     "warpSize": 32, "sharedMemPerMultiprocessor": 233472, "numSms": 132},
    {"id": 1, "name": "NVIDIA H200", "numSms": 132}
  ],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 100, "tid": 101, "ts": 1000.000, "dur": 500.500},
  {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 100, "tid": 101, "ts": 1010.5, "dur": 100, "args": {"External id": 42}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 101, "ts": 1020.25, "dur": 5.125, "args": {"External id": 42, "cbid": 211, "correlation": 7}},
  {"ph": "s", "id": 7, "pid": 100, "tid": 101, "ts": 1020.25, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "void implicit_convolve_sgemm<float>(int, int)", "pid": 0, "tid": 7, "ts": 1030.001, "dur": 20.002,
   "args": {"External id": 42, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 7, "registers per thread": 72,
            "shared memory": 4096, "blocks per SM": 1.5, "warps per SM": 6.0, "grid": [128, 2, 1], "block": [256, 1, 1],
            "est. achieved occupancy %": 25}},
  {"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts": 1030.001, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 100, "tid": 101, "ts": 1040, "dur": 3, "args": {"correlation": 8}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7, "ts": 1060, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 8, "bytes": 4096}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuMemsetD32Async", "pid": 100, "tid": 101, "ts": 1070, "dur": 1, "args": {"correlation": 9, "cbid": 123}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1080, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 9, "bytes": 128}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 100, "tid": 101, "ts": 1090, "dur": 30, "args": {"correlation": 10}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 1091, "dur": 28, "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 10, "device": 0}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 0, "tid": 7, "ts": 1030.000, "dur": 60, "args": {"External id": 1}},
  {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 100, "tid": 101, "ts": 999, "dur": 502},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100, "tid": 101, "ts": 1001, "args": {"Bytes": 64}},
  {"name": "process_name", "ph": "M", "ts": 1000, "pid": 100, "tid": 0, "args": {"name": "python3"}},
  {"name": "process_labels", "ph": "M", "ts": 1000, "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
  {"name": "process_name", "ph": "M", "ts": 1000, "pid": 0, "tid": 0, "args": {"name": "python3"}},
  {"name": "process_labels", "ph": "M", "ts": 1000, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"name": "thread_name", "ph": "M", "ts": 1000, "pid": 100, "tid": 101, "args": {"name": "thread 101 (python3)"}},
  {"name": "thread_name", "ph": "M", "ts": 1000, "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"name": "thread_sort_index", "ph": "M", "ts": 1000, "pid": 0, "tid": 7, "args": {"sort_index": 7}}
  ],
  "traceName": "t.json",
  "baseTimeNanoseconds": 1700000000000000000
})J";

// [SECTION] Kineto -----------------------------------------------------------------------------

TEST(ChromeJson, KinetoCurrentSchema) {
  const Trace t = import_text(kKineto);
  const TimeNs base = 1700000000000000000;
  EXPECT_EQ(t.meta().producer, "PyTorch Profiler (Kineto)");
  EXPECT_EQ(t.meta().rank, 3);
  EXPECT_EQ(t.meta().world_size, 8);
  EXPECT_EQ(t.meta().property("chrome.ts_origin_ns"), "1700000000000000000");
  EXPECT_EQ(t.meta().property("chrome.sub_us_timestamps"), "1");
  EXPECT_EQ(t.meta().property("chrome.devices_listed"), "2");
  EXPECT_EQ(t.meta().property("chrome.distributed.backend"), "nccl");
  EXPECT_EQ(t.meta().property("chrome.meta.traceName"), "t.json");
  EXPECT_EQ(t.meta().stat("import.skipped.flow"), 2u);
  EXPECT_EQ(t.meta().start_time_ns, base + 999000);

  ASSERT_EQ(t.kernels().size(), 1u);
  const auto& k = t.kernels();
  EXPECT_EQ(k.start[0], base + 1030001);
  EXPECT_EQ(k.end[0], base + 1030001 + 20002);
  EXPECT_EQ(t.str(k.name[0]), "void implicit_convolve_sgemm<float>(int, int)");
  EXPECT_EQ(k.grid_x[0], 128u);
  EXPECT_EQ(k.grid_y[0], 2u);
  EXPECT_EQ(k.grid_z[0], 1u);
  EXPECT_EQ(k.block_x[0], 256u);
  EXPECT_EQ(k.registers[0], 72u);
  EXPECT_EQ(k.static_smem[0], 4096u);
  EXPECT_EQ(k.correlation[0], 7u);
  const Track& kt = t.tracks()[k.track_at(0)];
  EXPECT_EQ(kt.kind, TrackKind::gpu);
  EXPECT_EQ(kt.device, 0u);
  EXPECT_EQ(kt.stream, 7u);
  EXPECT_EQ(kt.name, "stream 7");

  // Correlation both ways.
  const RowIndex launch = t.launching_api(OpRef{OpTable::kernel, 0});
  ASSERT_NE(launch, kNoRow);
  EXPECT_EQ(t.str(t.api_calls().name[launch]), "cudaLaunchKernel");
  EXPECT_EQ(t.api_calls().cbid_at(launch), 211u);
  EXPECT_EQ(t.api_calls().end[launch] - t.api_calls().start[launch], 5125);
  const Track& at = t.tracks()[t.api_calls().track_at(launch)];
  EXPECT_EQ(at.kind, TrackKind::cpu);
  EXPECT_EQ(at.pid, 100u);
  EXPECT_EQ(at.tid, 101u);
  EXPECT_EQ(at.name, "thread 101 (python3)");

  ASSERT_EQ(t.memcpys().size(), 1u);
  EXPECT_EQ(t.memcpys().kind_at(0), CopyKind::dtoh);
  EXPECT_EQ(t.memcpys().src_kind_at(0), MemoryKind::device);
  EXPECT_EQ(t.memcpys().dst_kind_at(0), MemoryKind::pinned);
  EXPECT_EQ(t.memcpys().bytes[0], 4096u);
  EXPECT_NE(t.memcpys().api[0], kNoRow);

  ASSERT_EQ(t.memsets().size(), 1u);
  EXPECT_EQ(t.memsets().bytes[0], 128u);
  EXPECT_EQ(static_cast<MemoryKind>(t.memsets().mem_kind[0]), MemoryKind::device);
  ASSERT_NE(t.memsets().api[0], kNoRow);
  EXPECT_EQ(t.api_calls().domain_at(t.memsets().api[0]), ApiDomain::driver);

  ASSERT_EQ(t.syncs().size(), 1u);
  EXPECT_EQ(t.syncs().type_at(0), SyncType::stream);
  EXPECT_EQ(t.syncs().stream[0], 7u);
  EXPECT_EQ(t.syncs().device[0], 0u);
  EXPECT_EQ(t.syncs().track_at(0), t.api_calls().track_at(launch));  // resolved to the waiting thread

  // Ranges: CPU annotations with their domain, the GPU-side step, the mark.
  const RowIndex step = find_range(t, "ProfilerStep#7");
  ASSERT_NE(step, kNoRow);
  EXPECT_EQ(count_ranges(t, "ProfilerStep#7"), 2u);
  std::size_t gpu_steps = 0;
  for (RowIndex i = 0; i < t.ranges().size(); ++i) {
    const std::string_view name = t.str(t.ranges().name[i]);
    const std::string_view domain = t.str(t.ranges().domain[i]);
    const Track& tr = t.tracks()[t.ranges().track_at(i)];
    if (name == "ProfilerStep#7" && tr.kind == TrackKind::gpu) {
      ++gpu_steps;
      EXPECT_EQ(domain, "gpu_user_annotation");
      EXPECT_EQ(t.ranges().correlation_at(i), 1u);
    } else if (name == "ProfilerStep#7") {
      EXPECT_EQ(domain, "user_annotation");
      EXPECT_EQ(t.ranges().end[i] - t.ranges().start[i], 500500);
    } else if (name == "aten::conv2d") {
      EXPECT_EQ(domain, "cpu_op");
      EXPECT_EQ(t.ranges().correlation_at(i), 42u);
      EXPECT_EQ(t.ranges().kind_at(i), RangeKind::annotation);
    } else if (name == "[memory]") {
      EXPECT_EQ(t.ranges().kind_at(i), RangeKind::mark);
      EXPECT_EQ(t.ranges().start[i], t.ranges().end[i]);
    } else if (name == "train.py(12): step") {
      EXPECT_EQ(domain, "python_function");
    }
  }
  EXPECT_EQ(gpu_steps, 1u);

  // Only the used device, with its properties; the GPU pseudo-process is not a process.
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.devices()[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices()[0].sm_count, 132u);
  EXPECT_EQ(t.devices()[0].compute_major, 9);
  EXPECT_EQ(t.devices()[0].memory_bytes, 150000000000u);
  EXPECT_EQ(t.devices()[0].shared_memory_per_sm, 233472u);
  ASSERT_EQ(t.processes().size(), 1u);
  EXPECT_EQ(t.processes()[0].pid, 100u);
  EXPECT_EQ(t.processes()[0].name, "python3");
  EXPECT_EQ(t.processes()[0].rank, 3);
  EXPECT_EQ(t.meta().stat("import.ignored.sort_index_metadata"), 1u);
}

// One GPU listed under another number than the one GPU the events use (a
// ROCm trace: the process's device 0, the kernels on physical device 2) is
// that GPU, and the file is said to number them differently; with two listed,
// or two used, nothing is guessed.
TEST(ChromeJson, OneListedDeviceUnderAnotherNumberDescribesTheOneUsed) {
  const auto trace = [](const char* listed) {
    return import_text(std::string(R"J({"deviceProperties": [)J") + listed + R"J(], "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "attn_fwd", "pid": 2, "tid": 7, "ts": 10, "dur": 5,
       "args": {"device": 2, "stream": 7, "correlation": 1}}]})J");
  };
  const Trace one = trace(R"J({"id": 0, "name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4,
                               "numSms": 304, "warpSize": 64})J");
  ASSERT_EQ(one.devices().size(), 1u);
  EXPECT_EQ(one.devices()[0].id, 2u);
  EXPECT_EQ(one.devices()[0].name, "AMD Instinct MI300X");
  EXPECT_EQ(one.devices()[0].sm_count, 304u);
  EXPECT_EQ(one.meta().property("chrome.device_properties_renumbered"),
            "listed device 0 is device 2: the only one listed and the only one the events use");
  const Trace two = trace(R"J({"id": 0, "name": "AMD Instinct MI300X"}, {"id": 1, "name": "AMD Instinct MI300X"})J");
  ASSERT_EQ(two.devices().size(), 1u);
  EXPECT_EQ(two.devices()[0].name, "");
  EXPECT_EQ(two.meta().property("chrome.device_properties_renumbered"), "");
}

// ROCm's PyTorch records [memory] events as Device Type 6 (c10's HIP) under
// the process's device 0 while the kernels carry the physical device 2: with
// one device listed and one GPU used, the memory is that GPU's, and the file
// says so; a second listed device leaves it where the events put it.
TEST(ChromeJson, MemoryUnderTheListedNumberIsTheOneUsedGpus) {
  const auto trace = [](const char* listed) {
    return import_text(std::string(R"J({"deviceProperties": [)J") + listed + R"J(], "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "attn_fwd", "pid": 2, "tid": 7, "ts": 10, "dur": 5,
       "args": {"device": 2, "stream": 7, "correlation": 1}},
      {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": 12,
       "args": {"Total Reserved": 4096, "Total Allocated": 2048, "Bytes": 2048, "Device Id": 0,
                "Device Type": 6}}]})J");
  };
  const Trace one = trace(R"J({"id": 0, "name": "AMD Instinct MI300X"})J");
  EXPECT_EQ(one.meta().stat("import.skipped.memory_on_other_device"), 0u);
  ASSERT_EQ(one.devices().size(), 1u);
  EXPECT_EQ(one.devices()[0].id, 2u);
  EXPECT_NE(one.find_counter_series(series_name::kMemoryAllocated, 2), kNoSeries);
  EXPECT_EQ(one.meta().property("chrome.memory_device_renumbered"),
            "memory events of device 0 are device 2's: the only device listed, and the events' only other GPU");
  const Trace two = trace(R"J({"id": 0, "name": "AMD Instinct MI300X"}, {"id": 1, "name": "AMD Instinct MI300X"})J");
  EXPECT_EQ(one.meta().stat("import.unattributed.memory_events"), 0u);
  EXPECT_EQ(two.meta().property("chrome.memory_device_renumbered"), "");
  EXPECT_NE(two.find_counter_series(series_name::kMemoryAllocated, 0), kNoSeries);
  EXPECT_EQ(two.meta().stat("import.unattributed.memory_events"), 1u);
}

// ROCm's tracer names a copy to or from pinned host memory "Memcpy DtoD";
// its runtime call's "kind" (hipMemcpyKind: 1 host to device, 2 device to
// host) says the direction, which the copy takes, its host side unknown.
// A copy whose call says device to device (3), or says nothing, keeps its own.
TEST(ChromeJson, RocmCopiesTakeTheirCallsDirection) {
  const Trace t = import_text(R"J({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 9, "tid": 9, "ts": 1, "dur": 30,
     "args": {"correlation": 810, "bytes": "1", "kind": "2"}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 2, "tid": 0, "ts": 5, "dur": 2,
     "args": {"device": 2, "stream": 0, "correlation": 810, "kind": "DtoD", "bytes": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyAsync", "pid": 9, "tid": 9, "ts": 40, "dur": 3,
     "args": {"correlation": 811, "kind": "1"}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 2, "tid": 0, "ts": 45, "dur": 2,
     "args": {"device": 2, "stream": 0, "correlation": 811, "bytes": 4096}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyAsync", "pid": 9, "tid": 9, "ts": 50, "dur": 3,
     "args": {"correlation": 812, "kind": "3"}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 2, "tid": 0, "ts": 55, "dur": 2,
     "args": {"device": 2, "stream": 0, "correlation": 812, "bytes": 128}}]})J");
  const MemcpyTable& m = t.memcpys();
  ASSERT_EQ(m.size(), 3u);
  std::vector<CopyKind> kinds;
  for (std::size_t i = 0; i < m.size(); ++i) kinds.push_back(m.kind_at(i));
  EXPECT_EQ(kinds, (std::vector<CopyKind>{CopyKind::dtoh, CopyKind::htod, CopyKind::dtod}));
  EXPECT_EQ(m.src_kind_at(0), MemoryKind::device);
  EXPECT_EQ(m.dst_kind_at(0), MemoryKind::unknown);
  EXPECT_EQ(m.src_kind_at(1), MemoryKind::unknown);
  EXPECT_EQ(t.meta().stat("import.converted.copy_kind_from_call"), 2u);
  // A counter whose arg is named "kind" keeps it as a series.
  const Trace c = import_text(R"J({"traceEvents": [
    {"ph": "C", "name": "x", "pid": 1, "tid": 1, "ts": 1, "args": {"kind": 3, "v": 2}}]})J");
  EXPECT_NE(c.find_counter_series("x.kind", kNoDevice), kNoSeries);
  EXPECT_NE(c.find_counter_series("x.v", kNoDevice), kNoSeries);
}

// hipExtModuleLaunchKernel (and hipHccModuleLaunchKernel, its old name)
// takes the global work size, in work-items; every other launch call takes
// blocks. The kernels it launched get their grid in blocks (ceil per
// dimension), counted; hipLaunchKernel's and hipModuleLaunchKernel's grids,
// and a kernel without a block, are kept as recorded.
TEST(ChromeJson, HipGlobalWorkSizeGridsBecomeBlocks) {
  const Trace t = import_text(R"J({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": 3, "dur": 1, "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipModuleLaunchKernel", "pid": 1, "tid": 1, "ts": 5, "dur": 1, "args": {"correlation": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipHccModuleLaunchKernel", "pid": 1, "tid": 1, "ts": 7, "dur": 1, "args": {"correlation": 4}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 1, "tid": 1, "ts": 8, "dur": 1, "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "ext", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 1, "grid": [65536, 3, 1], "block": [256, 2, 1]}},
    {"ph": "X", "cat": "kernel", "name": "launch", "pid": 0, "tid": 7, "ts": 12, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 2, "grid": [65536, 1, 1], "block": [256, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "module", "pid": 0, "tid": 7, "ts": 14, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 3, "grid": [300, 1, 1], "block": [256, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "hcc", "pid": 0, "tid": 7, "ts": 16, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 4, "grid": [1000, 1, 1], "block": [256, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "no block", "pid": 0, "tid": 7, "ts": 18, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 5, "grid": [1000, 1, 1]}}
  ]})J");
  const auto& k = t.kernels();
  ASSERT_EQ(k.size(), 5u);
  EXPECT_EQ(k.grid_x[0], 256u);  // 65,536 work-items in blocks of 256
  EXPECT_EQ(k.grid_y[0], 2u);    // 3 in blocks of 2: the last one partial
  EXPECT_EQ(k.grid_z[0], 1u);
  EXPECT_EQ(k.grid_x[1], 65536u);
  EXPECT_EQ(k.grid_x[2], 300u);
  EXPECT_EQ(k.grid_x[3], 4u);
  EXPECT_EQ(k.grid_x[4], 1000u);
  EXPECT_EQ(t.meta().stat("import.converted.grid_from_work_items"), 2u);
  // A trace without such a call has no such count.
  EXPECT_EQ(import_text(kKineto).meta().stat("import.converted.grid_from_work_items"), 0u);
}

TEST(ChromeJson, Kineto2021Schema) {
  const Trace t = import_text(R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "ProfilerStep#3", "pid": 5, "tid": "5", "ts": 10, "dur": 100, "args": {"external id": 1}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": "5", "ts": 20, "dur": 4, "args": {"cbid": 211, "correlation": 33, "external id": 2}},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 30, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 33, "grid": [1, 1, 1], "block": [32, 1, 1]}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": "stream 7", "ts": 40, "dur": 5, "args": {"bytes": 12}},
    {"ph": "f", "id": 33, "pid": 0, "tid": "stream 7", "ts": 30, "cat": "async", "name": "launch", "bp": "e"}
  ]})J");
  EXPECT_EQ(t.meta().producer, "PyTorch Profiler (Kineto), 2021 schema");
  ASSERT_EQ(t.kernels().size(), 1u);
  EXPECT_NE(t.kernels().api[0], kNoRow);
  ASSERT_EQ(t.memcpys().size(), 1u);
  // No args.device/stream: pid is the device, "stream 7" the stream.
  const Track& mt = t.tracks()[t.memcpys().track_at(0)];
  EXPECT_EQ(mt.device, 0u);
  EXPECT_EQ(mt.stream, 7u);
  EXPECT_EQ(t.memcpys().kind_at(0), CopyKind::htod);
  EXPECT_EQ(t.memcpys().src_kind_at(0), MemoryKind::pageable);
  const RowIndex step = find_range(t, "ProfilerStep#3");
  ASSERT_NE(step, kNoRow);
  EXPECT_EQ(t.str(t.ranges().domain[step]), "cpu_op");
  EXPECT_EQ(t.ranges().correlation_at(step), 1u);
  EXPECT_EQ(t.tracks()[t.ranges().track_at(step)].tid, 5u);  // numeric string tid
  EXPECT_EQ(t.meta().stat("import.skipped.flow"), 1u);
}

// Current Kineto: each [memory] event is a memory event with its address,
// and "Total Allocated" / "Total Reserved" become samples of the device's
// series; CPU allocations go to the host's series (no device).
TEST(ChromeJson, KinetoMemoryEventsWithTotals) {
  const Trace t = import_text(
      R"J({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "H100", "totalGlobalMem": 85000000000},
                                                {"id": 1, "name": "H100", "totalGlobalMem": 85000000000}],
  "traceEvents": [
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": 10.5,
     "args": {"Total Reserved": 4194304, "Total Allocated": 1536, "Bytes": 512, "Addr": 140000000000000, "Device Id": 0, "Device Type": 1, "Ev Idx": 3}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": 11,
     "args": {"Total Reserved": 0, "Total Allocated": 64, "Bytes": 64, "Addr": 77, "Device Id": -1, "Device Type": 0}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": 12,
     "args": {"Total Reserved": 6291456, "Total Allocated": 1024, "Bytes": -512, "Addr": 140000000000000, "Device Id": 0, "Device Type": 1}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": 13, "args": {"Device Type": 13, "Device Id": 0, "Bytes": 8}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": 14, "args": {"Device Type": 1, "Device Id": 0}},
    {"ph": "i", "s": "t", "name": "[memory] ", "pid": 9, "tid": 9, "ts": 15},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": 10, "dur": 5, "args": {"device": 1, "stream": 7}}
  ]})J");
  const std::uint32_t alloc = t.find_counter_series(series_name::kMemoryAllocated, 0);
  const std::uint32_t reserved = t.find_counter_series(series_name::kMemoryReserved, 0);
  const std::uint32_t host = t.find_counter_series(series_name::kMemoryAllocated, kNoDevice);
  ASSERT_NE(alloc, kNoSeries);
  ASSERT_NE(reserved, kNoSeries);
  ASSERT_NE(host, kNoSeries);
  EXPECT_EQ(t.find_counter_series(series_name::kMemoryReserved, kNoDevice), kNoSeries);  // the host has no reserve
  EXPECT_EQ(t.counter_series()[alloc].unit, "B");
  const MemoryEventTable& m = t.memory_events();
  const RowRange gpu = t.rows_of(TableId::memory_events, alloc);
  ASSERT_EQ(gpu.size(), 2u);
  EXPECT_EQ(m.time[gpu.begin], 10500);
  EXPECT_EQ(m.bytes[gpu.begin], 512);
  EXPECT_EQ(m.bytes[gpu.begin + 1], -512);
  EXPECT_EQ(m.address_at(gpu.begin), 140000000000000u);
  EXPECT_EQ(t.rows_of(TableId::memory_events, host).size(), 1u);
  const RowRange a = t.rows_of(TableId::counters, alloc), r = t.rows_of(TableId::counters, reserved);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(t.counters().value[a.begin], 1536);
  EXPECT_EQ(t.counters().value[a.begin + 1], 1024);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(t.counters().value[r.begin + 1], 6291456);
  EXPECT_EQ(t.meta().stat("import.skipped.memory_on_other_device"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.memory_without_bytes"), 1u);
  // Device 0's memory beside device 1's kernels: kept, and said to be no GPU's figures.
  EXPECT_EQ(t.meta().stat("import.unattributed.memory_events"), 2u);
  // Not marks any more; a name that only looks alike still is one.
  EXPECT_EQ(find_range(t, "[memory]"), kNoRow);
  EXPECT_NE(find_range(t, "[memory] "), kNoRow);
  // The device the memory is on is described, as the devices kernels run on are.
  ASSERT_NE(t.device(0), nullptr);
  EXPECT_EQ(t.device(0)->memory_bytes, 85000000000u);
  EXPECT_NE(t.device(1), nullptr);
}

// The 2021 schema has only the changes: the "since start" series adds them
// up in time order, from 0 before the first event.
TEST(ChromeJson, Kineto2021MemoryEventsAddUpFromTheStart) {
  const Trace t = import_text(R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 30, "args": {"Device Type": 1, "Device Id": 0, "Bytes": -100}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 10, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 300}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 20, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 50}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 20, "args": {"Device Type": 0, "Device Id": -1, "Bytes": 4}}
  ]})J");
  EXPECT_EQ(t.find_counter_series(series_name::kMemoryAllocated, 0), kNoSeries);
  const std::uint32_t s = t.find_counter_series(series_name::kMemoryAllocatedSinceStart, 0);
  ASSERT_NE(s, kNoSeries);
  const RowRange r = t.rows_of(TableId::counters, s);
  ASSERT_EQ(r.size(), 3u);
  std::vector<double> values(t.counters().value.begin() + r.begin, t.counters().value.begin() + r.end);
  EXPECT_EQ(values, (std::vector<double>{300, 350, 250}));
  EXPECT_EQ(t.rows_of(TableId::memory_events, s).size(), 3u);
  EXPECT_NE(t.find_counter_series(series_name::kMemoryAllocatedSinceStart, kNoDevice), kNoSeries);
}

// [SECTION] Generic Chrome JSON ------------------------------------------------------------------

TEST(ChromeJson, GenericObjectForm) {
  const Trace t = import_text(R"J({"traceEvents": [
    {"name": "outer", "cat": "app", "ph": "B", "pid": 1, "tid": 2, "ts": 100},
    {"name": "inner", "cat": "app", "ph": "B", "pid": 1, "tid": 2, "ts": 110},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 120},
    {"name": "other thread", "ph": "B", "pid": 1, "tid": 3, "ts": 105},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 150},
    {"name": "tick", "ph": "i", "pid": 1, "tid": 2, "ts": 130, "s": "t"},
    {"name": "global", "ph": "I", "pid": 1, "tid": 2, "ts": 131, "s": "g"},
    {"name": "ctr", "ph": "C", "pid": 1, "ts": 100, "args": {"cats": 1, "dogs": 2.5}},
    {"name": "ctr", "ph": "C", "pid": 1, "ts": 200, "args": {"cats": 3, "dogs": 0.5, "label": "x"}},
    {"name": "ctr", "ph": "C", "pid": 1, "ts": 300, "id": 2, "args": {"cats": 9}},
    {"name": "work", "ph": "X", "pid": 1, "tid": 2, "ts": 160, "dur": 10},
    {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "my app"}},
    {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": {"name": "worker"}},
    {"name": "unknown_meta", "ph": "M", "pid": 1, "args": {"x": 1}},
    {"ph": "E", "pid": 1, "tid": 9, "ts": 170},
    {"name": "async", "ph": "b", "id": 1, "pid": 1, "tid": 2, "ts": 100},
    {"name": "no phase", "pid": 1, "tid": 2, "ts": 100},
    {"name": "no ts", "ph": "X", "pid": 1, "tid": 2, "dur": 1},
    {"name": "bad ts", "ph": "X", "pid": 1, "tid": 2, "ts": "abc", "dur": 1},
    {"name": "no dur", "ph": "X", "pid": 1, "tid": 2, "ts": 1},
    {"name": "negative", "ph": "X", "pid": 1, "tid": 2, "ts": 1, "dur": -1},
    {"name": "string ts", "ph": "X", "pid": 1, "tid": 2, "ts": "12.5", "dur": "1"},
    {"name": "flow", "ph": "s", "id": 1, "pid": 1, "tid": 2, "ts": 1}
  ], "displayTimeUnit": "ns"})J");
  EXPECT_EQ(t.meta().producer, "Chrome trace JSON");
  EXPECT_EQ(t.meta().property("chrome.form"), "object");
  EXPECT_EQ(t.kernels().size(), 0u);

  // B/E: nested on one thread; the unclosed B on thread 3 and the lone E are counted.
  const RowIndex outer = find_range(t, "outer"), inner = find_range(t, "inner");
  ASSERT_NE(outer, kNoRow);
  ASSERT_NE(inner, kNoRow);
  EXPECT_EQ(t.ranges().start[outer], 100000);
  EXPECT_EQ(t.ranges().end[outer], 150000);
  EXPECT_EQ(t.ranges().start[inner], 110000);
  EXPECT_EQ(t.ranges().end[inner], 120000);
  EXPECT_EQ(t.ranges().depth[outer], 0u);
  EXPECT_EQ(t.ranges().depth[inner], 1u);
  EXPECT_EQ(t.str(t.ranges().domain[outer]), "app");
  EXPECT_EQ(find_range(t, "other thread"), kNoRow);
  EXPECT_EQ(t.meta().stat("import.skipped.unclosed_begin"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.unmatched_end"), 1u);

  // Instants are marks.
  const RowIndex tick = find_range(t, "tick");
  ASSERT_NE(tick, kNoRow);
  EXPECT_EQ(t.ranges().kind_at(tick), RangeKind::mark);
  EXPECT_NE(find_range(t, "global"), kNoRow);

  // Counters: one series per numeric arg (the string arg is not a value).
  ASSERT_EQ(t.counter_series().size(), 3u);
  std::vector<std::string> names;
  for (const auto& s : t.counter_series()) names.push_back(s.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"ctr 2.cats", "ctr.cats", "ctr.dogs"}));
  EXPECT_EQ(t.counters().size(), 5u);

  // Metadata names.
  ASSERT_EQ(t.processes().size(), 1u);
  EXPECT_EQ(t.processes()[0].name, "my app");
  bool named = false;
  for (const Track& tr : t.tracks()) named |= tr.kind == TrackKind::cpu && tr.tid == 2 && tr.name == "worker";
  EXPECT_TRUE(named);

  // Skips by reason.
  EXPECT_EQ(t.meta().stat("import.skipped.metadata"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.phase_b"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.missing_ph"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.missing_ts"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.invalid_ts"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.missing_dur"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.negative_dur"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.flow"), 1u);
  // Numeric strings are accepted for ts/dur.
  const RowIndex s = find_range(t, "string ts");
  ASSERT_NE(s, kNoRow);
  EXPECT_EQ(t.ranges().start[s], 12500);
  EXPECT_EQ(t.ranges().end[s], 13500);
  EXPECT_EQ(t.meta().start_time_ns, 0);  // not an epoch: unknown
}

TEST(ChromeJson, ArrayForm) {
  const std::string events =
      R"J([{"name": "a", "ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
          {"name": "b", "ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 1})J";
  const Trace t = import_text(events + "]");
  EXPECT_EQ(t.ranges().size(), 2u);
  EXPECT_EQ(t.meta().property("chrome.form"), "array");
  EXPECT_EQ(t.meta().stat("import.unterminated_array"), 0u);
  // The format allows the closing ']' to be missing (a tracer killed mid-way).
  for (const std::string& text : {events, events + ",", events + ",\n  "}) {
    const Trace u = import_text(text);
    EXPECT_EQ(u.ranges().size(), 2u);
    EXPECT_EQ(u.meta().stat("import.unterminated_array"), 1u);
  }
  // An empty array is an empty trace.
  EXPECT_EQ(import_text("[]").ranges().size(), 0u);
  EXPECT_EQ(import_text(R"J({"traceEvents": []})J").ranges().size(), 0u);
}

TEST(ChromeJson, StringPidsGetStableIdsAndNames) {
  const Trace t = import_text(R"J({"traceEvents": [
    {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 9},
    {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 10},
    {"ph": "X", "name": "again", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 2, "dur": 1}
  ]})J");
  ASSERT_EQ(t.ranges().size(), 3u);
  const RowIndex span = find_range(t, "PyTorch Profiler (0)"), again = find_range(t, "again");
  EXPECT_EQ(t.ranges().track_at(span), t.ranges().track_at(again));
  const Track& tr = t.tracks()[t.ranges().track_at(span)];
  EXPECT_EQ(tr.name, "PyTorch Profiler");
  bool spans = false;
  for (const Process& p : t.processes()) spans |= p.name == "Spans" && p.rank == -1;
  EXPECT_TRUE(spans);
}

TEST(ChromeJson, EscapesUnicodeAndKeyOrder) {
  // args before ph, escaped strings, a BOM, keys in any order, unknown keys of every type.
  const Trace t = import_text(
      "\xEF\xBB\xBF"
      R"J({"traceEvents": [
    {"args": {"correlation": 5, "device": 1, "stream": 3}, "dur": 2, "ts": 1, "tid": 3, "pid": 1, "name": "k\u00e9rnel \"q\" \ud83d\ude00", "cat": "kernel", "ph": "X",
     "extra": [true, false, null, {"a": [1, -2.5e-3]}], "n\u0061me2": "x"}
  ], "other": {"nested": [1, 2, {"deep": "value"}]}, "flag": true})J");
  ASSERT_EQ(t.kernels().size(), 1u);
  EXPECT_EQ(t.str(t.kernels().name[0]), "k\xC3\xA9rnel \"q\" \xF0\x9F\x98\x80");
  EXPECT_EQ(t.tracks()[t.kernels().track_at(0)].device, 1u);
  EXPECT_EQ(t.meta().property("chrome.meta.flag"), "true");
}

// [SECTION] Exact time arithmetic ---------------------------------------------------------------

TEST(ChromeJsonTime, KnownValues) {
  std::int64_t ns = 0;
  bool sub = false;
  ASSERT_TRUE(detail::parse_us_to_ns("1712195495505583.123", &ns, &sub));
  EXPECT_EQ(ns, 1712195495505583123LL);
  EXPECT_TRUE(sub);
  ASSERT_TRUE(detail::parse_us_to_ns("1712195495505583", &ns, &sub));
  EXPECT_EQ(ns, 1712195495505583000LL);
  EXPECT_FALSE(sub);
  ASSERT_TRUE(detail::parse_us_to_ns("68.0", &ns, &sub));
  EXPECT_EQ(ns, 68000);
  EXPECT_FALSE(sub);  // a zero fraction is a whole number of µs
  ASSERT_TRUE(detail::parse_us_to_ns("1.5e3", &ns, &sub));
  EXPECT_EQ(ns, 1500000);
  ASSERT_TRUE(detail::parse_us_to_ns("-0.25", &ns, &sub));
  EXPECT_EQ(ns, -250);
  ASSERT_TRUE(detail::parse_us_to_ns("0.0005", &ns, &sub));  // 0.5 ns rounds away from zero
  EXPECT_EQ(ns, 1);
  EXPECT_TRUE(sub);
  ASSERT_TRUE(detail::parse_us_to_ns("0.0004999", &ns, &sub));
  EXPECT_EQ(ns, 0);
  ASSERT_TRUE(detail::parse_us_to_ns("9223372036854775.807", &ns, &sub));
  EXPECT_EQ(ns, 9223372036854775807LL);
  ASSERT_TRUE(detail::parse_us_to_ns("-9223372036854775.808", &ns, &sub));
  EXPECT_EQ(ns, std::numeric_limits<std::int64_t>::min());
  ASSERT_TRUE(detail::parse_us_to_ns("0e999999999", &ns, &sub));
  EXPECT_EQ(ns, 0);
  for (const char* bad : {"9223372036854775.808", "1e400", "1e17", "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1x",
                          "1.2.3", "0x10", " 1", "1 ", "NaN", "Infinity"})
    EXPECT_FALSE(detail::parse_us_to_ns(bad, &ns, &sub)) << bad;
}

// Brute-force reference: shift the decimal point by string manipulation, then
// round on the first dropped digit. Independent of the parser's digit weights.
bool reference_ns(const std::string& int_part, const std::string& frac, int exp10, bool negative, std::int64_t* out) {
  std::string digits = int_part + frac;
  long point = static_cast<long>(int_part.size()) + exp10 + 3;  // position of the ns point in `digits`
  while (point > static_cast<long>(digits.size())) digits += '0';
  std::string whole = point <= 0 ? "0" : digits.substr(0, static_cast<std::size_t>(point));
  const char next = point < 0 ? '0' : (static_cast<std::size_t>(point) < digits.size() ? digits[point] : '0');
  // strip leading zeros
  std::size_t nz = whole.find_first_not_of('0');
  whole = nz == std::string::npos ? "0" : whole.substr(nz);
  if (whole.size() > 19) return false;
  unsigned long long v = std::stoull(whole);
  if (whole.size() == 19 && whole > "9223372036854775808") return false;
  if (next >= '5') ++v;
  if (v > 9223372036854775808ull || (v == 9223372036854775808ull && !negative)) return false;
  *out = v == 9223372036854775808ull ? std::numeric_limits<std::int64_t>::min()
                                     : (negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v));
  return true;
}

TEST(ChromeJsonTime, MatchesBruteForceReference) {
  std::mt19937_64 rng(12345);
  auto digits = [&](int n, bool leading_nonzero) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('0' + (i == 0 && leading_nonzero ? 1 + rng() % 9 : rng() % 10));
    return s;
  };
  int checked = 0;
  for (int iter = 0; iter < 200000; ++iter) {
    const int int_len = 1 + static_cast<int>(rng() % 17);
    std::string int_part = rng() % 8 == 0 ? "0" : digits(int_len, true);
    const std::string frac = rng() % 3 == 0 ? "" : digits(1 + static_cast<int>(rng() % 9), false);
    const int exp10 = rng() % 4 == 0 ? static_cast<int>(rng() % 13) - 6 : 0;
    const bool negative = rng() % 5 == 0;
    std::string text;
    if (negative) text.push_back('-');
    text.append(int_part);
    if (!frac.empty()) {
      text.push_back('.');
      text.append(frac);
    }
    if (exp10 != 0 || rng() % 10 == 0) {
      text.push_back(rng() % 2 ? 'e' : 'E');
      text.append(std::to_string(exp10));
    }
    std::int64_t expected = 0, got = 0;
    bool sub = false;
    const bool ref_ok = reference_ns(int_part, frac, exp10, negative, &expected);
    const bool ok = detail::parse_us_to_ns(text, &got, &sub);
    ASSERT_EQ(ok, ref_ok) << text;
    if (ok) {
      ASSERT_EQ(got, expected) << text;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100000);
}

TEST(ChromeJsonText, IntegersAndEscapes) {
  std::int64_t v = 0;
  EXPECT_TRUE(detail::parse_json_int("9223372036854775807", &v));
  EXPECT_EQ(v, std::numeric_limits<std::int64_t>::max());
  EXPECT_TRUE(detail::parse_json_int("-9223372036854775808", &v));
  EXPECT_EQ(v, std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(detail::parse_json_int("9223372036854775808", &v));
  EXPECT_FALSE(detail::parse_json_int("1.0", &v));
  EXPECT_FALSE(detail::parse_json_int("-", &v));
  EXPECT_FALSE(detail::parse_json_int("007", &v));
  std::string out;
  EXPECT_TRUE(detail::json_unescape(R"J(a\"b\\c\/d\n\u00e9\ud83d\ude00)J", &out));
  EXPECT_EQ(out, "a\"b\\c/d\n\xC3\xA9\xF0\x9F\x98\x80");
  for (const char* bad : {R"J(\x)J", R"J(\u12)J", R"J(\ud83d)J", R"J(\ude00)J", R"J(\ud83dx)J", "\\"}) {
    out.clear();
    EXPECT_FALSE(detail::json_unescape(bad, &out)) << bad;
  }
}

// [SECTION] Buffer boundaries ------------------------------------------------------------------------

// The same trace through tiny buffers (every item split across buffers at
// every possible place) gives the same tables.
TEST(ChromeJson, TinyBuffersGiveTheSameTrace) {
  const Trace ref = import_text(kKineto);
  for (std::size_t bytes : {16u, 17u, 23u, 31u, 64u, 65u, 100u, 257u, 1000u}) {
    const Trace t = import_text(kKineto, bytes);
    EXPECT_EQ(t.kernels().start, ref.kernels().start) << bytes;
    EXPECT_EQ(t.kernels().end, ref.kernels().end) << bytes;
    EXPECT_EQ(t.ranges().start, ref.ranges().start) << bytes;
    EXPECT_EQ(t.ranges().name.size(), ref.ranges().name.size()) << bytes;
    EXPECT_EQ(t.api_calls().correlation, ref.api_calls().correlation) << bytes;
    EXPECT_EQ(t.meta(), ref.meta()) << bytes;
    EXPECT_EQ(t.devices(), ref.devices()) << bytes;
    EXPECT_EQ(t.tracks(), ref.tracks()) << bytes;
  }
}

// PyTorch's autograd link: a forward op's "Sequence number" (its "Fwd thread
// id" 0) and its backward op's (naming the forward thread). -1 is PyTorch's
// "none"; a value out of range is counted and the op kept without it.
TEST(ChromeJson, SequenceNumbersAndForwardThreadsAreKept) {
  const std::string json = R"json({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":10,"dur":5,
     "args":{"Sequence number":0,"Fwd thread id":0}},
    {"ph":"X","cat":"cpu_op","name":"AddmmBackward0","pid":1,"tid":2,"ts":20,"dur":5,
     "args":{"Fwd thread id":1,"Sequence number":18456}},
    {"ph":"X","cat":"cpu_op","name":"aten::none","pid":1,"tid":1,"ts":30,"dur":5,"args":{"Sequence number":-1}},
    {"ph":"X","cat":"cpu_op","name":"aten::bad","pid":1,"tid":1,"ts":40,"dur":5,
     "args":{"Sequence number":3,"Fwd thread id":-2}},
    {"ph":"X","cat":"cpu_op","name":"aten::plain","pid":1,"tid":1,"ts":50,"dur":5,"args":{}}]})json";
  for (const int threads : {1, 2}) {
    ChromeImportOptions options;
    options.buffer_bytes = threads == 2 ? 64 : 0;
    options.parse_threads = threads;
    const Trace t = import_chrome_json(write_file("seq.json", json), options);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    ASSERT_EQ(t.ranges().size(), 5u);
    EXPECT_EQ(t.meta().stat("import.skipped.invalid_sequence"), 1u);
    const auto link = testing::autograd_links(t);
    EXPECT_EQ(link.at("aten::addmm"), (testing::AutogradLink{0, 0}));
    EXPECT_EQ(link.at("AddmmBackward0"), (testing::AutogradLink{18456, 1}));
    EXPECT_EQ(link.at("aten::none"), (testing::AutogradLink{-1, 0}));
    EXPECT_EQ(link.at("aten::bad"), (testing::AutogradLink{-1, 0}));
    EXPECT_EQ(link.at("aten::plain"), (testing::AutogradLink{-1, 0}));
  }
}

// Without any sequence number, the columns stay empty (no bytes).
TEST(ChromeJson, NoSequenceNumbersNoColumns) {
  const Trace t = import_chrome_json(write_file("noseq.json", R"json({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":10,"dur":5,"args":{}}]})json"));
  EXPECT_TRUE(t.ranges().sequence.empty());
  EXPECT_TRUE(t.ranges().fwd_thread.empty());
}

// Kineto (PyTorch >= 2.1) describes a collective in record_param_comms's args
// (and again on its NCCL kernel): the op keeps it as one compact JSON object
// of the keys the analysis reads, counted; other ops keep none.
TEST(ChromeJson, KinetoCollectiveArgumentsAreKept) {
  const std::string json = R"json({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":10,"dur":5,
     "args":{"External id":3,"Collective name":"allreduce","dtype":"Float","In msg nelems":1024,
             "Out msg nelems":1024,"In split size":"[]","Group size":8,"Process Group Name":"0",
             "Process Group Description":"default_pg","Input Dims":[[1024]],"Input type":["float"]}},
    {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":20,"dur":5,"args":{"dtype":"Float"}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid":0,"tid":7,"ts":12,"dur":3,"args":{"device":0,"stream":7,"correlation":9,
     "Collective name":"allreduce","In msg nelems":1024,"Out msg nelems":1024,"dtype":"Float"}}]})json";
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{64}}) {
    for (const int threads : {1, 2}) {
      ChromeImportOptions options;
      options.buffer_bytes = bytes;
      options.parse_threads = threads;
      const Trace t = import_chrome_json(write_file("coll.json", json), options);
      SCOPED_TRACE(std::to_string(threads) + " threads, buffer " + std::to_string(bytes));
      ASSERT_EQ(t.ranges().size(), 2u);
      EXPECT_EQ(t.meta().stat("import.collective_args"), 1u);
      for (RowIndex r = 0; r < t.ranges().size(); ++r) {
        const std::string_view name = t.str(t.ranges().name[r]);
        const std::string_view coll = t.str(t.ranges().collective_at(r));
        if (name == "record_param_comms")
          EXPECT_EQ(coll, R"({"Collective name":"allreduce","In msg nelems":1024,"Out msg nelems":1024,)"
                          R"("dtype":"Float","Group size":8,"Process Group Name":"0"})");
        else
          EXPECT_EQ(t.ranges().collective_at(r), 0u) << name;
      }
    }
  }
}

// A real trace with them: the V100 training run's 45 record_param_comms ops
// (25 all-reduces, 10 broadcasts, 10 waits), as an independent reading of
// the JSON counts them.
TEST(ChromeJson, CollectiveArgumentsOfARealTrace) {
  const Trace t = import_chrome_json(testing::real_trace("hta-ns-resolution-v100.json.gz"));
  EXPECT_EQ(t.meta().stat("import.collective_args"), 45u);
  std::map<std::string, std::uint64_t> by_name;
  for (RowIndex r = 0; r < t.ranges().size(); ++r) {
    if (!t.ranges().collective_at(r)) continue;
    EXPECT_EQ(t.str(t.ranges().name[r]), "record_param_comms");
    const std::string_view text = t.str(t.ranges().collective_at(r));
    ASSERT_TRUE(text.starts_with(R"({"Collective name":")")) << text;
    const std::size_t end = text.find('"', 20);
    ++by_name[std::string(text.substr(20, end - 20))];
    EXPECT_NE(text.find(R"("dtype":)"), std::string_view::npos) << text;
  }
  EXPECT_EQ(by_name, (std::map<std::string, std::uint64_t>{{"allreduce", 25}, {"broadcast", 10}, {"wait", 10}}));
}

TEST(ChromeJson, TinyBuffersOnARealTrace) {
  const std::string path = testing::real_trace("hta-event-sync-multistream.json.gz");
  const Trace ref = import_chrome_json(path);
  for (std::size_t bytes : {16u, 333u, 4096u}) {
    ChromeImportOptions options;
    options.buffer_bytes = bytes;
    const Trace t = import_chrome_json(path, options);
    EXPECT_EQ(t.kernels().start, ref.kernels().start);
    EXPECT_EQ(t.syncs().event, ref.syncs().event);
    EXPECT_EQ(t.ranges().size(), ref.ranges().size());
    EXPECT_EQ(t.meta(), ref.meta());
  }
}

TEST(ChromeJson, GzipAndConcatenatedMembers) {
  const std::string text = kKineto;
  const Trace plain = import_text(text);
  const Trace gz = import_chrome_json(write_file("t.json.gz", gzip(text)));
  EXPECT_EQ(gz.kernels().start, plain.kernels().start);
  EXPECT_EQ(gz.meta().property("chrome.gzip"), "1");
  // Two gzip members make one stream (as `cat a.gz b.gz` does).
  const std::string half1 = text.substr(0, text.size() / 2), half2 = text.substr(text.size() / 2);
  const Trace two = import_chrome_json(write_file("two.json.gz", gzip(half1) + gzip(half2)));
  EXPECT_EQ(two.kernels().start, plain.kernels().start);
  EXPECT_EQ(two.ranges().size(), plain.ranges().size());
}

TEST(ChromeJson, ProgressAndCancel) {
  std::uint64_t last_done = 0, total = 0;
  int calls = 0;
  ChromeImportOptions options;
  options.buffer_bytes = 64;
  options.progress.on_progress = [&](std::uint64_t done, std::uint64_t t) {
    EXPECT_GE(done, last_done);
    last_done = done;
    total = t;
    ++calls;
  };
  const std::string path = write_file("p.json", kKineto);
  import_chrome_json(path, options);
  EXPECT_GT(calls, 1);
  EXPECT_EQ(total, std::filesystem::file_size(path));
  EXPECT_EQ(last_done, total);

  std::atomic<bool> cancel{true};
  options.progress.cancel = &cancel;
  try {
    import_chrome_json(path, options);
    ADD_FAILURE() << "not cancelled";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos);
  }
}

// [SECTION] Malformed input ---------------------------------------------------------------------------

TEST(ChromeJsonMalformed, CutAnywhereKeepsTheCompleteEvents) {
  // Every proper prefix of an object-form trace (a file cut short) either
  // loads the events complete before the cut and says where the text
  // stopped, or — when no event is complete — is an error with an offset
  // inside the prefix; the same whatever the buffer size.
  const std::string text =
      R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k\"x", "pid": 0, "tid": 7, "ts": 1.5, "dur": 2, "args": {"grid": [1, 2, 3], "device": 0, "stream": 7}}, {"ph": "i", "name": "m", "pid": 1, "tid": 1, "ts": 3}], "baseTimeNanoseconds": 5})J";
  const std::size_t kernel_end = text.find("}}, ") + 2, mark_end = text.find("}], ") + 1;
  const Trace whole = import_text(text);
  EXPECT_FALSE(whole.meta().damage.any());
  for (std::size_t n = 0; n < text.size(); ++n) {
    for (std::size_t bytes : {0u, 16u, 29u}) {
      SCOPED_TRACE("cut at " + std::to_string(n) + ", buffers of " + std::to_string(bytes));
      if (n < kernel_end) {
        const InputError e = import_error(text.substr(0, n), bytes);
        EXPECT_LE(e.offset(), n) << e.what();
        EXPECT_FALSE(e.reason().empty());
        continue;
      }
      const Trace t = import_text(text.substr(0, n), bytes);
      EXPECT_EQ(t.kernels().size(), 1u);
      EXPECT_EQ(t.ranges().size(), n >= mark_end ? 1u : 0u);
      const FileDamage& d = t.meta().damage;
      EXPECT_TRUE(d.truncated);
      ASSERT_EQ(d.problems.size(), 1u);
      EXPECT_NE(d.problems[0].find("ends early, at byte " + std::to_string(n)), std::string::npos) << d.problems[0];
      EXPECT_EQ(d.file_bytes, n);
      EXPECT_LE(d.intact_bytes, n);
      // Cut after the events array, every event is there; before, how many followed is unknown.
      EXPECT_EQ(d.tables[0].count, n > mark_end ? LossCount::exact : LossCount::at_least) << d.problems[0];
      // A number cut at the end of the text is not taken for the whole number.
      EXPECT_EQ(t.kernels().start[0], 1500);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(ChromeJsonMalformed, ClearErrorsWithOffsets) {
  struct Case {
    std::string json;
    std::string reason_part;
    std::uint64_t offset;
  };
  const std::vector<Case> cases = {
      {"", "empty file", 0},
      {"   \n ", "no JSON value", 5},
      {R"J("just a string")J", "expected '{' or '['", 0},
      {R"J({"foo": 1})J", "no \"traceEvents\" array", InputError::kNoOffset},
      {R"J({"traceEvents": 5})J", "\"traceEvents\" is not an array", 16},
      {R"J({"traceEvents": [5]})J", "not an object", 17},
      {R"J({"traceEvents": [{"ph": "X", "ts": 01}]})J", "invalid number", 36},
      {R"J({"traceEvents": [{"ph": "X", "ts": 1.2.3}]})J", "invalid number", 38},
      {R"J({"traceEvents": [{"ph": "X", "ts": -}]})J", "invalid number", 36},
      {R"J({"traceEvents": [{"ph": "X", "ts": 1e}]})J", "exponent", 37},
      {R"J({"traceEvents": [{"ph": tru}]})J", "invalid literal", 24},
      {R"J({"traceEvents": [{"ph" "X"}]})J", "expected ':'", 23},
      {R"J({"traceEvents": [{"ph": "X",}]})J", "expected a key", 28},
      {R"J({"traceEvents": [{"ph": "X"} {"ph": "X"}]})J", "expected ',' or ']'", 29},
      {R"J({"traceEvents": [{"ph": "X"}],})J", "expected a key", 30},
      {R"J({"traceEvents": [{"ph": "X"]}]})J", "mismatched ']'", 27},
      {R"J({"traceEvents": [{"ph": "\q"}]})J", "invalid escape", 25},
      {"{\"traceEvents\": [{\"ph\": \"a\x01\"}]}", "control character", 26},
      {R"J({"traceEvents": []} extra)J", "after the end", 20},
      {R"J({"traceEvents": [], "x": [1, 2}})J", "mismatched '}'", 30},
      {R"J({"traceEvents": [], "x": 1.})J", "digits must follow", 27},
      {"{\"traceEvents\": [{\"name\": \"\xC3\x28\"}]}", "invalid UTF-8", 27},
      {"{\"traceEvents\": [{\"name\": \"ok\xED\xA0\x80\"}]}", "invalid UTF-8", 29},
      {"{\"traceEvents\": [], \"k\": \"\xFF\"}", "invalid UTF-8", 26},
  };
  for (const Case& c : cases) {
    for (std::size_t bytes : {0u, 16u}) {
      const InputError e = import_error(c.json, bytes);
      EXPECT_NE(e.reason().find(c.reason_part), std::string::npos) << c.json << " -> " << e.what();
      EXPECT_EQ(e.offset(), c.offset) << c.json << " -> " << e.what();
    }
  }
}

// Which error a file gets depends on its text alone: the first in file
// order, wherever the read buffers happen to end (pooled buffers grown for a
// large item are reused, so their size varies with the consumer's timing).
// An invalid byte comes before a structural error after it, whether in a
// top-level key (an item the parser is not handed) or earlier in the item
// that holds the structural error.
TEST(ChromeJsonMalformed, FirstErrorWhateverTheBufferSize) {
  struct Case {
    std::string json;
    std::string reason_part;
    std::uint64_t offset;
  };
  const std::vector<Case> cases = {
      {"{\"traceEvents\": [{\"ph\": \"X\"}], \"k\xFF\": [1, 2}}", "invalid UTF-8", 33},
      {"{\"k\xFF\": [1, 2}, \"traceEvents\": []}", "invalid UTF-8", 3},
      {"{\"a\": 1, \"b\xC3\x28\": 2, \"c\": {]}", "invalid UTF-8", 11},
      {"{\"traceEvents\": [{\"ph\": \"X\", \"n\xFF\": 1]}", "invalid UTF-8", 31},
  };
  for (const Case& c : cases) {
    for (std::size_t bytes = 16; bytes <= 80; ++bytes) {
      const InputError e = import_error(c.json, bytes);
      EXPECT_NE(e.reason().find(c.reason_part), std::string::npos) << bytes << ": " << e.what();
      EXPECT_EQ(e.offset(), c.offset) << bytes << ": " << e.what();
    }
  }
}

TEST(ChromeJsonMalformed, DeepNesting) {
  std::string deep = R"J({"traceEvents": [{"ph": "X", "args": )J";
  for (int i = 0; i < 10000; ++i) deep += "[";
  const InputError e = import_error(deep);
  EXPECT_NE(e.reason().find("nested deeper"), std::string::npos) << e.what();
  // Deep but within the limit is fine.
  std::string ok =
      R"J({"traceEvents": [{"ph": "X", "name": "n", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"a": )J";
  for (int i = 0; i < 200; ++i) ok += "[";
  for (int i = 0; i < 200; ++i) ok += "]";
  ok += "}}]}";
  EXPECT_EQ(import_text(ok).ranges().size(), 1u);
  // At the limit: the event, its args and 254 arrays are 256 levels; one more is too deep.
  for (int arrays : {254, 255}) {
    std::string edge =
        R"J({"traceEvents": [{"ph": "X", "name": "n", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"a": )J";
    for (int i = 0; i < arrays; ++i) edge += "[";
    for (int i = 0; i < arrays; ++i) edge += "]";
    edge += "}}]}";
    if (arrays == 254) {
      EXPECT_EQ(import_text(edge).ranges().size(), 1u);
    } else {
      const InputError e = import_error(edge);
      EXPECT_NE(e.reason().find("nested deeper than 256"), std::string::npos) << e.what();
    }
  }
}

TEST(ChromeJsonMalformed, HugeNumbersAreCountedNotKept) {
  // Valid JSON whose times do not fit 64-bit ns: the event is skipped and counted.
  const Trace t = import_text(R"J({"traceEvents": [
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1e400, "dur": 1},
    {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 99999999999999999999999, "dur": 1},
    {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 1, "dur": 1e30},
    {"ph": "X", "name": "d", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"grid": [1e300, 99999999999999999999]}},
    {"ph": "X", "name": "e", "pid": 99999999999999999999, "tid": -5, "ts": 2, "dur": 1}
  ]})J");
  EXPECT_EQ(t.meta().stat("import.skipped.invalid_ts"), 2u);
  EXPECT_EQ(t.meta().stat("import.skipped.invalid_dur"), 1u);
  EXPECT_EQ(t.ranges().size(), 2u);
}

TEST(ChromeJsonMalformed, GzipCutShortOrCorrupt) {
  const std::string gz = gzip(kKineto);
  // A stream cut short: the events decoded before the cut load, said as
  // truncated; with none it is an error that says the stream was cut.
  std::size_t last_rows = 0;
  for (std::size_t n = 3; n < gz.size(); n += (n < 40 || n + 12 > gz.size()) ? 1 : 7) {
    SCOPED_TRACE("cut at " + std::to_string(n));
    const std::string path = write_file("trunc.json.gz", gz.substr(0, n));
    Trace t;
    try {
      t = import_chrome_json(path);
    } catch (const InputError& e) {
      EXPECT_NE(e.reason().find("truncated"), std::string::npos) << e.what();
      EXPECT_EQ(last_rows, 0u) << "an error after a shorter cut had loaded: " << e.what();
      continue;
    }
    std::size_t rows = 0;
    for (int i = 0; i < kTableCount; ++i) rows += t.tables().rows(static_cast<TableId>(i));
    EXPECT_GE(rows, last_rows);
    last_rows = rows;
    const FileDamage& d = t.meta().damage;
    EXPECT_TRUE(d.truncated);
    ASSERT_FALSE(d.problems.empty());
    EXPECT_NE(d.problems[0].find("the gzip stream ends early, at byte " + std::to_string(n)), std::string::npos)
        << d.problems[0];
  }
  EXPECT_GT(last_rows, 0u);
  // Only the gzip trailer (checksum and size) missing: every event is there.
  const Trace tail = import_chrome_json(write_file("tail.json.gz", gz.substr(0, gz.size() - 4)));
  EXPECT_EQ(tail.kernels().size(), import_text(kKineto).kernels().size());
  EXPECT_NE(tail.meta().damage.problems.at(0).find("every event was loaded"), std::string::npos);
  EXPECT_EQ(tail.meta().damage.tables[0].count, LossCount::exact);
  for (std::size_t at : {std::size_t{3}, std::size_t{12}, gz.size() / 2, gz.size() - 6}) {
    std::string bad = gz;
    bad[at] = static_cast<char>(bad[at] ^ 0x5A);
    const InputError e = import_error(bad, 0, "corrupt.json.gz");
    EXPECT_FALSE(e.reason().empty()) << at;
  }
  const InputError junk = import_error(gz + "junk", 0, "junk.json.gz");
  EXPECT_NE(junk.reason().find("after the end of the gzip stream"), std::string::npos) << junk.what();
  // Zero padding after the stream is tolerated.
  EXPECT_EQ(import_chrome_json(write_file("pad.json.gz", gz + std::string(100, '\0'))).kernels().size(), 1u);
}

TEST(ChromeJsonMalformed, NotAFile) {
  EXPECT_THROW(import_chrome_json(temp_path("does-not-exist.json")), InputError);
  EXPECT_THROW(import_chrome_json(::testing::TempDir()), InputError);
}

// Duplicate keys, one rule everywhere: the first value stands, each later
// one is skipped and counted ("import.skipped.duplicate_key"): in an event
// (a second "ts"), in its args (a second "stream"), and in the root object
// (a second "traceEvents", whose events are not imported; a second
// "baseTimeNanoseconds"). One thread and two give the same.
TEST(ChromeJson, DuplicateKeysKeepTheFirstValueAndAreCounted) {
  std::string events;
  for (int i = 0; i < 3000; ++i)  // several small buffers: the two-thread path
    events += R"({"ph":"X","cat":"kernel","name":"k","ts":)" + std::to_string(10 + i) + R"(,"ts":999999,"dur":1,)" +
              R"("pid":0,"tid":7,"args":{"device":0,"stream":7,"stream":9}},)";
  const std::string json =
      R"({"baseTimeNanoseconds":1000,"traceEvents":[)" + events +
      R"({"ph":"X","cat":"kernel","name":"last","ts":5,"dur":1,"pid":0,"tid":7,"args":{"device":0,"stream":7}}],)" +
      R"("baseTimeNanoseconds":5000,"traceEvents":[{"ph":"X","cat":"kernel","name":"second",)" +
      R"("ts":1,"dur":1,"pid":0,"tid":7,"args":{"device":0,"stream":7}}]})";
  for (const int threads : {1, 2}) {
    ChromeImportOptions o;
    o.buffer_bytes = 4096;
    o.parse_threads = threads;
    const Trace t = import_chrome_json(write_file("dup.json", json), o);
    ASSERT_EQ(t.kernels().size(), 3001u) << threads;
    EXPECT_EQ(t.tracks().size(), 1u);                                 // every kernel on stream 7
    EXPECT_EQ(t.kernels().start[0], 1000 + 5'000);                    // "last", at ts 5 µs after the first base
    EXPECT_EQ(t.meta().stat("import.skipped.duplicate_key"), 6002u);  // 3000 ts, 3000 stream, 1 base, 1 traceEvents
    for (RowIndex i = 0; i < t.kernels().size(); ++i) EXPECT_NE(t.str(t.kernels().name[i]), "second");
  }
}

}  // namespace
}  // namespace gpuscope
