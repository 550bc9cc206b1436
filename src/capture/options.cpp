#include "capture/options.h"

#include "capture/metric_list.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace gpuscope::capture {

namespace {

struct TraceName {
  unsigned bit;
  std::string_view name;
};
constexpr TraceName kTraceNames[] = {
    {kKernel, "kernel"}, {kMemcpy, "memcpy"}, {kApi, "api"}, {kNvtx, "nvtx"}, {kSync, "sync"},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <class T>
bool parse_number(std::string_view s, T* out) {
  s = trim(s);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::string format_double(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::string("0");
}

// RAII for a file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

// [SECTION] --trace and --capture-range --------------------------------------------------------

std::optional<unsigned> parse_trace_list(std::string_view list, std::string* error) {
  unsigned bits = 0;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string_view item = trim(list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos));
    bool known = false;
    for (const TraceName& t : kTraceNames)
      if (item == t.name) {
        bits |= t.bit;
        known = true;
      }
    if (!known) {
      if (error)
        *error = item.empty()
                     ? "empty item in trace list '" + std::string(list) + "'"
                     : "unknown trace kind '" + std::string(item) + "' (expected kernel, memcpy, api, nvtx, sync)";
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return bits;
}

std::string trace_list(unsigned trace) {
  std::string s;
  for (const TraceName& t : kTraceNames)
    if (trace & t.bit) {
      if (!s.empty()) s += ',';
      s += t.name;
    }
  return s;
}

std::optional<CaptureRange> parse_capture_range(std::string_view text, std::string* error) {
  CaptureRange r;
  text = trim(text);
  if (text.empty() || text == "none") return r;
  if (text == "cuda-profiler-api") {
    r.kind = CaptureRange::Kind::cuda_profiler_api;
    return r;
  }
  if (text.substr(0, 5) == "nvtx:" && text.size() > 5) {
    r.kind = CaptureRange::Kind::nvtx;
    r.nvtx_name = std::string(text.substr(5));
    return r;
  }
  if (error) *error = "unknown capture range '" + std::string(text) + "' (expected cuda-profiler-api or nvtx:NAME)";
  return std::nullopt;
}

std::string validate(const Options& o) {
  std::string error;
  if (o.output.empty()) return "the output file name is empty";
  if (o.trace == 0 || (o.trace & ~static_cast<unsigned>(kAllTraces)))
    return "nothing to trace (choose from kernel, memcpy, api, nvtx, sync)";
  if (!parse_capture_range(o.capture_range, &error)) return error;
  if (!std::isfinite(o.delay_s) || o.delay_s < 0 || o.delay_s > 1e7) return "delay must be a number of seconds >= 0";
  if (!std::isfinite(o.duration_s) || o.duration_s < 0 || o.duration_s > 1e7)
    return "duration must be a number of seconds >= 0";
  if (o.buffer_kb < 64 || o.buffer_kb > 256 * 1024) return "buffer size must be between 64 KiB and 256 MiB";
  if (o.pool_mb * 1024 < o.buffer_kb * 2 || o.pool_mb > 64 * 1024)
    return "the buffer pool must hold at least two buffers and at most 64 GiB";
  if (o.flush_ms < 10 || o.flush_ms > 3'600'000) return "flush interval must be between 10 ms and 1 hour";
  if (!parse_metric_list(o.gpu_metrics, &error)) return "gpu metrics: " + error;
  if (o.gpu_metrics_hz < kMinGpuMetricsHz || o.gpu_metrics_hz > kMaxGpuMetricsHz)
    return "the gpu metrics rate must be between " + std::to_string(kMinGpuMetricsHz) + " and " +
           std::to_string(kMaxGpuMetricsHz) + " samples per second";
  return {};
}

// [SECTION] Environment ------------------------------------------------------------------------

std::map<std::string, std::string> to_environment(const Options& o) {
  const Options d;
  std::map<std::string, std::string> e;
  e[kEnvOutput] = o.output;  // always: the injected library must not guess
  if (o.trace != d.trace) e[kEnvTrace] = trace_list(o.trace);
  if (!o.capture_range.empty()) e[kEnvRange] = o.capture_range;
  if (o.delay_s != d.delay_s) e[kEnvDelay] = format_double(o.delay_s);
  if (o.duration_s != d.duration_s) e[kEnvDuration] = format_double(o.duration_s);
  if (o.buffer_kb != d.buffer_kb) e[kEnvBufferKb] = std::to_string(o.buffer_kb);
  if (o.pool_mb != d.pool_mb) e[kEnvPoolMb] = std::to_string(o.pool_mb);
  if (o.flush_ms != d.flush_ms) e[kEnvFlushMs] = std::to_string(o.flush_ms);
  if (o.gpu_metrics != d.gpu_metrics) e[kEnvGpuMetrics] = o.gpu_metrics;
  if (o.gpu_metrics_hz != d.gpu_metrics_hz) e[kEnvGpuMetricsHz] = std::to_string(o.gpu_metrics_hz);
  return e;
}

Options from_environment(std::string* warnings) {
  Options o;
  auto warn = [&](const char* name, const char* value, std::string_view why) {
    if (!warnings) return;
    if (!warnings->empty()) *warnings += "; ";
    *warnings += std::string(name) + "='" + value + "' ignored: " + std::string(why);
  };
  if (const char* v = env(kEnvOutput)) o.output = v;
  // A variable that `parse` reads: set(its text, what parse made of it), or
  // a warning with parse's reason.
  auto parsed = [&](const char* name, auto parse, auto set) {
    if (const char* v = env(name)) {
      std::string error;
      if (auto x = parse(v, &error))
        set(v, *x);
      else
        warn(name, v, error);
    }
  };
  parsed(kEnvTrace, parse_trace_list, [&](const char*, unsigned t) { o.trace = t; });
  parsed(kEnvRange, parse_capture_range, [&](const char* v, const CaptureRange&) { o.capture_range = v; });
  auto seconds = [&](const char* name, double* out) {
    if (const char* v = env(name)) {
      double x = 0;
      if (parse_number(v, &x) && std::isfinite(x) && x >= 0)
        *out = x;
      else
        warn(name, v, "not a number of seconds");
    }
  };
  seconds(kEnvDelay, &o.delay_s);
  seconds(kEnvDuration, &o.duration_s);
  auto integer = [&](const char* name, auto* out) {
    if (const char* v = env(name)) {
      std::remove_pointer_t<decltype(out)> x = 0;
      if (parse_number(v, &x))
        *out = x;
      else
        warn(name, v, "not a whole number");
    }
  };
  integer(kEnvBufferKb, &o.buffer_kb);
  integer(kEnvPoolMb, &o.pool_mb);
  integer(kEnvFlushMs, &o.flush_ms);
  integer(kEnvGpuMetricsHz, &o.gpu_metrics_hz);
  parsed(kEnvGpuMetrics, parse_metric_list, [&](const char* v, const MetricRequest&) { o.gpu_metrics = v; });
  const std::string problem = validate(o);
  if (!problem.empty()) {
    warn("options", "", problem + "; using defaults");
    Options fallback;
    fallback.output = o.output.empty() ? fallback.output : o.output;
    return fallback;
  }
  return o;
}

int rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "RANK", "SLURM_PROCID", "PMI_RANK"}) {
    if (const char* v = env(name)) {
      int r = 0;
      if (parse_number(std::string_view(v), &r) && r >= 0) return r;
    }
  }
  return -1;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "localhost";
  return buf;
}

