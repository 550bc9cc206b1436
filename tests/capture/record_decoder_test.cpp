// The record decoder on buffers built from the real CUPTI 13 structs and
// walked by CUPTI's own cuptiActivityGetNextRecord (no GPU needed).
#include "capture/record_decoder.h"

#include <gtest/gtest.h>

#include <string>

#include "capture/cupti_records.h"

namespace gpuscope::capture {
namespace {

using testing::RecordBuffer;
using namespace testing;  // record factories

constexpr std::uint32_t kPid = 4242;

// Decodes each buffer in order, finishes at `end`, freezes.
Trace decode_all(std::initializer_list<const RecordBuffer*> buffers, std::int64_t end = 1'000'000) {
  TraceBuilder b;
  RecordDecoder d(b, DecoderOptions{kPid, false});
  for (const RecordBuffer* buf : buffers) d.decode(buf->data(), buf->size());
  d.finish(end);
  d.write_stats(b.meta());
  return b.freeze();
}

const Track& track_of(const Trace& t, TrackId id) { return t.tracks().at(id); }

TEST(RecordDecoder, StructSizesAreCupti13s) {
  // The strides the research notes list; a CUPTI upgrade that changes them must fail here.
  EXPECT_EQ(sizeof(CUpti_ActivityKernel10), 216u);
  EXPECT_EQ(sizeof(CUpti_ActivityAPI), 40u);
  EXPECT_EQ(sizeof(CUpti_ActivityMemcpy6), 96u);
  EXPECT_EQ(sizeof(CUpti_ActivityMemset4), 88u);
  EXPECT_EQ(sizeof(CUpti_ActivityMarker2), 56u);
  EXPECT_EQ(sizeof(CUpti_ActivityMarkerData2), 40u);
  EXPECT_EQ(sizeof(CUpti_ActivitySynchronization2), 56u);
  EXPECT_EQ(sizeof(CUpti_ActivityOverhead3), 56u);
  EXPECT_EQ(sizeof(CUpti_ActivityMemory4), 128u);
  EXPECT_EQ(sizeof(CUpti_ActivityMemoryPool3), 80u);
}

TEST(RecordDecoder, KernelFieldsNamesAndGraphIds) {
  RecordBuffer buf;
  auto k = kernel_record(1000, 3000, 0, 7, 11, "_Z6squarePfi");
  k.gridX = 120;
  k.gridY = 2;
  k.blockX = 256;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.graphId = 3;
  k.graphNodeId = 77;
  buf.add(k);
  buf.add(kernel_record(3500, 4000, 0, 7, 12, "plain_c_kernel"));

  const Trace t = decode_all({&buf});
  ASSERT_EQ(t.kernels().size(), 2u);
  const auto& kt = t.kernels();
  EXPECT_EQ(t.str(kt.name[0]), "square(float*, int)");
  EXPECT_EQ(t.str(kt.mangled_at(0)), "_Z6squarePfi");
  EXPECT_EQ(t.str(kt.name[1]), "plain_c_kernel");
  EXPECT_EQ(kt.mangled_at(1), kEmptyString);  // not mangled: stored once
  EXPECT_EQ(kt.start[0], 1000);
  EXPECT_EQ(kt.end[0], 3000);
  EXPECT_EQ(kt.grid_x[0], 120u);
  EXPECT_EQ(kt.grid_y[0], 2u);
  EXPECT_EQ(kt.block_x[0], 256u);
  EXPECT_EQ(kt.registers[0], 32u);
  EXPECT_EQ(kt.static_smem[0], 1024u);
  EXPECT_EQ(kt.dynamic_smem[0], 2048u);
  EXPECT_EQ(kt.graph_id_at(0), 3u);
  EXPECT_EQ(kt.graph_node_id_at(0), 77u);
  EXPECT_EQ(kt.graph_id_at(1), 0u);
  const Track& tr = track_of(t, kt.track_at(0));
  EXPECT_EQ(tr.kind, TrackKind::gpu);
  EXPECT_EQ(tr.device, 0u);
  EXPECT_EQ(tr.stream, 7u);
  EXPECT_EQ(tr.pid, kPid);
  EXPECT_EQ(tr.name, "stream 7");
}

TEST(RecordDecoder, ConcurrentKernelsOnTwoStreamsKeepTheirOverlap) {
  RecordBuffer buf;
  buf.add(kernel_record(1000, 5000, 0, 13, 1, "_Z4spinPim"));
  buf.add(kernel_record(2000, 6000, 0, 14, 2, "_Z4spinPim"));
  const Trace t = decode_all({&buf});
  ASSERT_EQ(t.kernels().size(), 2u);
  EXPECT_NE(t.kernels().track_at(0), t.kernels().track_at(1));
  EXPECT_LT(t.kernels().start[1], t.kernels().end[0]);  // both ran at once
  EXPECT_EQ(t.kernels().name[0], t.kernels().name[1]);  // one interned name
}

TEST(RecordDecoder, CorrelationLinksLaunchesToWorkBothWays) {
  RecordBuffer buf;
  buf.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 100, 200, kPid, 77, 5));
  buf.add(api_record(true, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 300, 350, kPid, 78, 6));
  buf.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 400, 420, kPid, 77, 7));
  buf.add(kernel_record(1000, 2000, 0, 7, 5, "_Z1av"));
  buf.add(kernel_record(2100, 2200, 1, 9, 6, "triton_kernel"));
  buf.add(memcpy_record(2300, 2400, 0, 7, 7, 4096, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                        CUPTI_ACTIVITY_MEMORY_KIND_PINNED));
  const Trace t = decode_all({&buf});
  ASSERT_EQ(t.api_calls().size(), 3u);
  ASSERT_EQ(t.kernels().size(), 2u);

  for (RowIndex k = 0; k < t.kernels().size(); ++k) {
    const RowIndex api = t.launching_api(OpRef{OpTable::kernel, k});
    ASSERT_NE(api, kNoRow) << "kernel " << k << " has no launching call";
    EXPECT_EQ(t.api_calls().correlation[api], t.kernels().correlation[k]);
    const std::string_view name = t.str(t.api_calls().name[api]);
    if (t.str(t.kernels().name[k]) == "triton_kernel") {
      EXPECT_EQ(name, "cuLaunchKernel");
      EXPECT_EQ(t.api_calls().domain_at(api), ApiDomain::driver);
    } else {
      EXPECT_EQ(name, "cudaLaunchKernel");  // "_v7000" cut
      EXPECT_EQ(t.api_calls().domain_at(api), ApiDomain::runtime);
    }
  }
  const RowIndex copy_api = t.launching_api(OpRef{OpTable::memcpy, 0});
  ASSERT_NE(copy_api, kNoRow);
  EXPECT_EQ(t.str(t.api_calls().name[copy_api]), "cudaMemcpyAsync");
  // And back: the call knows its op.
  int ops = 0;
  t.for_each_op_of(copy_api, [&](OpRef op) {
    EXPECT_EQ(op.table, OpTable::memcpy);
    ++ops;
  });
  EXPECT_EQ(ops, 1);
  // API calls sit on the CPU track of their thread.
  const Track& cpu = track_of(t, t.api_calls().track_at(copy_api));
  EXPECT_EQ(cpu.kind, TrackKind::cpu);
  EXPECT_EQ(cpu.pid, kPid);
  EXPECT_EQ(cpu.tid, 77u);
  EXPECT_EQ(t.meta().stat("capture.api.runtime"), 2u);
  EXPECT_EQ(t.meta().stat("capture.api.driver"), 1u);
}

