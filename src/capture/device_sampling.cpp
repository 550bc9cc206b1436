#include "capture/device_sampling.h"

#include "capture/nvml_source.h"
#include "capture/pm_sampling_source.h"

namespace gpuscope::capture {

namespace {

// NVML at 100 Hz: a second of samples for 8 devices fits many times over.
constexpr std::size_t kNvmlRing = 1u << 16;
// PM sampling is decoded every 10 ms; the ring holds about a second of a
// device's samples at 200 kHz with the whole default set.
constexpr std::int64_t kPmSamplingReadPeriodNs = 10'000'000;
constexpr std::size_t kPmSamplingRing = 1u << 21;

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const std::string& i : items) {
    if (!s.empty()) s += sep;
    s += i;
  }
  return s;
}

}  // namespace

DeviceSampling::~DeviceSampling() { stop(); }

void DeviceSampling::add(const std::string& stat, std::unique_ptr<SampleSource> source, std::int64_t period_ns,
                         std::size_t ring_capacity) {
  Entry e;
  e.stat = stat;
  e.sampler = std::make_unique<Sampler>(*source, period_ns, ring_capacity, clock_);
  e.source = std::move(source);
  entries_.push_back(std::move(e));
}

void DeviceSampling::note(const std::string& key, const std::string& text) {
  std::string& n = notes_[key];
  if (!n.empty()) n += "; ";
  n += text;
}

void DeviceSampling::start() {
  for (Entry& e : entries_) e.sampler->start();
}

void DeviceSampling::stop() {
  for (Entry& e : entries_) e.sampler->stop();
}

void DeviceSampling::drain(TraceBuilder& b) {
  struct Totals {
    std::uint64_t read = 0, lost = 0, overflows = 0;
  };
  std::map<std::string, Totals> totals;
  for (Entry& e : entries_) {
    const auto& series = e.source->series();
    if (e.trace_series.size() != series.size()) {
      e.trace_series.clear();
      for (const SampleSeries& s : series) e.trace_series.push_back(b.counter_series(s.name, s.device, s.unit));
    }
    scratch_.clear();
    e.sampler->drain(&scratch_);
    for (const Sample& s : scratch_)
      if (s.series < e.trace_series.size()) b.add_counter(CounterRow{s.time_ns, e.trace_series[s.series], s.value});
    const SamplerStats st = e.sampler->stats();
    Totals& t = totals[e.stat];
    t.read += st.samples;
    t.lost += st.lost;
    t.overflows += e.source->overflows();
    if (st.failed && !e.stat.empty()) {
      const std::string key = e.stat == "nvml" ? kMetaNvml : kMetaGpuMetrics;
      const std::string line = "sampling stopped: " + st.message;
      if (notes_[key].find(line) == std::string::npos) note(key, line);
    }
  }
  TraceMeta& m = b.meta();
  for (const auto& [stat, t] : totals) {
    m.set_stat("capture.samples." + stat + ".read", t.read);
    m.set_stat("capture.samples." + stat + ".lost", t.lost);
    if (t.overflows) m.set_stat("capture.samples." + stat + ".overflows", t.overflows);
  }
  for (const auto& [key, text] : notes_) m.set_property(key, text);
}

std::unique_ptr<DeviceSampling> open_device_sampling(const Options& options, std::size_t device_count,
                                                     SamplerClock& clock, const char* load_nvml_from,
                                                     const std::string& no_device) {
  auto ds = std::make_unique<DeviceSampling>(clock);
  std::string why;
  if (auto nvml = load_nvml(&why, load_nvml_from)) {
    std::vector<std::string> mig;
    for (const NvmlDeviceInfo& d : nvml->devices())
      if (d.mig) mig.push_back(std::to_string(d.index));
    std::string line = "clocks, power, temperature, throttle reasons and memory used of " +
                       std::to_string(nvml->devices().size()) + " device(s) at 100 Hz";
    if (!mig.empty()) line += " (MIG on device(s) " + join(mig, ", ") + ": values are the whole GPU's)";
    ds->note(kMetaNvml, line);
    ds->add("nvml", std::move(nvml), kNvmlPeriodNs, kNvmlRing);
  } else {
    ds->note(kMetaNvml, "off: " + why);
  }

  std::string error;
  const auto request = parse_metric_list(options.gpu_metrics, &error);
  if (!request || request->none()) {
    ds->note(kMetaGpuMetrics, request ? "off: --gpu-metrics none" : "off: " + error);
    return ds;
  }
  if (device_count == 0) ds->note(kMetaGpuMetrics, "off: " + no_device);
  for (std::size_t i = 0; i < device_count; ++i) {
    auto pm = std::make_unique<PmSamplingSource>(i, *request, options.gpu_metrics_hz);
    const MetricSelection& sel = pm->selection();
    for (const std::string& d : sel.dropped) ds->note(kMetaGpuMetricsDropped, "device " + std::to_string(i) + ": " + d);
    if (!pm->ok()) {
      ds->note(kMetaGpuMetrics, "device " + std::to_string(i) + ": off: " + pm->message());
      continue;
    }
    std::vector<std::string> ids;
    for (const ChosenMetric& m : sel.metrics) ids.push_back(m.id);
    ds->note(kMetaGpuMetrics, "device " + std::to_string(i) + " (" + sel.chip + "): " + join(ids, ", ") + " at " +
                                  std::to_string(options.gpu_metrics_hz) + " Hz");
    ds->add("pm_sampling", std::move(pm), kPmSamplingReadPeriodNs, kPmSamplingRing);
  }
  return ds;
}

}  // namespace gpuscope::capture
