#include "viewer/colors.h"

#include <algorithm>
#include <iterator>

namespace gpuscope::viewer {

namespace {

// Chosen for distance in CIELAB under normal vision, deuteranopia and
// protanopia (colors_test.cpp): the problem categories warm and apart by
// lightness (a vermillion, an orange, a yellow: Okabe and Ito's), the
// compute ones cool, memory a light and other a dark grey.
constexpr NamedColor kCategories[] = {
    // in KernelCategory's order
    {"padding", IM_COL32(213, 94, 0, 255), 0},      {"broadcast", IM_COL32(230, 159, 0, 255), 0},
    {"transpose", IM_COL32(240, 228, 66, 255), 0},  {"convolution", IM_COL32(0, 122, 188, 255), 0},
    {"gemm", IM_COL32(83, 169, 253, 255), 0},       {"normalization", IM_COL32(174, 122, 168, 255), 0},
    {"elementwise", IM_COL32(0, 164, 106, 255), 0}, {"reduction", IM_COL32(174, 227, 104, 255), 0},
    {"pooling", IM_COL32(189, 212, 230, 255), 0},   {"softmax_loss", IM_COL32(239, 185, 162, 255), 0},
    {"optimizer", IM_COL32(140, 100, 60, 255), 0},  {"communication", IM_COL32(43, 191, 231, 255), 0},
    {"memory", IM_COL32(173, 171, 171, 255), 0},    {"other", IM_COL32(103, 98, 107, 255), 0},
    {"attention", IM_COL32(135, 64, 215, 255), 0},
};

// Group 1: the lanes under a GPU's header; 2: a stream's row beside its
// kernels; 3: a thread's rows.
constexpr NamedColor kOthers[] = {
    {"utilization", kUtilizationColor, 1},
    {"kernels in flight", kInFlightColor, 1},
    {"concurrent kernels", kConcurrentColor, 1},
    {"memory reserved", IM_COL32(99, 108, 87, 255), 1},
    {"memory", IM_COL32(128, 255, 150, 255), 1},
    {"power", IM_COL32(178, 137, 74, 255), 1},
    {"counter", IM_COL32(235, 128, 210, 255), 1},
    {"copy HtoD", IM_COL32(209, 53, 125, 255), 2},
    {"copy DtoH", IM_COL32(95, 68, 246, 255), 2},
    {"copy DtoD", IM_COL32(165, 108, 255, 255), 2},
    {"copy PtoP", IM_COL32(2, 157, 211, 255), 2},
    {"copy", IM_COL32(234, 130, 126, 255), 2},
    {"memset", IM_COL32(129, 163, 59, 255), 2},
    {"launch call", IM_COL32(75, 74, 125, 255), 3},
    {"runtime call", IM_COL32(28, 66, 168, 255), 3},
    {"driver launch", IM_COL32(88, 90, 14, 255), 3},
    {"driver call", IM_COL32(146, 160, 74, 255), 3},
    {"host sync", IM_COL32(185, 21, 23, 255), 3},
    {"profiler overhead", IM_COL32(154, 35, 80, 255), 3},
    {"OS call", IM_COL32(112, 140, 128, 255), 3},
};
static_assert(std::size(kCategories) == kKernelCategoryCount);

ImU32 other(std::string_view name) {
  for (const NamedColor& c : kOthers)
    if (c.name == name) return c.color;
  return IM_COL32(128, 128, 128, 255);
}

}  // namespace

std::span<const NamedColor> category_palette() { return kCategories; }
std::span<const NamedColor> other_kind_palette() { return kOthers; }

ImU32 category_color(KernelCategory c) {
  const auto i = static_cast<std::size_t>(c);
  return i < std::size(kCategories) ? kCategories[i].color : kCategories[std::size(kCategories) - 1].color;
}

ImU32 copy_color(CopyKind k) {
  switch (k) {
    case CopyKind::htod: return other("copy HtoD");
    case CopyKind::dtoh: return other("copy DtoH");
    case CopyKind::dtod: return other("copy DtoD");
    case CopyKind::ptop: return other("copy PtoP");
    default: break;
  }
  return other("copy");
}

ImU32 memset_color() { return other("memset"); }

ImU32 api_color(ApiDomain d, bool launches_gpu_work) {
  if (d == ApiDomain::driver) return other(launches_gpu_work ? "driver launch" : "driver call");
  return other(launches_gpu_work ? "launch call" : "runtime call");
}

ImU32 sync_color() { return other("host sync"); }
ImU32 overhead_color() { return other("profiler overhead"); }
ImU32 os_call_color() { return other("OS call"); }

ImU32 counter_color(const CounterSeries& s) {
  if (s.name == series_name::kMemoryReserved) return other("memory reserved");
  if (s.name.starts_with("memory.")) return other("memory");
  if (s.unit == "W") return other("power");
  return other("counter");
}

ImU32 palette_color(std::uint32_t key) {
  static constexpr ImU32 kPalette[] = {
      IM_COL32(78, 121, 167, 255),  IM_COL32(242, 142, 43, 255),  IM_COL32(225, 87, 89, 255),
      IM_COL32(118, 183, 178, 255), IM_COL32(89, 161, 79, 255),   IM_COL32(237, 201, 72, 255),
      IM_COL32(176, 122, 161, 255), IM_COL32(255, 157, 167, 255), IM_COL32(156, 117, 95, 255),
      IM_COL32(186, 176, 172, 255), IM_COL32(95, 160, 200, 255),  IM_COL32(140, 200, 120, 255),
  };
  std::uint32_t h = key * 2654435761u;  // Knuth's multiplicative hash spreads nearby ids
  h ^= h >> 16;
  return kPalette[h % (sizeof kPalette / sizeof kPalette[0])];
}

namespace {
constexpr ImU32 kFramePalette[] = {
    IM_COL32(50, 90, 170, 255),  IM_COL32(140, 190, 240, 255), IM_COL32(235, 210, 80, 255),
    IM_COL32(150, 120, 40, 255), IM_COL32(205, 205, 205, 255), IM_COL32(160, 60, 130, 255),
    IM_COL32(60, 160, 150, 255), IM_COL32(240, 150, 130, 255),
};
}  // namespace

std::span<const ImU32> frame_palette() { return kFramePalette; }

ImU32 frame_color(std::string_view frame) {
  std::uint32_t h = 2166136261u;  // FNV-1a: the same name, the same colour, everywhere
  for (const char c : frame) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  h ^= h >> 15;
  return kFramePalette[h % std::size(kFramePalette)];
}

ImU32 argb_to_imgui(std::uint32_t argb) {
  const std::uint32_t a = (argb >> 24) & 0xff, r = (argb >> 16) & 0xff, g = (argb >> 8) & 0xff, b = argb & 0xff;
  return IM_COL32(r, g, b, a == 0 ? 255 : a);
}

ImU32 scale_brightness(ImU32 c, float f) {
  auto ch = [&](int shift) {
    const float v = static_cast<float>((c >> shift) & 0xff) * f;
    return static_cast<ImU32>(std::clamp(v, 0.0f, 255.0f)) << shift;
  };
  return ch(IM_COL32_R_SHIFT) | ch(IM_COL32_G_SHIFT) | ch(IM_COL32_B_SHIFT) | (c & IM_COL32_A_MASK);
}

ImU32 text_color_on(ImU32 background) {
  const float r = static_cast<float>((background >> IM_COL32_R_SHIFT) & 0xff);
  const float g = static_cast<float>((background >> IM_COL32_G_SHIFT) & 0xff);
  const float b = static_cast<float>((background >> IM_COL32_B_SHIFT) & 0xff);
  return 0.299f * r + 0.587f * g + 0.114f * b > 150 ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

}  // namespace gpuscope::viewer
