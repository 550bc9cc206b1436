// Jobs one rank at a time: digest_rank() analyses a trace alone and keeps
// what the job needs; analyze_digests() builds the job's Profile from the
// digests and does the cross-rank analysis (docs/scale.md).
//
// [SECTION] Collective kinds
// [SECTION] One rank: the digest
// [SECTION] Ranks and clocks
// [SECTION] Collective instances, waits, stragglers
// [SECTION] Pooling the ranks' profiles
// [SECTION] Checking a job's files
// [SECTION] Entry point
#include "analysis/job/job.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "analysis/detail/context.h"
#include "analysis/passes/collectives.h"
#include "analysis/util/stats.h"
#include "trace/kernel_category.h"
#include "words/format.h"

namespace gpuscope {

// [SECTION] Collective kinds ----------------------------------------------------------------

namespace {

constexpr std::array<std::string_view, 8> kKindNames = {"collective", "all_reduce", "all_gather", "reduce_scatter",
                                                        "broadcast",  "reduce",     "send_recv",  "all_to_all"};

}  // namespace

std::uint8_t collective_kind(std::string_view name) {
  // Most specific first: "ReduceScatter" contains "Reduce", "AllReduce" too.
  constexpr std::pair<std::string_view, std::uint8_t> kWords[] = {
      {"allreduce", 1},     {"all_reduce", 1},     {"allgather", 2}, {"all_gather", 2},
      {"reducescatter", 3}, {"reduce_scatter", 3}, {"broadcast", 4}, {"alltoall", 7},
      {"all_to_all", 7},    {"sendrecv", 6},       {"send_recv", 6}, {"reduce", 5}};
  for (const auto& [word, kind] : kWords)
    if (contains_nocase(name, word)) return kind;
  return 0;
}

std::string_view collective_kind_name(std::uint8_t kind) {
  return kind < kKindNames.size() ? kKindNames[kind] : kKindNames[0];
}

// [SECTION] One rank: the digest ------------------------------------------------------------

namespace {

using detail::RankedTrace;
using detail::RankParts;

// Every kernel's duration on the analysed GPUs, by name, as sketches.
std::vector<RankParts::Name> name_sketches(const Trace& t, const AnalysisOptions& opt) {
  std::vector<std::vector<TimeNs>> by_string(t.strings().size());
  std::vector<std::uint8_t> category(t.strings().size(), 0);
  const KernelTable& k = t.kernels();
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (!detail::on_device(t, tr, opt.device)) continue;
    const RowRange r = t.rows_of(TableId::kernels, tr);
    for (RowIndex i = r.begin; i < r.end; ++i) {
      by_string[k.name[i]].push_back(k.end[i] - k.start[i]);
      category[k.name[i]] = k.category[i];
    }
  }
  std::vector<RankParts::Name> names;
  for (StringId s = 0; s < by_string.size(); ++s) {
    if (by_string[s].empty()) continue;
    names.push_back(
        {std::string(t.str(s)), static_cast<KernelCategory>(category[s]), DurationSketch::of(by_string[s])});
    std::vector<TimeNs>().swap(by_string[s]);
  }
  std::sort(names.begin(), names.end(),
            [](const RankParts::Name& a, const RankParts::Name& b) { return a.name < b.name; });
  return names;
}

// CPU launch time, GPU time and launch delay of every op launched
// asynchronously (as the rank's own launch statistics: graph launches and
// synchronous copy calls aside), as sketches.
std::array<DurationSketch, 3> launch_sketches(const Trace& t, const AnalysisOptions& opt) {
  std::array<std::vector<TimeNs>, 3> v;
  const ApiCallTable& a = t.api_calls();
  const detail::LaunchCalls launch_kind(t);
  for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
    if (!detail::on_device(t, tr, opt.device)) continue;
    auto rows = [&](TableId table, const std::vector<TimeNs>& s, const std::vector<TimeNs>& e,
                    const std::vector<RowIndex>& api) {
      const RowRange r = t.rows_of(table, tr);
      for (RowIndex i = r.begin; i < r.end; ++i) {
        if (api[i] == kNoRow || launch_kind(api[i]) != detail::LaunchCalls::kAsync) continue;
        const TimeNs call_end = a.end[api[i]];
        v[detail::OpTotals::kCpu].push_back(call_end - a.start[api[i]]);
        v[detail::OpTotals::kGpu].push_back(e[i] - s[i]);
        v[detail::OpTotals::kDelay].push_back(s[i] - call_end);
      }
    };
    rows(TableId::kernels, t.kernels().start, t.kernels().end, t.kernels().api);
    rows(TableId::memcpys, t.memcpys().start, t.memcpys().end, t.memcpys().api);
    rows(TableId::memsets, t.memsets().start, t.memsets().end, t.memsets().api);
  }
  std::array<DurationSketch, 3> out;
  for (int q = 0; q < 3; ++q) out[q] = DurationSketch::of(v[q]);
  return out;
}

