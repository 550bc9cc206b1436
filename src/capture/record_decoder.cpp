// [SECTION] Helpers
// [SECTION] Walking a buffer
// [SECTION] GPU work: kernels, memcpys, memsets
// [SECTION] CPU side: API calls, synchronization, overhead
// [SECTION] NVTX: markers, marker data, names
// [SECTION] Devices, contexts, streams
// [SECTION] Tracks and names
// [SECTION] Statistics
// [SECTION] Memory: allocations, releases, pools
#include "capture/record_decoder.h"

#include <cupti.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "trace/demangle.h"

namespace gpuscope::capture {

// [SECTION] Helpers ------------------------------------------------------------------------------

namespace {

constexpr std::uint64_t kMaxTime = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
// Bounds on state kept across buffers, so a misbehaving program (NVTX ranges
// started and never ended) cannot grow the collector without limit.
constexpr std::size_t kMaxOpenMarkers = 1u << 20;
constexpr std::size_t kMaxEarlyData = 1u << 16;
constexpr std::uint32_t kMaxCallbackId = 1u << 16;

std::uint64_t pack(std::uint32_t a, std::uint32_t b) { return (std::uint64_t{a} << 32) | b; }

// The track `key` stands for in `tracks`: added to the trace as make() gives
// it the first time.
template <class Make>
TrackId track_of(std::unordered_map<std::uint64_t, TrackId>& tracks, std::uint64_t key, TraceBuilder& b, Make&& make) {
  if (const auto it = tracks.find(key); it != tracks.end()) return it->second;
  const TrackId id = b.add_track(make());
  tracks.emplace(key, id);
  return id;
}

template <class T>
const T& as(const void* record) {
  return *static_cast<const T*>(record);
}

// Size of the records we know, to find a buffer's true end; 0 = unknown.
std::size_t record_size(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    default: return 0;
  }
}

std::string kind_name(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL: return "kernel_serialized";
    case CUPTI_ACTIVITY_KIND_MARKER: return "nvtx_sync_marker";
    case CUPTI_ACTIVITY_KIND_NAME: return "name_of_other_object";
    case CUPTI_ACTIVITY_KIND_CDP_KERNEL: return "cdp_kernel";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "external_correlation";
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return "cuda_event";
    case CUPTI_ACTIVITY_KIND_MEMORY2:  // only records of an operation type this decoder does not know
      return "memory2";
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "memory_pool";
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return "graph_trace";
    case CUPTI_ACTIVITY_KIND_JIT: return "jit";
    case CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE: return "device_attribute";
    case CUPTI_ACTIVITY_KIND_ENVIRONMENT: return "environment";
    case CUPTI_ACTIVITY_KIND_PREEMPTION: return "preemption";
    case CUPTI_ACTIVITY_KIND_FUNCTION: return "function";
    case CUPTI_ACTIVITY_KIND_MODULE: return "module";
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: return "unified_memory_counter";
    case CUPTI_ACTIVITY_KIND_NVLINK: return "nvlink";
    case CUPTI_ACTIVITY_KIND_PCIE: return "pcie";
    case CUPTI_ACTIVITY_KIND_OPENMP: return "openmp";
    default: return "kind_" + std::to_string(kind);
  }
}

CopyKind copy_kind(std::uint8_t k) {
  // CUPTI's CUpti_ActivityMemcpyKind numbers match CopyKind's 0..10.
  return k <= static_cast<std::uint8_t>(CopyKind::ptop) ? static_cast<CopyKind>(k) : CopyKind::unknown;
}

MemoryKind memory_kind(unsigned k) {
  // CUpti_ActivityMemoryKind numbers match MemoryKind's 0..7.
  return k <= static_cast<unsigned>(MemoryKind::managed_static) ? static_cast<MemoryKind>(k) : MemoryKind::unknown;
}

SyncType sync_type(std::uint32_t t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return SyncType::event;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return SyncType::stream_wait_event;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return SyncType::stream;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return SyncType::context;
    default: return SyncType::unknown;
  }
}

