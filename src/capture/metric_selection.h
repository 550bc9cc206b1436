// Which hardware counters PM sampling records, per chip: the default set
// (SM active, tensor pipe active, SM occupancy, SM instruction issue, DRAM
// read and write throughput, PCIe and NVLink throughput where the chip has
// them) resolved to the chip's metric names, or the names the user gave, and
// the PM sampling configuration image built from them with CUPTI's profiler
// host API (cupti_profiler_host.h). The host API needs no GPU: it knows every
// chip it supports, so all of this runs (and is tested) on any machine.
//
// PM sampling collects in one pass. A metric that does not exist on the chip,
// or that would need a second pass with those already chosen, is dropped and
// named in `dropped`; the others are still recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/metric_list.h"

namespace gpuscope::capture {

// The passes a PM sampling configuration may need.
inline constexpr std::size_t kPmSamplingMaxPasses = 1;

// One metric of the default set: a stable id used in the trace ("sm_active"),
// what it measures, its unit ("%" of peak or "B/s") and the metric names that
// measure it on different chips, the preferred first.
struct DefaultMetric {
  std::string_view id;
  std::string_view description;
  std::string_view unit;
  std::vector<std::string_view> candidates;
};
const std::vector<DefaultMetric>& default_metrics();

// A metric chosen for a chip.
struct ChosenMetric {
  std::string id;    // the default set's id, or the metric name itself for a requested one
  std::string name;  // the chip's metric name ("sm__cycles_active.avg.pct_of_peak_sustained_elapsed")
  std::string unit;  // "%", "B/s", or what the host API says for a requested one
};

struct MetricSelection {
  std::string chip;
  bool supported = false;             // the host API can build PM sampling configurations for the chip
  std::string error;                  // why not, when !supported or nothing could be chosen
  std::vector<ChosenMetric> metrics;  // in the order of the configuration
  std::vector<std::string> dropped;   // one message per metric left out, naming it and why
  std::vector<std::uint8_t> config_image;
  std::size_t passes = 0;  // of config_image (<= kPmSamplingMaxPasses when it is not empty)
};

// The chips CUPTI's profiler host API lists ("GV100" … "GB20B"); empty (and
// *error) if the API cannot be used.
std::vector<std::string> pm_sampling_chips(std::string* error = nullptr);

// Resolves `request` on `chip` and builds the configuration. `counter_availability`
// is the image cuptiPmSamplingGetCounterAvailability gives for a real device
// (empty offline: the chip's full set of counters is assumed). Never throws.
MetricSelection select_metrics(std::string_view chip, const MetricRequest& request,
                               const std::vector<std::uint8_t>& counter_availability = {}) noexcept;

// Whether `name` alone is a metric the host API accepts for `chip`.
bool metric_exists(std::string_view chip, std::string_view name) noexcept;

}  // namespace gpuscope::capture
