#include "capture/collector.h"

#include <signal.h>

#include <exception>

namespace gpuscope::capture {

Collector::Collector(BufferPool& pool, std::unique_ptr<ChunkSink> sink, const std::function<void(TraceBuilder&)>& setup,
                     CollectorOptions options)
    : pool_(pool), sink_(std::move(sink)), opt_(options), decoder_(builder_, options.decoder) {
  if (sink_) path_ = sink_->path();
  if (setup) setup(builder_);
  declined_base_ = pool_.declined();  // the pool outlives sessions
}

Collector::~Collector() {
  if (started_ && !stopped_) stop(0);
}

void Collector::start() {
  if (started_) return;
  started_ = true;
  pool_.reserve(opt_.free_buffers_target);
  // The consumer never takes the program's termination signals: a handler
  // that waits for this thread to finish the file must not run on it. The
  // new thread inherits the mask in force when it is created.
  sigset_t block, previous;
  sigemptyset(&block);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void Collector::run() {
  auto last_chunk = std::chrono::steady_clock::now();
  while (!stop_requested_.load(std::memory_order_acquire)) {
    {
      std::unique_lock lock(wake_mutex_);
      wake_.wait_for(lock, opt_.poll_interval, [this] { return stop_requested_.load(std::memory_order_acquire); });
    }
    if (stop_requested_.load(std::memory_order_acquire)) break;
    if (tick_) tick_();
    drain();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_chunk >= opt_.flush_interval || builder_.row_count() >= opt_.max_chunk_rows) {
      write_chunk();
      last_chunk = now;
    } else {
      publish();
    }
  }
  // Final drain, after CUPTI was made to hand back every buffer it holds.
  if (before_finish_) before_finish_();
  drain();
  decoder_.finish(end_time_.load(std::memory_order_relaxed));
  write_chunk();
  if (sink_ && !local_.write_failed) {
    try {
      sink_->finish();
      local_.bytes_written = sink_->bytes_written();
    } catch (const std::exception& e) {
      local_.write_failed = true;
      local_.write_error = e.what();
    }
  }
  publish();
  finished_.store(true, std::memory_order_release);
}

void Collector::drain() {
  BufferPool::Completed c;
  while (pool_.pop_completed(&c)) {
    if (!local_.write_failed) {
      try {
        decoder_.decode(c.data, c.valid_bytes);
      } catch (const std::exception& e) {
        // Out of memory while growing a column: keep the program alive, say so.
        local_.write_failed = true;
        local_.write_error = std::string("decoding failed: ") + e.what();
      }
    }
    pool_.recycle(c.data);
    ++local_.buffers_decoded;
  }
  local_.dropped_records += pool_.take_dropped();
  if (add_rows_ && !local_.write_failed) {
    try {
      add_rows_(builder_);
    } catch (const std::exception& e) {
      // The other source stops; the activity records go on.
      add_rows_ = nullptr;
      builder_.meta().set_property("capture.samples.error", e.what());
    }
  }
  // Allocate here, on our thread, never on the threads CUPTI asks for buffers on.
  pool_.reserve(opt_.free_buffers_target);
}

void Collector::write_chunk() {
  local_.counts = decoder_.counts();
  TraceMeta& meta = builder_.meta();
  decoder_.write_stats(meta);
  meta.set_stat(stat_key::kDroppedRecords, local_.dropped_records);
  local_.declined_buffers = pool_.declined() - declined_base_;
  meta.set_stat("capture.buffers.declined", local_.declined_buffers);
  meta.set_stat("capture.buffers.decoded", local_.buffers_decoded);
  meta.set_stat("capture.pool.buffer_bytes", pool_.buffer_bytes());
  meta.set_stat("capture.pool.peak_bytes", pool_.peak_in_use() * pool_.buffer_bytes());
  if (sink_ && !local_.write_failed) {
    try {
      sink_->append(builder_);
      local_.bytes_written = sink_->bytes_written();
      ++local_.chunks_written;
    } catch (const std::exception& e) {
      local_.write_failed = true;
      local_.write_error = e.what();
    }
  }
  // Rows that could not be written are dropped so memory stays bounded.
  if (builder_.row_count() != 0) builder_.clear_rows();
  chunks_.fetch_add(1, std::memory_order_release);
  publish();
  if (on_chunk_) on_chunk_(stats());
}

void Collector::publish() {
  local_.counts = decoder_.counts();
  local_.pool_peak_bytes = pool_.peak_in_use() * pool_.buffer_bytes();
  local_.pool_bytes = pool_.allocated() * pool_.buffer_bytes();
  local_.declined_buffers = pool_.declined() - declined_base_;
  std::lock_guard lock(stats_mutex_);
  stats_ = local_;
}

CollectorStats Collector::stop(std::int64_t end_time) {
  if (!started_) return stats();
  if (!stopped_) {
    stopped_ = true;
    if (!stop_requested_.load(std::memory_order_acquire)) end_time_.store(end_time, std::memory_order_relaxed);
    {
      std::lock_guard lock(wake_mutex_);
      stop_requested_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  return stats();
}

void Collector::request_finish(std::int64_t end_time) noexcept {
  if (stop_requested_.load(std::memory_order_acquire)) return;
  end_time_.store(end_time, std::memory_order_relaxed);
  // No notify: not async-signal-safe. The consumer sees the flag within a poll.
  stop_requested_.store(true, std::memory_order_release);
}

bool Collector::wait_finished(std::chrono::milliseconds timeout) {
  if (!started_) return true;
  request_finish(end_time_.load(std::memory_order_relaxed));
  wake_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!finished() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (!finished()) return false;
  if (!stopped_) {
    stopped_ = true;
    if (thread_.joinable()) thread_.join();
  }
  return true;
}

CollectorStats Collector::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

}  // namespace gpuscope::capture
