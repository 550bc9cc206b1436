#include "viewer/document.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <utility>

#include "trace/error.h"

#include "analysis/analyze.h"
#include "analysis/graph/savings.h"
#include "import/open_trace.h"

namespace gpuscope::viewer {

namespace {

// A copy of `field`, which `m` guards.
template <class T>
T read_locked(std::mutex& m, const T& field) {
  std::lock_guard lock(m);
  return field;
}

// field = value, with `m`, which guards it, held.
template <class T>
void write_locked(std::mutex& m, T& field, T value) {
  std::lock_guard lock(m);
  field = std::move(value);
}

}  // namespace

// [SECTION] Document ---------------------------------------------------------------------------

Document::Document(std::string path, Trace trace)
    : path_(std::move(path)), trace_(std::move(trace)), index_(TimelineIndex::build(trace_)) {}

std::shared_ptr<const Profile> Document::profile() const { return read_locked(profile_mutex_, profile_); }

void Document::set_profile(std::shared_ptr<const Profile> p) { write_locked(profile_mutex_, profile_, std::move(p)); }

std::shared_ptr<const PathOverlay> Document::path_overlay() const { return read_locked(profile_mutex_, path_overlay_); }

void Document::set_path_overlay(std::shared_ptr<const PathOverlay> p) {
  write_locked(profile_mutex_, path_overlay_, std::move(p));
}

std::string Document::savings_error() const { return read_locked(profile_mutex_, savings_error_); }

void Document::set_savings(Savings s, std::string error) {
  write_locked(profile_mutex_, savings_error_, std::move(error));
  savings_ = s;
}

void Document::set_analysis_error(std::string e) {
  write_locked(profile_mutex_, analysis_error_, std::move(e));
  analysis_failed_ = true;
}

std::string_view source_label(TraceSource s) {
  // By TraceSource's value: unknown, cupti, chrome_json, synthetic, nsys_sqlite.
  static constexpr std::string_view kLabels[] = {"unknown source", "captured", "imported", "synthetic",
                                                 "imported (nsys)"};
  const auto i = static_cast<std::size_t>(s);
  return i < std::size(kLabels) ? kLabels[i] : kLabels[0];
}

std::string_view Document::source_label() const { return viewer::source_label(trace_.meta().source); }

// [SECTION] Profile ----------------------------------------------------------------------------

Profile compute_profile(const Trace& trace, const std::string& file) {
  const JobInput in{&trace, file};
  return analyze_job(std::span<const JobInput>(&in, 1), AnalysisOptions{});
}

Profile simulate_profile(const Trace& trace, const std::string& file, Profile p) {
  const JobInput in{&trace, file};
  graph::simulate_findings(std::span<const JobInput>(&in, 1), &p);
  return p;
}

// [SECTION] Loader -----------------------------------------------------------------------------

void Loader::start(std::string path) {
  const std::string p = path;
  start(std::move(path), [p](const LoadProgress& progress) { return open_trace(p, progress); });
}

void Loader::start(std::string label, Source source) {
  cancel();
  label_ = std::move(label);
  cancel_ = false;
  done_ = 0;
  total_ = 0;
  read_s_ = 0;
  index_s_ = 0;
  {
    std::lock_guard lock(mutex_);
    error_.clear();
    document_.reset();
  }
  set_phase("reading");
  state_ = State::loading;
  worker_ = std::jthread([this, source = std::move(source)] { run(source); });
}

void Loader::cancel() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
  analysing_ = false;
  state_ = State::idle;
}

double Loader::fraction() const {
  const std::uint64_t t = total_.load();
  return t > 0 ? std::min(1.0, static_cast<double>(done_.load()) / static_cast<double>(t)) : 0.0;
}

std::string Loader::phase() const { return read_locked(mutex_, phase_); }

void Loader::set_phase(std::string p) { write_locked(mutex_, phase_, std::move(p)); }

std::shared_ptr<Document> Loader::document() const { return read_locked(mutex_, document_); }

std::string Loader::error() const { return read_locked(mutex_, error_); }

void Loader::run(Source source) {
  using clock = std::chrono::steady_clock;
  std::shared_ptr<Document> doc;
  try {
    LoadProgress progress;
    progress.cancel = &cancel_;
    progress.on_progress = [this](std::uint64_t done, std::uint64_t total) {
      done_ = done;
      total_ = total;
    };
    const auto t0 = clock::now();
    Trace trace = source(progress);
    const auto t1 = clock::now();
    read_s_ = std::chrono::duration<double>(t1 - t0).count();
    if (cancel_) return;
    set_phase("indexing");
    doc = std::make_shared<Document>(label_, std::move(trace));
    index_s_ = std::chrono::duration<double>(clock::now() - t1).count();
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    error_ = e.what();
    state_ = State::failed;
    return;
  }
  if (cancel_) return;
  {
    std::lock_guard lock(mutex_);
    document_ = doc;
    phase_ = "analysing";
  }
  analysing_ = true;
  state_ = State::ready;
  // Stage 2: the Profile. A failure here leaves the timeline usable.
  std::shared_ptr<const Profile> first;
  try {
    first = std::make_shared<const Profile>(compute_profile(doc->trace(), doc->path()));
    doc->set_savings(Document::Savings::simulating);
    doc->set_profile(first);
  } catch (const std::exception& e) {
    doc->set_analysis_error(e.what());
  }
  if (cancel_) return;
  // Stage 3: the findings' fixes simulated, as the report does; the rules of
  // thumb stay, and say why, if the replay fails.
  if (first) {
    set_phase("simulating the findings' fixes");
    try {
      doc->set_profile(std::make_shared<const Profile>(simulate_profile(doc->trace(), doc->path(), *first)));
      doc->set_savings(Document::Savings::simulated);
    } catch (const std::exception& e) {
      doc->set_savings(Document::Savings::failed, e.what());
    }
  }
  if (cancel_) return;
  set_phase("the critical path");
  // Then the critical path; a failure leaves the rest usable and says why.
  PathOverlay path;
  try {
    path = compute_path_overlay(doc->trace());
  } catch (const std::exception& e) {
    path.status = std::string("the dependency graph failed: ") + e.what();
  }
  doc->set_path_overlay(std::make_shared<const PathOverlay>(std::move(path)));
  analysing_ = false;
  set_phase("done");
}

}  // namespace gpuscope::viewer
