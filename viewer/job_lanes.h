// The job view's data: the traces of many ranks as one timeline, without
// holding any of them. The job goes through the pipeline `gpuscope report
// DIR` uses (job/job_files.h, analyze_job): each file is opened on a worker
// thread and digested, and while it is open the viewer reduces it to what
// the lanes draw — per GPU a utilization histogram at a fixed resolution and
// its communication kernels — then it is freed. The job's Profile (the
// report's: per-rank rows, each rank's clock offset, the collective instances
// with their last arrival, the stragglers, the findings with their simulated
// savings, the files left out) is analyze_job's. Nothing here draws: the view
// (view_job.cpp) and the tests read these functions alike.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "analysis/job/job.h"
#include "analysis/profile.h"
#include "export/trace_inputs.h"
#include "trace/trace.h"
#include "viewer/device_activity.h"

namespace gpuscope::viewer {

// Buckets of a GPU's utilization histogram (16 bytes each): 128 KiB per GPU
// whatever the trace's size, so 64 ranks of 8 GPUs stay under 70 MB.
inline constexpr std::size_t kJobLaneBuckets = 1u << 13;

struct JobGpuLane {
  std::uint32_t device = 0;
  DeviceActivity activity;            // its histogram (read with sample_buckets: the trace is gone)
  std::vector<CollectivePart> parts;  // its communication kernels, on the rank's clock, by start
  // The job analysis matched these parts across ranks (JobRank::instance_parts
  // says which part is which instance). The GPU the digest took its
  // collectives from (the rank's lowest with any), and the rank's other GPUs
  // whose parts are the same sequence (link_sibling_lanes).
  bool linked = false;
};

// A process that drives several GPUs calls each collective on all of them,
// in the same order: a lane whose parts match the linked lane's one for one
// (as many, the same kind at each place, the same bytes where both know
// them) is linked too. Lanes that differ anywhere stay unlinked: a guess
// would link a part to another instance.
void link_sibling_lanes(std::vector<JobGpuLane>& gpus);

struct JobRank {
  std::string file;
  std::int32_t rank = -1;  // the job's rank (the traces' own when distinct, else file order)
  std::string host;
  TimeNs offset = 0;  // added to its times to put them on the job clock
  TimeRange window;   // the trace's span, on its own clock
  std::uint64_t kernels = 0;
  std::vector<JobGpuLane> gpus;  // GPUs with activity, by device
  // Per collective instance (Profile::collectives), the index of its part in
  // the linked lanes' parts (matched_collective_parts), and per part its
  // instance (-1: none). Both empty: part i is instance i.
  std::vector<std::uint32_t> instance_parts;
  std::vector<std::int32_t> part_instances;
};

struct JobData {
  std::vector<JobRank> ranks;  // by rank
  Profile profile;             // the job's analysis: `gpuscope report DIR`'s (job::analyze_job)
  // Entries of the folder that are no trace, files that could not be read,
  // ranks given twice, ranks no file gives: the report's "left out"
  // (profile.left_out), in its words.
  std::vector<LeftOut> left_out;
  TimeRange window;  // all ranks, on the job clock
};

// True when the viewer's inputs mean a job: a directory, or more than two files.
bool is_job_input(const std::vector<std::string>& inputs);
// The files of a job are list_trace_inputs(inputs) (export/trace_inputs.h),
// as the CLI's report lists them.

// One rank's lanes, from its trace while it is open (the digest's GPUs and
// collectives; without a digest — a job of one file — the trace's own).
JobRank job_rank(const Trace& trace, const std::string& file, const RankDigest* digest);

struct JobLoad {
  unsigned jobs = 0;                           // files read at once; 0: every core
  std::atomic<std::uint64_t>* done = nullptr;  // counts the files read
  const std::atomic<bool>* cancel = nullptr;   // stops early: the result is then empty
};

// The job of `inputs` as `gpuscope report` analyses it (job::analyze_job,
// with the findings' fixes simulated), each rank's lanes made while its
// trace is open for its digest; the ranks the report leaves out are left
// out (named with why). Throws job::Error when no file can be analysed or
// when the files are of different runs (check_job's refusal).
JobData load_job(const TraceInputs& inputs, const JobLoad& how = {});

// [SECTION] Instances across ranks

// The collective instance of part `part` of GPU lane `gpu` of ranks[rank];
// -1 when that lane is not linked or the part was not matched.
std::int64_t instance_of(const JobData& job, std::size_t rank, std::size_t gpu, std::size_t part);

// One rank's part of an instance, on the job clock.
struct InstancePart {
  std::size_t rank = 0;  // index into JobData::ranks
  std::size_t gpu = 0;   // index into its gpus
  TimeRange range;
  TimeNs waited_ns = 0;  // last arrival − its arrival
  bool last = false;     // it arrived last
};
// Every rank's part of instance `instance` (empty if there is no such instance).
std::vector<InstancePart> instance_parts(const JobData& job, std::size_t instance);

// [SECTION] Overview

// A rank by the wait it made the others suffer and the wait it suffered.
struct RankWait {
  std::size_t rank = 0;  // index into JobData::ranks
  TimeNs caused_ns = 0, waited_ns = 0;
  std::uint64_t last_arrivals = 0, critical_steps = 0;
};
// Every rank, most wait caused first (then most waited, then by rank): the
// culprit, if any, is the first.
std::vector<RankWait> rank_waits(const JobData& job);

// [SECTION] Lanes

// Utilization of `lane` (of `rank`) for the columns [view_start + i*ns_per_px, …)
// of the job clock, from its histogram.
void sample_utilization(const JobRank& rank, const JobGpuLane& lane, TimeNs view_start, double ns_per_px,
                        std::span<LaneSample> out);

// Bytes the job's lanes hold (histograms and parts), for the memory budget.
std::size_t job_lane_bytes(const JobData& job);

// [SECTION] Loading on a worker

// Loads a job on a worker thread (load_job); the UI thread polls it every frame.
class JobLoader {
 public:
  enum class State { idle, loading, ready, failed };
  JobLoader() = default;
  ~JobLoader() { cancel(); }
  JobLoader(const JobLoader&) = delete;
  JobLoader& operator=(const JobLoader&) = delete;

  void start(TraceInputs inputs);
  void cancel();  // stops and joins; state -> idle
  State state() const { return state_.load(); }
  std::size_t files() const { return files_; }
  std::uint64_t files_done() const { return done_.load(); }
  // After state() == ready.
  std::shared_ptr<const JobData> job() const;
  // After state() == failed.
  std::string error() const;

 private:
  std::jthread worker_;
  std::atomic<bool> cancel_{false};
  std::atomic<State> state_{State::idle};
  std::atomic<std::uint64_t> done_{0};
  std::size_t files_ = 0;
  mutable std::mutex mutex_;  // guards the two below
  std::shared_ptr<const JobData> job_;
  std::string error_;
};

}  // namespace gpuscope::viewer
