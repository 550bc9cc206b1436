// A small trace with one of everything (every table, sparse columns, awkward
// strings, NaN counters), shared by the export tests.
#pragma once

#include <limits>
#include <string_view>

#include "trace/builder.h"

namespace gpuscope::testing {

inline constexpr TimeNs kT0 = 1'700'000'000'123'456'789;  // an epoch time with sub-µs digits

// One of everything, with awkward strings.
inline Trace every_table_trace() {
  TraceBuilder b;
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

  const TrackId s7 = b.gpu_track(0, 7), s9 = b.gpu_track(0, 9), cpu = b.cpu_track(1234, 1240);
  const TrackId other_cpu = b.cpu_track(1234, 1241);
  b.set_track_name(s7, "stream 7 (compute)");

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
  return b.freeze();
}

}  // namespace gpuscope::testing
