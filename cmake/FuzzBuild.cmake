# cmake -DSRC=… -DBIN=… -DCXX=clang++ -DCC=clang -P FuzzBuild.cmake
# Configures (once) and builds the libFuzzer tree: the library with coverage
# instrumentation and ASan/UBSan, and every tests/fuzz/fuzz_*.cpp target.
set(flags "-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1")
if(NOT EXISTS ${BIN}/CMakeCache.txt)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -G Ninja
      -DCMAKE_BUILD_TYPE=RelWithDebInfo
      -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
      "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_C_FLAGS=${flags}"
      "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
      -DGPUSCOPE_FUZZ=ON -DGPUSCOPE_CUDA=OFF -DGPUSCOPE_VIEWER=OFF
      -DGPUSCOPE_BUILD_BENCH=OFF -DGPUSCOPE_BUILD_TESTS=ON
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the fuzz tree failed (${rc})")
  endif()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} --target gpuscope_fuzz_targets RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzz targets failed (${rc})")
endif()
