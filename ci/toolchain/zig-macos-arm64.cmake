# CMake toolchain: macOS arm64 dylibs (minimum macOS 11.0) cross-built with zig on Linux.
# Used by ci/build_wheels.py --platform macos --arch arm64.
#
# zig ships clang, libc++'s headers and a stub of libSystem for every macOS release, so no SDK
# is needed.  The C++ runtime is the system's /usr/lib/libc++.1.dylib, the one libtvm_ffi.dylib
# (apache-tvm-ffi's macosx_11_0_arm64 wheel) links: compile against zig's libc++ headers
# (std::__1 like Apple's), link with -nostdlib++ against a stub generated per link
# (zig-macos-c++ -> zig_macos_link.py), so exceptions and RTTI are shared with libtvm_ffi.
# Name the minimum OS in the triple: a bare aarch64-macos stamps zig's newest (15.0).
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(CMAKE_SYSTEM_VERSION 20.0)  # Darwin 20 = macOS 11
set(TVMRT_ZIG_MACOS_TARGET "aarch64-macos.11.0")
# zig compiles libc++'s headers as if for the newest libc++ (availability markup off): they would
# then take for granted templates instantiated only in newer system libc++ dylibs than macOS 11's
# (basic_ifstream's VTT...).  With Apple's availability markup on, the headers decide by the
# target's minimum macOS, as Xcode's do, and instantiate such templates inline instead.
set(CMAKE_CXX_FLAGS_INIT
  "-U_LIBCPP_HAS_VENDOR_AVAILABILITY_ANNOTATIONS -D_LIBCPP_HAS_VENDOR_AVAILABILITY_ANNOTATIONS=1")
# __FILE__ (in tvm-ffi's error macros) would bake this machine's paths into the dylibs:
# ci/check_macos_wheels.py refuses absolute build paths, so name sources relative to their roots.
get_filename_component(_tvmrt_repo "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
string(APPEND CMAKE_CXX_FLAGS_INIT " -ffile-prefix-map=${_tvmrt_repo}/=")
if(TVMRT_TARGET_SITE_PACKAGES)
  string(APPEND CMAKE_CXX_FLAGS_INIT " -ffile-prefix-map=${TVMRT_TARGET_SITE_PACKAGES}/=")
endif()
set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/zig-macos-cc")
set(CMAKE_CXX_COMPILER "${CMAKE_CURRENT_LIST_DIR}/zig-macos-c++")
set(CMAKE_C_COMPILER_TARGET "${TVMRT_ZIG_MACOS_TARGET}")
set(CMAKE_CXX_COMPILER_TARGET "${TVMRT_ZIG_MACOS_TARGET}")
# The minimum OS is in the triple; no SDK (zig's own libSystem stub), no xcrun.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "no SDK: zig provides the headers and libSystem" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "in the zig target triple instead" FORCE)
set(CMAKE_OSX_ARCHITECTURES "" CACHE STRING "in the zig target triple instead" FORCE)
# Link with the final install names and rpaths (@rpath/<lib>.dylib, @loader_path/...): the
# install step then has nothing to rewrite, so no install_name_tool (absent on Linux) touches a
# signed file (zig's linker signs ad hoc; editing a Mach-O afterwards would void the signature).
set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)
set(CMAKE_INSTALL_NAME_DIR "@rpath")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
