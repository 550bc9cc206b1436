// Capture options as text: the --trace list, the capture range, the
// environment variables that carry options into an injected process, and the
// output file name pattern (%p %h %r %n).
//
// `gpuscope capture` and libgpuscope_inject.so talk only through these
// variables (documented in docs/capture.md):
//   GPUSCOPE_CAPTURE_OUTPUT, _TRACE, _RANGE, _DELAY, _DURATION, _BUFFER_KB,
//   _POOL_MB, _FLUSH_MS, _GPU_METRICS, _GPU_METRICS_HZ   the Options fields
//   GPUSCOPE_CAPTURE_REPORT_DIR  where each process of a `gpuscope capture` run
//                                writes its summary and claims its output name
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpuscope/capture.h"

namespace gpuscope::capture {

inline constexpr const char* kEnvOutput = "GPUSCOPE_CAPTURE_OUTPUT";
inline constexpr const char* kEnvTrace = "GPUSCOPE_CAPTURE_TRACE";
inline constexpr const char* kEnvRange = "GPUSCOPE_CAPTURE_RANGE";
inline constexpr const char* kEnvDelay = "GPUSCOPE_CAPTURE_DELAY";
inline constexpr const char* kEnvDuration = "GPUSCOPE_CAPTURE_DURATION";
inline constexpr const char* kEnvBufferKb = "GPUSCOPE_CAPTURE_BUFFER_KB";
inline constexpr const char* kEnvPoolMb = "GPUSCOPE_CAPTURE_POOL_MB";
inline constexpr const char* kEnvFlushMs = "GPUSCOPE_CAPTURE_FLUSH_MS";
inline constexpr const char* kEnvGpuMetrics = "GPUSCOPE_CAPTURE_GPU_METRICS";
inline constexpr const char* kEnvGpuMetricsHz = "GPUSCOPE_CAPTURE_GPU_METRICS_HZ";
inline constexpr const char* kEnvReportDir = "GPUSCOPE_CAPTURE_REPORT_DIR";

// The rates PM sampling may run at (samples per second and device).
inline constexpr unsigned kMinGpuMetricsHz = 10;
inline constexpr unsigned kMaxGpuMetricsHz = 200000;

// "kernel,memcpy,api,nvtx,sync" <-> TraceFlags bits. Parsing returns nullopt and
// sets *error for an unknown or empty item.
std::optional<unsigned> parse_trace_list(std::string_view list, std::string* error);
std::string trace_list(unsigned trace);

struct CaptureRange {
  enum class Kind { whole_run, cuda_profiler_api, nvtx } kind = Kind::whole_run;
  std::string nvtx_name;  // for Kind::nvtx
};
std::optional<CaptureRange> parse_capture_range(std::string_view text, std::string* error);

// Checks every field of `o`; returns "" when valid, else the first problem.
std::string validate(const Options& o);

// Options as environment variables (only those that differ from the
// defaults) and back. `from_environment` ignores malformed values and
// reports them in *warnings (the injected program must run on regardless).
std::map<std::string, std::string> to_environment(const Options& o);
Options from_environment(std::string* warnings);

// The distributed rank from OMPI_COMM_WORLD_RANK, RANK or SLURM_PROCID, -1 if none.
int rank_from_environment();
std::string host_name();

// Expands %p %h %r %n %% (n = `counter`). An unknown %x is kept as is.
std::string expand_output_pattern(std::string_view pattern, std::uint32_t pid, std::string_view host, int rank,
                                  unsigned counter);

// Picks the file this process writes and creates it empty, so that no other
// process of the same run picks it too:
//  * %n: the first counter (from 1) whose file does not exist;
//  * a name another process of this run already claimed (listed in
//    `claims_file`, when given): "<stem>.<pid><ext>" instead;
//  * an existing file from an earlier run is replaced.
// Claims are serialized with an flock on `claims_file` (or on the output
// directory without one). Returns the path, or "" and *error if the file
// cannot be created.
std::string claim_output_file(std::string_view pattern, std::uint32_t pid, const std::string& claims_file,
                              std::string* error);

}  // namespace gpuscope::capture
