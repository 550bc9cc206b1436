// The viewer's colours: kernel categories (the legend), the lanes of other
// kinds (activity and counter lanes, copies, memsets, API calls, syncs), the
// marks drawn over the timeline, and a stable palette for names (NVTX ranges
// without a colour of their own).
//
// The category colours stay apart for the common colour-vision deficiencies
// too: tests/viewer/colors_test.cpp simulates deuteranopia and protanopia
// (Machado et al. 2009) and checks the smallest CIELAB distance between any
// two categories, and between any other kind's colour and every category's
// (so no lane of another kind reads as a category).
#pragma once

#include <imgui.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "trace/trace.h"
#include "trace/types.h"

namespace gpuscope::viewer {

ImU32 category_color(KernelCategory c);
ImU32 copy_color(CopyKind k);
ImU32 memset_color();
ImU32 api_color(ApiDomain d, bool launches_gpu_work);
ImU32 sync_color();
ImU32 overhead_color();
ImU32 os_call_color();                        // OS runtime calls (the os_calls table)
ImU32 counter_color(const CounterSeries& s);  // a counter lane (memory, power, any other series)
// A colour picked from a fixed palette by hashing `key` (a string id): the
// same name gets the same colour in every frame and every session.
ImU32 palette_color(std::uint32_t key);
// A host sample's frame ("train.py(57): main"): a colour of frame_palette()
// picked by hashing the name itself, so a frame keeps its colour in every
// trace and session. The palette's colours stay apart for deuteranopia and
// protanopia too (tests/viewer/colors_test.cpp).
ImU32 frame_color(std::string_view frame);
std::span<const ImU32> frame_palette();
// NVTX colours are ARGB; ImGui wants ABGR.
ImU32 argb_to_imgui(std::uint32_t argb);

ImU32 scale_brightness(ImU32 c, float f);
// Black or white, whichever reads better on `background`.
ImU32 text_color_on(ImU32 background);

// The activity lanes: utilization, and kernels in flight (one, and the
// concurrency above one).
inline constexpr ImU32 kUtilizationColor = IM_COL32(160, 228, 206, 255);
inline constexpr ImU32 kInFlightColor = IM_COL32(70, 95, 126, 255);
inline constexpr ImU32 kConcurrentColor = IM_COL32(214, 42, 199, 255);
// Marks over the timeline.
inline constexpr ImU32 kSelectionColor = IM_COL32(255, 255, 255, 255);
inline constexpr ImU32 kHighlightColor = IM_COL32(255, 214, 0, 255);
inline constexpr ImU32 kEvidenceColor = IM_COL32(255, 80, 80, 28);
inline constexpr ImU32 kEvidenceCurrentColor = IM_COL32(255, 80, 80, 64);  // the range stepped to
inline constexpr ImU32 kEvidenceEdgeColor = IM_COL32(255, 110, 110, 230);
inline constexpr ImU32 kFlowColor = IM_COL32(255, 170, 40, 255);
inline constexpr ImU32 kCriticalPathColor = IM_COL32(255, 60, 140, 255);

// A colour and what it stands for, as the legend names it.
struct NamedColor {
  std::string_view name;
  ImU32 color;
  int group;  // colours of one group share a lane or a row: they must differ from each other too
};
// Every category's colour, in legend order.
std::span<const NamedColor> category_palette();
// The colours of the other kinds drawn in lanes and rows (not the marks over them).
std::span<const NamedColor> other_kind_palette();

}  // namespace gpuscope::viewer
