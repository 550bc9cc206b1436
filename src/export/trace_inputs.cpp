#include "export/trace_inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "export/report_json.h"
#include "trace/error.h"
#include "trace/files.h"

namespace gpuscope {

namespace fs = std::filesystem;

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

std::vector<std::string> trace_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      out.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(in, ec)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file(ec)) continue;
      const bool trace = name.ends_with(".gscope") || name.ends_with(".json") || name.ends_with(".json.gz") ||
                         name.ends_with(".sqlite");
      if (trace && !is_saved_report(e.path().string())) found.push_back(e.path().string());
    }
    if (ec) throw InputError(in, "cannot list the directory: " + ec.message());
    if (found.empty()) throw InputError(in, "no trace files (.gscope, .json, .json.gz, .sqlite) in this directory");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace gpuscope
