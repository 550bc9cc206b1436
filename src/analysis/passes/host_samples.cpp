// Where the host was while the GPUs waited: the host samples (marks of
// kHostSampleDomain on a thread's track, the stack as the name) that fall in
// each cause's idle time, on the threads the GPUs waited for, summed up as
// the path most of them share and their innermost frames.
//
// [SECTION] Samples by thread
// [SECTION] Which samples fall in which cause
// [SECTION] Summing up a cause's samples
// [SECTION] Entry point
#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/detail/context.h"

namespace gpuscope::detail {

namespace {

// A frame joins the shared path while it holds more than this share (a
// majority: one frame only can).
constexpr double kPathShare = 0.5;
// Frames of the path and innermost frames kept.
constexpr std::size_t kPathFrames = 3, kLeaves = 3;

// [SECTION] Samples by thread ---------------------------------------------------------------------

struct Sample {
  TrackId track;
  TimeNs time;
  StringId stack;
};

// Every host sample, by thread, then time.
std::vector<Sample> samples_by_thread(const Trace& t) {
  std::vector<Sample> out;
  const StringId domain = t.strings().find(kHostSampleDomain);
  const RangeTable& r = t.ranges();
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r.domain[i] == domain && r.kind_at(i) == RangeKind::mark) out.push_back({r.track_at(i), r.start[i], r.name[i]});
  std::sort(out.begin(), out.end(),
            [](const Sample& a, const Sample& b) { return a.track != b.track ? a.track < b.track : a.time < b.time; });
  return out;
}

// The thread that launched most of each device's GPU work.
std::unordered_map<std::uint32_t, TrackId> main_threads(const Trace& t) {
  std::unordered_map<std::uint32_t, std::unordered_map<TrackId, std::uint64_t>> counts;
  const KernelTable& k = t.kernels();
  for (std::size_t i = 0; i < k.size(); ++i)
    if (k.api[i] != kNoRow) ++counts[t.tracks()[k.track_at(i)].device][t.api_calls().track_at(k.api[i])];
  std::unordered_map<std::uint32_t, TrackId> out;
  for (const auto& [device, by_thread] : counts) {
    std::pair<TrackId, std::uint64_t> best{IdlePiece::kNone, 0};
    for (const auto& [thread, n] : by_thread)
      if (n > best.second || (n == best.second && thread < best.first)) best = {thread, n};
    out[device] = best.first;
  }
  return out;
}

// [SECTION] Which samples fall in which cause ----------------------------------------------------

// A cause's pieces come before those of lower rank: input loading explains
// the time it overlaps, then a synchronization, then what ended the gap.
int rank_of(IdleCause c) {
  switch (c) {
    case IdleCause::input_wait:
    case IdleCause::input_before_start: return 0;
    case IdleCause::host_sync:
    case IdleCause::blocking_copy: return 1;
    default: return 2;
  }
}

// For each sample, the cause it is counted under on each device, at most one
// per device; a sample in several devices' idle time counts once per cause.
// Returns, per cause, the samples counted (indexes into `samples`).
std::array<std::vector<std::size_t>, kIdleCauseCount> samples_by_cause(
    const std::vector<Sample>& samples, std::vector<IdlePiece>& pieces,
    const std::unordered_map<std::uint32_t, TrackId>& main) {
  std::array<std::vector<std::size_t>, kIdleCauseCount> out;
  std::stable_sort(pieces.begin(), pieces.end(), [](const IdlePiece& a, const IdlePiece& b) {
    return a.device != b.device ? a.device < b.device : rank_of(a.cause) < rank_of(b.cause);
  });
  std::vector<std::uint16_t> causes(samples.size(), 0);   // bit per cause, over the devices
  std::vector<std::uint32_t> taken(samples.size(), ~0u);  // the device that last counted it
  for (const IdlePiece& p : pieces) {
    TrackId thread = p.thread;
    if (thread == IdlePiece::kNone) {
      const auto it = main.find(p.device);
      if (it == main.end()) continue;
      thread = it->second;
    }
    auto at = std::lower_bound(
        samples.begin(), samples.end(), Sample{thread, p.start, 0},
        [](const Sample& a, const Sample& b) { return a.track != b.track ? a.track < b.track : a.time < b.time; });
    for (; at != samples.end() && at->track == thread && at->time < p.end; ++at) {
      const std::size_t i = static_cast<std::size_t>(at - samples.begin());
      if (taken[i] == p.device) continue;  // a piece of higher rank on this device has it
      taken[i] = p.device;
      causes[i] |= static_cast<std::uint16_t>(1u << static_cast<int>(p.cause));
    }
  }
  for (std::size_t i = 0; i < samples.size(); ++i)
    for (int c = 0; c < kIdleCauseCount; ++c)
      if (causes[i] >> c & 1u) out[c].push_back(i);
  return out;
}

// [SECTION] Summing up a cause's samples -------------------------------------------------------------

std::vector<std::string_view> frames_of(std::string_view stack) {
  std::vector<std::string_view> out;
  while (!stack.empty()) {
    const std::size_t sep = stack.find(kHostSampleFrameSeparator);
    out.push_back(stack.substr(0, sep));
    if (sep == std::string_view::npos) break;
    stack.remove_prefix(sep + 1);
  }
  return out;
}

// A frame of a data-loading library: PyTorch's DataLoader and datasets
// (torch/utils/data/), tf.data (tensorflow/python/data/).
bool is_input_frame(std::string_view frame) {
  return frame.find("/torch/utils/data/") != std::string_view::npos ||
         frame.find("/tensorflow/python/data/") != std::string_view::npos;
}

// A Python frame as gpuscope's sampler writes it: "path.py(line): function".
bool is_python_frame(std::string_view frame) { return frame.find(".py(") != std::string_view::npos; }

std::string thread_label(const Trace& t, TrackId id) {
  const Track& k = t.tracks()[id];
  std::string s = k.name.empty() ? std::string("thread") : k.name;
  return s + " (pid " + std::to_string(k.pid) + ", tid " + std::to_string(k.tid) + ")";
}

using Stacks = std::vector<std::pair<std::vector<std::string_view>, std::uint64_t>>;

// The frames most samples share: from the outermost frame down (or, with
// `from_leaf`, from the innermost up), taking at each step the frame with most
// samples among those still on the path, while it holds more than kPathShare
// of all `total`. Sets `under` to the samples under the path's last frame.
std::vector<std::string_view> shared_path(const Stacks& stacks, std::uint64_t total, bool from_leaf,
                                          std::uint64_t* under) {
  std::vector<std::string_view> path;
  auto at = [&](const std::vector<std::string_view>& frames, std::size_t depth) {
    return from_leaf ? frames[frames.size() - 1 - depth] : frames[depth];
  };
  // The stacks still on the path: each step looks at one more frame of them.
  std::vector<const Stacks::value_type*> on;
  for (const auto& s : stacks) on.push_back(&s);
  for (std::size_t depth = 0;; ++depth) {
    std::unordered_map<std::string_view, std::uint64_t> next;
    for (const auto* s : on)
      if (s->first.size() > depth) next[at(s->first, depth)] += s->second;
    std::pair<std::string_view, std::uint64_t> best{{}, 0};
    for (const auto& [frame, n] : next)
      if (n > best.second || (n == best.second && frame < best.first)) best = {frame, n};
    if (best.second == 0 || static_cast<double>(best.second) <= kPathShare * static_cast<double>(total)) break;
    path.push_back(best.first);
    *under = best.second;
    std::erase_if(on, [&](const auto* s) { return s->first.size() <= depth || at(s->first, depth) != best.first; });
  }
  return path;
}

// The path from the root down while one frame holds kPathShare of all the
// samples, and the innermost frames with most samples.
void sum_up(const Trace& t, const std::vector<Sample>& samples, const std::vector<std::size_t>& mine, HostWhere* w) {
  std::unordered_map<StringId, std::uint64_t> stacks;
  std::unordered_map<TrackId, std::uint64_t> threads;
  for (std::size_t i : mine) ++stacks[samples[i].stack], ++threads[samples[i].track];
  w->samples = mine.size();
  w->threads = static_cast<std::uint32_t>(threads.size());
  std::pair<TrackId, std::uint64_t> top{IdlePiece::kNone, 0};
  for (const auto& [thread, n] : threads)
    if (n > top.second || (n == top.second && thread < top.first)) top = {thread, n};
  w->thread = thread_label(t, top.first);
  Stacks split;
  std::unordered_map<std::string_view, std::uint64_t> leaves;
  for (const auto& [stack, n] : stacks) {
    split.emplace_back(frames_of(t.str(stack)), n);
    if (std::any_of(split.back().first.begin(), split.back().first.end(), is_input_frame)) w->input_samples += n;
    if (std::any_of(split.back().first.begin(), split.back().first.end(), is_python_frame)) w->python_samples += n;
    if (!split.back().first.empty()) leaves[split.back().first.back()] += n;
  }
  // The path from the root down; where the stacks share no root (an unwinder
  // that stopped early), from the innermost frame up.
  std::uint64_t under = 0;
  std::vector<std::string_view> path = shared_path(split, w->samples, false, &under);
  w->path_from_root = !path.empty();
  if (path.empty()) path = shared_path(split, w->samples, true, &under);
  w->path_depth = static_cast<std::uint32_t>(path.size());
  w->path_samples = path.empty() ? 0 : under;
  if (!w->path_from_root) std::reverse(path.begin(), path.end());  // outermost first
  for (std::size_t i = path.size() > kPathFrames ? path.size() - kPathFrames : 0; i < path.size(); ++i)
    w->path.emplace_back(path[i]);
  std::vector<HostFrame> top_leaves;
  for (const auto& [frame, n] : leaves) top_leaves.push_back({std::string(frame), n});
  std::sort(top_leaves.begin(), top_leaves.end(), [](const HostFrame& a, const HostFrame& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.frame < b.frame;
  });
  if (top_leaves.size() > kLeaves) top_leaves.resize(kLeaves);
  w->leaves = std::move(top_leaves);
}

}  // namespace

