"""Where the installed tvm-runtime core keeps its SDK, found without starting the runtime.

The console script ``tvm-runtime-config`` (the counterpart of tvm-ffi's ``tvm-ffi-config``)::

    tvm-runtime-config --cmakedir      # give to CMake as tvm_runtime_ROOT
    tvm-runtime-config --includedir    # tvm_runtime/c_api.h and the header-only helpers
    tvm-runtime-config --libdir        # the folder holding libtvm_runtime
    tvm-runtime-config --libfiles      # the core's shared library, full path
    tvm-runtime-config --version       # distribution version
    tvm-runtime-config --abi-version   # the C boundary's version, major.minor
    tvm-runtime-config --backends      # installed backends (entry points of group tvm.backends)

Why a top-level module: the core installs as the package ``tvm``, whose ``__init__`` loads the
core library and activates backends.  A console script naming ``tvm.config`` would import that
``__init__`` first, so this locator lives beside the package and reads only the installed files
and the distribution's metadata (``importlib.metadata``); nothing of ``tvm`` is imported, no DSO
is mapped, no driver is touched.  ``python -m tvm.config`` answers the same questions from inside
an imported runtime.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata as md
import importlib.util
import os
import re
import sys
from collections.abc import Iterable
from typing import Callable

DISTRIBUTION = "tvm-runtime"
PACKAGE = "tvm"
BACKEND_GROUP = "tvm.backends"  # the group tvm.backend._discovery reads


def package_dir() -> str:
    """The installed ``tvm`` folder of the tvm-runtime distribution (located, never imported)."""
    try:
        located = str(md.distribution(DISTRIBUTION).locate_file(PACKAGE))
    except md.PackageNotFoundError:
        located = ""
    if located and os.path.isfile(os.path.join(located, "__init__.py")):
        return located
    # No metadata (a source checkout on sys.path): find_spec of a top-level name reads the path
    # entries only, it does not execute the package.
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(f"{DISTRIBUTION} is not installed in this environment: pip install {DISTRIBUTION}")
    return list(spec.submodule_search_locations)[0]


def cmake_dir(root: str | None = None) -> str:
    """Folder of the CMake package (tvm_runtime-config.cmake): give it as tvm_runtime_ROOT."""
    return os.path.join(root or package_dir(), "share", "cmake", "tvm_runtime")


def include_dir(root: str | None = None) -> str:
    """Folder holding tvm_runtime/c_api.h and the header-only backend SDK."""
    return os.path.join(root or package_dir(), "include")


def lib_dir(root: str | None = None) -> str:
    """Folder holding the core library (libtvm_runtime)."""
    return os.path.join(root or package_dir(), "lib")


def lib_files(root: str | None = None) -> str:
    """Full path of the core's shared library, one a line."""
    found = sorted(
        path
        for pattern in ("libtvm_runtime.so", "libtvm_runtime.dylib", "tvm_runtime.dll")
        for path in glob.glob(os.path.join(lib_dir(root), pattern))
    )
    if not found:
        raise LookupError(f"no core library in {lib_dir(root)}: reinstall {DISTRIBUTION}")
    return "\n".join(found)


def version() -> str:
    """Version of the installed tvm-runtime distribution."""
    return md.version(DISTRIBUTION)


def abi_version(root: str | None = None) -> str:
    """Version of the C boundary (major.minor) as the installed c_api.h states it."""
    header = os.path.join(include_dir(root), "tvm_runtime", "c_api.h")
    with open(header, encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(rf"#define TVM_RUNTIME_ABI_VERSION_{part} (\d+)", text) for part in ("MAJOR", "MINOR")]
    if not all(parts):
        raise LookupError(f"{header} does not define TVM_RUNTIME_ABI_VERSION_MAJOR/MINOR")
    return ".".join(match.group(1) for match in parts if match)


def backends() -> str:
    """Installed backends, one a line: entry-point name and the distribution providing it."""
    points: Iterable[md.EntryPoint]
    try:
        points = md.entry_points(group=BACKEND_GROUP)
    except TypeError:  # Python 3.9: entry_points() takes no selection
        points = md.entry_points().get(BACKEND_GROUP, ())
    rows = set()
    for point in points:
        dist = getattr(point, "dist", None)
        rows.add(f"{point.name} {dist.metadata['Name']}=={dist.version}" if dist else point.name)
    return "\n".join(sorted(rows))


ANSWERS: dict[str, Callable[[], str]] = {
    "--cmakedir": cmake_dir,
    "--includedir": include_dir,
    "--libdir": lib_dir,
    "--libfiles": lib_files,
    "--version": version,
    "--abi-version": abi_version,
    "--backends": backends,
}


def main(
    argv: list[str] | None = None,
    prog: str = "tvm-runtime-config",
    answers: dict[str, Callable[[], str]] | None = None,
) -> int:
    """Print the answer of every flag given, in the order of the table; 1 with a message if not installed."""
    answers = answers or ANSWERS
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    for flag, fn in answers.items():
        parser.add_argument(flag, action="store_true", help=(fn.__doc__ or "").strip() or None)
    args = vars(parser.parse_args(argv))
    chosen = [fn for flag, fn in answers.items() if args[flag.lstrip("-").replace("-", "_")]]
    if not chosen:
        parser.error(f"give at least one of {', '.join(answers)}")
    try:
        for fn in chosen:
            print(fn())
    except (LookupError, OSError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