// Calls (by device, then start and end) as parts, per device.
std::map<std::uint32_t, std::vector<CollectivePart>> parts_by_device(const std::vector<detail::CollectiveCall>& calls) {
  std::map<std::uint32_t, std::vector<CollectivePart>> by_device;
  for (const detail::CollectiveCall& c : calls)
    by_device[c.device].push_back({c.start, c.end, c.bytes, c.kind, c.step, c.ordinal});
  return by_device;
}

// The communication kernels of the first GPU (lowest ordinal) with any,
// placed in `steps` (the trace's own clock).
std::vector<CollectivePart> collective_parts(const Trace& t, const AnalysisOptions& opt,
                                             const std::vector<Step>& steps) {
  std::vector<detail::CollectiveCall> calls = detail::collective_calls(t, opt.device);
  detail::place_in_steps(calls, steps);
  std::map<std::uint32_t, std::vector<CollectivePart>> by_device = parts_by_device(calls);
  if (by_device.empty()) return {};
  return std::move(by_device.begin()->second);
}

}  // namespace

std::map<std::uint32_t, std::vector<CollectivePart>> communication_parts(const Trace& t, const AnalysisOptions& opt) {
  return parts_by_device(detail::collective_calls(t, opt.device));
}

RankDigest digest_rank(const Trace& t, const std::string& file, const AnalysisOptions& opt) {
  RankDigest d;
  d.file = file;
  d.own_rank = t.meta().rank;
  d.world_size = t.meta().world_size;
  d.host = t.meta().host;
  d.command_line = t.meta().command_line;
  std::set<std::uint32_t> gpus;
  for (const Track& tr : t.tracks())
    if (tr.kind == TrackKind::gpu) gpus.insert(tr.device);
  d.gpus.assign(gpus.begin(), gpus.end());
  auto parts = std::make_shared<RankParts>();
  parts->evidence = detail::Evidence(opt.max_ranges_per_finding);
  const RankedTrace rt{&t, file, std::max(0, d.own_rank), 0};
  d.profile = detail::analyze_trace(rt, opt, &parts->evidence, detail::kDigestOpKernels);
  // The job's hotspots and categories come from the sketches.
  d.profile.hotspots.clear();
  d.profile.hotspots.shrink_to_fit();
  parts->names = name_sketches(t, opt);
  parts->launch = launch_sketches(t, opt);
  d.collectives = collective_parts(t, opt, d.profile.steps.steps);  // offset 0: the trace's own clock
  d.parts = std::move(parts);
  return d;
}

// [SECTION] Ranks and clocks ----------------------------------------------------------------