std::string_view idle_cause_name(IdleCause c) {
  static constexpr std::string_view kNames[kIdleCauseCount] = {
      "input-wait",     "host-sync",      "blocking-copy", "late-launch", "late-launch-gap",    "queued-gap",
      "unlaunched-gap", "unrecorded-gap", "warm-up",       "other",       "input-before-start", "pageable-staging"};
  return kNames[static_cast<int>(c)];
}

// [SECTION] Entry point ----------------------------------------------------------------------------------

bool has_host_samples(const Trace& t) {
  const StringId domain = t.strings().find(kHostSampleDomain);
  if (domain == StringTable::kNoString) return false;
  const RangeTable& r = t.ranges();
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r.domain[i] == domain && r.kind_at(i) == RangeKind::mark) return true;
  return false;
}

void host_where_pass(const RankedTrace& rt, std::vector<IdlePiece> pieces, Profile* p) {
  const Trace& t = *rt.trace;
  if (pieces.empty()) return;  // the device pass keeps pieces only for traces with host samples
  const std::vector<Sample> samples = samples_by_thread(t);
  const auto by_cause = samples_by_cause(samples, pieces, main_threads(t));
  std::array<bool, kIdleCauseCount> idle{};
  for (const IdlePiece& piece : pieces) idle[static_cast<int>(piece.cause)] = true;
  for (int c = 0; c < kIdleCauseCount; ++c) {
    if (!idle[c]) continue;
    HostWhere w;
    w.cause = std::string(idle_cause_name(static_cast<IdleCause>(c)));
    if (by_cause[c].empty()) {
      w.note = "no host sample of the threads the GPUs waited for fell in this idle time";
    } else {
      sum_up(t, samples, by_cause[c], &w);
      if (w.samples < kHostWhereMinSamples)
        w.note = "too few host samples (" + std::to_string(w.samples) + ", fewer than " +
                 std::to_string(kHostWhereMinSamples) + ") to say where the host was";
      else if (w.path.empty())
        w.note = "no frame is in more than half of the samples: the host was in many places";
    }
    p->host_while_idle.push_back(std::move(w));
  }
}

}  // namespace gpuscope::detail
