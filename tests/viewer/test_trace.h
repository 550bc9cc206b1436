// Traces built in code for the viewer's tests and benchmark: a data-parallel
// training job in miniature — kernels of several categories on a few streams
// per GPU, each launched by a cudaLaunchKernel on one CPU thread per GPU (with
// correlation), NVTX step / forward / backward ranges around the launches,
// and an occasional H2D copy. Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "trace/builder.h"

namespace gpuscope::viewer::testing {

struct TestTraceOptions {
  std::uint64_t kernels = 10'000;  // total over all GPUs
  std::uint32_t gpus = 2;
  std::uint32_t streams = 3;  // per GPU
  std::uint32_t kernels_per_step = 100;
  bool ranges = true;
  std::uint32_t seed = 1;
  TraceSource source = TraceSource::synthetic;
};

inline const std::vector<std::string>& test_kernel_names() {
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

inline Trace make_test_trace(const TestTraceOptions& o) {
  TraceBuilder b;
  b.meta().source = o.source;
  b.meta().producer = "viewer tests";
  std::mt19937_64 rng(o.seed);
  std::vector<StringId> names;
  for (const std::string& n : test_kernel_names()) names.push_back(b.intern(n));
  const StringId launch = b.intern("cudaLaunchKernel"), memcpy_call = b.intern("cudaMemcpyAsync");
  const StringId step_name = b.intern("step"), fwd = b.intern("forward"), bwd = b.intern("backward");
  const StringId sync_call = b.intern("cudaDeviceSynchronize");
  // The sgemm kernels carry a mangled name and dynamic shared memory (as CUPTI records them).
  const StringId sgemm_mangled = b.intern("_Z21volta_sgemm_128x64_nnPKfS0_Pfiii");
  b.reserve_kernels(o.kernels);
  b.reserve_api_calls(o.kernels);
  std::uint32_t correlation = 1;
  for (std::uint32_t g = 0; g < o.gpus; ++g) {
    Device d;
    d.id = g;
    d.name = "Test GPU " + std::to_string(g);
    d.sm_count = 132;
    b.add_device(d);
    Process p;
    p.pid = 1000 + g;
    p.name = "train.py";
    p.rank = static_cast<std::int32_t>(g);
    b.add_process(p);
    const TrackId cpu = b.cpu_track(1000 + g, 2000 + g);
    b.set_track_name(cpu, "MainThread");
    std::vector<TrackId> streams;
    std::vector<TimeNs> stream_free(o.streams, 0);
    for (std::uint32_t s = 0; s < o.streams; ++s) streams.push_back(b.gpu_track(g, 7 + s));
    const std::uint64_t n = o.kernels / o.gpus + (g < o.kernels % o.gpus ? 1 : 0);
    TimeNs cpu_t = 1'000'000;  // 1 ms after the clock origin
    TimeNs step_start = cpu_t;
    std::uint64_t step_index = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint32_t s = static_cast<std::uint32_t>(rng() % o.streams);
      const std::size_t ki = static_cast<std::size_t>(rng() % names.size());
      ApiCallRow a;
      a.track = cpu;
      a.start = cpu_t;
      a.end = cpu_t + 2'000 + static_cast<TimeNs>(rng() % 3'000);
      a.correlation = correlation;
      a.name = launch;
      b.add_api_call(a);
      KernelRow k;
      k.track = streams[s];
      k.start = std::max(a.end + 3'000, stream_free[s] + static_cast<TimeNs>(rng() % 2'000));
      k.end = k.start + 1'000 + static_cast<TimeNs>(rng() % 20'000);
      k.correlation = correlation++;
      k.name = names[ki];
      k.grid_x = 128;
      k.grid_y = 1;
      k.grid_z = 1;
      k.block_x = 256;
      k.block_y = 1;
      k.block_z = 1;
      k.registers = 32;
      k.static_smem = 4096;
      if (ki == 2) {
        k.mangled = sgemm_mangled;
        k.dynamic_smem = 16384;
      }
      b.add_kernel(k);
      stream_free[s] = k.end;
      cpu_t = a.end + 500 + static_cast<TimeNs>(rng() % 1'000);
      if (i % 997 == 5) {  // an occasional H2D copy on stream 0, launched too
        ApiCallRow c = a;
        c.start = cpu_t;
        c.end = cpu_t + 4'000;
        c.correlation = correlation;
        c.name = memcpy_call;
        b.add_api_call(c);
        MemcpyRow m;
        m.track = streams[0];
        m.start = std::max(c.end + 2'000, stream_free[0]);
        m.end = m.start + 50'000;
        m.correlation = correlation++;
        m.bytes = 64ull << 20;
        m.kind = CopyKind::htod;
        m.src_kind = MemoryKind::pinned;
        m.dst_kind = MemoryKind::device;
        b.add_memcpy(m);
        stream_free[0] = m.end;
        cpu_t = c.end + 500;
      }
      if ((i + 1) % o.kernels_per_step == 0 || i + 1 == n) {
        // End of a step: the host waits for the GPU (so launches never run
        // far ahead of the kernels, as in a real training loop).
        TimeNs gpu_done = 0;
        for (TimeNs f : stream_free) gpu_done = std::max(gpu_done, f);
        ApiCallRow w;
        w.track = cpu;
        w.start = cpu_t;
        w.end = std::max(cpu_t + 1'000, gpu_done + 2'000);
        w.correlation = correlation;
        w.name = sync_call;
        b.add_api_call(w);
        SyncRow y;
        y.track = cpu;
        y.start = w.start + 200;
        y.end = w.end - 200;
        y.correlation = correlation++;
        y.type = SyncType::context;
        y.device = g;
        b.add_sync(y);
        cpu_t = w.end + 500;
      }
      if (o.ranges && ((i + 1) % o.kernels_per_step == 0 || i + 1 == n)) {
        // step (depth 0) with forward / backward halves (depth 1).
        const TimeNs mid = step_start + (cpu_t - step_start) / 2;
        RangeRow r;
        r.track = cpu;
        r.kind = RangeKind::push_pop;
        r.start = step_start;
        r.end = cpu_t;
        r.name = step_name;
        r.payload = static_cast<std::int64_t>(step_index++);
        b.add_range(r);
        r.payload = 0;
        r.start = step_start;
        r.end = mid;
        r.name = fwd;
        b.add_range(r);
        r.start = mid;
        r.end = cpu_t;
        r.name = bwd;
        b.add_range(r);
        cpu_t += 1'000;
        step_start = cpu_t;
      }
    }
  }
  return b.freeze();
}

}  // namespace gpuscope::viewer::testing
