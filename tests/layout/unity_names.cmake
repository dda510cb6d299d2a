# oaprof's files are compiled as one translation unit (tools/CMakeLists.txt, OAPROF_UNITY).
# Two files that each define the same name at namespace scope would then meet: a clash of types or
# of equal signatures fails to compile, but functions with different parameters silently become
# overloads, and a call could pick the other file's. So no name may be defined in two of them.
# Run as `cmake -DSOURCE_DIR=... -P unity_names.cmake`; fails naming each shared name and files.
cmake_minimum_required(VERSION 3.25)
file(GLOB sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/tools/oaprof/*.cc)
set(names "")
foreach(source IN LISTS sources)
  # Definitions start in column 0 (namespaces are not indented): functions, types, constants.
  file(STRINGS ${SOURCE_DIR}/${source} lines
       REGEX "^([A-Za-z_][^ (]*[ *&]+)+[A-Za-z_][A-Za-z0-9_]*( = |\\(|;| \\{|$)")
  foreach(line IN LISTS lines)
    if(line MATCHES "^(namespace|using namespace|return|#|OAPROF_REGISTER)")
      continue()
    endif()
    string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)( = |\\(|;| \\{|$)" found "${line}")
    set(name ${CMAKE_MATCH_1})
    if(name STREQUAL "" OR name STREQUAL "main")
      continue()
    endif()
    if(DEFINED seen_${name} AND NOT seen_${name} STREQUAL source)
      list(APPEND names "${name} (${seen_${name}} and ${source})")
    else()
      set(seen_${name} ${source})
    endif()
  endforeach()
endforeach()
if(names)
  list(REMOVE_DUPLICATES names)
  list(JOIN names "\n  " text)
  message(FATAL_ERROR "names defined in two files of tools/oaprof (one translation unit in a "
                      "unity build): rename one of each\n  ${text}")
endif()
list(LENGTH sources n)
message(STATUS "unity: the ${n} files of tools/oaprof define no name twice")
