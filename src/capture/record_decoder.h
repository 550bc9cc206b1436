// RecordDecoder: CUPTI 13 activity buffers -> TraceBuilder rows.
//
// A pure function of the bytes (plus what earlier buffers said: NVTX range
// starts wait for their ends, contexts name their devices), so it is tested on
// machines without a GPU with buffers built from the real CUPTI structs and
// walked by CUPTI's own cuptiActivityGetNextRecord.
//
// Record kinds and what they become:
//   CONCURRENT_KERNEL (Kernel10)       kernels: demangled name, mangled kept, launch
//                                      shape, graph id/node id. Never KERNEL: it
//                                      serializes the GPU.
//   MEMCPY (Memcpy6), MEMCPY2 (P2P4)   memcpys with copy kind and pageable/pinned kinds
//   MEMSET (Memset4)                   memsets
//   RUNTIME, DRIVER (API)              api_calls (name from the callback id, "_vNNNN" cut)
//   SYNCHRONIZATION (Synchronization2) syncs; the waiting thread comes from the API call
//                                      with the same correlation (resolved at freeze)
//   MARKER, MARKER_DATA (NVTX)         ranges (push/pop, start/end) and marks with
//                                      color and integer payload
//   NAME                               track names (threads, streams)
//   DEVICE (Device5), CONTEXT (Context3), STREAM   devices, stream naming
//   OVERHEAD (Overhead3)               overheads (CUPTI's own time)
//   MEMORY2 (Memory4)                  memory_events (allocations > 0, releases < 0, address)
//                                      on the device's memory.allocated series, whose level
//                                      (each change added in the order CUPTI delivers them)
//                                      is sampled at every event; pinned and pageable host
//                                      memory on the host's series (no device)
//   MEMORY_POOL (MemoryPool3)          memory.reserved samples: the device's stream-ordered
//                                      pools' sizes plus its allocations outside pools
// Anything else is counted under "capture.skipped.<kind>" in the meta stats.
// GPU records whose timestamps are missing (start == end == 0 when CUPTI's
// device buffers overflowed) or inconsistent are counted under
// "capture.invalid_timestamps" and not added.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/builder.h"

namespace gpuscope::capture {

struct DecoderOptions {
  std::uint32_t pid = 0;                // this process; owner of GPU tracks and of records without a thread
  bool thread_names_from_proc = false;  // name CPU tracks of `pid` from /proc/<pid>/task/<tid>/comm
};

// Events decoded so far, by kind (what the summary prints).
struct DecodeCounts {
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, ranges = 0, syncs = 0, overheads = 0;
  std::uint64_t memory_events = 0;
  std::uint64_t invalid_timestamps = 0;
  std::uint64_t overhead_ns = 0;
  std::uint64_t records = 0;  // every record walked, kept or not
};

class RecordDecoder {
 public:
  RecordDecoder(TraceBuilder& builder, DecoderOptions options = {});

  // Decodes the records in buffer[0, valid_bytes). Returns the records walked.
  std::size_t decode(const std::uint8_t* buffer, std::size_t valid_bytes);

  // Ends NVTX ranges still open at `end_time` (counted in
  // "capture.nvtx.open_at_stop") and emits pending marks. Call once at stop.
  void finish(std::int64_t end_time);

  // Writes the decoder's statistics into `meta.stats` (set, not added).
  void write_stats(TraceMeta& meta) const;

  const DecodeCounts& counts() const { return counts_; }

 private:
  struct PendingMarker {
    std::int64_t start = 0;
    std::uint32_t pid = 0, tid = 0;
    StringId name = 0, domain = 0;
    std::uint32_t color = 0;
    std::int64_t payload = 0;
    bool instantaneous = false;
  };
  struct MarkerData {
    std::uint32_t color = 0;
    std::int64_t payload = 0;
  };

  void on_kernel(const void* record);
  void on_memcpy(const void* record);
  void on_memcpy_p2p(const void* record);
  void on_memset(const void* record);
  void on_api(const void* record, bool driver);
  void on_sync(const void* record);
  void on_marker(const void* record);
  void on_marker_data(const void* record);
  void on_name(const void* record);
  void on_device(const void* record);
  void on_context(const void* record);
  void on_stream(const void* record);
  void on_overhead(const void* record);
  void on_memory(const void* record);
  void on_memory_pool(const void* record);
  std::uint32_t memory_series(std::string_view name, std::uint32_t device);
  void sample_reserved(std::uint32_t device, TimeNs time);
  void flush_marks();
  void add_marker_range(const PendingMarker& p, TimeNs end, RangeKind kind);

  TrackId gpu_track(std::uint32_t device, std::uint32_t stream);
  TrackId cpu_track(std::uint32_t pid, std::uint32_t tid);
  StringId kernel_name(const char* raw, StringId* mangled);
  StringId api_name(bool driver, std::uint32_t cbid);
  template <class Record, class Row>
  bool timed_row(const Record& rec, Row& r);
  template <class Record, class Row>
  bool gpu_row(const Record& rec, Row& r);
  template <class Record>
  void add_memcpy(const Record& m, CopyKind kind);
  void skip(std::uint32_t kind);

  TraceBuilder& b_;
  DecoderOptions opt_;
  DecodeCounts counts_;

  std::unordered_map<std::uint64_t, TrackId> gpu_tracks_, cpu_tracks_;
  std::unordered_map<StringId, StringId> demangled_;                 // mangled -> display name
  std::vector<StringId> runtime_names_, driver_names_;               // by callback id, 0 = not looked up yet
  std::unordered_map<std::uint32_t, std::uint32_t> context_device_;  // CUPTI context id -> device
  std::unordered_map<std::uint64_t, std::uint32_t> null_streams_;  // (device, stream) that are a context's NULL stream
  std::unordered_map<std::uint64_t, std::int32_t> stream_priority_;  // (device, stream) -> priority, if not 0
  std::unordered_map<std::uint32_t, PendingMarker> open_markers_;    // NVTX id -> started range / mark
  std::unordered_map<std::uint32_t, MarkerData> early_data_;         // MARKER_DATA seen before its MARKER
  std::vector<std::uint32_t> pending_marks_;

  // Memory levels by device (kNoDevice: the host), as the records so far add up.
  struct DeviceMemory {
    std::int64_t allocated = 0;                              // live allocations
    std::int64_t outside_pools = 0;                          // … of them not from a stream-ordered pool
    std::unordered_map<std::uint64_t, std::uint64_t> pools;  // pool address -> size
  };
  std::unordered_map<std::uint32_t, DeviceMemory> memory_;
  std::unordered_map<std::uint64_t, std::uint32_t> memory_series_;  // (device, name hash) -> series id

  // Statistics beyond the counts.
  std::unordered_map<std::uint32_t, std::uint64_t> skipped_kinds_;
  std::uint64_t undecodable_buffers_ = 0, undecodable_bytes_ = 0, truncated_bytes_ = 0;
  std::uint64_t unmatched_range_ends_ = 0, ranges_open_at_stop_ = 0, marker_overflow_ = 0;
  std::uint64_t runtime_calls_ = 0, driver_calls_ = 0, device_launched_kernels_ = 0;
};

}  // namespace gpuscope::capture
