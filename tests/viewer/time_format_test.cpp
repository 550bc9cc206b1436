// The timeline's own labels: ruler offsets, exact timestamps, tick steps
// (durations, sizes and bandwidth: tests/words/format_test.cpp).
#include "viewer/time_format.h"

#include <gtest/gtest.h>

#include <random>

namespace gpuscope::viewer {
namespace {

TEST(FormatOffset, ShowsJustEnoughDecimalsForTheStep) {
  EXPECT_EQ(format_offset(1'500'000, 500'000), "1.5 ms");
  EXPECT_EQ(format_offset(2'000'000'000, 1'000'000'000), "2 s");
  EXPECT_EQ(format_offset(0, 200), "0 ns");
  EXPECT_EQ(format_offset(1'234'000, 1'000), "1.234 ms");
  // A step finer than the unit's thousandths moves to the next smaller unit.
  EXPECT_EQ(format_offset(1'000'000'500, 100), "1000000.5 µs");
}

TEST(FormatTimestamp, IsExactToTheNanosecond) {
  EXPECT_EQ(format_timestamp(42'226'422'001), "42.226422001 s");
  EXPECT_EQ(format_timestamp(-5), "-0.000000005 s");
}

// Property: the step is the smallest 1/2/5·10^k whose on-screen spacing is at
// least min_px, and `first` is the first multiple of it (from the origin) in view.
TEST(RulerTicks, SmallestNiceStepAndFirstTickMatchBruteForce) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    const TimeNs origin = static_cast<TimeNs>(rng() % 1'000'000'000'000ull);
    const TimeNs start = origin + static_cast<TimeNs>(rng() % 2'000'000'000ull) - 1'000'000'000;
    const TimeNs span = 1 + static_cast<TimeNs>(rng() % (iter % 3 == 0 ? 100 : 10'000'000'000ull));
    const double width = 50 + static_cast<double>(rng() % 3000);
    const double min_px = 40 + static_cast<double>(rng() % 100);
    const RulerTicks t = ruler_ticks(origin, start, start + span, width, min_px);
    // Brute force: walk the 1-2-5 sequence.
    TimeNs want = 1;
    for (TimeNs decade = 1;; decade *= 10) {
      bool done = false;
      for (TimeNs m : {1, 2, 5})
        if (static_cast<double>(decade * m) * width / static_cast<double>(span) >= min_px) {
          want = decade * m;
          done = true;
          break;
        }
      if (done) break;
    }
    ASSERT_EQ(t.step_ns, want) << "span " << span << " width " << width;
    ASSERT_GE(t.first, start);
    ASSERT_LT(t.first - t.step_ns, start);
    ASSERT_EQ((t.first - origin) % t.step_ns, 0);
  }
}

}  // namespace
}  // namespace gpuscope::viewer
