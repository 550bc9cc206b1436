// Hand-built traces for the dependency-graph tests, on the shared
// TraceFactory (tests/support/test_traces.h): kernels with (or without) their
// launching calls, plain calls, host syncs and CPU ranges, on any of four
// devices, stream and thread, in a line each. Times are in µs for
// readability (the trace stores ns).
#pragma once

#include <cstdint>
#include <string_view>

#include "support/test_traces.h"

namespace gpuscope::testing {

class TinyTrace {
 public:
  TinyTrace() {
    for (std::uint32_t d = 1; d < 4; ++d) f_.device(d);
  }

  static TimeNs us(double v) { return static_cast<TimeNs>(v * 1000.0); }

  // A kernel [start, end) µs on (device, stream), launched by a cudaLaunchKernel
  // call [call, call + call_dur) µs on thread `tid`; call < 0: no launch known.
  void kernel(std::string_view name, std::uint32_t device, std::uint32_t stream, double start, double end,
              double call = -1, double call_dur = 2, std::uint32_t tid = 1) {
    f_.kernel(device, stream, name, us(start), us(end), call >= 0 ? us(call) : TraceFactory::kNoLaunch, us(call_dur), 1,
              tid);
  }

  // A 1 MiB pinned H2D copy launched by cudaMemcpyAsync (or a blocking cudaMemcpy).
  void copy(std::uint32_t device, std::uint32_t stream, double start, double end, double call, double call_end,
            std::string_view call_name = "cudaMemcpyAsync", std::uint32_t tid = 1) {
    f_.memcpy(device, stream, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, us(start), us(end),
              call_name, us(call), us(call_end) - us(call), tid);
  }

  // An API call that launches nothing; returns its correlation.
  std::uint32_t call(std::string_view name, double start, double end, std::uint32_t tid = 1) {
    return f_.api(name, us(start), us(end), tid);
  }

  // cudaStreamSynchronize(stream) [start, end) µs with its sync row.
  void stream_sync(std::uint32_t device, std::uint32_t stream, double start, double end, std::uint32_t tid = 1) {
    f_.sync(SyncType::stream, device, stream, us(start), us(end), tid);
  }

  // A CPU range (NVTX push/pop) [start, end) µs on thread `tid`.
  void range(std::string_view name, double start, double end, std::uint32_t tid = 1) {
    f_.range(name, us(start), us(end), tid);
  }

  Trace freeze() { return f_.build(); }

 private:
  TraceFactory f_;
};

}  // namespace gpuscope::testing
