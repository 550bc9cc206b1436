// Import of Chrome Trace Event Format JSON (plain or .gz): PyTorch profiler
// (Kineto) traces of the 2021 and current schemas, and generic traces of other
// tools (X/B/E/i/C/M events, object form {"traceEvents": [...]} or bare array).
// Streaming, bounded memory; every event it cannot use is counted by reason in
// TraceMeta::stats ("import.skipped.<reason>"). Full mapping: docs/import.md.
//
// Representation (shared with analysis/, which relies on it):
//  * kernel / gpu_memcpy / gpu_memset          -> kernels / memcpys / memsets on GPU track (device, stream)
//    (2021: Kernel / Memcpy / Memset)             device = args.device (else pid), stream = args.stream
//                                                 (else tid, numeric or "stream N"); memcpy kinds and
//                                                 memory kinds from the name ("Memcpy HtoD (Pageable ->
//                                                 Device)"); kernel grid, block, registers per thread;
//                                                 "shared memory" (static + dynamic) -> static_smem
//  * cuda_runtime / cuda_driver                -> api_calls (domain runtime / driver) on CPU track (pid, tid),
//    (2021: Runtime / Driver)                     with args.correlation and args.cbid
//  * cuda_sync ("Stream Sync", "Event Sync",   -> syncs: track resolved through correlation, device,
//    "Context Sync", "Stream Wait Event")         stream (kNoId for -1), event, type from the name
//  * gpu_user_annotation                       -> ranges on the GPU track, domain "gpu_user_annotation",
//                                                  correlation = its "External id"
//  * cpu_op, user_annotation, python_function,  -> ranges (RangeKind::annotation) on the CPU track,
//    other X events, B/E pairs                     domain = the event's category ("Operator", the 2021
//                                                  name, becomes "cpu_op"); correlation = "External id";
//                                                  ProfilerStep#N included
//  * i / I events                              -> ranges (RangeKind::mark)
//  * C events                                  -> counters, one series "<name>.<arg>" per numeric arg
//  * M events                                  -> process names (process_name), track names (thread_name);
//                                                  Kineto's per-GPU pseudo-processes ("GPU N" labels) are
//                                                  not processes
//  * s / t / f flows (ac2g)                    -> not kept: the link they draw is args.correlation,
//                                                  which is kept (counted as import.skipped.flow)
//  * meta: source chrome_json; producer "PyTorch Profiler (Kineto)" (", 2021 schema") or "Chrome trace
//    JSON"; properties "chrome.ts_origin_ns" = the ns time of ts 0 (baseTimeNanoseconds, else 0, so
//    µs-grid rounding can be reproduced), "chrome.sub_us_timestamps" = "1" when any ts or dur is not
//    a whole number of µs; distributedInfo -> meta.rank/world_size (and every process's rank);
//    deviceProperties -> devices (those the GPU events use; "chrome.devices_listed" = how many the
//    file listed; one device listed under another id than the one device the events use describes it,
//    said in "chrome.device_properties_renumbered"; [memory] events under that listed number then move to
//    the events' one GPU, said in "chrome.memory_device_renumbered"); scalar top-level keys -> properties
//    "chrome.meta.<key>". [memory] Device Type 1 (CUDA) and 6 (HIP) are GPU memory, 0 the host's.
//  Timestamps are parsed from the decimal text to exact ns (never via double); the model's times are
//  absolute: ts_origin_ns + ts.
#pragma once

#include <cstddef>
#include <string>

#include "trace/error.h"
#include "trace/load_progress.h"
#include "trace/trace.h"

namespace gpuscope {

struct ChromeImportOptions {
  LoadProgress progress;
  // Size of each read buffer (a few are in flight). 0 = default (4 MiB).
  // Tests use tiny ones to put buffer boundaries everywhere.
  std::size_t buffer_bytes = 0;
  // Threads that parse: 0 = automatic (two, the calling thread and one more,
  // when the file has more than one buffer's worth of text and the machine
  // more than one core), 1 = the calling thread only, 2 = two. The trace is
  // the same either way (tests compare them).
  int parse_threads = 0;
};

// Throws InputError (file, byte offset, reason) for malformed JSON, a file
// that is not a Chrome trace, corrupt gzip, or a read error. A file cut short
// (a gzip stream or a JSON text that ends early, inside an event or the
// events array) yields the events complete before the cut, with
// meta().damage saying where the text stopped; only when no event remains
// does it throw ("truncated: …; no event could be recovered").
// Byte offsets of JSON errors count bytes of JSON text (decompressed, for .gz).
Trace import_chrome_json(const std::string& path, const ChromeImportOptions& options = {});

}  // namespace gpuscope
