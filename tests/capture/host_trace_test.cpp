// Host files (what the Python startup hook writes): reading them, bad lines
// counted and skipped, their rows in a trace, steps from optimizer and
// DataLoader ranges, and the merge into the run's .gscope files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "capture/host_merge.h"
#include "capture/host_trace.h"
#include "store/gscope.h"
#include "support/test_traces.h"
#include "trace/budget.h"
#include "trace/builder.h"
#include "trace/error.h"

namespace gpuscope::capture {
namespace {

namespace fs = std::filesystem;

class HostFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string p = (fs::temp_directory_path() / "gpuscope-host-XXXXXX").string();
    dir_ = ::mkdtemp(p.data());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(std::uint32_t pid, const std::string& text) {
    const std::string path = dir_ + "/" + std::to_string(pid) + ".host";
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string dir_;
};

// A process with one forward op, its backward op on an autograd thread the
// hook could not name, an optimizer step, a DataLoader batch, a module call,
// a Python frame, two samples and its threads.
std::string one_process(std::uint32_t pid, std::uint32_t forked_from = 0) {
  const std::string p = std::to_string(pid);
  return R"({"k":"process","format":1,"pid":)" + p + R"(,"ppid":1,"forked_from":)" + std::to_string(forked_from) +
         R"(,"argv":["python3","train.py"],"rank":3,"start_ns":1000}
{"k":"ranges","strings":["aten::conv2d","[[8,3,16,16],[4,3,3,3]]","[\"float\",\"float\"]","ConvolutionBackward0","Optimizer.step#SGD.step","enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__","nn.Module: model.conv1","train.py(57): main"],)"
         R"("start":[200,300,500,100,190,150],"end":[250,400,600,180,260,290],"tid":[)" +
         p + R"(,-2,)" + p + "," + p + "," + p + "," + p +
         R"(],"name":[1,4,5,6,7,8],"cat":[0,0,1,1,2,2],"seq":[7,7,-1,-1,-1,-1],"fwd":[0,1,0,0,0,0],"ext":[11,12,0,0,0,0],"dims":[2,0,0,0,0,0],"types":[3,0,0,0,0,0]}
{"k":"samples","strings":["train.py(60): main;loader.py(9): __next__"],"time":[120,130],"tid":[)" +
         p + "," + p + R"(],"stack":[9,9]}
{"k":"threads","strings":["MainThread"],"tid":[)" +
         p + R"(],"name":[10]}
{"k":"overheads","strings":["gpuscope: taking PyTorch's ops"],"start":[700],"end":[750],"tid":[)" +
         p + R"(],"kind":[11]}
{"k":"meta","stats":{"capture.host.samples.taken":2},"notes":{"capture.framework":"pytorch 1.13: ops"}}
{"k":"end"}
)";
}

TEST_F(HostFiles, ReadsEveryKindOfChunk) {
  const HostProcess p = read_host_file(write(42, one_process(42)));
  EXPECT_TRUE(p.has_header);
  EXPECT_EQ(p.pid, 42u);
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.command, "python3 train.py");
  ASSERT_EQ(p.ranges.size(), 6u);
  EXPECT_EQ(p.strings[p.ranges[0].name], "aten::conv2d");
  EXPECT_EQ(p.strings[p.ranges[0].dims], "[[8,3,16,16],[4,3,3,3]]");
  EXPECT_EQ(p.ranges[0].sequence, 7);
  EXPECT_EQ(p.ranges[0].fwd_thread, 0u);
  EXPECT_EQ(p.ranges[1].sequence, 7);
  EXPECT_EQ(p.ranges[1].fwd_thread, 1u);
  EXPECT_EQ(p.ranges[0].external_id, 11u);
  EXPECT_EQ(p.ranges[1].tid, -2);
  EXPECT_EQ(p.ranges[2].category, HostRangeCategory::user_annotation);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.strings[p.samples[0].stack], "train.py(60): main;loader.py(9): __next__");
  ASSERT_EQ(p.thread_names.size(), 1u);
  ASSERT_EQ(p.overheads.size(), 1u);
  EXPECT_EQ(p.strings[p.overheads[0].kind], "gpuscope: taking PyTorch's ops");
  EXPECT_EQ(p.stats.at("capture.host.samples.taken"), 2u);
  EXPECT_EQ(p.notes.at("capture.framework"), "pytorch 1.13: ops");
  EXPECT_TRUE(p.finished);
  EXPECT_EQ(p.bad_lines, 0u);
}

TEST_F(HostFiles, BadLinesAreCountedAndSkippedKeepingTheirStrings) {
  const std::string text =
      R"({"k":"process","format":1,"pid":7}
not json at all
{"k":"ranges","strings":["a","b"],"start":[1,2],"end":[2],"tid":[7,7],"name":[1,2],"cat":[0,0],"seq":[0,0],"ext":[0,0]}
{"k":"ranges","start":[5],"end":[4],"tid":[7],"name":[1],"cat":[0],"seq":[0],"ext":[0]}
{"k":"ranges","start":[5],"end":[6],"tid":[7],"name":[99],"cat":[0],"seq":[0],"ext":[0]}
{"k":"ranges","start":[5],"end":[6],"tid":[7],"name":[2],"cat":[9],"seq":[0],"ext":[0]}
{"k":"ranges","start":[5],"end":[6],"tid":[7],"name":[2],"cat":[0],"seq":[0],"fwd":[-1],"ext":[0]}
{"k":"samples","time":[1],"tid":[7],"stack":["x"]}
{"k":"mystery"}
{"k":"ranges","start":[5],"end":[6],"tid":[7],"name":[2],"cat":[0],"seq":[0],"ext":[0]}
{"k":"samples","time":[1,2],"ti)";
  const HostProcess p = read_host_file(write(7, text));
  EXPECT_EQ(p.bad_lines, 9u);  // the lines between the first and the last good one, and the cut last one
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(p.strings[p.ranges[0].name], "b");  // strings of the skipped chunk kept their numbers
  EXPECT_FALSE(p.finished);
  ASSERT_FALSE(p.problems.empty());
  EXPECT_NE(p.problems.front().find("line 2: not a JSON object"), std::string::npos);
  EXPECT_LE(p.problems.size(), 5u);
}

TEST_F(HostFiles, ANewerFormatOrBrokenStringsStopTheRead) {
  HostProcess p = read_host_file(write(8, "{\"k\":\"process\",\"format\":99,\"pid\":8}\n{\"k\":\"end\"}\n"));
  EXPECT_EQ(p.bad_lines, 1u);
  EXPECT_FALSE(p.finished);
  EXPECT_NE(p.problems.at(0).find("newer gpuscope"), std::string::npos);
  p = read_host_file(write(9, "{\"k\":\"meta\",\"strings\":[1]}\n{\"k\":\"end\"}\n"));
  EXPECT_FALSE(p.finished);
  EXPECT_NE(p.problems.at(0).find("the rest of the file is not read"), std::string::npos);
}

TEST_F(HostFiles, AMissingFileIsAnInputErrorAndTheDirectoryListsByPid) {
  EXPECT_THROW(read_host_file(dir_ + "/nope.host"), InputError);
  write(20, one_process(20));
  write(3, "");  // no header: the pid comes from the name
  const auto all = read_host_files(dir_);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].pid, 3u);
  EXPECT_EQ(all[1].pid, 20u);
}

const Track* find_track(const Trace& t, std::uint32_t pid, std::uint32_t tid) {
  for (const Track& k : t.tracks())
    if (k.kind == TrackKind::cpu && k.pid == pid && k.tid == tid) return &k;
  return nullptr;
}

// A host file larger than the memory budget is refused before it is read.
TEST_F(HostFiles, AFileOverTheMemoryBudgetIsRefusedBeforeItIsRead) {
  const std::string path = write(10, std::string(2 << 20, ' '));
  const ScopedMemoryBudget budget(1 << 20);
  try {
    (void)read_host_file(path);
    ADD_FAILURE() << "read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.reason().find("the host file of 2097152 bytes"), std::string::npos) << e.reason();
    EXPECT_NE(e.reason().find("over the memory budget of 1 MiB"), std::string::npos) << e.reason();
  }
}

TEST_F(HostFiles, RowsJoinATraceAsKinetoWouldWriteThem) {
  const HostProcess p = read_host_file(write(42, one_process(42)));
  TraceBuilder b;
  add_host_process(p, b, true);
  const Trace t = b.freeze();
  const RangeTable& g = t.ranges();
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < g.size(); ++i) by_name[std::string(t.str(g.name[i]))] = i;
  const std::size_t conv = by_name.at("aten::conv2d");
  EXPECT_EQ(t.str(g.domain[conv]), "cpu_op");
  EXPECT_EQ(g.kind_at(conv), RangeKind::annotation);
  EXPECT_EQ(t.str(g.input_dims_at(conv)), "[[8,3,16,16],[4,3,3,3]]");
  EXPECT_EQ(t.str(g.input_types_at(conv)), "[\"float\",\"float\"]");
  EXPECT_EQ(g.correlation_at(conv), 11u);
  // PyTorch's autograd link, as Kineto's "Sequence number" and "Fwd thread id".
  const std::size_t backward = by_name.at("ConvolutionBackward0");
  EXPECT_EQ(sequence_number(g, conv), 7);
  EXPECT_EQ(g.fwd_thread_at(conv), 0u);
  EXPECT_EQ(sequence_number(g, backward), 7);
  EXPECT_EQ(g.fwd_thread_at(backward), 1u);
  EXPECT_EQ(sequence_number(g, by_name.at("Optimizer.step#SGD.step")), -1);
  EXPECT_TRUE(t.is_op_range(static_cast<RowIndex>(conv)));
  EXPECT_EQ(t.str(g.domain[by_name.at("Optimizer.step#SGD.step")]), "user_annotation");
  EXPECT_EQ(t.str(g.domain[by_name.at("nn.Module: model.conv1")]), "python_function");
  EXPECT_FALSE(t.is_op_range(static_cast<RowIndex>(by_name.at("train.py(57): main"))));
  const std::size_t sample = by_name.at("train.py(60): main;loader.py(9): __next__");
  EXPECT_EQ(t.str(g.domain[sample]), kHostSampleDomain);
  EXPECT_EQ(g.kind_at(sample), RangeKind::mark);
  // The backward op's thread is unknown and no CUDA call tells: a track of its own.
  const Track* autograd = find_track(t, 42, 0xfff00000u + 2);
  ASSERT_NE(autograd, nullptr);
  EXPECT_EQ(autograd->name, "PyTorch thread 2");
  EXPECT_EQ(t.meta().stat("capture.framework.threads_unplaced"), 1u);
  EXPECT_EQ(find_track(t, 42, 42)->name, "MainThread");
  ASSERT_EQ(t.overheads().size(), 1u);
  EXPECT_EQ(t.str(t.overheads().kind[0]), "gpuscope: taking PyTorch's ops");
  EXPECT_EQ(t.overheads().end[0] - t.overheads().start[0], 50);
  ASSERT_EQ(t.processes().size(), 1u);
  EXPECT_EQ(t.processes()[0].rank, 3);
  EXPECT_EQ(t.meta().property("capture.framework"), "pytorch 1.13: ops");
  EXPECT_EQ(t.meta().stat("capture.host.samples.taken"), 2u);
}