std::string_view overhead_kind_name(std::uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver_compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "cupti_buffer_flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "cupti_instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "cupti_resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "runtime_module_loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy_function_loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command_buffer_full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity_buffer_request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "uvm_activity_init";
    default: return "unknown";
  }
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; "cuMemcpy_v2" stays (that is the driver's own name).
std::string_view strip_version(std::string_view name) {
  const std::size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= name.size() || name.size() - v - 2 < 4) return name;
  for (std::size_t i = v + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, v);
}

std::string uuid_text(const CUuuid& u) {
  // nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  char out[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(out, sizeof out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return out;
}

std::string thread_name_from_proc(std::uint32_t pid, std::uint32_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace

RecordDecoder::RecordDecoder(TraceBuilder& builder, DecoderOptions options) : b_(builder), opt_(options) {}

// [SECTION] Walking a buffer ----------------------------------------------------------------------

std::size_t RecordDecoder::decode(const std::uint8_t* buffer, std::size_t valid_bytes) {
  if (!buffer || valid_bytes == 0) return 0;
  // cuptiActivityGetNextRecord takes a non-const buffer but only reads it.
  auto* data = const_cast<std::uint8_t*>(buffer);
  CUpti_Activity* record = nullptr;
  std::size_t walked = 0;
  std::size_t known_end = 0;  // end of the last record whose size we know
  bool end_known = true;
  CUptiResult status;
  while ((status = cuptiActivityGetNextRecord(data, valid_bytes, &record)) == CUPTI_SUCCESS) {
    ++walked;
    const std::uint32_t kind = record->kind;
    const std::size_t size = record_size(kind);
    const auto offset = static_cast<std::size_t>(reinterpret_cast<std::uint8_t*>(record) - data);
    end_known = size != 0;
    known_end = offset + size;
    switch (kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: on_kernel(record); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: on_memcpy(record); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2: on_memcpy_p2p(record); break;
      case CUPTI_ACTIVITY_KIND_MEMSET: on_memset(record); break;
      case CUPTI_ACTIVITY_KIND_RUNTIME: on_api(record, false); break;
      case CUPTI_ACTIVITY_KIND_DRIVER: on_api(record, true); break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: on_sync(record); break;
      case CUPTI_ACTIVITY_KIND_MARKER: on_marker(record); break;
      case CUPTI_ACTIVITY_KIND_MARKER_DATA: on_marker_data(record); break;
      case CUPTI_ACTIVITY_KIND_NAME: on_name(record); break;
      case CUPTI_ACTIVITY_KIND_DEVICE: on_device(record); break;
      case CUPTI_ACTIVITY_KIND_CONTEXT: on_context(record); break;
      case CUPTI_ACTIVITY_KIND_STREAM: on_stream(record); break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD: on_overhead(record); break;
      case CUPTI_ACTIVITY_KIND_MEMORY2: on_memory(record); break;
      case CUPTI_ACTIVITY_KIND_MEMORY_POOL: on_memory_pool(record); break;
      default: skip(kind); break;
    }
  }
  counts_.records += walked;
  const std::size_t rest = end_known && known_end < valid_bytes ? valid_bytes - known_end : 0;
  if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) {
    // The walk stops quietly before a record cut off by the end of the
    // buffer; a complete buffer ends exactly at its last record.
    truncated_bytes_ += rest;
  } else {
    // CUPTI_ERROR_INVALID_KIND: a record of a kind this CUPTI does not know
    // (or garbage); nothing after it can be found.
    ++undecodable_buffers_;
    undecodable_bytes_ += walked == 0 ? valid_bytes : rest;
  }
  flush_marks();
  return walked;
}

void RecordDecoder::skip(std::uint32_t kind) { ++skipped_kinds_[kind]; }