TEST(RecordDecoder, MemcpyKindsPageablePinnedPeerAndMemset) {
  RecordBuffer buf;
  buf.add(memcpy_record(100, 200, 0, 7, 1, 1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                        CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
  buf.add(memcpy_record(300, 350, 0, 7, 2, 1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                        CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
  CUpti_ActivityMemcpyPtoP4 p2p;
  std::memset(&p2p, 0, sizeof p2p);
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p2p.srcKind = p2p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p2p.bytes = 64;
  p2p.start = 400;
  p2p.end = 410;
  p2p.deviceId = 1;
  p2p.streamId = 3;
  p2p.correlationId = 3;
  buf.add(p2p);
  buf.add(memset_record(500, 520, 0, 7, 4, 4096, 0xab));

  const Trace t = decode_all({&buf});
  ASSERT_EQ(t.memcpys().size(), 3u);
  int pageable = 0, pinned = 0, peer = 0;
  for (std::size_t i = 0; i < t.memcpys().size(); ++i) {
    if (t.memcpys().kind_at(i) == CopyKind::ptop) {
      ++peer;
      EXPECT_EQ(t.memcpys().bytes[i], 64u);
      continue;
    }
    EXPECT_EQ(t.memcpys().kind_at(i), CopyKind::htod);
    EXPECT_EQ(t.memcpys().dst_kind_at(i), MemoryKind::device);
    pageable += t.memcpys().src_kind_at(i) == MemoryKind::pageable;
    pinned += t.memcpys().src_kind_at(i) == MemoryKind::pinned;
  }
  EXPECT_EQ(pageable, 1);
  EXPECT_EQ(pinned, 1);
  EXPECT_EQ(peer, 1);
  ASSERT_EQ(t.memsets().size(), 1u);
  EXPECT_EQ(t.memsets().bytes[0], 4096u);
  EXPECT_EQ(sparse_at(t.memsets().value, 0), 0xabu);
  EXPECT_EQ(static_cast<MemoryKind>(t.memsets().mem_kind[0]), MemoryKind::device);
}

TEST(RecordDecoder, SyncGetsTheThreadOfItsApiCallEvenFromAnotherBuffer) {
  RecordBuffer first, second;
  first.add(context_record(1, 0, 7));
  first.add(sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 500, 900, 9, 1, 13, 0));
  first.add(sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 950, 990, 10, 1, 0, 5));
  first.add(sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 1000, 1100, 99, 2, 0, 0));
  second.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 490, 910, kPid, 55, 9));
  second.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 940, 995, kPid, 56, 10));

  const Trace t = decode_all({&first, &second});
  ASSERT_EQ(t.syncs().size(), 3u);
  int resolved = 0, unknown = 0;
  for (std::size_t i = 0; i < t.syncs().size(); ++i) {
    const Track& tr = track_of(t, t.syncs().track_at(i));
    ASSERT_EQ(tr.kind, TrackKind::cpu);
    switch (t.syncs().type_at(i)) {
      case SyncType::stream:
        EXPECT_EQ(tr.tid, 55u);
        EXPECT_EQ(t.syncs().stream[i], 13u);
        EXPECT_EQ(t.syncs().event[i], kNoId);
        EXPECT_EQ(t.syncs().device[i], 0u);  // context 1 is on device 0
        ++resolved;
        break;
      case SyncType::event:
        EXPECT_EQ(tr.tid, 56u);
        EXPECT_EQ(t.syncs().event[i], 5u);
        EXPECT_EQ(t.syncs().stream[i], kNoId);
        ++resolved;
        break;
      case SyncType::context:
        EXPECT_EQ(tr.name, "unknown thread");       // correlation 99 has no API call
        EXPECT_EQ(t.syncs().device[i], kNoDevice);  // context 2 was never described
        ++unknown;
        break;
      default: ADD_FAILURE() << "unexpected sync type";
    }
  }
  EXPECT_EQ(resolved, 2);
  EXPECT_EQ(unknown, 1);
}

