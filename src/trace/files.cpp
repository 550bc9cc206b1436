#include "trace/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "trace/budget.h"
#include "trace/error.h"

namespace gpuscope::files {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// [SECTION] Named temporaries the signal handlers remove -------------------------------------------
//
// A fixed table, so the handler touches no heap and calls only unlink(): a
// slot is claimed (state 1), filled, published (2); the handler unlinks
// published slots.
constexpr int kSlots = 32;
constexpr std::size_t kPathMax = 4096;
struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 published
  char path[kPathMax];
};
Slot g_slots[kSlots];

int register_temporary(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2, std::memory_order_release);
    return i;
  }
  return -1;  // more than kSlots at once: the destructor still removes it
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0, std::memory_order_release);
}

extern "C" void remove_temporaries_and_reraise(int sig) {
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
  std::signal(sig, SIG_DFL);
  ::raise(sig);
}

// "<dir>/<name>.tmp.<pid>" left by processes that no longer run (a SIGKILL).
void remove_stale_temporaries(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (!name.starts_with(prefix)) continue;
    const std::string_view digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(std::string(digits)));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

// [SECTION] Inputs and outputs ---------------------------------------------------------------------

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void refuse_output_among_inputs(const std::string& output, std::span<const std::string> inputs) {
  for (const std::string& in : inputs)
    if (same_file(output, in))
      throw InputError(output, in == output ? "is also an input of this command; refusing to overwrite it"
                                            : "is the same file as the input " + in + "; refusing to overwrite it");
}

namespace {

// The file a symbolic link leads to, after every link in the chain (at most
// 40, as the kernel allows); the path itself when it is no link. The last
// target need not exist (a dangling link: writing creates it).
std::string follow_links(const std::string& path) {
  std::string at = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    const ssize_t n = ::readlink(at.c_str(), target.data(), target.size());
    if (n < 0 || static_cast<std::size_t>(n) >= target.size()) return at;  // the writer's open() says why
    target.resize(static_cast<std::size_t>(n));
    at = target.starts_with('/') ? target : directory_of(at) + "/" + target;
  }
  throw InputError(path, "too many levels of symbolic links");
}

// Where a named temporary of an output written through goes.
std::string temporary_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

}  // namespace

OutputFile::OutputFile(std::string path, Kind kind) : path_(std::move(path)) {
  if (path_.empty()) throw InputError("(output)", "an empty file name");
  if (path_ == "-") {
    std::fflush(stdout);  // what was printed first comes first
    through_fd_ = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    if (through_fd_ < 0) fail("cannot write to standard output", errno);
    open_through(kind);
    return;
  }
  target_ = follow_links(path_);
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(path_, "is a directory");
  if (::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A FIFO, device or socket: written through (a FIFO's open waits for its reader).
    through_fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (through_fd_ < 0) fail("cannot open for writing", errno);
    open_through(kind);
    return;
  }
  open_temporary(kind);
}

void OutputFile::open_temporary(Kind kind) {
  remove_stale_temporaries(target_);
#ifdef O_TMPFILE
  if (kind == Kind::any) fd_ = ::open(directory_of(target_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#endif
  if (fd_ < 0) {
    temp_ = target_ + ".tmp." + std::to_string(::getpid());
    slot_ = register_temporary(temp_);
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      const int err = errno;
      unregister_temporary(slot_);
      slot_ = -1;
      temp_.clear();
      throw InputError(path_, "cannot create: " + errno_text(err));
    }
  }
}

// Through: a writer that writes through fd() writes the output itself; one
// that opens a file by name gets a temporary in $TMPDIR, copied through by
// commit().
void OutputFile::open_through(Kind kind) {
  if (kind == Kind::any) {
    fd_ = through_fd_;
    return;
  }
  std::string pattern = temporary_directory() + "/gpuscope-output-XXXXXX";
  fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd_ < 0) fail("cannot create a temporary file in " + temporary_directory(), errno);
  temp_ = pattern;
  slot_ = register_temporary(temp_);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && fd_ != through_fd_) ::close(fd_);
  if (through_fd_ >= 0) ::close(through_fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  unregister_temporary(slot_);
}

void OutputFile::fail(const std::string& what, int err) { throw InputError(path_, what + ": " + errno_text(err)); }

void OutputFile::write(const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t w = ::write(fd_, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail("cannot write", errno);
    p += w;
    size -= static_cast<std::size_t>(w);
  }
}

void OutputFile::close_fd() {
  if (fd_ == through_fd_) return;  // the output itself stays open until commit()
  if (fd_ >= 0 && ::close(fd_) != 0) {
    fd_ = -1;
    fail("cannot write", errno);
  }
  fd_ = -1;
}

void OutputFile::copy_temporary_through() {
  const int in = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) fail("cannot read back " + temp_, errno);
  std::vector<char> buf(1 << 20);
  const int out = fd_;
  fd_ = through_fd_;
  for (;;) {
    const ssize_t r = ::read(in, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int err = errno;
      ::close(in);
      fd_ = out;
      if (r < 0) fail("cannot read back " + temp_, err);
      return;
    }
    write(buf.data(), static_cast<std::size_t>(r));
  }
}