// A record's start and end into its row. start == end == 0: CUPTI's device
// buffer overflowed (no timing was collected). A zero start, an end before
// the start or an end that does not fit the model's int64 are just as
// unusable: false, and counted.
template <class Record, class Row>
bool RecordDecoder::timed_row(const Record& rec, Row& r) {
  if (rec.start == 0 || rec.end < rec.start || rec.end > kMaxTime) {
    ++counts_.invalid_timestamps;
    return false;
  }
  r.start = static_cast<TimeNs>(rec.start);
  r.end = static_cast<TimeNs>(rec.end);
  return true;
}

// What every GPU activity record has besides its times: stream, correlation
// id and CUDA graph node.
template <class Record, class Row>
bool RecordDecoder::gpu_row(const Record& rec, Row& r) {
  if (!timed_row(rec, r)) return false;
  r.track = gpu_track(rec.deviceId, rec.streamId);
  r.correlation = rec.correlationId;
  r.graph_id = rec.graphId;
  r.graph_node_id = rec.graphNodeId;
  return true;
}

// [SECTION] GPU work: kernels, memcpys, memsets ------------------------------------------------

void RecordDecoder::on_kernel(const void* record) {
  const auto& k = as<CUpti_ActivityKernel10>(record);
  KernelRow r;
  if (!gpu_row(k, r)) return;
  r.name = kernel_name(k.name, &r.mangled);
  auto dim = [](std::int32_t v) { return v < 0 ? 0u : static_cast<std::uint32_t>(v); };
  r.grid_x = dim(k.gridX);
  r.grid_y = dim(k.gridY);
  r.grid_z = dim(k.gridZ);
  r.block_x = dim(k.blockX);
  r.block_y = dim(k.blockY);
  r.block_z = dim(k.blockZ);
  r.registers = k.registersPerThread;
  r.static_smem = dim(k.staticSharedMemory);
  r.dynamic_smem = dim(k.dynamicSharedMemory);
  if (k.isDeviceLaunched) ++device_launched_kernels_;
  b_.add_kernel(r);
  ++counts_.kernels;
}

template <class Record>
void RecordDecoder::add_memcpy(const Record& m, CopyKind kind) {
  MemcpyRow r;
  if (!gpu_row(m, r)) return;
  r.bytes = m.bytes;
  r.kind = kind;
  r.src_kind = memory_kind(m.srcKind);
  r.dst_kind = memory_kind(m.dstKind);
  b_.add_memcpy(r);
  ++counts_.memcpys;
}

void RecordDecoder::on_memcpy(const void* record) {
  const auto& m = as<CUpti_ActivityMemcpy6>(record);
  add_memcpy(m, copy_kind(m.copyKind));
}

void RecordDecoder::on_memcpy_p2p(const void* record) {
  add_memcpy(as<CUpti_ActivityMemcpyPtoP4>(record), CopyKind::ptop);
}

void RecordDecoder::on_memset(const void* record) {
  const auto& m = as<CUpti_ActivityMemset4>(record);
  MemsetRow r;
  if (!gpu_row(m, r)) return;
  r.bytes = m.bytes;
  r.value = m.value;
  r.mem_kind = memory_kind(m.memoryKind);
  b_.add_memset(r);
  ++counts_.memsets;
}

// [SECTION] CPU side: API calls, synchronization, overhead ---------------------------------------

void RecordDecoder::on_api(const void* record, bool driver) {
  const auto& a = as<CUpti_ActivityAPI>(record);
  ApiCallRow r;
  if (!timed_row(a, r)) return;
  r.track = cpu_track(a.processId, a.threadId);
  r.correlation = a.correlationId;
  r.name = api_name(driver, a.cbid);
  r.domain = driver ? ApiDomain::driver : ApiDomain::runtime;
  r.cbid = a.cbid;
  r.status = static_cast<std::int32_t>(a.returnValue);
  b_.add_api_call(r);
  ++counts_.api_calls;
  ++(driver ? driver_calls_ : runtime_calls_);
}

