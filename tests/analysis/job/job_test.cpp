// Jobs analysed one rank at a time (analysis/job/job.h): the planted slow rank is
// named first by the wait it caused, clocks off by seconds align within
// 10 µs, duration sketches merge to the pooled medians, and a job's files
// that disagree are named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/job/job.h"
#include "analysis/util/stats.h"
#include "import/open_trace.h"
#include "import/synthetic_job.h"
#include "support/real_traces.h"
#include "support/test_traces.h"
#include "trace/builder.h"

namespace gpuscope {
namespace {

constexpr TimeNs kUs = 1'000;

Profile analyze_synthetic(const SyntheticJob& job, const AnalysisOptions& o = {}) {
  std::vector<RankDigest> digests;
  for (std::uint32_t r = 0; r < job.ranks(); ++r) {
    const Trace t = job.rank_trace(r);  // freed at the end of each iteration
    digests.push_back(digest_rank(t, "rank-" + std::to_string(r) + ".gscope", o));
  }
  return analyze_digests(std::move(digests), o);
}

TEST(Job, PlantedSlowRankIsNamedFirstInTwentySeededJobs) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    SyntheticJobOptions o;
    o.ranks = 4 + static_cast<std::uint32_t>(rng() % 9);  // 4..12
    o.kernels = 1'000;
    o.kernels_per_step = 50;
    o.slow_rank = static_cast<std::int32_t>(rng() % o.ranks);
    o.slowdown = 1.1;
    o.jitter = 0.05;
    o.max_clock_offset_ns = 3'000'000'000;
    o.seed = seed;
    const SyntheticJob job(o);
    const Profile p = analyze_synthetic(job);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(o.ranks) + " ranks, slow rank " +
                 std::to_string(o.slow_rank));
    ASSERT_EQ(p.stragglers.size(), o.ranks);
    EXPECT_EQ(p.stragglers.front().rank, o.slow_rank);
    EXPECT_EQ(p.collectives.size(), job.steps() * o.buckets);
    const auto it =
        std::find_if(p.findings.begin(), p.findings.end(), [](const Finding& f) { return f.id == "straggler"; });
    ASSERT_NE(it, p.findings.end());
    EXPECT_NE(it->title.find("Rank " + std::to_string(o.slow_rank) + " "), std::string::npos) << it->title;
    // Alignment: rank r's shift puts its clock on rank 0's.
    for (const RankSummary& r : p.ranks) {
      const TimeNs truth = job.clock_offset(0) - job.clock_offset(static_cast<std::uint32_t>(r.rank));
      EXPECT_LE(std::llabs(r.clock_offset_ns - truth), 10 * kUs) << "rank " << r.rank;
      EXPECT_LE(r.clock_residual_ns, 10 * kUs) << "rank " << r.rank;
    }
    // Each step's critical rank is the slow one, and it waited least.
    for (const JobStep& s : p.job_steps) EXPECT_EQ(s.critical_rank, o.slow_rank) << "step " << s.index;
    for (const Straggler& s : p.stragglers) {
      if (s.rank != o.slow_rank) {
        EXPECT_GT(s.waited_ns, p.stragglers.front().waited_ns);
      }
    }
  }
}

TEST(Job, LastArrivalAndWaitOfEachCollective) {
  SyntheticJobOptions o;
  o.ranks = 3;
  o.kernels = 100;
  o.slow_rank = 2;
  o.slowdown = 1.5;
  o.jitter = 0;
  const SyntheticJob job(o);
  const Profile p = analyze_synthetic(job);
  ASSERT_FALSE(p.collectives.empty());
  for (const CollectiveInstance& c : p.collectives) {
    EXPECT_EQ(c.last_rank, 2);
    EXPECT_EQ(c.kind, "all_reduce");
    EXPECT_GT(c.wait_ns, 0);
    EXPECT_GE(c.step, 0);
  }
  // Without noise the two fast ranks wait equally: the total is twice one's wait.
  TimeNs caused = 0, waited = 0;
  for (const Straggler& s : p.stragglers)
    (s.rank == 2 ? caused : waited) += s.rank == 2 ? s.wait_caused_ns : s.waited_ns;
  EXPECT_EQ(caused, waited);
}