TEST_F(HostFiles, AnUnnamedThreadGoesWhereTheCudaCallsInsideItsOpsAre) {
  const HostProcess p = read_host_file(write(42, one_process(42)));
  TraceBuilder b;
  // cudaLaunchKernel calls: two inside the backward op (300..400) on thread 77,
  // one elsewhere on thread 78.
  for (auto [tid, at] : {std::pair<std::uint32_t, TimeNs>{77, 310}, {77, 390}, {78, 320}}) {
    ApiCallRow a;
    a.track = b.cpu_track(42, tid);
    a.start = at;
    a.end = at + (tid == 78 ? 200 : 5);  // 78's call starts inside too but spans past: only starts count
    a.name = b.intern("cudaLaunchKernel");
    b.add_api_call(a);
  }
  add_host_process(p, b, true);
  const Trace t = b.freeze();
  const RangeTable& g = t.ranges();
  for (std::size_t i = 0; i < g.size(); ++i)
    if (t.str(g.name[i]) == "ConvolutionBackward0") {
      EXPECT_EQ(t.tracks()[g.track_at(i)].tid, 77u);
    }
  EXPECT_EQ(t.meta().stat("capture.framework.threads_unplaced"), 0u);
}

TEST_F(HostFiles, NotesOfAnotherProcessKeepItsPid) {
  TraceBuilder b;
  add_host_process(read_host_file(write(43, one_process(43, 42))), b, false);
  EXPECT_EQ(b.meta().property("capture.framework.pid43"), "pytorch 1.13: ops");
  EXPECT_EQ(b.meta().property("capture.framework"), "");
}

