// SyntheticJob: the job's schedule (when each collective begins and ends, in
// true time) is computed once from every rank's compute durations; a rank's
// trace is then written from it alone. Noise comes from a hash of (seed,
// rank, kernel), so any rank's durations are known without the others'.
#include "import/synthetic_job.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "trace/builder.h"

namespace gpuscope {

namespace {

constexpr TimeNs kUs = 1'000;
constexpr TimeNs kStartNs = 1'700'000'000'000'000'000;  // true time of the first step
constexpr TimeNs kKernelGap = 2 * kUs;                  // between compute kernels of a rank
constexpr TimeNs kAfterCollective = 5 * kUs;            // from a collective's end to the next compute
constexpr TimeNs kTransfer = 300 * kUs;                 // a collective's exchange, after the last arrival

// The compute kernels of a step cycle through these (name, base duration).
struct Kind {
  const char* name;
  TimeNs base;
};
constexpr std::array<Kind, 4> kCompute = {{
    {"volta_scudnn_128x64_relu_interior_nn_v1", 180 * kUs},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel", 120 * kUs},
    {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct, float const*, "
     "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, "
     "float)",
     40 * kUs},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
     "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
     20 * kUs},
}};
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// With framework ops: the op that launches each compute kind, as PyTorch's
// profiler records it with record_shapes=True (input dims, types, scalar inputs).
struct AtenCall {
  const char* name;
  const char* dims;
  const char* types;
  const char* concrete;
};
constexpr std::array<AtenCall, kCompute.size()> kAten = {{
    {"aten::conv2d", "[[32, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]",
     "[\"float\", \"float\", \"\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Int\"]",
     "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"1\"]"},
    {"aten::mm", "[[2048, 2048], [2048, 4096]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", ""},
    {"aten::cudnn_batch_norm", "[[32, 64, 56, 56], [64], [64], [64], [64], [], [], []]",
     "[\"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", \"Scalar\", \"Scalar\"]", ""},
    {"aten::add", "[[16, 64, 56, 56], [16, 64, 56, 56], []]", "[\"float\", \"float\", \"Scalar\"]",
     "[\"\", \"\", \"1\"]"},
}};
constexpr TimeNs kOpBefore = 1'800, kOpAfter = 200;          // an op range ends this long before its kernel starts
constexpr TimeNs kLaunchBefore = 1'500, kLaunchAfter = 500;  // its launch call, inside it

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A number in [-1, 1) from (seed, a, b).
double noise(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  const std::uint64_t h = mix(mix(mix(seed) ^ a) ^ (b * 0x2545f4914f6cdd1dull));
  return static_cast<double>(h >> 11) / static_cast<double>(std::uint64_t{1} << 52) - 1.0;
}

}  // namespace

