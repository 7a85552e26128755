# CMake package of the tvm-runtime core, for backends (tvm_runtime_add_backend) and applications.
#
# Found relative to this file, with no Python and no absolute path, in either layout:
#   wheel   site-packages/tvm/share/cmake/tvm_runtime/: core tvm/lib, headers tvm/include,
#           backends tvm/backend/<name>/, tvm-ffi site-packages/tvm_ffi/{lib,include}
#   bundle  OUT/lib/cmake/tvm_runtime/ (python -m tvm.deploy bundle): core, tvm-ffi and backends
#           in OUT/lib, every header in OUT/include
# Both put the core's libdir and includedir under the same prefix, three levels up.
#
# Imported targets:
#   tvm_runtime::runtime         the core shared library, its headers and tvm-ffi
#   tvm_runtime::tvm_ffi         apache-tvm-ffi's library and headers (its own tvm_ffi::shared
#                                when the project found apache-tvm-ffi's package first)
#   tvm_runtime::<backend>       one per installed backend library (opencl, vulkan, ...);
#                                find_package(tvm_runtime COMPONENTS opencl) requires it
#   tvm_runtime::runtime_static  the core as a static archive, where the package has one
#   tvm_runtime::tvm_runtime     the core, as backends link it (what tvm_runtime::runtime wraps)
# Variables: tvm_runtime_BACKENDS (the backends found), TVM_RUNTIME_LIBRARY_DIR,
# TVM_RUNTIME_PACKAGE_DIR (wheel layout: the `tvm` Python package).
get_filename_component(_tvmrt_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(_tvmrt_ffi_name "libtvm_ffi${CMAKE_SHARED_LIBRARY_SUFFIX}")
if(EXISTS "${_tvmrt_prefix}/lib/${_tvmrt_ffi_name}")
  set(_tvmrt_layout bundle)
else()
  set(_tvmrt_layout wheel)
  set(TVM_RUNTIME_PACKAGE_DIR "${_tvmrt_prefix}")
endif()
set(TVM_RUNTIME_LIBRARY_DIR "${_tvmrt_prefix}/lib")

include("${CMAKE_CURRENT_LIST_DIR}/TVMRuntimeLinkNeeded.cmake")

# tvm-ffi: one copy per process. The project's own find_package(tvm_ffi) target when it has one,
# else the library of this layout, else apache-tvm-ffi's package (a split install: it asks Python).
if(NOT TARGET tvm_runtime::tvm_ffi)
  get_filename_component(_tvmrt_ffi_wheel "${_tvmrt_prefix}/../tvm_ffi" ABSOLUTE)
  if(NOT TARGET tvm_ffi::shared AND _tvmrt_layout STREQUAL "bundle")
    set(_tvmrt_ffi_lib "${_tvmrt_prefix}/lib/${_tvmrt_ffi_name}")
    set(_tvmrt_ffi_include "${_tvmrt_prefix}/include")
  elseif(NOT TARGET tvm_ffi::shared AND EXISTS "${_tvmrt_ffi_wheel}/lib/${_tvmrt_ffi_name}")
    set(_tvmrt_ffi_lib "${_tvmrt_ffi_wheel}/lib/${_tvmrt_ffi_name}")
    set(_tvmrt_ffi_include "${_tvmrt_ffi_wheel}/include")
  else()
    set(_tvmrt_ffi_lib "")
    if(NOT TARGET tvm_ffi::shared)
      find_package(tvm_ffi CONFIG QUIET)
    endif()
  endif()
  if(_tvmrt_ffi_lib)
    add_library(tvm_runtime::tvm_ffi SHARED IMPORTED)
    set_target_properties(tvm_runtime::tvm_ffi PROPERTIES
      IMPORTED_LOCATION "${_tvmrt_ffi_lib}" IMPORTED_SONAME "${_tvmrt_ffi_name}"
      INTERFACE_INCLUDE_DIRECTORIES "${_tvmrt_ffi_include}"
      INTERFACE_COMPILE_FEATURES cxx_std_17)
  elseif(TARGET tvm_ffi::shared)
    add_library(tvm_runtime::tvm_ffi INTERFACE IMPORTED)
    set_property(TARGET tvm_runtime::tvm_ffi PROPERTY INTERFACE_LINK_LIBRARIES tvm_ffi::shared)
  else()
    set(tvm_runtime_FOUND FALSE)
    string(CONCAT tvm_runtime_NOT_FOUND_MESSAGE "apache-tvm-ffi not found: no ${_tvmrt_ffi_name} "
      "in ${_tvmrt_ffi_wheel}/lib and no tvm_ffi CMake package. Install it beside the core "
      "(pip install apache-tvm-ffi), or use a bundle (python -m tvm.deploy bundle).")
    return()
  endif()
endif()

if(NOT TARGET tvm_runtime::tvm_runtime)
  include("${CMAKE_CURRENT_LIST_DIR}/tvm_runtime-targets.cmake")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/TVMRuntimeCommon.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TVMRuntimeBackend.cmake")

if(NOT TARGET tvm_runtime::runtime)
  add_library(tvm_runtime::runtime INTERFACE IMPORTED)
  tvm_runtime_link_needed(tvm_runtime::runtime tvm_runtime::tvm_runtime)
endif()

# The backends: whatever backend libraries this layout holds, by the naming convention of
# c_api.h (libtvm_runtime_<name>), so no list of backend names is kept here.
set(_tvmrt_suffix "${CMAKE_SHARED_LIBRARY_SUFFIX}")
if(_tvmrt_layout STREQUAL "bundle")
  file(GLOB _tvmrt_backend_libs "${_tvmrt_prefix}/lib/libtvm_runtime_*${_tvmrt_suffix}")
else()
  file(GLOB _tvmrt_backend_libs "${_tvmrt_prefix}/backend/*/libtvm_runtime_*${_tvmrt_suffix}")
endif()
set(tvm_runtime_BACKENDS)
foreach(_tvmrt_lib IN LISTS _tvmrt_backend_libs)
  get_filename_component(_tvmrt_file "${_tvmrt_lib}" NAME)
  string(REGEX REPLACE "^libtvm_runtime_(.*)${_tvmrt_suffix}$" "\\1" _tvmrt_name "${_tvmrt_file}")
  list(APPEND tvm_runtime_BACKENDS "${_tvmrt_name}")
  if(NOT TARGET tvm_runtime::${_tvmrt_name})
    add_library(tvm_runtime::${_tvmrt_name}_library SHARED IMPORTED)
    set_target_properties(tvm_runtime::${_tvmrt_name}_library PROPERTIES
      IMPORTED_LOCATION "${_tvmrt_lib}" IMPORTED_SONAME "${_tvmrt_file}")
    add_library(tvm_runtime::${_tvmrt_name} INTERFACE IMPORTED)
    tvm_runtime_link_needed(tvm_runtime::${_tvmrt_name} tvm_runtime::${_tvmrt_name}_library)
    set_property(TARGET tvm_runtime::${_tvmrt_name} APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES tvm_runtime::runtime)
  endif()
endforeach()

set(_tvmrt_static "${_tvmrt_prefix}/lib/libtvm_runtime_static${CMAKE_STATIC_LIBRARY_SUFFIX}")
if(EXISTS "${_tvmrt_static}" AND NOT TARGET tvm_runtime::runtime_static
    AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.24)
  # One relocatable object inside (the core prelinked with its C++ library, only the C
  # boundary global): linked whole, since nothing references it by symbol.
  add_library(tvm_runtime::runtime_static_archive STATIC IMPORTED)
  set_target_properties(tvm_runtime::runtime_static_archive PROPERTIES
    IMPORTED_LOCATION "${_tvmrt_static}")
  add_library(tvm_runtime::runtime_static INTERFACE IMPORTED)
  tvm_runtime_link_whole(tvm_runtime::runtime_static tvm_runtime::runtime_static_archive)
  find_package(Threads REQUIRED)
  set_property(TARGET tvm_runtime::runtime_static APPEND PROPERTY INTERFACE_LINK_LIBRARIES
    tvm_runtime::tvm_ffi Threads::Threads ${CMAKE_DL_LIBS})
  set_property(TARGET tvm_runtime::runtime_static PROPERTY INTERFACE_INCLUDE_DIRECTORIES
    "${_tvmrt_prefix}/include")
endif()

# COMPONENTS: a backend name, or `static`; a missing one says what to install.
string(REPLACE ";" ", " _tvmrt_have "${tvm_runtime_BACKENDS}")
if(NOT _tvmrt_have)
  set(_tvmrt_have "none")
endif()
foreach(_tvmrt_component IN LISTS tvm_runtime_FIND_COMPONENTS)
  if(_tvmrt_component STREQUAL "static")
    set(_tvmrt_target tvm_runtime::runtime_static)
  else()
    set(_tvmrt_target tvm_runtime::${_tvmrt_component})
  endif()
  if(TARGET ${_tvmrt_target})
    set(tvm_runtime_${_tvmrt_component}_FOUND TRUE)
  else()
    set(tvm_runtime_${_tvmrt_component}_FOUND FALSE)
    if(tvm_runtime_FIND_REQUIRED_${_tvmrt_component})
      set(tvm_runtime_FOUND FALSE)
      if(_tvmrt_component STREQUAL "static")
        set(_tvmrt_why "no static archive ${_tvmrt_static} (or CMake older than 3.24)")
      elseif(_tvmrt_layout STREQUAL "bundle")
        string(CONCAT _tvmrt_why "backend '${_tvmrt_component}' is not in this bundle "
          "(${_tvmrt_prefix}/lib has: ${_tvmrt_have}); make it with --backends ${_tvmrt_component}")
      else()
        string(CONCAT _tvmrt_why "backend '${_tvmrt_component}' is not installed (installed: "
          "${_tvmrt_have}); install it: pip install tvm-runtime-${_tvmrt_component}")
      endif()
      string(APPEND tvm_runtime_NOT_FOUND_MESSAGE "${_tvmrt_why}. ")
    endif()
  endif()
endforeach()
