# What `cmake --install build --prefix P` puts where (docs/install.md), in
# GNUInstallDirs' folders (lib/ may be lib64/ or lib/<multiarch>/):
#
#   bin/gpuscope, bin/gpuscope-view              src/cli, viewer (the viewer when built)
#   lib/gpuscope/libgpuscope_inject.so           src/capture; `gpuscope capture` finds it from bin/ by a
#                                                relative path, so a moved prefix still works
#   lib/libgpuscope_capture.so*                  src/capture: the in-process capture API, with
#   include/gpuscope/capture.h                     its header,
#   lib/cmake/gpuscope/                            find_package(gpuscope) -> gpuscope::capture
#   lib/pkgconfig/gpuscope.pc                      and pkg-config (all four in CUDA builds only)
#   lib/python3.X/dist-packages/gpuscope/        src/python (GPUSCOPE_INSTALL_PYTHONDIR)
#   share/doc/gpuscope/                          the README and the user guides of docs/
#
# Components: runtime, development, python, docs. The packages (.deb and
# .tar.gz of the same tree): cmake/GpuscopePackaging.cmake.
include(CMakePackageConfigHelpers)

set(GPUSCOPE_USER_DOCS capture chrome-export cli findings format import install metrics ops python report-schema
  scale sqlite-export synthetic viewer whatif)
list(TRANSFORM GPUSCOPE_USER_DOCS PREPEND ${PROJECT_SOURCE_DIR}/docs/)
list(TRANSFORM GPUSCOPE_USER_DOCS APPEND .md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT docs)
install(FILES ${GPUSCOPE_USER_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT docs)

if(TARGET gpuscope_capture_shared)
  set(GPUSCOPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpuscope)
  set_target_properties(gpuscope_capture_shared PROPERTIES EXPORT_NAME capture)
  install(EXPORT gpuscope-targets NAMESPACE gpuscope:: DESTINATION ${GPUSCOPE_INSTALL_CMAKEDIR}
    COMPONENT development)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpuscopeConfig.cmake.in
    ${PROJECT_BINARY_DIR}/cmake/gpuscopeConfig.cmake INSTALL_DESTINATION ${GPUSCOPE_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/gpuscopeConfigVersion.cmake
    COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/gpuscopeConfig.cmake ${PROJECT_BINARY_DIR}/cmake/gpuscopeConfigVersion.cmake
    DESTINATION ${GPUSCOPE_INSTALL_CMAKEDIR} COMPONENT development)

  # pkg-config: the prefix from the file's own place, so a moved prefix works too.
  file(RELATIVE_PATH GPUSCOPE_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" GPUSCOPE_PC_TO_PREFIX "${GPUSCOPE_PC_TO_PREFIX}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/gpuscope.pc.in ${PROJECT_BINARY_DIR}/cmake/gpuscope.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/gpuscope.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    COMPONENT development)
endif()

include(GpuscopePackaging)