void RecordDecoder::on_sync(const void* record) {
  const auto& s = as<CUpti_ActivitySynchronization2>(record);
  SyncRow r;
  if (!timed_row(s, r)) return;
  // The record names no thread: the API call with the same correlation
  // (cudaStreamSynchronize, …) does, possibly in another buffer or chunk.
  r.track = TraceBuilder::kResolveThroughCorrelation;
  r.correlation = s.correlationId;
  r.type = sync_type(s.type);
  const auto ctx = context_device_.find(s.contextId);
  r.device = ctx == context_device_.end() ? kNoDevice : ctx->second;
  const bool on_stream = r.type == SyncType::stream || r.type == SyncType::stream_wait_event;
  const bool on_event = r.type == SyncType::event || r.type == SyncType::stream_wait_event;
  r.stream = on_stream ? s.streamId : kNoId;
  r.event = on_event ? s.cudaEventId : kNoId;
  b_.add_sync(r);
  ++counts_.syncs;
}

void RecordDecoder::on_overhead(const void* record) {
  const auto& o = as<CUpti_ActivityOverhead3>(record);
  OverheadRow r;
  if (!timed_row(o, r)) return;
  // Overhead on a thread goes on that thread; anything else (device,
  // context, process) on the process's "CUPTI" row (tid 0).
  r.track = o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? cpu_track(o.objectId.pt.processId, o.objectId.pt.threadId)
                                                         : cpu_track(opt_.pid, 0);
  r.kind = b_.intern(overhead_kind_name(o.overheadKind));
  b_.add_overhead(r);
  ++counts_.overheads;
  counts_.overhead_ns += o.end - o.start;
}

// [SECTION] NVTX: markers, marker data, names ----------------------------------------------------

// A range (or mark) from NVTX marker `p`'s start to `end`.
void RecordDecoder::add_marker_range(const PendingMarker& p, TimeNs end, RangeKind kind) {
  RangeRow r;
  r.start = p.start;
  r.end = end;
  r.track = cpu_track(p.pid, p.tid);
  r.name = p.name;
  r.domain = p.domain;
  r.kind = kind;
  r.color = p.color;
  r.payload = p.payload;
  b_.add_range(r);
  ++counts_.ranges;
}

void RecordDecoder::on_marker(const void* record) {
  const auto& m = as<CUpti_ActivityMarker2>(record);
  const std::uint32_t flags = m.flags;
  const bool on_thread = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS;
  const std::uint32_t pid = on_thread ? m.objectId.pt.processId : opt_.pid;
  const std::uint32_t tid = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;

  if (flags & (CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS | CUPTI_ACTIVITY_FLAG_MARKER_START)) {
    if (m.timestamp == 0 || m.timestamp > kMaxTime) {
      ++counts_.invalid_timestamps;
      return;
    }
    if (open_markers_.size() >= kMaxOpenMarkers) {
      ++marker_overflow_;
      return;
    }
    PendingMarker p;
    p.start = static_cast<TimeNs>(m.timestamp);
    p.pid = pid;
    p.tid = tid;
    p.name = m.name ? b_.intern(m.name) : kEmptyString;
    p.domain = m.domain ? b_.intern(m.domain) : kEmptyString;
    p.instantaneous = (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0;
    if (auto d = early_data_.find(m.id); d != early_data_.end()) {
      p.color = d->second.color;
      p.payload = d->second.payload;
      early_data_.erase(d);
    }
    open_markers_[m.id] = p;
    if (p.instantaneous) pending_marks_.push_back(m.id);
    return;
  }
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    const auto it = open_markers_.find(m.id);
    if (it == open_markers_.end() || it->second.instantaneous) {
      ++unmatched_range_ends_;
      return;
    }
    const PendingMarker& p = it->second;
    if (m.timestamp < static_cast<std::uint64_t>(p.start) || m.timestamp > kMaxTime) {
      ++counts_.invalid_timestamps;
      open_markers_.erase(it);
      return;
    }
    // CUPTI does not say whether a range was pushed or started; a range that
    // ends on another thread can only be a start/end range.
    add_marker_range(p, static_cast<TimeNs>(m.timestamp),
                     tid == p.tid && pid == p.pid ? RangeKind::push_pop : RangeKind::start_end);
    open_markers_.erase(it);
    return;
  }
  // NVTX sync-user markers (acquire/release) have no place in the model yet.
  skip(CUPTI_ACTIVITY_KIND_MARKER);
}

