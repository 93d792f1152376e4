# library.no_cli_flags: no string literal in the library (src/) names a CLI flag ("--max-hold").
# Library errors and warnings name settings fields (`constraints.max_hold`); the CLI maps them to
# its flags in one table (apps/koma/flags.cpp), so Python and Blender users never see a flag.
# cmake -DSOURCE_DIR=<repo> -P no_cli_flags.cmake
file(GLOB_RECURSE sources "${SOURCE_DIR}/src/*.cpp" "${SOURCE_DIR}/src/*.hpp")
set(found "")
foreach(f IN LISTS sources)
  file(STRINGS "${f}" lines REGEX "\"[^\"]*--[A-Za-z][^\"]*\"")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" stripped)
    if(NOT stripped MATCHES "^//")
      file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
      string(APPEND found "\n  ${rel}: ${stripped}")
    endif()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "library strings name CLI flags; name the settings field instead "
                      "(and add it to apps/koma/flags.cpp):${found}")
endif()
list(LENGTH sources count)
message(STATUS "${count} library sources, no CLI flag in a string")
