// files.h: outputs never replace an input, appear complete or not at all,
// leave no temporary behind (destructor, signals, a dead process's leftovers),
// are written through (never replaced) when they are no regular file (a FIFO,
// a device, standard output, the file behind a symbolic link), and streams
// (standard input among them) are read once into something seekable.
#include "trace/files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "trace/error.h"

namespace gpuscope::files {
namespace {

namespace fs = std::filesystem;

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope-files-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  static void write(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  fs::path dir_;
};

TEST_F(Files, SameFileByInodeThroughLinksAndOtherPaths) {
  write(path("a"), "x");
  write(path("b"), "x");
  fs::create_symlink(path("a"), path("link"));
  fs::create_hard_link(path("a"), path("hard"));
  EXPECT_TRUE(same_file(path("a"), path("link")));
  EXPECT_TRUE(same_file(path("a"), path("hard")));
  EXPECT_TRUE(same_file(path("a"), dir_.string() + "/./a"));
  EXPECT_FALSE(same_file(path("a"), path("b")));
  EXPECT_FALSE(same_file(path("a"), path("missing")));
}

TEST_F(Files, AnOutputThatIsAnInputIsRefusedAndUntouched) {
  write(path("t.gscope"), "trace");
  fs::create_symlink(path("t.gscope"), path("l.gscope"));
  const std::vector<std::string> inputs{path("other"), path("t.gscope")};
  for (const std::string& out :
       {path("t.gscope"), path("l.gscope"), dir_.string() + "/../" + dir_.filename().string() + "/t.gscope"}) {
    try {
      refuse_output_among_inputs(out, inputs);
      ADD_FAILURE() << out << " was not refused";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), out);
      EXPECT_NE(e.reason().find("refusing to overwrite"), std::string::npos) << e.reason();
    }
  }
  EXPECT_NO_THROW(refuse_output_among_inputs(path("new.json"), inputs));
  EXPECT_EQ(read(path("t.gscope")), "trace");
}

TEST_F(Files, CommitReplacesTheOutputAtOnceAndAnUncommittedFileLeavesNothing) {
  write(path("out"), "old");
  for (auto kind : {OutputFile::Kind::any, OutputFile::Kind::named}) {
    {
      OutputFile f(path("out"), kind);
      f.write("new", 3);
      EXPECT_EQ(read(path("out")), "old");  // not before commit
      f.commit();
    }
    EXPECT_EQ(read(path("out")), "new");
    EXPECT_EQ(entries(), 1u);
    {
      OutputFile f(path("out"), kind);
      f.write("half", 4);
    }  // destroyed without commit: an error on the way
    EXPECT_EQ(read(path("out")), "new");
    EXPECT_EQ(entries(), 1u);
    write(path("out"), "old");
  }
}

TEST_F(Files, ANamedTemporaryCanBeWrittenByName) {
  OutputFile f(path("db.sqlite"), OutputFile::Kind::named);
  ASSERT_FALSE(f.temp_path().empty());
  f.close_fd();
  write(f.temp_path(), "by name");
  f.commit();
  EXPECT_EQ(read(path("db.sqlite")), "by name");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(Files, LeftoversOfDeadProcessesGoWithTheNextOutput) {
  // A child that dies holding a named temporary: SIGKILL cannot be caught.
  const pid_t child = ::fork();
  if (child == 0) {
    OutputFile f(path("x.sqlite"), OutputFile::Kind::named);
    f.write("partial", 7);
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(fs::exists(path("x.sqlite.tmp." + std::to_string(child))));
  write(path("x.sqlite.tmp.1"), "pid 1 is alive: not ours to remove");
  {
    OutputFile f(path("x.sqlite"));
    f.write("ok", 2);
    f.commit();
  }
  EXPECT_FALSE(fs::exists(path("x.sqlite.tmp." + std::to_string(child))));
  EXPECT_TRUE(fs::exists(path("x.sqlite.tmp.1")));
  EXPECT_EQ(read(path("x.sqlite")), "ok");
}

TEST_F(Files, ACaughtSignalRemovesNamedTemporariesAndEndsWithTheSignal) {
  for (int sig : {SIGTERM, SIGHUP, SIGINT, SIGPIPE}) {
    const pid_t child = ::fork();
    if (child == 0) {
      remove_temporaries_on_signals();
      OutputFile f(path("y.sqlite"), OutputFile::Kind::named);
      f.write("partial", 7);
      ::raise(sig);
      ::_exit(0);  // not reached
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << sig;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(entries(), 0u) << "signal " << sig << " left a temporary";
  }
}

TEST_F(Files, AFifoIsReadOnceIntoSomethingSeekable) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream f(path("fifo"), std::ios::binary);
    f << std::string(3 << 20, 'z') << "end";
  });
  const std::string p = seekable_path(path("fifo"));
  writer.join();
  EXPECT_NE(p, path("fifo"));
  EXPECT_EQ(seekable_path(path("fifo")), p);  // a second look gets the same copy
  const std::string all = read(p);
  EXPECT_EQ(all.size(), (3u << 20) + 3);
  EXPECT_EQ(all.substr(all.size() - 3), "end");
  write(path("plain"), "x");
  EXPECT_EQ(seekable_path(path("plain")), path("plain"));
}