// [SECTION] Output file names --------------------------------------------------------------------

std::string expand_output_pattern(std::string_view pattern, std::uint32_t pid, std::string_view host, int rank,
                                  unsigned counter) {
  std::string out;
  out.reserve(pattern.size() + 16);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[i + 1]) {
      case 'p': out += std::to_string(pid); break;
      case 'h': out += host; break;
      case 'r': out += std::to_string(rank < 0 ? 0 : rank); break;
      case 'n': out += std::to_string(counter); break;
      case '%': out += '%'; break;
      default:
        out += pattern[i];
        out += pattern[i + 1];
        break;
    }
    ++i;
  }
  return out;
}

std::string claim_output_file(std::string_view pattern, std::uint32_t pid, const std::string& claims_file,
                              std::string* error) {
  const std::string host = host_name();
  const int rank = rank_from_environment();
  auto name_for = [&](unsigned n) { return expand_output_pattern(pattern, pid, host, rank, n); };
  const bool counted = name_for(1) != name_for(2);
  const std::string first = name_for(1);
  const std::size_t slash = first.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : first.substr(0, slash));

  // The lock serializes claims by the processes of one run (torchrun,
  // mpirun, programs that fork and exec).
  Fd lock(claims_file.empty() ? ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                              : ::open(claims_file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (lock.get() < 0) {
    if (error)
      *error = claims_file.empty() ? dir + ": cannot open the output directory: " + errno_text(errno)
                                   : claims_file + ": cannot record the output name: " + errno_text(errno);
    return {};
  }
  while (::flock(lock.get(), LOCK_EX) != 0 && errno == EINTR) {
  }
  auto claimed_by_sibling = [&](const std::string& path) {
    if (claims_file.empty()) return false;
    std::string all;
    char buf[4096];
    ssize_t n;
    ::lseek(lock.get(), 0, SEEK_SET);
    while ((n = ::read(lock.get(), buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
    std::size_t pos = 0;
    while (pos < all.size()) {
      std::size_t nl = all.find('\n', pos);
      if (nl == std::string::npos) nl = all.size();
      if (std::string_view(all).substr(pos, nl - pos) == path) return true;
      pos = nl + 1;
    }
    return false;
  };

  std::string path;
  int fd = -1;
  if (counted) {
    for (unsigned n = 1; n < 1'000'000; ++n) {
      path = name_for(n);
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd >= 0 || errno != EEXIST) break;
    }
  } else {
    path = first;
    if (claimed_by_sibling(path)) {
      // Another process of this run writes `path`: take "<stem>.<pid><ext>".
      const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
      const std::size_t dot = path.rfind('.');
      const std::size_t cut = dot == std::string::npos || dot <= base ? path.size() : dot;
      path = path.substr(0, cut) + "." + std::to_string(pid) + path.substr(cut);
    }
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd < 0) {
    if (error) *error = path + ": cannot create the output file: " + errno_text(errno);
    return {};
  }
  ::close(fd);
  if (!claims_file.empty()) {
    const std::string line = path + "\n";
    if (::write(lock.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      // Only the sibling check suffers; the file itself is fine.
    }
  }
  ::flock(lock.get(), LOCK_UN);
  return path;
}

}  // namespace gpuscope::capture
