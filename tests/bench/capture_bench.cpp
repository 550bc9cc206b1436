// Capture's CPU-side costs (no GPU needed): what one consumer thread can
// decode and write per second, and what CUPTI's buffer callbacks cost the
// threads that call them. Numbers: docs/PERFORMANCE.md, section "Capture".
//
//   build/bench/bench_capture --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#if GPUSCOPE_HAVE_CAPTURE

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "capture/buffer_pool.h"
#include "capture/chunk_sink.h"
#include "capture/cupti_records.h"
#include "capture/cupti_tracer.h"
#include "capture/record_decoder.h"

namespace {

using namespace gpuscope;
using namespace gpuscope::capture;
using namespace gpuscope::capture::testing;

// What a training step looks like to CUPTI: each launch is an API record and
// a kernel record; some copies, NVTX ranges and syncs around them.
const std::vector<std::string>& kernel_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (int i = 0; i < 40; ++i)
      n.push_back("_ZN5cudnn3ops" + std::to_string(i) + "17convolve_kernel_xILi128ELi64EEEvPKfPfiii");
    return n;
  }();
  return names;
}

RecordBuffer training_step_records(std::size_t bytes) {
  RecordBuffer r;
  std::uint32_t corr = 1;
  std::uint64_t t = 1'700'000'000'000'000'000ull;
  while (r.size() + 1024 < bytes) {
    for (int i = 0; i < 20 && r.size() + 1024 < bytes; ++i, ++corr, t += 5000) {
      r.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t, t + 2000, 100, 101, corr));
      r.add(kernel_record(t + 3000, t + 9000, 0, 7 + corr % 3, corr, kernel_names()[corr % 40].c_str()));
    }
    r.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, t, t + 1000, 100, 101, ++corr));
    r.add(memcpy_record(t + 2000, t + 4000, 0, 7, corr, 1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                        CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
    r.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, t, corr, 100, 101, "step"));
    r.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, t + 100000, corr, 100, 101, nullptr));
    ++corr;
  }
  return r;
}

std::size_t count_records(const RecordBuffer& r) {
  CUpti_Activity* rec = nullptr;
  std::size_t n = 0;
  while (cuptiActivityGetNextRecord(const_cast<std::uint8_t*>(r.data()), r.size(), &rec) == CUPTI_SUCCESS) ++n;
  return n;
}

// One 4 MiB activity buffer decoded into the builder (rows cleared between
// buffers, as a chunk write does).
void BM_DecodeBuffer(benchmark::State& state) {
  const RecordBuffer buf = training_step_records(4u << 20);
  const std::size_t records = count_records(buf);
  TraceBuilder b;
  RecordDecoder d(b, DecoderOptions{100, false});
  for (auto _ : state) {
    d.decode(buf.data(), buf.size());
    state.PauseTiming();
    b.clear_rows();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * records));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * buf.size()));
}
BENCHMARK(BM_DecodeBuffer)->Unit(benchmark::kMillisecond)->UseRealTime();

// The consumer's whole job per buffer: decode, then append the rows to a
// .gscope file (zstd), as the collector does once per flush interval.
void BM_DecodeAndWrite(benchmark::State& state) {
  const RecordBuffer buf = training_step_records(4u << 20);
  const std::size_t records = count_records(buf);
  const std::string path = "/tmp/gpuscope-bench-capture-" + std::to_string(::getpid()) + ".gscope";
  std::string error;
  auto sink = open_gscope_sink(path, &error);
  if (!sink) {
    state.SkipWithError(error.c_str());
    return;
  }
  TraceBuilder b;
  RecordDecoder d(b, DecoderOptions{100, false});
  for (auto _ : state) {
    d.decode(buf.data(), buf.size());
    sink->append(b);
  }
  sink->finish();
  std::filesystem::remove(path);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * records));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * buf.size()));
}
BENCHMARK(BM_DecodeAndWrite)->Unit(benchmark::kMillisecond)->UseRealTime();

// CUPTI's buffer callbacks as the application thread (request) and CUPTI's
// thread (completion) see them, plus the consumer's pop and recycle.
void BM_BufferRoundTrip(benchmark::State& state) {
  BufferPool pool(64 * 1024, 16);
  pool.reserve(16);
  cupti::set_buffer_pool(&pool);
  for (auto _ : state) {
    std::uint8_t* b = nullptr;
    std::size_t size = 0, max = 0;
    cupti::detail::buffer_requested(&b, &size, &max);
    cupti::detail::buffer_completed(nullptr, 0, b, size, 128);
    BufferPool::Completed c;
    pool.pop_completed(&c);
    pool.recycle(c.data);
    benchmark::DoNotOptimize(c.data);
  }
  cupti::set_buffer_pool(nullptr);
}
BENCHMARK(BM_BufferRoundTrip);

// The request callback alone, from several threads at once (CUPTI asks per thread).
void BM_BufferRequestContended(benchmark::State& state) {
  static BufferPool* pool = nullptr;
  if (state.thread_index() == 0) {
    pool = new BufferPool(64 * 1024, 64);
    pool->reserve(64);
    cupti::set_buffer_pool(pool);
  }
  for (auto _ : state) {
    std::uint8_t* b = nullptr;
    std::size_t size = 0, max = 0;
    cupti::detail::buffer_requested(&b, &size, &max);
    if (b) pool->recycle(b);
  }
  if (state.thread_index() == 0) {
    cupti::set_buffer_pool(nullptr);
    delete pool;
  }
}
BENCHMARK(BM_BufferRequestContended)->Threads(1)->Threads(2)->Threads(4);

}  // namespace

#endif  // GPUSCOPE_HAVE_CAPTURE

BENCHMARK_MAIN();
