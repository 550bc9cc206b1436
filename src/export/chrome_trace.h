// Chrome Trace Event Format export (JSON, optionally gzip-compressed), in the
// conventions of PyTorch's profiler (Kineto), so Perfetto, chrome://tracing and
// Holistic Trace Analysis read it as they read a Kineto trace:
//
//  * GPU work on pid = device, tid = stream; CPU work on pid = process, tid =
//    thread; process_name / process_labels / process_sort_index and
//    thread_name / thread_sort_index metadata for every track;
//  * categories kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver,
//    cuda_sync, gpu_user_annotation, user_annotation (NVTX) and, for imported
//    annotations, their own category (cpu_op, python_function, …);
//  * kernel args: device, stream, correlation, registers per thread, shared
//    memory, grid, block, blocks per SM, warps per SM (when the SM count is
//    known); memcpy/memset args: bytes, memory bandwidth (GB/s); framework op
//    args: External id, Input Dims, Input type, Concrete Inputs;
//  * "ac2g" flows from each launching API call (ph "s") to the GPU op it
//    launched (ph "f", bp "e"), id = correlation;
//  * host samples as sample events (ph "P") whose "sf" names a frame of the
//    document's "stackFrames";
//  * counters as ph "C"; deviceProperties; distributedInfo when the rank is
//    known; a "gpuscope" object with the source (synthetic, captured,
//    imported), producer, host, command line and every TraceMeta stat;
//  * ts and dur in microseconds relative to baseTimeNanoseconds, printed with
//    exactly three decimals by integer arithmetic, so every ns survives.
//
// The writer streams: memory stays bounded by the string table and a 1 MiB
// buffer, whatever the trace size. Files are written atomically.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "trace/error.h"
#include "trace/trace.h"

namespace gpuscope {

struct ChromeExportOptions {
  bool gzip = false;   // gzip the output (write_chrome_trace_file picks this from a ".gz" name)
  int gzip_level = 1;  // zlib level 1..9; 1 is several times faster than 6 for ~15% more bytes
  bool flows = true;   // ac2g flow events
  bool sync = true;    // fdatasync the file before renaming it into place
};

struct ChromeExportStats {
  std::uint64_t events = 0;      // entries of traceEvents (metadata and flows included)
  std::uint64_t json_bytes = 0;  // uncompressed JSON
  std::uint64_t file_bytes = 0;  // bytes written to the file (compressed size with gzip)
  // Counter samples left out because JSON cannot hold NaN or infinity.
  std::uint64_t skipped_non_finite_counters = 0;
};

// Receives the JSON text in order, in pieces of up to about 1 MiB.
using ChromeSink = std::function<void(std::string_view)>;

// Streams the JSON of `trace` into `sink` (uncompressed; options.gzip is ignored).
ChromeExportStats write_chrome_trace(const Trace& trace, const ChromeSink& sink,
                                     const ChromeExportOptions& options = {});

// Writes `path` atomically (`<path>.tmp.<pid>`, then rename), gzip-compressed
// when options.gzip is set. Throws InputError naming `path` on any I/O error;
// `path` is then untouched and the temporary file removed.
ChromeExportStats write_chrome_trace_file(const Trace& trace, const std::string& path,
                                          const ChromeExportOptions& options = {});

// The whole JSON as one string (small traces, tests).
std::string chrome_trace_json(const Trace& trace, const ChromeExportOptions& options = {});

// Microseconds with exactly three decimals for a non-negative ns count
// ("1234.567"), by integer arithmetic. Exposed for tests.
std::string format_chrome_us(std::int64_t ns);

}  // namespace gpuscope
