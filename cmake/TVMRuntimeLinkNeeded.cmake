# Linking a library that nothing references by symbol. An application reaches the core and its
# backends only through tvm-ffi's registry, so a linker run with --as-needed (the default of
# several distributions) would drop them and they would never be loaded; a static archive would
# contribute no member at all. Not include_guard()ed: the link features are variables of the
# directory that calls find_package.
if(NOT APPLE AND NOT WIN32)
  set(CMAKE_LINK_LIBRARY_USING_TVMRT_NEEDED
    "LINKER:--push-state,--no-as-needed" "<LINK_ITEM>" "LINKER:--pop-state")
  set(CMAKE_LINK_LIBRARY_USING_TVMRT_NEEDED_SUPPORTED TRUE)
endif()

# tvm_runtime_link_needed(<interface target> <shared library target>)
function(tvm_runtime_link_needed target library)
  if(APPLE OR WIN32)
    # ld64 and link.exe keep every library named on the command line.
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${library})
  elseif(CMAKE_VERSION VERSION_LESS 3.24)
    # No $<LINK_LIBRARY> before 3.24: --no-as-needed for the whole link line instead.
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${library})
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:--no-as-needed")
  else()
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
      "$<LINK_LIBRARY:TVMRT_NEEDED,${library}>")
  endif()
endfunction()

# tvm_runtime_link_whole(<interface target> <static library target>), CMake 3.24 or newer.
function(tvm_runtime_link_whole target library)
  set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,${library}>")
endfunction()
