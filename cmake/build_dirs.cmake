# agentstream_dirs_under(DIR OUT): DIR and every directory of the build below it (those added
# with add_subdirectory), for settings that must reach every directory or target.
function(agentstream_dirs_under dir out)
  set(dirs ${dir})
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    agentstream_dirs_under(${sub} sub_dirs)
    list(APPEND dirs ${sub_dirs})
  endforeach()
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()
