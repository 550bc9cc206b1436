// Collector: the consumer side of a capture session.
//
// One thread pops the buffers CUPTI filled (BufferPool::pop_completed),
// decodes them into a TraceBuilder, gives them back to the pool, keeps a few
// buffers free ahead of demand (the only place buffers are allocated), and
// every `flush_interval` appends the decoded rows to the sink as one chunk.
// stop() drains what is left, closes open NVTX ranges, writes the last chunk
// and finishes the file.
//
// The collector knows nothing of CUPTI's enable/flush calls: the controller
// drives those through hooks that run on the consumer thread: `tick` at every
// poll (timers, periodic flush) and `before_finish` once, before the final
// drain (CUPTI's forced flush).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "capture/buffer_pool.h"
#include "capture/chunk_sink.h"
#include "capture/record_decoder.h"
#include "trace/builder.h"

namespace gpuscope::capture {

struct CollectorOptions {
  std::chrono::milliseconds flush_interval{1000};  // a chunk goes to the sink at least this often
  std::chrono::milliseconds poll_interval{20};     // how often filled buffers are looked for
  std::size_t max_chunk_rows = 1u << 20;           // …or as soon as this many rows wait
  std::size_t free_buffers_target = 4;             // buffers kept free ahead of CUPTI's requests
  DecoderOptions decoder;
};

struct CollectorStats {
  DecodeCounts counts;
  std::uint64_t dropped_records = 0;   // CUPTI's count (buffers full or declined)
  std::uint64_t declined_buffers = 0;  // requests the pool could not serve
  std::uint64_t buffers_decoded = 0;
  std::uint64_t chunks_written = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t pool_peak_bytes = 0;
  std::uint64_t pool_bytes = 0;  // allocated now
  bool write_failed = false;     // the sink failed: rows since then are discarded
  std::string write_error;
};

class Collector {
 public:
  // `setup` fills the builder's meta, processes… before anything is decoded.
  Collector(BufferPool& pool, std::unique_ptr<ChunkSink> sink, const std::function<void(TraceBuilder&)>& setup,
            CollectorOptions options);
  ~Collector();  // stops (as stop(0)) if still running
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // Called on the consumer thread before every poll (timers, periodic CUPTI flush).
  void set_tick(std::function<void()> tick) { tick_ = std::move(tick); }
  // Called on the consumer thread once the loop ends, before the final drain.
  void set_before_finish(std::function<void()> f) { before_finish_ = std::move(f); }
  // Called on the consumer thread after every drain, to add rows of other
  // sources (device sampling) to the builder.
  void set_add_rows(std::function<void(TraceBuilder&)> f) { add_rows_ = std::move(f); }
  // Called on the consumer thread after every chunk written (summary files).
  void set_on_chunk(std::function<void(const CollectorStats&)> f) { on_chunk_ = std::move(f); }

  void start();
  std::uint64_t chunks_written() const noexcept { return chunks_.load(std::memory_order_acquire); }
  // Drains, ends open ranges at `end_time`, writes the last chunk, finishes
  // the sink and joins the thread. Idempotent.
  CollectorStats stop(std::int64_t end_time);
  // The same without waiting: the consumer finishes on its own (within a
  // poll interval). Async-signal-safe; finished() tells when it is done.
  void request_finish(std::int64_t end_time) noexcept;
  bool finished() const noexcept { return finished_.load(std::memory_order_acquire); }
  // Waits up to `timeout` for finished(); joins the thread when it is.
  bool wait_finished(std::chrono::milliseconds timeout);
  CollectorStats stats() const;
  const std::string& path() const { return path_; }

 private:
  void run();
  void drain();
  void write_chunk();
  void publish();

  BufferPool& pool_;
  std::unique_ptr<ChunkSink> sink_;
  CollectorOptions opt_;
  std::string path_;
  TraceBuilder builder_;
  RecordDecoder decoder_;
  std::function<void()> tick_, before_finish_;
  std::function<void(const CollectorStats&)> on_chunk_;
  std::function<void(TraceBuilder&)> add_rows_;

  std::thread thread_;
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_requested_{false}, finished_{false};
  std::atomic<std::uint64_t> chunks_{0};
  std::atomic<std::int64_t> end_time_{0};
  std::uint64_t declined_base_ = 0;
  bool started_ = false, stopped_ = false;

  // Consumer-thread state, published to stats_ under stats_mutex_.
  CollectorStats local_;
  mutable std::mutex stats_mutex_;
  CollectorStats stats_;
};

}  // namespace gpuscope::capture