TEST_F(Files, AFifoNobodyWritesToFailsInsteadOfHanging) {
  ASSERT_EQ(::mkfifo(path("silent").c_str(), 0600), 0);
  try {
    seekable_path(path("silent"), 1);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path("silent"));
    EXPECT_NE(e.reason().find("nothing arrived"), std::string::npos) << e.reason();
  }
}

// A stream without an end (/dev/zero, a writer that never stops) is read up
// to the budget and refused, naming it.
TEST_F(Files, AStreamWithoutAnEndIsRefusedAtTheBudget) {
  try {
    (void)seekable_path("/dev/zero", 10, {}, 4u << 20);
    ADD_FAILURE() << "/dev/zero was read to an end";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "/dev/zero");
    EXPECT_NE(e.reason().find("did not end within the memory budget of 4 MiB"), std::string::npos) << e.reason();
  }
}

// The first bytes decide before the rest is read: a stream that is no trace is
// refused at once, whatever follows.
TEST_F(Files, AHeadCheckRefusesAStreamAtItsFirstBytes) {
  std::size_t seen = 0;
  try {
    (void)seekable_path("/dev/zero", 10, [&](std::span<const std::uint8_t> head) {
      seen = head.size();
      throw InputError("/dev/zero", "not a trace");
    });
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.reason(), "not a trace");
  }
  EXPECT_EQ(seen, 64u);
}

// Files of /proc report size 0 but have content: they are read like a stream,
// never taken for empty files.
TEST_F(Files, AProcFileOfSizeZeroIsReadForWhatItHolds) {
  const std::string p = seekable_path("/proc/self/status");
  EXPECT_NE(p, "/proc/self/status");
  EXPECT_NE(read(p).find("VmRSS"), std::string::npos);
  write(path("empty"), "");
  EXPECT_EQ(seekable_path(path("empty")), path("empty"));  // a truly empty file stays itself
}

// Reads a FIFO to its end on another thread, as `cat fifo` would.
class FifoReader {
 public:
  explicit FifoReader(const std::string& fifo)
      : thread_([this, fifo] {
          std::ifstream f(fifo, std::ios::binary);
          got_.assign(std::istreambuf_iterator<char>(f), {});
        }) {}
  std::string get() {
    thread_.join();
    return got_;
  }

 private:
  std::string got_;
  std::thread thread_;
};

