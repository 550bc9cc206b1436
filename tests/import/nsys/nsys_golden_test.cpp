// Golden tests on the two real Nsight Systems exports (tests/data/traces/nsys,
// provenance in its README). Every expected number was checked independently
// with the sqlite3 command-line tool on the file itself, with the query given
// next to it (F = the file), e.g.
//   sqlite3 F "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"
// API calls are rows of CUPTI_ACTIVITY_KIND_RUNTIME with eventClass 0
// (runtime) or 1 (driver); eventClass 67 rows repeat a call with its
// backtrace and are not calls of their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "import/nsys/nsys_sqlite.h"
#include "import/nsys/nsys_test_db.h"
#include "store/trace_equal.h"

namespace gpuscope {
namespace {

using testing::kNsys2022;
using testing::kNsys2024;
using testing::nsys_trace;

std::size_t gpu_tracks(const Trace& t) {
  return static_cast<std::size_t>(
      std::count_if(t.tracks().begin(), t.tracks().end(), [](const Track& tr) { return tr.kind == TrackKind::gpu; }));
}

std::size_t count_api(const Trace& t, ApiDomain d) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < t.api_calls().size(); ++i) n += t.api_calls().domain_at(i) == d;
  return n;
}

std::size_t calls_named(const Trace& t, std::string_view name) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < t.api_calls().size(); ++i) n += t.str(t.api_calls().name[i]) == name;
  return n;
}

// Host samples (nsys' CPU sampling: COMPOSITE_EVENTS with their
// SAMPLING_CALLCHAINS), marks of the host_sample domain.
bool is_sample(const Trace& t, std::size_t i) {
  return t.ranges().kind_at(i) == RangeKind::mark && t.str(t.ranges().domain[i]) == kHostSampleDomain;
}
std::size_t samples_from(const Trace& t, std::string_view outermost) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < t.ranges().size(); ++i)
    n += is_sample(t, i) && t.str(t.ranges().name[i]).substr(0, outermost.size()) == outermost;
  return n;
}

// Every GPU op's correlation id names an API call, and the model links them.
void expect_all_linked(const Trace& t) {
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    const RowIndex a = t.kernels().api[i];
    ASSERT_NE(a, kNoRow) << "kernel " << i;
    EXPECT_EQ(t.api_calls().correlation[a], t.kernels().correlation[i]);
    EXPECT_GE(t.kernels().start[i], t.api_calls().start[a]);  // launched before it ran
  }
  for (std::size_t i = 0; i < t.memcpys().size(); ++i) {
    const RowIndex a = t.memcpys().api[i];
    ASSERT_NE(a, kNoRow) << "memcpy " << i;
    EXPECT_EQ(t.api_calls().correlation[a], t.memcpys().correlation[i]);
  }
}

using NsysGolden = testing::NsysTest;

