#include "viewer/colors.h"

#include <algorithm>

namespace gpuscope::viewer {

ImU32 category_color(KernelCategory c) {
  // Problem categories (padding, broadcast, transpose) in warm colours that
  // stand out; the compute a job should spend its time in, in cool ones.
  switch (c) {
    case KernelCategory::padding:
      return IM_COL32(230, 60, 60, 255);
    case KernelCategory::broadcast:
      return IM_COL32(240, 140, 40, 255);
    case KernelCategory::transpose:
      return IM_COL32(220, 190, 50, 255);
    case KernelCategory::convolution:
      return IM_COL32(60, 120, 220, 255);
    case KernelCategory::gemm:
      return IM_COL32(90, 90, 230, 255);
    case KernelCategory::attention:
      return IM_COL32(140, 80, 230, 255);
    case KernelCategory::normalization:
      return IM_COL32(200, 90, 200, 255);
    case KernelCategory::elementwise:
      return IM_COL32(70, 180, 170, 255);
    case KernelCategory::reduction:
      return IM_COL32(150, 200, 80, 255);
    case KernelCategory::pooling:
      return IM_COL32(110, 170, 230, 255);
    case KernelCategory::softmax_loss:
      return IM_COL32(250, 120, 170, 255);
    case KernelCategory::optimizer:
      return IM_COL32(160, 110, 80, 255);
    case KernelCategory::communication:
      return IM_COL32(40, 170, 90, 255);
    case KernelCategory::memory:
      return IM_COL32(150, 150, 150, 255);
    case KernelCategory::other:
    case KernelCategory::count_:
      break;
  }
  return IM_COL32(120, 130, 150, 255);
}

ImU32 copy_color(CopyKind k) {
  switch (k) {
    case CopyKind::htod:
      return IM_COL32(200, 80, 150, 255);
    case CopyKind::dtoh:
      return IM_COL32(150, 80, 200, 255);
    case CopyKind::dtod:
      return IM_COL32(170, 140, 200, 255);
    case CopyKind::ptop:
      return IM_COL32(60, 200, 200, 255);
    default:
      break;
  }
  return IM_COL32(180, 120, 180, 255);
}

ImU32 memset_color() { return IM_COL32(160, 160, 110, 255); }

ImU32 api_color(ApiDomain d, bool launches_gpu_work) {
  if (d == ApiDomain::driver) return launches_gpu_work ? IM_COL32(150, 110, 60, 255) : IM_COL32(120, 100, 80, 255);
  return launches_gpu_work ? IM_COL32(60, 140, 130, 255) : IM_COL32(80, 110, 110, 255);
}

ImU32 sync_color() { return IM_COL32(200, 60, 60, 255); }
ImU32 overhead_color() { return IM_COL32(100, 100, 100, 255); }

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
