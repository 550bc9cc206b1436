// The palette seen with normal colour vision and simulated deuteranopia and
// protanopia (Machado, Oliveira and Fernandes 2009, severity 1, applied in
// linear RGB): every two kernel categories stay apart in CIELAB, and no lane
// of another kind (utilization, copies, memsets, counters, API calls) takes
// a colour a category could be mistaken for.
#include "viewer/colors.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <set>
#include <string>

#include "viewer/view_fixture.h"

namespace gpuscope::viewer {
namespace {

using Mat = std::array<std::array<double, 3>, 3>;
constexpr Mat kNormal = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
constexpr Mat kProtanopia = {
    {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}}};
constexpr Mat kDeuteranopia = {
    {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}}};
constexpr std::array<const Mat*, 3> kVisions = {&kNormal, &kProtanopia, &kDeuteranopia};
constexpr const char* kVisionNames[] = {"normal vision", "protanopia", "deuteranopia"};

using Lab = std::array<double, 3>;

// sRGB (8 bits) -> linear RGB -> simulated -> XYZ (D65) -> CIELAB.
Lab lab_as_seen(ImU32 c, const Mat& m) {
  const double srgb[3] = {static_cast<double>((c >> IM_COL32_R_SHIFT) & 0xff) / 255,
                          static_cast<double>((c >> IM_COL32_G_SHIFT) & 0xff) / 255,
                          static_cast<double>((c >> IM_COL32_B_SHIFT) & 0xff) / 255};
  double lin[3], sim[3];
  for (int i = 0; i < 3; ++i) lin[i] = srgb[i] <= 0.04045 ? srgb[i] / 12.92 : std::pow((srgb[i] + 0.055) / 1.055, 2.4);
  for (int i = 0; i < 3; ++i) sim[i] = std::clamp(m[i][0] * lin[0] + m[i][1] * lin[1] + m[i][2] * lin[2], 0.0, 1.0);
  const double x = 0.4124564 * sim[0] + 0.3575761 * sim[1] + 0.1804375 * sim[2];
  const double y = 0.2126729 * sim[0] + 0.7151522 * sim[1] + 0.0721750 * sim[2];
  const double z = 0.0193339 * sim[0] + 0.1191920 * sim[1] + 0.9503041 * sim[2];
  auto f = [](double t) { return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116; };
  const double fx = f(x / 0.95047), fy = f(y / 1.0), fz = f(z / 1.08883);
  return {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
}

// The CIE76 distance of two colours, the smaller of the three visions'; which vision in `*worst`.
double distance(ImU32 a, ImU32 b, int* worst = nullptr) {
  double d = 1e9;
  for (std::size_t v = 0; v < kVisions.size(); ++v) {
    const Lab la = lab_as_seen(a, *kVisions[v]), lb = lab_as_seen(b, *kVisions[v]);
    const double dv = std::hypot(la[0] - lb[0], la[1] - lb[1], la[2] - lb[2]);
    if (dv < d) {
      d = dv;
      if (worst) *worst = static_cast<int>(v);
    }
  }
  return d;
}

constexpr double kCategoryDistance = 15;  // two categories (≈ 2.3 × the "clearly different" ΔE of 6.5)
constexpr double kOtherDistance = 10;     // another kind's lane from any category, and lanes sharing a row

TEST(Colors, TheCategoriesAreApartAlsoForDeuteranopiaAndProtanopia) {
  const auto cats = category_palette();
  ASSERT_EQ(cats.size(), static_cast<std::size_t>(kKernelCategoryCount));
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    EXPECT_EQ(cats[static_cast<std::size_t>(c)].name, to_string(static_cast<KernelCategory>(c)));
    EXPECT_EQ(cats[static_cast<std::size_t>(c)].color, category_color(static_cast<KernelCategory>(c)));
  }
  for (std::size_t a = 0; a < cats.size(); ++a)
    for (std::size_t b = a + 1; b < cats.size(); ++b) {
      int v = 0;
      const double d = distance(cats[a].color, cats[b].color, &v);
      EXPECT_GE(d, kCategoryDistance) << cats[a].name << " and " << cats[b].name << " with " << kVisionNames[v];
    }
}

TEST(Colors, NoLaneOfAnotherKindLooksLikeACategory) {
  const auto cats = category_palette();
  const auto others = other_kind_palette();
  for (const NamedColor& o : others)
    for (const NamedColor& c : cats) {
      int v = 0;
      EXPECT_GE(distance(o.color, c.color, &v), kOtherDistance)
          << o.name << " and " << c.name << " with " << kVisionNames[v];
    }
  for (std::size_t a = 0; a < others.size(); ++a)
    for (std::size_t b = a + 1; b < others.size(); ++b)
      if (others[a].group == others[b].group) {
        int v = 0;
        EXPECT_GE(distance(others[a].color, others[b].color, &v), kOtherDistance)
            << others[a].name << " and " << others[b].name << " with " << kVisionNames[v];
      }
  // The functions draw what the palette lists.
  auto listed = [&](ImU32 c) {
    for (const NamedColor& o : others)
      if (o.color == c) return true;
    return false;
  };
  for (CopyKind k : {CopyKind::htod, CopyKind::dtoh, CopyKind::dtod, CopyKind::ptop, CopyKind::unknown})
    EXPECT_TRUE(listed(copy_color(k)));
  EXPECT_TRUE(listed(memset_color()));
  EXPECT_TRUE(listed(sync_color()));
  EXPECT_TRUE(listed(os_call_color()));
  for (ApiDomain d : {ApiDomain::runtime, ApiDomain::driver})
    for (bool launch : {true, false}) EXPECT_TRUE(listed(api_color(d, launch)));
}