TEST_F(NsysGolden, Nsys2022SaxpyMpi) {
  const Trace t = import_nsys_sqlite(nsys_trace(kNsys2022));
  EXPECT_EQ(t.meta().source, TraceSource::nsys_sqlite);
  EXPECT_EQ(t.meta().producer, "Nsight Systems 2022.2.1.31, SQLite export, schema 2.9.1");  // EXPORT_META_DATA
  EXPECT_EQ(t.meta().property("nsys.metadata_table"), "EXPORT_META_DATA");
  EXPECT_EQ(t.meta().host, "nid001608");  // TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'
  // SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME
  EXPECT_EQ(t.meta().start_time_ns, 1687813257637297504);

  EXPECT_EQ(t.kernels().size(), 5u);   // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL
  EXPECT_EQ(t.memcpys().size(), 15u);  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY
  EXPECT_EQ(t.memsets().size(), 0u);   // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET
  // SELECT eventClass, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1  -> 0|56, 1|1, 67|38
  EXPECT_EQ(t.api_calls().size(), 57u);
  EXPECT_EQ(count_api(t, ApiDomain::runtime), 56u);
  EXPECT_EQ(count_api(t, ApiDomain::driver), 1u);  // cuModuleGetLoadingMode
  EXPECT_EQ(t.meta().stat("import.skipped.api_call_backtrace_copy"), 38u);
  // ... JOIN StringIds s ON s.id = nameId WHERE eventClass IN (0,1) AND s.value LIKE 'cudaMemcpy%' -> 15
  // (nsys records cudaMemcpy_v3020; the version suffix is dropped)
  EXPECT_EQ(calls_named(t, "cudaMemcpy"), 15u);
  EXPECT_EQ(calls_named(t, "cudaMemcpy_v3020"), 0u);
  EXPECT_EQ(t.syncs().size(), 0u);       // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
  EXPECT_EQ(t.overheads().size(), 16u);  // SELECT count(*) FROM PROFILER_OVERHEAD

  // SELECT eventType, domainId, count(*) FROM NVTX_EVENTS GROUP BY 1, 2: 59 (push/pop) 22 rows, 17 of
  // them in domain 1 (created by the eventType 75 row "MPI"), 5 "saxpy" in the default domain.
  // SELECT count(*) FROM COMPOSITE_EVENTS -> 5451 host samples besides them.
  ASSERT_EQ(t.ranges().size(), 22u + 5451u);
  std::size_t mpi = 0, saxpy = 0;
  for (std::size_t i = 0; i < t.ranges().size(); ++i) {
    if (is_sample(t, i)) continue;
    EXPECT_EQ(t.ranges().kind_at(i), RangeKind::push_pop);
    mpi += t.str(t.ranges().domain[i]) == "MPI";
    saxpy += t.str(t.ranges().name[i]) == "saxpy" && t.ranges().domain[i] == 0;
  }
  EXPECT_EQ(mpi, 17u);
  EXPECT_EQ(saxpy, 5u);

  // SELECT name, smCount, computeMajor, computeMinor, totalMemory FROM TARGET_INFO_GPU
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.devices()[0].id, 0u);
  EXPECT_EQ(t.devices()[0].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(t.devices()[0].sm_count, 108u);
  EXPECT_EQ(t.devices()[0].compute_major, 8);
  EXPECT_EQ(t.devices()[0].compute_minor, 0);
  EXPECT_EQ(t.devices()[0].memory_bytes, 42297524224u);
  EXPECT_EQ(t.devices()[0].core_clock_khz, 1410000u);  // clockRate 1410000000 Hz

  // SELECT DISTINCT deviceId, streamId FROM the kernel and memcpy tables -> 0|7;
  // TARGET_INFO_CUDA_STREAM.flag = 3 (the NULL stream) for stream 7.
  ASSERT_EQ(gpu_tracks(t), 1u);
  EXPECT_EQ(t.tracks()[0].stream, 7u);
  EXPECT_EQ(t.tracks()[0].name, "stream 7 (default)");
  EXPECT_EQ(t.tracks()[0].pid, 1230493u);

  // ThreadNames: "MPI Rank 0" is the main thread (globalTid 302119224788637 = pid 1230493, tid 1230493).
  ASSERT_EQ(t.processes().size(), 1u);
  EXPECT_EQ(t.processes()[0].pid, 1230493u);
  EXPECT_EQ(t.processes()[0].name, "./saxpy-mpi-cuda");
  EXPECT_EQ(t.processes()[0].rank, 0);
  EXPECT_EQ(t.meta().rank, 0);
  EXPECT_EQ(t.meta().property("nsys.rank_from"), "thread name \"MPI Rank 0\"");

  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
  //   WHERE r.correlationId = k.correlationId AND r.eventClass IN (0,1))  -> 5 (memcpys: 15)
  expect_all_linked(t);
  // SELECT min(start) + (SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME) FROM CUPTI_ACTIVITY_KIND_KERNEL
  EXPECT_EQ(*std::min_element(t.kernels().start.begin(), t.kernels().start.end()), 1687813258562219690);
  // SELECT s.value, sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
  TimeNs busy = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) {
    EXPECT_EQ(t.str(t.kernels().name[i]), "saxpy(double *, double *, double *, double, int)");
    busy += t.kernels().end[i] - t.kernels().start[i];
  }
  EXPECT_EQ(busy, 88573480);
  // SELECT copyKind, srcKind, dstKind, count(*) ... GROUP BY 1,2,3 -> 1|0|2|10 and 2|2|0|5: nsys numbers
  // memory kinds 0 pageable, 2 device (its ENUM_CUDA_MEM_KIND, which this version does not write).
  std::size_t h2d = 0, d2h = 0;
  for (std::size_t i = 0; i < t.memcpys().size(); ++i) {
    if (t.memcpys().kind_at(i) == CopyKind::htod && t.memcpys().src_kind_at(i) == MemoryKind::pageable &&
        t.memcpys().dst_kind_at(i) == MemoryKind::device)
      ++h2d;
    if (t.memcpys().kind_at(i) == CopyKind::dtoh && t.memcpys().src_kind_at(i) == MemoryKind::device &&
        t.memcpys().dst_kind_at(i) == MemoryKind::pageable)
      ++d2h;
  }
  EXPECT_EQ(h2d, 10u);
  EXPECT_EQ(d2h, 5u);
  // Tables with rows the model has no place for: SELECT count(*) FROM SCHED_EVENTS -> 3238, and so on.
  EXPECT_EQ(t.meta().stat("import.skipped.table.SCHED_EVENTS"), 3238u);
  // CPU sampling is read (the samples above), no longer skipped.
  EXPECT_EQ(t.meta().stat("import.skipped.table.COMPOSITE_EVENTS"), 0u);
  EXPECT_EQ(t.meta().stat("import.skipped.table.SAMPLING_CALLCHAINS"), 0u);
  EXPECT_EQ(t.meta().stat("import.skipped.table.CUDA_CALLCHAINS"), 296u);
  EXPECT_EQ(t.meta().property("import.warning"), "");
  // OS runtime tracing was on and recorded nothing: SELECT count(*) FROM OSRT_API -> 0.
  EXPECT_EQ(t.os_calls().size(), 0u);
  EXPECT_EQ(t.meta().property("nsys.osrt_api"), "");
  EXPECT_EQ(t.meta().stat("import.skipped.table.OSRT_API"), 0u);
}

