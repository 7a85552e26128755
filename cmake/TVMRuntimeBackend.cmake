# tvm_runtime_add_backend(<name> SOURCES <files...> [LIBRARIES <libs...>])
#
# Defines libtvm_runtime_<name>.so, a backend DSO for the tvm-runtime core:
#  - linked to the core (tvm_runtime::tvm_runtime) and tvm-ffi, both from the installed wheels;
#  - C++17, hidden visibility: it exports only TVMRuntimeBackendABIVersion/Register;
#  - RUNPATH relative to where the wheel puts it (site-packages/tvm/backend/<name>/), so a direct
#    dlopen finds the core and tvm-ffi in the same site-packages; split installs (--target,
#    --user) rely on the core being loaded first (SONAME match);
#  - installed at the root of the wheel's install dir (tvm/backend/<name>/).
include_guard(GLOBAL)

function(tvm_runtime_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;INCLUDE_DIRS" ${ARGN})
  set(target tvm_runtime_${name})
  add_library(${target} SHARED ${ARG_SOURCES})
  tvm_runtime_set_common_options(${target})
  target_link_libraries(${target} PRIVATE tvm_runtime::tvm_runtime ${ARG_LIBRARIES})
  if(ARG_INCLUDE_DIRS)
    target_include_directories(${target} PRIVATE ${ARG_INCLUDE_DIRS})
  endif()
  set_target_properties(${target} PROPERTIES
    INSTALL_RPATH "$ORIGIN/../../lib;$ORIGIN/../../../tvm_ffi/lib")
  install(TARGETS ${target} LIBRARY DESTINATION .)
endfunction()

# Locate the installed core's CMake package without importing `tvm` (importing would load DSOs
# and backends inside the build environment).
function(tvm_runtime_find_core)
  if(NOT TARGET tvm_runtime::tvm_runtime)
    find_package(Python COMPONENTS Interpreter REQUIRED)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c
        "import importlib.util as u; s = u.find_spec('tvm'); print(s.submodule_search_locations[0] if s else '')"
      OUTPUT_VARIABLE _tvm_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
    find_package(tvm_runtime CONFIG REQUIRED HINTS "${_tvm_dir}/share/cmake/tvm_runtime")
  endif()
endfunction()