TEST(Job, SketchMediansAreExactWhileFewValuesAndClose) {
  std::mt19937_64 rng(7);
  std::vector<TimeNs> all, a, b;
  for (int i = 0; i < 3000; ++i) {
    const TimeNs v = 1000 * static_cast<TimeNs>(rng() % 500);  // quantized: few distinct values
    (i % 3 ? a : b).push_back(v);
    all.push_back(v);
  }
  DurationSketch s = DurationSketch::of(a);
  s.merge(DurationSketch::of(b));
  EXPECT_TRUE(s.exact());
  const DurationStats want = summarize(all);
  EXPECT_EQ(s.stats().median, want.median);
  EXPECT_EQ(s.stats().count, want.count);
  EXPECT_EQ(s.stats().total, want.total);
  // Many distinct values: within 0.1 %.
  std::vector<TimeNs> wide, wide_all;
  for (int i = 0; i < 20000; ++i) wide.push_back(1'000'000 + static_cast<TimeNs>(rng() % 1'000'000));
  wide_all = wide;
  const DurationSketch w = DurationSketch::of(wide);
  EXPECT_FALSE(w.exact());
  const TimeNs exact = summarize(wide_all).median;
  EXPECT_LE(std::llabs(w.stats().median - exact), exact / 1000);
}

