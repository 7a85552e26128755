# tvm_runtime_add_backend(<name> SOURCES <files...> [LIBRARIES <libs...>] [INCLUDE_DIRS <dirs...>])
#
# Defines libtvm_runtime_<name>.so, a backend DSO for the tvm-runtime core:
#  - linked to the core (tvm_runtime::tvm_runtime) and tvm-ffi, both from the installed wheels,
#    and to libdl (backends open their vendor driver at first use, never link it);
#  - C++17, hidden visibility: it exports only TVMRuntimeBackendABIVersion/Register;
#  - RUNPATH relative to where the wheel puts it (site-packages/tvm/backend/<name>/), so a direct
#    dlopen finds the core and tvm-ffi in the same site-packages; split installs (--target,
#    --user) rely on the core being loaded first (SONAME match);
#  - installed at the root of the wheel's install dir (tvm/backend/<name>/).
#
# Find the core first, with no hints inside a scikit-build-core build (its site-packages is on
# CMAKE_PREFIX_PATH and the `tvm` name matches the package directory):
#     find_package(tvm_runtime CONFIG REQUIRED NAMES tvm_runtime tvm)
# or, from plain CMake: -Dtvm_runtime_ROOT=$(python -m tvm.config --cmakedir).
include_guard(GLOBAL)

function(tvm_runtime_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;INCLUDE_DIRS" ${ARGN})
  set(target tvm_runtime_${name})
  add_library(${target} SHARED ${ARG_SOURCES})
  tvm_runtime_set_common_options(${target})
  target_link_libraries(${target} PRIVATE tvm_runtime::tvm_runtime ${CMAKE_DL_LIBS} ${ARG_LIBRARIES})
  if(ARG_INCLUDE_DIRS)
    target_include_directories(${target} PRIVATE ${ARG_INCLUDE_DIRS})
  endif()
  set_target_properties(${target} PROPERTIES
    INSTALL_RPATH "${TVMRT_RPATH_ORIGIN}/../../lib;${TVMRT_RPATH_ORIGIN}/../../../tvm_ffi/lib")
  install(TARGETS ${target} LIBRARY DESTINATION .)
endfunction()
