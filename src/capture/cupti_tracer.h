// The CUPTI wrapper: the only file that turns tracing on and off.
//
// CUPTI state is per process, so this is a set of functions over one hidden
// process-wide state, not an object. It
//  * subscribes gpuscope as the process's (single) CUPTI client and
//    registers the activity-buffer callbacks, which only hand buffers between
//    CUPTI and the BufferPool: never a lock, an allocation or an exception;
//  * enables the activity kinds for a TraceFlags mask (CONCURRENT_KERNEL, never
//    KERNEL) and trims the noisy runtime/driver calls;
//  * watches the few API calls the controller needs: cudaDeviceReset (flush
//    before the context's records are lost), cudaProfilerStart/Stop and NVTX
//    ranges (capture ranges);
//  * explains failures in words (another profiler holds CUPTI, no driver,
//    insufficient privileges).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture/buffer_pool.h"
#include "capture/options.h"

namespace gpuscope::capture::cupti {

// Where CUPTI's buffer requests and completions go. Set before subscribing;
// the pool must live as long as the process.
void set_buffer_pool(BufferPool* pool) noexcept;
// In a child forked without exec: buffer requests are declined and completed
// buffers recycled unread, so the inherited CUPTI state can do no harm.
void make_inert() noexcept;

// The controller's side of capture ranges, called on application threads
// from inside CUPTI callbacks: must be short and never throw.
struct RangeHooks {
  void (*begin)() = nullptr;  // cudaProfilerStart, or an NVTX range named as asked opened
  void (*end)() = nullptr;    // cudaProfilerStop, or that range closed
};

// Becomes the process's CUPTI subscriber. False with *error (a sentence for
// people) when CUPTI refuses: another profiler, no driver, privileges…
bool subscribe(const CaptureRange& range, RangeHooks hooks, std::string* error) noexcept;
void unsubscribe() noexcept;
bool subscribed() noexcept;

// The activity kinds enable() asks for, in order, for a TraceFlags mask.
// `kind` is a CUpti_ActivityKind; `essential`: the capture fails without it;
// `dump`: enabled with cuptiActivityEnableAndDump (late attach).
struct ActivityKindPlan {
  std::uint32_t kind = 0;
  bool essential = false;
  bool dump = false;
};
std::vector<ActivityKindPlan> activity_kinds(unsigned trace);
// The runtime (or driver) callback ids whose API records are switched off.
std::vector<std::uint32_t> trimmed_callbacks(bool driver);

// Enables the activity kinds of `trace` plus device/context/stream/overhead
// records. Kinds CUPTI refuses are named in *warnings. False with *error when
// not even kernels or API calls (whichever were asked) could be enabled.
bool enable(unsigned trace, std::string* warnings, std::string* error) noexcept;
// Disables every kind enable() turned on.
void disable() noexcept;
// Asks CUPTI to hand back buffers: complete ones, or (forced) all of them.
// Never from a CUPTI callback.
void flush(bool forced) noexcept;

std::int64_t timestamp() noexcept;    // CUPTI's clock (CLOCK_REALTIME ns), 0 if unavailable
std::string version() noexcept;       // "CUPTI 130001"
std::string result_name(int result);  // "CUPTI_ERROR_UNKNOWN"

// The sentence subscribe()/enable() report for a CUPTI failure at `step`.
// `other_client` is the name CUPTI gave for the subscriber already present.
// `needs_driver_check` is set when the cause may be a missing driver/device
// (the caller then asks the driver and adds what it says).
std::string explain_failure(const std::string& step, int result, const std::string& other_client,
                            bool* needs_driver_check);

}  // namespace gpuscope::capture::cupti

struct CUctx_st;  // CUcontext, without including cuda.h here

namespace gpuscope::capture::cupti {

namespace detail {
// CUPTI's buffer callbacks, exposed so tests can call them from many threads.
void buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept;
void buffer_completed(CUctx_st* context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                      std::size_t valid) noexcept;
}  // namespace detail

}  // namespace gpuscope::capture::cupti