TEST(RecordDecoder, NvtxRangesNestWithColorPayloadAndMarks) {
  RecordBuffer buf;
  const char* domain = "training";
  buf.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, 100, 1, kPid, 55, "step", domain));
  buf.add(marker_data_record(1, 0xff00ff00u, 17));
  buf.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, 200, 2, kPid, 55, "forward", domain));
  // Marker data may come before its marker: records in a buffer are not ordered.
  buf.add(marker_data_record(3, 0xffff0000u, -4));
  buf.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 250, 3, kPid, 55, "checkpoint"));
  buf.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, 300, 2, kPid, 55, nullptr, domain));
  buf.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, 400, 1, kPid, 55, nullptr, domain));

  const Trace t = decode_all({&buf});
  const RangeTable& r = t.ranges();
  ASSERT_EQ(r.size(), 3u);
  bool saw_step = false, saw_forward = false, saw_mark = false;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::string_view name = t.str(r.name[i]);
    if (name == "step") {
      saw_step = true;
      EXPECT_EQ(r.start[i], 100);
      EXPECT_EQ(r.end[i], 400);
      EXPECT_EQ(r.depth[i], 0u);
      EXPECT_EQ(r.kind_at(i), RangeKind::push_pop);
      EXPECT_EQ(r.color_at(i), 0xff00ff00u);
      EXPECT_EQ(r.payload_at(i), 17);
      EXPECT_EQ(t.str(r.domain[i]), "training");
    } else if (name == "forward") {
      saw_forward = true;
      EXPECT_EQ(r.start[i], 200);
      EXPECT_EQ(r.end[i], 300);
      EXPECT_EQ(r.depth[i], 1u);  // nested inside "step"
      EXPECT_EQ(r.color_at(i), 0u);
    } else if (name == "checkpoint") {
      saw_mark = true;
      EXPECT_EQ(r.kind_at(i), RangeKind::mark);
      EXPECT_EQ(r.start[i], 250);
      EXPECT_EQ(r.end[i], 250);
      EXPECT_EQ(r.color_at(i), 0xffff0000u);
      EXPECT_EQ(r.payload_at(i), -4);
      EXPECT_EQ(t.str(r.domain[i]), "");  // the default domain
    }
    EXPECT_EQ(track_of(t, r.track_at(i)).tid, 55u);
  }
  EXPECT_TRUE(saw_step && saw_forward && saw_mark);
}

