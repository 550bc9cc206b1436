// `gpuscope import` and open_trace's JSON branch, through the built binary
// and the library.
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "import/chrome_json.h"
#include "import/open_trace.h"
#include "store/gscope.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope";

struct CmdResult {
  int status = -1;
  std::string out, err;
};

CmdResult run(const std::string& args) {
  const fs::path dir = fs::temp_directory_path() / ("gpuscope_cmd_import_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  const std::string cmd = kBinary + " " + args + " >" + out + " 2>" + err;
  CmdResult r;
  const int raw = std::system(cmd.c_str());
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  r.out = slurp(out);
  r.err = slurp(err);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return r;
}

class CmdImport : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kBinary)) << "gpuscope binary not built: " << kBinary;
    dir_ = fs::temp_directory_path() / ("gpuscope_cmd_import_files_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }
  fs::path dir_;
};

const char* kTrace = R"J({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 2, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12.5, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 5}},
  {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 10, "cat": "ac2g", "name": "ac2g"}
]})J";

TEST_F(CmdImport, WritesAGscopeThatReadsBack) {
  const std::string in = write("t.json", kTrace);
  const CmdResult r = run("import " + in + " -o " + path("t.gscope"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // the summary is a status: standard error
  EXPECT_NE(r.err.find("1 kernels"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped flow: 1"), std::string::npos) << r.err;
  const Trace t = read_gscope(path("t.gscope"));
  ASSERT_EQ(t.kernels().size(), 1u);
  EXPECT_EQ(t.kernels().start[0], 12500);
  EXPECT_EQ(t.meta().source, TraceSource::chrome_json);
  EXPECT_EQ(t.meta().stat("import.skipped.flow"), 1u);
  EXPECT_NE(t.kernels().api[0], kNoRow);
  // --quiet prints nothing.
  const CmdResult q = run("import -q " + in + " -o " + path("q.gscope"));
  EXPECT_EQ(q.status, 0);
  EXPECT_TRUE(q.out.empty()) << q.out;
  EXPECT_TRUE(q.err.empty()) << q.err;
}

TEST_F(CmdImport, RealGzipTrace) {
  const std::string in = testing::real_trace("hta-sampled-rank1.json.gz");
  const CmdResult r = run("import " + in + " -o " + path("r1.gscope"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace a = read_gscope(path("r1.gscope"));
  const Trace b = import_chrome_json(in);
  EXPECT_EQ(a.kernels().start, b.kernels().start);
  EXPECT_EQ(a.meta().rank, 1);
  EXPECT_EQ(a.meta().world_size, 128);
}

TEST_F(CmdImport, BadInputIsOneLineAndNoOutput) {
  const std::string in = write("bad.json", R"J({"traceEvents": [{"ph": "X", "ts": 1.2.3}]})J");
  const CmdResult r = run("import " + in + " -o " + path("bad.gscope"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("gpuscope: error: " + in + " (at byte ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // Nothing under the output name, and no temporary left behind.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.path().filename() != "bad.json";
  EXPECT_EQ(files, 0u);
}

TEST_F(CmdImport, UsageErrors) {
  EXPECT_EQ(run("import").status, 2);
  const std::string in = write("t.json", kTrace);
  EXPECT_EQ(run("import " + in).status, 2);  // -o is required
  const CmdResult same = run("import " + in + " -o " + in);
  EXPECT_EQ(same.status, 2);
  EXPECT_NE(same.err.find("refusing to overwrite"), std::string::npos) << same.err;
  const CmdResult nodir = run("import " + in + " -o " + path("no/such/dir/x.gscope"));
  EXPECT_EQ(nodir.status, 2);
  EXPECT_EQ(nodir.err.rfind("gpuscope: error: ", 0), 0u);
  const CmdResult help = run("import --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("-o,--output"), std::string::npos);
}

// open_trace: chosen by content, not by name.
TEST_F(CmdImport, OpenTraceDetectsByContent) {
  const std::string json = write("looks-like.gscope", kTrace);
  EXPECT_EQ(detect_trace_file(json), TraceFileKind::chrome_json);
  EXPECT_EQ(open_trace(json).kernels().size(), 1u);

  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::string gz(libdeflate_gzip_compress_bound(c, std::strlen(kTrace)), '\0');
  gz.resize(libdeflate_gzip_compress(c, kTrace, std::strlen(kTrace), gz.data(), gz.size()));
  libdeflate_free_compressor(c);
  const std::string gzp = write("trace.bin", gz);
  EXPECT_EQ(detect_trace_file(gzp), TraceFileKind::chrome_json_gz);
  EXPECT_EQ(open_trace(gzp).kernels().size(), 1u);

  const std::string array =
      write("array.json", "\n  [{\"ph\": \"i\", \"name\": \"m\", \"pid\": 1, \"tid\": 1, \"ts\": 1}]");
  EXPECT_EQ(detect_trace_file(array), TraceFileKind::chrome_json);

  const Trace t = import_chrome_json(json);
  write_gscope(t, path("real.json"));  // a .gscope whatever its name
  EXPECT_EQ(detect_trace_file(path("real.json")), TraceFileKind::gscope);
  EXPECT_EQ(open_trace(path("real.json")).kernels().size(), 1u);

  const std::string text = write("notes.txt", "hello");
  EXPECT_EQ(detect_trace_file(text), TraceFileKind::unknown);
  EXPECT_THROW(open_trace(text), InputError);
  const std::string empty = write("empty.json", "");
  try {
    open_trace(empty);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(e.reason().find("empty"), std::string::npos);
  }
  EXPECT_THROW(detect_trace_file(path("missing.json")), InputError);
}

}  // namespace
}  // namespace gpuscope