namespace {

// The job's view of one digest: its rank and clock offset.
struct Member {
  const RankDigest* d = nullptr;
  std::int32_t rank = 0;
  TimeNs offset = 0;    // added to its times to put them on the job clock
  TimeNs residual = 0;  // median |one collective's shift − offset|
};

// Where the host was during each cause's idle time: the rank with most
// samples in it speaks for the job (its thread named with its rank); samples
// of different ranks' programs are not pooled into one path.
void pool_host_where(const std::vector<Member>& m, Profile* p) {
  for (const IdleCharge& c : p->idle_charges) {
    const HostWhere* best = nullptr;
    std::int32_t rank = 0;
    std::uint32_t ranks = 0;
    for (const Member& x : m)
      for (const HostWhere& w : x.d->profile.host_while_idle)
        if (w.cause == c.cause) {
          ranks += w.samples > 0;
          if (!best || w.samples > best->samples) best = &w, rank = x.rank;
        }
    if (!best) continue;
    HostWhere w = *best;
    if (!w.thread.empty()) w.thread = "rank " + std::to_string(rank) + ": " + w.thread;
    if (ranks > 1)
      w.note += std::string(w.note.empty() ? "" : "; ") + "the rank with most samples of " + std::to_string(ranks) +
                " ranks with samples";
    p->host_while_idle.push_back(std::move(w));
  }
}

// The traces' own ranks when every one has a distinct one, else their order.
void assign_ranks(std::vector<Member>& m) {
  std::set<std::int32_t> seen;
  bool usable = true;
  for (const Member& x : m) usable = usable && x.d->own_rank >= 0 && seen.insert(x.d->own_rank).second;
  for (std::size_t i = 0; i < m.size(); ++i) m[i].rank = usable ? m[i].d->own_rank : static_cast<std::int32_t>(i);
}

// Whether a member takes part in the alignment on collectives: a rank whose
// file holds none (its kernels lost) cannot be aligned, and stays on its own
// clock without stopping the others from being aligned.
bool aligns(const Member& x) { return !x.d->collectives.empty(); }

// The member the others are aligned to: the lowest rank of those that align
// (of all, when none does).
std::size_t reference(const std::vector<Member>& m) {
  std::size_t ref = 0;
  for (std::size_t i = 1; i < m.size(); ++i)
    if (aligns(m[i]) != aligns(m[ref]) ? aligns(m[i]) : m[i].rank < m[ref].rank) ref = i;
  return ref;
}

// Collectives matched across the ranks that align (aligns()): for each, the
// index of its part on every member (kNoCollectivePart on a member that does
// not align); none when fewer than two ranks align.
//  * When every such rank numbers its steps (ProfilerStep#N: the same N on
//    every rank), by call site: the part of the same step, kind, size and
//    place in the step on every rank (NCCL runs a communicator's collectives
//    in the same order on all its ranks), in the reference rank's order.
//    Ranks whose windows or recorded events differ still match where they
//    overlap.
//  * Otherwise in order: the i-th of every rank, as long as every rank has an
//    i-th one and all of them are of the same kind.
struct Matching {
  std::vector<std::vector<std::uint32_t>> parts;  // [collective][member]
  bool by_site = false;
};

Matching matched_collectives(const std::vector<Member>& m, std::size_t ref) {
  Matching out;
  if (std::count_if(m.begin(), m.end(), aligns) < 2) return out;
  out.by_site = std::all_of(m.begin(), m.end(), [](const Member& x) {
    return !aligns(x) || (x.d->profile.steps.source == StepSource::profiler_step &&
                          std::any_of(x.d->collectives.begin(), x.d->collectives.end(),
                                      [](const CollectivePart& c) { return c.step >= 0; }));
  });
  if (out.by_site) {
    using Site = std::tuple<std::int32_t, std::uint8_t, std::uint64_t, std::int32_t>;
    auto site = [](const CollectivePart& c) { return Site{c.step, c.kind, c.bytes, c.ordinal}; };
    std::vector<std::map<Site, std::uint32_t>> index(m.size());
    for (std::size_t r = 0; r < m.size(); ++r)
      for (std::uint32_t i = 0; i < m[r].d->collectives.size(); ++i)
        if (m[r].d->collectives[i].step >= 0) index[r].emplace(site(m[r].d->collectives[i]), i);
    for (const auto& [key, at_ref] : index[ref]) {
      std::vector<std::uint32_t> row(m.size(), kNoCollectivePart);
      bool everywhere = true;
      for (std::size_t r = 0; r < m.size() && everywhere; ++r) {
        if (!aligns(m[r])) continue;
        auto it = index[r].find(key);
        everywhere = it != index[r].end();
        if (everywhere) row[r] = it->second;
      }
      if (everywhere) out.parts.push_back(std::move(row));
    }
    std::sort(out.parts.begin(), out.parts.end(), [ref](const auto& a, const auto& b) { return a[ref] < b[ref]; });
    return out;
  }
  const std::vector<CollectivePart>& first = m[ref].d->collectives;
  std::size_t n = first.size();
  for (const Member& x : m)
    if (aligns(x)) n = std::min(n, x.d->collectives.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> row(m.size(), kNoCollectivePart);
    for (std::size_t r = 0; r < m.size(); ++r) {
      if (!aligns(m[r])) continue;
      if (m[r].d->collectives[i].kind != first[i].kind) return out;
      row[r] = i;
    }
    out.parts.push_back(std::move(row));
  }
  return out;
}

// Puts every rank on the reference rank's clock and says how.
//  * One host: one clock (CUPTI and Kineto both use the host's real-time clock).
//  * Otherwise, the parts of a collective end together on every rank (the
//    data is exchanged when the last one has joined): each rank's shift is
//    the median over the matched collectives of the reference's end minus
//    its own, its residual the median distance of one collective's shift
//    from that.
//  * Otherwise the clocks are taken as they are, and the report says so.
std::string align_clocks(std::vector<Member>& m, const Matching& matching) {
  if (m.size() < 2) return {};
  const std::string& host = m[0].d->host;
  bool one_host = !host.empty();
  for (const Member& x : m) one_host = one_host && x.d->host == host;
  if (one_host) return "all ranks ran on host " + host + ": one clock, no shift";
  const std::size_t matched = matching.parts.size();
  if (matched == 0) return "different or unknown hosts and no collectives to align on: clocks taken as recorded";
  const std::size_t ref = reference(m);
  TimeNs largest = 0, worst = 0;
  std::vector<TimeNs> diffs(matched);
  std::vector<std::int32_t> alone;
  for (std::size_t r = 0; r < m.size(); ++r) {
    Member& x = m[r];
    if (!aligns(x)) {
      alone.push_back(x.rank);
      continue;
    }
    for (std::size_t k = 0; k < matched; ++k) {
      const std::vector<std::uint32_t>& row = matching.parts[k];
      diffs[k] = m[ref].d->collectives[row[ref]].end - x.d->collectives[row[r]].end;
    }
    x.offset = select_kth(diffs, (matched - 1) / 2);
    for (TimeNs& v : diffs) v = v > x.offset ? v - x.offset : x.offset - v;
    x.residual = select_kth(diffs, (matched - 1) / 2);
    largest = std::max(largest, x.offset < 0 ? -x.offset : x.offset);
    worst = std::max(worst, x.residual);
  }
  std::string unaligned;
  for (const std::int32_t r : alone) unaligned += (unaligned.empty() ? "" : ", ") + std::to_string(r);
  return "aligned on the ends of " + std::to_string(matched) + " collectives matched " +
         (matching.by_site ? "by call site (step, kind, size, place in the step)" : "in order") +
         " (median shift per rank; largest shift " + format::duration(largest) + ", largest residual " +
         format::duration(worst) + ")" +
         (alone.empty() ? ""
                        : std::string(alone.size() == 1 ? "; rank " : "; ranks ") + unaligned +
                              " without collectives: clock taken as recorded");
}

// [SECTION] Collective instances, waits, stragglers ------------------------------------------

struct RankWaits {
  TimeNs waited = 0, caused = 0;
  std::uint64_t last = 0, critical_steps = 0;
};

// The reference rank's steps on its first GPU, on the job clock, in time order.
std::vector<const Step*> reference_steps(const Profile& job, std::int32_t ref_rank) {
  std::vector<const Step*> steps;
  for (const Step& s : job.steps.steps)
    if (s.rank == ref_rank && (steps.empty() || s.device == steps.front()->device)) steps.push_back(&s);
  std::sort(steps.begin(), steps.end(), [](const Step* a, const Step* b) { return a->range.start < b->range.start; });
  return steps;
}

std::int32_t step_at(const std::vector<const Step*>& steps, TimeNs t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t, [](TimeNs v, const Step* s) { return v < s->range.start; });
  if (it == steps.begin()) return -1;
  --it;
  return t < (*it)->range.end ? (*it)->index : -1;
}

