// GscopeAppender: chunks appended as a live capture would, files left
// unfinished, a writer killed mid-run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/gscope.h"
#include "store/test_files.h"
#include "store/trace_equal.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TempDir;

// Applies the same events to a reference builder and to the chunk builder
// that is appended every few steps; the file must read back as the reference.
struct Mirror {
  TraceBuilder ref, chunk;
  template <class F>
  void both(F&& f) {
    f(ref);
    f(chunk);
  }
};

TEST(GscopeAppender, ChunksReadBackAsOneTrace) {
  TempDir dir;
  const std::string path = dir.file("live.gscope");
  auto app = GscopeAppender::open(path);
  Mirror m;
  testing::Rng rng(5);
  m.both([](TraceBuilder& b) {
    b.meta().source = TraceSource::cupti;
    b.meta().producer = "test";
  });
  std::vector<TrackId> gpu, cpu;
  for (int step = 0; step < 40; ++step) {
    // New strings, tracks, devices and series appear as the capture goes on.
    if (step % 7 == 0) {
      gpu.push_back(m.ref.gpu_track(step % 3, 7 + step));
      cpu.push_back(m.ref.cpu_track(100, 1000 + step));
      ASSERT_EQ(m.chunk.gpu_track(step % 3, 7 + step), gpu.back());
      ASSERT_EQ(m.chunk.cpu_track(100, 1000 + step), cpu.back());
      m.both([&](TraceBuilder& b) {
        Device d;
        d.id = static_cast<std::uint32_t>(step % 3);
        d.name = "GPU " + std::to_string(step);
        b.add_device(d);
        b.add_process(Process{100, "train " + std::to_string(step), 0});
        b.counter_series("util" + std::to_string(step), d.id, "%");
        b.meta().set_stat("capture.dropped_records", static_cast<std::uint64_t>(step));
      });
    }
    if (step == 20) m.both([&](TraceBuilder& b) { b.set_track_name(gpu[0], "renamed stream"); });
    const auto rows = rng.below(50);
    for (std::uint64_t i = 0; i < rows; ++i) {
      const TimeNs t = step * 1'000'000 + static_cast<TimeNs>(rng.below(1'000'000));
      const TrackId g = gpu[rng.below(gpu.size())], c = cpu[rng.below(cpu.size())];
      const std::uint32_t corr = static_cast<std::uint32_t>(step * 100 + i + 1);
      const std::string name = "kernel_" + std::to_string(rng.below(30));
      m.both([&](TraceBuilder& b) {
        const StringId n = b.intern(name);
        b.add_api_call(ApiCallRow{t, t + 10, c, corr, b.intern("cudaLaunchKernel"), ApiDomain::runtime, 0, 0});
        KernelRow k;
        k.start = t + 20;
        k.end = t + 500;
        k.track = g;
        k.correlation = corr;
        k.name = n;
        b.add_kernel(k);
        // A sync whose thread is known only through its API call.
        if (i % 10 == 0)
          b.add_sync(
              SyncRow{t + 30, t + 600, TraceBuilder::kResolveThroughCorrelation, corr, SyncType::stream, 0, 7, kNoId});
        if (!b.all_counter_series().empty())
          b.add_counter(CounterRow{t, static_cast<std::uint32_t>(i % b.all_counter_series().size()),
                                   0.5 * static_cast<double>(i)});
      });
    }
    if (step % 3 == 2) {
      app->append(m.chunk);
      EXPECT_EQ(m.chunk.row_count(), 0u);  // rows cleared, strings and tracks kept
    }
  }
  m.both([](TraceBuilder& b) { b.meta().host = "final host"; });
  app->append(m.chunk);
  app->finish();
  EXPECT_THROW(app->append(m.chunk), std::logic_error);

  GscopeReadReport rep;
  const Trace back = read_gscope(path, &rep);
  EXPECT_TRUE(rep.complete) << (rep.problems.empty() ? "" : rep.problems[0]);
  EXPECT_EQ(rep.bytes_lost, 0u);
  const Trace ref = m.ref.freeze();
  ASSERT_GT(ref.kernels().size(), 100u);
  ASSERT_GT(ref.syncs().size(), 5u);
  testing::expect_traces_equal(ref, back);
  EXPECT_EQ(back.tracks()[0].name, "renamed stream");
  EXPECT_EQ(back.meta().host, "final host");
  EXPECT_EQ(app->bytes_written(), std::filesystem::file_size(path));
}

