// libgpuscope_inject.so: gpuscope inside an unmodified CUDA program.
//
// CUDA loads the library named by CUDA_INJECTION64_PATH while it initializes
// (cuInit) and calls InitializeInjection(); NVTX loads the library named by
// NVTX_INJECTION64_PATH at a program's first NVTX call and calls
// InitializeInjectionNvtx2(), which hands NVTX over to CUPTI. `gpuscope
// capture` sets both. These are the library's only exported symbols
// (inject.map); everything else is hidden so nothing clashes with the
// program's own libraries. Nothing may throw across this C boundary, and a
// capture that cannot run must leave the program unharmed: both functions
// report success to CUDA/NVTX whatever happens to the capture itself.
#include "capture/controller.h"

extern "C" {

int cuptiNvtxInitialize2(const void* get_export_table);  // exported by libcupti; not in its headers
int cuptiNvtxExtensionInitialize(void* module_info);     // likewise (NVTX payload extensions)

__attribute__((visibility("default"))) int InitializeInjection(void) {
  gpuscope::capture::start_injected();  // noexcept
  return 1;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  return cuptiNvtxInitialize2(get_export_table);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(void* module_info) {
  return cuptiNvtxExtensionInitialize(module_info);
}

}  // extern "C"
