// What the timeline needs beyond the Trace, computed once after loading:
// the display groups (one per GPU, one per CPU process), each track's rows
// (lanes of events that never overlap, so a binary search finds the visible
// ones), each GPU's precomputed activity lanes, per-category kernel time
// prefix sums (the colours of folded blocks), and each thread's host samples
// with their stacks split into interned frames (the samples row).
//
// A lane is a sorted run of events of one table. Contiguous rows of a table
// (a stream's kernels) are used in place; lanes that pick rows out of a table
// (NVTX ranges of one nesting depth, overlapping API calls) keep their row
// numbers and a copy of their times, so the LOD walk always reads two flat,
// sorted arrays.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/trace.h"
#include "viewer/category_time.h"
#include "viewer/device_activity.h"

namespace gpuscope::viewer {

struct LaneSegment {
  TableId table = TableId::kernels;
  const TimeNs* start = nullptr;  // indexed by position
  const TimeNs* end = nullptr;
  const RowIndex* rows = nullptr;  // row of each position; nullptr: row == position
  RowIndex begin = 0, stop = 0;    // positions
  bool ends_sorted = true;
  TimeNs max_duration = 0;

  RowIndex row(RowIndex pos) const { return rows ? rows[pos] : pos; }
  // Positions of the events that overlap [t0, t1].
  void visible(TimeNs t0, TimeNs t1, RowIndex* lo, RowIndex* hi) const;
};

enum class RowKind : std::uint8_t { gpu_ops, ranges, api_calls, syncs, overheads, os_calls, samples };

// One horizontal row of a track: one or more segments drawn at the same height.
struct TrackRow {
  RowKind kind = RowKind::gpu_ops;
  std::uint16_t depth = 0;  // nesting depth (ranges, API calls)
  std::vector<LaneSegment> segments;
};

// A thread's host samples (marks of kHostSampleDomain, the stack as the
// name), split into frames once: frames[frame_begin[i] .. frame_begin[i+1])
// is sample i's stack, outermost first, as ids into
// TimelineIndex::frame_names().
struct ThreadSamples {
  std::vector<TimeNs> time;                // sorted
  std::vector<RowIndex> rows;              // the mark of each sample (ranges table)
  std::vector<std::uint32_t> frame_begin;  // size() + 1 offsets into frames
  std::vector<std::uint32_t> frames;
  // Frames sample i shares with sample i-1 from the root (0 for the first):
  // the flame chart joins a frame's boxes across samples with it.
  std::vector<std::uint16_t> common;
  std::uint32_t max_depth = 0;
  TimeNs cap = 0;  // a sample's box ends at the next sample, at most this later (2× the median interval)

  std::size_t size() const { return time.size(); }
  std::span<const std::uint32_t> stack(std::size_t i) const {
    return {frames.data() + frame_begin[i], frame_begin[i + 1] - frame_begin[i]};
  }
  std::uint32_t leaf(std::size_t i) const { return frames[frame_begin[i + 1] - 1]; }  // innermost (stack not empty)
  TimeNs box_end(std::size_t i) const {
    return i + 1 < time.size() ? std::min(time[i + 1], time[i] + cap) : time[i] + cap;
  }
  // The first sample at or after t.
  std::size_t first_at(TimeNs t) const {
    return static_cast<std::size_t>(std::lower_bound(time.begin(), time.end(), t) - time.begin());
  }
};

struct TrackInfo {
  TrackId track = 0;
  std::string label;  // "stream 7", "thread 1234 (MainThread)"
  std::vector<TrackRow> rows;
  std::uint64_t events = 0;
  int samples = -1;  // index into TimelineIndex::samples(), -1 if the thread has none (its samples row is last)
};

struct TrackGroup {
  TrackKind kind = TrackKind::gpu;
  std::uint32_t device = kNoDevice;   // GPU groups
  std::uint32_t pid = 0;              // CPU groups
  std::string label;                  // "GPU 0 · NVIDIA H100 80GB HBM3", "Process 1234 · python (rank 0)"
  int activity = -1;                  // index into TimelineIndex::activity, -1 if none
  std::vector<std::uint32_t> tracks;  // indexes into TimelineIndex::tracks
};

class TimelineIndex {
 public:
  static TimelineIndex build(const Trace& trace);

  const std::vector<TrackGroup>& groups() const { return groups_; }
  const std::vector<TrackInfo>& tracks() const { return tracks_; }
  const std::vector<DeviceActivity>& activity() const { return activity_; }
  // Kernel time per category over any rows of the kernel table (folded blocks).
  const CategoryTimeIndex& kernel_time() const { return kernel_time_; }
  // Host samples per thread (TrackInfo::samples) and their interned frames.
  const std::vector<ThreadSamples>& samples() const { return samples_; }
  const std::vector<std::string>& frame_names() const { return frame_names_; }
  // The samples of the thread the mark `row` (ranges table) is a sample of,
  // and its position there; false if it is not a host sample.
  bool sample_of(const Trace& trace, RowIndex row, const ThreadSamples** s, std::size_t* i) const;
  // The TrackInfo of a trace track, or nullptr.
  const TrackInfo* track_info(TrackId t) const {
    return t < by_track_.size() && by_track_[t] != kNone ? &tracks_[by_track_[t]] : nullptr;
  }
  std::size_t memory_bytes() const;

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct PendingLane {  // a gathered lane waiting for its track
    RowKind kind;
    std::uint16_t depth;
    TableId table;
    std::uint32_t gathered;  // index into gathered_
  };
  // The phases of build(): the row lists of gathered lanes (NVTX depths,
  // nested API calls) per track; the tracks and their rows (the gathered
  // storage no longer moves); the groups; the activity lanes and the
  // per-category kernel time, on worker threads.
  std::vector<std::vector<PendingLane>> gather_lanes(const Trace& trace);
  // Splits the sample marks of a track (rows of the ranges table) into frames.
  void add_samples(const Trace& trace, TrackId t, const std::vector<RowIndex>& rows,
                   std::unordered_map<std::string_view, std::uint32_t>& frame_ids);
  void add_tracks(const Trace& trace, const std::vector<std::vector<PendingLane>>& pending);
  void add_groups(const Trace& trace);
  void build_lanes(const Trace& trace);

  struct Gathered {  // storage of a lane that picks rows out of its table
    std::vector<RowIndex> rows;
    std::vector<TimeNs> start, end;
  };
  std::vector<TrackGroup> groups_;
  std::vector<TrackInfo> tracks_;
  std::vector<std::uint32_t> by_track_;
  std::vector<DeviceActivity> activity_;
  CategoryTimeIndex kernel_time_;
  std::vector<ThreadSamples> samples_;
  std::vector<std::uint32_t> samples_of_track_;  // per trace track: index into samples_ or kNone
  std::vector<std::string> frame_names_;
  std::vector<Gathered> gathered_;  // never resized after build: segments point into it
};

}  // namespace gpuscope::viewer
