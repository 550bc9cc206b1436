// PM sampling without a GPU: setting it up fails with a reason in words and
// no crash, and every CUPTI refusal the capture may meet (privileges, another
// profiler, virtualized GPU, MIG, unsupported chip, no library) has its own
// message naming the call.
#include "capture/pm_sampling_source.h"

#include <cupti_result.h>
#include <gtest/gtest.h>

namespace gpuscope::capture {
namespace {

TEST(PmSampling, EachRefusalHasItsOwnReason) {
  struct Case {
    int result;
    const char* words;
  };
  const Case cases[] = {
      {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "restricted to administrators"},
      {CUPTI_ERROR_HARDWARE_BUSY, "another profiler holds"},
      {CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, "virtualized"},
      {CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES, "virtualized"},
      {CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "MIG mode"},
      {CUPTI_ERROR_NOT_SUPPORTED, "not supported on this GPU"},
      {CUPTI_ERROR_UNKNOWN, "hardware-counter library could not be used"},
      {CUPTI_ERROR_INVALID_PARAMETER, "could not be set up"},
  };
  for (const Case& c : cases) {
    const std::string m = describe_profiling_error("cuptiPmSamplingEnable", c.result);
    EXPECT_NE(m.find(c.words), std::string::npos) << m;
    EXPECT_NE(m.find("(cuptiPmSamplingEnable: CUPTI_ERROR_"), std::string::npos) << m;
  }
}

TEST(PmSampling, WithoutAGpuSetUpFailsCleanly) {
  PmSamplingSource source(0, MetricRequest{}, 10000);
  if (source.ok()) GTEST_SKIP() << "PM sampling works here (a GPU): tests/gpu checks it";
  EXPECT_FALSE(source.message().empty());
  EXPECT_NE(source.message().find("(cupti"), std::string::npos) << source.message();
  EXPECT_TRUE(source.series().empty());
  std::vector<Sample> out;
  EXPECT_FALSE(source.read(0, &out));
  EXPECT_TRUE(out.empty());
  PmSamplingSource again(0, MetricRequest{}, 10000);  // set up twice: still clean
  EXPECT_FALSE(again.ok());
}

}  // namespace
}  // namespace gpuscope::capture
