// Theoretical occupancy: how many warps of a kernel an SM can hold at once,
// as a share of the most it can hold, by the CUDA occupancy calculation
// (cuda_occupancy.h's cudaOccMaxActiveBlocksPerMultiprocessor, the CUDA
// Occupancy Calculator): the resident blocks per SM are the fewest that the
// warp slots, the block slots, the register file and the shared memory
// allow. Formulas and the table of limits: docs/metrics.md, "Occupancy".
//
// The per-SM limits come from the trace's Device where it gives them, the
// rest (allocation units, reserved shared memory, and any limit the trace
// leaves out) from a table by compute capability. A kernel whose block size
// or registers the trace does not give has no occupancy: it is counted as
// unknown, never guessed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/profile.h"
#include "trace/trace.h"

namespace gpuscope {

// What one SM offers, and how it hands it out.
struct SmLimits {
  std::uint32_t warp_size = 32;
  std::uint32_t max_threads_per_sm = 0;  // resident threads (warp slots × warp size)
  std::uint32_t max_blocks_per_sm = 0;   // resident blocks
  std::uint32_t max_threads_per_block = 1024;
  std::uint32_t registers_per_sm = 0;
  std::uint32_t registers_per_block = 65536;
  std::uint32_t max_registers_per_thread = 255;
  std::uint32_t register_unit = 256;                   // registers are given to a warp in multiples of this
  std::uint32_t register_banks = 4;                    // the register file is split between this many warp schedulers
  std::uint32_t shared_memory_per_sm = 0;              // bytes blocks may share (the largest carveout)
  std::uint32_t max_shared_memory_per_block = 0;       // bytes one block may opt into
  std::uint32_t shared_memory_unit = 128;              // shared memory is given to a block in multiples of this
  std::uint32_t reserved_shared_memory_per_block = 0;  // bytes the driver keeps per block (1 KiB from cc 8.0)
};

// The table's limits for a compute capability: 3.5, 3.7, 5.0, 5.2, 5.3, 6.0,
// 6.1, 6.2, 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 12.0; nullopt for any other.
std::optional<SmLimits> sm_limits_for(std::int32_t major, std::int32_t minor);

// The limits for a GPU: the trace's numbers where it gives them, the rest from
// the table. `source` says which: "trace" (every per-SM number from the
// trace, allocation units from the table), "table cc 9.0", "trace + table cc
// 9.0" (some of each), "unknown" (no table row for its compute capability:
// then no kernel of it has an occupancy).
struct OccupancyLimits {
  std::optional<SmLimits> sm;
  std::string source = "unknown";
};
OccupancyLimits occupancy_limits(const Device* device);

// True unless a GPU is plainly not NVIDIA's: an AMD name, 64-wide
// wavefronts, or a compute capability no NVIDIA GPU has (ROCm traces give
// 9.4 for gfx942, and 9.0 for gfx90a under an AMD name). NVIDIA's SM tables
// and tensor-core kernel names do not describe other GPUs. `warp_size` 0:
// not known.
bool nvidia_gpu(std::string_view name, std::int32_t major, std::int32_t minor, std::uint32_t warp_size = 0);

enum class OccupancyLimiter : std::uint8_t { block_size = 0, blocks_per_sm = 1, registers = 2, shared_memory = 3 };
std::string_view to_string(OccupancyLimiter l);  // "block size", "blocks per SM", "registers", "shared memory"

struct KernelOccupancy {
  std::uint32_t blocks_per_sm = 0;  // resident blocks per SM
  std::uint32_t warps_per_sm = 0;   // resident warps per SM
  double occupancy = 0;             // warps_per_sm / (max_threads_per_sm / warp_size)
  // What allows no more blocks. On a tie the first of: block size (the warp
  // slots), blocks per SM, registers, shared memory.
  OccupancyLimiter limiter = OccupancyLimiter::block_size;
};

// One kernel's theoretical occupancy: `threads` per block, `registers` per
// thread, `shared_memory` (static + dynamic) bytes per block. Nullopt when it
// cannot be known (no threads or no registers given) or when the numbers do
// not fit the limits (the block could not have run: more threads, registers
// or shared memory than one block may have).
std::optional<KernelOccupancy> kernel_occupancy(const SmLimits& sm, std::uint64_t threads, std::uint32_t registers,
                                                std::uint64_t shared_memory);

// The occupancy figures of one GPU (DeviceSummary::occupancy), summed one
// kernel at a time in any order: the device sweep adds each kernel as it
// passes it, device_occupancy() row by row. Every sum is an integer (Σ
// duration × resident warps, Σ duration × resident blocks × threads), so
// the figures do not depend on the order. Launch shapes repeat: a
// direct-mapped cache of (threads, registers, shared memory) → occupancy,
// cheaper per kernel than a hash map's lookup.
class OccupancySums {
 public:
  OccupancySums(const Device* device, std::uint32_t sm_count);
  // A kernel of `threads` per block, `registers` per thread, `shared_memory`
  // bytes per block, `blocks` in its grid, that ran `duration`.
  void add(std::uint64_t threads, std::uint32_t registers, std::uint64_t shared_memory, std::uint64_t blocks,
           TimeNs duration) {
    if (!sm_ || blocks == 0 || threads == 0 || threads > 0xffff) {
      ++totals_.unknown;
      return;
    }
    const std::uint64_t key =
        threads | std::uint64_t{registers} << 16 | std::min<std::uint64_t>(shared_memory, 0xffffffffu) << 32;
    Slot& slot = shapes_[(key * 0x9E3779B97F4A7C15ull) >> 54];
    if (slot.key != key) [[unlikely]]
      fill(slot, key, threads, registers, shared_memory);
    // The shape's sums, handed to the GPU's when another shape takes the slot.
    ++slot.kernels;
    slot.ns += duration;
    slot.blocks_ns += static_cast<Wide>(static_cast<std::uint64_t>(duration)) * std::min(blocks, slot.resident_blocks);
  }
  // A stream's side work (communication kernels and copies), and whether
  // compute kernels share the stream.
  void add_side_work(TimeNs side, bool shared) {
    side_ns_ += side;
    if (shared) side_shared_ns_ += side;
  }
  // The figures, with `kernel_ns` the GPU's Σ kernel durations.
  DeviceOccupancy figures(TimeNs kernel_ns) const;

