// The hardware samples of one kernel: what the GPU's counters (hw.* series,
// docs/metrics.md "Hardware metrics") read while it ran. The viewer's details
// panel shows them for the selected kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace gpuscope {

struct KernelSampleMean {
  std::string name, unit;     // the series ("hw.sm_active", "%")
  std::uint64_t samples = 0;  // its samples at times within the kernel's [start, end]
  double mean = 0;            // their mean; 0 without samples
  TimeNs interval_ns = 0;     // the series' mean time between samples (0: fewer than two)
};

// One entry per hw.* series of the kernel's device, by name; empty when the
// device has none. NaN samples are skipped. Cost: a binary search per series.
std::vector<KernelSampleMean> kernel_sample_means(const Trace& t, RowIndex kernel);

}  // namespace gpuscope
