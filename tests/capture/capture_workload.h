// The known work of tests/capture/capture_workload.cu, shared with the checks
// that compare a captured trace against it (workload_checks.h).
#pragma once

#include <cstddef>

namespace gpuscope::capture::workload {

// "overlap": spin kernels, alternately on two streams, each running this long:
// the two streams must be seen running at the same time.
inline constexpr int kSpinKernelsPerStream = 6;
inline constexpr long long kSpinNs = 2'000'000;
// "copies" (between cudaProfilerStart and cudaProfilerStop): host-to-device
// copies from pageable memory, host-to-device and device-to-host copies
// through pinned memory, and memsets.
inline constexpr int kPageableCopies = 4;
inline constexpr int kPinnedCopiesEachWay = 4;
inline constexpr int kMemsets = 2;
inline constexpr std::size_t kCopyBytes = std::size_t{8} << 20;
// "graph": a CUDA graph of kGraphNodes kernels, launched kGraphLaunches times.
inline constexpr int kGraphNodes = 3;
inline constexpr int kGraphLaunches = 5;
// "nccl": all-reduces on a one-GPU communicator.
inline constexpr int kAllReduces = 3;

// NVTX ranges: "workload" around everything, the phases nested inside it.
inline constexpr const char* kOuterRange = "workload";
inline constexpr const char* kPhaseRanges[] = {"overlap", "copies", "graph", "nccl"};

}  // namespace gpuscope::capture::workload