TEST_F(NsysGolden, Nsys2024CloverleafMpi) {
  const Trace t = import_nsys_sqlite(nsys_trace(kNsys2024));
  EXPECT_EQ(t.meta().producer, "Nsight Systems 2024.5.1.113, SQLite export, schema 3.13.2");  // META_DATA_EXPORT
  EXPECT_EQ(t.meta().property("nsys.metadata_table"), "META_DATA_EXPORT");
  EXPECT_EQ(t.meta().start_time_ns, 1696392839587175550);
  // META_DATA_CAPTURE: PROCESS_0:COMMAND and PROCESS_0:ARGUMENT_0/1
  EXPECT_EQ(t.meta().command_line, "cuda-cloverleaf --in ../CloverLeaf-hip/InputDecks/clover_bm32_prof.in");

  EXPECT_EQ(t.kernels().size(), 1312u);  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL
  EXPECT_EQ(t.memcpys().size(), 279u);   // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY
  EXPECT_EQ(t.memsets().size(), 0u);     // (no CUPTI_ACTIVITY_KIND_MEMSET table)
  // SELECT eventClass, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1  -> 0|3047, 1|1
  EXPECT_EQ(t.api_calls().size(), 3048u);
  EXPECT_EQ(count_api(t, ApiDomain::driver), 1u);
  EXPECT_EQ(calls_named(t, "cudaLaunchKernel"), 1312u);  // cudaLaunchKernel_v7000
  // No NVTX_EVENTS table; SELECT count(*) FROM COMPOSITE_EVENTS -> 1531 host samples, each with a callchain
  // (SELECT count(DISTINCT id) FROM SAMPLING_CALLCHAINS -> 1531), none deeper than 64 frames. Outermost
  // frame _start (the frame of the largest stackDepth of each id, joined with StringIds) in 315 of them;
  // sample 478 runs _start → __libc_start_main → main → hydro(…) → advection(…) → advec_mom_driver(…).
  EXPECT_EQ(t.ranges().size(), 1531u);
  for (std::size_t i = 0; i < t.ranges().size(); ++i) ASSERT_TRUE(is_sample(t, i)) << i;
  EXPECT_EQ(samples_from(t, "_start;"), 315u);
  EXPECT_GT(samples_from(t,
                         "_start;__libc_start_main;main;hydro(global_variables&, parallel_&);advection(global_"
                         "variables&);advec_mom_driver(global_variables&, int, int, int, int);"),
            0u);
  EXPECT_EQ(t.meta().stat("import.skipped.table.COMPOSITE_EVENTS"), 0u);
  EXPECT_EQ(t.overheads().size(), 47u);
  // SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> 1312; all syncType 1 ("event") with
  // eventId and streamId 4294967295 (none), each the sync of a cudaDeviceSynchronize_v3020 call (joined on
  // correlationId): a device synchronization.
  ASSERT_EQ(t.syncs().size(), 1312u);
  EXPECT_EQ(t.meta().stat("import.sync_types_from_event_and_stream"), 1312u);
  for (std::size_t i = 0; i < t.syncs().size(); ++i) {
    EXPECT_EQ(t.syncs().type_at(i), SyncType::context);
    EXPECT_EQ(t.syncs().device[i], 0u);
    EXPECT_EQ(t.syncs().stream[i], kNoId);
    // The waiting thread, found through the correlation (nsys records only the process).
    EXPECT_EQ(t.tracks()[t.syncs().track_at(i)].tid, 1701896u);
  }

  // SELECT id, name, smCount, computeMajor, computeMinor, cuDevice FROM TARGET_INFO_GPU: four A100-SXM4-80GB;
  // the activity uses deviceId 0, the GPU with cuDevice 0 (id 3, uuid b17c6502-…).
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.meta().property("nsys.devices_listed"), "4");
  EXPECT_EQ(t.devices()[0].id, 0u);
  EXPECT_EQ(t.devices()[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(t.devices()[0].sm_count, 108u);
  EXPECT_EQ(t.devices()[0].compute_major, 8);
  EXPECT_EQ(t.devices()[0].compute_minor, 0);
  EXPECT_EQ(t.devices()[0].uuid, "b17c6502-716a-c2c7-0f65-854136d5f79f");
  EXPECT_EQ(t.devices()[0].memory_bytes, 84990623744u);

  ASSERT_EQ(gpu_tracks(t), 1u);  // SELECT DISTINCT deviceId, streamId ... -> 0|7
  EXPECT_EQ(t.tracks()[0].name, "stream 7 (default)");
  // PROCESSES WHERE globalPid = 310028053512192 -> pid 1701896, cuda-cloverleaf; META_DATA_CAPTURE holds
  // PMI_RANK="0" and PMI_SIZE="1" in PROCESS_0's environment.
  ASSERT_EQ(t.processes().size(), 1u);
  EXPECT_EQ(t.processes()[0].name, "cuda-cloverleaf");
  EXPECT_EQ(t.meta().rank, 0);
  EXPECT_EQ(t.meta().world_size, 1);
  EXPECT_EQ(t.meta().property("nsys.rank_from"), "environment PMI_RANK");

  expect_all_linked(t);  // kernels 1312, memcpys 279 linked (the EXISTS query of the 2022 test)
  // SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL -> 294404540
  TimeNs busy = 0;
  for (std::size_t i = 0; i < t.kernels().size(); ++i) busy += t.kernels().end[i] - t.kernels().start[i];
  EXPECT_EQ(busy, 294404540);
  // SELECT min(start) + utcEpochNs ... -> 1696392840120513790
  EXPECT_EQ(*std::min_element(t.kernels().start.begin(), t.kernels().start.end()), 1696392840120513790);
  // OS runtime calls: SELECT eventClass, count(*) FROM OSRT_API GROUP BY 1 -> 27|1828, 31|1, 32|2 (31 and 32
  // mark when OS runtime tracing started and finished); the call stacks are not read.
  EXPECT_EQ(t.os_calls().size(), 1828u);
  EXPECT_EQ(t.meta().stat("import.skipped.table.OSRT_API"), 0u);
  EXPECT_EQ(t.meta().stat("import.skipped.osrt_start_marks"), 1u);
  EXPECT_EQ(t.meta().stat("import.skipped.osrt_finish_marks"), 2u);
  EXPECT_EQ(t.meta().stat("import.skipped.table.OSRT_CALLCHAINS"), 8930u);
  {
    // SELECT sum(end - start), max(nestingLevel) FROM OSRT_API WHERE eventClass = 27 -> 855689751, 0 (this
    // export records every returnValue as 0); per thread: SELECT globalTid & 0xffffff, count(*) ... GROUP BY 1.
    const OsCallTable& o = t.os_calls();
    TimeNs total = 0;
    std::map<std::uint32_t, std::size_t> by_tid;
    std::size_t poll = 0;
    for (std::size_t i = 0; i < o.size(); ++i) {
      total += o.end[i] - o.start[i];
      EXPECT_EQ(o.nesting_at(i), 0u);
      ++by_tid[t.tracks()[o.track_at(i)].tid];
      poll += t.str(o.name[i]) == "poll";
    }
    EXPECT_EQ(total, 855689751);
    EXPECT_EQ(by_tid, (std::map<std::uint32_t, std::size_t>{{1701896, 1797}, {1701906, 2}, {1701908, 29}}));
    EXPECT_EQ(poll, 18u);
  }
  EXPECT_EQ(t.meta().stat("import.skipped.table.SCHED_EVENTS"), 1254u);
  // DIAGNOSTIC_EVENT WHERE severity = 2: four warnings, the first lines kept.
  EXPECT_EQ(t.meta().property("nsys.diagnostic.2"), "warning: No NVTX events collected. Does the process use NVTX?");
}

// The direct page reader and SQLite's own give the same trace.
TEST_F(NsysGolden, DirectReadEqualsSqlite) {
  for (const char* name : {kNsys2022, kNsys2024}) {
    SCOPED_TRACE(name);
    const Trace direct = import_nsys_sqlite(nsys_trace(name));
    const Trace slow = testing::import_slow(nsys_trace(name));
    testing::expect_traces_equal(direct, slow);
  }
}

}  // namespace
}  // namespace gpuscope