TEST(RecordDecoder, NvtxRangesAcrossBuffersThreadsAndStop) {
  RecordBuffer a, b;
  a.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, 100, 10, kPid, 1, "load"));       // ends in buffer b
  a.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, 150, 11, kPid, 1, "handoff"));    // ends on thread 2
  a.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_START, 160, 12, kPid, 1, "whole run"));  // never ends
  b.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, 500, 10, kPid, 1, nullptr));
  b.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, 600, 11, kPid, 2, nullptr));
  b.add(marker_record(CUPTI_ACTIVITY_FLAG_MARKER_END, 700, 99, kPid, 1, nullptr));  // no start

  const Trace t = decode_all({&a, &b}, /*end=*/5000);
  ASSERT_EQ(t.ranges().size(), 3u);
  for (std::size_t i = 0; i < t.ranges().size(); ++i) {
    const std::string_view name = t.str(t.ranges().name[i]);
    if (name == "load") {
      EXPECT_EQ(t.ranges().end[i], 500);
      EXPECT_EQ(t.ranges().kind_at(i), RangeKind::push_pop);
    } else if (name == "handoff") {
      EXPECT_EQ(t.ranges().end[i], 600);
      EXPECT_EQ(t.ranges().kind_at(i), RangeKind::start_end);
      EXPECT_EQ(track_of(t, t.ranges().track_at(i)).tid, 1u);  // drawn where it started
    } else {
      EXPECT_EQ(name, "whole run");
      EXPECT_EQ(t.ranges().end[i], 5000);  // closed at stop
    }
  }
  EXPECT_EQ(t.meta().stat("capture.nvtx.unmatched_ends"), 1u);
  EXPECT_EQ(t.meta().stat("capture.nvtx.open_at_stop"), 1u);
}

