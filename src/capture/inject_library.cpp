#include "capture/inject_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace gpuscope::capture {

const char* const kInjectLibraryFromExecutable = GPUSCOPE_INJECT_FROM_EXECUTABLE;
const char* const kCuptiLibrary = GPUSCOPE_CUPTI_LIBRARY;

namespace {

namespace fs = std::filesystem;

// The path of the CUPTI library loaded in this process, "" if none is.
std::string loaded_cupti() {
  std::string found;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string_view name = info->dlpi_name ? info->dlpi_name : "";
        if (fs::path(name).filename().string().starts_with("libcupti.so")) {
          *static_cast<std::string*>(out) = std::string(name);
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

}  // namespace

InjectLibrary find_inject_library() {
  InjectLibrary r;
  std::error_code ec;
  if (const char* v = std::getenv("GPUSCOPE_INJECT_LIBRARY"); v && *v) {
    r.where = "GPUSCOPE_INJECT_LIBRARY";
    if (!fs::is_regular_file(v, ec)) {
      r.error = std::string("GPUSCOPE_INJECT_LIBRARY=") + v + ": no such file";
      return r;
    }
    r.path = fs::absolute(v, ec).lexically_normal().string();
    return r;
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    r.error = "cannot tell where gpuscope is installed (/proc/self/exe: " + ec.message() +
              "); set GPUSCOPE_INJECT_LIBRARY to the path of libgpuscope_inject.so";
    return r;
  }
  r.where = "next to " + exe.string();
  const fs::path candidate = (exe.parent_path() / kInjectLibraryFromExecutable).lexically_normal();
  if (!fs::is_regular_file(candidate, ec)) {
    r.error = candidate.string() + ": no such file (gpuscope looks for its injection library at " +
              kInjectLibraryFromExecutable + " from its own directory, " + exe.parent_path().string() +
              "; install gpuscope whole, or set GPUSCOPE_INJECT_LIBRARY)";
    return r;
  }
  r.path = candidate.string();
  return r;
}

InjectLoad load_inject_library(const std::string& path) noexcept {
  InjectLoad r;
  try {
    ::dlerror();
    if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      const char* why = ::dlerror();
      r.error = why ? why : "the loader gave no reason";
      return r;
    }
    r.ok = true;
    r.cupti = loaded_cupti();
  } catch (...) {
    r.ok = false;
    r.error = "out of memory";
  }
  return r;
}

std::string describe_load_failure(const std::string& path, const InjectLoad& load) {
  std::string s = "cannot load the injection library " + path + ": " + load.error;
  if (load.error.find("cupti") != std::string::npos || load.error.find("CUPTI") != std::string::npos) {
    s += std::string("; capture needs CUPTI from the CUDA toolkit (") + kCuptiLibrary +
         ", the version gpuscope was built with or newer): install it as CUDA does (the toolkit, or its "
         "cuda-cupti package) and let the loader find it (ldconfig, or its folder in LD_LIBRARY_PATH); see "
         "docs/install.md. Analysis (report, view, export) needs no CUDA at all";
  }
  return s;
}

}  // namespace gpuscope::capture
