#include "job/job_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "analysis/graph/savings.h"
#include "analysis/job/digest_codec.h"
#include "analysis/job/job.h"
#include "analysis/util/parallel.h"
#include "export/report_json.h"
#include "export/trace_inputs.h"
#include "import/open_trace.h"
#include "trace/files.h"

namespace gpuscope::job {

namespace {

// The processes the job's files are shared between: this one alone unless told.
Processes& processes_of(const JobOptions& o) {
  static Processes alone;
  return o.processes ? *o.processes : alone;
}

bool cancelled(const JobOptions& o) { return o.cancel && o.cancel->load(); }

void stop_if_cancelled(const std::vector<std::string>& files, const JobOptions& o) {
  if (cancelled(o)) throw Cancelled(files.front() + (files.size() > 1 ? " …" : ""), "cancelled");
}

// "FILE: problem" -> "problem" (open_trace's errors name the file first).
std::string problem_of(const std::string& file, const std::string& what) {
  const std::string prefix = file + ": ";
  return what.starts_with(prefix) ? what.substr(prefix.size()) : what;
}

// ---- Files that change during the run

// A file as stat(2) sees it. A job's files are each read twice (digest, then
// simulation): one that disappears, shrinks or is rewritten in between, or
// while it is read, is left out with the reason, whenever that happens.
struct Stamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::int64_t size = 0, mtime_ns = 0, ctime_ns = 0;
};

Stamp stamp_of(const std::string& path) {
  struct stat st {};
  Stamp s;
  if (::stat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  s.ctime_ns = std::int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
  return s;
}

// Empty when `after` is the file `before` was; else what happened to it.
std::string change_of(const Stamp& before, const Stamp& after) {
  if (!before.exists) return {};  // a pipe or an unreadable path: its reader says what is wrong
  if (!after.exists) return "disappeared during the run";
  if (after.dev != before.dev || after.ino != before.ino) return "was replaced by another file during the run";
  if (after.size != before.size)
    return std::string(after.size < before.size ? "shrank" : "grew") + " during the run (" +
           std::to_string(before.size) + " -> " + std::to_string(after.size) + " bytes)";
  if (after.mtime_ns != before.mtime_ns || after.ctime_ns != before.ctime_ns) return "was rewritten during the run";
  return {};
}

// Thrown by the simulation pass for a file that changed since it was digested.
struct FileChanged : std::runtime_error {
  FileChanged(std::size_t f, const std::string& why) : std::runtime_error(why), file(f) {}
  std::size_t file;
};

// Opens file `i` again for the simulation: the same file the digest read, or FileChanged.
Trace reopen(const std::vector<std::string>& files, const std::vector<Stamp>& stamps, std::size_t i) {
  if (std::string why = change_of(stamps[i], stamp_of(files[i])); !why.empty()) throw FileChanged(i, why);
  Trace t;
  try {
    t = open_trace(files[i]);
  } catch (const InputError& e) {
    throw FileChanged(i, "could not be read again during the run: " + problem_of(files[i], e.what()));
  }
  if (std::string why = change_of(stamps[i], stamp_of(files[i])); !why.empty()) throw FileChanged(i, why);
  return t;
}

// ---- One file, many files

void check_device(const std::vector<std::string>& files, const std::set<std::uint32_t>& seen, const JobOptions& o) {
  if (!o.device_given || seen.count(o.analysis.device)) return;
  std::string have;
  for (std::uint32_t d : seen) have += (have.empty() ? "" : ", ") + std::to_string(d);
  throw NoDevice(
      files.front() + (files.size() > 1 ? " …" : ""),
      "no GPU " + std::to_string(o.analysis.device) + " (GPUs with activity: " + (have.empty() ? "none" : have) + ")");
}

// A digest that holds only what names the run (what check_job() compares).
RankDigest run_of(const RankDigest& d) {
  return {.file = d.file,
          .own_rank = d.own_rank,
          .world_size = d.world_size,
          .host = d.host,
          .command_line = d.command_line};
}

Profile analyze_one(const std::string& file, const JobOptions& o) {
  stop_if_cancelled({file}, o);
  const Trace t = open_trace(file);
  if (o.files_read) ++*o.files_read;
  if (o.on_rank) o.on_rank(0, t, nullptr);
  if (o.ranks) *o.ranks = {.files = {0}, .parts = {}};
  if (o.runs) {
    const TraceMeta& m = t.meta();
    o.runs->push_back(
        {.file = file, .own_rank = m.rank, .world_size = m.world_size, .host = m.host, .command_line = m.command_line});
  }
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
                  std::vector<std::optional<RankDigest>>& digests, std::vector<std::string>& errors,
                  std::vector<Stamp>& stamps) {
  Processes& ps = processes_of(o);
  const auto procs = static_cast<std::size_t>(ps.size()), me = static_cast<std::size_t>(ps.rank());
  std::vector<std::size_t> mine;
  for (std::size_t i = me; i < files.size(); i += procs) mine.push_back(i);
  std::vector<std::string> outcomes(ps.quiet() ? files.size() : 0);
  Done done(files.size());
  auto digest_mine = [&] {
    parallel_for(mine.size(), o.jobs, [&](std::size_t k) {
      const std::size_t i = mine[k];
      try {
        if (cancelled(o)) throw std::runtime_error("cancelled");
        stamps[i] = stamp_of(files[i]);
        const Trace t = open_trace(files[i]);
        if (const std::string why = change_of(stamps[i], stamp_of(files[i])); !why.empty())
          throw std::runtime_error(why);
        digests[i] = digest_rank(t, files[i], o.analysis);
        if (o.on_rank) o.on_rank(i, t, &*digests[i]);
      } catch (const std::exception& e) {
        errors[i] = problem_of(files[i], e.what());
        digests[i].reset();
      }
      if (o.files_read) ++*o.files_read;
      if (!outcomes.empty()) {
        outcomes[i] = digests[i] ? "D" : "E";
        outcomes[i] += digests[i] ? encode_digest(*digests[i]) : errors[i];
        digests[i].reset();
      }
      done.set(i);
    });
  };
  if (!ps.active()) return digest_mine();
  std::exception_ptr failed;
  std::thread work([&] {
    try {
      digest_mine();
    } catch (...) {
      failed = std::current_exception();
      done.set_all();  // the main thread must not wait for a file that will never be done
    }
  });
  ps.gather_items(
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
          throw Error(files[i], "its digest from process " + std::to_string(i % procs) + ": " + e.what());
        }
      });
  work.join();
  if (failed) std::rethrow_exception(failed);
}

