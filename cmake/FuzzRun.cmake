# cmake -DFUZZER=… -DSEEDS=dir -DWORK=dir -DSECONDS=n -P FuzzRun.cmake
# Runs one libFuzzer target for SECONDS on a fresh working corpus seeded from
# SEEDS (the checked-in seeds are never modified). Fails on any crash, leak,
# sanitizer report or timeout the fuzzer finds (one input running over 60 s:
# generous, because CI shares 2 cores with a parallel ctest). Memory is
# bounded too: each target reads within a memory budget of at most 64 MiB
# (trace/budget.h), so 1 GiB of resident memory, or one allocation over
# 512 MiB, is a bomb the readers let through (docs/robustness.md): a failure.
if(NOT EXISTS ${FUZZER})
  message(FATAL_ERROR "fuzz target ${FUZZER} was not built")
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK} ${WORK}-artifacts)
set(seed_args)
if(EXISTS ${SEEDS})
  set(seed_args ${SEEDS})
endif()
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=60 -rss_limit_mb=1024 -malloc_limit_mb=512 -print_final_stats=1
          -artifact_prefix=${WORK}-artifacts/ ${WORK} ${seed_args}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  # The reproducer also goes into the log, as hex (CI removes its build
  # folder on exit): `xxd -r -p` turns the lines back into the input.
  file(GLOB artifacts ${WORK}-artifacts/*)
  foreach(a IN LISTS artifacts)
    file(SIZE ${a} bytes)
    if(bytes LESS_EQUAL 65536)
      file(READ ${a} hex HEX)
      string(REGEX REPLACE "(................................................................)" "\\1\n" hex "${hex}")
      message("reproducer ${a} (${bytes} bytes, hex):\n${hex}")
    endif()
  endforeach()
  message(FATAL_ERROR "fuzzer ${FUZZER} failed (${rc}); reproducer in ${WORK}-artifacts/")
endif()
