"""Where the installed tvm-runtime core keeps its SDK, for builds of backends against it.

The locator that tvm-ffi offers for itself (``python -m tvm_ffi.config``), for our core::

    python -m tvm.config --cmakedir      # give to CMake as tvm_runtime_ROOT
    python -m tvm.config --includedir    # tvm_runtime/c_api.h and the header-only helpers
    python -m tvm.config --libdir        # libtvm_runtime.so
    python -m tvm.config --version       # distribution version
    python -m tvm.config --abi-version   # the C boundary's version, major.minor

Every backend of this repository finds the core this way, exactly as an out-of-tree backend
does (examples/backend_template)::

    execute_process(COMMAND "${Python_EXECUTABLE}" -m tvm.config --cmakedir
                    OUTPUT_VARIABLE tvm_runtime_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE)
    find_package(tvm_runtime CONFIG REQUIRED)

Importing ``tvm`` loads the core; set ``TVM_DEVICE_BACKEND_AUTOLOAD=0`` to keep backends out of
a build environment (the CMake helper does).
"""

from __future__ import annotations

import argparse
import os
import sys

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def cmake_dir() -> str:
    return os.path.join(PACKAGE_DIR, "share", "cmake", "tvm_runtime")


def include_dir() -> str:
    return os.path.join(PACKAGE_DIR, "include")


def lib_dir() -> str:
    return os.path.join(PACKAGE_DIR, "lib")


def version() -> str:
    from . import _core

    return _core.VERSION


def abi_version() -> str:
    from . import _core

    return _core.abi_version_str(_core.ABI_VERSION)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tvm.config", description=__doc__.splitlines()[0])
    answers = {
        "--cmakedir": cmake_dir,
        "--includedir": include_dir,
        "--libdir": lib_dir,
        "--version": version,
        "--abi-version": abi_version,
    }
    group = parser.add_mutually_exclusive_group(required=True)
    for flag, fn in answers.items():
        group.add_argument(flag, action="store_true", help=(fn.__doc__ or "").strip() or None)
    args = vars(parser.parse_args(argv))
    for flag, fn in answers.items():
        if args[flag.lstrip("-").replace("-", "_")]:
            print(fn())
    return 0


if __name__ == "__main__":
    sys.exit(main())
