# CMake toolchain: x86_64 DSOs for glibc >= 2.28 built with zig (see zig-common.cmake).
# Used by ci/build_wheels.py --toolchain zig --arch x86_64.
set(TVMRT_ZIG_ARCH x86_64)
include("${CMAKE_CURRENT_LIST_DIR}/zig-common.cmake")
