# koma_warnings(target): the project's warning set; errors when KOMA_WARNINGS_AS_ERRORS is ON.
function(koma_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast)
  if(KOMA_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# koma_add_library(name SOURCES ... DEPS ...): one module target koma_<name>, alias koma::<name>.
function(koma_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(koma_${name} STATIC ${ARG_SOURCES})
  add_library(koma::${name} ALIAS koma_${name})
  target_include_directories(koma_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                             PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(koma_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  koma_warnings(koma_${name})
endfunction()

# koma_add_test(name SOURCES ... DEPS ... [SLOW Suite.Test ...]): one GoogleTest executable, tests
# discovered by CTest. The SLOW tests (the longest under ASan, docs/reliability.md) are registered
# by name with a high COST, so `ctest -j` starts them first instead of finding them last, alone.
# Each test may take KOMA_TEST_TIMEOUT seconds (the asan preset allows more).
set(KOMA_TEST_TIMEOUT 600 CACHE STRING "Seconds each GoogleTest case may take")
function(koma_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;SLOW" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} koma_test_support GTest::gtest GTest::gtest_main)
  koma_warnings(${name})
  set(filter "")
  if(ARG_SLOW)
    list(JOIN ARG_SLOW ":" slow)
    set(filter TEST_FILTER "-${slow}")
    foreach(test IN LISTS ARG_SLOW)
      add_test(NAME ${test} COMMAND ${name} --gtest_filter=${test})
      # a misspelt name runs no test: that is a failure, not a pass
      set_tests_properties(${test} PROPERTIES COST 1000 TIMEOUT ${KOMA_TEST_TIMEOUT}
                           SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" FAIL_REGULAR_EXPRESSION "Running 0 tests")
    endforeach()
  endif()
  gtest_discover_tests(${name} ${filter} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${KOMA_TEST_TIMEOUT})
endfunction()

# koma_add_bench(name SOURCES ... DEPS ...): one Google Benchmark executable.
function(koma_add_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  target_compile_definitions(${name} PRIVATE KOMA_SHARED_DATA="${KOMA_SHARED_DATA}")
endfunction()
