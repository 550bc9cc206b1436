#include "cli/job.h"

#include <algorithm>
#include <optional>
#include <set>

#include "analysis/digest_codec.h"
#include "analysis/graph/savings.h"
#include "analysis/job.h"
#include "analysis/parallel.h"
#include "cli/command.h"
#include "cli/mpi.h"
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

// A file's outcome between processes: 'D' and its digest's bytes, or 'E' and why it cannot be analysed.
void gather_digests(const std::vector<std::string>& files, std::vector<std::string>& outcomes,
                    std::vector<std::optional<RankDigest>>& digests, std::vector<std::string>& errors) {
  mpi::gather_items(
      files.size(), [&](std::size_t i) { return std::move(outcomes[i]); },
      [&](std::size_t i, std::string_view bytes) {
        try {
          if (bytes.starts_with("D"))
            digests[i] = decode_digest(bytes.substr(1));
          else if (bytes.starts_with("E"))
            errors[i] = std::string(bytes.substr(1));
          else
            throw DigestError("digest: no outcome mark");
        } catch (const DigestError& e) {
          throw Error(files[i] + ": its digest from process " + std::to_string(i % mpi::size()) + ": " + e.what());
        }
      });
}

}  // namespace

Profile analyze_files(const std::vector<std::string>& files, const JobOptions& o) {
  if (files.size() == 1) return mpi::quiet() ? Profile{} : analyze_one(files.front(), o);
  // Each file alone: opened, digested, freed; under MPI, each process its
  // share (file i: process i % P), gathered at process 0 (cli/mpi.h).
  std::vector<std::optional<RankDigest>> digests(files.size());
  std::vector<std::string> errors(files.size());
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (i % static_cast<std::size_t>(mpi::size()) == static_cast<std::size_t>(mpi::rank())) mine.push_back(i);
  // A process other than 0 keeps its files' outcomes as the bytes it sends
  // (made by the thread that digested the file: in parallel, and no digest
  // is kept beside its bytes).
  std::vector<std::string> outcomes(mpi::quiet() ? files.size() : 0);
  parallel_for(mine.size(), o.jobs, [&](std::size_t k) {
    const std::size_t i = mine[k];
    try {
      const Trace t = open_trace(files[i]);
      digests[i] = digest_rank(t, files[i], o.analysis);
    } catch (const std::exception& e) {
      errors[i] = problem_of(files[i], e.what());
    }
    if (!outcomes.empty()) {
      outcomes[i] = digests[i] ? "D" + encode_digest(*digests[i]) : "E" + errors[i];
      digests[i].reset();
    }
  });
  gather_digests(files, outcomes, digests, errors);
  if (mpi::quiet()) return {};
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
