#include "viewer/job_lanes.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "job/job_files.h"

namespace gpuscope::viewer {

namespace {

namespace fs = std::filesystem;

// The job's rank and clock offset of each file, from the job's per-rank rows.
void place_ranks(const Profile& p, std::vector<JobRank>& ranks) {
  std::map<std::string, std::pair<std::int32_t, TimeNs>> by_file;
  for (const RankSummary& row : p.ranks) by_file.emplace(row.source_file, std::pair{row.rank, row.clock_offset_ns});
  for (const Straggler& s : p.stragglers) by_file.emplace(s.source_file, std::pair{s.rank, TimeNs{0}});
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    auto it = by_file.find(ranks[i].file);
    // A rank of no row (a job of one file): its trace's own rank, else its place.
    if (it != by_file.end())
      ranks[i].rank = it->second.first;
    else if (ranks[i].rank < 0)
      ranks[i].rank = static_cast<std::int32_t>(i);
    ranks[i].offset = it != by_file.end() ? it->second.second : 0;
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const JobRank& a, const JobRank& b) { return a.rank < b.rank; });
}

}  // namespace

// [SECTION] Files ------------------------------------------------------------------------------

bool is_job_input(const std::vector<std::string>& inputs) {
  if (inputs.size() > 2) return true;
  std::error_code ec;
  for (const std::string& in : inputs)
    if (fs::is_directory(in, ec)) return true;
  return false;
}

// [SECTION] Reading ------------------------------------------------------------------------------

JobRank job_rank(const Trace& t, const std::string& file, const RankDigest* digest) {
  JobRank r;
  r.file = file;
  r.rank = t.meta().rank;
  r.host = t.meta().host;
  r.window = {t.begin_time(), t.end_time()};
  r.kernels = t.kernels().size();
  std::set<std::uint32_t> gpus;
  if (digest) {
    gpus.insert(digest->gpus.begin(), digest->gpus.end());
  } else {
    for (const Track& tr : t.tracks())
      if (tr.kind == TrackKind::gpu) gpus.insert(tr.device);
  }
  std::map<std::uint32_t, std::vector<CollectivePart>> comm = communication_parts(t);
  // The digest's collectives are those of the lowest GPU with any.
  const bool any_linked = digest && !digest->collectives.empty() && !comm.empty();
  const std::uint32_t linked = any_linked ? comm.begin()->first : 0;
  for (std::uint32_t device : gpus) {
    JobGpuLane lane;
    lane.device = device;
    lane.activity = DeviceActivity::build(t, device, kJobLaneBuckets);
    lane.linked = any_linked && linked == device;
    if (auto it = comm.find(device); it != comm.end()) lane.parts = std::move(it->second);
    lane.parts.shrink_to_fit();
    r.gpus.push_back(std::move(lane));
  }
  link_sibling_lanes(r.gpus);
  // Each of the digest's collectives (the linked lanes' parts) not yet
  // matched to an instance; load_job matches them.
  if (digest) r.part_instances.assign(digest->collectives.size(), -1);
  return r;
}

void link_sibling_lanes(std::vector<JobGpuLane>& gpus) {
  const JobGpuLane* linked = nullptr;
  for (const JobGpuLane& g : gpus)
    if (g.linked) linked = &g;
  if (!linked) return;
  for (JobGpuLane& g : gpus) {
    if (g.linked || g.parts.size() != linked->parts.size() || g.parts.empty()) continue;
    bool same = true;
    for (std::size_t i = 0; same && i < g.parts.size(); ++i) {
      const CollectivePart &a = g.parts[i], &b = linked->parts[i];
      same = a.kind == b.kind && (a.bytes == 0 || b.bytes == 0 || a.bytes == b.bytes);
    }
    g.linked = same;
  }
}

namespace {

// Which part of each rank is which instance: `parts` is JobRanks::parts
// (per instance, its part on each rank; empty: part i is instance i).
void place_parts(const std::vector<std::vector<std::uint32_t>>& parts, std::vector<JobRank>& ranks) {
  if (parts.empty()) return;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    JobRank& rank = ranks[r];
    rank.instance_parts.reserve(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      rank.instance_parts.push_back(parts[i][r]);  // kNoCollectivePart: none on this rank
      if (parts[i][r] < rank.part_instances.size()) rank.part_instances[parts[i][r]] = static_cast<std::int32_t>(i);
    }
  }
}

}  // namespace

JobData load_job(const TraceInputs& inputs, const JobLoad& how) {
  const std::vector<std::string>& files = inputs.files;
  std::vector<std::optional<JobRank>> lanes(files.size());
  job::JobRanks kept;
  job::JobOptions o;
  o.left_out = inputs.left_out;
  o.jobs = how.jobs;
  o.files_read = how.done;
  o.cancel = how.cancel;
  o.ranks = &kept;
  o.on_rank = [&](std::size_t i, const Trace& t, const RankDigest* d) { lanes[i] = job_rank(t, files[i], d); };
  JobData job;
  try {
    job.profile = job::analyze_job(files, o);
  } catch (const job::Cancelled&) {
    return {};
  }
  job.left_out = job.profile.left_out;
  for (std::size_t i : kept.files) job.ranks.push_back(std::move(*lanes[i]));
  lanes.clear();
  place_parts(kept.parts, job.ranks);
  place_ranks(job.profile, job.ranks);
  bool any = false;
  for (const JobRank& r : job.ranks) {
    if (r.window.end <= r.window.start) continue;
    const TimeRange w{r.window.start + r.offset, r.window.end + r.offset};
    job.window = any ? TimeRange{std::min(job.window.start, w.start), std::max(job.window.end, w.end)} : w;
    any = true;
  }
  return job;
}

