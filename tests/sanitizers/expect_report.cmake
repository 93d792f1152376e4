# Runs a sanitizer canary case and passes only when it dies with the sanitizer's report:
# a non-zero exit and output matching REGEX (tests/sanitizers/CMakeLists.txt). EXPECT_CLEAN=1
# instead requires exit 0 and no report.
#   cmake -DPROGRAM=... -DCASE=... -DREGEX=... [-DEXPECT_CLEAN=1] -P expect_report.cmake
execute_process(COMMAND "${PROGRAM}" "${CASE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(EXPECT_CLEAN)
  if(NOT rc EQUAL 0 OR all MATCHES "Sanitizer|runtime error")
    message(FATAL_ERROR "the in-bounds case failed (exit ${rc}):\n${all}")
  endif()
  message(STATUS "the in-bounds case ran clean")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "'${CASE}' was not caught (exit ${rc}): the build is not sanitized\n${all}")
endif()
if(NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "'${CASE}' died (exit ${rc}) without the expected report /${REGEX}/:\n${all}")
endif()
string(REGEX MATCH "[^\n]*(${REGEX})[^\n]*" line "${all}")
message(STATUS "caught (exit ${rc}): ${line}")
