# Finds gpuscope's dependencies (all Debian packages, see scripts/setup.sh) and
# defines imported targets with one name each, so module CMakeLists.txt files
# never repeat the search.
#
#   gpuscope::zstd gpuscope::deflate gpuscope::isal gpuscope::zlib gpuscope::sqlite3
#   gpuscope::xxhash gpuscope::simdjson gpuscope::re2
#   nlohmann_json::nlohmann_json CLI11::CLI11 GTest::gtest_main benchmark::benchmark
#   gpuscope::imgui glfw (viewer) ; CUDA::cudart CUDA::cupti … (CUDA parts)
#   pybind11_add_module, Python3_EXECUTABLE (Python module)
#
# Sets GPUSCOPE_HAVE_CUDA, GPUSCOPE_HAVE_VIEWER and GPUSCOPE_HAVE_PYTHON.

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
# RE2: regular expressions over names in linear time, without recursion.
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
add_library(gpuscope::re2 ALIAS PkgConfig::RE2)
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

# ---- Python module (Python's headers, pybind11 from Debian) ---------------------
set(GPUSCOPE_HAVE_PYTHON OFF)
if(NOT GPUSCOPE_PYTHON STREQUAL "OFF")
  # The interpreter the module is built for and tested with: unless
  # Python3_EXECUTABLE names one, the first python3 on PATH that has numpy and
  # pandas (Debian's /usr/bin/python3, when a pyenv or conda python3 without
  # them comes first), else the first python3.
  if(NOT Python3_EXECUTABLE)
    function(_gpuscope_python_has_pandas result candidate)
      execute_process(COMMAND ${candidate} -c "import numpy, pandas" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(NOT rc EQUAL 0)
        set(${result} FALSE PARENT_SCOPE)
      endif()
    endfunction()
    find_program(GPUSCOPE_PYTHON_WITH_PANDAS NAMES python3 VALIDATOR _gpuscope_python_has_pandas)
    if(GPUSCOPE_PYTHON_WITH_PANDAS)
      set(Python3_EXECUTABLE ${GPUSCOPE_PYTHON_WITH_PANDAS})
    endif()
  endif()
  find_package(Python3 3.8 QUIET COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    find_package(pybind11 2.6 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(GPUSCOPE_HAVE_PYTHON ON)
  elseif(GPUSCOPE_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "GPUSCOPE_PYTHON=ON but Python's headers (python3-dev) or pybind11 (pybind11-dev) were not found")
  endif()
endif()

# ---- MPI (Open MPI from Debian: libopenmpi-dev, openmpi-bin) ------------------
# `mpirun -n P gpuscope report DIR`: the processes share a job's files (src/cli/mpi.h).
# The C API only: Open MPI's C++ bindings need libmpi_cxx.
set(GPUSCOPE_HAVE_MPI OFF)
if(NOT GPUSCOPE_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(GPUSCOPE_HAVE_MPI ON)
    find_program(GPUSCOPE_MPIEXEC NAMES ${MPIEXEC_EXECUTABLE} mpiexec mpirun)
  elseif(GPUSCOPE_MPI STREQUAL "ON")
    message(FATAL_ERROR "GPUSCOPE_MPI=ON but no MPI was found (libopenmpi-dev)")
  endif()
endif()
