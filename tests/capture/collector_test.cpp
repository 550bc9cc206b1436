// The collector and CUPTI's buffer callbacks, driven directly from many
// threads the way CUPTI drives them (requests on application threads,
// completions on another). Also built with -fsanitize=thread
// (capture_tsan_tests).
#include "capture/collector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "capture/cupti_records.h"
#include "capture/cupti_tracer.h"
#include "capture/memory_sink.h"

namespace gpuscope::capture {
namespace {

using namespace testing;  // RecordBuffer, record factories, MemorySink

constexpr std::uint32_t kPid = 777;

// Copies `records` into a pool buffer the way CUPTI fills one.
std::size_t fill(std::uint8_t* buffer, std::size_t capacity, const RecordBuffer& records) {
  const std::size_t n = std::min(capacity, records.size());
  std::memcpy(buffer, records.data(), n);
  return n;
}

CollectorOptions fast_options() {
  CollectorOptions o;
  o.flush_interval = std::chrono::milliseconds(30);
  o.poll_interval = std::chrono::milliseconds(2);
  o.decoder.pid = kPid;
  return o;
}

struct Session {
  explicit Session(std::size_t buffers, std::size_t buffer_bytes = 64 * 1024, int fail_at = 0)
      : pool(buffer_bytes, buffers) {
    auto s = std::make_unique<MemorySink>(fail_at);
    sink = s.get();
    collector = std::make_unique<Collector>(
        pool, std::move(s), [](TraceBuilder& b) { b.meta().source = TraceSource::cupti; }, fast_options());
  }
  BufferPool pool;
  MemorySink* sink;
  std::unique_ptr<Collector> collector;
};

TEST(Collector, DecodesCompletedBuffersIntoChunks) {
  Session s(8);
  std::atomic<int> chunk_callbacks{0};
  s.collector->set_on_chunk([&](const CollectorStats&) { chunk_callbacks.fetch_add(1); });
  s.collector->start();
  for (std::uint32_t round = 0; round < 5; ++round) {
    RecordBuffer r;
    for (std::uint32_t i = 0; i < 10; ++i) {
      const std::uint32_t corr = round * 10 + i + 1;
      r.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr * 100, corr * 100 + 5, kPid, 9,
                       corr));
      r.add(kernel_record(corr * 100 + 10, corr * 100 + 50, 0, 7, corr, "_Z4stepv"));
    }
    std::uint8_t* b = s.pool.acquire();
    ASSERT_NE(b, nullptr);
    ASSERT_TRUE(s.pool.complete(b, fill(b, s.pool.buffer_bytes(), r)));
    std::this_thread::sleep_for(std::chrono::milliseconds(40));  // let chunks go out between rounds
  }
  const CollectorStats st = s.collector->stop(1'000'000);
  EXPECT_TRUE(s.sink->finished());
  EXPECT_GE(s.sink->appends(), 2);  // periodic chunks, not one big write at the end
  EXPECT_EQ(chunk_callbacks.load(), s.sink->appends());
  EXPECT_EQ(st.counts.kernels, 50u);
  EXPECT_EQ(st.counts.api_calls, 50u);
  EXPECT_EQ(st.buffers_decoded, 5u);
  EXPECT_FALSE(st.write_failed);
  const Trace t = s.sink->trace();
  EXPECT_EQ(t.kernels().size(), 50u);
  for (RowIndex k = 0; k < t.kernels().size(); ++k) EXPECT_NE(t.launching_api(OpRef{OpTable::kernel, k}), kNoRow);
  EXPECT_EQ(t.meta().source, TraceSource::cupti);
  EXPECT_EQ(t.meta().stat(stat_key::kDroppedRecords), 0u);
  EXPECT_EQ(s.pool.in_use(), 0u);  // every buffer went back
}

TEST(Collector, DroppedRecordsAndDeclinedRequestsReachTheStats) {
  Session s(2);
  s.collector->start();
  s.pool.note_dropped(12);
  std::uint8_t* a = s.pool.acquire();
  std::uint8_t* b = s.pool.acquire();
  std::uint8_t* none = s.pool.acquire();  // pool exhausted: declined, never blocks
  EXPECT_EQ(none, nullptr);
  s.pool.complete(a, 0);
  s.pool.complete(b, 0);
  const CollectorStats st = s.collector->stop(0);
  EXPECT_EQ(st.dropped_records, 12u);
  EXPECT_EQ(st.declined_buffers, 1u);
  EXPECT_EQ(s.sink->meta().stat(stat_key::kDroppedRecords), 12u);
  EXPECT_EQ(s.sink->meta().stat("capture.buffers.declined"), 1u);
}

TEST(Collector, OpenRangesAreClosedAtStopAndBeforeFinishRuns) {
  Session s(4);
  std::atomic<bool> flushed{false};
  s.collector->set_before_finish([&] { flushed = true; });
  s.collector->start();
  RecordBuffer r;
  r.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, 500, 1, kPid, 3, "epoch"));
  std::uint8_t* b = s.pool.acquire();
  s.pool.complete(b, fill(b, s.pool.buffer_bytes(), r));
  s.collector->stop(9000);
  EXPECT_TRUE(flushed.load());
  const Trace t = s.sink->trace();
  ASSERT_EQ(t.ranges().size(), 1u);
  EXPECT_EQ(t.ranges().end[0], 9000);
  EXPECT_EQ(t.meta().stat("capture.nvtx.open_at_stop"), 1u);
}