// [SECTION] Instances across ranks -------------------------------------------------------------

std::int64_t instance_of(const JobData& job, std::size_t rank, std::size_t gpu, std::size_t part) {
  if (rank >= job.ranks.size() || gpu >= job.ranks[rank].gpus.size()) return -1;
  const JobRank& r = job.ranks[rank];
  const JobGpuLane& lane = r.gpus[gpu];
  if (!lane.linked || part >= lane.parts.size()) return -1;
  const std::int64_t instance = r.part_instances.empty()         ? static_cast<std::int64_t>(part)
                                : part < r.part_instances.size() ? r.part_instances[part]
                                                                 : -1;
  return instance < static_cast<std::int64_t>(job.profile.collectives.size()) ? instance : -1;
}

std::vector<InstancePart> instance_parts(const JobData& job, std::size_t instance) {
  std::vector<InstancePart> out;
  if (instance >= job.profile.collectives.size()) return out;
  const CollectiveInstance& c = job.profile.collectives[instance];
  for (std::size_t r = 0; r < job.ranks.size(); ++r) {
    const JobRank& rank = job.ranks[r];
    for (std::size_t g = 0; g < rank.gpus.size(); ++g) {
      const JobGpuLane& lane = rank.gpus[g];
      const std::size_t part = rank.instance_parts.empty()             ? instance
                               : instance < rank.instance_parts.size() ? rank.instance_parts[instance]
                                                                       : lane.parts.size();
      if (!lane.linked || part >= lane.parts.size()) continue;
      const CollectivePart& p = lane.parts[part];
      InstancePart ip;
      ip.rank = r;
      ip.gpu = g;
      ip.range = {p.start + rank.offset, p.end + rank.offset};
      ip.waited_ns = c.last_arrival_ns - ip.range.start;
      ip.last = rank.rank == c.last_rank;
      out.push_back(ip);
    }
  }
  return out;
}

// [SECTION] Overview -----------------------------------------------------------------------------

std::vector<RankWait> rank_waits(const JobData& job) {
  std::map<std::int32_t, const Straggler*> by_rank;
  for (const Straggler& s : job.profile.stragglers) by_rank.emplace(s.rank, &s);
  std::vector<RankWait> out;
  for (std::size_t r = 0; r < job.ranks.size(); ++r) {
    RankWait w;
    w.rank = r;
    if (auto it = by_rank.find(job.ranks[r].rank); it != by_rank.end()) {
      w.caused_ns = it->second->wait_caused_ns;
      w.waited_ns = it->second->waited_ns;
      w.last_arrivals = it->second->last_arrivals;
      w.critical_steps = it->second->critical_steps;
    }
    out.push_back(w);
  }
  std::stable_sort(out.begin(), out.end(), [](const RankWait& a, const RankWait& b) {
    if (a.caused_ns != b.caused_ns) return a.caused_ns > b.caused_ns;
    if (a.waited_ns != b.waited_ns) return a.waited_ns > b.waited_ns;
    return a.rank < b.rank;
  });
  return out;
}

// [SECTION] Lanes --------------------------------------------------------------------------------

void sample_utilization(const JobRank& rank, const JobGpuLane& lane, TimeNs view_start, double ns_per_px,
                        std::span<LaneSample> out) {
  lane.activity.sample_buckets(view_start - rank.offset, ns_per_px, out);
}

std::size_t job_lane_bytes(const JobData& job) {
  std::size_t bytes = 0;
  for (const JobRank& r : job.ranks) {
    bytes += r.instance_parts.capacity() * sizeof(std::uint32_t) + r.part_instances.capacity() * sizeof(std::int32_t);
    for (const JobGpuLane& g : r.gpus) bytes += g.activity.memory_bytes() + g.parts.capacity() * sizeof(CollectivePart);
  }
  return bytes;
}

}  // namespace gpuscope::viewer

namespace gpuscope::viewer {

// [SECTION] Loading on a worker ------------------------------------------------------------------

void JobLoader::start(TraceInputs inputs) {
  cancel();
  files_ = inputs.files.size();
  done_ = 0;
  cancel_ = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_.reset();
    error_.clear();
  }
  state_ = State::loading;
  worker_ = std::jthread([this, inputs = std::move(inputs)] {
    try {
      auto job = std::make_shared<JobData>(load_job(inputs, {.jobs = 0, .done = &done_, .cancel = &cancel_}));
      if (cancel_.load()) return;
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = std::move(job);
      state_ = State::ready;
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = e.what();
      state_ = State::failed;
    }
  });
}

void JobLoader::cancel() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
  state_ = State::idle;
}

std::shared_ptr<const JobData> JobLoader::job() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return job_;
}

std::string JobLoader::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace gpuscope::viewer
