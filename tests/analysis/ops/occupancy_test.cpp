// Theoretical occupancy (analysis/ops/occupancy.h) against numbers worked by hand
// from the CUDA occupancy calculation, and a GPU's time-weighted figures.
//
// The hand calculations, cc 8.0 (2048 threads = 64 warps, 32 blocks, 64 Ki
// registers in 4 banks, 164 KiB shared memory in 128 B units, 1 KiB kept per
// block) unless said:
// - 256 threads, 32 regs: 8 warps/block → 64/8 = 8 blocks by warps; 32×32 =
//   1024 regs/warp, 16384/1024 = 16 warps/bank → 64 warps → 8 blocks; shared
//   1 KiB → 164 blocks. 8 blocks × 8 warps = 64/64 = 100 %.
// - 1024 threads, 64 regs: 32 warps/block → 2 by warps; 2048 regs/warp → 8
//   warps/bank → 32 warps → 1 block; 32/64 = 50 %, registers.
// - 128 threads, 32 regs, 48 KiB: (49152 + 1024) = 50176 B → 167936/50176 =
//   3 blocks (by warps 16, by registers 16); 3 × 4 = 12/64 = 18.75 %.
// - 256 threads, 33 regs: 33×32 = 1056 → 1280 (units of 256) regs/warp →
//   16384/1280 = 12 warps/bank → 48 → 6 blocks; 48/64 = 75 % (87.5 % without
//   the unit: 1056 → 15 warps/bank → 60 → 7 blocks).
// - cc 8.6 (1536 threads = 48 warps, 16 blocks): 32 threads, 16 regs → 1
//   warp/block, 48 by warps, 16 by blocks → 16/48 = 33.3 %, blocks per SM;
//   1024 threads, 32 regs → 1 block by warps (2 by registers) → 32/48, block size.
#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "analysis/ops/occupancy.h"
#include "support/findings.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

SmLimits cc(int major, int minor) {
  std::optional<SmLimits> s = sm_limits_for(major, minor);
  EXPECT_TRUE(s) << major << "." << minor;
  return s.value_or(SmLimits{});
}

TEST(Occupancy, FullWhenWarpsAndRegistersAllowEveryWarpSlot) {
  const auto k = kernel_occupancy(cc(8, 0), 256, 32, 0);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->blocks_per_sm, 8u);
  EXPECT_EQ(k->warps_per_sm, 64u);
  EXPECT_DOUBLE_EQ(k->occupancy, 1.0);
  EXPECT_EQ(k->limiter, OccupancyLimiter::block_size);  // a tie with registers goes to the warp slots
}

TEST(Occupancy, HalfWhenRegistersLimit) {
  const auto k = kernel_occupancy(cc(8, 0), 1024, 64, 0);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->blocks_per_sm, 1u);
  EXPECT_DOUBLE_EQ(k->occupancy, 0.5);
  EXPECT_EQ(k->limiter, OccupancyLimiter::registers);
}

TEST(Occupancy, SharedMemoryWithTheReservedKibibyte) {
  const auto k = kernel_occupancy(cc(8, 0), 128, 32, 48 * 1024);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->blocks_per_sm, 3u);
  EXPECT_DOUBLE_EQ(k->occupancy, 12.0 / 64.0);
  EXPECT_EQ(k->limiter, OccupancyLimiter::shared_memory);
  // The reserved KiB decides at 54 KiB: 55296 + 1024 = 56320 → 167936 / 56320 = 2 blocks (55296 alone: 3).
  const auto tight = kernel_occupancy(cc(8, 0), 128, 32, 54 * 1024);
  ASSERT_TRUE(tight);
  EXPECT_EQ(tight->blocks_per_sm, 2u);
}

TEST(Occupancy, RegistersGoToWarpsInUnitsOf256) {
  const auto k = kernel_occupancy(cc(8, 0), 256, 33, 0);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->blocks_per_sm, 6u);
  EXPECT_DOUBLE_EQ(k->occupancy, 0.75);
  EXPECT_EQ(k->limiter, OccupancyLimiter::registers);
  // 40 registers round to the same 1280 per warp.
  EXPECT_EQ(kernel_occupancy(cc(8, 0), 256, 40, 0)->blocks_per_sm, 6u);
}

