# apache-tvm-ffi's CMake package for the platform being built, read from a target site-packages
# (`pip install --target DIR --platform <plat> --only-binary=:all: apache-tvm-ffi`, made by
# ci/build_wheels.py).  The wheel's own tvm_ffi-config.cmake runs `python -m tvm_ffi.config`,
# which imports tvm_ffi in the build host's Python: it reports the host's library (wrong for a
# cross build) and cannot import an aarch64 tvm_ffi at all.  Select this file with
#   -Dtvm_ffi_DIR=<repo>/ci/toolchain/cmake/tvm_ffi -DTVMRT_TARGET_SITE_PACKAGES=<DIR>
if(TARGET tvm_ffi::shared)
  return()
endif()
if(NOT TVMRT_TARGET_SITE_PACKAGES)
  message(FATAL_ERROR "tvm_ffi_DIR points at ci/toolchain/cmake/tvm_ffi: also set "
    "-DTVMRT_TARGET_SITE_PACKAGES=<site-packages holding apache-tvm-ffi for the target>")
endif()
set(_tvmrt_ffi_root "${TVMRT_TARGET_SITE_PACKAGES}/tvm_ffi")
# The macOS wheel ships tvm_ffi/lib/libtvm_ffi.dylib (install name @rpath/libtvm_ffi.dylib).
set(_tvmrt_ffi_lib "libtvm_ffi${CMAKE_SHARED_LIBRARY_SUFFIX}")
if(NOT EXISTS "${_tvmrt_ffi_root}/lib/${_tvmrt_ffi_lib}" OR NOT EXISTS "${_tvmrt_ffi_root}/include/tvm/ffi/c_api.h")
  message(FATAL_ERROR "no apache-tvm-ffi in ${TVMRT_TARGET_SITE_PACKAGES}: expected "
    "tvm_ffi/lib/${_tvmrt_ffi_lib} and tvm_ffi/include (install it there with pip install --target)")
endif()

# The same imported targets as the wheel's package (the wheel's include dir also holds dlpack).
add_library(tvm_ffi::header INTERFACE IMPORTED)
target_compile_features(tvm_ffi::header INTERFACE cxx_std_17)
target_include_directories(tvm_ffi::header INTERFACE "${_tvmrt_ffi_root}/include")
add_library(tvm_ffi::shared SHARED IMPORTED)
target_compile_features(tvm_ffi::shared INTERFACE cxx_std_17)
set_target_properties(tvm_ffi::shared PROPERTIES
  IMPORTED_LOCATION "${_tvmrt_ffi_root}/lib/${_tvmrt_ffi_lib}"
  INTERFACE_INCLUDE_DIRECTORIES "${_tvmrt_ffi_root}/include")
set(tvm_ffi_FOUND TRUE)
