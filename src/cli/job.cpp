#include "cli/job.h"

#include <algorithm>
#include <optional>
#include <set>

#include "analysis/graph/savings.h"
#include "analysis/job.h"
#include "analysis/parallel.h"
#include "cli/command.h"
#include "import/open_trace.h"

namespace gpuscope::cli {

namespace {

// "FILE: problem" -> "problem" (open_trace's errors name the file first).
std::string problem_of(const std::string& file, const std::string& what) {
  const std::string prefix = file + ": ";
  return what.starts_with(prefix) ? what.substr(prefix.size()) : what;
}

void check_device(const std::vector<std::string>& files, const std::set<std::uint32_t>& seen, const JobOptions& o) {
  if (!o.device_given || seen.count(o.analysis.device)) return;
  std::string have;
  for (std::uint32_t d : seen) have += (have.empty() ? "" : ", ") + std::to_string(d);
  throw Error(files.front() + (files.size() > 1 ? " …" : "") + ": no GPU " + std::to_string(o.analysis.device) +
              " (GPUs with activity: " + (have.empty() ? "none" : have) + ")");
}

Profile analyze_one(const std::string& file, const JobOptions& o) {
  const Trace t = open_trace(file);
  std::set<std::uint32_t> seen;
  for (const Track& tr : t.tracks())
    if (tr.kind == TrackKind::gpu) seen.insert(tr.device);
  check_device({file}, seen, o);
  const JobInput in{&t, file};
  return graph::analyze_and_simulate(std::span<const JobInput>(&in, 1), o.analysis, o.simulate);
}

}  // namespace

Profile analyze_files(const std::vector<std::string>& files, const JobOptions& o) {
  if (files.size() == 1) return analyze_one(files.front(), o);
  // Each file alone: opened, digested, freed.
  std::vector<std::optional<RankDigest>> digests(files.size());
  std::vector<std::string> errors(files.size());
  parallel_for(files.size(), o.jobs, [&](std::size_t i) {
    try {
      const Trace t = open_trace(files[i]);
      digests[i] = digest_rank(t, files[i], o.analysis);
    } catch (const std::exception& e) {
      errors[i] = problem_of(files[i], e.what());
    }
  });
  std::vector<LeftOut> left_out;
  std::vector<RankDigest> good;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!digests[i]) {
      left_out.push_back({files[i], errors[i]});
      continue;
    }
    seen.insert(digests[i]->gpus.begin(), digests[i]->gpus.end());
    good.push_back(std::move(*digests[i]));
  }
  if (good.empty()) {
    std::string why;
    for (const LeftOut& l : left_out) why += (why.empty() ? "" : "; ") + l.file + ": " + l.problem;
    throw Error(files.front() + " …: none of the " + std::to_string(files.size()) + " files can be analysed (" + why +
                ")");
  }
  const JobCheck check = check_job(good);
  if (!check.refused.empty()) throw Error(files.front() + " …: " + check.refused);
  for (const LeftOut& l : check.left_out) left_out.push_back(l);
  std::vector<std::string> kept;
  for (const RankDigest& d : good) kept.push_back(d.file);
  check_device(kept, seen, o);

  Profile p = analyze_digests(std::move(good), o.analysis);
  p.left_out = std::move(left_out);
  if (o.simulate) {
    graph::SimulationOptions so;
    so.device = o.analysis.device;
    graph::simulate_findings_each(
        kept.size(),
        [&](std::size_t i, const std::function<void(const Trace&)>& f) {
          const Trace t = open_trace(kept[i]);
          f(t);
        },
        &p, so, o.jobs);
  }
  return p;
}

}  // namespace gpuscope::cli