std::vector<std::pair<TimeNs, TimeNs>> steps_in(const Trace& t) {
  std::vector<std::pair<TimeNs, TimeNs>> out;
  const RangeTable& g = t.ranges();
  for (std::size_t i = 0; i < g.size(); ++i)
    if (t.str(g.name[i]).starts_with("ProfilerStep#")) out.emplace_back(g.start[i], g.end[i]);
  std::sort(out.begin(), out.end());
  return out;
}

void range(TraceBuilder& b, std::string_view name, TimeNs start, TimeNs end, std::uint32_t tid = 1) {
  RangeRow r;
  r.track = b.cpu_track(1, tid);
  r.start = start;
  r.end = end;
  r.name = b.intern(name);
  r.domain = b.intern("user_annotation");
  r.kind = RangeKind::annotation;
  b.add_range(r);
}

TEST(HostSteps, EndWithEachOptimizerStepAndBeginAtTheBatchBeforeTheFirst) {
  TraceBuilder b;
  range(b, "nn.Module: model", 5, 8);  // before the first batch: not in a step
  for (TimeNs s : {10, 110, 210}) {
    range(b, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", s, s + 20);
    range(b, "Optimizer.step#SGD.step", s + 80, s + 90);
  }
  EXPECT_EQ(add_host_steps(b), "3 steps from Optimizer.step#SGD.step on thread 1");
  const Trace t = b.freeze();
  EXPECT_EQ(steps_in(t), (std::vector<std::pair<TimeNs, TimeNs>>{{10, 100}, {100, 200}, {200, 300}}));
}

TEST(HostSteps, WithoutABatchTheFirstStepBeginsAtTheFirstModuleCall) {
  TraceBuilder b;
  range(b, "nn.Module: model", 30, 60);
  range(b, "Optimizer.step#Adam.step", 70, 80);
  range(b, "Optimizer.step#Adam.step", 170, 180);
  add_host_steps(b);
  EXPECT_EQ(steps_in(b.freeze()), (std::vector<std::pair<TimeNs, TimeNs>>{{30, 80}, {80, 180}}));
}

TEST(HostSteps, WithoutAnOptimizerFromBatchToBatch) {
  TraceBuilder b;
  for (TimeNs s : {0, 100, 200}) range(b, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", s, s + 10);
  range(b, "aten::mm", 250, 260);
  EXPECT_NE(add_host_steps(b).find("3 steps from enumerate(DataLoader)"), std::string::npos);
  EXPECT_EQ(steps_in(b.freeze()), (std::vector<std::pair<TimeNs, TimeNs>>{{0, 100}, {100, 200}, {200, 260}}));
}

TEST(HostSteps, NoneAddedWhereTheTraceHasItsOwnOrNothingTells) {
  TraceBuilder b;
  range(b, "ProfilerStep#4", 0, 100);
  range(b, "Optimizer.step#SGD.step", 50, 60);
  EXPECT_EQ(add_host_steps(b), "from the trace's own ProfilerStep ranges");
  EXPECT_EQ(steps_in(b.freeze()).size(), 1u);
  TraceBuilder c;
  range(c, "aten::mm", 0, 10);
  EXPECT_EQ(add_host_steps(c), "none: no Optimizer.step or DataLoader ranges");
}

template <class Table>
void expect_same_stored_columns(const Table& a, const Table& b) {
  std::vector<std::string> names;
  a.for_each_column([&](ColumnInfo info, const auto&) { names.emplace_back(info.name); });
  std::size_t i = 0;
  a.for_each_column([&](ColumnInfo info, const auto& col) {
    std::size_t j = 0;
    b.for_each_column([&](ColumnInfo, const auto& other) {
      if constexpr (std::is_same_v<decltype(col), decltype(other)>)
        if (j == i && (info.flags & kStored)) {
          using T = typename std::remove_cvref_t<decltype(col)>::value_type;
          const std::vector<T> x = detail::stored_rows(a, col), y = detail::stored_rows(b, other);  // as rows
          // Bit for bit: a counter's value may be NaN.
          ASSERT_EQ(x.size(), y.size()) << info.name;
          EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(T)), 0) << info.name;
        }
      ++j;
    });
    ++i;
  });
}