void RecordDecoder::on_marker_data(const void* record) {
  const auto& d = as<CUpti_ActivityMarkerData2>(record);
  MarkerData data;
  if (d.flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) data.color = d.color;
  if (d.payloadKind == CUPTI_METRIC_VALUE_KIND_INT64)
    data.payload = d.payload.metricValueInt64;
  else if (d.payloadKind == CUPTI_METRIC_VALUE_KIND_UINT64)
    data.payload = static_cast<std::int64_t>(d.payload.metricValueUint64);
  if (auto it = open_markers_.find(d.id); it != open_markers_.end()) {
    it->second.color = data.color;
    it->second.payload = data.payload;
    return;
  }
  // Records in a buffer are not ordered: the marker may come later.
  if (early_data_.size() >= kMaxEarlyData) {
    ++marker_overflow_;
    early_data_.clear();
  }
  early_data_[d.id] = data;
}

void RecordDecoder::flush_marks() {
  for (std::uint32_t id : pending_marks_) {
    const auto it = open_markers_.find(id);
    if (it == open_markers_.end()) continue;
    add_marker_range(it->second, it->second.start, RangeKind::mark);
    open_markers_.erase(it);
  }
  pending_marks_.clear();
}

void RecordDecoder::on_name(const void* record) {
  const auto& n = as<CUpti_ActivityName>(record);
  if (!n.name) return;
  switch (n.objectKind) {
    case CUPTI_ACTIVITY_OBJECT_THREAD:
      b_.set_track_name(cpu_track(n.objectId.pt.processId, n.objectId.pt.threadId), n.name);
      break;
    case CUPTI_ACTIVITY_OBJECT_STREAM:
      b_.set_track_name(gpu_track(n.objectId.dcs.deviceId, n.objectId.dcs.streamId), n.name);
      break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
      b_.meta().set_property("device." + std::to_string(n.objectId.dcs.deviceId) + ".nvtx_name", n.name);
      break;
    default: skip(CUPTI_ACTIVITY_KIND_NAME); break;
  }
}

// [SECTION] Devices, contexts, streams -----------------------------------------------------------

void RecordDecoder::on_device(const void* record) {
  const auto& d = as<CUpti_ActivityDevice5>(record);
  Device dev;
  dev.id = d.id;
  dev.name = d.name ? d.name : "";
  dev.uuid = uuid_text(d.uuid);
  dev.compute_major = static_cast<std::int32_t>(d.computeCapabilityMajor);
  dev.compute_minor = static_cast<std::int32_t>(d.computeCapabilityMinor);
  dev.sm_count = d.numMultiprocessors;
  dev.memory_bytes = d.globalMemorySize;
  dev.core_clock_khz = d.coreClockRate;  // CUPTI reports kHz
  dev.max_threads_per_sm = d.maxWarpsPerMultiprocessor * d.numThreadsPerWarp;
  dev.max_blocks_per_sm = d.maxBlocksPerMultiprocessor;
  dev.max_threads_per_block = d.maxThreadsPerBlock;
  dev.registers_per_sm = d.maxRegistersPerMultiprocessor;
  dev.shared_memory_per_sm = d.maxSharedMemoryPerMultiprocessor;
  dev.warp_size = d.numThreadsPerWarp;
  dev.peak_memory_bandwidth = static_cast<double>(d.globalMemoryBandwidth) * 1000.0;  // KB/s -> B/s
  b_.add_device(dev);
}

void RecordDecoder::on_context(const void* record) {
  const auto& c = as<CUpti_ActivityContext3>(record);
  context_device_[c.contextId] = c.deviceId;
  null_streams_[pack(c.deviceId, c.nullStreamId)] = c.contextId;
  if (const auto t = gpu_tracks_.find(pack(c.deviceId, c.nullStreamId)); t != gpu_tracks_.end())
    b_.set_track_name(t->second, "stream " + std::to_string(c.nullStreamId) + " (default)");
}