// Process 0's word to the others, which wait for it: when the report stops
// before it was said (an error, or nothing to simulate), an empty one.
class Tell {
 public:
  explicit Tell(Processes& ps) : ps_(ps), pending_(ps.active()) {}
  Tell(const Tell&) = delete;
  Tell& operator=(const Tell&) = delete;
  void operator()(std::string bytes) {
    if (!pending_) return;
    pending_ = false;
    ps_.broadcast(std::move(bytes));
  }
  ~Tell() {
    if (pending_) ps_.broadcast({});
  }

 private:
  Processes& ps_;
  bool pending_;
};

// What the others simulate: the file index of each of the job's traces (the
// files the report kept, in order), a newline, and the plan's bytes.
std::string encode_work(const std::vector<std::size_t>& traces, const graph::SimulationPlan& plan) {
  std::string b;
  for (std::size_t i : traces) {
    if (!b.empty()) b += ',';
    b += std::to_string(i);
  }
  b += '\n';
  b += graph::encode_plan(plan);
  return b;
}

std::vector<std::size_t> decode_traces(std::string_view b, std::size_t files) {
  std::vector<std::size_t> out;
  const char* at = b.data();
  const char* end = b.data() + b.size();
  while (at < end) {
    std::size_t i = 0;
    const auto [next, ec] = std::from_chars(at, end, i);
    if (ec != std::errc() || i >= files || (next != end && *next != ',') || (!out.empty() && i <= out.back()))
      throw graph::SimulationCodecError("simulation plan: a bad list of files");
    out.push_back(i);
    at = next == end ? end : next + 1;
  }
  return out;
}

