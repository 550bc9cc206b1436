#include "cli/job.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

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

// Which of a process's files are done, for the main thread (the only one
// that speaks MPI) to send or to wait for.
class Done {
 public:
  explicit Done(std::size_t n) : done_(n, 0) {}
  void set(std::size_t i) {
    {
      std::lock_guard<std::mutex> lock(m_);
      done_[i] = 1;
    }
    cv_.notify_all();
  }
  void set_all() {
    {
      std::lock_guard<std::mutex> lock(m_);
      std::fill(done_.begin(), done_.end(), 1);
    }
    cv_.notify_all();
  }
  void wait(std::size_t i) {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return done_[i] != 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<char> done_;
};

// Digests this process's share of the files (file i: process i % P; all of
// them without MPI), `jobs` at a time. Under MPI the share is digested by
// other threads while the main thread passes the outcomes on as they are
// done: a process other than 0 sends each one ('D' and the digest's bytes,
// or 'E' and why the file cannot be analysed), made by the thread that
// digested the file, and keeps no digest; process 0 decodes the others'
// meanwhile. Every outcome lands in its file's slot.
void digest_files(const std::vector<std::string>& files, const JobOptions& o,
                  std::vector<std::optional<RankDigest>>& digests, std::vector<std::string>& errors) {
  const auto procs = static_cast<std::size_t>(mpi::size()), me = static_cast<std::size_t>(mpi::rank());
  std::vector<std::size_t> mine;
  for (std::size_t i = me; i < files.size(); i += procs) mine.push_back(i);
  std::vector<std::string> outcomes(mpi::quiet() ? files.size() : 0);
  Done done(files.size());
  auto digest_mine = [&] {
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
      done.set(i);
    });
  };
  if (!mpi::active()) return digest_mine();
  std::exception_ptr failed;
  std::thread work([&] {
    try {
      digest_mine();
    } catch (...) {
      failed = std::current_exception();
      done.set_all();  // the main thread must not wait for a file that will never be done
    }
  });
  mpi::gather_items(
      files.size(),
      [&](std::size_t i) {
        done.wait(i);
        if (failed) std::rethrow_exception(failed);
        return std::move(outcomes[i]);
      },
      [&](std::size_t i, std::string_view bytes) {
        try {
          if (bytes.starts_with("D"))
            digests[i] = decode_digest(bytes.substr(1));
          else if (bytes.starts_with("E"))
            errors[i] = std::string(bytes.substr(1));
          else
            throw DigestError("digest: no outcome mark");
        } catch (const DigestError& e) {
          throw Error(files[i] + ": its digest from process " + std::to_string(i % procs) + ": " + e.what());
        }
      });
  work.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

Profile analyze_files(const std::vector<std::string>& files, const JobOptions& o) {
  if (files.size() == 1) return mpi::quiet() ? Profile{} : analyze_one(files.front(), o);
  // Each file alone: opened, digested, freed; under MPI, each process its
  // share, gathered at process 0 (cli/mpi.h).
  std::vector<std::optional<RankDigest>> digests(files.size());
  std::vector<std::string> errors(files.size());
  digest_files(files, o, digests, errors);
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
