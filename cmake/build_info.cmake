# Writes OUTPUT (build_info.cc) from build_info.cc.in with the source tree's git commit, run at
# every build (src/cli/CMakeLists.txt): configure_file rewrites the file only when its text
# changed, so an unchanged commit rebuilds nothing. A tree without git says "unknown".
#   cmake -DSOURCE_DIR=... -DINPUT=... -DOUTPUT=... -DVERSION=... -DBUILD_TYPE=... -DSTORES=... -P build_info.cmake
find_package(Git QUIET)
set(AGENTSTREAM_COMMIT "unknown")
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc
                  ERROR_QUIET)
  if(rc EQUAL 0)
    set(AGENTSTREAM_COMMIT "${commit}")
    # Uncommitted changes to tracked files make the build "-dirty".
    execute_process(COMMAND "${GIT_EXECUTABLE}" diff --quiet HEAD --
                    WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND AGENTSTREAM_COMMIT "-dirty")
    endif()
  endif()
endif()
set(AGENTSTREAM_VERSION "${VERSION}")
set(AGENTSTREAM_BUILD_TYPE "${BUILD_TYPE}")
set(AGENTSTREAM_STORES "${STORES}")
if(AGENTSTREAM_BUILD_TYPE STREQUAL "")
  set(AGENTSTREAM_BUILD_TYPE "none")
endif()
configure_file("${INPUT}" "${OUTPUT}" @ONLY)