TEST(Occupancy, BlockSlotsAndBlockSizeOnCc86) {
  const auto small = kernel_occupancy(cc(8, 6), 32, 16, 0);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->blocks_per_sm, 16u);
  EXPECT_DOUBLE_EQ(small->occupancy, 16.0 / 48.0);
  EXPECT_EQ(small->limiter, OccupancyLimiter::blocks_per_sm);
  const auto big = kernel_occupancy(cc(8, 6), 1024, 32, 0);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->blocks_per_sm, 1u);
  EXPECT_DOUBLE_EQ(big->occupancy, 32.0 / 48.0);
  EXPECT_EQ(big->limiter, OccupancyLimiter::block_size);
}

TEST(Occupancy, Volta256ByteUnitsAndNoReservedSharedMemory) {
  // cc 7.0: 96 KiB; 100 B rounds to 256 B, nothing kept → 384 blocks by shared memory; 1000 B → 1024 → 96.
  // 64 threads (2 warps), 32 regs: 32 by warps, 32 by blocks, 32 by registers: 100 %.
  const auto k = kernel_occupancy(cc(7, 0), 64, 32, 1000);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->blocks_per_sm, 32u);
  EXPECT_DOUBLE_EQ(k->occupancy, 1.0);
  // 32 KiB + 1 B → 33024 B → 98304 / 33024 = 2 blocks.
  EXPECT_EQ(kernel_occupancy(cc(7, 0), 64, 32, 32 * 1024 + 1)->blocks_per_sm, 2u);
}

TEST(Occupancy, UnknownOrImpossibleLaunchesHaveNone) {
  const SmLimits a100 = cc(8, 0);
  EXPECT_FALSE(kernel_occupancy(a100, 0, 32, 0));            // no block size
  EXPECT_FALSE(kernel_occupancy(a100, 256, 0, 0));           // no registers
  EXPECT_FALSE(kernel_occupancy(a100, 2048, 32, 0));         // more threads than a block may have
  EXPECT_FALSE(kernel_occupancy(a100, 256, 256, 0));         // more registers than a thread may have
  EXPECT_FALSE(kernel_occupancy(a100, 1024, 128, 0));        // 4096 × 32 registers: more than a block's file
  EXPECT_FALSE(kernel_occupancy(a100, 256, 32, 200 << 10));  // more shared memory than a block may have
  EXPECT_FALSE(kernel_occupancy(SmLimits{}, 256, 32, 0));    // limits no GPU has
  EXPECT_FALSE(sm_limits_for(6, 4));
  EXPECT_FALSE(sm_limits_for(2, 0));
  EXPECT_FALSE(sm_limits_for(0, 0));
}

// Kepler, Maxwell and Pascal (the GPUs of many published traces): the rows,
// the doubled register file of cc 3.7, the two warp schedulers of cc 6.0 and
// the 48 KiB a block may use, against the CUDA Occupancy Calculator's figures.
TEST(Occupancy, KeplerMaxwellAndPascalRows) {
  struct Row {
    int major, minor;
    std::uint32_t threads, blocks, smem, registers, banks;
  };
  for (const Row& r : {Row{3, 5, 2048, 16, 48u << 10, 65536, 4}, Row{3, 7, 2048, 16, 112u << 10, 131072, 4},
                       Row{5, 0, 2048, 32, 64u << 10, 65536, 4}, Row{5, 2, 2048, 32, 96u << 10, 65536, 4},
                       Row{5, 3, 2048, 32, 64u << 10, 65536, 4}, Row{6, 0, 2048, 32, 64u << 10, 65536, 2},
                       Row{6, 1, 2048, 32, 96u << 10, 65536, 4}, Row{6, 2, 2048, 32, 64u << 10, 65536, 4}}) {
    const SmLimits s = cc(r.major, r.minor);
    EXPECT_EQ(s.max_threads_per_sm, r.threads) << r.major << "." << r.minor;
    EXPECT_EQ(s.max_blocks_per_sm, r.blocks) << r.major << "." << r.minor;
    EXPECT_EQ(s.shared_memory_per_sm, r.smem) << r.major << "." << r.minor;
    EXPECT_EQ(s.registers_per_sm, r.registers) << r.major << "." << r.minor;
    EXPECT_EQ(s.register_banks, r.banks) << r.major << "." << r.minor;
    EXPECT_EQ(s.max_shared_memory_per_block, 48u << 10) << r.major << "." << r.minor;
    EXPECT_EQ(s.shared_memory_unit, 256u);
  }
  // 256 threads × 64 registers: 2,048 registers per warp.
  EXPECT_EQ(kernel_occupancy(cc(3, 5), 256, 64, 0)->blocks_per_sm, 4u);         // 64 Ki / 2,048 = 32 warps
  EXPECT_EQ(kernel_occupancy(cc(3, 7), 256, 64, 0)->blocks_per_sm, 8u);         // 128 Ki: 64 warps, every slot
  EXPECT_EQ(kernel_occupancy(cc(6, 0), 256, 64, 0)->blocks_per_sm, 4u);         // two banks of 16 warps
  EXPECT_FALSE(kernel_occupancy(cc(6, 1), 256, 32, (48 << 10) + 1));            // more than a block may use
  EXPECT_EQ(kernel_occupancy(cc(6, 1), 256, 32, 48 << 10)->blocks_per_sm, 2u);  // 96 KiB / 48 KiB
}

