# The packages `cpack` makes from the install tree (scripts/package.sh makes
# both; docs/install.md): build/packages/gpuscope_<version>_<arch>.deb and
# build/packages/gpuscope-<version>-Linux.tar.gz.
#
# The .deb installs under /usr. Its dependencies are Debian's package names:
# dpkg-shlibdeps reads them from the binaries' shared libraries (zstd, isal,
# simdjson, SQLite, Open MPI, GLFW, …), and the Python module adds the python3
# version it was built for, numpy and pandas. CUDA's own libraries are not
# Debian packages and are not dependencies: only capture needs one (CUPTI),
# found where CUDA installed it; analysis runs without any.
set(CPACK_PACKAGE_NAME gpuscope)
set(CPACK_PACKAGE_VENDOR "gpuscope")
set(CPACK_PACKAGE_CONTACT "gpuscope developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU profiling and performance diagnosis for deep-learning training")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "gpuscope captures what the GPUs of a training job do (CUPTI), or reads PyTorch/Kineto, Chrome and Nsight "
  "Systems traces, and says why the job is slow and what to change: a text or JSON report, a desktop viewer, "
  "Chrome and SQLite exports, and a Python module with the traces as pandas DataFrames.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_STRIP_FILES OFF)  # the binaries keep their symbols: backtraces from users stay readable

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(_deb_depends)
if(GPUSCOPE_HAVE_PYTHON)
  math(EXPR _next_minor "${Python3_VERSION_MINOR} + 1")
  list(APPEND _deb_depends "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}~)"
    "python3 (<< ${Python3_VERSION_MAJOR}.${_next_minor})" python3-numpy python3-pandas)
endif()
list(JOIN _deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
if(GPUSCOPE_HAVE_VIEWER)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS fonts-dejavu-core)  # the viewer's font (viewer/fonts.h)
endif()
if(GPUSCOPE_HAVE_CUDA)
  # CUPTI as NVIDIA's CUDA repository packages it, for capture only.
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cuda-cupti-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
endif()

set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
include(CPack)