void cross_rank(const std::vector<Member>& m, const Matching& matching, Profile* p) {
  const std::size_t matched = matching.parts.size();
  if (matched == 0 || m.size() < 2) return;
  const std::size_t ref = reference(m);
  const std::vector<const Step*> steps = reference_steps(*p, m[ref].rank);
  std::vector<RankWaits> w(m.size());
  std::map<std::int32_t, std::vector<TimeNs>> step_caused;  // step index -> wait caused, per member
  p->collectives.reserve(matched);
  for (const std::vector<std::uint32_t>& row : matching.parts) {
    auto part_of = [&](std::size_t r) -> const CollectivePart& { return m[r].d->collectives[row[r]]; };
    CollectiveInstance c;
    c.index = row[ref];
    c.kind = std::string(collective_kind_name(part_of(ref).kind));
    std::size_t last = ref;
    TimeNs first = 0, end = 0;
    bool any = false;
    for (std::size_t r = 0; r < m.size(); ++r) {
      if (!aligns(m[r])) continue;
      const CollectivePart& part = part_of(r);
      const TimeNs arrival = part.start + m[r].offset;
      if (!any || arrival < first) first = arrival;
      if (!any || arrival > part_of(last).start + m[last].offset) last = r;
      end = !any ? part.end + m[r].offset : std::max(end, part.end + m[r].offset);
      c.bytes = std::max(c.bytes, part.bytes);
      any = true;
    }
    const TimeNs last_arrival = part_of(last).start + m[last].offset;
    for (std::size_t r = 0; r < m.size(); ++r) {
      if (!aligns(m[r])) continue;
      const TimeNs waited = last_arrival - (part_of(r).start + m[r].offset);
      w[r].waited += waited;
      c.wait_ns += waited;
    }
    w[last].caused += c.wait_ns;
    ++w[last].last;
    c.range = {first, std::max(end, last_arrival)};
    c.first_arrival_ns = first;
    c.last_arrival_ns = last_arrival;
    c.last_rank = m[last].rank;
    c.step = step_at(steps, part_of(ref).start + m[ref].offset);
    if (c.step >= 0) {
      std::vector<TimeNs>& caused = step_caused[c.step];
      caused.resize(m.size(), 0);
      caused[last] += c.wait_ns;
    }
    p->collectives.push_back(std::move(c));
  }
  for (const Step* s : steps) {
    JobStep js;
    js.index = s->index;
    auto it = step_caused.find(s->index);
    if (it != step_caused.end()) {
      std::size_t best = 0;
      for (std::size_t r = 0; r < m.size(); ++r) {
        js.wait_ns += it->second[r];
        if (it->second[r] > it->second[best]) best = r;
      }
      if (it->second[best] > 0) js.critical_rank = m[best].rank, ++w[best].critical_steps;
    }
    p->job_steps.push_back(js);
  }
  for (std::size_t r = 0; r < m.size(); ++r) {
    p->stragglers.push_back({m[r].rank, m[r].d->file, w[r].caused, w[r].last, w[r].critical_steps, w[r].waited});
    for (RankSummary& row : p->ranks) {
      if (row.rank != m[r].rank) continue;
      row.waited_ns = w[r].waited;
      row.wait_caused_ns = w[r].caused;
      row.last_arrivals = w[r].last;
    }
  }
  std::stable_sort(p->stragglers.begin(), p->stragglers.end(), [](const Straggler& a, const Straggler& b) {
    return a.wait_caused_ns != b.wait_caused_ns ? a.wait_caused_ns > b.wait_caused_ns : a.rank < b.rank;
  });
}

