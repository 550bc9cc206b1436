// The test traces of test_traces.h.
#include "support/test_traces.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::testing {

// [SECTION] Hand-written traces -----------------------------------------------------------

TraceFactory::TraceFactory(std::int32_t rank) {
  b_.meta().source = TraceSource::synthetic;
  b_.meta().producer = "gpuscope tests";
  b_.meta().rank = rank;
  b_.add_process({kPid, "train.py", rank});
  device(0);
}

void TraceFactory::device(std::uint32_t id, std::uint32_t sms, std::int32_t major, std::string name) {
  Device d;
  d.id = id;
  d.name = std::move(name);
  d.sm_count = sms;
  d.compute_major = major;
  d.compute_minor = 0;
  b_.add_device(d);
}

void TraceFactory::kernel(std::uint32_t device, std::uint32_t stream, std::string_view name, TimeNs start, TimeNs end,
                          TimeNs api_start, TimeNs api_dur, std::uint32_t blocks, std::uint32_t tid) {
  KernelRow k;
  k.start = start;
  k.end = end;
  k.track = b_.gpu_track(device, stream);
  k.name = b_.intern(name);
  k.grid_x = blocks;
  k.grid_y = k.grid_z = 1;
  k.block_x = 256;
  k.block_y = k.block_z = 1;
  k.correlation = launch("cudaLaunchKernel", start, api_start, api_dur, tid);
  b_.add_kernel(k);
}

void TraceFactory::memcpy(std::uint32_t device, std::uint32_t stream, CopyKind kind, MemoryKind src, MemoryKind dst,
                          std::uint64_t bytes, TimeNs start, TimeNs end, std::string_view api, TimeNs api_start,
                          TimeNs api_dur, std::uint32_t tid) {
  MemcpyRow m;
  m.start = start;
  m.end = end;
  m.track = b_.gpu_track(device, stream);
  m.kind = kind;
  m.src_kind = src;
  m.dst_kind = dst;
  m.bytes = bytes;
  m.correlation = launch(api, start, api_start, api_dur, tid);
  b_.add_memcpy(m);
}

