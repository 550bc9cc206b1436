// Import of SQLite databases in Nsight Systems' schema: the files
// `nsys export --type sqlite report.nsys-rep` writes (nsys 2021 to 2025), and
// gpuscope's own SQLite export (src/export/sqlite_export.h), which uses the
// same table names. The two are told apart by their tables (gpuscope's has
// GPUSCOPE_META); gpuscope's reads back as the trace that was exported.
//
// What is read from an nsys export, what each nsys version differs in, and
// what is counted but not imported: docs/import.md, "Nsight Systems". In short:
//  * CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET     -> kernels, memcpys, memsets on GPU track
//                                                          (deviceId, streamId); names through StringIds
//  * CUPTI_ACTIVITY_KIND_RUNTIME (eventClass 0 runtime,  -> api_calls on CPU track (pid, tid) of globalTid,
//    1 driver) and _DRIVER                                 "_vNNNN" version suffixes dropped, linked by
//                                                          correlationId
//  * CUPTI_ACTIVITY_KIND_SYNCHRONIZATION                -> syncs (the waiting thread through correlation)
//  * CUPTI_ACTIVITY_KIND_CUDA_EVENT (when timed)        -> marks on the GPU track, domain "cuda_event"
//  * NVTX_EVENTS 34 / 59 / 60 (75: domain names)        -> ranges: mark / push_pop / start_end
//  * TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE           -> devices; PROCESSES, ThreadNames,
//    TARGET_INFO_CUDA_STREAM                               TARGET_INFO_CUDA_STREAM -> processes, track names
//  * PROFILER_OVERHEAD                                  -> overheads
//  * OSRT_API (eventClass 27; nestingLevel kept)        -> os_calls on CPU track (pid, tid), returnValue as
//                                                          status; call stacks (OSRT_CALLCHAINS) not read
//  * meta: source nsys_sqlite; time = TARGET_INFO_SESSION_START_TIME.utcEpochNs + the file's ns; producer
//    from EXPORT_META_DATA / META_DATA_EXPORT; ranks from "MPI Rank N" thread names, NCCL NVTX
//    payloads, the launch environment or the file name.
// Every row not imported is counted in TraceMeta::stats ("import.skipped.<reason>", and
// "import.skipped.table.<TABLE>" for tables the model has no place for).
#pragma once

#include <cstddef>
#include <string>

#include "trace/error.h"
#include "trace/load_progress.h"
#include "trace/trace.h"

namespace gpuscope {

struct NsysImportOptions {
  LoadProgress progress;
  // Read the big tables straight from the file's pages where SQLite's file
  // format allows (~5-20x faster than SQLite's row API); false: through
  // SQLite only. The trace is the same either way (tests compare them).
  bool direct_read = true;
  // Threads that read the big tables (kernels, API calls) when reading
  // directly: 0 = automatic (the machine's cores, at most 4), 1 = the calling
  // thread only. The trace is the same either way (tests compare them).
  unsigned threads = 0;
};

// Whether `bytes` start with SQLite's file header ("SQLite format 3\0").
bool is_sqlite_header(const void* bytes, std::size_t size);

// Throws InputError naming `path` and the problem: not an SQLite database (or
// an encrypted one), corrupt, an SQLite database that is neither an Nsight
// Systems export nor gpuscope's, unreadable.
Trace import_nsys_sqlite(const std::string& path, const NsysImportOptions& options = {});

}  // namespace gpuscope