TEST(Occupancy, TableRowsFromTheProgrammingGuide) {
  struct Row {
    int major, minor;
    std::uint32_t threads, blocks, smem;
  };
  for (const Row& r :
       {Row{7, 0, 2048, 32, 96u << 10}, Row{7, 5, 1024, 16, 64u << 10}, Row{8, 0, 2048, 32, 164u << 10},
        Row{8, 6, 1536, 16, 100u << 10}, Row{8, 9, 1536, 24, 100u << 10}, Row{9, 0, 2048, 32, 228u << 10},
        Row{10, 0, 2048, 32, 228u << 10}, Row{12, 0, 1536, 24, 100u << 10}}) {
    const SmLimits s = cc(r.major, r.minor);
    EXPECT_EQ(s.max_threads_per_sm, r.threads) << r.major << "." << r.minor;
    EXPECT_EQ(s.max_blocks_per_sm, r.blocks) << r.major << "." << r.minor;
    EXPECT_EQ(s.shared_memory_per_sm, r.smem) << r.major << "." << r.minor;
    EXPECT_EQ(s.registers_per_sm, 65536u);
    EXPECT_EQ(s.reserved_shared_memory_per_block, r.major >= 8 ? 1024u : 0u);
    EXPECT_EQ(s.shared_memory_unit, r.major >= 8 ? 128u : 256u);
  }
}

TEST(Occupancy, LimitsSaySourceTraceFirst) {
  Device d;
  d.compute_major = 9;
  d.compute_minor = 0;
  EXPECT_EQ(occupancy_limits(&d).source, "table cc 9.0");
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  EXPECT_EQ(occupancy_limits(&d).source, "trace + table cc 9.0");
  d.registers_per_sm = 65536;
  d.shared_memory_per_sm = 233472;
  d.warp_size = 32;
  EXPECT_EQ(occupancy_limits(&d).source, "trace");
  // The trace's number wins over the table's.
  d.max_threads_per_sm = 1024;
  EXPECT_EQ(occupancy_limits(&d).sm->max_threads_per_sm, 1024u);
  d.compute_major = 4;  // no such compute capability
  EXPECT_EQ(occupancy_limits(&d).source, "unknown");
  EXPECT_FALSE(occupancy_limits(&d).sm);
  EXPECT_EQ(occupancy_limits(nullptr).source, "unknown");
  // An AMD GPU of a ROCm trace gives a compute capability too (9.0 for
  // gfx90a): NVIDIA's table does not describe it.
  Device amd;
  amd.name = "AMD Instinct MI250X";
  amd.compute_major = 9;
  amd.warp_size = 64;
  EXPECT_FALSE(occupancy_limits(&amd).sm);
  amd.warp_size = 0;
  EXPECT_FALSE(occupancy_limits(&amd).sm);
}

