// A trace open in the viewer, and the worker that loads it.
//
// Loading happens off the UI thread in two stages, so the first frame comes
// as soon as the timeline can be drawn:
//   1. read the file (open_trace, with progress and cancellation) and build
//      the TimelineIndex -> the document is published and drawn;
//   2. compute the Profile (hotspots, findings, summary) -> attached to the
//      published document when done; the panels that need it say "analysing"
//      until then;
//   3. simulate the findings' fixes on the dependency graph, as `gpuscope
//      report` does (their savings are rules of thumb until then) -> the
//      simulated Profile replaces the first;
//   4. the critical path drawn on the timeline (critical_path.h), attached
//      the same way.
// A published Document is immutable except for those two hand-overs, which
// go through a mutex.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "analysis/profile.h"
#include "trace/load_progress.h"
#include "trace/trace.h"
#include "viewer/critical_path.h"
#include "viewer/timeline_index.h"

namespace gpuscope::viewer {

class Document {
 public:
  Document(std::string path, Trace trace);  // builds the TimelineIndex

  const std::string& path() const { return path_; }
  const Trace& trace() const { return trace_; }
  const TimelineIndex& index() const { return index_; }

  // The Profile, or nullptr while it is being computed.
  std::shared_ptr<const Profile> profile() const;
  void set_profile(std::shared_ptr<const Profile> p);
  bool analysis_failed() const { return analysis_failed_.load(); }
  const std::string& analysis_error() const { return analysis_error_; }
  void set_analysis_error(std::string e);
  // Where the findings' savings stand: the analysis gives rules of thumb;
  // the dependency graph's replay then simulates each fix (the report's
  // simulated savings, order, critical path and "What would help?").
  enum class Savings : std::uint8_t { not_simulated, simulating, simulated, failed };
  Savings savings() const { return savings_.load(); }
  std::string savings_error() const;  // why the simulation failed
  void set_savings(Savings s, std::string error = {});
  // The critical path and slack, or nullptr while they are being computed.
  std::shared_ptr<const PathOverlay> path_overlay() const;
  void set_path_overlay(std::shared_ptr<const PathOverlay> p);

  // "captured" / "imported" / "synthetic" / "unknown": what the UI shows.
  std::string_view source_label() const;

 private:
  std::string path_;
  Trace trace_;
  TimelineIndex index_;
  mutable std::mutex profile_mutex_;
  std::shared_ptr<const Profile> profile_;
  std::shared_ptr<const PathOverlay> path_overlay_;
  std::atomic<bool> analysis_failed_{false};
  std::string analysis_error_;
  std::atomic<Savings> savings_{Savings::not_simulated};
  std::string savings_error_;
};

std::string_view source_label(TraceSource s);

// Computes the Profile the panels show, as `gpuscope report FILE` does
// before it simulates (analysis/'s analyze_job() of the one trace).
Profile compute_profile(const Trace& trace, const std::string& file = {});
// `p` (compute_profile's) with the findings' fixes simulated, as the report's.
Profile simulate_profile(const Trace& trace, const std::string& file, Profile p);

// Loads one file on a worker thread. The UI thread calls poll() every frame.
class Loader {
 public:
  enum class State { idle, loading, ready, failed };
  // Opens a path; tests and the synthetic source pass a function instead.
  using Source = std::function<Trace(const LoadProgress&)>;

  Loader() = default;
  ~Loader() { cancel(); }
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  void start(std::string path);                  // open_trace(path)
  void start(std::string label, Source source);  // any producer of a Trace
  void cancel();                                 // stops and joins; state -> idle

  State state() const { return state_.load(); }
  // Bytes read and total (0 if unknown) of stage 1; `phase` says what runs now.
  double fraction() const;
  std::uint64_t bytes_done() const { return done_.load(); }
  std::uint64_t bytes_total() const { return total_.load(); }
  std::string phase() const;
  const std::string& label() const { return label_; }
  // After state() == ready: the document (once; later calls return it again).
  std::shared_ptr<Document> document() const;
  // After state() == failed.
  std::string error() const;
  // True while the Profile of a ready document is still being computed.
  bool analysing() const { return analysing_.load(); }
  // Seconds stage 1 took: reading, then building the index.
  double read_seconds() const { return read_s_.load(); }
  double index_seconds() const { return index_s_.load(); }

 private:
  void run(Source source);
  void set_phase(std::string p);

  std::string label_;
  std::jthread worker_;
  std::atomic<bool> cancel_{false};
  std::atomic<State> state_{State::idle};
  std::atomic<std::uint64_t> done_{0}, total_{0};
  std::atomic<bool> analysing_{false};
  std::atomic<double> read_s_{0}, index_s_{0};
  mutable std::mutex mutex_;  // guards the strings and the document below
  std::string phase_, error_;
  std::shared_ptr<Document> document_;
};

}  // namespace gpuscope::viewer