// [SECTION] Pooling the ranks' profiles -------------------------------------------------------

TimeRange shifted(TimeRange r, TimeNs by) { return {r.start + by, r.end + by}; }

// One rank's rows into the job, relabelled with its job rank and moved onto the job clock.
// A rank's synchronizations between its steps' launches into the job's:
// the places and parts each rank kept, by place and by name.
void merge_sync_sites(const SyncStats& r, SyncStats* y) {
  y->mid_step += r.mid_step, y->mid_step_ns += r.mid_step_ns, y->mid_step_steps += r.mid_step_steps;
  y->step_launches += r.step_launches;
  for (const SyncSite& s : r.mid_step_sites) {
    auto it = std::find_if(y->mid_step_sites.begin(), y->mid_step_sites.end(),
                           [&](const SyncSite& h) { return h.where == s.where && h.part == s.part; });
    if (it == y->mid_step_sites.end())
      y->mid_step_sites.push_back(s);
    else
      it->count += s.count, it->blocked_ns += s.blocked_ns;
  }
  for (const StepPart& s : r.step_parts) {
    auto it =
        std::find_if(y->step_parts.begin(), y->step_parts.end(), [&](const StepPart& h) { return h.name == s.name; });
    if (it == y->step_parts.end())
      y->step_parts.push_back(s);
    else
      it->launches += s.launches, it->syncs += s.syncs;
  }
  detail::sort_sync_sites(y->mid_step_sites);
  detail::sort_step_parts(y->step_parts);
}