// A kernel with its launch shape, launched by a cudaLaunchKernel call that
// starts `ahead` of it (and lasts 5 µs).
void shaped_kernel(testing::TraceFactory& f, TimeNs start, TimeNs end, std::uint32_t blocks, std::uint16_t threads,
                   std::uint16_t registers, std::uint32_t smem = 0, std::uint32_t stream = 7, TimeNs ahead = 10'000) {
  KernelRow k;
  k.start = start;
  k.end = end;
  k.track = f.builder().gpu_track(0, stream);
  k.name = f.builder().intern("shaped_kernel");
  k.grid_x = blocks;
  k.grid_y = k.grid_z = 1;
  k.block_x = threads;
  k.block_y = k.block_z = 1;
  k.registers = registers;
  k.dynamic_smem = smem;
  k.correlation = f.api("cudaLaunchKernel", start - ahead, start - ahead + 5'000);
  f.builder().add_kernel(k);
}

TEST(Occupancy, DeviceFiguresWeightedByKernelTime) {
  testing::TraceFactory f;
  f.device(0, 108, 8);  // cc 8.0, limits from the table
  // 300 µs at 100 % (block size), 100 µs at 50 % (registers), 100 µs unknown (no registers).
  shaped_kernel(f, 0, 300'000, 108 * 8, 256, 32);
  shaped_kernel(f, 400'000, 500'000, 54, 1024, 64);
  shaped_kernel(f, 600'000, 700'000, 1000, 256, 0);
  const Profile p = analyze(f.build());
  ASSERT_EQ(p.devices.size(), 1u);
  const DeviceOccupancy& o = p.devices[0].occupancy;
  EXPECT_EQ(o.limits, "table cc 8.0");
  EXPECT_EQ(o.known_kernels, 2u);
  EXPECT_EQ(o.unknown_kernels, 1u);
  EXPECT_EQ(o.known_ns, 400'000);
  EXPECT_DOUBLE_EQ(o.known_share, 0.8);
  ASSERT_TRUE(o.theoretical);
  EXPECT_DOUBLE_EQ(*o.theoretical, (300'000 * 1.0 + 100'000 * 0.5) / 400'000);
  EXPECT_EQ(o.block_size_ns, 300'000);
  EXPECT_EQ(o.registers_ns, 100'000);
  EXPECT_EQ(o.shared_memory_ns + o.blocks_per_sm_ns, 0);
  // Fill: the first fills all 108 × 2048 thread slots; the second, 54 blocks of 1024 of 108 × 2048: 1/4.
  ASSERT_TRUE(o.gpu_fill);
  EXPECT_DOUBLE_EQ(*o.gpu_fill, (300'000 * 1.0 + 100'000 * 0.25) / 400'000);
}

// The device sweep adds each kernel's occupancy as it passes it, in time
// order across streams; device_occupancy() adds them stream by stream. The
// sums are integers, so both give the same figures, to the last bit.
TEST(Occupancy, TheSweepSumsWhatARowByRowPassSums) {
  testing::TraceFactory f;
  f.device(0, 108, 8);
  const std::uint16_t threads[] = {64, 128, 256, 1024, 96};
  const std::uint16_t registers[] = {16, 32, 40, 64, 0, 255};
  const std::uint32_t smem[] = {0, 48 * 1024, 1000, 200 * 1024};
  for (int i = 0; i < 300; ++i) {
    const TimeNs start = 1'000'000 + i * 7'000 + (i % 3) * 2'000;
    shaped_kernel(f, start, start + 4'000 + (i * 37 % 17) * 1'000, 1 + (i * 131) % 2'000, threads[i % 5],
                  registers[i % 6], smem[i % 4], 7 + i % 3);
  }
  for (int i = 0; i < 20; ++i) {
    const TimeNs start = 1'000'000 + i * 100'000;
    f.kernel(0, 20, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", start, start + 30'000);
    f.memcpy(0, 7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, start + 50'000, start + 60'000);
    f.memcpy(0, 21, CopyKind::dtoh, MemoryKind::device, MemoryKind::pinned, 1 << 20, start + 70'000, start + 75'000);
  }
  const Trace t = f.build();
  const Profile p = analyze(t);
  ASSERT_EQ(p.devices.size(), 1u);
  std::vector<TrackId> tracks;
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr)
    if (!t.rows_of(TableId::kernels, tr).empty() || !t.rows_of(TableId::memcpys, tr).empty()) tracks.push_back(tr);
  const DeviceOccupancy rows = device_occupancy(t, tracks, t.device(0), 108);
  const DeviceOccupancy& swept = p.devices[0].occupancy;
  EXPECT_EQ(swept.limits, rows.limits);
  EXPECT_EQ(swept.known_kernels, rows.known_kernels);
  EXPECT_EQ(swept.unknown_kernels, rows.unknown_kernels);
  EXPECT_EQ(swept.known_ns, rows.known_ns);
  EXPECT_EQ(swept.known_share, rows.known_share);
  EXPECT_EQ(swept.theoretical, rows.theoretical);
  EXPECT_EQ(swept.gpu_fill, rows.gpu_fill);
  EXPECT_EQ(swept.block_size_ns, rows.block_size_ns);
  EXPECT_EQ(swept.blocks_per_sm_ns, rows.blocks_per_sm_ns);
  EXPECT_EQ(swept.registers_ns, rows.registers_ns);
  EXPECT_EQ(swept.shared_memory_ns, rows.shared_memory_ns);
  EXPECT_EQ(swept.side_work_ns, rows.side_work_ns);
  EXPECT_EQ(swept.side_work_shared_ns, rows.side_work_shared_ns);
  // The trace has every case: known and unknown shapes, each limiter but one,
  // side work on a compute stream (copies on 7) and apart (NCCL on 20, copies on 21).
  EXPECT_GT(rows.known_kernels, 0u);
  EXPECT_GT(rows.unknown_kernels, 0u);
  EXPECT_GT(rows.block_size_ns, 0);
  EXPECT_GT(rows.registers_ns, 0);
  EXPECT_GT(rows.shared_memory_ns, 0);
  EXPECT_EQ(rows.side_work_ns, 20 * (30'000 + 10'000 + 5'000));
  EXPECT_EQ(rows.side_work_shared_ns, 20 * 10'000);
  ASSERT_TRUE(rows.theoretical && rows.gpu_fill);
  EXPECT_GT(*rows.theoretical, 0.0);
  EXPECT_LT(*rows.gpu_fill, 1.0);
}

TEST(Occupancy, NoSmCountNoFillAndNoLimitsNothingKnown) {
  testing::TraceFactory f;
  f.device(0, 0, 8);  // SM count unknown
  shaped_kernel(f, 0, 100'000, 100, 256, 32);
  const DeviceOccupancy o = analyze(f.build()).devices.at(0).occupancy;
  ASSERT_TRUE(o.theoretical);
  EXPECT_DOUBLE_EQ(*o.theoretical, 1.0);
  EXPECT_FALSE(o.gpu_fill);

  testing::TraceFactory g;
  g.device(0, 80, 4);  // no table row
  shaped_kernel(g, 0, 100'000, 100, 256, 32);
  const DeviceOccupancy u = analyze(g.build()).devices.at(0).occupancy;
  EXPECT_EQ(u.limits, "unknown");
  EXPECT_EQ(u.unknown_kernels, 1u);
  EXPECT_FALSE(u.theoretical);
  EXPECT_FALSE(u.gpu_fill);
}

// [SECTION] The low-concurrency finding's gate

// 100 kernels of 50 µs one after the other on stream 7, `gap` apart, each
// launched `ahead` of its start; 300 blocks of 256 threads, 32 registers
// on 108 SMs of cc 8.0: more blocks than SMs, but 300 × 256 of 108 × 2048
// thread slots (34.7 %) at a theoretical occupancy of 100 %.
testing::TraceFactory chain(TimeNs gap, TimeNs ahead, std::uint32_t blocks = 300, std::uint16_t threads = 256,
                            std::uint16_t registers = 32) {
  testing::TraceFactory f;
  f.device(0, 108, 8);
  for (int i = 0; i < 100; ++i) {
    const TimeNs start = 1'000'000 + i * (50'000 + gap);
    shaped_kernel(f, start, start + 50'000, blocks, threads, registers, 0, 7, ahead);
  }
  return f;
}

TEST(LowConcurrency, ShortKernelsFillingAThirdOfTheThreadsLeaveRoomThoughTheyHaveMoreBlocksThanSms) {
  const Profile p = analyze(chain(2'000, 10'000).build());
  const DeviceSummary& d = p.devices.at(0);
  EXPECT_DOUBLE_EQ(d.sm_efficiency, 1.0);  // blocks against SMs: no room by that measure
  ASSERT_TRUE(d.occupancy.gpu_fill);
  EXPECT_NEAR(*d.occupancy.gpu_fill, 300.0 * 256 / (108.0 * 2048), 1e-12);
  const ConcurrencyRoom room = concurrency_room(d);
  EXPECT_EQ(room.measure, "GPU fill");
  EXPECT_TRUE(room.room);
  EXPECT_FALSE(room.idle_bound);  // 2 µs gaps, launched ahead: kernel wait
  EXPECT_FALSE(room.side_work_apart);
  const Finding* f = testing::find_finding(p, "low-concurrency");
  ASSERT_TRUE(f) << testing::describe_findings(p);
  // Kernel busy 5 ms × (1 − 0.347).
  EXPECT_NEAR(static_cast<double>(f->saving_ns), 5e6 * (1 - 300.0 * 256 / (108.0 * 2048)), 1e3);
  EXPECT_NE(f->evidence.find("GPU fill"), std::string::npos) << f->evidence;
}

// Kernels replayed from a CUDA graph may carry no grid: how much of the GPU
// they fill is unknown, not zero, so no room is claimed and "more streams?"
// says unknown.
TEST(LowConcurrency, KernelsWithoutARecordedGridAreUnknownNotEmpty) {
  testing::TraceFactory f;
  f.device(0, 108, 8, "NVIDIA A100-SXM4-80GB");
  for (int i = 0; i < 100; ++i) {
    const TimeNs start = 1'000'000 + i * 70'000;                               // busy 71 %: idle time to fill
    f.kernel(0, 7, "graph_kernel", start, start + 50'000, 900'000, 5'000, 0);  // no grid recorded
  }
  const Profile p = analyze(f.build());
  const DeviceSummary& d = p.devices.at(0);
  EXPECT_DOUBLE_EQ(d.sm_efficiency_known, 0.0);
  const ConcurrencyRoom room = concurrency_room(d);
  EXPECT_EQ(room.measure, "unknown");
  EXPECT_FALSE(room.room);
  EXPECT_FALSE(testing::find_finding(p, "low-concurrency")) << testing::describe_findings(p);
  for (const HelpAnswer& a : p.helps) {
    if (a.id != "more-streams") continue;
    EXPECT_EQ(a.verdict, Verdict::unknown) << a.reason;
  }
}

TEST(LowConcurrency, NotWhenTheGpuWaitsForTheHostLongerThanItComputes) {
  // 100 µs gaps, each ended by a kernel launched 10 µs before it: after the previous one ended (host wait 9.9 ms
  // against 5 ms of kernels). More streams cannot fill time in which nothing is launched yet.
  const Profile p = analyze(chain(100'000, 10'000).build());
  const DeviceSummary& d = p.devices.at(0);
  EXPECT_GT(d.idle_host_wait_ns, d.kernel_busy_ns);
  const ConcurrencyRoom room = concurrency_room(d);
  EXPECT_TRUE(room.room);
  EXPECT_TRUE(room.idle_bound);
  EXPECT_FALSE(testing::find_finding(p, "low-concurrency")) << testing::describe_findings(p);
}

// A program of its own whose kernels run on 2 blocks of 512 threads on a
// 108-SM GPU (an OpenACC loop limited to 2 gangs), one after another: most
// SMs idle while they run, and what spreading the same work over every SM
// would leave is the saving's bound. 200 blocks fill the GPU: no finding.
TEST(SmallGrid, KernelsOnFewerBlocksThanHalfTheSmsLeaveTheGpuIdle) {
  for (const std::uint32_t blocks : {2u, 200u}) {
    testing::TraceFactory f;
    f.device(0, 108, 8);
    for (int i = 0; i < 20; ++i) {
      const TimeNs start = 1'000'000 + i * 1'100'000;
      shaped_kernel(f, start, start + 1'000'000, blocks, 512, 32);
    }
    const Profile p = analyze(f.build());
    const Finding* g = testing::find_finding(p, "small-grid");
    if (blocks == 200) {
      EXPECT_FALSE(g) << testing::describe_findings(p);
      EXPECT_EQ(p.devices.at(0).occupancy.small_grid_kernels, 0u);
      continue;
    }
    const DeviceOccupancy& o = p.devices.at(0).occupancy;
    EXPECT_EQ(o.small_grid_kernels, 20u);
    EXPECT_EQ(o.small_grid_ns, 20'000'000);
    EXPECT_EQ(o.small_grid_spread_ns, 20'000'000 * 2 / 108);
    EXPECT_EQ(o.small_grid_top_blocks, 2u);
    ASSERT_TRUE(g) << testing::describe_findings(p);
    EXPECT_EQ(g->saving_ns, 20'000'000 - 20'000'000 * 2 / 108);
    EXPECT_NE(g->evidence.find("shaped_kernel, 2 blocks on GPU 0's 108 SMs"), std::string::npos) << g->evidence;
    EXPECT_NE(g->recommendation.find("grid-stride loop"), std::string::npos) << g->recommendation;
  }
}

// Small grids launched by an op on scalars (a metric's fp64 accumulator:
// aten::add_ on [1] and [1]) are per-step bookkeeping: a larger batch does
// not give them more blocks, so the advice is to do fewer of them, and no
// saving is claimed (the replay cannot single their kernels out). The same
// kernels launched by an op on a batch-by-feature tensor keep the
// larger-batch advice and its saving; without recorded shapes the advice
// says the trace cannot tell which.
TEST(SmallGrid, KernelsOfOpsOnScalarsAreBookkeepingNotASmallBatch) {
  for (const std::string dims : {"[[1], [1], []]", "[[64, 4096], [64, 4096], []]", ""}) {
    SCOPED_TRACE(dims);
    testing::TraceFactory f;
    f.device(0, 108, 8);
    for (int i = 0; i < 20; ++i) {
      const TimeNs start = 1'000'000 + i * 1'100'000;
      f.cpu_op("aten::add_", start - 20'000, start - 2'000, dims, "");
      shaped_kernel(f, start, start + 1'000'000, 2, 512, 32);
    }
    const Profile p = analyze(f.build());
    ASSERT_EQ(p.workload.framework, "pytorch") << p.workload.framework_evidence;
    const DeviceOccupancy& o = p.devices.at(0).occupancy;
    const bool tiny = dims == "[[1], [1], []]";
    EXPECT_EQ(o.small_grid_shaped_ns, dims.empty() ? 0 : 20'000'000);
    EXPECT_EQ(o.small_grid_tiny_ns, tiny ? 20'000'000 : 0);
    const Finding* g = testing::find_finding(p, "small-grid");
    ASSERT_TRUE(g) << testing::describe_findings(p);
    EXPECT_EQ(g->recommendation.find("A larger batch per GPU gives each launch more blocks") == std::string::npos, tiny)
        << g->recommendation;
    EXPECT_EQ(g->recommendation.find("per-step bookkeeping on scalars and tiny tensors") != std::string::npos, tiny)
        << g->recommendation;
    EXPECT_EQ(g->recommendation.find("the trace cannot tell") != std::string::npos, dims.empty()) << g->recommendation;
    if (!tiny) {
      EXPECT_EQ(g->saving_ns, 20'000'000 - 20'000'000 * 2 / 108);
      continue;
    }
    EXPECT_EQ(g->variant, "tiny-tensors");
    EXPECT_EQ(g->saving_ns, 0);
    EXPECT_NE(g->evidence.find("the most by: aten::add_ [[1], [1], []] 20.0 ms (20 kernels)"), std::string::npos)
        << g->evidence;
  }
}

// A kernel that only waits (torch.cuda._sleep's one-block spin) is no work
// to spread over the SMs.
TEST(SmallGrid, ASpinKernelIsNotWork) {
  for (const char* name : {"at::cuda::(anonymous namespace)::spin_kernel(long)", "scale_kernel(float*, int)"}) {
    testing::TraceFactory f;
    f.device(0, 108, 8);
    KernelRow k;
    k.start = 1'000'000, k.end = 9'000'000;
    k.track = f.builder().gpu_track(0, 7);
    k.name = f.builder().intern(name);
    k.grid_x = k.grid_y = k.grid_z = 1;  // one block of 32 threads
    k.block_x = 32, k.block_y = k.block_z = 1;
    k.registers = 16;
    k.correlation = f.api("cudaLaunchKernel", 900'000, 905'000);
    f.builder().add_kernel(k);
    const Profile p = analyze(f.build());
    const bool spin = std::string_view(name).find("spin") != std::string_view::npos;
    EXPECT_EQ(p.devices.at(0).occupancy.small_grid_kernels, spin ? 0u : 1u) << name;
    EXPECT_EQ(testing::find_any_finding(p, "small-grid") != nullptr, !spin) << testing::describe_findings(p);
  }
}

// 20 µs gaps, each ended by a kernel launched 10 µs into it: the GPU waits
// for the host's launches 2 ms, 40 % of its 5 ms of kernels, though less
// than it computes. The host does not keep one stream fed, so a second
// stream's work would be launched as late: no finding, "more streams?" no.
TEST(LowConcurrency, NotWhenTheHostCannotKeepOneStreamFed) {
  const Profile p = analyze(chain(20'000, 10'000).build());
  const DeviceSummary& d = p.devices.at(0);
  EXPECT_LT(d.idle_host_wait_ns + d.idle_other_ns, d.kernel_busy_ns);
  EXPECT_GE(4 * d.idle_host_wait_ns, d.kernel_busy_ns);
  const ConcurrencyRoom room = concurrency_room(d);
  EXPECT_TRUE(room.room);
  EXPECT_FALSE(room.idle_bound);
  EXPECT_TRUE(room.host_bound);
  EXPECT_FALSE(testing::find_finding(p, "low-concurrency")) << testing::describe_findings(p);
  const HelpAnswer* a = testing::find_help(p, "more-streams");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, Verdict::no) << a->reason;
  EXPECT_NE(a->reason.find("does not keep even one stream fed"), std::string::npos) << a->reason;
}

TEST(LowConcurrency, NotWhenCopiesAlreadyRunOnTheirOwnStream) {
  auto with_copies = [](std::uint32_t stream) {
    testing::TraceFactory f = chain(2'000, 10'000);
    for (int i = 0; i < 10; ++i) {
      const TimeNs start = 1'000'000 + i * 520'000;
      f.memcpy(0, stream, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, start, start + 20'000);
    }
    return analyze(f.build());
  };
  const Profile apart = with_copies(9);
  EXPECT_TRUE(concurrency_room(apart.devices.at(0)).side_work_apart);
  EXPECT_FALSE(testing::find_finding(apart, "low-concurrency")) << testing::describe_findings(apart);
  // The same copies on the kernels' stream: they could move to a stream of their own.
  const Profile shared = with_copies(7);
  EXPECT_GT(shared.devices.at(0).occupancy.side_work_shared_ns, 0);
  EXPECT_FALSE(concurrency_room(shared.devices.at(0)).side_work_apart);
  EXPECT_TRUE(testing::find_finding(shared, "low-concurrency")) << testing::describe_findings(shared);
}

TEST(LowConcurrency, NotWhenKernelsFillTheGpuToTheirOwnOccupancy) {
  // 1024 threads, 64 registers: 1 block per SM (50 %); 200 blocks hold every SM's one block: full.
  const Profile full = analyze(chain(2'000, 10'000, 200, 1024, 64).build());
  const ConcurrencyRoom room = concurrency_room(full.devices.at(0));
  EXPECT_DOUBLE_EQ(room.used, 1.0);
  EXPECT_FALSE(room.room);
  EXPECT_FALSE(testing::find_finding(full, "low-concurrency"));
  // 54 blocks hold half of the SMs: room, and the saving is half the kernel time.
  const Profile half = analyze(chain(2'000, 10'000, 54, 1024, 64).build());
  const Finding* f = testing::find_finding(half, "low-concurrency");
  ASSERT_TRUE(f) << testing::describe_findings(half);
  EXPECT_NEAR(static_cast<double>(f->saving_ns), 5e6 * 0.5, 1e3);
}

TEST(LowConcurrency, SavingNeverMoreThanTheKernelsCouldOverlap) {
  // Two kernels of 50 µs with 1 block each: 99.9 % of the GPU unused, but side by side they save at most one.
  testing::TraceFactory f;
  f.device(0, 108, 8);
  shaped_kernel(f, 1'000'000, 1'050'000, 1, 256, 32);
  shaped_kernel(f, 1'052'000, 1'102'000, 1, 256, 32);
  const Profile p = analyze(f.build());
  const Finding* c = testing::find_finding(p, "low-concurrency");
  ASSERT_TRUE(c) << testing::describe_findings(p);
  EXPECT_EQ(c->saving_ns, 50'000);
  // A lone kernel has nothing to run beside.
  testing::TraceFactory one;
  one.device(0, 108, 8);
  shaped_kernel(one, 1'000'000, 1'050'000, 1, 256, 32);
  EXPECT_FALSE(testing::find_finding(analyze(one.build()), "low-concurrency"));
}

}  // namespace
}  // namespace gpuscope
