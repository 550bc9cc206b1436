// Hardware counters of one device through CUPTI PM sampling, as a
// SampleSource: the metrics chosen for the device's chip (metric_selection.h)
// are sampled by the GPU at a fixed interval into a hardware buffer, which
// each read() decodes into one sample per metric and interval.
//
// Everything that keeps PM sampling from running (an unsupported chip,
// counters restricted to administrators, another profiler holding them, a
// virtualized or sandboxed GPU, MIG, no GPU at all) leaves ok() false and
// message() saying which, in words; the capture goes on without these series.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capture/metric_selection.h"
#include "capture/sampler.h"

namespace gpuscope::capture {

inline constexpr const char* kPmSamplingSource = "cupti-pm-sampling";

// One line for people for a CUPTI result of the profiling API ("GPU
// performance counters are restricted to administrators …"), naming `call`.
std::string describe_profiling_error(const char* call, int cupti_result);

class PmSamplingSource final : public SampleSource {
 public:
  // Sets up PM sampling on CUDA device `device_index` with the metrics of
  // `request` at `hz` samples per second. The CUDA context must exist.
  PmSamplingSource(std::size_t device_index, const MetricRequest& request, unsigned hz) noexcept;
  ~PmSamplingSource() override;  // stops and disables sampling
  PmSamplingSource(const PmSamplingSource&) = delete;
  PmSamplingSource& operator=(const PmSamplingSource&) = delete;

  bool ok() const { return ok_; }
  std::string message() const override { return message_; }
  const MetricSelection& selection() const { return selection_; }
  const std::vector<SampleSeries>& series() const override { return series_; }
  bool read(std::int64_t now_ns, std::vector<Sample>* out) override;
  // Times the hardware buffer overflowed (samples lost in between).
  std::uint64_t overflows() const override { return overflows_; }

 private:
  struct State;
  bool set_up(std::size_t device_index, const MetricRequest& request, unsigned hz);
  bool decode_into(std::vector<Sample>* out);

  std::unique_ptr<State> state_;
  bool ok_ = false;
  std::string message_;
  MetricSelection selection_;
  std::vector<SampleSeries> series_;
  std::uint64_t overflows_ = 0;
  std::uint32_t device_ = 0;
};

}  // namespace gpuscope::capture
