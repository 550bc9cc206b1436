// libgpuscope_capture.so: the in-process capture API of gpuscope/capture.h,
// for programs that link it (find_package(gpuscope), pkg-config gpuscope).
//
// The functions live in the static gpuscope_capture library; naming them here
// makes the linker take them, and what they need, into the shared library,
// whose version script (capture_api.map) exports them and nothing else.
#include "gpuscope/capture.h"

namespace {

[[maybe_unused]] __attribute__((used)) void* const kExported[] = {
    reinterpret_cast<void*>(&gpuscope::capture::start),
    reinterpret_cast<void*>(&gpuscope::capture::stop),
    reinterpret_cast<void*>(&gpuscope::capture::status),
    reinterpret_cast<void*>(&gpuscope::capture::running),
};

}  // namespace