TEST(RecordDecoder, InvalidTimestampsAreCountedNotAdded) {
  RecordBuffer buf;
  buf.add(kernel_record(0, 0, 0, 7, 1, "_Z8overflowv"));        // device buffer overflow
  buf.add(kernel_record(5000, 4000, 0, 7, 2, "_Z8backwardv"));  // ends before it starts
  buf.add(kernel_record(100, 0, 0, 7, 3, "_Z10incompletev"));   // forced flush of an unfinished record
  buf.add(kernel_record(100, 200, 0, 7, 4, "_Z2okv"));
  buf.add(memcpy_record(0, 0, 0, 7, 5, 8, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                        CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
  buf.add(memset_record(0, 0, 0, 7, 6, 8, 0));
  const Trace t = decode_all({&buf});
  EXPECT_EQ(t.kernels().size(), 1u);
  EXPECT_EQ(t.memcpys().size(), 0u);
  EXPECT_EQ(t.memsets().size(), 0u);
  EXPECT_EQ(t.meta().stat(stat_key::kInvalidTimestamps), 5u);
}

TEST(RecordDecoder, KindsNotDecodedAreCountedAndSkipped) {
  RecordBuffer buf;
  buf.add(kernel_record(100, 200, 0, 7, 1, "_Z1av"));
  CUpti_ActivityCudaEvent2 ev;
  std::memset(&ev, 0, sizeof ev);
  ev.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  buf.add(ev);
  CUpti_ActivityExternalCorrelation ext;
  std::memset(&ext, 0, sizeof ext);
  ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  buf.add(ext);
  buf.add(kernel_record(300, 400, 0, 7, 2, "_Z1bv"));
  const Trace t = decode_all({&buf});
  EXPECT_EQ(t.kernels().size(), 2u);
  EXPECT_EQ(t.meta().stat("capture.skipped.cuda_event"), 1u);
  EXPECT_EQ(t.meta().stat("capture.skipped.external_correlation"), 1u);
  EXPECT_EQ(t.meta().stat("capture.undecodable_buffers"), 0u);
}

TEST(RecordDecoder, UnknownKindStopsTheWalkAndIsCounted) {
  RecordBuffer buf;
  buf.add(kernel_record(100, 200, 0, 7, 1, "_Z1av"));
  buf.add_raw(9999, 64);  // a kind this CUPTI does not know: its size is unknown
  buf.add(kernel_record(300, 400, 0, 7, 2, "_Z1bv"));
  TraceBuilder b;
  RecordDecoder d(b, DecoderOptions{kPid, false});
  EXPECT_EQ(d.decode(buf.data(), buf.size()), 1u);
  d.write_stats(b.meta());
  EXPECT_EQ(b.meta().stat("capture.undecodable_buffers"), 1u);
  EXPECT_EQ(b.meta().stat("capture.undecodable_bytes"), buf.size() - sizeof(CUpti_ActivityKernel10));
  EXPECT_EQ(b.freeze().kernels().size(), 1u);
}

TEST(RecordDecoder, TruncatedBuffersKeepWholeRecordsOnly) {
  RecordBuffer buf;
  buf.add(kernel_record(100, 200, 0, 7, 1, "_Z1av"));
  buf.add(kernel_record(300, 400, 0, 7, 2, "_Z1bv"));
  for (std::size_t cut : {buf.size() - 1, buf.size() - 100, sizeof(CUpti_ActivityKernel10) + 8}) {
    TraceBuilder b;
    RecordDecoder d(b, DecoderOptions{kPid, false});
    EXPECT_EQ(d.decode(buf.data(), cut), 1u) << "cut at " << cut;
    d.write_stats(b.meta());
    EXPECT_EQ(b.meta().stat("capture.truncated_bytes"), cut - sizeof(CUpti_ActivityKernel10));
  }
  TraceBuilder b;
  RecordDecoder d(b, DecoderOptions{kPid, false});
  EXPECT_EQ(d.decode(buf.data(), 7), 0u);  // shorter than any record
  EXPECT_EQ(d.decode(nullptr, 100), 0u);
  EXPECT_EQ(d.decode(buf.data(), 0), 0u);
  d.write_stats(b.meta());
  EXPECT_EQ(b.meta().stat("capture.truncated_bytes"), 7u);
}

TEST(RecordDecoder, DevicesNamesOverheadAndDefaultStream) {
  RecordBuffer buf;
  CUpti_ActivityDevice5 dev;
  std::memset(&dev, 0, sizeof dev);
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.id = 0;
  dev.name = "NVIDIA H200";
  dev.computeCapabilityMajor = 9;
  dev.computeCapabilityMinor = 0;
  dev.numMultiprocessors = 132;
  dev.globalMemorySize = 141ull << 30;
  dev.globalMemoryBandwidth = 4'800'000'000ull;  // KB/s
  dev.coreClockRate = 1'980'000;                 // kHz
  dev.numThreadsPerWarp = 32;
  dev.maxWarpsPerMultiprocessor = 64;
  dev.maxBlocksPerMultiprocessor = 32;
  dev.maxThreadsPerBlock = 1024;
  dev.maxRegistersPerMultiprocessor = 65536;
  dev.maxSharedMemoryPerMultiprocessor = 233472;
  dev.uuid.bytes[0] = static_cast<char>(0xab);
  buf.add(dev);
  buf.add(context_record(1, 0, 7));
  CUpti_ActivityName name;
  std::memset(&name, 0, sizeof name);
  name.kind = CUPTI_ACTIVITY_KIND_NAME;
  name.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  name.objectId.pt.processId = kPid;
  name.objectId.pt.threadId = 55;
  name.name = "data loader";
  buf.add(name);
  buf.add(kernel_record(100, 200, 0, 7, 1, "_Z1av"));  // on the NULL stream of context 1
  buf.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 50, 60, kPid, 55, 1));
  buf.add(overhead_record(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 1000, 1500, kPid, 55));

  const Trace t = decode_all({&buf});
  ASSERT_EQ(t.devices().size(), 1u);
  const Device& d = t.devices()[0];
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.compute_major, 9);
  EXPECT_EQ(d.sm_count, 132u);
  EXPECT_EQ(d.memory_bytes, 141ull << 30);
  EXPECT_EQ(d.core_clock_khz, 1'980'000u);
  EXPECT_EQ(d.max_threads_per_sm, 2048u);
  EXPECT_EQ(d.warp_size, 32u);
  EXPECT_DOUBLE_EQ(d.peak_memory_bandwidth, 4.8e12);
  EXPECT_EQ(d.uuid.substr(0, 6), "GPU-ab");
  EXPECT_EQ(track_of(t, t.kernels().track_at(0)).name, "stream 7 (default)");
  EXPECT_EQ(track_of(t, t.api_calls().track_at(0)).name, "data loader");
  ASSERT_EQ(t.overheads().size(), 1u);
  EXPECT_EQ(t.str(t.overheads().kind[0]), "cupti_buffer_flush");
  EXPECT_EQ(track_of(t, t.overheads().track_at(0)).tid, 55u);
  EXPECT_EQ(t.meta().stat("capture.overhead_ns"), 500u);
}

