#include "export/trace_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "export/report_json.h"
#include "trace/error.h"
#include "trace/files.h"

namespace gpuscope {

namespace fs = std::filesystem;

namespace {

bool named_like_trace(std::string_view name) {
  return name.ends_with(".gscope") || name.ends_with(".json") || name.ends_with(".json.gz") ||
         name.ends_with(".sqlite");
}

// Why the directory entry `path` is not a trace file to read, or empty when
// it is one. Links are followed; what they lead to decides.
std::string why_not_a_trace(const std::string& path, std::string_view name) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ELOOP) return "a symbolic link loop";
    struct stat link {};
    if (err == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      return "a symbolic link to nothing";
    return std::string("cannot read: ") + std::strerror(err);
  }
  if (S_ISDIR(st.st_mode)) return "a directory (directories are not searched)";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe), not a regular file";
  if (S_ISCHR(st.st_mode)) return "a character device, not a regular file";
  if (S_ISBLK(st.st_mode)) return "a block device, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "a socket, not a regular file";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (!named_like_trace(name)) return "not named like a trace file (.gscope, .json, .json.gz, .sqlite)";
  if (is_saved_report(path)) return "a saved gpuscope report, not a trace";
  return {};
}

}  // namespace

bool is_saved_report(const std::string& path) {
  std::string file;
  try {
    file = files::seekable_path(path);  // a pipe is read once: its copy serves every later look
  } catch (const InputError&) {
    return false;  // the trace reader says what is wrong with it
  }
  std::ifstream in(file, std::ios::binary);
  char head[512] = {};
  in.read(head, sizeof head);
  return looks_like_report_json(std::string_view(head, static_cast<std::size_t>(in.gcount())));
}

TraceInputs list_trace_inputs(const std::vector<std::string>& inputs) {
  TraceInputs out;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      out.files.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    std::vector<LeftOut> left_out;
    fs::directory_iterator it(in, ec);
    if (ec) throw InputError(in, "cannot list the directory: " + ec.message());
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) throw InputError(in, "cannot list the directory: " + ec.message());
      const std::string path = it->path().string(), name = it->path().filename().string();
      if (const std::string why = why_not_a_trace(path, name); !why.empty())
        left_out.push_back({path, why});
      else
        found.push_back(path);
    }
    std::sort(left_out.begin(), left_out.end(), [](const LeftOut& a, const LeftOut& b) { return a.file < b.file; });
    if (found.empty()) {
      std::string held;
      for (const LeftOut& l : left_out)
        if (held.size() < 300) held += (held.empty() ? "; it holds " : ", ") + l.file + " (" + l.problem + ")";
      throw InputError(in, "no trace files (.gscope, .json, .json.gz, .sqlite) in this directory" + held);
    }
    std::sort(found.begin(), found.end());
    out.files.insert(out.files.end(), found.begin(), found.end());
    out.left_out.insert(out.left_out.end(), left_out.begin(), left_out.end());
  }
  return out;
}

std::vector<std::string> trace_files(const std::vector<std::string>& inputs) { return list_trace_inputs(inputs).files; }

}  // namespace gpuscope
