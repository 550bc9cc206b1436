// Trace generators for the store tests and benchmarks.
//
//  random_trace(seed, options): every table, every stored column, random
//    values including the extremes of each type, sparse columns present or
//    absent, unicode strings — for property-style round trips.
//  training_like_trace(kernels, seed): resembles a data-parallel training
//    step: a repeating kernel sequence per step on a few streams, one launch
//    API call per kernel with correlation, NVTX step ranges, H2D copies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "trace/builder.h"

namespace gpuscope::testing {

struct RandomTraceOptions {
  std::size_t max_rows = 300;  // per table
  bool sparse_columns = true;  // false: every sparse column stays empty
  bool extreme_values = true;  // include min/max values of each column type
};

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  std::uint64_t u64() { return gen_(); }
  std::uint64_t below(std::uint64_t n) { return n ? gen_() % n : 0; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(gen_) < p; }
  template <class T>
  T any() {  // mostly small, sometimes extreme
    const auto r = below(10);
    if (r == 0) return std::numeric_limits<T>::max();
    if (r == 1) return std::numeric_limits<T>::min();
    if (r < 5) return static_cast<T>(below(16));
    return static_cast<T>(u64());
  }

 private:
  std::mt19937_64 gen_;
};

inline std::string random_string(Rng& rng) {
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
inline void random_interval(Rng& rng, bool extreme, TimeNs& start, TimeNs& end) {
  if (extreme && rng.chance(0.05)) {
    start = rng.chance(0.5) ? std::numeric_limits<TimeNs>::min() : std::numeric_limits<TimeNs>::max() - 10;
    end = start + static_cast<TimeNs>(rng.below(10));
    return;
  }
  start = 1'700'000'000'000'000'000 + static_cast<TimeNs>(rng.below(1'000'000'000));
  end = start + static_cast<TimeNs>(rng.below(5'000'000));
}

inline Trace random_trace(std::uint64_t seed, const RandomTraceOptions& o = {}) {
  Rng rng(seed);
  TraceBuilder b;
  std::vector<StringId> strings{0};
  const auto nstrings = 1 + rng.below(40);
  for (std::uint64_t i = 0; i < nstrings; ++i) strings.push_back(b.intern(random_string(rng)));
  auto str = [&] { return strings[rng.below(strings.size())]; };

  std::vector<TrackId> gpu, cpu;
  const auto ngpu = 1 + rng.below(6), ncpu = 1 + rng.below(4);
  for (std::uint64_t i = 0; i < ngpu; ++i) {
    gpu.push_back(b.gpu_track(static_cast<std::uint32_t>(rng.below(4)), rng.any<std::uint32_t>()));
    if (rng.chance(0.5)) b.set_track_name(gpu.back(), random_string(rng));
  }
  for (std::uint64_t i = 0; i < ncpu; ++i) {
    cpu.push_back(b.cpu_track(rng.any<std::uint32_t>(), rng.any<std::uint32_t>()));
    if (rng.chance(0.5)) b.set_track_name(cpu.back(), random_string(rng));
  }
  auto gpu_track = [&] { return gpu[rng.below(gpu.size())]; };
  auto cpu_track = [&] { return cpu[rng.below(cpu.size())]; };
  auto any_track = [&] { return rng.chance(0.5) ? gpu_track() : cpu_track(); };

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
  std::vector<std::uint32_t> series;
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

  const bool sp = o.sparse_columns;
  const bool ex = o.extreme_values;
  auto sparse = [&]<class T>(T value) { return sp && rng.chance(0.3) ? value : T{}; };
  // Each sparse column is used in some traces only (so both "present" and
  // "absent" occur across seeds).
  const bool use_sparse = sp && rng.chance(0.7);
  std::uint32_t corr = static_cast<std::uint32_t>(rng.below(1000));
  auto next_corr = [&] { return rng.chance(0.1) ? 0u : (corr += 1 + static_cast<std::uint32_t>(rng.below(3))); };

  auto rows = [&] { return rng.below(o.max_rows + 1); };
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
  // Last, so the rows above stay what they were before memory events existed.
  if (!series.empty())
    for (std::uint64_t i = 0, n = rows(); i < n; ++i) {
      MemoryEventRow r;
      TimeNs unused;
      random_interval(rng, ex, r.time, unused);
      r.series = series[rng.below(series.size())];
      r.bytes = rng.any<std::int64_t>();
      r.address = rng.chance(0.3) ? 0 : rng.u64();
      b.add_memory_event(r);
    }
  return b.freeze();
}

// [SECTION] A training-like trace -------------------------------------------------------------

struct TrainingLikeOptions {
  std::size_t kernels = 100'000;
  std::uint32_t gpus = 1;
  std::uint32_t kernels_per_step = 400;
  std::uint64_t seed = 1;
};

// Fills `b` (so tests can stream it through an appender too).
inline void add_training_like(TraceBuilder& b, const TrainingLikeOptions& o) {
  Rng rng(o.seed);
  const std::uint32_t streams[] = {7, 13, 21};
  std::vector<StringId> names;
  const char* const kinds[] = {"void cudnn::conv2d_fprop_kernel<float, 128, 6>(float const*, float*)",
                               "void Eigen::internal::EigenMetaKernel<Eigen::TensorPaddingOp<float>>(int)",
                               "void Eigen::internal::EigenMetaKernel<Eigen::TensorBroadcastingOp<float>>(int)",
                               "void batch_norm_forward_kernel<float>(float const*, float*, int)",
                               "void relu_kernel<float>(float*, int)",
                               "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8",
                               "void adam_update_kernel<float>(float*, float const*, int)",
                               "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"};
  for (int v = 0; v < 3; ++v)
    for (const char* k : kinds) names.push_back(b.intern(std::string(k) + (v ? "_v" + std::to_string(v) : "")));
  const StringId launch = b.intern("cudaLaunchKernel");
  const StringId memcpy_name = b.intern("cudaMemcpyAsync");
  const StringId step_name = b.intern("ProfilerStep");
  const StringId nvtx = b.intern("nvtx");

  // The step's kernel sequence (repeats every step) and each kernel's typical duration.
  std::vector<std::uint32_t> sequence(o.kernels_per_step);
  std::vector<std::uint32_t> duration(o.kernels_per_step);
  for (std::uint32_t i = 0; i < o.kernels_per_step; ++i) {
    sequence[i] = static_cast<std::uint32_t>(rng.below(names.size()));
    duration[i] = 2'000 + static_cast<std::uint32_t>(rng.below(200'000));
  }
  for (std::uint32_t g = 0; g < o.gpus; ++g) {
    Device d;
    d.id = g;
    d.name = "NVIDIA H200";
    d.sm_count = 132;
    d.compute_major = 9;
    b.add_device(d);
  }
  b.add_process(Process{4242, "python train.py", 0});
  b.meta().source = TraceSource::synthetic;
  b.meta().producer = "store test generator";

  std::uint32_t corr = 1;
  const std::size_t per_gpu = o.kernels / o.gpus;
  b.reserve_kernels(o.kernels);
  b.reserve_api_calls(o.kernels + o.kernels / o.kernels_per_step + 1);
  for (std::uint32_t g = 0; g < o.gpus; ++g) {
    const TrackId cpu = b.cpu_track(4242, 100 + g);
    TrackId gpu_tracks[3];
    for (int s = 0; s < 3; ++s) gpu_tracks[s] = b.gpu_track(g, streams[s]);
    TimeNs cpu_t = 1'700'000'000'000'000'000 + g * 1000;
    TimeNs gpu_free[3] = {cpu_t, cpu_t, cpu_t};
    std::size_t done = 0;
    while (done < per_gpu) {
      const TimeNs step_start = cpu_t;
      // An H2D copy of the batch.
      {
        ApiCallRow a{cpu_t, cpu_t + 3'000, cpu, corr, memcpy_name, ApiDomain::runtime, 41, 0};
        b.add_api_call(a);
        MemcpyRow m;
        m.start = std::max(cpu_t + 2'000, gpu_free[0]);
        m.end = m.start + 90'000 + static_cast<TimeNs>(rng.below(2'000));
        m.track = gpu_tracks[0];
        m.correlation = corr++;
        m.bytes = 128 * 3 * 32 * 32 * 4;
        m.kind = CopyKind::htod;
        m.src_kind = MemoryKind::pinned;
        m.dst_kind = MemoryKind::device;
        b.add_memcpy(m);
        gpu_free[0] = m.end;
        cpu_t += 4'000;
      }
      for (std::uint32_t i = 0; i < o.kernels_per_step && done < per_gpu; ++i, ++done) {
        const TimeNs api_dur = 2'500 + static_cast<TimeNs>(rng.below(1'500));
        b.add_api_call(ApiCallRow{cpu_t, cpu_t + api_dur, cpu, corr, launch, ApiDomain::runtime, 211, 0});
        const int s = sequence[i] % 8 == 7 ? 2 : (i % 5 == 4 ? 1 : 0);
        KernelRow k;
        k.start = std::max(cpu_t + api_dur, gpu_free[s]) + static_cast<TimeNs>(rng.below(800));
        k.end = k.start + duration[i] + static_cast<TimeNs>(rng.below(duration[i] / 50 + 1));
        k.track = gpu_tracks[s];
        k.correlation = corr++;
        k.name = names[sequence[i]];
        k.grid_x = 80 + sequence[i] * 8;
        k.grid_y = 1;
        k.grid_z = 1;
        k.block_x = 256;
        k.block_y = 1;
        k.block_z = 1;
        k.registers = static_cast<std::uint16_t>(32 + sequence[i]);
        k.static_smem = sequence[i] % 3 ? 0 : 4096;
        k.dynamic_smem = sequence[i] % 4 ? 0 : 49152;
        b.add_kernel(k);
        gpu_free[s] = k.end;
        cpu_t += api_dur + 1'000 + static_cast<TimeNs>(rng.below(500));
      }
      const TimeNs step_end = std::max({cpu_t, gpu_free[0], gpu_free[1], gpu_free[2]});
      b.add_range(RangeRow{step_start, step_end, cpu, step_name, nvtx, RangeKind::push_pop, 0, 0, 0});
      cpu_t = step_end + 5'000;
    }
  }
}

inline Trace training_like_trace(const TrainingLikeOptions& o) {
  TraceBuilder b;
  add_training_like(b, o);
  return b.freeze();
}

}  // namespace gpuscope::testing
