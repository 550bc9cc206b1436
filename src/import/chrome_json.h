// Import of Chrome Trace Event Format JSON (plain or .gz): PyTorch profiler
// (Kineto) traces of the 2021 and current schemas, and generic traces of other
// tools (X/B/E/i/C/M events). Streaming, bounded memory; every event it cannot
// use is counted by reason in TraceMeta::stats ("import.skipped.<reason>").
//
// Representation (shared with analysis/, which relies on it):
//  * kernel / gpu_memcpy / gpu_memset          -> kernels / memcpys / memsets on GPU track (device, stream)
//  * cuda_runtime / cuda_driver                -> api_calls (domain runtime / driver) on CPU track (pid, tid)
//  * cuda_sync ("Stream Sync", "Event Sync",   -> syncs: track resolved through correlation, device,
//    "Context Sync")                              stream (kNoId for -1), event, type from the name
//  * gpu_user_annotation                       -> ranges on the GPU track, domain "gpu_user_annotation",
//                                                  with its correlation
//  * cpu_op, user_annotation, python_function,  -> ranges (RangeKind::annotation) on the CPU track,
//    other X/B/E events                            domain = the event's category; ProfilerStep#N included
//  * i events                                  -> ranges (RangeKind::mark)
//  * C events                                  -> counters
//  * meta properties: "chrome.ts_origin_ns" = the ns time of ts 0 (so µs-grid
//    rounding can be reproduced), "chrome.sub_us_timestamps" = "1" when any ts
//    or dur had a fractional part; distributedInfo -> meta.rank/world_size;
//    deviceProperties -> devices.
//  Timestamps are parsed from the decimal text to exact ns (never via double).
#pragma once

#include <string>

#include "trace/error.h"
#include "trace/load_progress.h"
#include "trace/trace.h"

namespace gpuscope {

struct ChromeImportOptions {
  LoadProgress progress;
};

// Throws InputError with the byte offset for malformed JSON.
Trace import_chrome_json(const std::string& path, const ChromeImportOptions& options = {});

}  // namespace gpuscope
