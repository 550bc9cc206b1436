// Hand-built traces for the dependency-graph tests: kernels with (or without)
// their launching calls, plain calls, host syncs and CPU ranges, on any
// device, stream and thread, in a line each. Times are in µs for readability
// (the trace stores ns).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/builder.h"

namespace gpuscope::testing {

class TinyTrace {
 public:
  static constexpr std::uint32_t kPid = 77;

  TinyTrace() {
    b_.meta().source = TraceSource::synthetic;
    b_.meta().producer = "tests/analysis/graph";
    b_.add_process({kPid, "train.py", -1});
    for (std::uint32_t d = 0; d < 4; ++d) {
      Device dev;
      dev.id = d;
      dev.name = "Test GPU";
      b_.add_device(dev);
    }
  }

  static TimeNs us(double v) { return static_cast<TimeNs>(v * 1000.0); }

  // A kernel [start, end) µs on (device, stream), launched by a cudaLaunchKernel
  // call [call, call + call_dur) µs on thread `tid`; call < 0: no launch known.
  void kernel(std::string_view name, std::uint32_t device, std::uint32_t stream, double start, double end,
              double call = -1, double call_dur = 2, std::uint32_t tid = 1) {
    KernelRow k;
    k.start = us(start);
    k.end = us(end);
    k.track = b_.gpu_track(device, stream);
    k.name = b_.intern(name);
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = k.block_y = k.block_z = 128;
    if (call >= 0) k.correlation = api("cudaLaunchKernel", call, call + call_dur, tid);
    b_.add_kernel(k);
  }

  // An H2D copy launched by cudaMemcpyAsync (or a blocking cudaMemcpy).
  void copy(std::uint32_t device, std::uint32_t stream, double start, double end, double call, double call_end,
            std::string_view call_name = "cudaMemcpyAsync", std::uint32_t tid = 1) {
    MemcpyRow m;
    m.start = us(start);
    m.end = us(end);
    m.track = b_.gpu_track(device, stream);
    m.bytes = 1 << 20;
    m.kind = CopyKind::htod;
    m.src_kind = MemoryKind::pinned;
    m.dst_kind = MemoryKind::device;
    m.correlation = api(call_name, call, call_end, tid);
    b_.add_memcpy(m);
  }

  // An API call that launches nothing; returns its correlation.
  std::uint32_t call(std::string_view name, double start, double end, std::uint32_t tid = 1) {
    return api(name, start, end, tid);
  }

  // cudaStreamSynchronize(stream) [start, end) µs with its sync row.
  void stream_sync(std::uint32_t device, std::uint32_t stream, double start, double end, std::uint32_t tid = 1) {
    SyncRow s;
    s.start = us(start);
    s.end = us(end);
    s.track = b_.cpu_track(kPid, tid);
    s.correlation = api("cudaStreamSynchronize", start, end, tid);
    s.type = SyncType::stream;
    s.device = device;
    s.stream = stream;
    b_.add_sync(s);
  }

  // A CPU range (NVTX push/pop) [start, end) µs on thread `tid`.
  void range(std::string_view name, double start, double end, std::uint32_t tid = 1) {
    RangeRow r;
    r.start = us(start);
    r.end = us(end);
    r.track = b_.cpu_track(kPid, tid);
    r.name = b_.intern(name);
    r.kind = RangeKind::push_pop;
    b_.add_range(r);
  }

  Trace freeze() { return b_.freeze(); }

 private:
  std::uint32_t api(std::string_view name, double start, double end, std::uint32_t tid) {
    ApiCallRow a;
    a.start = us(start);
    a.end = us(end);
    a.track = b_.cpu_track(kPid, tid);
    a.correlation = next_++;
    a.name = b_.intern(name);
    b_.add_api_call(a);
    return a.correlation;
  }

  TraceBuilder b_;
  std::uint32_t next_ = 1;
};

}  // namespace gpuscope::testing
