# agentstream_precompile_all(HEADER): builds HEADER once, in the target agentstream_precompiled,
# and makes every C++ library and executable under the source tree reuse it. Reuse needs the same
# flags and macros in every target (CMakeLists.txt sets them for all); targets built with other
# flags (the fuzzers, with -fsanitize=fuzzer) and agentstream_net (Asio's and Beast's separately
# compiled sources) compile without it.

# All targets defined in DIR and the directories below it.
function(agentstream_targets_under dir out)
  agentstream_dirs_under(${dir} dirs)
  set(targets)
  foreach(d IN LISTS dirs)
    get_property(here DIRECTORY ${d} PROPERTY BUILDSYSTEM_TARGETS)
    list(APPEND targets ${here})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(agentstream_precompile_all header)
  set(source ${CMAKE_BINARY_DIR}/precompiled.cc)
  file(CONFIGURE OUTPUT ${source} CONTENT "// The target that owns the precompiled header.\n")
  add_library(agentstream_precompiled OBJECT ${source})
  target_link_libraries(agentstream_precompiled PRIVATE Boost::headers fmt::fmt)
  target_precompile_headers(agentstream_precompiled PRIVATE ${header})

  agentstream_targets_under(${PROJECT_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|SHARED_LIBRARY|EXECUTABLE)$"
       OR target STREQUAL "agentstream_precompiled" OR target STREQUAL "agentstream_net")
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    list(FILTER sources INCLUDE REGEX "\\.(cc|cpp)$")
    get_target_property(options ${target} COMPILE_OPTIONS)
    if(NOT sources OR "${options}" MATCHES "fsanitize=fuzzer")
      continue()
    endif()
    target_precompile_headers(${target} REUSE_FROM agentstream_precompiled)
  endforeach()
endfunction()
