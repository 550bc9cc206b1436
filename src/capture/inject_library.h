// Where `gpuscope capture` finds libgpuscope_inject.so, and whether a CUDA
// process will be able to load it.
//
// The library sits at one place relative to the `gpuscope` executable, the
// same in the build tree and in an installed prefix (bin/gpuscope and
// lib/gpuscope/libgpuscope_inject.so with the default directories), so a
// prefix that is moved or unpacked anywhere still works: the executable's
// own path comes from /proc/self/exe. GPUSCOPE_INJECT_LIBRARY names another.
//
// The injection library links CUPTI (libcupti.so.<CUDA major>), which the
// rest of gpuscope never loads: analysis runs without the CUDA toolkit or
// driver. Only here, when a capture is about to run, is CUPTI looked for.
#pragma once

#include <string>

namespace gpuscope::capture {

// The library's path relative to the directory of the `gpuscope` executable
// ("../lib/gpuscope/libgpuscope_inject.so"), from the install directories.
extern const char* const kInjectLibraryFromExecutable;
// The CUPTI library the injection library needs ("libcupti.so.13").
extern const char* const kCuptiLibrary;

struct InjectLibrary {
  std::string path;   // absolute, "" when not found
  std::string where;  // how it was found: "GPUSCOPE_INJECT_LIBRARY", or "next to /opt/gpuscope/bin/gpuscope"
  std::string error;  // why not, when path is ""
};

// $GPUSCOPE_INJECT_LIBRARY when set, else the running executable's directory
// joined with kInjectLibraryFromExecutable.
InjectLibrary find_inject_library();

struct InjectLoad {
  bool ok = false;
  std::string cupti;  // the CUPTI library it loaded (a path), when ok
  std::string error;  // the loader's message when not ("libcupti.so.13: cannot open shared object file: …")
};

// Loads the library the way CUDA will in the profiled program (dlopen, every
// symbol resolved now), so that a missing or too old CUPTI is reported before
// the program runs. The library stays loaded, as it does in a CUDA process;
// it does nothing until CUDA calls its entry points.
InjectLoad load_inject_library(const std::string& path) noexcept;

// One line for people when loading failed: what is missing and where to get it.
std::string describe_load_failure(const std::string& path, const InjectLoad& load);

}  // namespace gpuscope::capture
