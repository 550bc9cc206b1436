# Finds gpuscope's dependencies (all Debian packages, see scripts/setup.sh) and
# defines imported targets with one name each, so module CMakeLists.txt files
# never repeat the search.
#
#   gpuscope::zstd gpuscope::deflate gpuscope::isal gpuscope::zlib gpuscope::sqlite3
#   gpuscope::xxhash gpuscope::simdjson
#   nlohmann_json::nlohmann_json CLI11::CLI11 GTest::gtest_main benchmark::benchmark
#   gpuscope::imgui glfw (viewer) ; CUDA::cudart CUDA::cupti … (CUDA parts)
#
# Sets GPUSCOPE_HAVE_CUDA and GPUSCOPE_HAVE_VIEWER.

find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
add_library(gpuscope::zstd ALIAS PkgConfig::ZSTD)
pkg_check_modules(DEFLATE REQUIRED IMPORTED_TARGET libdeflate)
add_library(gpuscope::deflate ALIAS PkgConfig::DEFLATE)
# ISA-L's igzip: streaming gzip inflate at several GB/s (the JSON importer).
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
add_library(gpuscope::isal ALIAS PkgConfig::ISAL)
find_package(ZLIB REQUIRED)  # gzip output (streaming deflate) for exports
add_library(gpuscope::zlib ALIAS ZLIB::ZLIB)
find_package(SQLite3 REQUIRED)  # SQLite export (Nsight Systems-like schema)
add_library(gpuscope::sqlite3 ALIAS SQLite::SQLite3)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
add_library(gpuscope::xxhash ALIAS PkgConfig::XXHASH)
find_package(simdjson REQUIRED)
add_library(gpuscope::simdjson ALIAS simdjson::simdjson)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)

if(GPUSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(GPUSCOPE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# ---- CUDA (capture, workload) ----------------------------------------------
set(GPUSCOPE_HAVE_CUDA OFF)
if(NOT GPUSCOPE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  include(CheckLanguage)
  check_language(CUDA)
  if(CUDAToolkit_FOUND AND CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper machine code plus PTX so newer GPUs can JIT it.
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(GPUSCOPE_HAVE_CUDA ON)
    # cuDNN and NCCL sit in the toolkit's lib folder on our images; elsewhere
    # (a Python site-packages install) point CMAKE_PREFIX_PATH at them.
    find_library(GPUSCOPE_CUDNN_LIB cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(GPUSCOPE_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(GPUSCOPE_NCCL_LIB nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(GPUSCOPE_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  elseif(GPUSCOPE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GPUSCOPE_CUDA=ON but no CUDA toolkit/compiler was found")
  endif()
endif()

# ---- Viewer (Dear ImGui 1.86 from Debian, GLFW 3.3, OpenGL) -----------------
set(GPUSCOPE_HAVE_VIEWER OFF)
if(NOT GPUSCOPE_VIEWER STREQUAL "OFF")
  pkg_check_modules(IMGUI QUIET IMPORTED_TARGET imgui)
  find_package(glfw3 QUIET)
  find_package(OpenGL QUIET)
  if(IMGUI_FOUND AND glfw3_FOUND AND OpenGL_FOUND)
    add_library(gpuscope::imgui ALIAS PkgConfig::IMGUI)
    set(GPUSCOPE_HAVE_VIEWER ON)
  elseif(GPUSCOPE_VIEWER STREQUAL "ON")
    message(FATAL_ERROR "GPUSCOPE_VIEWER=ON but imgui/glfw3/OpenGL were not all found")
  endif()
endif()
