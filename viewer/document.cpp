#include "viewer/document.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <unordered_map>

#include "trace/error.h"
#include "trace/kernel_category.h"

#if GPUSCOPE_VIEWER_HAVE_OPEN_TRACE
#include "import/open_trace.h"
#endif
#if GPUSCOPE_VIEWER_HAVE_ANALYSIS
#include "analysis/analyze.h"
#endif

namespace gpuscope::viewer {

// [SECTION] Document ---------------------------------------------------------------------------

Document::Document(std::string path, Trace trace)
    : path_(std::move(path)), trace_(std::move(trace)), index_(TimelineIndex::build(trace_)) {}

std::shared_ptr<const Profile> Document::profile() const {
  std::lock_guard lock(profile_mutex_);
  return profile_;
}

void Document::set_profile(std::shared_ptr<const Profile> p) {
  std::lock_guard lock(profile_mutex_);
  profile_ = std::move(p);
}

void Document::set_analysis_error(std::string e) {
  {
    std::lock_guard lock(profile_mutex_);
    analysis_error_ = std::move(e);
  }
  analysis_failed_ = true;
}

std::string_view source_label(TraceSource s) {
  switch (s) {
    case TraceSource::cupti: return "captured";
    case TraceSource::chrome_json: return "imported";
    case TraceSource::synthetic: return "synthetic";
    case TraceSource::unknown: break;
  }
  return "unknown source";
}

std::string_view Document::source_label() const { return viewer::source_label(trace_.meta().source); }

// [SECTION] Profile ----------------------------------------------------------------------------

#if GPUSCOPE_VIEWER_HAVE_ANALYSIS
Profile compute_profile(const Trace& trace) { return analyze(trace, AnalysisOptions{}); }
#else
}  // namespace gpuscope::viewer
namespace gpuscope {
// analysis/ defines these with the Profile; until it is built here, the viewer does.
std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::critical: return "critical";
  }
  return "info";
}
std::string_view to_string(StepSource s) {
  switch (s) {
    case StepSource::none: return "none";
    case StepSource::nvtx: return "nvtx";
    case StepSource::profiler_step: return "profiler_step";
    case StepSource::pattern: return "pattern";
  }
  return "none";
}
}  // namespace gpuscope
namespace gpuscope::viewer {

// Until analysis/ is built into this tree: the numbers the trace gives
// directly (categories, per-kernel hotspots, per-device busy time), so the
// panels have something true to show. No findings, no steps.
Profile compute_profile(const Trace& trace) {
  Profile p;
  p.source = trace.meta().source;
  p.producer = trace.meta().producer;
  p.window = {trace.begin_time(), trace.end_time()};
  const KernelTable& k = trace.kernels();
  TimeNs total = 0;
  std::array<CategoryTime, kKernelCategoryCount> cats{};
  std::unordered_map<StringId, std::vector<TimeNs>> by_name;
  for (std::size_t i = 0; i < k.size(); ++i) {
    const TimeNs d = k.end[i] - k.start[i];
    total += d;
    auto& c = cats[k.category[i]];
    c.time_ns += d;
    ++c.count;
    by_name[k.name[i]].push_back(d);
  }
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    if (cats[c].count == 0) continue;
    cats[c].category = static_cast<KernelCategory>(c);
    cats[c].share = total > 0 ? static_cast<double>(cats[c].time_ns) / static_cast<double>(total) : 0;
    p.categories.push_back(cats[c]);
  }
  std::sort(p.categories.begin(), p.categories.end(), [](auto& a, auto& b) { return a.time_ns > b.time_ns; });
  for (auto& [name, d] : by_name) {
    Hotspot h;
    h.name = std::string(trace.str(name));
    h.category = classify_kernel(h.name);
    h.stats.count = d.size();
    for (TimeNs x : d) h.stats.total += x;
    h.stats.min = *std::min_element(d.begin(), d.end());
    h.stats.max = *std::max_element(d.begin(), d.end());
    h.stats.mean = h.stats.total / static_cast<TimeNs>(d.size());
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    h.stats.median = d[d.size() / 2];
    h.share = total > 0 ? static_cast<double>(h.stats.total) / static_cast<double>(total) : 0;
    p.hotspots.push_back(std::move(h));
  }
  std::sort(p.hotspots.begin(), p.hotspots.end(), [](auto& a, auto& b) { return a.stats.total > b.stats.total; });
  std::vector<std::uint32_t> devices;
  for (const Track& t : trace.tracks())
    if (t.kind == TrackKind::gpu && std::find(devices.begin(), devices.end(), t.device) == devices.end())
      devices.push_back(t.device);
  for (std::uint32_t dev_id : devices) {
    const DeviceActivity a = DeviceActivity::build(trace, dev_id);
    DeviceSummary d;
    d.id = a.device();
    if (const Device* dev = trace.device(a.device())) d.name = dev->name;
    d.window = {a.begin(), a.end()};
    d.span_ns = a.end() - a.begin();
    d.busy_ns = a.total_busy_ns();
    d.utilization = d.span_ns > 0 ? static_cast<double>(d.busy_ns) / static_cast<double>(d.span_ns) : 0;
    d.idle_ns = d.span_ns - d.busy_ns;
    d.streams = static_cast<std::uint32_t>(a.tracks().size());
    p.devices.push_back(std::move(d));
  }
  p.trace_stats = trace.meta().stats;
  return p;
}
#endif

// [SECTION] Loader -----------------------------------------------------------------------------

void Loader::start(std::string path) {
  const std::string p = path;
  start(std::move(path), [p](const LoadProgress& progress) -> Trace {
#if GPUSCOPE_VIEWER_HAVE_OPEN_TRACE
    return open_trace(p, progress);
#else
    (void)progress;
    throw InputError(p, "this build of gpuscope-view cannot read files (src/import is not built)");
#endif
  });
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

std::string Loader::phase() const {
  std::lock_guard lock(mutex_);
  return phase_;
}

void Loader::set_phase(std::string p) {
  std::lock_guard lock(mutex_);
  phase_ = std::move(p);
}

std::shared_ptr<Document> Loader::document() const {
  std::lock_guard lock(mutex_);
  return document_;
}

std::string Loader::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

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
  try {
    doc->set_profile(std::make_shared<const Profile>(compute_profile(doc->trace())));
  } catch (const std::exception& e) {
    doc->set_analysis_error(e.what());
  }
  analysing_ = false;
  set_phase("done");
}

}  // namespace gpuscope::viewer
