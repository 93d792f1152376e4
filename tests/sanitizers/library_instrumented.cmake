# Every koma library archive of the build calls ASan's and UBSan's checks: the sanitizers reach the
# library code, not only the test programs (tests/sanitizers/CMakeLists.txt).
#   cmake -DNM=... -DARCHIVES=a.a,b.a -P library_instrumented.cmake
string(REPLACE "," ";" ARCHIVES "${ARCHIVES}")
foreach(archive IN LISTS ARCHIVES)
  execute_process(COMMAND "${NM}" -u "${archive}" RESULT_VARIABLE rc OUTPUT_VARIABLE syms ERROR_QUIET)
  get_filename_component(name "${archive}" NAME)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${archive}")
  endif()
  if(NOT syms MATCHES "__asan_report_load")
    message(FATAL_ERROR "${name} has no ASan checks (no __asan_report_load*): not built with -fsanitize=address")
  endif()
  if(NOT syms MATCHES "__ubsan_handle_")
    message(FATAL_ERROR "${name} has no UBSan checks (no __ubsan_handle_*): not built with -fsanitize=undefined")
  endif()
  message(STATUS "${name}: ASan and UBSan checks present")
endforeach()
