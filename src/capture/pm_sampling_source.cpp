#include "capture/pm_sampling_source.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

namespace gpuscope::capture {

namespace {

// The hardware buffer the GPU writes samples into, and how many samples one
// decode may hold (the capture reads about every 10 ms: at 200 kHz that is
// 2000 samples; the rest stay in the hardware buffer for the next read).
constexpr std::size_t kHardwareBufferBytes = 256u << 20;
constexpr std::uint32_t kSamplesPerDecode = 4096;

const char* result_name(int r) {
  const char* s = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(r), &s) != CUPTI_SUCCESS || !s) return "unknown CUPTI error";
  return s;
}

// Turing and GA100 cannot trigger on time: their interval is in SYS clock cycles.
bool triggers_on_sysclk(const std::string& chip) { return chip.rfind("TU", 0) == 0 || chip == "GA100"; }

}  // namespace

std::string describe_profiling_error(const char* call, int r) {
  std::string what;
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      what =
          "GPU performance counters are restricted to administrators (run as root, or load the driver with "
          "NVreg_RestrictProfilingToAdminUsers=0)";
      break;
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      what = "the GPU is virtualized and its performance counters are not available to this guest";
      break;
    case CUPTI_ERROR_HARDWARE_BUSY: what = "another profiler holds the GPU's performance counters"; break;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME: what = "PM sampling is not supported on this GPU"; break;
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      what = "the GPU is in MIG mode, where PM sampling is not supported";
      break;
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      what = "the GPU runs in confidential computing mode, which hides its counters";
      break;
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      what = "PM sampling is not supported on this kind of device or system";
      break;
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
      what = "the hardware-counter library could not be used (no GPU, or a sandbox that does not load it)";
      break;
    default: what = "the hardware counters could not be set up"; break;
  }
  return what + " (" + call + ": " + result_name(r) + ")";
}

// The CUPTI objects of one device's sampling, released in reverse.
struct PmSamplingSource::State {
  bool profiler_initialized = false;
  CUpti_PmSampling_Object* sampling = nullptr;
  bool started = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  std::vector<std::uint8_t> counter_data;
  std::vector<double> values;

