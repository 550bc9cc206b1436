// [SECTION] Process-wide state
// [SECTION] Buffer callbacks (CUPTI -> pool)
// [SECTION] API and NVTX callbacks (capture ranges, device reset)
// [SECTION] Subscribe / enable / flush
// [SECTION] Explaining failures
#include "capture/cupti_tracer.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

namespace gpuscope::capture::cupti {

// [SECTION] Process-wide state -------------------------------------------------------------------

namespace {

struct State {
  std::atomic<BufferPool*> pool{nullptr};
  std::atomic<bool> inert{false};
  // Capture-range hooks and the NVTX name to match; written before the
  // callbacks that read them are enabled.
  std::atomic<void (*)()> on_begin{nullptr}, on_end{nullptr};
  std::atomic<bool> watch_profiler_api{false}, watch_nvtx{false};
  std::string nvtx_name;
  std::atomic<std::uint64_t> nvtx_range_id{0};  // the matching start/end range, 0 = none

  std::mutex mutex;  // subscribe/enable/disable; never taken inside a CUPTI callback
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled;
};

State& state() {
  static State* s = new State;  // never destroyed: CUPTI may call back during exit
  return *s;
}

// f(s) with the state locked; false, with `failure` in *error, when it
// throws.
template <class F>
bool locked_or_failed(std::string* error, const char* failure, F&& f) noexcept {
  State& s = state();
  std::lock_guard lock(s.mutex);
  try {
    return f(s);
  } catch (...) {
    if (error) *error = failure;
    return false;
  }
}

// Runtime and driver calls that are frequent and say nothing about GPU work
// (device/attribute queries, error polling, event bookkeeping).
constexpr CUpti_CallbackId kNoisyRuntimeCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPoint_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPointByVersion_v12050,
    CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000,
};
constexpr CUpti_CallbackId kNoisyDriverCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetId,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetFlags,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetStreamPriorityRange,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetName,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGetExportTable,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorName,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
    CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
    CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction,
    CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel,
    CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction,
};

}  // namespace

// [SECTION] Buffer callbacks (CUPTI -> pool) -----------------------------------------------------
// Called on application threads (requests) and CUPTI's thread (completions).
// Only hand buffers over: no lock, no allocation, no exception.

namespace detail {

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept {
  State& s = state();
  BufferPool* pool = s.pool.load(std::memory_order_acquire);
  std::uint8_t* b = pool && !s.inert.load(std::memory_order_relaxed) ? pool->acquire() : nullptr;
  // Declining (nullptr) is allowed since CUPTI 12.9: CUPTI drops the records
  // and counts them, which the dropped-records statistic then shows.
  *buffer = b;
  *size = b ? pool->buffer_bytes() : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) noexcept {
  State& s = state();
  BufferPool* pool = s.pool.load(std::memory_order_acquire);
  if (!pool) return;
  // No lock of ours is held here, so asking CUPTI cannot deadlock against a
  // callback that takes it (the ABBA Kineto ran into).
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped) pool->note_dropped(dropped);
  if (!buffer) return;
  if (s.inert.load(std::memory_order_relaxed)) {
    pool->recycle(buffer);
    return;
  }
  pool->complete(buffer, valid);  // false: not ours; nothing to do
}

}  // namespace detail

