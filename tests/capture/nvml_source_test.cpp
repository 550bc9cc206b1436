// NVML as a sample source: the library absent (this machine has no driver)
// or not NVML says why in one line; a fake NVML gives every series per device
// in its unit, counts values it cannot read, and reports MIG and the maximum
// SM clock.
#include "capture/nvml_source.h"

#include <gtest/gtest.h>

#include <cstring>

namespace gpuscope::capture {
namespace {

// A fake NVML with two devices; device 1 cannot report its power.
struct FakeNvml {
  static inline int init_result = 0;
  static inline unsigned count = 2;
  static inline int shutdowns = 0;
  static inline unsigned long long reasons = 0;
  static inline unsigned mig = 0;
};
int fake_init() { return FakeNvml::init_result; }
int fake_shutdown() { return ++FakeNvml::shutdowns, 0; }
const char* fake_error(int rc) { return rc == 9 ? "Driver Not Loaded" : "Unknown Error"; }
int fake_count(unsigned* n) { return *n = FakeNvml::count, 0; }
int fake_handle(unsigned i, NvmlApi::Device* d) {
  *d = reinterpret_cast<NvmlApi::Device>(static_cast<std::uintptr_t>(i + 1));
  return 0;
}
unsigned index_of(NvmlApi::Device d) { return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(d)) - 1; }
int fake_clock(NvmlApi::Device d, int type, unsigned* mhz) {
  *mhz = (type == 1 ? 1980 : 2619) - 100 * index_of(d);
  return 0;
}
int fake_max_clock(NvmlApi::Device, int type, unsigned* mhz) { return *mhz = type == 1 ? 1980 : 2619, 0; }
int fake_power(NvmlApi::Device d, unsigned* mw) {
  if (index_of(d) == 1) return 3;  // NVML_ERROR_NOT_SUPPORTED
  return *mw = 412'500, 0;
}
int fake_limit(NvmlApi::Device, unsigned* mw) { return *mw = 700'000, 0; }
int fake_temperature(NvmlApi::Device, int, unsigned* c) { return *c = 71, 0; }
int fake_reasons(NvmlApi::Device, unsigned long long* r) { return *r = FakeNvml::reasons, 0; }
int fake_memory(NvmlApi::Device, std::uint64_t info[3]) {
  info[0] = 141ull << 30;
  info[1] = 100ull << 30;
  info[2] = 41ull << 30;
  return 0;
}
int fake_mig(NvmlApi::Device d, unsigned* current, unsigned* pending) {
  *current = index_of(d) == 0 ? FakeNvml::mig : 0;
  *pending = 0;
  return 0;
}

NvmlApi fake_api() {
  NvmlApi a;
  a.init = fake_init;
  a.shutdown = fake_shutdown;
  a.error_string = fake_error;
  a.device_count = fake_count;
  a.device_handle = fake_handle;
  a.clock = fake_clock;
  a.max_clock = fake_max_clock;
  a.power = fake_power;
  a.power_limit = fake_limit;
  a.temperature = fake_temperature;
  a.throttle_reasons = fake_reasons;
  a.memory_info = fake_memory;
  a.mig_mode = fake_mig;
  return a;
}

class NvmlFake : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeNvml::init_result = 0;
    FakeNvml::count = 2;
    FakeNvml::shutdowns = 0;
    FakeNvml::reasons = 0;
    FakeNvml::mig = 0;
  }
};

TEST(Nvml, AbsentLibrarySaysWhyAndGivesNoSource) {
  std::string why;
  // This machine has no NVIDIA driver: the real name is absent too (on a GPU
  // machine it loads, and this part is checked by tests/gpu).
  EXPECT_EQ(load_nvml(&why, "libnvidia-ml-not-here.so.1"), nullptr);
  EXPECT_NE(why.find("NVML not loaded: libnvidia-ml-not-here.so.1"), std::string::npos) << why;
  why.clear();
  auto real = load_nvml(&why);
  if (!real) {
    EXPECT_NE(why.find("NVML not"), std::string::npos) << why;
  }
}

TEST(Nvml, ALibraryThatIsNotNvmlIsRefused) {
  std::string why;
  EXPECT_EQ(load_nvml(&why, "libm.so.6"), nullptr);
  EXPECT_NE(why.find("libm.so.6 has no nvmlInit_v2"), std::string::npos) << why;
}

