// Statistics of one time window of a trace: what the report says of the
// whole trace — time per kernel, per category and per framework op, each
// GPU's busy time, utilization and kernel concurrency — said of [start, end)
// only. The viewer's range selection shows them (docs/viewer.md, "Range
// selection").
//
// Definitions are the report's (docs/metrics.md), with every op clipped to
// the window: an op counts when it overlaps the window (a zero-length op
// when it starts inside it) and adds only its time inside. Over a window
// that holds the whole trace the numbers are the Profile's: hotspots'
// count and total, categories' count and time, op_names' GPU self and total
// time and GPU ops, and each device's busy time, kernel-busy time, kernel
// time, concurrency and mean kernels in flight (tests/analysis/window_stats_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/profile.h"
#include "trace/trace.h"

namespace gpuscope {

// Time of one kernel name, category or framework op inside the window.
struct WindowRow {
  std::string name;  // kernel name (demangled), category name, or op name ("(no op)": launched outside every op)
  KernelCategory category = KernelCategory::other;  // kernels and categories
  std::uint64_t count = 0;                          // ops in the window (framework ops: GPU ops launched itself)
  TimeNs total_ns = 0;                              // their time inside the window (ops: GPU self time)
  TimeNs with_children_ns = 0;                      // framework ops: with the ops inside it (GPU total)
  std::uint64_t count_with_children = 0;            // framework ops: GPU ops with the ops inside it
  double share = 0;                                 // total_ns / the window's kernel time (GPU op time for ops)
  double of_window = 0;                             // total_ns / the window's length
};

// One GPU stream inside the window.
struct WindowStream {
  TrackId track = 0;
  std::uint32_t device = 0, stream = 0;
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0;
  TimeNs kernel_ns = 0;   // Σ kernel time inside the window
  TimeNs busy_ns = 0;     // |union of its GPU ops| inside the window
  TimeNs idle_ns = 0;     // window length - busy_ns
  double busy_share = 0;  // busy_ns / window length
};

// One GPU inside the window: DeviceSummary's definitions, over the window.
struct WindowDevice {
  std::uint32_t device = 0;
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0;
  TimeNs busy_ns = 0;                 // |union of its GPU ops (kernels, memcpys, memsets)|
  TimeNs idle_ns = 0;                 // window length - busy_ns
  double utilization = 0;             // busy_ns / window length
  TimeNs kernel_busy_ns = 0;          // |union of kernels|
  TimeNs kernel_time_ns = 0;          // Σ kernel time (not a union)
  TimeNs concurrent_ns = 0;           // time with >= 2 kernels in flight
  double kernel_concurrency = 0;      // concurrent_ns / kernel_busy_ns
  double mean_kernels_in_flight = 0;  // kernel_time_ns / kernel_busy_ns
};

struct WindowStats {
  TimeRange window;
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0;
  TimeNs kernel_time_ns = 0;  // Σ kernel time inside the window (the kernels' and categories' share denominator)
  TimeNs gpu_op_time_ns = 0;  // … of every GPU op (the framework ops' share denominator)
  std::vector<WindowRow> kernel_names;  // most time first
  std::vector<WindowRow> categories;    // most time first
  std::vector<WindowRow> ops;           // framework ops by name, most GPU time (with children) first
  std::vector<WindowStream> streams;    // GPU streams with an op in the window, in track order
  std::vector<WindowDevice> devices;    // GPUs with an op in the window, by id
};

// The statistics of [window.start, window.end) over the GPUs of `trace`
// (only `device` when it is not kNoDevice). Cost: one pass over the GPU ops
// inside the window, a merge of each GPU's streams; nothing outside it is read.
WindowStats window_stats(const Trace& trace, TimeRange window, std::uint32_t device = kNoDevice);

}  // namespace gpuscope
