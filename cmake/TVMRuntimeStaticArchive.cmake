# libtvm_runtime_static.a: the core for programs that cannot load shared libraries (a fully
# static executable, an iOS app), beside libtvm_runtime.so in the core wheel.
#
# One relocatable object, prelinked from the core's own object files (the very ones of
# libtvm_runtime.so) and the C++ library the core is built with, in which every symbol but the C
# boundary (TVMBackend*, TVMRuntime*) is made local: the archive keeps the shared library's
# promise that no C++ symbol crosses into the application. So an application built with any
# C++ toolchain links it: the zig build's static libc++ stays inside, and what remains undefined
# is what libtvm_runtime.so itself needs from outside: tvm-ffi's C API (libtvm_ffi.so, a shared
# library from its own wheel: every module of a process must share one tvm-ffi), the C++ ABI
# runtime (libstdc++/libgcc_s, as for the shared core), libc, libdl, libpthread.
#
# Debug info is stripped (as the installed shared core is): about 5.6 MB, 1 MB in the wheel.
# Linux x86_64 for now: the symbol edit uses the build host's objcopy, which reads that format.
include_guard(GLOBAL)

# tvm_runtime_add_static_archive(<shared library target>): adds <target>_static (built with ALL)
# and installs lib/libtvm_runtime_static.a.
function(tvm_runtime_add_static_archive target)
  find_program(TVMRT_OBJCOPY NAMES objcopy llvm-objcopy)
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64"
      OR NOT TVMRT_OBJCOPY)
    message(STATUS "libtvm_runtime_static.a: not built for ${CMAKE_SYSTEM_NAME} "
      "${CMAKE_SYSTEM_PROCESSOR} (Linux x86_64 with objcopy only)")
    return()
  endif()
  set(_target_flag "")
  if(CMAKE_CXX_COMPILER_TARGET)
    set(_target_flag "--target=${CMAKE_CXX_COMPILER_TARGET}")
  endif()
  # The C++ library archives the link of the shared core would use, where that is a static
  # libc++ (zig): ask the compiler driver (-v shows the linker's command line).
  set(_cxx_archives "")
  set(_probe "${CMAKE_CURRENT_BINARY_DIR}/static_archive_probe")
  file(WRITE "${_probe}.cc" "#include <string>\nstd::string tvmrt_probe(int n) { return std::to_string(n); }\n")
  execute_process(
    COMMAND "${CMAKE_CXX_COMPILER}" ${_target_flag} -shared -fPIC -v "${_probe}.cc" -o "${_probe}.so"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "libtvm_runtime_static.a: probing the C++ library failed:\n${_out}")
  endif()
  string(REGEX MATCHALL "[^ \n\"]*/libc\\+\\+\\.a" _libcxx "${_out}")
  list(REMOVE_DUPLICATES _libcxx)
  list(APPEND _cxx_archives ${_libcxx})
  if(_libcxx AND DEFINED ENV{TVMRT_ZIG_CXX_RUNTIME})
    # What libc++ needs of libc++abi, on top of libstdc++ (ci/toolchain/cxxabi_shim.cc).
    list(APPEND _cxx_archives "$ENV{TVMRT_ZIG_CXX_RUNTIME}/libtvmrt_cxxabi_shim.a")
  endif()

  # The relocatable link: zig's lld when building with zig, else the toolchain's linker.
  if(DEFINED ENV{TVMRT_ZIG})
    set(_relocatable_link "$ENV{TVMRT_ZIG}" ld.lld)
  else()
    set(_relocatable_link "${CMAKE_LINKER}")
  endif()

  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/static")
  set(_object "${_dir}/tvm_runtime_prelinked.o")
  set(_archive "${_dir}/libtvm_runtime_static.a")
  add_custom_command(OUTPUT "${_archive}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
    # --force-group-allocation resolves the COMDAT groups here, as a final link does: a group
    # left in the object keeps its signature symbol, which the edit below makes local, and the
    # application's link would then discard our copy of the group while our code still points
    # into it (DW.ref.__gxx_personality_v0: every throw crashes in the unwinder).
    COMMAND ${_relocatable_link} -r --force-group-allocation -o "${_object}"
      "$<TARGET_OBJECTS:${target}>" ${_cxx_archives}
    COMMAND "${TVMRT_OBJCOPY}" --strip-debug --wildcard "--keep-global-symbol=TVMBackend*"
      "--keep-global-symbol=TVMRuntime*" "${_object}"
    COMMAND "${CMAKE_COMMAND}" -E rm -f "${_archive}"
    COMMAND "${CMAKE_AR}" rcs "${_archive}" "${_object}"
    DEPENDS ${target} "$<TARGET_OBJECTS:${target}>"
    COMMAND_EXPAND_LISTS
    COMMENT "Prelinking libtvm_runtime_static.a")
  add_custom_target(${target}_static ALL DEPENDS "${_archive}")
  install(FILES "${_archive}" DESTINATION lib)
endfunction()
