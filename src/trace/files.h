// Files in and out, with the rules every reader and writer of gpuscope keeps:
//
//  * An output never replaces one of the command's inputs (the same file by
//    device and inode, whatever the path or link that names it).
//  * An output that is (or will be) a regular file appears complete or not at
//    all: it is written to a temporary first and moved into place by
//    commit(). The temporary is unnamed where the filesystem allows
//    (O_TMPFILE: the kernel drops it whatever kills the process, SIGKILL
//    included); otherwise it is "<path>.tmp.<pid>", removed by the
//    destructor, by the signal handlers of remove_temporaries_on_signals(),
//    and, after a SIGKILL, by the next OutputFile for the same path (leftovers
//    of dead processes only).
//  * An output that is not a regular file is written through, never
//    replaced: "-" is standard output; a FIFO, a character device
//    (/dev/null, a terminal) or a socket is opened and written; a symbolic
//    link stays and the file it points to is replaced (atomically, as above).
//  * An input that is a pipe, FIFO or character device (a process substitution
//    such as <(zcat t.json.gz), "-" for standard input) is read to its end
//    once into an anonymous memory file, so the readers can seek in it like
//    in a file — at most the memory budget of it (trace/budget.h): a stream
//    without an end (/dev/zero) is refused once it has sent that much.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::files {

// Whether two paths name the same existing file (device and inode, links
// followed). False when either does not exist.
bool same_file(const std::string& a, const std::string& b);

// Throws InputError naming `output` when it is the same file as one of
// `inputs`; nothing is touched.
void refuse_output_among_inputs(const std::string& output, std::span<const std::string> inputs);

class OutputFile {
 public:
  enum class Kind {
    any,    // unnamed where possible; write through fd()
    named,  // always "<path>.tmp.<pid>": for writers that open the file by name (SQLite, image writers)
  };
  // Creates the temporary in the directory of the file `path` names (after
  // symbolic links); for an output written through (standard output, a
  // FIFO, a device), opens it instead, and a named temporary goes to
  // $TMPDIR. Throws InputError naming `path` when it cannot.
  explicit OutputFile(std::string path, Kind kind = Kind::any);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // an uncommitted temporary is removed

  int fd() const { return fd_; }                          // open for writing (-1 after close_fd())
  const std::string& temp_path() const { return temp_; }  // empty while the temporary is unnamed
  const std::string& path() const { return path_; }

  // Writes all of `size` bytes at the current offset. Throws InputError.
  void write(const void* data, std::size_t size);
  // Closes fd() (for writers that reopen temp_path() themselves).
  void close_fd();
  // Flushes to disk (fdatasync when `sync`) and moves the file into place,
  // replacing what was there; an output written through gets the named
  // temporary's bytes (if any) and is closed. Throws InputError; the
  // temporary is then gone.
  void commit(bool sync = false);

  // True when the output is written through (standard output, a FIFO, a
  // device): not replaced, and not complete-or-absent.
  bool through() const { return through_fd_ >= 0; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  void open_temporary(Kind kind);
  void open_through(Kind kind);
  void copy_temporary_through();
  std::string path_;    // as given (messages)
  std::string target_;  // the regular file commit() replaces: path_ after symbolic links
  std::string temp_;
  int fd_ = -1;
  int through_fd_ = -1;  // the output itself, when written through
  int slot_ = -1;        // in the signal handlers' list of named temporaries
  bool committed_ = false;
};

// SIGTERM, SIGHUP, SIGINT and SIGPIPE remove the named temporaries of every
// OutputFile still open, then end the process with the signal's own status.
// For programs (the CLI, the viewer), never for a library loaded into someone
// else's process.
void remove_temporaries_on_signals();

// Looks at the first bytes of a stream (64, or all of a shorter one) before
// the rest is read; throws InputError to refuse it (a stream that is no
// trace at all, such as /dev/zero, is refused at once).
using HeadCheck = std::function<void(std::span<const std::uint8_t> head)>;

// A path the readers can open and seek: `path` itself for a regular file;
// for a pipe, FIFO, socket or character device, for "-" (standard input),
// and for a file that says it is empty but is not (those of /proc and /sys),
// its whole content read once into an anonymous memory file
// ("/proc/self/fd/N", kept open until exit). Waits at most `wait_s` seconds
// for the first byte of a FIFO nobody writes to. Throws InputError naming
// `path` (input_name() for "-"), also when the stream sends more than
// `max_bytes` (default: the memory budget, trace/budget.h) or `check_head`
// refuses its first bytes. This is the one place a stream is spooled.
std::string seekable_path(const std::string& path, int wait_s = 10, const HeadCheck& check_head = {},
                          std::uint64_t max_bytes = 0);

// What messages call an input or output: "standard input" for "-" as an
// input, the path otherwise.
std::string input_name(const std::string& path);

// The paths of the entries of directory `dir` whose extension is `extension`
// (".host"), in the order the directory lists them; none when it cannot be
// read.
std::vector<std::string> files_with_extension(const std::string& dir, std::string_view extension);

}  // namespace gpuscope::files
