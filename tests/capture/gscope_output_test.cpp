// Capture output through the real .gscope appender: what the collector
// streams reads back whole, and a process killed mid-capture leaves a
// readable prefix of what it flushed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "capture/collector.h"
#include "capture/cupti_records.h"
#include "store/gscope.h"

namespace gpuscope::capture {
namespace {

namespace fs = std::filesystem;
using namespace testing;

constexpr std::uint32_t kPid = 31337;

class GscopeOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string p = (fs::temp_directory_path() / "gpuscope-out-XXXXXX").string();
    dir_ = ::mkdtemp(p.data());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Collector> make_collector(BufferPool& pool, const std::string& path) {
    std::string error;
    auto sink = open_gscope_sink(path, &error);
    EXPECT_TRUE(sink) << error;
    CollectorOptions o;
    o.flush_interval = std::chrono::milliseconds(20);
    o.poll_interval = std::chrono::milliseconds(2);
    o.decoder.pid = kPid;
    return std::make_unique<Collector>(
        pool, std::move(sink),
        [](TraceBuilder& b) {
          b.meta().source = TraceSource::cupti;
          b.meta().producer = "gpuscope test capture";
          b.add_process(Process{kPid, "capture test", -1});
        },
        o);
  }

  static void hand_over(BufferPool& pool, const RecordBuffer& r) {
    std::uint8_t* b = nullptr;
    while (!(b = pool.acquire())) std::this_thread::yield();
    std::memcpy(b, r.data(), r.size());
    ASSERT_TRUE(pool.complete(b, r.size()));
  }

  fs::path dir_;
};

TEST_F(GscopeOutput, StreamedChunksReadBackAsOneTrace) {
  BufferPool pool(64 * 1024, 8);
  const std::string path = (dir_ / "run.gscope").string();
  auto c = make_collector(pool, path);
  c->start();
  // The sync arrives one chunk before the API call that names its thread.
  RecordBuffer first, second;
  first.add(context_record(1, 0, 7));
  first.add(sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 900, 990, 3, 1, 13, 0));
  first.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, 100, 1, kPid, 21, "step"));
  first.add(kernel_record(200, 400, 0, 13, 2, "_Z6squarePfi"));
  hand_over(pool, first);
  // The second buffer goes in once the first is written as a chunk of its
  // own (waiting for it, not a fixed time: a loaded machine may not run the
  // collector's thread within any given sleep).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (c->chunks_written() < 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GE(c->chunks_written(), 1u);
  second.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 150, 160, kPid, 21, 2));
  second.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 890, 995, kPid, 21, 3));
  second.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, 1000, 1, kPid, 21, nullptr));
  hand_over(pool, second);
  pool.note_dropped(4);
  const CollectorStats st = c->stop(2000);
  ASSERT_FALSE(st.write_failed) << st.write_error;
  EXPECT_GE(st.chunks_written, 2u);
  EXPECT_EQ(st.bytes_written, fs::file_size(path));

  GscopeReadReport report;
  const Trace t = read_gscope(path, &report);
  EXPECT_TRUE(report.complete);
  EXPECT_EQ(t.meta().source, TraceSource::cupti);
  EXPECT_EQ(t.meta().stat(stat_key::kDroppedRecords), 4u);
  ASSERT_EQ(t.kernels().size(), 1u);
  EXPECT_EQ(t.str(t.kernels().name[0]), "square(float*, int)");
  EXPECT_EQ(t.str(t.kernels().mangled_at(0)), "_Z6squarePfi");
  EXPECT_EQ(t.launching_api(OpRef{OpTable::kernel, 0}) != kNoRow, true);
  ASSERT_EQ(t.syncs().size(), 1u);
  EXPECT_EQ(t.tracks()[t.syncs().track_at(0)].tid, 21u);  // resolved through its API call, across chunks
  ASSERT_EQ(t.ranges().size(), 1u);
  EXPECT_EQ(t.ranges().end[0], 1000);
  ASSERT_EQ(t.processes().size(), 1u);
  EXPECT_EQ(t.processes()[0].pid, kPid);
}

TEST_F(GscopeOutput, AKilledProcessLeavesAReadablePrefix) {
  const std::string path = (dir_ / "killed.gscope").string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    BufferPool pool(64 * 1024, 8);
    auto c = make_collector(pool, path);
    c->start();
    for (std::uint32_t i = 1; i <= 3; ++i) {
      RecordBuffer r;
      r.add(kernel_record(i * 1000, i * 1000 + 500, 0, 7, i, "_Z4stepv"));
      hand_over(pool, r);
      const auto chunks = c->chunks_written();
      while (c->chunks_written() == chunks) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ::kill(::getpid(), SIGKILL);  // no stop(), no footer, no atexit
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  GscopeReadReport report;
  const Trace t = read_gscope(path, &report);
  EXPECT_FALSE(report.complete);
  EXPECT_EQ(t.kernels().size(), 3u);  // everything that was flushed before the kill
}

TEST_F(GscopeOutput, AnUnwritableOutputIsAClearError) {
  std::string error;
  EXPECT_EQ(open_gscope_sink((dir_ / "no" / "such" / "dir.gscope").string(), &error), nullptr);
  EXPECT_NE(error.find("dir.gscope"), std::string::npos) << error;
}

}  // namespace
}  // namespace gpuscope::capture