void add_rank(const Member& x, Profile* p, bool* any_window) {
  const Profile& r = x.d->profile;
  for (DeviceSummary d : r.devices) {
    d.rank = x.rank;
    d.window = shifted(d.window, x.offset);
    p->devices.push_back(std::move(d));
  }
  for (Step s : r.steps.steps) {
    s.rank = x.rank;
    s.range = shifted(s.range, x.offset);
    p->steps.steps.push_back(std::move(s));
  }
  if (p->steps.source == StepSource::none) p->steps.source = r.steps.source;
  if (p->steps.not_steps.empty()) p->steps.not_steps = r.steps.not_steps;
  p->steps.unused_step_ranges = p->steps.steps.empty() ? p->steps.unused_step_ranges + r.steps.unused_step_ranges : 0;
  if (p->steps.source_evidence.empty() && !r.steps.source_evidence.empty())  // the first rank's, said so
    p->steps.source_evidence = r.steps.source_evidence + (x.rank >= 0 ? " (rank " + std::to_string(x.rank) + ")" : "");
  p->steps.outside_gpu_ns += r.steps.outside_gpu_ns;
  p->steps.before_gpu_ns += r.steps.before_gpu_ns;
  p->steps.early_ops += r.steps.early_ops;
  p->steps.early_ops_ns += r.steps.early_ops_ns;
  p->steps.backlog_ops += r.steps.backlog_ops;
  p->steps.backlog_ns += r.steps.backlog_ns;
  for (const CategoryTime& c : r.steps.backlog_categories) {
    auto same = std::find_if(p->steps.backlog_categories.begin(), p->steps.backlog_categories.end(),
                             [&](const CategoryTime& x) { return x.category == c.category; });
    if (same == p->steps.backlog_categories.end())
      p->steps.backlog_categories.push_back(c);
    else
      same->time_ns += c.time_ns, same->count += c.count;
  }
  p->steps.sync_blocked_ns += r.steps.sync_blocked_ns;
  p->steps.input_fetches += r.steps.input_fetches;
  detail::merge_host_ranges(r.steps.outside_ranges, &p->steps.outside_ranges);
  p->steps.lead_recorded_ns += r.steps.lead_recorded_ns;
  p->steps.lead_input_ns += r.steps.lead_input_ns;
  p->steps.host_issue_ns += r.steps.host_issue_ns;
  detail::merge_host_ranges(r.steps.lead_ranges, &p->steps.lead_ranges);
  for (SlowStep s : r.steps.slow_steps) s.rank = x.rank, p->steps.slow_steps.push_back(std::move(s));
  for (IdleByCause i : r.idle) i.rank = x.rank, p->idle.push_back(i);
  for (CollectiveSite s : r.collective_sites) s.rank = x.rank, p->collective_sites.push_back(std::move(s));
  for (TemporalBreakdown tb : r.temporal_breakdown) tb.rank = x.rank, p->temporal_breakdown.push_back(tb);
  for (RankSummary row : r.ranks) {
    row.rank = x.rank;
    row.clock_offset_ns = x.offset;
    row.clock_residual_ns = x.residual;
    p->ranks.push_back(std::move(row));
  }
  SyncStats& y = p->syncs;
  y.count += r.syncs.count, y.total_ns += r.syncs.total_ns, y.device_syncs += r.syncs.device_syncs;
  y.stream_syncs += r.syncs.stream_syncs, y.event_syncs += r.syncs.event_syncs;
  y.gpu_idle_after_ns += r.syncs.gpu_idle_after_ns;
  y.copies += r.syncs.copies, y.copy_ns += r.syncs.copy_ns;
  y.gpu_idle_after_copies_ns += r.syncs.gpu_idle_after_copies_ns;
  y.readback_gaps += r.syncs.readback_gaps;
  y.setup_syncs += r.syncs.setup_syncs, y.setup_ns += r.syncs.setup_ns, y.setup_idle_ns += r.syncs.setup_idle_ns;
  merge_sync_sites(r.syncs, &y);
  MemcpyStats& c = p->memcpys;
  const MemcpyStats& o = r.memcpys;
  c.count += o.count, c.bytes += o.bytes, c.time_ns += o.time_ns, c.htod += o.htod, c.dtoh += o.dtoh;
  c.dtod += o.dtod, c.other += o.other, c.pageable += o.pageable, c.pageable_ns += o.pageable_ns;
  c.pageable_bytes += o.pageable_bytes, c.synchronous += o.synchronous, c.synchronous_ns += o.synchronous_ns;
  c.memsets += o.memsets, c.memset_ns += o.memset_ns;
  for (const CopyGroup& g : o.groups) {
    auto it = std::find_if(c.groups.begin(), c.groups.end(), [&](const CopyGroup& h) {
      return h.direction == g.direction && h.own_stream == g.own_stream && h.memory == g.memory;
    });
    if (it == c.groups.end()) {
      c.groups.push_back(g);
    } else {
      it->add(g);
    }
  }
  detail::sort_copy_groups(c.groups);
  LaunchStats& l = p->launches;
  l.short_kernels += r.launches.short_kernels;
  l.graph_ops += r.launches.graph_ops;
  l.synchronous_copies += r.launches.synchronous_copies;
  l.backlog_ops += r.launches.backlog_ops;
  l.late_launch_idle_ns += r.launches.late_launch_idle_ns;
  l.host_not_launching_ns += r.launches.host_not_launching_ns;
  l.long_launch_ns += r.launches.long_launch_ns;
  l.runtime_outliers += r.launches.runtime_outliers;
  l.launch_delay_outliers += r.launches.launch_delay_outliers;
  l.max_queue_depth = std::max(l.max_queue_depth, r.launches.max_queue_depth);
  if (l.first_op_delay_ns == 0 && r.launches.first_op_delay_ns > 0)  // the first rank that shows it
    l.first_op_delay_ns = r.launches.first_op_delay_ns, l.first_op_delay_rank = x.rank,
    l.clock_offset_bound_ns = r.launches.clock_offset_bound_ns;
  detail::add_stats(r.trace_stats, p);
  for (const FileQuality& q : r.trace_quality.files) p->trace_quality.files.push_back(q);
  if (r.window.end > r.window.start || !r.devices.empty()) {
    const TimeRange w = shifted(r.window, x.offset);
    if (!*any_window) p->window = w, *any_window = true;
    p->window.start = std::min(p->window.start, w.start);
    p->window.end = std::max(p->window.end, w.end);
  }
}