TEST(RecordDecoder, CudaGraphNodesKeepTheirIdsAndOneLaunchLinksThemAll) {
  RecordBuffer buf;
  buf.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 50, 60, kPid, 1, 40));
  for (int node = 0; node < 3; ++node) {
    auto k = kernel_record(100 + node * 100, 150 + node * 100, 0, 7, 40, "_Z9graphstepi");
    k.graphId = 2;
    k.graphNodeId = 1000 + node;
    buf.add(k);
  }
  const Trace t = decode_all({&buf});
  ASSERT_EQ(t.kernels().size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(t.kernels().graph_id_at(i), 2u);
    EXPECT_EQ(t.kernels().graph_node_id_at(i), 1000u + i);
  }
  int ops = 0;
  t.for_each_op_of(0, [&](OpRef) { ++ops; });
  EXPECT_EQ(ops, 3);
}

TEST(RecordDecoder, DecodingIsAPureFunctionOfTheBytes) {
  RecordBuffer buf;
  for (std::uint32_t i = 0; i < 500; ++i) {
    buf.add(api_record(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 10 * i + 1, 10 * i + 5, kPid, 1 + i % 3,
                       i + 1));
    buf.add(kernel_record(10 * i + 6, 10 * i + 9, i % 2, 7 + i % 4, i + 1, i % 2 ? "_Z1av" : "_Z1bv"));
  }
  const Trace a = decode_all({&buf});
  const Trace b = decode_all({&buf});
  EXPECT_EQ(a.kernels().start, b.kernels().start);
  ASSERT_EQ(a.kernels().size(), b.kernels().size());
  for (std::size_t i = 0; i < a.kernels().size(); ++i) EXPECT_EQ(a.kernels().track_at(i), b.kernels().track_at(i));
  EXPECT_EQ(a.kernels().name, b.kernels().name);
  EXPECT_EQ(a.api_calls().correlation, b.api_calls().correlation);
  EXPECT_EQ(a.tracks(), b.tracks());
  EXPECT_EQ(a.kernels().size(), 500u);
  EXPECT_EQ(a.api_calls().size(), 500u);
  for (RowIndex k = 0; k < a.kernels().size(); ++k) EXPECT_NE(a.launching_api(OpRef{OpTable::kernel, k}), kNoRow);
}

