#include "capture/metric_selection.h"

#include <cupti_profiler_host.h>

#include <algorithm>

namespace gpuscope::capture {

namespace {

constexpr std::string_view kPct = "%";
constexpr std::string_view kBytesPerSecond = "B/s";

// RAII for a host object: one chip, PM sampling, with the metrics added to it.
class HostObject {
 public:
  HostObject(std::string_view chip, const std::vector<std::uint8_t>& availability) : chip_(chip) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    p.pChipName = chip_.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    result_ = cuptiProfilerHostInitialize(&p);
    if (result_ == CUPTI_SUCCESS) object_ = p.pHostObject;
  }
  ~HostObject() {
    if (!object_) return;
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  bool ok() const { return object_ != nullptr; }
  CUptiResult result() const { return result_; }

  bool add(const std::vector<std::string>& names) {
    std::vector<const char*> ptrs;
    for (const std::string& n : names) ptrs.push_back(n.c_str());
    CUpti_Profiler_Host_ConfigAddMetrics_Params p{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    p.pHostObject = object_;
    p.ppMetricNames = ptrs.data();
    p.numMetrics = ptrs.size();
    return cuptiProfilerHostConfigAddMetrics(&p) == CUPTI_SUCCESS;
  }

  // The configuration image of what was added and the passes it needs; false if the API refuses.
  bool image(std::vector<std::uint8_t>* image, std::size_t* passes) {
    CUpti_Profiler_Host_GetConfigImageSize_Params s{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    s.pHostObject = object_;
    if (cuptiProfilerHostGetConfigImageSize(&s) != CUPTI_SUCCESS || s.configImageSize == 0) return false;
    image->assign(s.configImageSize, 0);
    CUpti_Profiler_Host_GetConfigImage_Params g{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    g.pHostObject = object_;
    g.configImageSize = image->size();
    g.pConfigImage = image->data();
    if (cuptiProfilerHostGetConfigImage(&g) != CUPTI_SUCCESS) return false;
    CUpti_Profiler_Host_GetNumOfPasses_Params n{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    n.configImageSize = image->size();
    n.pConfigImage = image->data();
    if (cuptiProfilerHostGetNumOfPasses(&n) != CUPTI_SUCCESS) return false;
    *passes = n.numOfPasses;
    return true;
  }

  std::string unit_of(const std::string& name) {
    CUpti_Profiler_Host_GetMetricProperties_Params p{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    p.pHostObject = object_;
    p.pMetricName = name.c_str();
    if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS || !p.pDimUnit) return {};
    return p.pDimUnit;
  }

 private:
  std::string chip_;
  CUpti_Profiler_Host_Object* object_ = nullptr;
  CUptiResult result_ = CUPTI_SUCCESS;
};

const char* result_name(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "unknown CUPTI error";
  return s;
}

std::string ids_of(const std::vector<ChosenMetric>& chosen) {
  std::string s;
  for (const ChosenMetric& m : chosen) {
    if (!s.empty()) s += ", ";
    s += m.id;
  }
  return s.empty() ? "nothing" : s;
}

// Tries `name` after the metrics already chosen: true (and the new image) when
// the whole set still fits the passes PM sampling allows.
struct FitResult {
  bool exists = false;
  bool fits = false;
  std::size_t passes = 0;
};
FitResult try_fit(std::string_view chip, const std::vector<std::uint8_t>& availability,
                  const std::vector<ChosenMetric>& chosen, const std::string& name, std::vector<std::uint8_t>* image) {
  FitResult r;
  {
    HostObject alone(chip, availability);
    r.exists = alone.ok() && alone.add({name});
  }
  if (!r.exists) return r;
  HostObject all(chip, availability);
  std::vector<std::string> names;
  for (const ChosenMetric& m : chosen) names.push_back(m.name);
  names.push_back(name);
  std::vector<std::uint8_t> candidate;
  if (!all.ok() || !all.add(names) || !all.image(&candidate, &r.passes)) return r;
  r.fits = r.passes >= 1 && r.passes <= kPmSamplingMaxPasses;
  if (r.fits) *image = std::move(candidate);
  return r;
}

// The default set's metrics, each as the first candidate that exists on the
// chip and fits with those before it. Tensor activity comes before occupancy
// and issue: with it first, most chips fit all four SM metrics.
void choose_default(MetricSelection& s, const std::vector<std::uint8_t>& availability) {
  for (const DefaultMetric& d : default_metrics()) {
    bool any_exists = false, chosen = false;
    std::string tried;
    for (std::string_view candidate : d.candidates) {
      const std::string name(candidate);
      if (!tried.empty()) tried += ", ";
      tried += name;
      const FitResult r = try_fit(s.chip, availability, s.metrics, name, &s.config_image);
      any_exists = any_exists || r.exists;
      if (r.fits) {
        s.passes = r.passes;
        s.metrics.push_back({std::string(d.id), name, std::string(d.unit)});
        chosen = true;
        break;
      }
    }
    if (chosen) continue;
    if (!any_exists)
      s.dropped.push_back(std::string(d.id) + ": " + s.chip + " has no such counter (tried " + tried + ")");
    else
      s.dropped.push_back(std::string(d.id) + ": does not fit in one PM sampling pass on " + s.chip + " with " +
                          ids_of(s.metrics));
  }
}

void choose_requested(MetricSelection& s, const std::vector<std::string>& names,
                      const std::vector<std::uint8_t>& availability) {
  for (const std::string& name : names) {
    const bool duplicate =
        std::any_of(s.metrics.begin(), s.metrics.end(), [&](const ChosenMetric& m) { return m.name == name; });
    if (duplicate) continue;
    const FitResult r = try_fit(s.chip, availability, s.metrics, name, &s.config_image);
    if (!r.exists) {
      s.dropped.push_back(name + ": no such metric on " + s.chip);
      continue;
    }
    if (!r.fits) {
      s.dropped.push_back(name + ": does not fit in one PM sampling pass on " + s.chip + " with " + ids_of(s.metrics));
      continue;
    }
    s.passes = r.passes;
    HostObject host(s.chip, availability);
    std::string unit = host.ok() ? host.unit_of(name) : std::string();
    if (name.find("pct_of_peak") != std::string::npos) unit = std::string(kPct);
    s.metrics.push_back({name, name, unit});
  }
}

}  // namespace

const std::vector<DefaultMetric>& default_metrics() {
  static const std::vector<DefaultMetric> kDefault = {
      {"sm_active",
       "share of SM cycles with at least one warp resident",
       kPct,
       {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"}},
      {"tensor_active",
       "share of cycles the tensor pipes are busy",
       kPct,
       {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed"}},
      {"sm_occupancy",
       "warps resident on the SMs against the most they can hold",
       kPct,
       {"sm__warps_active.avg.pct_of_peak_sustained_elapsed",
        "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
        "tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed"}},
      {"sm_issue",
       "instructions issued against the SMs' peak issue rate",
       kPct,
       {"sm__inst_issued.avg.pct_of_peak_sustained_elapsed", "smsp__inst_issued.avg.pct_of_peak_sustained_elapsed"}},
      {"dram_read",
       "bytes read from device memory per second",
       kBytesPerSecond,
       {"dram__bytes_read.sum.per_second", "dram__bytes_op_read.sum.per_second",
        "fbpa__dram_read_bytes.sum.per_second"}},
      {"dram_write",
       "bytes written to device memory per second",
       kBytesPerSecond,
       {"dram__bytes_write.sum.per_second", "dram__bytes_op_write.sum.per_second",
        "fbpa__dram_write_bytes.sum.per_second"}},
      {"pcie_read", "bytes the GPU read over PCIe per second", kBytesPerSecond, {"pcie__read_bytes.sum.per_second"}},
      {"pcie_write", "bytes the GPU wrote over PCIe per second", kBytesPerSecond, {"pcie__write_bytes.sum.per_second"}},
      {"nvlink_rx", "bytes received over NVLink per second", kBytesPerSecond, {"nvlrx__bytes.sum.per_second"}},
      {"nvlink_tx", "bytes sent over NVLink per second", kBytesPerSecond, {"nvltx__bytes.sum.per_second"}},
  };
  return kDefault;
}

std::vector<std::string> pm_sampling_chips(std::string* error) {
  CUpti_Profiler_Host_GetSupportedChips_Params p{CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
  const CUptiResult r = cuptiProfilerHostGetSupportedChips(&p);
  std::vector<std::string> chips;
  if (r != CUPTI_SUCCESS) {
    if (error) *error = std::string("cuptiProfilerHostGetSupportedChips: ") + result_name(r);
    return chips;
  }
  for (std::size_t i = 0; i < p.numChips; ++i)
    if (p.ppChipNames[i]) chips.emplace_back(p.ppChipNames[i]);
  return chips;
}

bool metric_exists(std::string_view chip, std::string_view name) noexcept {
  try {
    HostObject host(chip, {});
    return host.ok() && host.add({std::string(name)});
  } catch (...) {
    return false;
  }
}

MetricSelection select_metrics(std::string_view chip, const MetricRequest& request,
                               const std::vector<std::uint8_t>& counter_availability) noexcept {
  MetricSelection s;
  try {
    s.chip = std::string(chip);
    {
      HostObject probe(chip, counter_availability);
      if (!probe.ok()) {
        s.error = "PM sampling does not support chip " + s.chip + " (" + result_name(probe.result()) + ")";
        return s;
      }
    }
    s.supported = true;
    if (request.use_default) choose_default(s, counter_availability);
    choose_requested(s, request.names, counter_availability);
    if (s.metrics.empty()) {
      s.config_image.clear();
      s.passes = 0;
      s.error = "no hardware metric could be chosen on " + s.chip;
    }
  } catch (const std::exception& e) {
    s.metrics.clear();
    s.config_image.clear();
    s.error = std::string("choosing hardware metrics failed: ") + e.what();
  }
  return s;
}

}  // namespace gpuscope::capture