// Categories and hotspots from every rank's name sketches; launch statistics
// from their launch sketches.
void pool_durations(const std::vector<Member>& m, const AnalysisOptions& opt, Profile* p) {
  constexpr std::size_t kPooledCap = std::size_t{1} << 20;  // one accumulator per name: exact for longer
  struct Pooled {
    KernelCategory category = KernelCategory::other;
    DurationSketch d;
  };
  std::map<std::string, Pooled> names;
  std::array<DurationSketch, 3> launch;
  for (const Member& x : m) {
    for (const detail::RankParts::Name& n : x.d->parts->names) {
      Pooled& pool = names[n.name];
      pool.category = n.category;
      pool.d.merge(n.durations, kPooledCap);
    }
    for (int q = 0; q < 3; ++q) launch[q].merge(x.d->parts->launch[q], kPooledCap);
  }
  std::array<DurationSketch, kKernelCategoryCount> by_category;
  TimeNs gpu_time = 0;
  for (const auto& [name, pool] : names) {
    by_category[static_cast<int>(pool.category)].merge(pool.d, kPooledCap);
    gpu_time += pool.d.stats().total;
  }
  p->kernel_time_ns = gpu_time;
  for (const auto& [name, pool] : names) {
    Hotspot h;
    h.name = name;
    h.category = pool.category;
    h.stats = pool.d.stats();
    h.share = detail::ratio(h.stats.total, gpu_time);
    h.tensor_cores = is_tensor_core_kernel(h.name, h.category);
    h.category_rule = category_rule_text(h.name, h.category);
    p->hotspots.push_back(std::move(h));
  }
  std::stable_sort(p->hotspots.begin(), p->hotspots.end(), [](const Hotspot& a, const Hotspot& b) {
    return a.stats.total != b.stats.total ? a.stats.total > b.stats.total : a.name < b.name;
  });
  if (opt.max_hotspots && p->hotspots.size() > opt.max_hotspots) p->hotspots.resize(opt.max_hotspots);
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    if (by_category[c].count() == 0) continue;
    CategoryTime ct;
    ct.category = static_cast<KernelCategory>(c);
    ct.stats = by_category[c].stats();
    ct.time_ns = ct.stats.total;
    ct.count = ct.stats.count;
    ct.share = detail::ratio(ct.time_ns, gpu_time);
    p->categories.push_back(ct);
  }
  std::stable_sort(p->categories.begin(), p->categories.end(),
                   [](const CategoryTime& a, const CategoryTime& b) { return a.time_ns > b.time_ns; });
  LaunchStats& l = p->launches;
  l.cpu_launch = launch[detail::OpTotals::kCpu].stats();
  l.gpu_duration = launch[detail::OpTotals::kGpu].stats();
  l.launch_delay = launch[detail::OpTotals::kDelay].stats();
  l.launches = l.cpu_launch.count;
  l.short_kernel_share = l.launches ? double(l.short_kernels) / double(l.launches) : 0.0;
}

}  // namespace

// [SECTION] Checking a job's files -----------------------------------------------------------

namespace {

std::string some_files(const std::vector<std::string>& files) {
  std::string s;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i == 3 && files.size() > 4) return s + " and " + std::to_string(files.size() - 3) + " more";
    s += (s.empty() ? "" : ", ") + files[i];
  }
  return s;
}

// "2–5, 9" for {2, 3, 4, 5, 9}.
std::string rank_ranges(const std::vector<std::int32_t>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j > i) s += "–" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}

std::string run_words(const RankDigest& d) {
  std::string s = d.command_line.empty() ? "no command line recorded" : "command `" + d.command_line + "`";
  if (d.world_size > 0) s += ", " + std::to_string(d.world_size) + " ranks";
  return s;
}

}  // namespace

