# gdrbench_library(NAME [DEPS ...]): one static library per folder, made of
# every .cc in it except main.cc and *_test.cc.
function(gdrbench_library name)
  cmake_parse_arguments(ARG "" "" "DEPS;EXCLUDE" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER srcs EXCLUDE REGEX "/main\\.cc$")
  foreach(ex IN LISTS ARG_EXCLUDE)
    list(FILTER srcs EXCLUDE REGEX "/${ex}$")
  endforeach()
  if(NOT srcs)
    # A folder whose first .cc is still being written: headers only for now.
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# gdrbench_test(NAME LABEL label SOURCES ... DEPS ...): one GoogleTest binary
# registered with ctest, each test case carrying the tier label.
function(gdrbench_test name)
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    GDRBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    GDRBENCH_BINARY_DIR="${CMAKE_BINARY_DIR}")
  gtest_discover_tests(${name}
    PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT}
    DISCOVERY_TIMEOUT 30)
endfunction()

# gdrbench_embed(TARGET FUNCTION BASE_DIR FILE...): compiles FILEs (paths
# relative to BASE_DIR) into TARGET as gdrbench::embedded::FUNCTION(), a list
# of {path, text} (common/embedded_file.h): the dashboard's and the report's
# scripts ship inside the binaries, nothing is read from disk at run time.
function(gdrbench_embed target func base)
  set(files)
  foreach(f IN LISTS ARGN)
    list(APPEND files ${base}/${f})
  endforeach()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${func}_embedded.cc)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DFUNC=${func} "-DFILES=${files}" -DBASE=${base}
      -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "Embedding ${func}: ${ARGN}" VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
