# Compiler settings shared by the core and every backend DSO.
include_guard(GLOBAL)

# The directory of the DSO being loaded, in a run path: the same relative layout serves Linux
# (RUNPATH $ORIGIN) and macOS (LC_RPATH @loader_path; install names are @rpath/<file>).
if(APPLE)
  set(TVMRT_RPATH_ORIGIN "@loader_path")
  set(CMAKE_MACOSX_RPATH ON)
else()
  set(TVMRT_RPATH_ORIGIN "$ORIGIN")
endif()

# Unity build (see below): ci/build_wheels.py turns it on for the wheels we ship; a plain
# `pip install` from source and a backend built out of tree compile file by file unless asked.
option(TVMRT_UNITY_BUILD "compile each target's sources in batches (unity build)" OFF)
set(TVMRT_UNITY_BATCH_SIZE 16 CACHE STRING "sources per unity batch")

function(tvm_runtime_set_common_options target)
  # Resolved relative to this file, wherever it was included from (repo or installed wheel).
  set(_TVMRT_EXPORTS_MAP "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/exports.map")
  set_target_properties(${target} PROPERTIES
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    # Only the extern "C" entry points are exported: no C++ symbol crosses a wheel boundary.
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    # Unity build: the tvm-ffi headers dominate compile time, and batching sources parses them
    # once per batch instead of once per file (several times less CPU). Our sources keep their
    # file-local helpers in distinct names so that any batch compiles.
    UNITY_BUILD ${TVMRT_UNITY_BUILD}
    UNITY_BUILD_BATCH_SIZE ${TVMRT_UNITY_BATCH_SIZE})
  if(APPLE)
    # ld64-style linkers take no version script: hidden visibility already keeps every C++ symbol
    # local, and the C++ runtime is the system's libc++.1.dylib, not a static copy to hide.
    # Undefined symbols are errors by default there (ci/toolchain/zig_macos_link.py keeps it so).
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  elseif(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
    # Keep C++ runtime symbols out of the dynamic symbol table and fail on undefined symbols.
    target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL
      "-Wl,--version-script=${_TVMRT_EXPORTS_MAP}")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${_TVMRT_EXPORTS_MAP}")
  endif()
endfunction()
