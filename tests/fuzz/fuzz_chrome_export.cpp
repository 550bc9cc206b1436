// Fuzzes the Chrome trace exporter: the fuzzer's bytes become a trace (any
// strings, invalid UTF-8 included, any times, ids, counters, NaN); whatever the
// trace, the export must be valid JSON (nlohmann rejects bad UTF-8) with one
// X event per kernel at its exact ns.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "export/chrome_trace.h"
#include "trace/builder.h"

namespace {

class Bytes {
 public:
  Bytes(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  bool empty() const { return n_ == 0; }
  template <class T>
  T take() {
    T v{};
    const std::size_t k = std::min(sizeof(T), n_);
    std::memcpy(&v, p_, k);
    p_ += k;
    n_ -= k;
    return v;
  }
  std::string_view text() {
    const std::size_t k = std::min<std::size_t>(take<std::uint8_t>() % 24, n_);
    std::string_view s(reinterpret_cast<const char*>(p_), k);
    p_ += k;
    n_ -= k;
    return s;
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  Bytes in(data, size);
  TraceBuilder b;
  b.meta().source = static_cast<TraceSource>(in.take<std::uint8_t>() % 4);
  b.meta().producer = std::string(in.text());
  b.meta().rank = in.take<std::int8_t>();
  b.meta().add_stat(in.text(), in.take<std::uint16_t>());
  Device d;
  d.id = in.take<std::uint8_t>() % 4;
  d.name = std::string(in.text());
  d.sm_count = in.take<std::uint8_t>();
  d.peak_fp32_flops = in.take<double>();
  b.add_device(d);
  b.add_process(Process{in.take<std::uint16_t>(), std::string(in.text()), -1});

  // A time base far from zero (or anywhere), then small offsets from it.
  const TimeNs base = in.take<std::int64_t>() >> (1 + in.take<std::uint8_t>() % 63);  // no overflow below
  auto time = [&] { return base + in.take<std::int32_t>(); };
  std::size_t kernels = 0;
  for (int guard = 0; guard < 64 && !in.empty(); ++guard) {
    const std::uint8_t op = in.take<std::uint8_t>();
    const TrackId gpu = b.gpu_track(in.take<std::uint8_t>() % 4, in.take<std::uint8_t>());
    const TrackId cpu = b.cpu_track(in.take<std::uint16_t>(), in.take<std::uint16_t>());
    const TimeNs s = time(), e = s + (in.take<std::uint16_t>());
    const std::uint32_t corr = in.take<std::uint8_t>();
    switch (op % 8) {
      case 0: {
        KernelRow k;
        k.start = s, k.end = e, k.track = gpu, k.correlation = corr, k.name = b.intern(in.text());
        k.grid_x = in.take<std::uint32_t>(), k.block_x = in.take<std::uint16_t>();
        k.graph_id = in.take<std::uint8_t>();
        b.add_kernel(k);
        ++kernels;
        break;
      }
      case 1:
        b.add_api_call(ApiCallRow{s, e, cpu, corr, b.intern(in.text()), static_cast<ApiDomain>(op / 8 % 3), 0,
                                  in.take<std::int32_t>()});
        break;
      case 2: {
        MemcpyRow m;
        m.start = s, m.end = e, m.track = gpu, m.correlation = corr, m.bytes = in.take<std::uint64_t>();
        m.kind = static_cast<CopyKind>(in.take<std::uint8_t>() % 11);
        b.add_memcpy(m);
        break;
      }
      case 3: {
        RangeRow r;
        r.start = s, r.end = e, r.track = (op & 8) ? gpu : cpu, r.name = b.intern(in.text());
        r.domain = b.intern(in.text()), r.kind = static_cast<RangeKind>(op / 16 % 4);
        r.color = in.take<std::uint32_t>(), r.payload = in.take<std::int64_t>();
        if (r.kind == RangeKind::mark) r.end = r.start;
        b.add_range(r);
        break;
      }
      case 4: {
        SyncRow y;
        y.start = s, y.end = e, y.track = cpu, y.correlation = corr, y.type = static_cast<SyncType>(op / 8 % 5);
        y.device = (op & 64) ? kNoDevice : 0, y.stream = (op & 128) ? kNoId : 7;
        b.add_sync(y);
        break;
      }
      case 5: {
        const std::uint32_t series = b.counter_series(in.text(), (op & 8) ? kNoDevice : 0, in.text());
        b.add_counter(CounterRow{s, series, in.take<double>()});
        break;
      }
      case 6: {
        MemsetRow z;
        z.start = s, z.end = e, z.track = gpu, z.correlation = corr, z.bytes = in.take<std::uint32_t>();
        b.add_memset(z);
        break;
      }
      default: b.add_overhead(OverheadRow{s, e, cpu, b.intern(in.text())}); break;
    }
  }
  Trace t;
  try {
    t = b.freeze();
  } catch (const TraceError&) {
    return 0;  // not a valid model (the builder says why); nothing to export
  }
  const std::string json = chrome_trace_json(t);
  const auto doc = nlohmann::json::parse(json);  // throws (and the fuzzer reports) on invalid JSON
  const std::int64_t b0 = doc.at("baseTimeNanoseconds").get<std::int64_t>();
  std::size_t seen = 0;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.value("cat", "") != "kernel") continue;
    ++seen;
    // ts text is "<µs>.<ns>": rebuild the exact ns from the parsed number's
    // decimal form only where a double holds it exactly.
    const double ts = e.at("ts").get<double>();
    if (ts < 1e12) {
      const TimeNs start = b0 + std::llround(ts * 1000.0);
      bool found = false;
      for (std::size_t i = 0; i < t.kernels().size() && !found; ++i) found = t.kernels().start[i] == start;
      if (!found) __builtin_trap();
    }
  }
  // Every kernel the model kept is exported; the builder drops (and counts)
  // rows outside the trace's time window.
  if (seen != t.kernels().size() || seen + t.meta().stat("trace.out_of_window.kernels") != kernels) __builtin_trap();
  return 0;
}