  ~State() {
    if (started) {
      CUpti_PmSampling_Stop_Params p{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
      p.pPmSamplingObject = sampling;
      cuptiPmSamplingStop(&p);
    }
    if (sampling) {
      CUpti_PmSampling_Disable_Params p{CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
      p.pPmSamplingObject = sampling;
      cuptiPmSamplingDisable(&p);
    }
    if (host) {
      CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      p.pHostObject = host;
      cuptiProfilerHostDeinitialize(&p);
    }
    if (profiler_initialized) {
      CUpti_Profiler_DeInitialize_Params p{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
      cuptiProfilerDeInitialize(&p);
    }
  }

  bool reset_counter_data() {
    CUpti_PmSampling_CounterDataImage_Initialize_Params p{
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    p.pPmSamplingObject = sampling;
    p.counterDataSize = counter_data.size();
    p.pCounterData = counter_data.data();
    return cuptiPmSamplingCounterDataImageInitialize(&p) == CUPTI_SUCCESS;
  }
};

PmSamplingSource::PmSamplingSource(std::size_t device_index, const MetricRequest& request, unsigned hz) noexcept
    : device_(static_cast<std::uint32_t>(device_index)) {
  try {
    ok_ = set_up(device_index, request, hz);
  } catch (const std::exception& e) {
    message_ = std::string("PM sampling could not be set up: ") + e.what();
    ok_ = false;
  }
  if (!ok_) state_.reset();
}

PmSamplingSource::~PmSamplingSource() = default;

bool PmSamplingSource::set_up(std::size_t device_index, const MetricRequest& request, unsigned hz) {
  state_ = std::make_unique<State>();
  State& s = *state_;
  auto fail = [&](const char* call, CUptiResult r) {
    message_ = describe_profiling_error(call, r);
    return false;
  };
  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  if (CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) return fail("cuptiProfilerInitialize", r);
  s.profiler_initialized = true;

  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = device_index;
  if (CUptiResult r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS || !chip.pChipName)
    return fail("cuptiDeviceGetChipName", r);
  const std::string chip_name = chip.pChipName;

  CUpti_PmSampling_Enable_Params enable{CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
  enable.deviceIndex = device_index;
  if (CUptiResult r = cuptiPmSamplingEnable(&enable); r != CUPTI_SUCCESS) return fail("cuptiPmSamplingEnable", r);
  s.sampling = enable.pPmSamplingObject;

  CUpti_PmSampling_GetCounterAvailability_Params avail{CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.deviceIndex = device_index;
  if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&avail); r != CUPTI_SUCCESS)
    return fail("cuptiPmSamplingGetCounterAvailability", r);
  std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&avail); r != CUPTI_SUCCESS)
    return fail("cuptiPmSamplingGetCounterAvailability", r);

  selection_ = select_metrics(chip_name, request, availability);
  if (selection_.metrics.empty()) {
    message_ = selection_.error;
    return false;
  }
  for (const ChosenMetric& m : selection_.metrics) {
    s.names.push_back(m.name);
    series_.push_back({"hw." + m.id, device_, m.unit, kPmSamplingSource});
  }
  for (const std::string& n : s.names) s.name_ptrs.push_back(n.c_str());
  s.values.resize(s.names.size());

  // A host object with the same metrics evaluates the decoded samples.
  CUpti_Profiler_Host_Initialize_Params host{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  host.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  host.pChipName = chip_name.c_str();
  host.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = cuptiProfilerHostInitialize(&host); r != CUPTI_SUCCESS)
    return fail("cuptiProfilerHostInitialize", r);
  s.host = host.pHostObject;
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = s.host;
  add.ppMetricNames = s.name_ptrs.data();
  add.numMetrics = s.name_ptrs.size();
  if (CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS)
    return fail("cuptiProfilerHostConfigAddMetrics", r);

  CUpti_PmSampling_SetConfig_Params config{CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  config.pPmSamplingObject = s.sampling;
  config.configSize = selection_.config_image.size();
  config.pConfig = selection_.config_image.data();
  config.hardwareBufferSize = kHardwareBufferBytes;
  const std::uint64_t interval_ns = 1'000'000'000ull / (hz ? hz : 1);
  // SYS clock triggers count cycles; about 1 GHz is assumed (unverified on Turing and GA100).
  config.triggerMode = triggers_on_sysclk(chip_name) ? CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL
                                                     : CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  config.samplingInterval = interval_ns;
  config.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if (CUptiResult r = cuptiPmSamplingSetConfig(&config); r != CUPTI_SUCCESS) return fail("cuptiPmSamplingSetConfig", r);

  CUpti_PmSampling_GetCounterDataSize_Params size{CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pPmSamplingObject = s.sampling;
  size.pMetricNames = s.name_ptrs.data();
  size.numMetrics = s.name_ptrs.size();
  size.maxSamples = kSamplesPerDecode;
  if (CUptiResult r = cuptiPmSamplingGetCounterDataSize(&size); r != CUPTI_SUCCESS)
    return fail("cuptiPmSamplingGetCounterDataSize", r);
  s.counter_data.assign(size.counterDataSize, 0);
  if (!s.reset_counter_data()) return fail("cuptiPmSamplingCounterDataImageInitialize", CUPTI_ERROR_UNKNOWN);

  CUpti_PmSampling_Start_Params start{CUpti_PmSampling_Start_Params_STRUCT_SIZE};
  start.pPmSamplingObject = s.sampling;
  if (CUptiResult r = cuptiPmSamplingStart(&start); r != CUPTI_SUCCESS) return fail("cuptiPmSamplingStart", r);
  s.started = true;
  return true;
}

bool PmSamplingSource::read(std::int64_t, std::vector<Sample>* out) {
  if (!ok_ || !state_) return false;
  // A full counter data image stops the decode early: decode again until
  // the hardware buffer is empty (bounded, so a read never spins).
  for (int round = 0; round < 64; ++round) {
    CUpti_PmSampling_DecodeData_Params decode{CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
    decode.pPmSamplingObject = state_->sampling;
    decode.pCounterDataImage = state_->counter_data.data();
    decode.counterDataImageSize = state_->counter_data.size();
    if (CUptiResult r = cuptiPmSamplingDecodeData(&decode); r != CUPTI_SUCCESS) {
      message_ = describe_profiling_error("cuptiPmSamplingDecodeData", r);
      return false;
    }
    if (decode.overflow) ++overflows_;
    if (!decode_into(out)) return false;
    if (decode.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
  }
  return true;
}

bool PmSamplingSource::decode_into(std::vector<Sample>* out) {
  State& s = *state_;
  CUpti_PmSampling_GetCounterDataInfo_Params info{CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  if (CUptiResult r = cuptiPmSamplingGetCounterDataInfo(&info); r != CUPTI_SUCCESS) {
    message_ = describe_profiling_error("cuptiPmSamplingGetCounterDataInfo", r);
    return false;
  }
  for (std::size_t i = 0; i < info.numCompletedSamples; ++i) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params sample{
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
    sample.pPmSamplingObject = s.sampling;
    sample.pCounterDataImage = s.counter_data.data();
    sample.counterDataImageSize = s.counter_data.size();
    sample.sampleIndex = i;
    if (cuptiPmSamplingCounterDataGetSampleInfo(&sample) != CUPTI_SUCCESS) continue;
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    eval.pHostObject = s.host;
    eval.pCounterDataImage = s.counter_data.data();
    eval.counterDataImageSize = s.counter_data.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = s.name_ptrs.data();
    eval.numMetrics = s.name_ptrs.size();
    eval.pMetricValues = s.values.data();
    if (cuptiProfilerHostEvaluateToGpuValues(&eval) != CUPTI_SUCCESS) continue;
    // A sample covers [start, end): it is placed at its end, as counters are.
    const auto t = static_cast<std::int64_t>(sample.endTimestamp);
    for (std::uint32_t m = 0; m < s.values.size(); ++m) out->push_back({t, m, s.values[m]});
  }
  if (!s.reset_counter_data()) {
    message_ = describe_profiling_error("cuptiPmSamplingCounterDataImageInitialize", CUPTI_ERROR_UNKNOWN);
    return false;
  }
  return true;
}

}  // namespace gpuscope::capture
