// open_trace / detect_trace_file: the file kind comes from the content.
#include "import/open_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "import/synthetic.h"
#include "store/gscope.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

class OpenTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-open-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(OpenTrace, DetectsByContentNotName) {
  EXPECT_EQ(detect_trace_file(write("a.gscope", "{\"traceEvents\":[]}")), TraceFileKind::chrome_json);
  EXPECT_EQ(detect_trace_file(write("b.json", "\xef\xbb\xbf \n\t[{}]")), TraceFileKind::chrome_json);
  EXPECT_EQ(detect_trace_file(write("c.json", std::string("\x1f\x8b\x08\x00", 4))), TraceFileKind::chrome_json_gz);
  EXPECT_EQ(detect_trace_file(write("d.json", "hello")), TraceFileKind::unknown);
  EXPECT_EQ(detect_trace_file(write("e.json", "")), TraceFileKind::unknown);
  EXPECT_EQ(detect_trace_file(write("f.txt", "\x89GSCxx")),
            TraceFileKind::gscope);  // damaged magic: the reader says why

  SyntheticOptions o;
  o.kernels = 300;
  const Trace t = make_synthetic_trace(o);
  const std::string file = (dir_ / "renamed.trace").string();
  write_gscope(t, file);
  EXPECT_EQ(detect_trace_file(file), TraceFileKind::gscope);
  const Trace back = open_trace(file);
  EXPECT_EQ(back.kernels().size(), 300u);
  EXPECT_EQ(back.meta().source, TraceSource::synthetic);
}

TEST_F(OpenTrace, RefusesWhatItCannotReadWithTheFileName) {
  auto reason = [](const std::string& path) {
    try {
      open_trace(path);
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      return e.reason();
    }
    ADD_FAILURE() << "no error for " << path;
    return std::string();
  };
  EXPECT_NE(reason(write("empty", "")).find("empty file"), std::string::npos);
  EXPECT_NE(reason(write("text", "hello world")).find("not a trace file"), std::string::npos);
  EXPECT_NE(reason((dir_ / "missing").string()).find("cannot open"), std::string::npos);
  EXPECT_NE(reason(dir_.string()).find("directory"), std::string::npos);
  EXPECT_THROW(detect_trace_file((dir_ / "missing").string()), InputError);
  // A damaged .gscope header goes to the store's reader, which explains.
  EXPECT_FALSE(reason(write("bad.gscope", "\x89GSCOPE\n" + std::string(40, '\xff'))).empty());
}

}  // namespace
}  // namespace gpuscope