void RecordDecoder::on_stream(const void* record) {
  const auto& s = as<CUpti_ActivityStream>(record);
  const auto ctx = context_device_.find(s.contextId);
  if (ctx == context_device_.end() || s.priority == 0) return;
  const auto prio = static_cast<std::int32_t>(s.priority);
  stream_priority_[pack(ctx->second, s.streamId)] = prio;
  if (const auto t = gpu_tracks_.find(pack(ctx->second, s.streamId)); t != gpu_tracks_.end())
    b_.set_track_name(t->second, "stream " + std::to_string(s.streamId) + " (priority " + std::to_string(prio) + ")");
}

// [SECTION] Tracks and names ---------------------------------------------------------------------

TrackId RecordDecoder::gpu_track(std::uint32_t device, std::uint32_t stream) {
  const std::uint64_t key = pack(device, stream);
  return track_of(gpu_tracks_, key, b_, [&] {
    Track t{TrackKind::gpu, device, stream, opt_.pid, 0, "stream " + std::to_string(stream)};
    if (null_streams_.count(key))
      t.name += " (default)";
    else if (const auto p = stream_priority_.find(key); p != stream_priority_.end())
      t.name += " (priority " + std::to_string(p->second) + ")";
    return t;
  });
}

TrackId RecordDecoder::cpu_track(std::uint32_t pid, std::uint32_t tid) {
  return track_of(cpu_tracks_, pack(pid, tid), b_, [&] {
    Track t{TrackKind::cpu, 0, 0, pid, tid, {}};
    if (tid == 0)
      t.name = "CUPTI";
    else if (opt_.thread_names_from_proc && pid == opt_.pid)
      t.name = thread_name_from_proc(pid, tid);
    return t;
  });
}

StringId RecordDecoder::kernel_name(const char* raw, StringId* mangled) {
  if (!raw || !*raw) {
    *mangled = kEmptyString;
    return b_.intern("<unnamed kernel>");
  }
  const StringId m = b_.intern(raw);
  auto [it, inserted] = demangled_.try_emplace(m, m);
  if (inserted) {
    const std::string d = demangle(raw);
    if (d != raw) it->second = b_.intern(d);
  }
  *mangled = it->second == m ? kEmptyString : m;
  return it->second;
}

StringId RecordDecoder::api_name(bool driver, std::uint32_t cbid) {
  std::vector<StringId>& cache = driver ? driver_names_ : runtime_names_;
  if (cbid < kMaxCallbackId && cbid < cache.size() && cache[cbid] != kEmptyString) return cache[cbid];
  const char* name = nullptr;
  const CUptiResult r =
      cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name);
  const StringId id = r == CUPTI_SUCCESS && name && *name
                          ? b_.intern(strip_version(name))
                          : b_.intern((driver ? "cuda_driver_cbid_" : "cuda_runtime_cbid_") + std::to_string(cbid));
  if (cbid < kMaxCallbackId) {
    if (cbid >= cache.size()) cache.resize(cbid + 1, kEmptyString);
    cache[cbid] = id;
  }
  return id;
}

// [SECTION] Statistics ---------------------------------------------------------------------------

void RecordDecoder::finish(std::int64_t end_time) {
  flush_marks();
  for (auto& [id, p] : open_markers_) {
    if (p.instantaneous) continue;
    add_marker_range(p, end_time > p.start ? end_time : p.start, RangeKind::push_pop);
    ++ranges_open_at_stop_;
  }
  open_markers_.clear();
  early_data_.clear();
}

// [SECTION] Memory: allocations, releases, pools ------------------------------------------------

