#include "capture/process_report.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "trace/files.h"

namespace gpuscope::capture {

namespace {

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

std::uint64_t to_u64(const std::string& v) {
  std::uint64_t x = 0;
  std::from_chars(v.data(), v.data() + v.size(), x);
  return x;
}

}  // namespace

bool write_process_report(const std::string& dir, const ProcessReport& r) noexcept {
  try {
    std::ostringstream out;
    out << "pid=" << r.pid << "\n"
        << "state=" << one_line(r.state) << "\n"
        << "ok=" << (r.summary.ok ? 1 : 0) << "\n"
        << "command=" << one_line(r.command) << "\n"
        << "output=" << one_line(r.summary.output) << "\n"
        << "message=" << one_line(r.summary.message) << "\n";
    for (const auto& [key, count] : kSummaryCounts) out << key << "=" << r.summary.*count << "\n";
    const std::string path = dir + "/" + std::to_string(r.pid) + ".report";
    const std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << out.str();
      if (!f.flush()) return false;
    }
    return std::rename(tmp.c_str(), path.c_str()) == 0;
  } catch (...) {
    return false;
  }
}

std::vector<ProcessReport> read_process_reports(const std::string& dir) {
  std::vector<ProcessReport> out;
  for (const std::string& file : files::files_with_extension(dir, ".report")) {
    std::ifstream in(file);
    ProcessReport r;
    std::string line;
    while (std::getline(in, line)) {
      const std::size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
      if (key == "pid")
        r.pid = static_cast<std::uint32_t>(to_u64(value));
      else if (key == "state")
        r.state = value;
      else if (key == "ok")
        r.summary.ok = value == "1";
      else if (key == "command")
        r.command = value;
      else if (key == "output")
        r.summary.output = value;
      else if (key == "message")
        r.summary.message = value;
      else
        for (const auto& [name, count] : kSummaryCounts)
          if (key == name) r.summary.*count = to_u64(value);
    }
    if (r.pid != 0) out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const ProcessReport& a, const ProcessReport& b) { return a.pid < b.pid; });
  return out;
}

std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!all.empty() && all.back() == '\0') all.pop_back();
  std::replace(all.begin(), all.end(), '\0', ' ');
  return all;
}

}  // namespace gpuscope::capture