TEST_F(NvmlFake, InitFailureIsTheMessage) {
  FakeNvml::init_result = 9;
  NvmlSource s(fake_api());
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "nvmlInit: Driver Not Loaded");
  std::vector<Sample> out;
  EXPECT_FALSE(s.read(1, &out));
  EXPECT_TRUE(out.empty());
}

TEST_F(NvmlFake, NoDeviceIsTheMessage) {
  FakeNvml::count = 0;
  {
    NvmlSource s(fake_api());
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "NVML sees no device");
  }
  EXPECT_EQ(FakeNvml::shutdowns, 1);  // initialized, so shut down
}

TEST_F(NvmlFake, EverySeriesOfEveryDeviceInItsUnit) {
  FakeNvml::reasons = throttle::kSwPowerCap | throttle::kHwThermal;
  NvmlSource s(fake_api());
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(s.devices().size(), 2u);
  EXPECT_EQ(s.devices()[0].max_sm_clock_mhz, 1980u);
  ASSERT_EQ(s.series().size(), 14u);
  EXPECT_EQ(s.series()[0], (SampleSeries{nvml_series::kSmClock, 0, "MHz", "nvml"}));
  EXPECT_EQ(s.series()[2], (SampleSeries{nvml_series::kPower, 0, "W", "nvml"}));
  EXPECT_EQ(s.series()[7], (SampleSeries{nvml_series::kSmClock, 1, "MHz", "nvml"}));
  EXPECT_EQ(s.series()[13], (SampleSeries{nvml_series::kMemoryUsed, 1, "B", "nvml"}));

  std::vector<Sample> out;
  ASSERT_TRUE(s.read(5'000, &out));
  ASSERT_EQ(out.size(), 13u);  // device 1 has no power reading
  EXPECT_EQ(s.failed_values(), 1u);
  auto value = [&](const char* name, std::uint32_t device) {
    for (const Sample& x : out) {
      const SampleSeries& ser = s.series()[x.series];
      if (ser.name == name && ser.device == device) return x.value;
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(value(nvml_series::kSmClock, 0), 1980);
  EXPECT_DOUBLE_EQ(value(nvml_series::kSmClock, 1), 1880);
  EXPECT_DOUBLE_EQ(value(nvml_series::kMemoryClock, 0), 2619);
  EXPECT_DOUBLE_EQ(value(nvml_series::kPower, 0), 412.5);
  EXPECT_DOUBLE_EQ(value(nvml_series::kPower, 1), -1);
  EXPECT_DOUBLE_EQ(value(nvml_series::kPowerLimit, 1), 700);
  EXPECT_DOUBLE_EQ(value(nvml_series::kTemperature, 0), 71);
  EXPECT_DOUBLE_EQ(value(nvml_series::kMemoryUsed, 0), 41.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(value(nvml_series::kThrottle, 0), static_cast<double>(FakeNvml::reasons));
  for (const Sample& x : out) EXPECT_EQ(x.time_ns, 5'000);
}

TEST_F(NvmlFake, MigModeIsReported) {
  FakeNvml::mig = 1;
  NvmlSource s(fake_api());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s.devices()[0].mig);
  EXPECT_FALSE(s.devices()[1].mig);
}

TEST_F(NvmlFake, MissingOptionalCallsAreNotFatal) {
  NvmlApi api = fake_api();
  api.max_clock = nullptr;
  api.mig_mode = nullptr;
  api.throttle_reasons = nullptr;
  NvmlSource s(api);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.devices()[0].max_sm_clock_mhz, 0u);
  std::vector<Sample> out;
  ASSERT_TRUE(s.read(1, &out));
  EXPECT_EQ(out.size(), 11u);
  EXPECT_EQ(s.failed_values(), 3u);  // two throttle masks, one power
}

TEST(Nvml, ThrottleReasonsInWords) {
  EXPECT_EQ(describe_throttle_reasons(0), "none");
  EXPECT_EQ(describe_throttle_reasons(throttle::kSwPowerCap | throttle::kHwThermal), "sw power cap, hw thermal");
  EXPECT_EQ(describe_throttle_reasons(0x10000), "other");
}

}  // namespace
}  // namespace gpuscope::capture