TEST(Collector, AFailingSinkIsReportedAndBuffersStillFlow) {
  Session s(4, 64 * 1024, /*fail_at=*/2);
  s.collector->start();
  for (int round = 0; round < 4; ++round) {
    RecordBuffer r;
    r.add(kernel_record(100 + round, 200 + round, 0, 7, round + 1, "_Z1kv"));
    std::uint8_t* b = nullptr;
    while (!(b = s.pool.acquire())) std::this_thread::yield();  // buffers keep coming back
    s.pool.complete(b, fill(b, s.pool.buffer_bytes(), r));
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  const CollectorStats st = s.collector->stop(0);
  EXPECT_TRUE(st.write_failed);
  EXPECT_NE(st.write_error.find("disk full"), std::string::npos);
  EXPECT_EQ(st.buffers_decoded, 4u);
  EXPECT_EQ(s.pool.in_use(), 0u);
}

TEST(Collector, RequestFinishIsEnoughToFinish) {
  Session s(2);
  s.collector->start();
  s.collector->request_finish(1234);
  EXPECT_TRUE(s.collector->wait_finished(std::chrono::seconds(10)));
  EXPECT_TRUE(s.collector->finished());
  EXPECT_TRUE(s.sink->finished());
}

// CUPTI's side: requests from many application threads through the real
// buffer callbacks, completions from a "CUPTI thread", while the collector
// decodes. Every record written must be in the trace exactly once.
TEST(CollectorConcurrency, CuptiCallbacksFromManyThreads) {
  constexpr int kThreads = 6, kBuffersPerThread = 40, kKernelsPerBuffer = 25;
  Session s(/*buffers=*/8, /*buffer_bytes=*/64 * 1024);
  cupti::set_buffer_pool(&s.pool);
  s.pool.reserve(8);
  s.collector->start();

  // Filled buffers go to the "CUPTI thread", which completes them.
  MpmcRing<std::pair<std::uint8_t*, std::size_t>> filled(64);
  std::atomic<int> producers_left{kThreads};
  std::atomic<std::uint64_t> declined{0};
  std::thread cupti_thread([&] {
    std::pair<std::uint8_t*, std::size_t> item;
    for (;;) {
      const bool producers_done = producers_left.load() == 0;  // read before the pop that may fail
      if (filled.pop(&item)) {
        cupti::detail::buffer_completed(nullptr, 0, item.first, 64 * 1024, item.second);
        continue;
      }
      if (producers_done) break;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> app;
  for (int t = 0; t < kThreads; ++t)
    app.emplace_back([&, t] {
      for (int n = 0; n < kBuffersPerThread; ++n) {
        std::uint8_t* buffer = nullptr;
        std::size_t size = 0, max_records = 99;
        for (;;) {
          cupti::detail::buffer_requested(&buffer, &size, &max_records);
          if (buffer) break;
          declined.fetch_add(1);  // CUPTI would drop records here; we retry to count every kernel
          std::this_thread::yield();
        }
        EXPECT_EQ(max_records, 0u);
        EXPECT_EQ(size, s.pool.buffer_bytes());
        RecordBuffer r;
        for (int k = 0; k < kKernelsPerBuffer; ++k) {
          const auto corr = static_cast<std::uint32_t>(((t * kBuffersPerThread + n) * kKernelsPerBuffer) + k + 1);
          r.add(kernel_record(corr * 10, corr * 10 + 5, static_cast<std::uint32_t>(t % 2), 7, corr, "_Z6workerv"));
        }
        const std::size_t valid = fill(buffer, size, r);
        while (!filled.push({buffer, valid})) std::this_thread::yield();
      }
      producers_left.fetch_sub(1);
    });
  for (auto& th : app) th.join();
  cupti_thread.join();
  const CollectorStats st = s.collector->stop(0);
  cupti::set_buffer_pool(nullptr);

  const auto expected = static_cast<std::uint64_t>(kThreads) * kBuffersPerThread * kKernelsPerBuffer;
  EXPECT_EQ(st.counts.kernels, expected);
  EXPECT_EQ(st.buffers_decoded, static_cast<std::uint64_t>(kThreads) * kBuffersPerThread);
  EXPECT_EQ(st.declined_buffers, declined.load());
  const Trace tr = s.sink->trace();
  ASSERT_EQ(tr.kernels().size(), expected);
  std::set<std::uint32_t> correlations(tr.kernels().correlation.begin(), tr.kernels().correlation.end());
  EXPECT_EQ(correlations.size(), expected);  // none lost, none twice
  EXPECT_LE(s.pool.peak_in_use(), 8u);       // bounded by the pool, however long it runs
  EXPECT_EQ(s.pool.in_use(), 0u);
}

}  // namespace
}  // namespace gpuscope::capture