SyntheticJob::SyntheticJob(const SyntheticJobOptions& o) : o_(o) {
  if (o.ranks < 2 || o.ranks > 1'000'000) throw std::invalid_argument("--ranks must be 2..1000000");
  if (o.buckets < 1 || o.buckets > 64) throw std::invalid_argument("--buckets must be 1..64");
  if (o.kernels_per_step <= o.buckets || o.kernels_per_step > 100'000)
    throw std::invalid_argument("--kernels-per-step must be more than the buckets and at most 100000");
  if (o.kernels < o.kernels_per_step)
    throw std::invalid_argument("--kernels must be at least one step (" + std::to_string(o.kernels_per_step) + ")");
  if (o.slow_rank >= static_cast<std::int64_t>(o.ranks))
    throw std::invalid_argument("--slow-rank must be one of the ranks (0.." + std::to_string(o.ranks - 1) + ")");
  if (!(o.slowdown >= 1) || o.slowdown > 100) throw std::invalid_argument("--slowdown must be 1..100");
  if (!(o.jitter >= 0) || o.jitter > 0.5) throw std::invalid_argument("--jitter must be 0..0.5");
  if (o.max_clock_offset_ns < 0 || o.max_clock_offset_ns > 3600 * 1'000'000'000LL)
    throw std::invalid_argument("--clock-offset must be 0..3600 s");
  steps_ = o.kernels / o.kernels_per_step;
  // The step's compute kernels split over its buckets, the first ones one more.
  const std::uint32_t compute = o.kernels_per_step - o.buckets;
  first_.assign(o.buckets + 1, 0);
  for (std::uint32_t b = 0; b < o.buckets; ++b)
    first_[b + 1] = first_[b] + compute / o.buckets + (b < compute % o.buckets ? 1 : 0);
  const std::uint64_t collectives = steps_ * o.buckets;
  end_.resize(collectives);
  begin_.resize(collectives);
  std::vector<TimeNs> last(collectives, 0);
  TimeNs t = kStartNs;
  // Collective by collective, the last arrival over the ranks.
  for (std::uint64_t c = 0; c < collectives; ++c) {
    begin_[c] = t;
    TimeNs latest = 0;
    for (std::uint32_t r = 0; r < o.ranks; ++r) {
      TimeNs at = t;
      for (std::uint64_t k = kernel_of(c, 0); k < kernel_of(c + 1, 0); ++k) at += compute_ns(r, k) + kKernelGap;
      latest = std::max(latest, at);
    }
    end_[c] = latest + kTransfer + static_cast<TimeNs>(20 * kUs * noise(o.seed, ~0ull - 1, c));
    t = end_[c] + kAfterCollective;
  }
}

std::uint64_t SyntheticJob::kernel_of(std::uint64_t collective, std::uint32_t k) const {
  const std::uint64_t step = collective / o_.buckets;
  const std::uint32_t bucket = static_cast<std::uint32_t>(collective % o_.buckets);
  return step * (o_.kernels_per_step - o_.buckets) + first_[bucket] + k;
}

TimeNs SyntheticJob::compute_ns(std::uint32_t rank, std::uint64_t kernel) const {
  const Kind& k = kCompute[kernel % kCompute.size()];
  double d = static_cast<double>(k.base) * (1.0 + o_.jitter * noise(o_.seed, rank, kernel));
  if (static_cast<std::int64_t>(rank) == o_.slow_rank) d *= o_.slowdown;
  return std::max<TimeNs>(1, static_cast<TimeNs>(d));
}

TimeNs SyntheticJob::clock_offset(std::uint32_t rank) const {
  return static_cast<TimeNs>(static_cast<double>(o_.max_clock_offset_ns) * noise(o_.seed, rank, ~0ull));
}

namespace {

// Rank r's meta, device and process. Returns the process's pid.
std::uint32_t describe_rank(TraceBuilder& b, const SyntheticJobOptions& o, std::uint32_t rank, TimeNs off) {
  TraceMeta& m = b.meta();
  m.source = TraceSource::synthetic;
  m.producer = "gpuscope synth (synthetic job of " + std::to_string(o.ranks) + " ranks, not a measurement)";
  m.host = "synthetic-node-" + std::to_string(rank);
  m.command_line = o.command_line;
  m.rank = static_cast<std::int32_t>(rank);
  m.world_size = static_cast<std::int32_t>(o.ranks);
  m.start_time_ns = kStartNs + off;
  m.set_property("synthetic.model", "data-parallel job, one trace per rank, one clock per rank");
  m.set_property("synthetic.seed", std::to_string(o.seed));
  m.set_property("synthetic.clock_offset_ns", std::to_string(off));
  m.set_property("synthetic.slow_rank", std::to_string(o.slow_rank));
  Device d;
  d.id = 0;
  d.name = "Synthetic GPU (not a measurement)";
  d.sm_count = 132;
  if (o.framework_ops) {  // an H100 SXM's rates, for the roofline
    d.peak_fp32_flops = 67e12;
    d.peak_tensor_flops = 494e12;
    d.peak_memory_bandwidth = 3.35e12;
  }
  b.add_device(d);
  Process pr;
  pr.pid = 1000 + rank;
  pr.name = "synthetic rank " + std::to_string(rank);
  pr.rank = static_cast<std::int32_t>(rank);
  b.add_process(pr);
  return pr.pid;
}

// The tracks and names a rank's rows use, made once (in this order: ids follow it).
struct RankIds {
  struct Aten {
    StringId name, dims, types, concrete;
  };
  TrackId compute = 0, comm = 0, host = 0;
  std::array<StringId, kCompute.size()> names{};
  StringId allreduce = 0, cpu_op = 0, launch = 0;
  std::array<Aten, kAten.size()> aten{};

  RankIds(TraceBuilder& b, bool framework_ops, std::uint32_t pid) {
    compute = b.gpu_track(0, 7), comm = b.gpu_track(0, 13), host = b.cpu_track(pid, pid);
    for (std::size_t i = 0; i < kCompute.size(); ++i) names[i] = b.intern(kCompute[i].name);
    allreduce = b.intern(kAllReduce), cpu_op = b.intern("cpu_op");
    for (std::size_t i = 0; i < kAten.size() && framework_ops; ++i)
      aten[i] = {b.intern(kAten[i].name), b.intern(kAten[i].dims), b.intern(kAten[i].types),
                 b.intern(kAten[i].concrete)};
    launch = framework_ops ? b.intern("cudaLaunchKernel") : 0;
  }
};

// The framework op around compute kernel `row` and its launch call inside it
// (the kernel takes the call's correlation id).
void add_framework_op(TraceBuilder& b, const RankIds& ids, std::uint64_t kernel, KernelRow& row,
                      std::uint32_t* correlation) {
  const RankIds::Aten& op = ids.aten[kernel % kAten.size()];
  RangeRow range;
  range.start = row.start - kOpBefore;
  range.end = row.start - kOpAfter;
  range.track = ids.host;
  range.name = op.name;
  range.domain = ids.cpu_op;
  range.kind = RangeKind::annotation;
  range.input_dims = op.dims, range.input_types = op.types, range.concrete_inputs = op.concrete;
  b.add_range(range);
  ApiCallRow call;
  call.start = row.start - kLaunchBefore;
  call.end = row.start - kLaunchAfter;
  call.track = ids.host;
  call.correlation = row.correlation = ++*correlation;
  call.name = ids.launch;
  call.cbid = 211;
  b.add_api_call(call);
}

}  // namespace

Trace SyntheticJob::rank_trace(std::uint32_t rank) const {
  TraceBuilder b;
  const TimeNs off = clock_offset(rank);
  const RankIds ids(b, o_.framework_ops, describe_rank(b, o_, rank, off));
  std::uint32_t correlation = 0;
  b.reserve_kernels(steps_ * o_.kernels_per_step);
  std::vector<KernelRow> comm_rows;
  for (std::uint64_t s = 0; s < steps_; ++s) {
    for (std::uint32_t bucket = 0; bucket < o_.buckets; ++bucket) {
      const std::uint64_t c = s * o_.buckets + bucket;
      TimeNs at = begin_[c];
      for (std::uint64_t kernel = kernel_of(c, 0); kernel < kernel_of(c + 1, 0); ++kernel) {
        KernelRow row;
        row.start = at + off;
        row.end = row.start + compute_ns(rank, kernel);
        row.track = ids.compute;
        row.name = ids.names[kernel % kCompute.size()];
        row.grid_x = 264, row.grid_y = row.grid_z = 1, row.block_x = 256, row.block_y = row.block_z = 1;
        if (o_.framework_ops) add_framework_op(b, ids, kernel, row, &correlation);
        b.add_kernel(row);
        at = row.end - off + kKernelGap;
      }
      KernelRow row;
      row.start = at + off;
      // Every part of a collective ends within a microsecond of the others.
      row.end = end_[c] + off + static_cast<TimeNs>(500 * (1.0 + noise(o_.seed, rank, ~0ull - 2 - c)));
      row.track = ids.comm;
      row.name = ids.allreduce;
      row.grid_x = 32, row.grid_y = row.grid_z = 1, row.block_x = 512, row.block_y = row.block_z = 1;
      comm_rows.push_back(row);
    }
    RangeRow step;
    step.start = begin_[s * o_.buckets] + off - 10 * kUs;
    step.end = end_[s * o_.buckets + o_.buckets - 1] + off + 2 * kUs;
    // With ops inside, steps must not overlap (each op's step is its parent):
    // the next step's compute starts kAfterCollective after this one's end.
    if (o_.framework_ops) step.start += 10 * kUs - kOpBefore - 100, step.end -= 2 * kUs - 100;
    step.track = ids.host;
    step.name = b.intern("ProfilerStep#" + std::to_string(s));
    step.domain = ids.cpu_op;
    b.add_range(step);
  }
  for (const KernelRow& row : comm_rows) b.add_kernel(row);
  return b.freeze();
}

}  // namespace gpuscope
