# The part of zig-x86_64.cmake and zig-aarch64.cmake that does not depend on the architecture.
#
# zig ships clang, libc++ and the symbol lists of every glibc release, so one x86_64 build host
# links DSOs for glibc 2.28 (manylinux_2_28) on x86_64 and aarch64 without a sysroot.  The C++
# standard library (libc++) is linked statically into each DSO and stays hidden behind
# cmake/exports.map: only the extern "C" entry points are exported.
#
# The C++ *ABI runtime* is another matter: our DSOs subclass tvm::ffi::ModuleObj, whose virtual
# methods libtvm_ffi (built with g++/libstdc++) calls, and call its C++ API (Module::LoadFromFile),
# so exceptions do cross between our code and libtvm_ffi in both directions.  With zig's default
# static libc++abi + libunwind, such an exception meets a second unwinder and an exception class
# the other side cannot catch: the process aborts (a corrupted artifact, write_to_file on a
# device module).  So throw/catch, RTTI, operator new and the unwinder come from the same
# libstdc++.so.6 / libgcc_s.so.1 that libtvm_ffi uses: they are linked first, so zig's static
# libc++abi/libunwind archives no longer provide those symbols.  libc++'s exception classes are
# layout-compatible with libstdc++'s by design (libcxx/src/include/refstring.h), and
# cxxabi_shim.cc supplies the few libc++abi-only functions libc++ needs.  $TVMRT_ZIG_CXX_RUNTIME
# holds the three (ci/build_wheels.py: the shim compiled for the target, Debian bookworm's
# libraries); auditwheel --plat manylinux_2_28 and ci/check_wheels.py check the symbol versions
# they bind.  All of this is written for one zig and its libc++: the ziglang of
# ci/toolchain/pins.toml, which ci/build_wheels.py insists on and cxxabi_shim.cc checks.
if(NOT TVMRT_ZIG_ARCH)
  message(FATAL_ERROR "include zig-x86_64.cmake or zig-aarch64.cmake, not zig-common.cmake")
endif()
# The oldest glibc the wheels support: manylinux_2_28, the platform apache-tvm-ffi's wheels target.
set(TVMRT_ZIG_GLIBC "2.28")

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR "${TVMRT_ZIG_ARCH}")
set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/zig-cc")
set(CMAKE_CXX_COMPILER "${CMAKE_CURRENT_LIST_DIR}/zig-c++")
set(CMAKE_C_COMPILER_TARGET "${TVMRT_ZIG_ARCH}-linux-gnu.${TVMRT_ZIG_GLIBC}")
set(CMAKE_CXX_COMPILER_TARGET "${TVMRT_ZIG_ARCH}-linux-gnu.${TVMRT_ZIG_GLIBC}")
set(_tvmrt_cxx_runtime "$ENV{TVMRT_ZIG_CXX_RUNTIME}")
set(_tvmrt_cxx_libs "")
foreach(_lib libtvmrt_cxxabi_shim.a libstdc++.so.6 libgcc_s.so.1)
  if(NOT EXISTS "${_tvmrt_cxx_runtime}/${_lib}")
    message(FATAL_ERROR "TVMRT_ZIG_CXX_RUNTIME must name a directory holding the target's "
      "libtvmrt_cxxabi_shim.a, libstdc++.so.6 and libgcc_s.so.1 (ci/build_wheels.py makes one)")
  endif()
  string(APPEND _tvmrt_cxx_libs " \"${_tvmrt_cxx_runtime}/${_lib}\"")
endforeach()
# Before zig's own libc++abi/libunwind archives, which the linker then no longer needs.
set(CMAKE_CXX_STANDARD_LIBRARIES_INIT "${_tvmrt_cxx_libs}")
# Bookworm's libstdc++ needs a newer glibc than 2.28 itself; it stands in for the user's own
# libstdc++ at link time only, so its undefined symbols are not ours to resolve.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--allow-shlib-undefined")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,--allow-shlib-undefined")
# Headers and libraries of the target come from zig and the target site-packages, never from
# the build host's /usr; programs (python, ninja) come from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