void TraceFactory::memset(std::uint32_t device, std::uint32_t stream, TimeNs start, TimeNs end, TimeNs api_start) {
  MemsetRow m;
  m.start = start;
  m.end = end;
  m.track = b_.gpu_track(device, stream);
  m.bytes = 1024;
  m.mem_kind = MemoryKind::device;
  m.correlation = launch("cudaMemsetAsync", start, api_start, 5'000, 1);
  b_.add_memset(m);
}

void TraceFactory::range(std::string_view name, TimeNs start, TimeNs end, std::uint32_t tid, RangeKind kind,
                         std::string_view domain) {
  RangeRow r;
  r.start = start;
  r.end = end;
  r.track = b_.cpu_track(kPid, tid);
  r.name = b_.intern(name);
  r.domain = b_.intern(domain);
  r.kind = kind;
  b_.add_range(r);
}

void TraceFactory::op(std::string_view name, std::string_view domain, TimeNs start, TimeNs end, std::string_view dims,
                      std::string_view types, std::string_view collective, std::uint32_t tid,
                      std::string_view concrete) {
  RangeRow r;
  r.start = start;
  r.end = end;
  r.track = b_.cpu_track(kPid, tid);
  r.name = b_.intern(name);
  r.domain = b_.intern(domain);
  r.kind = RangeKind::annotation;
  if (!dims.empty()) r.input_dims = b_.intern(dims);
  if (!types.empty()) r.input_types = b_.intern(types);
  if (!collective.empty()) r.collective = b_.intern(collective);
  if (!concrete.empty()) r.concrete_inputs = b_.intern(concrete);
  b_.add_range(r);
}

void TraceFactory::autograd_op(std::string_view name, TimeNs start, TimeNs end, std::int64_t sequence,
                               std::uint32_t fwd_thread, std::uint32_t tid) {
  RangeRow r;
  r.start = start;
  r.end = end;
  r.track = b_.cpu_track(kPid, tid);
  r.name = b_.intern(name);
  r.domain = b_.intern("cpu_op");
  r.kind = RangeKind::annotation;
  r.sequence = stored_sequence(sequence);
  r.fwd_thread = fwd_thread;
  b_.add_range(r);
}

void TraceFactory::cpu_op(std::string_view name, TimeNs start, TimeNs end, std::string_view dims,
                          std::string_view types, std::uint32_t tid, std::string_view concrete) {
  op(name, "cpu_op", start, end, dims, types, {}, tid, concrete);
}

void TraceFactory::comm_op(std::string_view name, TimeNs start, TimeNs end, std::string_view dims,
                           std::string_view types, std::string_view collective, std::uint32_t tid) {
  op(name, "user_annotation", start, end, dims, types, collective, tid);
}

void TraceFactory::sync(SyncType type, std::uint32_t device, std::uint32_t stream, TimeNs start, TimeNs end,
                        std::uint32_t tid) {
  const char* name = type == SyncType::context  ? "cudaDeviceSynchronize"
                     : type == SyncType::stream ? "cudaStreamSynchronize"
                                                : "cudaEventSynchronize";
  const std::uint32_t c = api(name, start, end, tid);
  SyncRow s;
  s.start = start;
  s.end = end;
  s.track = b_.cpu_track(kPid, tid);
  s.correlation = c;
  s.type = type;
  s.device = device;
  s.stream = stream;
  b_.add_sync(s);
}

std::uint32_t TraceFactory::api(std::string_view name, TimeNs start, TimeNs end, std::uint32_t tid) {
  ApiCallRow a;
  a.start = start;
  a.end = end;
  a.track = b_.cpu_track(kPid, tid);
  a.correlation = next_++;
  a.name = b_.intern(name);
  b_.add_api_call(a);
  return a.correlation;
}

std::uint32_t TraceFactory::launch(std::string_view name, TimeNs op_start, TimeNs api_start, TimeNs api_dur,
                                   std::uint32_t tid) {
  if (api_start == kNoLaunch) return 0;
  if (api_start == kAuto) api_start = op_start - 10'000;
  return api(name, api_start, api_start + api_dur, tid);
}

// [SECTION] One of everything -------------------------------------------------------------

namespace {

struct EveryTableTracks {
  TrackId s7, s9, cpu, other_cpu;
};

// Meta, the device, the process and the tracks.
EveryTableTracks add_every_table_header(TraceBuilder& b) {
  TraceMeta& m = b.meta();
  m.source = TraceSource::cupti;
  m.producer = "test";
  m.host = "host \"quoted\"";
  m.command_line = "train.py --lr=0.1";
  m.rank = 3;
  m.world_size = 8;
  m.set_stat("capture.dropped_records", 12);
  m.set_property("key", "value\twith tab");
  Device d;
  d.id = 0;
  d.name = "Test GPU";
  d.sm_count = 100;
  d.warp_size = 32;
  d.memory_bytes = 1ull << 34;
  b.add_device(d);
  b.add_process(Process{1234, "python3", 3});

  EveryTableTracks t{b.gpu_track(0, 7), b.gpu_track(0, 9), b.cpu_track(1234, 1240), b.cpu_track(1234, 1241)};
  b.set_track_name(t.s7, "stream 7 (compute)");
  return t;
}

// API calls and what they launched: kernels (a graph launch, a lost call, a
// zero-length one), a copy and a fill.
void add_every_table_gpu_ops(TraceBuilder& b, const EveryTableTracks& t) {
  const TrackId s7 = t.s7, s9 = t.s9, cpu = t.cpu;
  auto api = [&](TimeNs s, TimeNs e, std::uint32_t corr, std::string_view name, ApiDomain dom = ApiDomain::runtime,
                 std::int32_t status = 0) {
    b.add_api_call(ApiCallRow{kT0 + s, kT0 + e, cpu, corr, b.intern(name), dom, 211, status});
  };
  api(0, 5'000, 1, "cudaLaunchKernel");
  api(6'000, 9'500, 2, "cudaMemcpyAsync");
  api(10'000, 12'000, 3, "cudaMemsetAsync");
  api(13'000, 14'001, 4, "cuLaunchKernel", ApiDomain::driver);
  api(15'000, 15'003, 5, "cudaStreamSynchronize", ApiDomain::runtime, 700);
  api(16'000, 17'000, 6, "cudaGraphLaunch");

  KernelRow k;
  k.start = kT0 + 5'001;
  k.end = kT0 + 105'777;
  k.track = s7;
  k.correlation = 1;
  k.name = b.intern("void kernel<\"quoted\", \\back>(int)\n\x01 bad utf8: \xff\xfe end \xe2\x82\xac");
  k.mangled = b.intern("_Z6kernelIJEEvi");
  k.grid_x = 200, k.grid_y = 2, k.grid_z = 1;
  k.block_x = 256, k.block_y = 1, k.block_z = 1;
  k.registers = 64;
  k.static_smem = 1024;
  k.dynamic_smem = 4096;
  b.add_kernel(k);
  k.start = kT0 + 14'500;
  k.end = kT0 + 20'500;
  k.track = s9;
  k.correlation = 4;
  k.name = b.intern("triton_poi_fused_add_0");
  k.mangled = 0;
  b.add_kernel(k);
  // A graph launch: two kernels, one call; only the first gets the flow.
  k.track = s9;
  k.correlation = 6;
  k.graph_id = 5;
  k.graph_node_id = 77;
  k.start = kT0 + 30'000;
  k.end = kT0 + 31'000;
  b.add_kernel(k);
  k.start = kT0 + 31'500;
  k.end = kT0 + 32'000;
  k.graph_node_id = 78;
  b.add_kernel(k);
  // A kernel nobody launched (its call was lost).
  k.correlation = 999;
  k.graph_id = 0;
  k.graph_node_id = 0;
  k.start = kT0 + 40'000;
  k.end = kT0 + 40'000;  // zero length
  b.add_kernel(k);

  MemcpyRow c;
  c.start = kT0 + 105'800;
  c.end = kT0 + 106'800;
  c.track = s7;
  c.correlation = 2;
  c.bytes = 1'000'000;
  c.kind = CopyKind::htod;
  c.src_kind = MemoryKind::pageable;
  c.dst_kind = MemoryKind::device;
  b.add_memcpy(c);
  MemsetRow z;
  z.start = kT0 + 107'000;
  z.end = kT0 + 107'000;  // zero length: bandwidth 0, not a division by zero
  z.track = s7;
  z.correlation = 3;
  z.bytes = 4096;
  z.mem_kind = MemoryKind::device;
  b.add_memset(z);
}

// Ranges of every kind, syncs, counters (NaN, infinity) and an overhead row.
void add_every_table_host_side(TraceBuilder& b, const EveryTableTracks& t) {
  const TrackId s7 = t.s7, cpu = t.cpu, other_cpu = t.other_cpu;
  RangeRow r;
  r.start = kT0 - 1'500;  // the earliest event: sets the base
  r.end = kT0 + 200'000;
  r.track = cpu;
  r.name = b.intern("step 0");
  r.domain = b.intern("my-domain");
  r.kind = RangeKind::push_pop;
  r.color = 0xff12ab34;
  r.payload = -5;
  b.add_range(r);
  r = RangeRow{};
  r.start = kT0 + 100;
  r.end = kT0 + 50'000;
  r.track = cpu;
  r.name = b.intern("aten::conv2d");
  r.domain = b.intern("cpu_op");
  r.kind = RangeKind::annotation;
  r.correlation = 42;
  r.sequence = stored_sequence(12);  // and a forward thread, as a backward op has (both sparse columns used)
  r.fwd_thread = 3;
  b.add_range(r);
  r = RangeRow{};
  r.start = r.end = kT0 + 60'000;
  r.track = other_cpu;
  r.name = b.intern("checkpoint");
  r.kind = RangeKind::mark;
  b.add_range(r);
  r = RangeRow{};
  r.start = kT0 + 5'000;
  r.end = kT0 + 110'000;
  r.track = s7;
  r.name = b.intern("forward");
  r.domain = b.intern("gpu_user_annotation");
  r.kind = RangeKind::annotation;
  b.add_range(r);

  SyncRow y;
  y.start = kT0 + 15'000;
  y.end = kT0 + 15'003;
  y.track = cpu;
  y.correlation = 5;
  y.type = SyncType::stream;
  y.device = 0;
  y.stream = 7;
  b.add_sync(y);
  y.type = SyncType::context;
  y.stream = kNoId;
  y.start = kT0 + 120'000;
  y.end = kT0 + 121'000;
  y.correlation = 0;
  b.add_sync(y);
  y.type = SyncType::event;
  y.device = kNoDevice;
  y.event = 3;
  y.start = kT0 + 130'000;
  y.end = kT0 + 131'000;
  b.add_sync(y);

  const std::uint32_t power = b.counter_series("power", 0, "W");
  const std::uint32_t host = b.counter_series("rss", kNoDevice, "");
  b.add_counter(CounterRow{kT0 + 1'000, power, 300.5});
  b.add_counter(CounterRow{kT0 + 2'000, power, std::numeric_limits<double>::quiet_NaN()});
  b.add_counter(CounterRow{kT0 + 3'000, power, std::numeric_limits<double>::infinity()});
  b.add_counter(CounterRow{kT0 + 4'000, host, 1e9});
  b.add_overhead(OverheadRow{kT0 + 150'000, kT0 + 151'000, cpu, b.intern("buffer_flush")});
  b.add_os_call(OsCallRow{kT0 + 152'000, kT0 + 160'000, cpu, b.intern("fread"), 4096, 0});
  b.add_os_call(OsCallRow{kT0 + 153'000, kT0 + 154'500, cpu, b.intern("pthread_mutex_lock"), -11, 1});
}

}  // namespace

Trace every_table_trace() {
  TraceBuilder b;
  const EveryTableTracks t = add_every_table_header(b);
  add_every_table_gpu_ops(b, t);
  add_every_table_host_side(b, t);
  return b.freeze();
}

Trace late_launches_after(std::string_view call, bool ops) {
  constexpr TimeNs us = 1'000, ms = 1'000'000;
  TraceFactory f;
  f.device(0);
  TimeNs t = 5 * ms;
  for (int i = 0; i < 20; ++i) {
    if (i > 0 && !call.empty()) f.api(call, t - 1990 * us, t - 40 * us);
    if (ops) f.cpu_op("aten::conv2d", t - 25 * us, t - 10 * us, "", "");
    f.kernel(0, 7, names::kConvTensorCore, t, t + 1 * ms, t - 20 * us, 5 * us);
    t += 3 * ms;
  }
  return f.build();
}

Trace hardware_metrics_trace() {
  TraceBuilder b;
  b.meta().source = TraceSource::cupti;
  for (std::uint32_t d = 0; d < 2; ++d) {
    Device dev;
    dev.id = d;
    dev.name = "NVIDIA H200";
    dev.uuid = "GPU-" + std::to_string(d);
    dev.sm_count = 132;
    b.add_device(dev);
  }
  struct Metric {
    const char* name;
    const char* unit;
    double base, step;
  };
  static constexpr Metric kMetrics[] = {{"hw.sm_active", "%", 12.5, 3.25},
                                        {"hw.tensor_active", "%", 0, 0},
                                        {"hw.dram_read", "B/s", 1.5e12, 1.0e9 + 0.5},
                                        {"nvml.power", "W", 301.25, -0.125},
                                        {"nvml.sm_clock", "MHz", 1980, 0},
                                        {"nvml.throttle_reasons", "", 4, 0}};
  for (std::uint32_t d = 0; d < 2; ++d)
    for (const Metric& m : kMetrics) {
      const std::uint32_t s = b.counter_series(m.name, d, m.unit);
      for (int i = 0; i < 5; ++i) b.add_counter(CounterRow{kT0 + i * 100'000 + d, s, m.base + d + i * m.step});
    }
  const std::uint32_t other = b.counter_series("power", kNoDevice, "W");
  b.add_counter(CounterRow{kT0, other, 250.0});
  b.add_counter(
      CounterRow{kT0 + 1, b.counter_series("hw.sm_active", 0, "%"), std::numeric_limits<double>::quiet_NaN()});
  return b.freeze();
}

// [SECTION] Random traces -----------------------------------------------------------------

namespace {

std::string random_string(Rng& rng) {
  static const char* const pieces[] = {
      "void", "kernel", "<float>", "::", "cudnn", "_Z3fooPf",       " ",
      "é",    "日本",   "🚀",       "\t", "Ω",     "sm80_xmma_gemm", "(anonymous namespace)",
      "",     "\"q\"",  "\\"};
  std::string s;
  const auto n = rng.below(6);
  for (std::uint64_t i = 0; i < n; ++i) s += pieces[rng.below(std::size(pieces))];
  s += std::to_string(rng.below(1000));
  return s;
}

// A time in [lo, hi) and an end at or after it, without overflow.
void random_interval(Rng& rng, bool extreme, TimeNs& start, TimeNs& end) {
  if (extreme && rng.chance(0.05)) {
    start = rng.chance(0.5) ? std::numeric_limits<TimeNs>::min() : std::numeric_limits<TimeNs>::max() - 10;
    end = start + static_cast<TimeNs>(rng.below(10));
    return;
  }
  start = 1'700'000'000'000'000'000 + static_cast<TimeNs>(rng.below(1'000'000'000));
  end = start + static_cast<TimeNs>(rng.below(5'000'000));
}

// random_trace's state and its phases (the draws happen in this order).
class RandomTraceGen {
 public:
  RandomTraceGen(std::uint64_t seed, const RandomTraceOptions& options) : rng(seed), o(options) {}

  Trace run() {
    add_strings_and_tracks();
    add_devices_processes_and_meta();
    // Each sparse column is used in some traces only (so both "present" and
    // "absent" occur across seeds).
    use_sparse = o.sparse_columns && rng.chance(0.7);
    corr = static_cast<std::uint32_t>(rng.below(1000));
    add_gpu_rows();
    add_host_rows();
    add_memory_events();
    add_os_calls();
    return b.freeze();
  }

 private:
  StringId str() { return strings[rng.below(strings.size())]; }
  TrackId gpu_track() { return gpu[rng.below(gpu.size())]; }
  TrackId cpu_track() { return cpu[rng.below(cpu.size())]; }
  TrackId any_track() { return rng.chance(0.5) ? gpu_track() : cpu_track(); }
  template <class T>
  T sparse(T value) {
    return o.sparse_columns && rng.chance(0.3) ? value : T{};
  }
  std::uint32_t next_corr() { return rng.chance(0.1) ? 0u : (corr += 1 + static_cast<std::uint32_t>(rng.below(3))); }
  std::uint64_t rows() { return rng.below(o.max_rows + 1); }

  void add_strings_and_tracks() {
    const auto nstrings = 1 + rng.below(40);
    for (std::uint64_t i = 0; i < nstrings; ++i) strings.push_back(b.intern(random_string(rng)));
    const auto ngpu = 1 + rng.below(6), ncpu = 1 + rng.below(4);
    for (std::uint64_t i = 0; i < ngpu; ++i) {
      gpu.push_back(b.gpu_track(static_cast<std::uint32_t>(rng.below(4)), rng.any<std::uint32_t>()));
      if (rng.chance(0.5)) b.set_track_name(gpu.back(), random_string(rng));
    }
    for (std::uint64_t i = 0; i < ncpu; ++i) {
      cpu.push_back(b.cpu_track(rng.any<std::uint32_t>(), rng.any<std::uint32_t>()));
      if (rng.chance(0.5)) b.set_track_name(cpu.back(), random_string(rng));
    }
  }

  void add_devices_processes_and_meta() {
    for (std::uint64_t i = 0, n = rng.below(4); i < n; ++i) {
      Device d;
      d.id = static_cast<std::uint32_t>(i);
      d.name = random_string(rng);
      d.uuid = "GPU-" + std::to_string(rng.u64());
      d.compute_major = rng.any<std::int32_t>();
      d.compute_minor = rng.any<std::int32_t>();
      d.sm_count = rng.any<std::uint32_t>();
      d.memory_bytes = rng.any<std::uint64_t>();
      d.core_clock_khz = rng.any<std::uint32_t>();
      d.warp_size = 32;
      d.peak_fp32_flops = 1e13 * static_cast<double>(rng.below(100));
      d.peak_memory_bandwidth = -0.0;
      b.add_device(d);
    }
    for (std::uint64_t i = 0, n = rng.below(3); i < n; ++i)
      b.add_process(Process{rng.any<std::uint32_t>(), random_string(rng), rng.any<std::int32_t>()});
    for (std::uint64_t i = 0, n = rng.below(4); i < n; ++i)
      series.push_back(b.counter_series("series" + std::to_string(i) + random_string(rng),
                                        rng.chance(0.5) ? kNoDevice : static_cast<std::uint32_t>(rng.below(4)),
                                        rng.chance(0.5) ? "%" : ""));

    TraceMeta& m = b.meta();
    m.source = static_cast<TraceSource>(rng.below(4));
    m.producer = random_string(rng);
    m.host = "host-é";
    m.command_line = random_string(rng);
    m.start_time_ns = rng.any<std::int64_t>();
    m.rank = rng.any<std::int32_t>();
    m.world_size = rng.any<std::int32_t>();
    for (std::uint64_t i = 0, n = rng.below(4); i < n; ++i) m.set_stat("test.stat" + std::to_string(i), rng.u64());
    for (std::uint64_t i = 0, n = rng.below(3); i < n; ++i)
      m.set_property("prop" + std::to_string(i), random_string(rng));
  }

  // Kernels, memcpys, memsets.
  void add_gpu_rows() {
    const bool ex = o.extreme_values;
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      KernelRow k;
      random_interval(rng, ex, k.start, k.end);
      k.track = gpu_track();
      k.correlation = next_corr();
      k.name = str();
      k.mangled = use_sparse ? sparse(str()) : 0;
      k.grid_x = rng.any<std::uint32_t>();
      k.grid_y = static_cast<std::uint32_t>(rng.below(65536));
      k.grid_z = static_cast<std::uint32_t>(rng.below(4));
      k.block_x = static_cast<std::uint32_t>(rng.below(1025));
      k.block_y = static_cast<std::uint32_t>(rng.below(3));
      k.block_z = 1;
      k.registers = rng.any<std::uint16_t>();
      k.static_smem = rng.any<std::uint32_t>();
      k.dynamic_smem = rng.any<std::uint32_t>();
      k.graph_id = use_sparse ? sparse(rng.any<std::uint32_t>()) : 0;
      k.graph_node_id = use_sparse ? sparse(rng.any<std::uint64_t>()) : 0;
      b.add_kernel(k);
    }
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      MemcpyRow r;
      random_interval(rng, ex, r.start, r.end);
      r.track = gpu_track();
      r.correlation = next_corr();
      r.bytes = rng.any<std::uint64_t>();
      r.kind = static_cast<CopyKind>(rng.below(11));
      r.src_kind = static_cast<MemoryKind>(rng.below(8));
      r.dst_kind = static_cast<MemoryKind>(rng.below(8));
      r.graph_id = use_sparse ? sparse(rng.any<std::uint32_t>()) : 0;
      r.graph_node_id = use_sparse ? sparse(rng.any<std::uint64_t>()) : 0;
      b.add_memcpy(r);
    }
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      MemsetRow r;
      random_interval(rng, ex, r.start, r.end);
      r.track = gpu_track();
      r.correlation = next_corr();
      r.bytes = rng.any<std::uint64_t>();
      r.value = use_sparse ? sparse(rng.any<std::uint32_t>()) : 0;
      r.mem_kind = static_cast<MemoryKind>(rng.below(8));
      b.add_memset(r);
    }
  }

  // API calls, ranges, syncs, counters, overheads.
  void add_host_rows() {
    const bool ex = o.extreme_values;
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      ApiCallRow r;
      random_interval(rng, ex, r.start, r.end);
      r.track = cpu_track();
      r.correlation = rng.chance(0.5) ? static_cast<std::uint32_t>(rng.below(corr + 1)) : 0;
      r.name = str();
      r.domain = static_cast<ApiDomain>(rng.below(3));
      r.cbid = use_sparse ? sparse(rng.any<std::uint32_t>()) : 0;
      r.status = use_sparse ? sparse(rng.any<std::int32_t>()) : 0;
      b.add_api_call(r);
    }
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      RangeRow r;
      random_interval(rng, ex, r.start, r.end);
      r.track = any_track();
      r.name = str();
      r.domain = str();
      r.kind = static_cast<RangeKind>(rng.below(4));
      r.color = use_sparse ? sparse(rng.any<std::uint32_t>()) : 0;
      r.payload = use_sparse ? sparse(rng.any<std::int64_t>()) : 0;
      r.correlation = use_sparse ? sparse(rng.any<std::uint32_t>()) : 0;
      b.add_range(r);
    }
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      SyncRow r;
      random_interval(rng, ex, r.start, r.end);
      r.track = rng.chance(0.2) ? TraceBuilder::kResolveThroughCorrelation : cpu_track();
      r.correlation = static_cast<std::uint32_t>(rng.below(corr + 1));
      r.type = static_cast<SyncType>(rng.below(5));
      r.device = rng.chance(0.3) ? kNoDevice : static_cast<std::uint32_t>(rng.below(4));
      r.stream = rng.chance(0.3) ? kNoId : rng.any<std::uint32_t>();
      r.event = rng.chance(0.3) ? kNoId : rng.any<std::uint32_t>();
      b.add_sync(r);
    }
    if (!series.empty())
      for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
        CounterRow r;
        TimeNs unused;
        random_interval(rng, ex, r.time, unused);
        r.series = series[rng.below(series.size())];
        const auto v = rng.below(5);
        r.value = v == 0 ? -1.5e300 : v == 1 ? 0.1 * static_cast<double>(rng.below(1000)) : v == 2 ? -0.0 : 42.0;
        b.add_counter(r);
      }
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      OverheadRow r;
      random_interval(rng, ex, r.start, r.end);
      r.track = cpu_track();
      r.kind = str();
      b.add_overhead(r);
    }
  }

  // Last, so the rows above stay what they were before memory events existed.
  void add_memory_events() {
    if (series.empty()) return;
    const bool ex = o.extreme_values;
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      MemoryEventRow r;
      TimeNs unused;
      random_interval(rng, ex, r.time, unused);
      r.series = series[rng.below(series.size())];
      r.bytes = rng.any<std::int64_t>();
      r.address = rng.chance(0.3) ? 0 : rng.u64();
      b.add_memory_event(r);
    }
  }

  // Last too, for the same reason.
  void add_os_calls() {
    if (cpu.empty()) return;
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      OsCallRow r;
      random_interval(rng, o.extreme_values, r.start, r.end);
      r.track = cpu_track();
      r.name = str();
      r.status = sparse(rng.any<std::int64_t>());
      r.nesting = sparse(static_cast<std::uint16_t>(rng.below(4)));
      b.add_os_call(r);
    }
  }

  Rng rng;
  RandomTraceOptions o;
  TraceBuilder b;
  std::vector<StringId> strings{0};
  std::vector<TrackId> gpu, cpu;
  std::vector<std::uint32_t> series;
  bool use_sparse = false;
  std::uint32_t corr = 0;
};

}  // namespace

Trace random_trace(std::uint64_t seed, const RandomTraceOptions& o) { return RandomTraceGen(seed, o).run(); }

// [SECTION] A training job ----------------------------------------------------------------

const std::vector<std::string>& training_kernel_names() {
  static const std::vector<std::string> names = {
      "void "
      "Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<"
      "float, 4, 1, int>, 16>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, 4ul> const, "
      "Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, int>, 16> const> const> const, Eigen::GpuDevice>, "
      "int>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 4, 1, int>, 16>, "
      "Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<int>, 4ul> const, Eigen::TensorMap<Eigen::Tensor<float "
      "const, 4, 1, int>, 16> const> const> const, Eigen::GpuDevice>, int)",
      "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float "
      "const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float "
      "const*, float const*, bool, int, int)",
      "volta_sgemm_128x64_nn",
      "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, "
      "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, "
      "float)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
      "namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
      "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
      "const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous "
      "namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
      "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
      "const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
      "void broadcast_bias_kernel<float>(float*, float const*, int, int)",
  };
  return names;
}

namespace {

// add_training_trace's state: the strings, random numbers and correlation ids
// shared by every GPU, and the clock and streams of the GPU being filled.
class TrainingJobGen {
 public:
  TrainingJobGen(TraceBuilder& b, const TrainingTraceOptions& o) : b_(b), o_(o), rng_(o.seed) {
    b_.meta().source = o_.source;
    b_.meta().producer = "gpuscope tests";
    for (const std::string& n : training_kernel_names()) names_.push_back(b_.intern(n));
    launch_ = b_.intern("cudaLaunchKernel");
    memcpy_call_ = b_.intern("cudaMemcpyAsync");
    step_name_ = b_.intern("step");
    fwd_ = b_.intern("forward");
    bwd_ = b_.intern("backward");
    sync_call_ = b_.intern("cudaDeviceSynchronize");
    // The sgemm kernels carry a mangled name and dynamic shared memory (as CUPTI records them).
    sgemm_mangled_ = b_.intern("_Z21volta_sgemm_128x64_nnPKfS0_Pfiii");
    b_.reserve_kernels(o_.kernels);
    b_.reserve_api_calls(o_.kernels);
  }

  // GPU g's device, process, tracks and its share of the kernels.
  void add_gpu(std::uint32_t g) {
    Device d;
    d.id = g;
    d.name = "Test GPU " + std::to_string(g);
    d.sm_count = 132;
    b_.add_device(d);
    Process p;
    p.pid = 1000 + g;
    p.name = "train.py";
    p.rank = static_cast<std::int32_t>(g);
    b_.add_process(p);
    cpu_ = b_.cpu_track(1000 + g, 2000 + g);
    b_.set_track_name(cpu_, "MainThread");
    streams_.clear();
    stream_free_.assign(o_.streams, o_.start);
    for (std::uint32_t s = 0; s < o_.streams; ++s) streams_.push_back(b_.gpu_track(g, 7 + s));
    const std::uint64_t n = o_.kernels / o_.gpus + (g < o_.kernels % o_.gpus ? 1 : 0);
    cpu_t_ = o_.start;
    step_start_ = cpu_t_;
    step_index_ = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      launch_kernel();
      if (i % 997 == 5) copy_to_device();  // an occasional H2D copy on stream 0, launched too
      if ((i + 1) % o_.kernels_per_step == 0 || i + 1 == n) {
        wait_for_gpu(g);
        if (o_.ranges) step_ranges();
      }
    }
  }

 private:
  // A cudaLaunchKernel and its kernel on a random stream.
  void launch_kernel() {
    const std::uint32_t s = static_cast<std::uint32_t>(rng_() % o_.streams);
    const std::size_t ki = static_cast<std::size_t>(rng_() % names_.size());
    ApiCallRow a;
    a.track = cpu_;
    a.start = cpu_t_;
    a.end = cpu_t_ + 2'000 + static_cast<TimeNs>(rng_() % 3'000);
    a.correlation = correlation_;
    a.name = launch_;
    b_.add_api_call(a);
    KernelRow k;
    k.track = streams_[s];
    k.start = std::max(a.end + 3'000, stream_free_[s] + static_cast<TimeNs>(rng_() % 2'000));
    k.end = k.start + 1'000 + static_cast<TimeNs>(rng_() % 20'000);
    k.correlation = correlation_++;
    k.name = names_[ki];
    k.grid_x = 128;
    k.grid_y = 1;
    k.grid_z = 1;
    k.block_x = 256;
    k.block_y = 1;
    k.block_z = 1;
    k.registers = 32;
    k.static_smem = 4096;
    if (ki == 2) {
      k.mangled = sgemm_mangled_;
      k.dynamic_smem = 16384;
    }
    b_.add_kernel(k);
    stream_free_[s] = k.end;
    cpu_t_ = a.end + 500 + static_cast<TimeNs>(rng_() % 1'000);
  }

  // A cudaMemcpyAsync and its 64 MiB pinned-to-device copy on stream 0.
  void copy_to_device() {
    ApiCallRow c;
    c.track = cpu_;
    c.start = cpu_t_;
    c.end = cpu_t_ + 4'000;
    c.correlation = correlation_;
    c.name = memcpy_call_;
    b_.add_api_call(c);
    MemcpyRow m;
    m.track = streams_[0];
    m.start = std::max(c.end + 2'000, stream_free_[0]);
    m.end = m.start + 50'000;
    m.correlation = correlation_++;
    m.bytes = 64ull << 20;
    m.kind = CopyKind::htod;
    m.src_kind = MemoryKind::pinned;
    m.dst_kind = MemoryKind::device;
    b_.add_memcpy(m);
    stream_free_[0] = m.end;
    cpu_t_ = c.end + 500;
  }

  // End of a step: the host waits for the GPU (so launches never run far
  // ahead of the kernels, as in a real training loop).
  void wait_for_gpu(std::uint32_t g) {
    TimeNs gpu_done = 0;
    for (TimeNs f : stream_free_) gpu_done = std::max(gpu_done, f);
    ApiCallRow w;
    w.track = cpu_;
    w.start = cpu_t_;
    w.end = std::max(cpu_t_ + 1'000, gpu_done + 2'000);
    w.correlation = correlation_;
    w.name = sync_call_;
    b_.add_api_call(w);
    SyncRow y;
    y.track = cpu_;
    y.start = w.start + 200;
    y.end = w.end - 200;
    y.correlation = correlation_++;
    y.type = SyncType::context;
    y.device = g;
    b_.add_sync(y);
    cpu_t_ = w.end + 500;
  }

  // The step that just ended (depth 0) with forward / backward halves (depth 1).
  void step_ranges() {
    const TimeNs mid = step_start_ + (cpu_t_ - step_start_) / 2;
    RangeRow r;
    r.track = cpu_;
    r.kind = RangeKind::push_pop;
    r.start = step_start_;
    r.end = cpu_t_;
    r.name = step_name_;
    r.payload = static_cast<std::int64_t>(step_index_++);
    b_.add_range(r);
    r.payload = 0;
    r.start = step_start_;
    r.end = mid;
    r.name = fwd_;
    b_.add_range(r);
    r.start = mid;
    r.end = cpu_t_;
    r.name = bwd_;
    b_.add_range(r);
    cpu_t_ += 1'000;
    step_start_ = cpu_t_;
  }

  TraceBuilder& b_;
  const TrainingTraceOptions& o_;
  std::mt19937_64 rng_;
  std::vector<StringId> names_;
  StringId launch_ = 0, memcpy_call_ = 0, step_name_ = 0, fwd_ = 0, bwd_ = 0, sync_call_ = 0, sgemm_mangled_ = 0;
  std::uint32_t correlation_ = 1;
  TrackId cpu_ = 0;
  std::vector<TrackId> streams_;
  std::vector<TimeNs> stream_free_;
  TimeNs cpu_t_ = 0, step_start_ = 0;
  std::uint64_t step_index_ = 0;
};

}  // namespace

void add_training_trace(TraceBuilder& b, const TrainingTraceOptions& o) {
  TrainingJobGen gen(b, o);
  for (std::uint32_t g = 0; g < o.gpus; ++g) gen.add_gpu(g);
}

Trace training_trace(const TrainingTraceOptions& o) {
  TraceBuilder b;
  add_training_trace(b, o);
  return b.freeze();
}

}  // namespace gpuscope::testing
