// gpuscope in-process capture: record what the GPUs of this process do
// (CUPTI activity tracing) into a .gscope file.
//
//   #include <gpuscope/capture.h>
//   gpuscope::capture::Options opt;
//   opt.output = "train-%p.gscope";
//   auto s = gpuscope::capture::start(opt);   // s.ok false + s.message if it cannot
//   ... run training ...
//   s = gpuscope::capture::stop();            // flushes and finishes the file
//
// One capture at a time per process (CUPTI has one subscriber per process).
// Nothing here throws, and a failure never harms the program: start() says
// what went wrong (no GPU, no driver, CUPTI in use by another profiler,
// insufficient privileges, unwritable output) and the program runs on
// unprofiled. Events are written to the file while the program runs, so a
// program that dies still leaves a readable prefix. Link gpuscope_capture.
// Programs you cannot modify: `gpuscope capture -- CMD` (docs/capture.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace gpuscope::capture {

// What to record; combine with |.
enum TraceFlags : unsigned {
  kKernel = 1u << 0,  // kernels (concurrent-kernel tracing: the GPU is never serialized)
  kMemcpy = 1u << 1,  // memcpys (with pageable/pinned memory kinds), memsets, allocations and memory pools
  kApi = 1u << 2,     // CUDA runtime and driver calls; they link each launch to its GPU work
  kNvtx = 1u << 3,    // NVTX ranges, marks and names
  kSync = 1u << 4,    // host threads waiting for the GPU (stream/event/device synchronization)
  kAllTraces = 0x1fu,
};

struct Options {
  // Output file. %p pid, %h host name, %r rank (OMPI_COMM_WORLD_RANK, RANK or
  // SLURM_PROCID; 0 if none), %n the first number that gives a new file, %% a '%'.
  std::string output = "gpuscope-%p.gscope";
  unsigned trace = kAllTraces;
  // "" records from start() to stop(); "cuda-profiler-api" only between
  // cudaProfilerStart/Stop; "nvtx:NAME" only inside NVTX ranges named NAME.
  std::string capture_range;
  double delay_s = 0;            // begin recording this many seconds after start()
  double duration_s = 0;         // end recording this many seconds after it began (0: until stop())
  std::size_t buffer_kb = 4096;  // one CUPTI activity buffer
  std::size_t pool_mb = 256;     // all buffers together: capture memory never exceeds this
  unsigned flush_ms = 1000;      // how often recorded events are written to the file
  // Hardware counters sampled per device (CUPTI PM sampling): "default" (SM
  // active, occupancy, issue, tensor pipe, DRAM, PCIe, NVLink as the chip has
  // them), "none", or a comma-separated list of metric names and "default".
  std::string gpu_metrics = "default";
  unsigned gpu_metrics_hz = 10000;  // samples per second and device, 10 to 200000
};

// What a capture did. Counts are events kept in the file.
struct Summary {
  bool ok = false;      // the capture runs (or ran) and its file is readable
  std::string message;  // one line for people: what happened, what was (not) captured
  std::string output;   // the .gscope file, "" if none was written
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, ranges = 0, syncs = 0, overheads = 0;
  std::uint64_t dropped_records = 0;     // CUPTI had no buffer space: events lost
  std::uint64_t invalid_timestamps = 0;  // GPU records without valid times: counted, not kept
  std::uint64_t overhead_ns = 0;         // time CUPTI itself spent (its overhead records)
  std::uint64_t bytes_written = 0;       // size of the file so far
  std::uint64_t pool_peak_bytes = 0;     // most buffer memory in use at once
};

// Summary's counts, each under the key that names it (the per-process
// reports of `gpuscope capture`, Python's gpuscope.capture dicts).
inline constexpr std::pair<const char*, std::uint64_t Summary::*> kSummaryCounts[] = {
    {"kernels", &Summary::kernels},
    {"memcpys", &Summary::memcpys},
    {"memsets", &Summary::memsets},
    {"api_calls", &Summary::api_calls},
    {"ranges", &Summary::ranges},
    {"syncs", &Summary::syncs},
    {"overheads", &Summary::overheads},
    {"dropped_records", &Summary::dropped_records},
    {"invalid_timestamps", &Summary::invalid_timestamps},
    {"overhead_ns", &Summary::overhead_ns},
    {"bytes_written", &Summary::bytes_written},
    {"pool_peak_bytes", &Summary::pool_peak_bytes}};

// Starts a capture. Returns ok=false and a message when it cannot; the
// program is unaffected either way.
Summary start(const Options& options = {}) noexcept;
// Stops recording, writes what remains and finishes the file. Harmless when
// nothing runs (returns ok=false, "no capture is running").
Summary stop() noexcept;
// Counts so far, without stopping.
Summary status() noexcept;
bool running() noexcept;

// start() in the constructor, stop() in the destructor (if it started).
class ScopedCapture {
 public:
  explicit ScopedCapture(const Options& options = {}) : summary_(start(options)) {}
  ~ScopedCapture() {
    if (summary_.ok) stop();
  }
  ScopedCapture(const ScopedCapture&) = delete;
  ScopedCapture& operator=(const ScopedCapture&) = delete;
  const Summary& started() const { return summary_; }

 private:
  Summary summary_;
};

}  // namespace gpuscope::capture