namespace {

// [SECTION] API and NVTX callbacks (capture ranges, device reset) --------------------------------

void range_begin() {
  if (auto f = state().on_begin.load(std::memory_order_acquire)) f();
}
void range_end() {
  if (auto f = state().on_end.load(std::memory_order_acquire)) f();
}

const char* nvtx_message(const nvtxEventAttributes_t* a) {
  return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : nullptr;
}

bool nvtx_matches(const char* message) {
  const std::string& want = state().nvtx_name;
  return message && want == message;
}

// Depth of push/pop ranges opened inside the matching range on this thread;
// -1 when this thread is not inside one.
thread_local int tl_nvtx_depth = -1;

void on_nvtx_push(const char* message) {
  if (tl_nvtx_depth >= 0) {
    ++tl_nvtx_depth;
  } else if (nvtx_matches(message)) {
    tl_nvtx_depth = 0;
    range_begin();
  }
}

void on_nvtx_pop() {
  if (tl_nvtx_depth > 0) {
    --tl_nvtx_depth;
  } else if (tl_nvtx_depth == 0) {
    tl_nvtx_depth = -1;
    range_end();
  }
}

void on_nvtx_start(const char* message, const void* return_value) {
  if (!nvtx_matches(message) || !return_value) return;
  const auto id = *static_cast<const nvtxRangeId_t*>(return_value);
  std::uint64_t none = 0;
  if (state().nvtx_range_id.compare_exchange_strong(none, id)) range_begin();
}

void on_nvtx_end(nvtxRangeId_t id) {
  std::uint64_t want = id;
  if (id != 0 && state().nvtx_range_id.compare_exchange_strong(want, 0)) range_end();
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  State& s = state();
  if (s.inert.load(std::memory_order_relaxed) || !data) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    const bool enter = cb->callbackSite == CUPTI_API_ENTER;
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 && enter) {
      // A reset destroys the context and the records CUPTI still holds for
      // it: hand them over first (NVIDIA's injection sample does the same).
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      return;
    }
    if (!s.watch_profiler_api.load(std::memory_order_relaxed)) return;
    const bool start = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                               : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    const bool stop = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                              : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
    // Record from just after the start call to just before the stop call.
    if (start && !enter) range_begin();
    if (stop && enter) range_end();
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_NVTX && s.watch_nvtx.load(std::memory_order_relaxed)) {
    const auto* nv = static_cast<const CUpti_NvtxData*>(data);
    const void* p = nv->functionParams;
    if (!p) return;
    switch (cbid) {
      case CUPTI_CBID_NVTX_nvtxRangePushA: on_nvtx_push(static_cast<const nvtxRangePushA_params*>(p)->message); break;
      case CUPTI_CBID_NVTX_nvtxRangePushEx:
        on_nvtx_push(nvtx_message(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        on_nvtx_push(nvtx_message(static_cast<const nvtxDomainRangePushEx_params*>(p)->core.eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxRangePop:
      case CUPTI_CBID_NVTX_nvtxDomainRangePop: on_nvtx_pop(); break;
      case CUPTI_CBID_NVTX_nvtxRangeStartA:
        on_nvtx_start(static_cast<const nvtxRangeStartA_params*>(p)->message, nv->functionReturnValue);
        break;
      case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        on_nvtx_start(nvtx_message(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib),
                      nv->functionReturnValue);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
        on_nvtx_start(nvtx_message(static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib),
                      nv->functionReturnValue);
        break;
      case CUPTI_CBID_NVTX_nvtxRangeEnd: on_nvtx_end(static_cast<const nvtxRangeEnd_params*>(p)->id); break;
      case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
        on_nvtx_end(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
        break;
      default: break;
    }
  }
}

CUptiResult enable_callback(CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return cuptiEnableCallback(1, sub, domain, cbid);
}

void append(std::string* list, const std::string& item) {
  if (!list) return;
  if (!list->empty()) *list += "; ";
  *list += item;
}

}  // namespace

// [SECTION] Subscribe / enable / flush -----------------------------------------------------------

void set_buffer_pool(BufferPool* pool) noexcept { state().pool.store(pool, std::memory_order_release); }

void make_inert() noexcept { state().inert.store(true, std::memory_order_relaxed); }

bool subscribed() noexcept {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.subscriber != nullptr;
}

bool subscribe(const CaptureRange& range, RangeHooks hooks, std::string* error) noexcept {
  return locked_or_failed(error, "cuptiSubscribe: unexpected failure", [&](State& s) {
    if (s.subscriber) return true;
    s.on_begin.store(hooks.begin, std::memory_order_release);
    s.on_end.store(hooks.end, std::memory_order_release);
    s.nvtx_name = range.nvtx_name;
    s.nvtx_range_id.store(0);

    char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = {};
    CUpti_SubscriberParams params;
    std::memset(&params, 0, sizeof params);
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "gpuscope";
    params.oldSubscriberName = other;
    params.oldSubscriberSize = sizeof other;
    CUpti_SubscriberHandle sub = nullptr;
    CUptiResult r = cuptiSubscribe_v2(&sub, reinterpret_cast<CUpti_CallbackFunc>(&on_callback), nullptr, &params);
    if (r != CUPTI_SUCCESS) {
      bool check = false;
      if (error) *error = explain_failure("cuptiSubscribe", r, other, &check);
      return false;
    }
    // Thread ids as the kernel numbers them (gettid), matching /proc and NVTX.
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    r = cuptiActivityRegisterCallbacks(&detail::buffer_requested, &detail::buffer_completed);
    if (r != CUPTI_SUCCESS) {
      cuptiUnsubscribe(sub);
      bool check = false;
      if (error) *error = explain_failure("cuptiActivityRegisterCallbacks", r, "", &check);
      return false;
    }
    enable_callback(sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    s.watch_profiler_api.store(range.kind == CaptureRange::Kind::cuda_profiler_api);
    s.watch_nvtx.store(range.kind == CaptureRange::Kind::nvtx);
    if (range.kind == CaptureRange::Kind::cuda_profiler_api) {
      enable_callback(sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
      enable_callback(sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
      enable_callback(sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
      enable_callback(sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    } else if (range.kind == CaptureRange::Kind::nvtx) {
      for (CUpti_CallbackId id :
           {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
            CUPTI_CBID_NVTX_nvtxRangePop, CUPTI_CBID_NVTX_nvtxDomainRangePop, CUPTI_CBID_NVTX_nvtxRangeStartA,
            CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
            CUPTI_CBID_NVTX_nvtxDomainRangeEnd})
        enable_callback(sub, CUPTI_CB_DOMAIN_NVTX, id);
    }
    s.subscriber = sub;
    return true;
  });
}

void unsubscribe() noexcept {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.subscriber) return;
  s.watch_profiler_api.store(false);
  s.watch_nvtx.store(false);
  cuptiUnsubscribe(s.subscriber);
  s.subscriber = nullptr;
}

namespace {
// CUPTI's enum names, for messages about the kinds activity_kinds() asks for.
std::string activity_kind_name(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_DEVICE: return "DEVICE";
    case CUPTI_ACTIVITY_KIND_CONTEXT: return "CONTEXT";
    case CUPTI_ACTIVITY_KIND_STREAM: return "STREAM";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_MARKER: return "MARKER";
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return "MARKER_DATA";
    case CUPTI_ACTIVITY_KIND_NAME: return "NAME";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "MEMORY_POOL";
    default: return std::to_string(kind);
  }
}
}  // namespace

std::vector<ActivityKindPlan> activity_kinds(unsigned trace) {
  std::vector<ActivityKindPlan> wants = {
      {CUPTI_ACTIVITY_KIND_DEVICE, false, true},
      {CUPTI_ACTIVITY_KIND_CONTEXT, false, true},
      {CUPTI_ACTIVITY_KIND_STREAM, false, true},
      {CUPTI_ACTIVITY_KIND_OVERHEAD, false, false},
  };
  // CONCURRENT_KERNEL, never KERNEL: KERNEL serializes every kernel on the GPU.
  if (trace & kKernel) wants.push_back({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, true, false});
  if (trace & kMemcpy) {
    wants.push_back({CUPTI_ACTIVITY_KIND_MEMCPY, true, false});
    wants.push_back({CUPTI_ACTIVITY_KIND_MEMCPY2, false, false});
    wants.push_back({CUPTI_ACTIVITY_KIND_MEMSET, false, false});
    // Allocations, releases and stream-ordered pools: the memory series.
    wants.push_back({CUPTI_ACTIVITY_KIND_MEMORY2, false, false});
    wants.push_back({CUPTI_ACTIVITY_KIND_MEMORY_POOL, false, false});
  }
  if (trace & kApi) {
    wants.push_back({CUPTI_ACTIVITY_KIND_RUNTIME, true, false});
    // Triton, cuBLASLt and others launch through the driver directly.
    wants.push_back({CUPTI_ACTIVITY_KIND_DRIVER, false, false});
  }
  if (trace & kNvtx) {
    // MARKER before MARKER_DATA, as CUPTI requires.
    wants.push_back({CUPTI_ACTIVITY_KIND_MARKER, false, false});
    wants.push_back({CUPTI_ACTIVITY_KIND_MARKER_DATA, false, false});
    wants.push_back({CUPTI_ACTIVITY_KIND_NAME, false, false});
  }
  if (trace & kSync) wants.push_back({CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, false, false});
  return wants;
}

std::vector<std::uint32_t> trimmed_callbacks(bool driver) {
  if (driver) return {std::begin(kNoisyDriverCalls), std::end(kNoisyDriverCalls)};
  return {std::begin(kNoisyRuntimeCalls), std::end(kNoisyRuntimeCalls)};
}

bool enable(unsigned trace, std::string* warnings, std::string* error) noexcept {
  return locked_or_failed(error, "enabling CUPTI activity: unexpected failure", [&](State& s) {
    if (!s.enabled.empty()) return true;
    const std::vector<ActivityKindPlan> wants = activity_kinds(trace);
    bool essential_failed = false;
    for (const ActivityKindPlan& w : wants) {
      const auto kind = static_cast<CUpti_ActivityKind>(w.kind);
      CUptiResult r = w.dump ? cuptiActivityEnableAndDump(kind) : cuptiActivityEnable(kind);
      if (r != CUPTI_SUCCESS && w.dump) r = cuptiActivityEnable(kind);
      if (r == CUPTI_SUCCESS) {
        s.enabled.push_back(kind);
        continue;
      }
      bool check = false;
      const std::string why = explain_failure("enabling activity kind " + activity_kind_name(w.kind), r, "", &check);
      if (w.essential && !essential_failed) {
        essential_failed = true;
        if (error) *error = why;
      } else if (!w.essential) {
        append(warnings, why);
      }
    }
    if (essential_failed) {
      for (CUpti_ActivityKind k : s.enabled) cuptiActivityDisable(k);
      s.enabled.clear();
      return false;
    }
    // Per-call trimming applies after the kind is enabled (enabling resets it).
    if (trace & kApi) {
      for (CUpti_CallbackId id : kNoisyRuntimeCalls) cuptiActivityEnableRuntimeApi(id, 0);
      for (CUpti_CallbackId id : kNoisyDriverCalls) cuptiActivityEnableDriverApi(id, 0);
    }
    // Only syncs that actually waited, not every unfinished cudaEventQuery poll.
    if (trace & kSync) cuptiActivityEnableAllSyncRecords(0);
    return true;
  });
}

void disable() noexcept {
  State& s = state();
  std::lock_guard lock(s.mutex);
  // Reverse order: MARKER_DATA goes before MARKER.
  for (auto it = s.enabled.rbegin(); it != s.enabled.rend(); ++it) cuptiActivityDisable(*it);
  s.enabled.clear();
}

void flush(bool forced) noexcept { cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0); }

std::int64_t timestamp() noexcept {
  std::uint64_t t = 0;
  return cuptiGetTimestamp(&t) == CUPTI_SUCCESS ? static_cast<std::int64_t>(t) : 0;
}

std::string version() noexcept {
  std::uint32_t v = 0;
  try {
    return cuptiGetVersion(&v) == CUPTI_SUCCESS ? "CUPTI " + std::to_string(v) : "CUPTI (unknown version)";
  } catch (...) {
    return {};
  }
}

std::string result_name(int result) {
  const char* s = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(result), &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(result);
}

// [SECTION] Explaining failures ------------------------------------------------------------------

std::string explain_failure(const std::string& step, int result, const std::string& other_client,
                            bool* needs_driver_check) {
  if (needs_driver_check) *needs_driver_check = false;
  const std::string code = result_name(result);
  switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "CUPTI is already in use by another profiler" + (other_client.empty() ? "" : " (" + other_client + ")") +
             "; only one tool can trace a process, so gpuscope captured nothing here (" + code + ")";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "insufficient privileges to trace the GPU (the driver may restrict profiling to administrators: "
             "NVreg_RestrictProfilingToAdminUsers); run as root or ask an administrator (" +
             step + ": " + code + ")";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED: return "this GPU setup does not support CUPTI tracing (" + step + ": " + code + ")";
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_INVALID_CONTEXT:
    case CUPTI_ERROR_NOT_COMPATIBLE:
      if (needs_driver_check) *needs_driver_check = true;
      return "CUPTI could not start (" + step + ": " + code + ")";
    default: return step + " failed: " + code;
  }
}

}  // namespace gpuscope::capture::cupti
