"""Where the installed tvm-runtime core keeps its SDK, for builds of backends against it.

The locator that tvm-ffi offers for itself (``python -m tvm_ffi.config``), for our core::

    python -m tvm.config --cmakedir      # give to CMake as tvm_runtime_ROOT
    python -m tvm.config --includedir    # tvm_runtime/c_api.h and the header-only helpers
    python -m tvm.config --libdir        # the folder holding libtvm_runtime.so
    python -m tvm.config --libfiles      # libtvm_runtime.so, full path
    python -m tvm.config --version       # distribution version
    python -m tvm.config --abi-version   # the C boundary's version, major.minor
    python -m tvm.config --backends      # installed backends (entry points of group tvm.backends)

Every backend of this repository finds the core this way, exactly as an out-of-tree backend
does (examples/backend_template)::

    execute_process(COMMAND "${Python_EXECUTABLE}" -m tvm.config --cmakedir
                    OUTPUT_VARIABLE tvm_runtime_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE)
    find_package(tvm_runtime CONFIG REQUIRED)

``tvm-runtime-config`` (:mod:`tvm_runtime_config`) gives the same answers without importing ``tvm``.
Importing ``tvm`` loads the core; set ``TVM_DEVICE_BACKEND_AUTOLOAD=0`` to keep backends out of
a build environment (the CMake helper does).
"""

from __future__ import annotations

import os
import sys

import tvm_runtime_config as _locator

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def cmake_dir() -> str:
    """Folder of the CMake package (tvm_runtime-config.cmake): give it as tvm_runtime_ROOT."""
    return _locator.cmake_dir(PACKAGE_DIR)


def include_dir() -> str:
    """Folder holding tvm_runtime/c_api.h and the header-only backend SDK."""
    return _locator.include_dir(PACKAGE_DIR)


def lib_dir() -> str:
    """Folder holding the core library (libtvm_runtime)."""
    return _locator.lib_dir(PACKAGE_DIR)


def lib_files() -> str:
    """Full path of the core's shared library, one a line."""
    return _locator.lib_files(PACKAGE_DIR)


def version() -> str:
    """Version of the loaded core library."""
    from . import _core

    return _core.VERSION


def abi_version() -> str:
    """Version of the loaded core's C boundary, major.minor."""
    from . import _core

    return _core.abi_version_str(_core.ABI_VERSION)


def main(argv: list[str] | None = None) -> int:
    # The locator's flags, answered by this module's function of the same name where it has one
    # (paths of this package, versions of the loaded core), else by the locator's (--backends).
    answers = {flag: globals().get(fn.__name__, fn) for flag, fn in _locator.ANSWERS.items()}
    return _locator.main(argv, prog="python -m tvm.config", answers=answers)


if __name__ == "__main__":
    sys.exit(main())