// Allocations and releases: memory events with their addresses on the
// device's allocated series, whose level is sampled at each; host memory on
// the host's series; pools and allocations outside them make the reserved
// series; a record of an unknown operation is counted, not kept.
TEST(RecordDecoder, MemoryActivityBecomesTheMemorySeries) {
  constexpr std::int64_t MiB = 1 << 20;
  RecordBuffer buf;
  buf.add(memory_record(100, 0, 8 * MiB, 0x7f0000000000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));  // cudaMalloc
  buf.add(memory_pool_record(150, 0, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 0xabc, 32 * MiB));
  buf.add(memory_record(200, 0, 4 * MiB, 0x7f0000800000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0xabc));  // pool
  buf.add(memory_record(250, 1, 2 * MiB, 0x7e0000000000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
  buf.add(memory_record(300, 0, 64, 0x1000, CUPTI_ACTIVITY_MEMORY_KIND_PINNED));                // cudaMallocHost
  buf.add(memory_record(400, 0, -8 * MiB, 0x7f0000000000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));  // cudaFree
  buf.add(memory_pool_record(500, 0, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, 0xabc, 16 * MiB));
  auto odd = memory_record(600, 0, 1, 0x2000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  odd.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
  buf.add(odd);
  buf.add(memory_record(0, 0, 1, 0x3000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));  // no timestamp
  const Trace t = decode_all({&buf});

  const std::uint32_t alloc0 = t.find_counter_series(series_name::kMemoryAllocated, 0);
  const std::uint32_t reserved0 = t.find_counter_series(series_name::kMemoryReserved, 0);
  const std::uint32_t alloc1 = t.find_counter_series(series_name::kMemoryAllocated, 1);
  const std::uint32_t host = t.find_counter_series(series_name::kMemoryAllocated, kNoDevice);
  ASSERT_NE(alloc0, kNoSeries);
  ASSERT_NE(reserved0, kNoSeries);
  ASSERT_NE(alloc1, kNoSeries);
  ASSERT_NE(host, kNoSeries);
  EXPECT_EQ(t.counter_series()[alloc0].unit, "B");
  EXPECT_EQ(t.find_counter_series(series_name::kMemoryReserved, kNoDevice), kNoSeries);

  const MemoryEventTable& m = t.memory_events();
  const RowRange e0 = t.rows_of(TableId::memory_events, alloc0);
  ASSERT_EQ(e0.size(), 3u);
  EXPECT_EQ(std::vector<std::int64_t>(m.bytes.begin() + e0.begin, m.bytes.begin() + e0.end),
            (std::vector<std::int64_t>{8 * MiB, 4 * MiB, -8 * MiB}));
  EXPECT_EQ(m.address_at(e0.begin), 0x7f0000000000u);
  EXPECT_EQ(m.time[e0.begin + 2], 400);
  EXPECT_EQ(t.rows_of(TableId::memory_events, alloc1).size(), 1u);
  EXPECT_EQ(t.rows_of(TableId::memory_events, host).size(), 1u);

  auto values = [&](std::uint32_t series) {
    const RowRange r = t.rows_of(TableId::counters, series);
    return std::vector<double>(t.counters().value.begin() + r.begin, t.counters().value.begin() + r.end);
  };
  EXPECT_EQ(values(alloc0), (std::vector<double>{8.0 * MiB, 12.0 * MiB, 4.0 * MiB}));
  // Reserved: 8 outside pools; + the 32 MiB pool; the pool allocation is inside it; 0 outside + 32; trimmed to 16.
  EXPECT_EQ(values(reserved0), (std::vector<double>{8.0 * MiB, 40.0 * MiB, 32.0 * MiB, 16.0 * MiB}));
  EXPECT_EQ(values(host), (std::vector<double>{64}));
  EXPECT_EQ(t.meta().stat("capture.memory_events"), 5u);
  EXPECT_EQ(t.meta().stat("capture.skipped.memory2"), 1u);
  EXPECT_EQ(t.meta().stat("capture.invalid_timestamps"), 1u);
  EXPECT_EQ(t.meta().stat("capture.undecodable_buffers"), 0u);
  EXPECT_EQ(t.meta().stat("capture.truncated_bytes"), 0u);
}

}  // namespace
}  // namespace gpuscope::capture