// The simulation pass over the job's traces (traces[k]: the index in `files`
// of trace k): under MPI, each process simulates those of its files (file i:
// process i % P, as for the digests), and process 0 (with `p`) combines them
// (graph::SimulationShare); the others pass no `p`.
void simulate_job(const std::vector<std::string>& files, const std::vector<Stamp>& stamps,
                  const std::vector<std::size_t>& traces, graph::SimulationPlan plan, const JobOptions& o, Profile* p) {
  Processes& ps = processes_of(o);
  const auto procs = static_cast<std::size_t>(ps.size()), me = static_cast<std::size_t>(ps.rank());
  constexpr std::size_t kNone = ~std::size_t{0};  // a file that is no trace of the job
  std::vector<std::size_t> mine, trace_of(files.size(), kNone);
  for (std::size_t k = 0; k < traces.size(); ++k) {
    trace_of[traces[k]] = k;
    if (traces[k] % procs == me) mine.push_back(k);
  }
  graph::SimulationShare share(std::move(plan), traces.size());
  const graph::TraceVisitor visit = [&](std::size_t k, const std::function<void(const Trace&)>& f) {
    stop_if_cancelled(files, o);
    const Trace t = reopen(files, stamps, traces[k]);
    f(t);
  };
  auto gather = [&](auto&& encode, auto&& decode) {
    ps.gather_items(
        files.size(), [&](std::size_t i) { return trace_of[i] != kNone ? encode(trace_of[i]) : std::string(); },
        [&](std::size_t i, std::string_view bytes) {
          if (trace_of[i] == kNone) return;
          try {
            decode(trace_of[i], bytes);
          } catch (const graph::SimulationCodecError& e) {
            throw Error(files[i], "its simulation from process " + std::to_string(i % procs) + ": " + e.what());
          }
        });
  };
  share.simulate(mine, visit, o.jobs);
  stop_if_cancelled(files, o);
  gather([&](std::size_t k) { return share.encode(k); },
         [&](std::size_t k, std::string_view b) { share.decode(k, b); });
  std::string helps;
  bool more = false;
  if (p) {
    Tell again(ps);
    more = share.combine(p);
    if (more) helps = share.helps_bytes();
    again(helps);
  } else {
    helps = ps.broadcast({});
    if (!helps.empty()) share.set_helps(helps);
  }
  if (!helps.empty()) {
    // Each process's traces whose fixes together were another set, predicted again.
    share.retogether(mine, visit, o.jobs);
    gather([&](std::size_t k) { return share.encode_together(k); },
           [&](std::size_t k, std::string_view b) {
             if (share.stale(k)) share.decode_together(k, b);
           });
  }
  if (p && more) share.finish(p);
}

// A process other than 0: its share of the simulation, when process 0 says so.
void simulate_share(const std::vector<std::string>& files, const JobOptions& o) {
  Processes& ps = processes_of(o);
  const std::string work = ps.broadcast({});
  if (work.empty()) return;
  try {
    const std::size_t nl = work.find('\n');
    if (nl == std::string::npos) throw graph::SimulationCodecError("simulation plan: no list of files");
    const std::vector<std::size_t> traces = decode_traces(std::string_view(work).substr(0, nl), files.size());
    const std::vector<Stamp> stamps(files.size());  // another process digested them: nothing to compare
    simulate_job(files, stamps, traces, graph::decode_plan(std::string_view(work).substr(nl + 1)), o, nullptr);
  } catch (const std::exception& e) {
    ps.fail(e.what());
  }
}

}  // namespace

namespace {

// The file index of each digest check_job() kept: `before` (the digests'
// files before it) with `traces` (their indexes) narrowed to `kept`, which
// it took in order.
std::vector<std::size_t> kept_traces(const std::vector<std::string>& before, const std::vector<std::size_t>& traces,
                                     const std::vector<RankDigest>& kept) {
  std::vector<std::size_t> out;
  std::size_t j = 0;
  for (const RankDigest& d : kept) {
    while (j < before.size() && before[j] != d.file) ++j;
    if (j == before.size()) throw std::logic_error("check_job: a digest it did not have");
    out.push_back(traces[j++]);
  }
  return out;
}

// The job's profile from the files that could be digested (`traces`: their
// indexes), and the simulation over the ones check_job() keeps again. Throws
// FileChanged when a file changed since its digest (without MPI: the caller
// leaves it out and starts again).
Profile job_profile(const std::vector<std::string>& files, const std::vector<Stamp>& stamps,
                    std::vector<RankDigest> good, const std::vector<std::size_t>& all_traces,
                    std::vector<LeftOut> left_out, const std::set<std::uint32_t>& seen, const JobOptions& o) {
  Tell tell(processes_of(o));  // the others wait for the simulation's plan
  std::vector<std::string> before;
  for (const RankDigest& d : good) before.push_back(d.file);
  const JobCheck check = check_job(good);
  if (!check.refused.empty()) throw Error(files.front() + " …", check.refused);
  for (const LeftOut& l : check.left_out) left_out.push_back(l);
  const std::vector<std::size_t> traces = kept_traces(before, all_traces, good);
  std::vector<std::string> kept;
  for (const RankDigest& d : good) {
    kept.push_back(d.file);
    if (o.runs) o.runs->push_back(run_of(d));
  }
  check_device(kept, seen, o);
  if (o.ranks) *o.ranks = {.files = traces, .parts = matched_collective_parts(good)};

  Profile p = analyze_digests(std::move(good), o.analysis);
  p.left_out = std::move(left_out);
  if (o.simulate) {
    graph::SimulationOptions so;
    so.device = o.analysis.device;
    graph::SimulationPlan plan = graph::simulation_plan(kept.size(), &p, so);
    if (plan.run) {
      tell(encode_work(traces, plan));
      simulate_job(files, stamps, traces, std::move(plan), o, &p);
    }
  }
  return p;
}

[[noreturn]] void nothing_to_analyse(const std::vector<std::string>& files, const std::vector<LeftOut>& left_out) {
  std::string why;
  for (const LeftOut& l : left_out) why += (why.empty() ? "" : "; ") + l.file + ": " + l.problem;
  throw Error(files.front() + " …",
              "none of the " + std::to_string(files.size()) + " files can be analysed (" + why + ")");
}

}  // namespace