JobCheck check_job(std::vector<RankDigest>& digests) {
  JobCheck c;
  // Runs: the files of one run recorded the same command line and job size.
  std::vector<std::pair<const RankDigest*, std::vector<std::string>>> runs;
  for (const RankDigest& d : digests) {
    auto it = std::find_if(runs.begin(), runs.end(), [&](const auto& r) {
      return r.first->command_line == d.command_line && r.first->world_size == d.world_size;
    });
    if (it == runs.end())
      runs.push_back({&d, {d.file}});
    else
      it->second.push_back(d.file);
  }
  if (runs.size() > 1) {
    c.refused = "files of " + std::to_string(runs.size()) +
                " different runs (their recorded command lines or job "
                "sizes differ), analyse each run on its own:";
    for (std::size_t i = 0; i < runs.size(); ++i)
      c.refused +=
          std::string(i ? ";" : "") + " " + some_files(runs[i].second) + " (" + run_words(*runs[i].first) + ")";
    return c;
  }
  // The same rank twice: the first file keeps it.
  std::map<std::int32_t, std::string> owner;
  std::vector<RankDigest> kept;
  for (RankDigest& d : digests) {
    if (d.own_rank >= 0) {
      auto [it, added] = owner.emplace(d.own_rank, d.file);
      if (!added) {
        c.left_out.push_back({d.file, "rank " + std::to_string(d.own_rank) + " again (also " + it->second + ")"});
        continue;
      }
    }
    kept.push_back(std::move(d));
  }
  digests = std::move(kept);
  // Ranks of the job with no file.
  const std::int32_t world = digests.empty() ? 0 : digests.front().world_size;
  const bool all_known =
      std::all_of(digests.begin(), digests.end(), [](const RankDigest& d) { return d.own_rank >= 0; });
  if (world > 0 && all_known) {
    std::vector<std::int32_t> missing;
    for (std::int32_t r = 0; r < world; ++r)
      if (!owner.count(r)) missing.push_back(r);
    if (!missing.empty())
      c.left_out.push_back({"", std::to_string(missing.size()) + " of the job's " + std::to_string(world) +
                                    " ranks have no file (" + (missing.size() == 1 ? "rank " : "ranks ") +
                                    rank_ranges(missing) + ")"});
  }
  return c;
}

// [SECTION] Entry point ----------------------------------------------------------------------

std::vector<std::vector<std::uint32_t>> matched_collective_parts(const std::vector<RankDigest>& digests) {
  if (digests.size() < 2) return {};
  std::vector<Member> m;
  for (const RankDigest& d : digests) m.push_back({&d});
  assign_ranks(m);
  return matched_collectives(m, reference(m)).parts;
}

Profile analyze_digests(std::vector<RankDigest> digests, const AnalysisOptions& opt) {
  Profile p;
  if (digests.empty()) return p;
  std::vector<Member> m;
  for (const RankDigest& d : digests) m.push_back({&d});
  assign_ranks(m);
  const Matching matched = matched_collectives(m, reference(m));
  p.clock_alignment = align_clocks(m, matched);

  p.source = digests[0].profile.source;
  p.producer = digests[0].profile.producer;
  bool any_window = false;
  detail::Evidence ev(opt.max_ranges_per_finding);
  for (const Member& x : m) {
    if (x.d->profile.source != p.source) p.source = TraceSource::unknown;
    if (!x.d->file.empty()) p.files.push_back(x.d->file);
    add_rank(x, &p, &any_window);
    detail::Evidence theirs = x.d->parts->evidence;
    theirs.shift(x.offset);
    ev.merge(theirs);
  }
  pool_durations(m, opt, &p);
  std::stable_sort(
      p.collective_sites.begin(), p.collective_sites.end(),
      [](const CollectiveSite& a, const CollectiveSite& b) { return a.durations.total > b.durations.total; });
  p.collective_summary = detail::summarize_sites(p.collective_sites);
  std::vector<const Profile*> rank_profiles;
  for (const Member& x : m) rank_profiles.push_back(&x.d->profile);
  detail::pool_op_tables(rank_profiles, detail::kDigestOpKernels, &p);
  detail::pool_module_splits(rank_profiles, &p);
  detail::summarize_steps(&p);
  detail::compute_skew(&p);
  cross_rank(m, matched, &p);
  std::vector<const WorkloadKind*> kinds;
  for (const Member& x : m) kinds.push_back(&x.d->profile.workload);
  p.workload = detail::pool_workloads(kinds);
  detail::recognise_optimizer(p, ev, opt.thresholds, &p.workload);
  detail::note_compiled_copies(p.memcpys, &p.workload);
  p.findings = detail::find_problems(p, ev, opt);
  p.idle_charges = detail::charge_idle(p, ev, opt);
  pool_host_where(m, &p);
  detail::quote_host_where(&p);
  detail::fit_to_workload(p.workload, p.findings, detail::graph_word_of(p.devices));
  settle_findings(&p);
  return p;
}

}  // namespace gpuscope
