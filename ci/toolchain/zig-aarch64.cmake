# CMake toolchain: aarch64 DSOs for glibc >= 2.28 cross-built with zig (see zig-common.cmake).
# Used by ci/build_wheels.py --toolchain zig --arch aarch64.
set(TVMRT_ZIG_ARCH aarch64)
include("${CMAKE_CURRENT_LIST_DIR}/zig-common.cmake")
