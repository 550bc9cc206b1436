#include "viewer/options.h"

#include <gtest/gtest.h>

namespace gpuscope::viewer {
namespace {

TEST(ViewerOptions, Size) {
  int w = 0, h = 0;
  std::string e;
  EXPECT_TRUE(parse_size("1280x800", &w, &h, &e));
  EXPECT_EQ(w, 1280);
  EXPECT_EQ(h, 800);
  EXPECT_TRUE(parse_size("640X480", &w, &h, &e));
  for (const char* bad : {"", "1280", "x800", "1280x", "12x800", "1280x99999", "-5x100", "1280x800x3", "1e3x800"}) {
    EXPECT_FALSE(parse_size(bad, &w, &h, &e)) << bad;
    EXPECT_FALSE(e.empty());
  }
}

TEST(ViewerOptions, DurationAndZoom) {
  TimeNs v = 0, a = 0, b = 0;
  std::string e;
  EXPECT_TRUE(parse_duration("1500", &v, &e));
  EXPECT_EQ(v, 1500);
  EXPECT_TRUE(parse_duration("250us", &v, &e));
  EXPECT_EQ(v, 250'000);
  EXPECT_TRUE(parse_duration("250µs", &v, &e));  // as the viewer writes it
  EXPECT_EQ(v, 250'000);
  EXPECT_TRUE(parse_duration("2ms", &v, &e));
  EXPECT_EQ(v, 2'000'000);
  EXPECT_TRUE(parse_duration("3s", &v, &e));
  EXPECT_EQ(v, 3'000'000'000);
  // Decimals, as every time the viewer prints has them (the ruler writes "1000000.5 µs").
  EXPECT_TRUE(parse_duration("1.5ms", &v, &e)) << e;
  EXPECT_EQ(v, 1'500'000);
  EXPECT_TRUE(parse_duration("1000000.5µs", &v, &e)) << e;
  EXPECT_EQ(v, 1'000'000'500);
  EXPECT_TRUE(parse_duration("0.25s", &v, &e));
  EXPECT_EQ(v, 250'000'000);
  EXPECT_TRUE(parse_duration("2.0000000005s", &v, &e));  // to the nearest ns
  EXPECT_EQ(v, 2'000'000'001);
  EXPECT_TRUE(parse_duration("7.4", &v, &e));
  EXPECT_EQ(v, 7);
  for (const char* bad :
       {"", "ms", "-1", "1.ms", ".5ms", "1.5.5ms", "5 ms", "3h", "99999999999999999999", "2000000s", "1000000.5s"})
    EXPECT_FALSE(parse_duration(bad, &v, &e)) << bad;
  EXPECT_TRUE(parse_zoom("1.25ms:2.5ms", &a, &b, &e));
  EXPECT_EQ(a, 1'250'000);
  EXPECT_EQ(b, 2'500'000);
  EXPECT_TRUE(parse_zoom("0:5ms", &a, &b, &e));
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 5'000'000);
  EXPECT_FALSE(parse_zoom("5ms:1ms", &a, &b, &e));
  EXPECT_FALSE(parse_zoom("5ms", &a, &b, &e));
  EXPECT_FALSE(parse_zoom("1:1", &a, &b, &e));
}

TEST(ViewerOptions, JsonBesideThePng) {
  EXPECT_EQ(json_path_for("out/shot.png"), "out/shot.json");
  EXPECT_EQ(json_path_for("SHOT.PNG"), "SHOT.json");
  EXPECT_EQ(json_path_for("shot"), "shot.json");
}

}  // namespace
}  // namespace gpuscope::viewer
