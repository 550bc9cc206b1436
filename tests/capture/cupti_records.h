// Builds CUPTI activity buffers from the real CUPTI 13 record structs, packed
// back to back as CUPTI packs them (each record 8-byte aligned, stride =
// sizeof the struct), so tests can feed the decoder what a GPU would produce.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace gpuscope::capture::testing {

class RecordBuffer {
 public:
  template <class T>
  void add(const T& record) {
    static_assert(sizeof(T) % 8 == 0, "CUPTI records are 8-byte multiples");
    const std::size_t at = bytes_;
    bytes_ += sizeof(T);
    words_.resize(bytes_ / 8);
    std::memcpy(reinterpret_cast<std::uint8_t*>(words_.data()) + at, &record, sizeof(T));
  }
  // Raw bytes (e.g. a record of a kind CUPTI does not know).
  void add_raw(std::uint32_t kind, std::size_t size) {
    const std::size_t at = bytes_;
    bytes_ += (size + 7) / 8 * 8;
    words_.resize(bytes_ / 8);
    std::memcpy(reinterpret_cast<std::uint8_t*>(words_.data()) + at, &kind, sizeof kind);
  }
  const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(words_.data()); }
  std::uint8_t* data() { return reinterpret_cast<std::uint8_t*>(words_.data()); }
  std::size_t size() const { return bytes_; }

 private:
  std::vector<std::uint64_t> words_;  // 8-byte alignment for free
  std::size_t bytes_ = 0;
};

inline CUpti_ActivityKernel10 kernel_record(std::uint64_t start, std::uint64_t end, std::uint32_t device,
                                            std::uint32_t stream, std::uint32_t correlation, const char* name) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.correlationId = correlation;
  k.name = name;
  k.gridX = k.gridY = k.gridZ = 1;
  k.blockX = k.blockY = k.blockZ = 1;
  return k;
}

inline CUpti_ActivityAPI api_record(bool driver, std::uint32_t cbid, std::uint64_t start, std::uint64_t end,
                                    std::uint32_t pid, std::uint32_t tid, std::uint32_t correlation) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof a);
  a.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = pid;
  a.threadId = tid;
  a.correlationId = correlation;
  return a;
}

inline CUpti_ActivityMemcpy6 memcpy_record(std::uint64_t start, std::uint64_t end, std::uint32_t device,
                                           std::uint32_t stream, std::uint32_t correlation, std::uint64_t bytes,
                                           CUpti_ActivityMemcpyKind kind, CUpti_ActivityMemoryKind src,
                                           CUpti_ActivityMemoryKind dst) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = static_cast<std::uint8_t>(kind);
  m.srcKind = static_cast<std::uint8_t>(src);
  m.dstKind = static_cast<std::uint8_t>(dst);
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = device;
  m.contextId = 1;
  m.streamId = stream;
  m.correlationId = correlation;
  return m;
}

inline CUpti_ActivityMemset4 memset_record(std::uint64_t start, std::uint64_t end, std::uint32_t device,
                                           std::uint32_t stream, std::uint32_t correlation, std::uint64_t bytes,
                                           std::uint32_t value) {
  CUpti_ActivityMemset4 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = value;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = device;
  m.contextId = 1;
  m.streamId = stream;
  m.correlationId = correlation;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return m;
}

inline CUpti_ActivityMarker2 marker_record(std::uint32_t flags, std::uint64_t timestamp, std::uint32_t id,
                                           std::uint32_t pid, std::uint32_t tid, const char* name,
                                           const char* domain = nullptr) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.timestamp = timestamp;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = pid;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

inline CUpti_ActivityMarkerData2 marker_data_record(std::uint32_t id, std::uint32_t argb, std::int64_t payload) {
  CUpti_ActivityMarkerData2 d;
  std::memset(&d, 0, sizeof d);
  d.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  d.flags = static_cast<CUpti_ActivityFlag>(CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB);
  d.id = id;
  d.color = argb;
  d.payloadKind = CUPTI_METRIC_VALUE_KIND_INT64;
  d.payload.metricValueInt64 = payload;
  return d;
}

inline CUpti_ActivitySynchronization2 sync_record(CUpti_ActivitySynchronizationType type, std::uint64_t start,
                                                  std::uint64_t end, std::uint32_t correlation, std::uint32_t context,
                                                  std::uint32_t stream, std::uint32_t event) {
  CUpti_ActivitySynchronization2 s;
  std::memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.start = start;
  s.end = end;
  s.correlationId = correlation;
  s.contextId = context;
  s.streamId = stream;
  s.cudaEventId = event;
  return s;
}

inline CUpti_ActivityContext3 context_record(std::uint32_t context, std::uint32_t device, std::uint16_t null_stream) {
  CUpti_ActivityContext3 c;
  std::memset(&c, 0, sizeof c);
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = context;
  c.deviceId = device;
  c.nullStreamId = null_stream;
  return c;
}

inline CUpti_ActivityOverhead3 overhead_record(CUpti_ActivityOverheadKind kind, std::uint64_t start, std::uint64_t end,
                                               std::uint32_t pid, std::uint32_t tid) {
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof o);
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = kind;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = pid;
  o.objectId.pt.threadId = tid;
  o.start = start;
  o.end = end;
  return o;
}

// An allocation (bytes > 0) or a release (bytes < 0) as CUPTI's MEMORY2
// activity reports it; `pool` != 0: from that stream-ordered pool.
inline CUpti_ActivityMemory4 memory_record(std::uint64_t timestamp, std::uint32_t device, std::int64_t bytes,
                                           std::uint64_t address, CUpti_ActivityMemoryKind kind,
                                           std::uint64_t pool = 0) {
  CUpti_ActivityMemory4 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType =
      bytes >= 0 ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.memoryKind = kind;
  m.address = address;
  m.bytes = static_cast<std::uint64_t>(bytes >= 0 ? bytes : -bytes);
  m.timestamp = timestamp;
  m.deviceId = device;
  m.contextId = 1;
  m.processId = 4242;
  if (pool) {
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m.memoryPoolConfig.address = pool;
  }
  return m;
}

inline CUpti_ActivityMemoryPool3 memory_pool_record(std::uint64_t timestamp, std::uint32_t device,
                                                    CUpti_ActivityMemoryPoolOperationType op, std::uint64_t address,
                                                    std::uint64_t size) {
  CUpti_ActivityMemoryPool3 p;
  std::memset(&p, 0, sizeof p);
  p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  p.memoryPoolOperationType = op;
  p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  p.deviceId = device;
  p.address = address;
  p.size = size;
  p.timestamp = timestamp;
  return p;
}

}  // namespace gpuscope::capture::testing