TEST(CopyTrace, EveryTableStringTrackAndTheMetaSurvive) {
  const Trace original = testing::every_table_trace();
  TraceBuilder b;
  copy_trace(original, b);
  const Trace copy = b.freeze();
  EXPECT_EQ(copy.meta(), original.meta());
  EXPECT_EQ(copy.tracks(), original.tracks());
  EXPECT_EQ(copy.devices(), original.devices());
  EXPECT_EQ(copy.processes(), original.processes());
  EXPECT_EQ(copy.counter_series(), original.counter_series());
  ASSERT_EQ(copy.strings().size(), original.strings().size());
  for (StringId s = 0; s < copy.strings().size(); ++s) EXPECT_EQ(copy.str(s), original.str(s));
  original.tables().for_each_table([&](TableId id, const auto& table) {
    copy.tables().for_each_table([&](TableId other_id, const auto& other) {
      if constexpr (std::is_same_v<decltype(table), decltype(other)>)
        if (id == other_id) expect_same_stored_columns(table, other);
    });
  });
}

TEST_F(HostFiles, MergeJoinsTheCudaFileAndAForkedChildAndWritesHostOnlyFiles) {
  // Process 42 has a CUDA capture; 43 was forked from it (a DataLoader
  // worker); 50 never used CUDA.
  TraceBuilder cuda;
  cuda.add_device(Device{.id = 0, .name = "GPU"});
  ApiCallRow launch;
  launch.track = cuda.cpu_track(42, 42);
  launch.start = 210;  // inside aten::conv2d (200..250)
  launch.end = 215;
  launch.correlation = 5;
  launch.name = cuda.intern("cudaLaunchKernel");
  cuda.add_api_call(launch);
  KernelRow k;
  k.track = cuda.gpu_track(0, 7);
  k.start = 300;
  k.end = 350;
  k.correlation = 5;
  k.name = cuda.intern("implicit_gemm");
  cuda.add_kernel(k);
  cuda.meta().set_property("capture.mode", "injected");
  const std::string cuda_file = dir_ + "/cuda-42.gscope";
  write_gscope(cuda.freeze(), cuda_file);
  ProcessReport r;
  r.pid = 42;
  r.state = "finished";
  r.summary.output = cuda_file;
  write(42, one_process(42));
  write(43, one_process(43, 42));
  write(50, one_process(50));
  write(51, one_process(51) + "{\"k\":\"parent\",\"pid\":50}\n");  // started by 50's multiprocessing (spawn)
  const auto merges = merge_host_files(dir_, {r}, dir_ + "/run-%p-r%r.gscope");
  ASSERT_EQ(merges.size(), 2u);
  EXPECT_EQ(merges[0].error, "");
  EXPECT_EQ(merges[0].output, cuda_file);
  EXPECT_FALSE(merges[0].host_only);
  EXPECT_EQ(merges[0].pids, (std::vector<std::uint32_t>{42, 43}));
  EXPECT_EQ(merges[0].ops, 8u);
  EXPECT_EQ(merges[0].module_calls, 2u);
  EXPECT_EQ(merges[0].python_frames, 2u);
  EXPECT_EQ(merges[0].samples, 4u);
  EXPECT_EQ(merges[0].framework, "pytorch 1.13: ops");
  EXPECT_EQ(merges[0].steps,
            "1 step from Optimizer.step#SGD.step on thread 42; 1 step from "
            "Optimizer.step#SGD.step on thread 43");
  const Trace merged = read_gscope(cuda_file);
  EXPECT_EQ(merged.kernels().size(), 1u);
  EXPECT_EQ(merged.meta().property("capture.mode"), "injected");
  EXPECT_EQ(merged.meta().property("capture.framework.pid43"), "pytorch 1.13: ops");
  EXPECT_NE(find_track(merged, 43, 43), nullptr);
  EXPECT_EQ(merged.meta().stat("capture.host.processes"), 2u);
  // The kernel is attributed to the op its launch ran in, as in a Kineto trace.
  const RowIndex op = merged.launching_op(OpRef{OpTable::kernel, 0});
  ASSERT_NE(op, kNoRow);
  EXPECT_EQ(merged.str(merged.ranges().name[op]), "aten::conv2d");
  EXPECT_TRUE(merges[1].host_only);
  EXPECT_EQ(merges[1].pids, (std::vector<std::uint32_t>{50, 51}));
  EXPECT_EQ(merges[1].output, dir_ + "/run-50-r3.gscope");
  const Trace own = read_gscope(merges[1].output);
  EXPECT_EQ(own.meta().source, TraceSource::cupti);
  EXPECT_EQ(own.meta().property("capture.mode"), "host");
  EXPECT_EQ(own.meta().rank, 3);
  EXPECT_EQ(own.meta().property("capture.steps"),
            "1 step from Optimizer.step#SGD.step on thread 50; 1 step from Optimizer.step#SGD.step on thread 51");
}

TEST_F(HostFiles, AnUnreadableCudaFileIsLeftAloneAndSaidSo) {
  const std::string cuda_file = dir_ + "/broken.gscope";
  std::ofstream(cuda_file) << "not a trace";
  ProcessReport r;
  r.pid = 42;
  r.state = "finished";
  r.summary.output = cuda_file;
  write(42, one_process(42));
  const auto merges = merge_host_files(dir_, {r}, dir_ + "/x.gscope");
  ASSERT_EQ(merges.size(), 1u);
  EXPECT_NE(merges[0].error.find("broken.gscope"), std::string::npos);
  std::ifstream in(cuda_file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "not a trace");
}

}  // namespace
}  // namespace gpuscope::capture