TEST(GscopeAppender, UnfinishedFileReadsAsAPrefix) {
  TempDir dir;
  const std::string path = dir.file("unfinished.gscope");
  testing::TrainingTraceOptions o;
  o.kernels = 5000;
  o.start = 1'700'000'000'000'000'000;
  TraceBuilder all;
  testing::add_training_trace(all, o);
  const std::size_t kernels = all.tables().kernels.size();
  {
    auto app = GscopeAppender::open(path);
    app->append(all);
    app->flush();
    // No finish(): the process "dies" here.
  }
  GscopeReadReport rep;
  const Trace t = read_gscope(path, &rep);
  EXPECT_FALSE(rep.complete);
  EXPECT_EQ(rep.bytes_lost, 0u);
  EXPECT_EQ(t.kernels().size(), kernels);
  EXPECT_EQ(t.meta().stat("store.unfinished"), 1u);
  ASSERT_EQ(rep.problems.size(), 1u);
  EXPECT_NE(rep.problems[0].find("no footer"), std::string::npos);
}

TEST(GscopeAppender, OnlyAHeader) {
  TempDir dir;
  const std::string path = dir.file("header.gscope");
  { auto app = GscopeAppender::open(path); }
  // Unfinished and without a row: nothing to show, so it is refused, saying why.
  try {
    read_gscope(path);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.reason().find("nothing could be recovered: no footer"), std::string::npos) << e.what();
  }
}

TEST(GscopeAppender, OpenFailureNamesThePath) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/x.gscope");
  try {
    GscopeAppender::open(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
  }
}

// A child appends chunk after chunk and is SIGKILLed at a random point; the
// parent reads every complete chunk back, in order, and nothing else.
TEST(GscopeAppender, KilledWriterLeavesAReadablePrefix) {
  TempDir dir;
  const std::string path = dir.file("killed.gscope");
  constexpr int kRowsPerAppend = 3000;
  for (int round = 0; round < 3; ++round) {
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(pipefd[0]);
      try {
        GscopeWriteOptions o;
        o.rows_per_chunk = 1000;
        auto app = GscopeAppender::open(path, o);
        TraceBuilder b;
        const TrackId g = b.gpu_track(0, 7);
        const StringId name = b.intern("k");
        for (std::int64_t i = 0;; ++i) {
          KernelRow k;
          k.track = g;
          k.name = name;
          for (int r = 0; r < kRowsPerAppend; ++r) {
            k.start = (i * kRowsPerAppend + r) * 10;
            k.end = k.start + 5;
            k.correlation = static_cast<std::uint32_t>(i * kRowsPerAppend + r);
            b.add_kernel(k);
          }
          app->append(b);
          const char c = 1;
          if (::write(pipefd[1], &c, 1) != 1) ::_exit(3);
        }
      } catch (...) {
        ::_exit(2);
      }
    }
    ::close(pipefd[1]);
    char c;
    for (int i = 0; i < 5 + round * 7; ++i) ASSERT_EQ(::read(pipefd[0], &c, 1), 1);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(pipefd[0]);
    ASSERT_TRUE(WIFSIGNALED(status));

    GscopeReadReport rep;
    const Trace t = read_gscope(path, &rep);
    EXPECT_FALSE(rep.complete);
    const auto& k = t.kernels();
    EXPECT_GE(k.size(), static_cast<std::size_t>((5 + round * 7) * kRowsPerAppend));
    EXPECT_EQ(k.size() % 1000, 0u);  // whole sections only
    for (std::size_t i = 0; i < k.size(); ++i) {
      ASSERT_EQ(k.start[i], static_cast<TimeNs>(i) * 10);
      ASSERT_EQ(k.correlation[i], i);
    }
    EXPECT_EQ(t.meta().stat("store.unfinished"), 1u);
  }
}

}  // namespace
}  // namespace gpuscope
