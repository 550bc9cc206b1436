// Jobs of many ranks, one trace at a time: each rank's trace is analysed
// alone into a RankDigest (what the job's report and the cross-rank analysis
// need: the rank's profile, its collectives, mergeable duration sketches and
// the findings' evidence), then freed; the job's Profile is built from the
// digests only. docs/scale.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/profile.h"
#include "trace/trace.h"

namespace gpuscope {

namespace detail {
struct RankParts;  // evidence and duration sketches (analysis/detail/context.h)
}

// One part of a collective on one rank: a communication kernel, on the
// rank's own clock.
struct CollectivePart {
  TimeNs start = 0, end = 0;
  std::uint64_t bytes = 0;    // 0: the trace does not say
  std::uint8_t kind = 0;      // collective_kind_name(kind): the framework's annotation's, else the kernel name's
  std::int32_t step = -1;     // Step::index of the rank's step it starts in; -1: none, or not placed
  std::int32_t ordinal = -1;  // its place among its step's collectives of its kind and size; -1: no step
};

struct RankDigest {
  std::string file;
  std::int32_t own_rank = -1;  // the trace's own rank (TraceMeta::rank), -1 unknown
  std::int32_t world_size = 0;
  std::string host;
  std::string command_line;
  std::vector<std::uint32_t> gpus;  // GPUs with activity (before any device filter)
  Profile profile;                  // the rank alone, on its own clock
  // The communication kernels of its first GPU with any, in time order,
  // placed in its steps.
  std::vector<CollectivePart> collectives;
  std::shared_ptr<const detail::RankParts> parts;
};

// The communication kernels of each GPU of `trace` (within options.device),
// each GPU's by start then end, with the kind and size the framework's
// annotations give (not placed in steps): RankDigest::collectives are those
// of the lowest GPU with any. The viewer's job view draws all of them.
std::map<std::uint32_t, std::vector<CollectivePart>> communication_parts(const Trace& trace,
                                                                         const AnalysisOptions& options = {});

// Analyses one rank's trace alone.
RankDigest digest_rank(const Trace& trace, const std::string& file, const AnalysisOptions& options = {});

// What a job's files say about each other.
struct JobCheck {
  // Files left out (a rank given again: the first file of a rank is kept),
  // and the ranks no file gives (file "", when the traces tell the job's size).
  std::vector<LeftOut> left_out;
  // Not empty: the files are of different runs (their recorded command lines
  // or job sizes differ); names the files of each run.
  std::string refused;
};
// Checks the digests of one job and removes the ones left out.
JobCheck check_job(std::vector<RankDigest>& digests);

// The job's Profile from its ranks' digests (in file order): per-rank rows,
// pooled categories, hotspots and launch statistics (DurationSketch medians),
// every rank's collective sites, clocks aligned on matched collectives (by
// call site when every rank numbers its steps: ProfilerStep#N; else in order), each collective's last arrival and
// the others' wait, stragglers by the wait they caused, each step's critical
// rank, and the findings over the whole job.
Profile analyze_digests(std::vector<RankDigest> digests, const AnalysisOptions& options = {});

// The collectives analyze_digests() matches across the ranks of `digests`
// (given in the same order): for each instance (Profile::collectives, in
// order), the index of its part in each digest's collectives, or
// kNoCollectivePart for a rank without collectives (it is not aligned).
inline constexpr std::uint32_t kNoCollectivePart = 0xFFFFFFFFu;
std::vector<std::vector<std::uint32_t>> matched_collective_parts(const std::vector<RankDigest>& digests);

// The collective kind a communication kernel's name says, and its name:
// all_reduce, all_gather, reduce_scatter, broadcast, reduce, send_recv,
// all_to_all, or collective (not told by the name).
std::uint8_t collective_kind(std::string_view kernel_name);
std::string_view collective_kind_name(std::uint8_t kind);

}  // namespace gpuscope
