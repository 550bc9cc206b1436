// Holistic Trace Analysis (HTA) numbers, computed exactly as HTA computes
// them, so users who know HTA see the same numbers in gpuscope.
//
// HTA's rules (research/diagnostics.md; docs/metrics.md § HTA):
//  * GPU ops: kernels, memcpys, memsets, and synchronization events that carry
//    a stream (Kineto's "Stream Sync"); Event/Context Sync have stream -1 and
//    drop out.
//  * With >= 2 distinct ProfilerStep#N ranges, only ops whose correlation is
//    that of a CPU-side event starting before the LAST ProfilerStep are kept
//    (HTA drops the last, possibly incomplete, iteration); a missing
//    correlation reads as 0, which always matches (the first ProfilerStep has
//    none).
//  * Sub-µs traces (Kineto's 3-decimal µs): every interval becomes
//    [ceil(ts), floor(ts + dur)] in µs, where ts and dur are the doubles the
//    JSON text parses to — absolute epoch µs lose their last digits in a
//    double, and HTA's numbers carry that loss, so this emulates it.
//  * Intervals are merged the pandas way (sorted by start; a new group when a
//    start exceeds every earlier end), inverted intervals from the rounding
//    included.
//  * compute = union of ops whose name matches none of HTA's non-compute
//    patterns (^nccl, Memcpy, Memset, dma, Sync, ^Stream Wait Event,
//    cuda.*LaunchKernel, ^runFunction, ^hip, ^hccl).
#pragma once

#include <vector>

#include "analysis/profile.h"
#include "trace/trace.h"

namespace gpuscope {

// HTA's get_temporal_breakdown for one trace (one rank): all devices
// together, or one device. Times are ns (µs × 1000 on the rounded grid for
// sub-µs traces). The reference emulation: it sorts every selected op.
TemporalBreakdown hta_temporal_breakdown(const Trace& trace, std::uint32_t device = kNoDevice);

// A breakdown from its measured parts (shares follow).
TemporalBreakdown make_temporal_breakdown(std::int32_t rank, std::uint32_t device, TimeNs span, TimeNs busy,
                                          TimeNs compute);

// HTA's get_idle_time_breakdown (consecutive_kernel_delay in the trace's µs,
// default 30): per stream, gaps between consecutive kernels/memcpys/memsets
// (previous op's end to the next op's start, negative when they overlap, as
// HTA sums them). Kept beside gpuscope's own Profile::idle, whose definition
// differs (exact ns, whole trace, no negative gaps): docs/metrics.md.
std::vector<IdleByCause> hta_idle_breakdown(const Trace& trace, double consecutive_kernel_delay_us = 30);

// HTA's communication/computation overlap: |comm ∩ compute| / |comm| over the
// same op selection (ops named nccl* are communication; Memcpy/Memset are
// neither). Returns a negative value when there is no communication (HTA: NaN).
double hta_comm_comp_overlap(const Trace& trace);

// True if the trace's timestamps came from a sub-µs Chrome/Kineto JSON (the
// importer's "chrome.sub_us_timestamps" property).
bool has_sub_us_timestamps(const Trace& trace);

namespace detail {
// The double that the JSON text of ns / 1000 µs ("<ns/1000>.<ns%1000>", three
// decimals) parses to in Python: ns / 1000 correctly rounded, ties to even.
double hta_json_us(TimeNs ns);
}  // namespace detail

}  // namespace gpuscope