std::uint32_t RecordDecoder::memory_series(std::string_view name, std::uint32_t device) {
  const std::uint64_t key = pack(device, name == series_name::kMemoryReserved ? 1 : 0);
  auto it = memory_series_.find(key);
  if (it == memory_series_.end()) it = memory_series_.emplace(key, b_.counter_series(name, device, "B")).first;
  return it->second;
}

void RecordDecoder::sample_reserved(std::uint32_t device, TimeNs time) {
  const DeviceMemory& m = memory_[device];
  std::uint64_t pools = 0;
  for (const auto& [address, size] : m.pools) pools += size;
  b_.add_counter(
      CounterRow{time, memory_series(series_name::kMemoryReserved, device),
                 static_cast<double>(pools) + static_cast<double>(std::max<std::int64_t>(0, m.outside_pools))});
}

void RecordDecoder::on_memory(const void* record) {
  const auto& m = as<CUpti_ActivityMemory4>(record);
  const bool alloc = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  if (!alloc && m.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) return skip(m.kind);
  if (m.timestamp == 0 || m.timestamp > kMaxTime || m.bytes > kMaxTime) {
    ++counts_.invalid_timestamps;
    return;
  }
  const bool host =
      m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED || m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  const std::uint32_t device = host ? kNoDevice : m.deviceId;
  const auto time = static_cast<TimeNs>(m.timestamp);
  const std::int64_t bytes = alloc ? static_cast<std::int64_t>(m.bytes) : -static_cast<std::int64_t>(m.bytes);
  const std::uint32_t series = memory_series(series_name::kMemoryAllocated, device);
  b_.add_memory_event(MemoryEventRow{time, series, bytes, m.address});
  ++counts_.memory_events;
  DeviceMemory& level = memory_[device];
  level.allocated += bytes;
  b_.add_counter(CounterRow{time, series, static_cast<double>(level.allocated)});
  // Allocations from a stream-ordered pool are inside the pool's size already.
  if (!host && m.memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
    level.outside_pools += bytes;
    sample_reserved(device, time);
  }
}

void RecordDecoder::on_memory_pool(const void* record) {
  const auto& p = as<CUpti_ActivityMemoryPool3>(record);
  if (p.timestamp == 0 || p.timestamp > kMaxTime) {
    ++counts_.invalid_timestamps;
    return;
  }
  DeviceMemory& m = memory_[p.deviceId];
  switch (p.memoryPoolOperationType) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED: m.pools[p.address] = p.size; break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED: m.pools.erase(p.address); break;
    default: return skip(p.kind);
  }
  sample_reserved(p.deviceId, static_cast<TimeNs>(p.timestamp));
}

void RecordDecoder::write_stats(TraceMeta& meta) const {
  meta.set_stat(stat_key::kInvalidTimestamps, counts_.invalid_timestamps);
  meta.set_stat("capture.records", counts_.records);
  meta.set_stat("capture.api.runtime", runtime_calls_);
  meta.set_stat("capture.api.driver", driver_calls_);
  meta.set_stat("capture.overhead_ns", counts_.overhead_ns);
  if (counts_.memory_events) meta.set_stat("capture.memory_events", counts_.memory_events);
  if (device_launched_kernels_) meta.set_stat("capture.kernels.device_launched", device_launched_kernels_);
  for (const auto& [kind, n] : skipped_kinds_) meta.set_stat("capture.skipped." + kind_name(kind), n);
  if (undecodable_buffers_) meta.set_stat("capture.undecodable_buffers", undecodable_buffers_);
  if (undecodable_bytes_) meta.set_stat("capture.undecodable_bytes", undecodable_bytes_);
  if (truncated_bytes_) meta.set_stat("capture.truncated_bytes", truncated_bytes_);
  if (unmatched_range_ends_) meta.set_stat("capture.nvtx.unmatched_ends", unmatched_range_ends_);
  if (ranges_open_at_stop_) meta.set_stat("capture.nvtx.open_at_stop", ranges_open_at_stop_);
  if (marker_overflow_) meta.set_stat("capture.nvtx.dropped_state", marker_overflow_);
}

}  // namespace gpuscope::capture
