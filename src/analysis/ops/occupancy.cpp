// Theoretical occupancy (occupancy.h): the table of per-SM limits, one
// kernel's resident blocks per SM, and a GPU's time-weighted figures.
//
// [SECTION] The table of limits by compute capability
// [SECTION] One kernel
// [SECTION] One GPU
// [SECTION] Room for concurrency
//
// The calculation is cuda_occupancy.h's (the CUDA Occupancy Calculator):
// - warps per block = ⌈threads / warp size⌉; the warp slots allow
//   ⌊warps per SM / warps per block⌋ blocks;
// - registers go to warps in units of 256 (regs × warp size rounded up), and
//   each of the SM's four register banks holds ⌊registers per SM / 4 /
//   registers per warp⌋ warps: those warps × 4 / warps per block blocks;
// - shared memory goes to blocks in units (256 B before cc 8.0, 128 B
//   after), with 1 KiB per block kept by the driver from cc 8.0: the
//   largest carveout / the block's share blocks;
// - the block slots allow max blocks per SM.
// The carveout is taken at its largest (the driver picks the carveout that
// fits the launch when the program did not ask for one).
#include "analysis/ops/occupancy.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace/kernel_category.h"

namespace gpuscope {

// [SECTION] The table of limits by compute capability ---------------------------------------

namespace {

struct TableRow {
  std::int32_t major, minor;
  std::uint32_t max_threads_per_sm, max_blocks_per_sm, shared_memory_per_sm;
  std::uint32_t registers_per_sm = 65536;
  std::uint32_t register_banks = 4;               // warp schedulers (cuda_occupancy.h's sub-partitions)
  std::uint32_t max_shared_memory_per_block = 0;  // 0: the carveout less what the driver keeps
};

// The CUDA C++ Programming Guide's "Technical Specifications per Compute
// Capability" (the same numbers as CCCL's cuda::arch_traits and the CUDA
// Occupancy Calculator, cuda_occupancy.h): resident threads and blocks per
// SM, the largest shared memory carveout per SM. Every row has 64 Ki
// registers per block, 255 registers per thread, 32-thread warps and
// 1024-thread blocks; 64 Ki registers per SM but on cc 3.7 (128 Ki); four
// warp schedulers share the register file but on cc 6.0 (two); before cc 7.0
// a block may use at most 48 KiB of shared memory.
constexpr TableRow kTable[] = {
    {3, 5, 2048, 16, 48 * 1024, 65536, 4, 48 * 1024},
    {3, 7, 2048, 16, 112 * 1024, 131072, 4, 48 * 1024},
    {5, 0, 2048, 32, 64 * 1024, 65536, 4, 48 * 1024},
    {5, 2, 2048, 32, 96 * 1024, 65536, 4, 48 * 1024},
    {5, 3, 2048, 32, 64 * 1024, 65536, 4, 48 * 1024},
    {6, 0, 2048, 32, 64 * 1024, 65536, 2, 48 * 1024},
    {6, 1, 2048, 32, 96 * 1024, 65536, 4, 48 * 1024},
    {6, 2, 2048, 32, 64 * 1024, 65536, 4, 48 * 1024},
    {7, 0, 2048, 32, 96 * 1024},
    {7, 5, 1024, 16, 64 * 1024},
    {8, 0, 2048, 32, 164 * 1024},
    {8, 6, 1536, 16, 100 * 1024},
    {8, 9, 1536, 24, 100 * 1024},
    {9, 0, 2048, 32, 228 * 1024},
    {10, 0, 2048, 32, 228 * 1024},
    {12, 0, 1536, 24, 100 * 1024},
};

std::uint64_t round_up(std::uint64_t x, std::uint64_t unit) { return (x + unit - 1) / unit * unit; }
std::uint64_t divide_up(std::uint64_t x, std::uint64_t by) { return (x + by - 1) / by; }

}  // namespace

std::optional<SmLimits> sm_limits_for(std::int32_t major, std::int32_t minor) {
  for (const TableRow& r : kTable) {
    if (r.major != major || r.minor != minor) continue;
    SmLimits s;
    s.max_threads_per_sm = r.max_threads_per_sm;
    s.max_blocks_per_sm = r.max_blocks_per_sm;
    s.registers_per_sm = r.registers_per_sm;
    s.register_banks = r.register_banks;
    s.shared_memory_per_sm = r.shared_memory_per_sm;
    s.shared_memory_unit = major >= 8 ? 128 : 256;
    s.reserved_shared_memory_per_block = major >= 8 ? 1024 : 0;
    s.max_shared_memory_per_block = r.max_shared_memory_per_block
                                        ? r.max_shared_memory_per_block
                                        : r.shared_memory_per_sm - s.reserved_shared_memory_per_block;
    return s;
  }
  return std::nullopt;
}

bool nvidia_gpu(std::string_view name, std::int32_t major, std::int32_t minor, std::uint32_t warp_size) {
  return warp_size != 64 && !contains_nocase(name, "amd") && !contains_nocase(name, "radeon") &&
         !contains_nocase(name, "instinct") && !(major == 9 && minor != 0);
}

OccupancyLimits occupancy_limits(const Device* device) {
  OccupancyLimits out;
  if (!device || !nvidia_gpu(device->name, device->compute_major, device->compute_minor, device->warp_size)) return out;
  std::optional<SmLimits> sm = sm_limits_for(device->compute_major, device->compute_minor);
  // Without the table's row the allocation units are not known: no guess.
  if (!sm) return out;
  int from_trace = 0;
  auto take = [&](std::uint32_t given, std::uint32_t& limit) {
    if (given == 0) return;
    limit = given;
    ++from_trace;
  };
  take(device->warp_size, sm->warp_size);
  take(device->max_threads_per_sm, sm->max_threads_per_sm);
  take(device->max_blocks_per_sm, sm->max_blocks_per_sm);
  take(device->registers_per_sm, sm->registers_per_sm);
  take(device->shared_memory_per_sm, sm->shared_memory_per_sm);
  if (device->max_threads_per_block) sm->max_threads_per_block = device->max_threads_per_block;
  // One block may not have more than the SM offers.
  if (sm->shared_memory_per_sm >= sm->reserved_shared_memory_per_block)
    sm->max_shared_memory_per_block =
        std::min(sm->max_shared_memory_per_block, sm->shared_memory_per_sm - sm->reserved_shared_memory_per_block);
  const std::string cc = "cc " + std::to_string(device->compute_major) + "." + std::to_string(device->compute_minor);
  out.source = from_trace == 5 ? "trace" : from_trace == 0 ? "table " + cc : "trace + table " + cc;
  out.sm = sm;
  return out;
}

std::string_view to_string(OccupancyLimiter l) {
  switch (l) {
    case OccupancyLimiter::block_size: return "block size";
    case OccupancyLimiter::blocks_per_sm: return "blocks per SM";
    case OccupancyLimiter::registers: return "registers";
    case OccupancyLimiter::shared_memory: return "shared memory";
  }
  return "block size";
}

// [SECTION] One kernel ---------------------------------------------------------------------------------

std::optional<KernelOccupancy> kernel_occupancy(const SmLimits& sm, std::uint64_t threads, std::uint32_t registers,
                                                std::uint64_t shared_memory) {
  if (threads == 0 || registers == 0) return std::nullopt;  // not in the trace
  // Limits no GPU has (a damaged or hand-made trace): nothing to divide by.
  const std::uint64_t max_warps = sm.warp_size ? sm.max_threads_per_sm / sm.warp_size : 0;
  if (max_warps == 0 || sm.max_blocks_per_sm == 0 || sm.register_unit == 0 || sm.register_banks == 0 ||
      sm.shared_memory_unit == 0)
    return std::nullopt;
  // A block that could not have run.
  if (threads > sm.max_threads_per_block || registers > sm.max_registers_per_thread ||
      shared_memory > sm.max_shared_memory_per_block)
    return std::nullopt;

  const std::uint64_t warps_per_block = divide_up(threads, sm.warp_size);
  const std::uint64_t by_warps = max_warps / warps_per_block;

  const std::uint64_t registers_per_warp = round_up(std::uint64_t{registers} * sm.warp_size, sm.register_unit);
  // The hardware checks a block against the per-block file as if its warps
  // were spread over every bank.
  if (registers_per_warp * warps_per_block > sm.registers_per_block ||
      registers_per_warp * round_up(warps_per_block, sm.register_banks) > sm.registers_per_block)
    return std::nullopt;
  const std::uint64_t warps_per_bank = sm.registers_per_sm / sm.register_banks / registers_per_warp;
  const std::uint64_t by_registers = warps_per_bank * sm.register_banks / warps_per_block;

  const std::uint64_t smem = round_up(shared_memory + sm.reserved_shared_memory_per_block, sm.shared_memory_unit);
  const std::uint64_t by_smem = smem ? sm.shared_memory_per_sm / smem : std::numeric_limits<std::uint64_t>::max();

  const std::uint64_t blocks = std::min({by_warps, std::uint64_t{sm.max_blocks_per_sm}, by_registers, by_smem});
  if (blocks == 0) return std::nullopt;
  KernelOccupancy k;
  k.blocks_per_sm = static_cast<std::uint32_t>(blocks);
  k.warps_per_sm = static_cast<std::uint32_t>(blocks * warps_per_block);
  k.occupancy = static_cast<double>(k.warps_per_sm) / static_cast<double>(max_warps);
  k.limiter = blocks == by_warps                              ? OccupancyLimiter::block_size
              : blocks == std::uint64_t{sm.max_blocks_per_sm} ? OccupancyLimiter::blocks_per_sm
              : blocks == by_registers                        ? OccupancyLimiter::registers
                                                              : OccupancyLimiter::shared_memory;
  return k;
}

// [SECTION] One GPU ------------------------------------------------------------------------------------

OccupancySums::OccupancySums(const Device* device, std::uint32_t sm_count) : sm_count_(sm_count) {
  OccupancyLimits limits = occupancy_limits(device);
  sm_ = limits.sm;
  source_ = std::move(limits.source);
  if (sm_) {
    shapes_.resize(1024);
    capacity_ = double(sm_count) * double(sm_->max_threads_per_sm);
  }
}

void OccupancySums::Totals::add(const Slot& s) {
  if (!s.known) {
    unknown += s.kernels;
    return;
  }
  known += s.kernels;
  known_ns += s.ns;
  limited_ns[s.limiter] += s.ns;
  weighted += static_cast<Wide>(static_cast<std::uint64_t>(s.ns)) * s.warps_per_sm;
  filled += s.blocks_ns * s.threads;
}

void OccupancySums::fill(Slot& slot, std::uint64_t key, std::uint64_t threads, std::uint32_t registers,
                         std::uint64_t shared_memory) {
  totals_.add(slot);
  slot = {};
  slot.key = key;
  slot.threads = threads;
  if (const std::optional<KernelOccupancy> k = kernel_occupancy(*sm_, threads, registers, shared_memory)) {
    slot.known = true;
    slot.resident_blocks = std::uint64_t{sm_count_} * k->blocks_per_sm;
    slot.warps_per_sm = k->warps_per_sm;
    slot.limiter = static_cast<std::uint8_t>(k->limiter);
  }
}

DeviceOccupancy OccupancySums::figures(TimeNs kernel_ns) const {
  Totals t = totals_;
  for (const Slot& s : shapes_) t.add(s);
  DeviceOccupancy out;
  out.limits = source_;
  out.known_kernels = t.known;
  out.unknown_kernels = t.unknown;
  out.known_ns = t.known_ns;
  out.block_size_ns = t.limited_ns[static_cast<int>(OccupancyLimiter::block_size)];
  out.blocks_per_sm_ns = t.limited_ns[static_cast<int>(OccupancyLimiter::blocks_per_sm)];
  out.registers_ns = t.limited_ns[static_cast<int>(OccupancyLimiter::registers)];
  out.shared_memory_ns = t.limited_ns[static_cast<int>(OccupancyLimiter::shared_memory)];
  out.side_work_ns = side_ns_;
  out.side_work_shared_ns = side_shared_ns_;
  out.known_share = kernel_ns > 0 ? double(t.known_ns) / double(kernel_ns) : 0;
  if (t.known_ns > 0 && sm_) {
    const double max_warps = double(sm_->max_threads_per_sm / sm_->warp_size);
    out.theoretical = static_cast<double>(t.weighted) / max_warps / double(t.known_ns);
    if (capacity_ > 0) out.gpu_fill = static_cast<double>(t.filled) / capacity_ / double(t.known_ns);
  }
  return out;
}

DeviceOccupancy device_occupancy(const Trace& t, std::span<const TrackId> tracks, const Device* device,
                                 std::uint32_t sm_count) {
  OccupancySums sums(device, sm_count);
  const KernelTable& k = t.kernels();
  TimeNs kernel_ns = 0;
  for (TrackId tr : tracks) {
    const RowRange rows = t.rows_of(TableId::kernels, tr);
    // Side work on this stream, and whether compute kernels share it.
    bool compute = false;
    TimeNs side = 0;
    const RowRange copies = t.rows_of(TableId::memcpys, tr);
    for (RowIndex i = copies.begin; i < copies.end; ++i) side += t.memcpys().end[i] - t.memcpys().start[i];
    for (RowIndex i = rows.begin; i < rows.end; ++i) {
      const TimeNs dur = k.end[i] - k.start[i];
      kernel_ns += dur;
      if (k.category_at(i) == KernelCategory::communication)
        side += dur;
      else
        compute = true;
      sums.add(std::uint64_t{k.block_x[i]} * k.block_y[i] * k.block_z[i], k.registers[i],
               std::uint64_t{k.static_smem[i]} + k.dynamic_smem[i],
               std::uint64_t{k.grid_x[i]} * k.grid_y[i] * k.grid_z[i], dur);
    }
    sums.add_side_work(side, compute);
  }
  return sums.figures(kernel_ns);
}

namespace {
// Whether a framework op's recorded input shapes ("[[1], [1], []]", Kineto's
// Input Dims) are all tiny: every tensor at most kTinyElements elements with
// at most one dimension above 1 (a scalar, a vector, a [1, n] row: no
// batch-by-feature shape); a list of tensors is not. -1: none recorded or
// not readable.
constexpr std::uint64_t kTinyElements = 4096;
int tiny_inputs(std::string_view dims) {
  if (dims.size() < 2 || dims.front() != '[') return -1;
  int depth = 0;
  bool tiny = true;
  std::uint64_t elements = 1, value = 0, above_one = 0;
  bool digits = false;
  const auto end_value = [&] {
    if (!digits) return;
    elements = value > kTinyElements ? kTinyElements + 1 : std::min(elements * value, kTinyElements + 1);
    above_one += value > 1;
    value = 0, digits = false;
  };
  for (const char c : dims) {
    if (c == '[') {
      if (++depth == 2) elements = 1, above_one = 0;
      if (depth > 2) tiny = false;  // a tensor list
    } else if (c == ']') {
      end_value();
      if (depth == 2 && (elements > kTinyElements || above_one > 1)) tiny = false;
      if (--depth < 0) return -1;
    } else if (c >= '0' && c <= '9') {
      value = std::min<std::uint64_t>(value * 10 + std::uint64_t(c - '0'), 1u << 30), digits = true;
    } else if (c == ',') {
      end_value();
    } else if (c != ' ' && c != '-') {
      return -1;
    }
  }
  return depth == 0 ? int(tiny) : -1;
}

// The ops whose tiny inputs launched the most small-grid time, up to three,
// each named with its input shapes (HostRange: count holds its kernels).
struct TinyOp {
  TimeNs ns = 0;
  std::uint64_t kernels = 0;
};
std::vector<HostRange> most_tiny_ops(const Trace& t, const std::map<std::pair<StringId, StringId>, TinyOp>& ops) {
  std::vector<std::pair<std::pair<StringId, StringId>, TinyOp>> v(ops.begin(), ops.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::vector<HostRange> out;
  for (std::size_t i = 0; i < v.size() && i < 3; ++i)
    out.push_back({std::string(t.str(v[i].first.first)) + " " + std::string(t.str(v[i].first.second)), v[i].second.ns,
                   v[i].second.kernels});
  return out;
}
}  // namespace

void small_grids(const Trace& t, std::span<const TrackId> tracks, std::uint32_t sm_count, DeviceOccupancy* out) {
  if (sm_count < 2) return;
  const KernelTable& k = t.kernels();
  // A kernel that only waits (PyTorch's torch.cuda._sleep spins in one
  // block) is no work to spread.
  std::vector<std::int8_t> spins(t.strings().size(), -1);
  auto spin = [&](StringId n) {
    if (spins[n] < 0) spins[n] = contains_nocase(t.str(n), "spin_kernel") || contains_nocase(t.str(n), "sleep");
    return spins[n] == 1;
  };
  std::vector<TimeNs> by_name(t.strings().size(), 0);
  std::vector<std::uint64_t> blocks_of(t.strings().size(), 0);
  std::uint64_t spread = 0;  // Σ duration × blocks: blocks under 64k (half the SMs), durations under days
  std::vector<std::int8_t> tiny_of(t.strings().size(), 2);   // per recorded shapes: 2 not read, else tiny_inputs()
  std::map<std::pair<StringId, StringId>, TinyOp> tiny_ops;  // by op name and shapes
  for (TrackId tr : tracks) {
    const RowRange rows = t.rows_of(TableId::kernels, tr);
    for (RowIndex i = rows.begin; i < rows.end; ++i) {
      const std::uint64_t blocks = std::uint64_t{k.grid_x[i]} * k.grid_y[i] * k.grid_z[i];
      if (blocks == 0 || 2 * blocks >= sm_count || k.category_at(i) == KernelCategory::communication || spin(k.name[i]))
        continue;
      const TimeNs dur = k.end[i] - k.start[i];
      ++out->small_grid_kernels;
      out->small_grid_ns += dur;
      spread += static_cast<std::uint64_t>(dur) * blocks;
      by_name[k.name[i]] += dur;
      blocks_of[k.name[i]] = std::max(blocks_of[k.name[i]], blocks);
      // The launching op's recorded inputs: tiny ones (scalars, vectors) are
      // bookkeeping that a larger batch does not give more blocks.
      const RowIndex op = t.launching_op(OpRef{OpTable::kernel, i});
      const StringId dims = op == kNoRow ? StringId{0} : t.ranges().input_dims_at(op);
      if (dims == 0) continue;
      std::int8_t& memo = tiny_of[dims];
      if (memo == 2) memo = static_cast<std::int8_t>(tiny_inputs(t.str(dims)));
      const int tiny = memo;
      if (tiny < 0) continue;
      out->small_grid_shaped_ns += dur;
      if (tiny == 0) continue;
      out->small_grid_tiny_ns += dur;
      TinyOp& o = tiny_ops[{t.ranges().name[op], dims}];
      o.ns += dur, ++o.kernels;
    }
  }
  out->small_grid_tiny_ops = most_tiny_ops(t, tiny_ops);
  out->small_grid_spread_ns = static_cast<TimeNs>(spread / sm_count);
  StringId top = StringTable::kNoString;
  for (StringId id = 0; id < by_name.size(); ++id)
    if (by_name[id] > 0 && (top == StringTable::kNoString || by_name[id] > by_name[top])) top = id;
  if (top != StringTable::kNoString) {
    out->small_grid_top = std::string(t.str(top));
    out->small_grid_top_blocks = blocks_of[top];
  }
}

// [SECTION] Room for concurrency ---------------------------------------------------------------------

ConcurrencyRoom concurrency_room(const DeviceSummary& d) {
  constexpr double kRoomBelow = 0.8;
  ConcurrencyRoom r;
  const DeviceOccupancy& o = d.occupancy;
  // A GPU whose kernels hold as many threads as their own occupancy allows
  // is full: what limits them (registers, shared memory, block slots) is
  // spent, so another kernel's blocks would not fit beside them. The fill is
  // measured against that, not against every thread slot.
  if (o.gpu_fill && o.theoretical && *o.theoretical > 0 && o.known_share >= 0.5) {
    r.used = std::min(1.0, *o.gpu_fill / *o.theoretical);
    r.measure = "GPU fill";
  } else if (d.sm_count && d.sm_efficiency_known >= 0.5) {
    r.used = d.sm_efficiency;
    r.measure = "SM efficiency";
  } else if (d.sm_count) {
    // Most kernel time without a recorded grid: how much of the GPU it
    // fills is unknown (r.used 0, no room claimed).
    r.measure = "unknown";
    r.idle_bound = d.idle_host_wait_ns + d.idle_other_ns >= d.kernel_busy_ns && d.idle_ns > 0;
    return r;
  } else {
    r.used = d.utilization;
    r.measure = "utilization";
  }
  r.room = d.kernels >= 2 && r.used < kRoomBelow;
  r.idle_bound = d.idle_host_wait_ns + d.idle_other_ns >= d.kernel_busy_ns && d.idle_ns > 0;
  r.host_bound = 4 * d.idle_host_wait_ns >= d.kernel_busy_ns && d.idle_host_wait_ns > 0;
  r.side_work_apart = o.side_work_ns > 0 && o.side_work_shared_ns == 0;
  if (r.room) {
    const double busy = static_cast<double>(d.kernel_busy_ns);
    const double overlap = busy * (1.0 - 1.0 / static_cast<double>(d.kernels));
    r.saving_ns = static_cast<TimeNs>(std::min(busy * (1.0 - r.used), overlap));
  }
  return r;
}

}  // namespace gpuscope