// Large lists are sorted by radix: whatever the values (negative, equal,
// ranges of 2^10 to 2^45, outliers at ±2^62, all equal), the sketch holds each
// distinct value with its count, ascending, as a comparison sort gives, and
// the values are left sorted.
TEST(Job, SketchOfManyValuesIsTheSortedValues) {
  std::mt19937_64 rng(11);
  std::vector<std::vector<TimeNs>> cases;
  for (TimeNs span : {TimeNs{1} << 10, TimeNs{1} << 33, TimeNs{1} << 45}) {
    std::vector<TimeNs> v;
    for (int i = 0; i < 50'000; ++i)
      v.push_back(static_cast<TimeNs>(rng() % static_cast<std::uint64_t>(span)) - span / 2);
    cases.push_back(v);
  }
  std::vector<TimeNs> outliers(30'000, 5'000);
  outliers[17] = -(TimeNs{1} << 62);
  outliers[29'000] = TimeNs{1} << 62;
  for (int i = 0; i < 3000; ++i)
    outliers[static_cast<std::size_t>(rng() % outliers.size())] = static_cast<TimeNs>(rng() % 100);
  cases.push_back(outliers);
  cases.push_back(std::vector<TimeNs>(4096, -3));
  for (std::vector<TimeNs>& v : cases) {
    std::vector<TimeNs> want = v;
    std::sort(want.begin(), want.end());
    std::vector<std::pair<TimeNs, std::uint64_t>> items;
    for (TimeNs x : want) {
      if (!items.empty() && items.back().first == x)
        ++items.back().second;
      else
        items.push_back({x, 1});
    }
    const DurationSketch s = DurationSketch::of(v, v.size());
    EXPECT_EQ(v, want);
    const DurationSketch::State st = s.state();
    EXPECT_TRUE(st.exact);
    EXPECT_EQ(st.items, items);
    EXPECT_EQ(st.count, want.size());
    EXPECT_EQ(st.min, want.front());
    EXPECT_EQ(st.max, want.back());
  }
}

// The two real ranks: the job's pooled medians are the exact medians of both
// traces' durations together (as when the job was analysed all at once).
TEST(Job, RealTwoRankJobKeepsExactPooledMedians) {
  const Trace a = open_trace(testing::real_trace("hta-sampled-rank0.json.gz"));
  const Trace b = open_trace(testing::real_trace("hta-sampled-rank1.json.gz"));
  const JobInput in[] = {{&a, "rank0"}, {&b, "rank1"}};
  const Profile p = analyze_job(in);
  ASSERT_EQ(p.ranks.size(), 2u);
  ASSERT_FALSE(p.hotspots.empty());
  for (std::size_t h = 0; h < std::min<std::size_t>(p.hotspots.size(), 10); ++h) {
    std::vector<TimeNs> d;
    for (const Trace* t : {&a, &b})
      for (std::size_t i = 0; i < t->kernels().size(); ++i)
        if (t->str(t->kernels().name[i]) == p.hotspots[h].name)
          d.push_back(t->kernels().end[i] - t->kernels().start[i]);
    const DurationStats want = summarize(d);
    EXPECT_EQ(p.hotspots[h].stats.median, want.median) << p.hotspots[h].name;
    EXPECT_EQ(p.hotspots[h].stats.count, want.count) << p.hotspots[h].name;
  }
}

// The two real ranks: every row of the job's op table (1,111 rows of name ×
// shapes × types) is the sum of the two ranks' rows, each analysed alone,
// and every row of either rank is in it.
TEST(Job, RealTwoRankJobOpTableIsTheSumOfItsRanks) {
  const Trace a = open_trace(testing::real_trace("hta-sampled-rank0.json.gz"));
  const Trace b = open_trace(testing::real_trace("hta-sampled-rank1.json.gz"));
  const JobInput in[] = {{&a, "rank0"}, {&b, "rank1"}};
  const Profile p = analyze_job(in);
  const Profile ra = analyze(a), rb = analyze(b);
  ASSERT_FALSE(ra.ops.empty());
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, OpRow> want;
  for (const Profile* r : {&ra, &rb})
    for (const OpRow& row : r->ops) {
      OpRow& w = want[Key{row.name, row.shapes, row.dtypes}];
      w.calls += row.calls, w.gpu_total_ns += row.gpu_total_ns, w.gpu_self_ns += row.gpu_self_ns;
      w.cpu_total_ns += row.cpu_total_ns, w.cpu_self_ns += row.cpu_self_ns, w.kernels_total += row.kernels_total;
      w.launch_ns += row.launch_ns;
    }
  ASSERT_EQ(p.ops.size(), want.size());
  for (const OpRow& row : p.ops) {
    const auto it = want.find(Key{row.name, row.shapes, row.dtypes});
    ASSERT_NE(it, want.end()) << row.name;
    EXPECT_EQ(row.calls, it->second.calls) << row.name;
    EXPECT_EQ(row.gpu_total_ns, it->second.gpu_total_ns) << row.name;
    EXPECT_EQ(row.gpu_self_ns, it->second.gpu_self_ns) << row.name;
    EXPECT_EQ(row.cpu_total_ns, it->second.cpu_total_ns) << row.name;
    EXPECT_EQ(row.cpu_self_ns, it->second.cpu_self_ns) << row.name;
    EXPECT_EQ(row.kernels_total, it->second.kernels_total) << row.name;
    EXPECT_EQ(row.launch_ns, it->second.launch_ns) << row.name;
  }
  EXPECT_EQ(p.op_summary.op_calls, ra.op_summary.op_calls + rb.op_summary.op_calls);
  EXPECT_EQ(p.op_summary.gpu_ops, ra.op_summary.gpu_ops + rb.op_summary.gpu_ops);
  EXPECT_EQ(p.op_summary.with_shapes, ra.op_summary.with_shapes + rb.op_summary.with_shapes);
  // Per name too, heaviest first.
  for (std::size_t i = 1; i < p.op_names.size(); ++i)
    EXPECT_GE(p.op_names[i - 1].gpu_total_ns, p.op_names[i].gpu_total_ns);
}

// The two real ranks' forward/backward split: the job's is the sum of the
// ranks', each analysed alone, module by module.
TEST(Job, RealTwoRankJobModuleSplitIsTheSumOfItsRanks) {
  const Trace a = open_trace(testing::real_trace("hta-sampled-rank0.json.gz"));
  const Trace b = open_trace(testing::real_trace("hta-sampled-rank1.json.gz"));
  const JobInput in[] = {{&a, "rank0"}, {&b, "rank1"}};
  const ModuleSplit p = analyze_job(in).module_split;
  const ModuleSplit ra = analyze(a).module_split, rb = analyze(b).module_split;
  ASSERT_TRUE(ra.known && rb.known && p.known);
  ASSERT_GT(ra.linked, 0u);
  EXPECT_EQ(p.backward_ops, ra.backward_ops + rb.backward_ops);
  EXPECT_EQ(p.linked, ra.linked + rb.linked);
  EXPECT_EQ(p.unlinked, ra.unlinked + rb.unlinked);
  EXPECT_EQ(p.backward_gpu_ns, ra.backward_gpu_ns + rb.backward_gpu_ns);
  EXPECT_EQ(p.unlinked_gpu_ns, ra.unlinked_gpu_ns + rb.unlinked_gpu_ns);
  std::map<std::string, ModuleTime> want;
  for (const ModuleSplit* r : {&ra, &rb})
    for (const ModuleTime& m : r->modules) {
      ModuleTime& w = want[m.name];
      w.forward_gpu_ns += m.forward_gpu_ns, w.backward_gpu_ns += m.backward_gpu_ns, w.backward_ops += m.backward_ops;
    }
  ASSERT_EQ(p.modules.size(), want.size());
  for (const ModuleTime& m : p.modules) {
    EXPECT_EQ(m.forward_gpu_ns, want[m.name].forward_gpu_ns) << m.name;
    EXPECT_EQ(m.backward_gpu_ns, want[m.name].backward_gpu_ns) << m.name;
    EXPECT_EQ(m.backward_ops, want[m.name].backward_ops) << m.name;
  }
}

TEST(Job, FilesOfDifferentRunsAreRefusedNamingThem) {
  SyntheticJobOptions o;
  o.ranks = 2;
  o.kernels = 100;
  o.command_line = "train --run a";
  const SyntheticJob run_a(o);
  o.command_line = "train --run b";
  const SyntheticJob run_b(o);
  std::vector<RankDigest> d;
  d.push_back(digest_rank(run_a.rank_trace(0), "a0"));
  d.push_back(digest_rank(run_a.rank_trace(1), "a1"));
  d.push_back(digest_rank(run_b.rank_trace(0), "b0"));
  const JobCheck c = check_job(d);
  EXPECT_NE(c.refused.find("2 different runs"), std::string::npos) << c.refused;
  EXPECT_NE(c.refused.find("a0, a1"), std::string::npos) << c.refused;
  EXPECT_NE(c.refused.find("b0"), std::string::npos) << c.refused;
}

TEST(Job, DuplicateAndMissingRanksAreLeftOutAndSaid) {
  SyntheticJobOptions o;
  o.ranks = 5;
  o.kernels = 100;
  const SyntheticJob job(o);
  std::vector<RankDigest> d;
  d.push_back(digest_rank(job.rank_trace(0), "r0"));
  d.push_back(digest_rank(job.rank_trace(1), "r1"));
  d.push_back(digest_rank(job.rank_trace(1), "r1-again"));
  d.push_back(digest_rank(job.rank_trace(4), "r4"));
  const JobCheck c = check_job(d);
  EXPECT_TRUE(c.refused.empty()) << c.refused;
  ASSERT_EQ(d.size(), 3u);
  ASSERT_EQ(c.left_out.size(), 2u);
  EXPECT_EQ(c.left_out[0].file, "r1-again");
  EXPECT_NE(c.left_out[0].problem.find("rank 1 again (also r1)"), std::string::npos) << c.left_out[0].problem;
  EXPECT_EQ(c.left_out[1].file, "");
  EXPECT_NE(c.left_out[1].problem.find("2 of the job's 5 ranks have no file (ranks 2–3)"), std::string::npos)
      << c.left_out[1].problem;
  const Profile p = analyze_digests(std::move(d));
  EXPECT_EQ(p.stragglers.size(), 3u);
}

// The job's op table is its ranks' tables pooled: every row's calls, times,
// kernels and FLOPs are the sums over the ranks, the rates are recomputed
// from the sums, the roofline fraction is the ranks' weighted by their GPU
// time, and the top rows' kernels are the ranks' kernels summed.
TEST(Job, OpTableIsTheSumOfTheRanksTables) {
  SyntheticJobOptions o;
  o.ranks = 4;
  o.kernels = 2'000;
  o.framework_ops = true;
  o.slow_rank = 2;
  const SyntheticJob job(o);
  std::vector<Profile> alone;
  std::vector<RankDigest> digests;
  for (std::uint32_t r = 0; r < job.ranks(); ++r) {
    const Trace t = job.rank_trace(r);
    alone.push_back(analyze(t));
    digests.push_back(digest_rank(t, "rank-" + std::to_string(r) + ".gscope"));
  }
  const Profile p = analyze_digests(std::move(digests));
  ASSERT_FALSE(p.ops.empty());
  ASSERT_EQ(p.ops.size(), alone[0].ops.size());  // every rank runs the same ops
  EXPECT_EQ(p.op_summary.op_calls, 4 * alone[0].op_summary.op_calls);
  EXPECT_EQ(p.op_summary.attributed, 4 * alone[0].op_summary.attributed);
  EXPECT_TRUE(p.op_summary.shapes_recorded);
  auto find = [](const std::vector<OpRow>& rows, const OpRow& like) -> const OpRow* {
    for (const OpRow& r : rows)
      if (r.name == like.name && r.shapes == like.shapes && r.dtypes == like.dtypes) return &r;
    return nullptr;
  };
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const OpRow& row = p.ops[i];
    if (i > 0) {
      EXPECT_GE(p.ops[i - 1].gpu_total_ns, row.gpu_total_ns);  // heaviest first
    }
    std::uint64_t calls = 0, kernels = 0;
    TimeNs gpu = 0, cpu = 0, launch = 0;
    double flops = 0, weighted = 0;
    for (const Profile& a : alone) {
      const OpRow* r = find(a.ops, row);
      ASSERT_TRUE(r) << row.name;
      calls += r->calls, kernels += r->kernels_total, gpu += r->gpu_total_ns, cpu += r->cpu_total_ns;
      launch += r->launch_ns;
      flops += r->flops.value_or(0);
      weighted += r->roofline_fraction.value_or(0) * static_cast<double>(r->gpu_total_ns);
    }
    EXPECT_EQ(row.calls, 4 * find(alone[0].ops, row)->calls) << row.name;
    EXPECT_EQ(row.calls, calls) << row.name;
    EXPECT_EQ(row.kernels_total, kernels) << row.name;
    EXPECT_EQ(row.gpu_total_ns, gpu) << row.name;
    EXPECT_EQ(row.cpu_total_ns, cpu) << row.name;
    EXPECT_EQ(row.launch_ns, launch) << row.name;
    if (!row.flops) continue;
    EXPECT_NEAR(*row.flops, flops, 1e-9 * flops) << row.name;
    ASSERT_TRUE(row.achieved_tflops);
    EXPECT_NEAR(*row.achieved_tflops, flops / (static_cast<double>(gpu) * 1e-9) / 1e12, 1e-9) << row.name;
    ASSERT_TRUE(row.roofline_fraction) << row.name;
    EXPECT_NEAR(*row.roofline_fraction, weighted / static_cast<double>(gpu), 1e-9) << row.name;
    EXPECT_EQ(row.bound, find(alone[0].ops, row)->bound);
  }
  // The four aten ops, each one kernel a call: all of their kernels are listed.
  for (const char* name : {"aten::conv2d", "aten::mm", "aten::cudnn_batch_norm", "aten::add"}) {
    auto it = std::find_if(p.op_names.begin(), p.op_names.end(), [&](const OpRow& r) { return r.name == name; });
    ASSERT_NE(it, p.op_names.end()) << name;
    ASSERT_EQ(it->top_kernels.size(), 1u) << name;
    EXPECT_EQ(it->top_kernels[0].count, it->calls) << name;
    EXPECT_EQ(it->top_kernels[0].time_ns, it->gpu_total_ns) << name;
  }
  // Each step's row: the step of every rank, with every rank's kernels (not
  // only those of the ranks where it was among the heaviest rows).
  for (std::size_t i = 0; i < 20 && i < p.op_names.size(); ++i) {
    const OpRow& r = p.op_names[i];
    if (!r.name.starts_with("ProfilerStep#")) continue;
    EXPECT_EQ(r.calls, 4u);
    std::uint64_t listed = 0;
    for (const OpKernel& k : r.top_kernels) listed += k.count;
    EXPECT_TRUE(r.top_kernels.empty() || listed == r.kernels_total) << r.name;
  }
}

// A rank whose file lost all its kernels has no collectives to align on: it
// stays on its own clock, and every other rank is still aligned.
TEST(Job, ARankWithoutKernelsDoesNotSwitchAlignmentOffForTheOthers) {
  SyntheticJobOptions o;
  o.ranks = 4;
  o.kernels = 200;
  o.max_clock_offset_ns = 3'000'000'000;
  const SyntheticJob job(o);
  std::vector<RankDigest> digests;
  for (std::uint32_t r = 0; r < job.ranks(); ++r) {
    const Trace full = job.rank_trace(r);
    if (r != 2) {
      digests.push_back(digest_rank(full, "rank-" + std::to_string(r) + ".gscope", {}));
      continue;
    }
    TraceBuilder b;  // rank 2: its meta and one API call, no kernel
    b.meta() = full.meta();
    ApiCallRow a;
    a.track = b.cpu_track(1, 1);
    a.end = 10;
    a.name = b.intern("cudaLaunchKernel");
    b.add_api_call(a);
    digests.push_back(digest_rank(b.freeze(), "rank-2.gscope", {}));
  }
  const std::vector<std::vector<std::uint32_t>> parts = matched_collective_parts(digests);
  ASSERT_FALSE(parts.empty());
  for (const std::vector<std::uint32_t>& row : parts) EXPECT_EQ(row[2], kNoCollectivePart);
  const Profile p = analyze_digests(std::move(digests), {});
  EXPECT_EQ(p.clock_alignment.rfind("aligned on the ends of", 0), 0u) << p.clock_alignment;
  EXPECT_NE(p.clock_alignment.find("rank 2 without collectives: clock taken as recorded"), std::string::npos)
      << p.clock_alignment;
  for (const RankSummary& r : p.ranks) {
    if (r.rank == 2) continue;
    const TimeNs truth = job.clock_offset(0) - job.clock_offset(static_cast<std::uint32_t>(r.rank));
    EXPECT_LE(std::llabs(r.clock_offset_ns - truth), 10 * kUs) << "rank " << r.rank;
  }
  EXPECT_EQ(p.collectives.size(), job.steps() * o.buckets);
}

// Two ranks on two hosts (rank 1's clock 3 ms ahead) that recorded different
// windows: rank 0 steps 10–15, rank 1 steps 11–15. Each step: compute, then
// a 1 MiB and a 64 MiB all-reduce whose parts end together on both ranks; in
// step 13 rank 1 computes 2 ms longer, so rank 0 waits in the 1 MiB one.
// Matched in order, rank 0's step 10 would pair with rank 1's step 11 (and
// the clocks would be off by a step); matched by call site, the same
// collective of the same step pairs.
TEST(Job, CollectivesAreMatchedByCallSiteAcrossDifferentWindows) {
  constexpr TimeNs kSkew = 3'000 * kUs;
  testing::TraceFactory f0(0), f1(1);
  for (testing::TraceFactory* f : {&f0, &f1}) {
    f->meta().world_size = 2;
    f->device(0);
  }
  f0.meta().host = "node-a";
  f1.meta().host = "node-b";
  TimeNs t = 1'000 * kUs;
  for (int step = 10; step <= 15; ++step) {
    const TimeNs s0 = t;
    TimeNs end_a = 0;
    for (int r = 0; r < 2; ++r) {
      if (r == 1 && step == 10) continue;
      testing::TraceFactory& f = r ? f1 : f0;
      const TimeNs shift = r ? kSkew : 0;
      const TimeNs compute = r == 1 && step == 13 ? 3'000 * kUs : 1'000 * kUs;
      end_a = s0 + 3'000 * kUs + 200 * kUs;  // after the later rank's compute in step 13
      const TimeNs a_end = step == 13 ? end_a : s0 + 1'000 * kUs + 200 * kUs;
      f.kernel(0, 7, testing::names::kConvTensorCore, s0 + shift, s0 + compute + shift, s0 - 100 * kUs + shift);
      f.comm_op("nccl:all_reduce", s0 - 95 * kUs + shift, s0 - 85 * kUs + shift, "[[262144]]", R"(["float"])");
      f.kernel(0, 13, testing::names::kAllReduce, s0 + compute + shift, a_end + shift, s0 - 90 * kUs + shift);
      f.comm_op("nccl:all_reduce", s0 - 80 * kUs + shift, s0 - 70 * kUs + shift, "[[16777216]]", R"(["float"])");
      f.kernel(0, 13, testing::names::kAllReduce, a_end + shift, a_end + 1'000 * kUs + shift, s0 - 75 * kUs + shift);
      f.range("ProfilerStep#" + std::to_string(step), s0 - 200 * kUs + shift, a_end + 1'001 * kUs + shift, 1,
              RangeKind::annotation, "user_annotation");
    }
    t = s0 + 6'000 * kUs;
  }
  const Trace a = f0.build(), b = f1.build();
  const JobInput in[] = {{&a, "rank0.gscope"}, {&b, "rank1.gscope"}};
  const Profile p = analyze_job(in);
  EXPECT_NE(p.clock_alignment.find("aligned on the ends of 10 collectives matched by call site"), std::string::npos)
      << p.clock_alignment;
  ASSERT_EQ(p.collectives.size(), 10u);
  for (const RankSummary& r : p.ranks)
    if (r.rank == 1) {
      EXPECT_LE(std::llabs(r.clock_offset_ns + kSkew), 10 * kUs) << r.clock_offset_ns;
    }
  std::uint64_t waited = 0;
  for (const CollectiveInstance& c : p.collectives)
    if (c.wait_ns > 1'000 * kUs) {
      ++waited;
      EXPECT_EQ(c.last_rank, 1);
      EXPECT_EQ(c.bytes, 1u << 20);
      EXPECT_NEAR(double(c.wait_ns), 2'000.0 * kUs, 10.0 * kUs);
    }
  EXPECT_EQ(waited, 1u);
  // Every rank's sites, pooled by call site in the summary: the 1 MiB
  // all-reduce of 11 instances waited 2 ms beyond its fastest.
  EXPECT_EQ(p.collective_sites.size(), 4u);
  EXPECT_EQ(p.collective_summary.widest.bytes, 1u << 20);
  EXPECT_EQ(p.collective_summary.widest.durations.count, 11u);
  EXPECT_EQ(p.collective_summary.widest.rank, -1);
  EXPECT_EQ(p.collective_summary.widest.wait_ns, 2'000 * kUs);
}

// The real two-rank job (two ranks sampled from a 128-rank NCCL job, each
// file keeping a different subset of the collectives): matched by call site,
// the 4 collectives both files kept end within 100 µs of each other on the
// aligned clocks (in order, unrelated SendRecv kernels were paired and the
// residual was 14 ms).
TEST(Job, RealSampledRanksMatchByCallSite) {
  const Trace a = open_trace(testing::real_trace("hta-sampled-rank0.json.gz"));
  const Trace b = open_trace(testing::real_trace("hta-sampled-rank1.json.gz"));
  const JobInput in[] = {{&a, "hta-sampled-rank0.json.gz"}, {&b, "hta-sampled-rank1.json.gz"}};
  const Profile p = analyze_job(in);
  EXPECT_NE(p.clock_alignment.find("aligned on the ends of 4 collectives matched by call site"), std::string::npos)
      << p.clock_alignment;
  ASSERT_EQ(p.collectives.size(), 4u);
  std::vector<std::string> kinds;
  for (const CollectiveInstance& c : p.collectives) kinds.push_back(c.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"all_reduce", "all_gather", "all_reduce", "all_gather"}));
  for (const RankSummary& r : p.ranks) EXPECT_LE(r.clock_residual_ns, 100 * kUs) << "rank " << r.rank;
  ASSERT_FALSE(p.stragglers.empty());
  EXPECT_EQ(p.stragglers.front().rank, 1);
  EXPECT_EQ(p.stragglers.front().last_arrivals, 4u);
}

}  // namespace
}  // namespace gpuscope
