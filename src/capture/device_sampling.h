// Device state sampled beside the activity records: NVML (clocks, power,
// temperature, throttle reasons, memory used) and CUPTI PM sampling (the
// hardware metrics of metric_selection.h), each source on its own Sampler,
// drained by the capture's consumer thread into the trace as counter series
// (one per metric and device, with its unit).
//
// What is not sampled is never a silent gap: each source that could not start
// leaves a line in the trace's meta properties (`capture.nvml`,
// `capture.gpu_metrics`, `capture.gpu_metrics.dropped`), which `gpuscope
// info` and the report show, and samples lost to a full ring are counted in
// the trace's stats (`capture.samples.<source>.lost`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capture/metric_selection.h"
#include "capture/sampler.h"
#include "gpuscope/capture.h"
#include "trace/builder.h"

namespace gpuscope::capture {

// Meta property keys.
inline constexpr const char* kMetaNvml = "capture.nvml";
inline constexpr const char* kMetaGpuMetrics = "capture.gpu_metrics";
inline constexpr const char* kMetaGpuMetricsDropped = "capture.gpu_metrics.dropped";

class DeviceSampling {
 public:
  explicit DeviceSampling(SamplerClock& clock) : clock_(clock) {}
  ~DeviceSampling();  // stops
  DeviceSampling(const DeviceSampling&) = delete;
  DeviceSampling& operator=(const DeviceSampling&) = delete;

  // Samples `source` every `period_ns` once start() is called. `stat` names
  // it in the trace's stats ("nvml", "pm_sampling").
  void add(const std::string& stat, std::unique_ptr<SampleSource> source, std::int64_t period_ns,
           std::size_t ring_capacity);
  // A line for the trace's meta (a key above): what is sampled, or why not.
  void note(const std::string& key, const std::string& text);
  void start();
  void stop();
  std::size_t sources() const { return entries_.size(); }

  // Moves what was sampled into `b` as counter rows (adding the series on
  // first use) and writes the notes and loss counts into its meta.
  void drain(TraceBuilder& b);

 private:
  struct Entry {
    std::string stat;
    std::unique_ptr<SampleSource> source;
    std::unique_ptr<Sampler> sampler;
    std::vector<std::uint32_t> trace_series;  // source series -> builder series
  };
  SamplerClock& clock_;
  std::vector<Entry> entries_;
  std::map<std::string, std::string> notes_;
  std::vector<Sample> scratch_;
};

// NVML and, unless `options.gpu_metrics` is "none", PM sampling on devices
// 0 … device_count-1, with a note for each that cannot run. `load_nvml_from`
// is the NVML library to load (tests pass one that does not exist).
// `no_device` says why there is no device when device_count is 0.
std::unique_ptr<DeviceSampling> open_device_sampling(const Options& options, std::size_t device_count,
                                                     SamplerClock& clock, const char* load_nvml_from,
                                                     const std::string& no_device = "no CUDA device");

}  // namespace gpuscope::capture