// Host samples' frames: the colour follows the name (stable), every two
// colours of the palette are apart for all three visions, and each stands
// out from the dark lane it is drawn on.
TEST(Colors, FramesKeepTheirColourAndStayApart) {
  EXPECT_EQ(frame_color("cuda-cloverleaf`main"), frame_color(std::string("cuda-cloverleaf`main")));
  const auto pal = frame_palette();
  ASSERT_GE(pal.size(), 6u);
  bool found = false;
  for (ImU32 c : pal) found = found || c == frame_color("MPI_Waitall");
  EXPECT_TRUE(found);
  // Different names spread over the palette.
  std::set<ImU32> used;
  for (int i = 0; i < 64; ++i) used.insert(frame_color("frame" + std::to_string(i)));
  EXPECT_EQ(used.size(), pal.size());
  for (std::size_t a = 0; a < pal.size(); ++a) {
    int v = 0;
    EXPECT_GE(distance(pal[a], IM_COL32(30, 33, 40, 255), &v), 25) << a << " with " << kVisionNames[v];
    for (std::size_t b = a + 1; b < pal.size(); ++b)
      EXPECT_GE(distance(pal[a], pal[b], &v), kOtherDistance) << a << " and " << b << " with " << kVisionNames[v];
  }
}

// The palette before this one, as a check that the test can fail: its
// convolution, GEMM and pooling were three blues, memory and other two greys,
// and the utilization lane a fourth blue.
TEST(Colors, ThePreviousPaletteFailsTheseChecks) {
  const ImU32 old[] = {IM_COL32(230, 60, 60, 255),   IM_COL32(240, 140, 40, 255),  IM_COL32(220, 190, 50, 255),
                       IM_COL32(60, 120, 220, 255),  IM_COL32(90, 90, 230, 255),   IM_COL32(200, 90, 200, 255),
                       IM_COL32(70, 180, 170, 255),  IM_COL32(150, 200, 80, 255),  IM_COL32(110, 170, 230, 255),
                       IM_COL32(250, 120, 170, 255), IM_COL32(160, 110, 80, 255),  IM_COL32(40, 170, 90, 255),
                       IM_COL32(150, 150, 150, 255), IM_COL32(120, 130, 150, 255), IM_COL32(140, 80, 230, 255)};
  double least = 1e9;
  for (std::size_t a = 0; a < std::size(old); ++a)
    for (std::size_t b = a + 1; b < std::size(old); ++b) least = std::min(least, distance(old[a], old[b]));
  EXPECT_LT(least, kCategoryDistance);
  EXPECT_LT(distance(IM_COL32(110, 170, 230, 255), IM_COL32(86, 156, 214, 255)),
            kOtherDistance);  // pooling, utilization
}

// The legend names every colour the timeline draws: the categories the
// trace has, each other kind present, and the marks in use.
class Legend : public ViewTest {};

TEST_F(Legend, NamesEveryColourInUse) {
  testing::TraceFactory f;
  f.device(0);
  TraceBuilder& b = f.builder();
  f.kernel(0, 7, testing::names::kPad, 0, 100'000);
  f.kernel(0, 7, testing::names::kConvFp32, 200'000, 300'000);
  f.memcpy(0, 7, CopyKind::htod, MemoryKind::pinned, MemoryKind::device, 1 << 20, 400'000, 450'000);
  f.memset(0, 7, 500'000, 510'000);
  f.sync(SyncType::context, 0, 7, 520'000, 600'000);
  b.add_counter(CounterRow{10'000, b.counter_series(series_name::kMemoryAllocated, 0, "B"), 1e9});
  b.add_os_call(OsCallRow{530'000, 590'000, b.cpu_track(1, 1), b.intern("pthread_cond_wait"), 0, 0});
  auto d = std::make_shared<Document>("legend.gscope", f.build());
  d->set_profile(std::make_shared<const Profile>(compute_profile(d->trace())));
  View v;
  v.set_document(d);
  frames(v, 2);
  auto has = [&](std::string_view name, ImU32 color) {
    for (const auto& [n, c] : v.stats().legend)
      if (n == name) return c == color;
    return false;
  };
  EXPECT_TRUE(has("padding", category_color(KernelCategory::padding)));
  EXPECT_TRUE(has("convolution", category_color(KernelCategory::convolution)));
  EXPECT_FALSE(has("gemm", category_color(KernelCategory::gemm)));  // not in this trace
  EXPECT_TRUE(has("copy HtoD", copy_color(CopyKind::htod)));
  EXPECT_FALSE(has("copy DtoH", copy_color(CopyKind::dtoh)));
  EXPECT_TRUE(has("memset", memset_color()));
  EXPECT_TRUE(has("host sync", sync_color()));
  EXPECT_TRUE(has("OS call", os_call_color()));  // the thread's OS call lane
  EXPECT_TRUE(has("launch call", api_color(ApiDomain::runtime, true)));
  EXPECT_TRUE(has("utilization", kUtilizationColor));
  EXPECT_TRUE(has("kernels in flight", kInFlightColor));
  EXPECT_TRUE(has("concurrent kernels", kConcurrentColor));
  EXPECT_TRUE(has("memory", counter_color(d->trace().counter_series()[0])));
  EXPECT_FALSE(has("critical path", kCriticalPathColor));
  v.set_show_critical_path(true);
  ASSERT_TRUE(v.select_kernel(testing::names::kPad));
  frames(v, 2);
  EXPECT_TRUE(has("critical path", kCriticalPathColor));
  EXPECT_TRUE(has("highlighted", kHighlightColor));
  EXPECT_TRUE(has("selected", kSelectionColor));
}

}  // namespace
}  // namespace gpuscope::viewer
