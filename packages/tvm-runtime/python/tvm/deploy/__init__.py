"""Deploy bundles: what a C++ application needs to run TVM artifacts, in one folder.

    python -m tvm.deploy bundle --backends opencl,vulkan OUT/
    python -m tvm.deploy bundle --backends opencl --wheels DIR --platform linux-aarch64 OUT/

The folder works on a machine without Python or pip::

    OUT/lib/                      libtvm_runtime.so, libtvm_ffi.so, libtvm_runtime_<backend>.so
                                  (RUNPATH $ORIGIN: they find each other there), and
                                  libtvm_runtime_static.a when the core wheel has it
    OUT/include/                  tvm_runtime/ (the core's), tvm/ffi/ and dlpack/ (tvm-ffi's)
    OUT/lib/cmake/tvm_runtime/    the CMake package: find_package(tvm_runtime) with
                                  -Dtvm_runtime_ROOT=OUT (or OUT on CMAKE_PREFIX_PATH)
    OUT/README.md                 what is inside, versions, how to build against it

The core looks for backends in the directory of libtvm_runtime.so, which is ``OUT/lib``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from . import _elf, _sources
from ._readme import readme
from ._sources import BACKEND_NAME, BundleError, Source

__all__ = ["BundleError", "bundle"]

# In the bundle every library sits in lib/, beside the ones it needs.
BUNDLE_RUNPATH = "$ORIGIN"
# apache-tvm-ffi's Python-only headers are of no use to a C++ application.
FFI_INCLUDE_DIRS = ("tvm", "dlpack")
# The wheel-only alias of the CMake package (named after site-packages/tvm).
WHEEL_ONLY_CMAKE_FILES = ("tvm-config.cmake", "tvm-config-version.cmake")


def bundle(
    out: str | os.PathLike[str],
    backends: list[str] | tuple[str, ...] = (),
    wheels: str | os.PathLike[str] | None = None,
    platform: str | None = None,
) -> Path:
    """Write a deploy bundle into ``out`` (which must not exist or be empty); returns its path.

    ``backends``: backend names (``opencl``, ``vulkan``, ...), each from its installed wheel, or
    from its wheel file in ``wheels`` (a directory) built for ``platform`` (``linux-aarch64``).
    """
    names = _checked_names(backends)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BundleError(f"{out} exists and is not an empty directory: give a new folder")
    with tempfile.TemporaryDirectory(prefix="tvm-deploy-") as scratch:
        if wheels is not None:
            source = _sources.from_wheels(wheels, platform or "linux-x86_64", names, Path(scratch))
        elif platform is not None and platform != _sources.installed().platform:
            raise BundleError(f"--platform {platform} needs --wheels DIR (wheel files for it)")
        else:
            source = _sources.installed()
        _check_backends(source, names)
        _write(source, names, out)
    return out


def _checked_names(backends: list[str] | tuple[str, ...]) -> list[str]:
    names = []
    for name in backends:
        name = name.strip().lower()
        if not BACKEND_NAME.match(name):
            raise BundleError(f"{name!r} is not a backend name (opencl, vulkan, cuda, ...)")
        if name not in names:
            names.append(name)
    return names


def _check_backends(source: Source, names: list[str]) -> None:
    missing = [n for n in names if not source.backend_library(n).is_file()]
    if missing:
        install = " ".join(f"tvm-runtime-{n}" for n in missing)
        raise BundleError(
            f"backend {', '.join(missing)} not found in {source.origin} "
            f"(no {source.backend_library(missing[0])}): install it with pip install {install}"
        )
    for path in (source.core_library(), source.ffi_library()):
        if not path.is_file():
            raise BundleError(f"{path} is missing from {source.origin}: reinstall that wheel")


def _write(source: Source, names: list[str], out: Path) -> None:
    lib = out / "lib"
    lib.mkdir(parents=True)
    _copy_library(source.core_library(), lib)
    _copy_library(source.ffi_library(), lib)
    for name in names:
        _copy_library(source.backend_library(name), lib)
    if source.static_archive().is_file():
        shutil.copy2(source.static_archive(), lib)
    include = out / "include"
    shutil.copytree(source.core_include(), include)
    for sub in FFI_INCLUDE_DIRS:
        shutil.copytree(source.ffi_include() / sub, include / sub, dirs_exist_ok=True)
    shutil.copytree(
        source.cmake_package(),
        lib / "cmake" / "tvm_runtime",
        ignore=shutil.ignore_patterns(*WHEEL_ONLY_CMAKE_FILES),
    )
    (out / "README.md").write_text(readme(source, names))


def _copy_library(path: Path, lib: Path) -> None:
    """Copy a shared library into lib/, its run path (if any) pointing at lib/ itself."""
    copied = Path(shutil.copy2(path, lib))
    if _elf.runpath(copied) is not None:
        _elf.set_runpath(copied, BUNDLE_RUNPATH)
