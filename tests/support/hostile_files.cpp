#include "support/hostile_files.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "store/gscope.h"
#include "trace/builder.h"

namespace gpuscope::testing {

namespace {

constexpr std::uint64_t kChunk = 65536;

GscopeWriteOptions quick() {
  GscopeWriteOptions o;
  o.sync = false;
  return o;
}

}  // namespace

void write_identical_kernels_gscope(const std::string& path, std::uint64_t kernels, bool finish) {
  const std::unique_ptr<GscopeAppender> out = GscopeAppender::open(path, quick());
  TraceBuilder b;
  const TrackId gpu = b.gpu_track(0, 7);
  KernelRow k;
  k.track = gpu;
  k.end = 1000;
  k.name = b.intern("identical_kernel");
  k.grid_x = k.block_x = 1;
  for (std::uint64_t done = 0; done < kernels;) {
    const std::uint64_t n = std::min(kChunk, kernels - done);
    for (std::uint64_t i = 0; i < n; ++i) b.add_kernel(k);
    out->append(b);
    done += n;
  }
  if (finish) out->finish();
}

void write_long_names_gscope(const std::string& path, std::size_t names, std::size_t length) {
  const std::unique_ptr<GscopeAppender> out = GscopeAppender::open(path, quick());
  TraceBuilder b;
  const TrackId gpu = b.gpu_track(0, 7);
  for (std::size_t i = 0; i < names; ++i) {
    std::string name(length, 'x');
    std::string label = "k";
    label += std::to_string(i);
    name.replace(0, std::min(length, label.size()), label, 0, std::min(length, label.size()));
    KernelRow k;
    k.track = gpu;
    k.start = static_cast<TimeNs>(i) * 1000;
    k.end = k.start + 500;
    k.name = b.intern(name);
    b.add_kernel(k);
    if ((i + 1) % 64 == 0) out->append(b);  // strings and rows a few MiB at a time
  }
  out->append(b);
  out->finish();
}

void write_kernel_events_json_gz(const std::string& path, std::uint64_t events) {
  gzFile f = gzopen(path.c_str(), "wb9");
  if (!f) throw std::runtime_error("cannot write " + path);
  const std::string event =
      R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"device":0,"stream":7}})";
  std::string block;
  for (int i = 0; i < 4096; ++i) {
    block += event;
    block += ',';
  }
  gzputs(f, R"({"traceEvents":[)");
  std::uint64_t done = 0;
  for (; done + 4096 < events; done += 4096) gzwrite(f, block.data(), static_cast<unsigned>(block.size()));
  for (; done + 1 < events; ++done) gzwrite(f, block.data(), static_cast<unsigned>(event.size() + 1));
  std::string last = event;
  last += "]}";
  gzputs(f, last.c_str());
  if (gzclose(f) != Z_OK) throw std::runtime_error("cannot write " + path);
}

std::string hostile_copy_dir() {
  const char* d = std::getenv("GPUSCOPE_HOSTILE_DIR");
  return d ? d : "";
}

}  // namespace gpuscope::testing
