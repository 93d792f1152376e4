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

# koma_add_test(name SOURCES ... DEPS ...): one GoogleTest executable, tests discovered by CTest.
# KOMA_SHARED_DATA is passed as a compile definition so regression tests find the real corpus.
function(koma_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} koma_test_support GTest::gtest GTest::gtest_main)
  koma_warnings(${name})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()

# koma_add_bench(name SOURCES ... DEPS ...): one Google Benchmark executable.
function(koma_add_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  target_compile_definitions(${name} PRIVATE KOMA_SHARED_DATA="${KOMA_SHARED_DATA}")
endfunction()
