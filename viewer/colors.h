// The viewer's colours: kernel categories (the legend), copies, API calls and
// a stable palette for names (NVTX ranges without a colour of their own).
#pragma once

#include <imgui.h>

#include <cstdint>

#include "trace/types.h"

namespace gpuscope::viewer {

ImU32 category_color(KernelCategory c);
ImU32 copy_color(CopyKind k);
ImU32 memset_color();
ImU32 api_color(ApiDomain d, bool launches_gpu_work);
ImU32 sync_color();
ImU32 overhead_color();
// A colour picked from a fixed palette by hashing `key` (a string id): the
// same name gets the same colour in every frame and every session.
ImU32 palette_color(std::uint32_t key);
// NVTX colours are ARGB; ImGui wants ABGR.
ImU32 argb_to_imgui(std::uint32_t argb);

ImU32 scale_brightness(ImU32 c, float f);
// Black or white, whichever reads better on `background`.
ImU32 text_color_on(ImU32 background);

inline constexpr ImU32 kUtilizationColor = IM_COL32(86, 156, 214, 255);
inline constexpr ImU32 kInFlightColor = IM_COL32(120, 120, 130, 255);
inline constexpr ImU32 kConcurrentColor = IM_COL32(106, 190, 80, 255);  // the part above 1 kernel in flight
inline constexpr ImU32 kSelectionColor = IM_COL32(255, 255, 255, 255);
inline constexpr ImU32 kHighlightColor = IM_COL32(255, 214, 0, 255);
inline constexpr ImU32 kEvidenceColor = IM_COL32(255, 80, 80, 28);
inline constexpr ImU32 kEvidenceCurrentColor = IM_COL32(255, 80, 80, 64);  // the range stepped to
inline constexpr ImU32 kEvidenceEdgeColor = IM_COL32(255, 110, 110, 230);
inline constexpr ImU32 kFlowColor = IM_COL32(255, 170, 40, 255);
inline constexpr ImU32 kCriticalPathColor = IM_COL32(255, 60, 140, 255);

}  // namespace gpuscope::viewer
