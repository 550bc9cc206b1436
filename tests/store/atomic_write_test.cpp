// write_gscope never leaves a partial file under the real name, nor a
// temporary file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/gscope.h"
#include "store/test_files.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using testing::TempDir;

std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(GscopeAtomicWrite, SuccessLeavesOnlyTheFile) {
  TempDir dir;
  write_gscope(testing::random_trace(1), dir.file("a.gscope"));
  EXPECT_EQ(files_in(dir.path()), 1u);
  EXPECT_TRUE(is_gscope_file(dir.file("a.gscope")));
}

TEST(GscopeAtomicWrite, MissingDirectoryNamesThePath) {
  TempDir dir;
  const std::string path = dir.file("missing/a.gscope");
  try {
    write_gscope(testing::random_trace(1), path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.reason().find("No such file"), std::string::npos) << e.what();
  }
  EXPECT_EQ(files_in(dir.path()), 0u);
}

TEST(GscopeAtomicWrite, RenameFailureRemovesTheTemporaryFile) {
  TempDir dir;
  const std::string path = dir.file("target");
  std::filesystem::create_directories(path + "/occupied");  // a non-empty directory cannot be replaced
  EXPECT_THROW(write_gscope(testing::random_trace(1), path), InputError);
  EXPECT_EQ(files_in(dir.path()), 1u);  // only the directory
  EXPECT_TRUE(std::filesystem::is_directory(path));
}

// A write that runs out of space (RLIMIT_FSIZE in a child process) fails with
// InputError, keeps the old file intact and removes its temporary file.
TEST(GscopeAtomicWrite, FailedWriteKeepsTheOldFile) {
  TempDir dir;
  const std::string path = dir.file("keep.gscope");
  testing::write_bytes(path, {'o', 'l', 'd'});
  testing::TrainingTraceOptions o;
  o.kernels = 200'000;
  const Trace big = testing::training_trace(o);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    try {
      write_gscope(big, path);
    } catch (const InputError& e) {
      ::_exit(e.file() == path && e.reason().find("write failed") != std::string::npos ? 0 : 1);
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(3);  // no error: the limit did not bite
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(testing::read_bytes(path), (std::vector<std::uint8_t>{'o', 'l', 'd'}));
  EXPECT_EQ(files_in(dir.path()), 1u);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

TEST(GscopeAtomicWrite, RefusesWhatNoReaderWouldAccept) {
  testing::TempDir dir;
  TraceBuilder b;
  b.intern(std::string((256u << 20) + 1, 'x'));  // one string over the section limit
  const Trace t = b.freeze();
  const std::string path = dir.file("huge.gscope");
  try {
    write_gscope(t, path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(e.reason().find("exceeds the format's limit"), std::string::npos) << e.what();
  }
  EXPECT_EQ(files_in(dir.path()), 0u);
}

}  // namespace
}  // namespace gpuscope
