// Peak heap bytes of a stretch of a run, counted by the cost driver's own
// malloc (heap_count.cpp, linked into the driver only): every malloc, calloc,
// realloc, aligned allocation and free of the process goes through it to
// glibc's allocator, adding or taking away the block's usable size. Exact and
// the same on every run of a single-threaded stretch, and cheap enough to
// run under callgrind with the instruction count.
#pragma once

#include <cstdint>

namespace gpuscope::cost {

// Starts a stretch: its peak is counted from the bytes live now.
void start_heap_stretch();
// The most bytes live at once since start_heap_stretch(), beyond those live when it was called.
std::int64_t heap_stretch_peak();

}  // namespace gpuscope::cost