Profile analyze_job(const std::vector<std::string>& files, const JobOptions& o) {
  Processes& ps = processes_of(o);
  if (files.size() == 1) {
    if (ps.quiet()) return Profile{};
    Profile p = analyze_one(files.front(), o);
    p.left_out.insert(p.left_out.begin(), o.left_out.begin(), o.left_out.end());
    return p;
  }
  // Each file alone: opened, digested, freed; under MPI, each process its
  // share, gathered at process 0.
  std::vector<std::optional<RankDigest>> digests(files.size());
  std::vector<std::string> errors(files.size());
  std::vector<Stamp> stamps(files.size());
  digest_files(files, o, digests, errors, stamps);
  stop_if_cancelled(files, o);
  if (o.after_digests) o.after_digests();
  if (ps.quiet()) {
    if (ps.active()) simulate_share(files, o);
    return {};
  }
  std::vector<LeftOut> left_out = o.left_out;
  std::vector<RankDigest> good;
  std::vector<std::size_t> traces;  // the file index of each of `good`
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!digests[i]) {
      left_out.push_back({files[i], errors[i]});
      continue;
    }
    seen.insert(digests[i]->gpus.begin(), digests[i]->gpus.end());
    good.push_back(std::move(*digests[i]));
    traces.push_back(i);
  }
  const std::size_t runs_before = o.runs ? o.runs->size() : 0;
  for (;;) {
    if (good.empty()) {
      if (ps.active()) ps.broadcast({});  // the others wait for a simulation plan: there is none
      nothing_to_analyse(files, left_out);
    }
    try {
      return job_profile(files, stamps, good, traces, left_out, seen, o);
    } catch (const FileChanged& c) {
      stop_if_cancelled(files, o);
      // Under MPI the others are already simulating: stop, saying why.
      if (ps.active()) throw Error(files[c.file], c.what());
      if (o.runs) o.runs->erase(o.runs->begin() + static_cast<std::ptrdiff_t>(runs_before), o.runs->end());
      const auto at = static_cast<std::ptrdiff_t>(std::find(traces.begin(), traces.end(), c.file) - traces.begin());
      good.erase(good.begin() + at);
      traces.erase(traces.begin() + at);
      left_out.push_back({files[c.file], c.what()});
    }
  }
}

namespace {
constexpr std::uintmax_t kMaxReportBytes = std::uintmax_t{1} << 30;
}  // namespace

Profile load_side(const std::string& path, const JobOptions& o) {
  if (is_saved_report(path)) {
    const std::string name = files::input_name(path);
    if (o.device_given) throw Error(name, "--device applies to traces; this is a saved report");
    std::ifstream in(files::seekable_path(path), std::ios::binary);  // a pipe was read once, by is_saved_report
    if (!in) throw Error(name, "cannot open");
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::uintmax_t>(in.tellg());
    if (size > kMaxReportBytes) throw Error(name, "larger than 1 GiB: not a gpuscope report");
    in.seekg(0);
    std::string text(size, '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    Profile p = parse_report_json(text, name);
    if (p.files.empty()) p.files.push_back(path);
    return p;
  }
  const TraceInputs inputs = list_trace_inputs({path});
  JobOptions with_left_out = o;
  with_left_out.left_out.insert(with_left_out.left_out.end(), inputs.left_out.begin(), inputs.left_out.end());
  Profile p = analyze_job(inputs.files, with_left_out);  // the savings `report` gives
  p.files = {path};
  return p;
}

}  // namespace gpuscope::job