 private:
  __extension__ typedef unsigned __int128 Wide;
  struct Slot {
    std::uint64_t key = ~std::uint64_t{0};
    std::uint64_t threads = 0;          // per block
    std::uint64_t resident_blocks = 0;  // SMs × blocks per SM
    std::uint32_t warps_per_sm = 0;
    std::uint8_t limiter = 0;  // OccupancyLimiter
    bool known = false;
    // Since the shape took the slot: its kernels, Σ durations, Σ duration × resident blocks.
    std::uint64_t kernels = 0;
    TimeNs ns = 0;
    Wide blocks_ns = 0;
  };
  struct Totals {
    std::uint64_t known = 0, unknown = 0;
    TimeNs known_ns = 0;
    TimeNs limited_ns[4] = {};  // by OccupancyLimiter
    Wide weighted = 0, filled = 0;
    void add(const Slot& s);
  };
  // Hands the slot's sums to the totals and gives the slot to a new shape.
  void fill(Slot& slot, std::uint64_t key, std::uint64_t threads, std::uint32_t registers, std::uint64_t shared_memory);
  std::optional<SmLimits> sm_;
  std::string source_;
  std::uint32_t sm_count_ = 0;
  double capacity_ = 0;  // SMs × threads per SM; 0 when not known
  std::vector<Slot> shapes_;
  Totals totals_;  // of the shapes that left their slot, and the kernels of no shape
  TimeNs side_ns_ = 0, side_shared_ns_ = 0;
};

// The compute kernels of one GPU (on `tracks`) whose grid has fewer blocks
// than half its `sm_count` SMs: DeviceOccupancy's small_grid_* figures.
void small_grids(const Trace& t, std::span<const TrackId> tracks, std::uint32_t sm_count, DeviceOccupancy* out);

// The occupancy figures of one GPU from its kernels on `tracks`, in one pass
// over their rows (the device sweep sums the same as it goes).
DeviceOccupancy device_occupancy(const Trace& t, std::span<const TrackId> tracks, const Device* device,
                                 std::uint32_t sm_count);

// [SECTION] Room for concurrency

// Whether kernels side by side could gain on one GPU, and at most how much:
// the low-concurrency finding's gate (docs/findings.md).
struct ConcurrencyRoom {
  // How much of the GPU its kernels use, by the best measure the trace
  // allows: the GPU fill against what the kernels' theoretical occupancy
  // allows ("GPU fill"), else SM efficiency (blocks against SMs), else
  // utilization.
  double used = 0;
  std::string_view measure;
  bool room = false;  // used < 80 %, with two kernels or more
  // The GPU's idle time is host- or dependency-bound: it waits for the host
  // (launches, synchronizations, input) or for work queued behind something
  // else at least as long as it runs kernels, so nothing is ready to run beside them.
  bool idle_bound = false;
  // The GPU waits for the host's late launches a quarter of its kernel time
  // or more: the host does not keep even one stream fed, so work for a
  // second would not be queued either (it would be launched as late).
  bool host_bound = false;
  // Communication and copies already run on streams of their own.
  bool side_work_apart = false;
  bool fires() const { return room && !idle_bound && !host_bound && !side_work_apart; }
  // Kernel busy time × (1 − used), never more than the kernels could overlap
  // each other (kernel busy time × (1 − 1 / kernels)).
  TimeNs saving_ns = 0;
};
ConcurrencyRoom concurrency_room(const DeviceSummary& d);

}  // namespace gpuscope