void OutputFile::commit(bool sync) {
  if (through()) {
    if (!temp_.empty()) {
      close_fd();
      copy_temporary_through();
      ::unlink(temp_.c_str());
    }
    committed_ = true;
    unregister_temporary(slot_);
    slot_ = -1;
    return;  // no fdatasync: a pipe or device has nothing to sync
  }
  if (fd_ >= 0) {
    if (sync && ::fdatasync(fd_) != 0) fail("cannot write", errno);
    if (temp_.empty()) {
      // Unnamed: give it a unique name beside the output (linkat through
      // /proc, which needs no privilege), then rename that over the output.
      temp_ = target_ + ".tmp." + std::to_string(::getpid());
      slot_ = register_temporary(temp_);
      const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
      ::unlink(temp_.c_str());
      if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temp_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        const int err = errno;
        temp_.clear();
        fail("cannot put the finished file into place", err);
      }
    }
    close_fd();
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot put the finished file into place", errno);
  committed_ = true;
  unregister_temporary(slot_);
  slot_ = -1;
}

void remove_temporaries_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGTERM, SIGHUP, SIGINT, SIGPIPE}) {
      struct sigaction sa {};
      sa.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

namespace {

// Writes all of [data, data + n) to `fd`; returns 0 or errno.
int write_all(int fd, const char* data, std::size_t n) {
  for (std::size_t done = 0; done < n;) {
    const ssize_t w = ::write(fd, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    done += static_cast<std::size_t>(w);
  }
  return 0;
}

// Whether a regular file that says it is empty has bytes to read (files of
// /proc and /sys report size 0).
bool has_content(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char c;
  ssize_t r;
  do r = ::read(fd, &c, 1);
  while (r < 0 && errno == EINTR);
  ::close(fd);
  return r > 0;
}

// Copies the stream `in` into the memory file `mem`: at most `max_bytes`,
// its first bytes shown to `check_head`. Throws InputError naming `path`.
void spool(const std::string& path, int in, int mem, std::uint64_t max_bytes, const HeadCheck& check_head) {
  constexpr std::size_t kHead = 64;
  std::vector<char> buf(1 << 20);
  std::uint64_t total = 0;  // bytes written to `mem`
  std::size_t held = 0;     // bytes in `buf` not written yet
  bool checked = !check_head;
  for (;;) {
    const ssize_t r = ::read(in, buf.data() + held, buf.size() - held);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw InputError(path, "cannot read: " + errno_text(errno));
    held += static_cast<std::size_t>(r);
    const bool end = r == 0;
    if (!checked) {
      if (held < kHead && !end) continue;
      check_head(
          std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(buf.data()), std::min(held, kHead)));
      checked = true;
    }
    if (held > max_bytes - std::min(total, max_bytes))
      throw InputError(path, "the stream did not end within the memory budget of " + memory_size_text(max_bytes) +
                                 " (a pipe or device is read whole into memory: save it to a file, or raise "
                                 "--max-memory)");
    if (const int err = write_all(mem, buf.data(), held))
      throw InputError(path, "cannot buffer the stream: " + errno_text(err));
    total += held;
    held = 0;
    if (end) return;
  }
}

}  // namespace

std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

std::vector<std::string> files_with_extension(const std::string& dir, std::string_view extension) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == extension) out.push_back(entry.path().string());
  return out;
}

std::string seekable_path(const std::string& given, int wait_s, const HeadCheck& check_head, std::uint64_t max_bytes) {
  const bool stdin_given = given == "-";
  if (stdin_given && ::isatty(STDIN_FILENO))
    throw InputError(input_name(given), "is a terminal: pipe a trace in (cat t.json | gpuscope …) or name a file");
  const std::string path = stdin_given ? "/dev/stdin" : given;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (stdin_given) throw InputError(input_name(given), "cannot read: " + errno_text(errno));
    return path;  // the reader's open() says why
  }
  if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode)) return path;
  if (S_ISREG(st.st_mode) && (st.st_size > 0 || !has_content(path))) return path;
  // A stream (or a file of /proc or /sys: size 0, yet content) can be read
  // once: a second look (detection, then reading) gets the copy made by the
  // first.
  static std::mutex mutex;
  static std::map<std::string, std::string> spooled;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = spooled.find(path); it != spooled.end()) return it->second;
  const int in = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (in < 0) throw InputError(input_name(given), "cannot open: " + errno_text(errno));
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } close_in{in};
  // A FIFO with no writer yet: wait for data (or its end) a bounded time.
  pollfd pfd{in, POLLIN, 0};
  int ready;
  do ready = ::poll(&pfd, 1, wait_s * 1000);
  while (ready < 0 && errno == EINTR);
  if (ready == 0)
    throw InputError(input_name(given),
                     "nothing arrived from this pipe in " + std::to_string(wait_s) + " s (is anything writing to it?)");
  ::fcntl(in, F_SETFL, ::fcntl(in, F_GETFL) & ~O_NONBLOCK);
  Closer mem{::memfd_create("gpuscope-input", MFD_CLOEXEC)};
  if (mem.fd < 0) throw InputError(input_name(given), "cannot buffer the stream: " + errno_text(errno));
  spool(input_name(given), in, mem.fd, max_bytes ? max_bytes : memory_budget(), check_head);
  // Open until the process ends, like stdin.
  const int fd = mem.fd;
  mem.fd = -1;
  return spooled[path] = "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace gpuscope::files