bool is_fifo(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

TEST_F(Files, AFifoOutputIsWrittenThroughNotReplaced) {
  for (const OutputFile::Kind kind : {OutputFile::Kind::any, OutputFile::Kind::named}) {
    ASSERT_EQ(::mkfifo(path("out").c_str(), 0600), 0);
    FifoReader reader(path("out"));
    {
      OutputFile out(path("out"), kind);
      EXPECT_TRUE(out.through());
      if (kind == OutputFile::Kind::named) {
        out.close_fd();
        EXPECT_EQ(out.temp_path().find(dir_.string()), std::string::npos) << "a temporary beside a FIFO";
        write(out.temp_path(), "by name");
      } else {
        out.write("written", 7);
      }
      out.commit();
      if (kind == OutputFile::Kind::named) {
        EXPECT_FALSE(fs::exists(out.temp_path()));
      }
    }
    EXPECT_EQ(reader.get(), kind == OutputFile::Kind::any ? "written" : "by name");
    EXPECT_TRUE(is_fifo(path("out"))) << "the FIFO was replaced by a regular file";
    EXPECT_EQ(entries(), 1u);
    fs::remove(path("out"));
  }
}

TEST_F(Files, ASymbolicLinkStaysAndTheFileItNamesIsReplaced) {
  write(path("real"), "old");
  fs::create_symlink("real", path("link"));  // relative, as `ln -s real link` makes it
  {
    OutputFile out(path("link"));
    EXPECT_FALSE(out.through());
    out.write("new", 3);
    out.commit();
  }
  EXPECT_TRUE(fs::is_symlink(path("link")));
  EXPECT_EQ(read(path("real")), "new");
  // A link to nothing yet: the file it names is made, the link kept.
  fs::create_symlink("made", path("dangling"));
  {
    OutputFile out(path("dangling"), OutputFile::Kind::named);
    out.close_fd();
    write(out.temp_path(), "made");
    out.commit();
  }
  EXPECT_TRUE(fs::is_symlink(path("dangling")));
  EXPECT_EQ(read(path("made")), "made");
  EXPECT_EQ(entries(), 4u);  // real, link, dangling, made: no temporary left
  // A link to a FIFO writes through the FIFO.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_symlink("fifo", path("to-fifo"));
  FifoReader reader(path("fifo"));
  {
    OutputFile out(path("to-fifo"));
    out.write("piped", 5);
    out.commit();
  }
  EXPECT_EQ(reader.get(), "piped");
  EXPECT_TRUE(fs::is_symlink(path("to-fifo")));
  EXPECT_TRUE(is_fifo(path("fifo")));
}

TEST_F(Files, ADeviceIsWrittenThrough) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  for (const OutputFile::Kind kind : {OutputFile::Kind::any, OutputFile::Kind::named}) {
    OutputFile out("/dev/null", kind);
    EXPECT_TRUE(out.through());
    if (kind == OutputFile::Kind::named) {
      out.close_fd();
      write(out.temp_path(), "x");
    } else {
      out.write("x", 1);
    }
    out.commit();
  }
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST_F(Files, ADirectoryOrAnEmptyNameIsRefused) {
  EXPECT_THROW(OutputFile(dir_.string()), InputError);
  EXPECT_THROW(OutputFile(""), InputError);
}

// Runs `body` with file descriptor `fd` (0 or 1) redirected to `target`.
template <class F>
void with_fd(int fd, int target, F&& body) {
  std::fflush(stdout);
  const int saved = ::dup(fd);
  ASSERT_GE(saved, 0);
  ::dup2(target, fd);
  body();
  std::fflush(stdout);
  ::dup2(saved, fd);
  ::close(saved);
}

TEST_F(Files, DashIsStandardOutputAndStandardInput) {
  const int out_fd = ::open(path("stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(out_fd, 0);
  with_fd(1, out_fd, [] {
    OutputFile out("-");
    EXPECT_TRUE(out.through());
    out.write("to stdout", 9);
    out.commit();
    OutputFile named("-", OutputFile::Kind::named);  // SQLite, images: a temporary copied through
    named.close_fd();
    std::ofstream(named.temp_path()) << ", by name";
    named.commit();
  });
  ::close(out_fd);
  EXPECT_EQ(read(path("stdout")), "to stdout, by name");
  EXPECT_EQ(entries(), 1u);

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::write(pipe_fds[1], "from stdin", 10), 10);
  ::close(pipe_fds[1]);
  std::string spooled;
  with_fd(0, pipe_fds[0], [&] { spooled = seekable_path("-"); });
  ::close(pipe_fds[0]);
  EXPECT_EQ(read(spooled), "from stdin");
  EXPECT_EQ(input_name("-"), "standard input");
  EXPECT_EQ(input_name("t.json"), "t.json");
}

}  // namespace
}  // namespace gpuscope::files
