"""Where a bundle's files come from: the installed wheels, or wheel files for another platform.

Either way the files are read from a *site-packages layout*: ``tvm/`` (the core wheel and the
backend wheels) and ``tvm_ffi/`` (apache-tvm-ffi's wheel).  Wheel files are unpacked into a
temporary directory, which then has that layout, so both sources share one set of paths.
"""

from __future__ import annotations

import os
import platform as _host
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

# What a platform is called here -> the wheel platform tag fragment its wheels carry.
PLATFORMS = {"linux-x86_64": "_x86_64", "linux-aarch64": "_aarch64"}
BACKEND_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class BundleError(ValueError):
    """A bundle cannot be made as asked; the message says what is missing and how to get it."""


@dataclass(frozen=True)
class Source:
    """A site-packages layout holding the core (``tvm/``) and tvm-ffi (``tvm_ffi/``)."""

    tvm_root: Path  # the directory holding tvm/
    ffi_root: Path  # the directory holding tvm_ffi/
    platform: str
    origin: str  # for messages: "the installed wheels" or "wheels in DIR"

    def core_library(self) -> Path:
        return self.tvm_root / "tvm" / "lib" / "libtvm_runtime.so"

    def core_include(self) -> Path:
        return self.tvm_root / "tvm" / "include"

    def cmake_package(self) -> Path:
        return self.tvm_root / "tvm" / "share" / "cmake" / "tvm_runtime"

    def static_archive(self) -> Path:
        return self.tvm_root / "tvm" / "lib" / "libtvm_runtime_static.a"

    def ffi_library(self) -> Path:
        return self.ffi_root / "tvm_ffi" / "lib" / "libtvm_ffi.so"

    def ffi_include(self) -> Path:
        return self.ffi_root / "tvm_ffi" / "include"

    def backend_library(self, name: str) -> Path:
        """Where the backend wheel tvm-runtime-<name> puts its DSO (c_api.h 4e's naming)."""
        return self.tvm_root / "tvm" / "backend" / name / f"libtvm_runtime_{name}.so"


def installed() -> Source:
    """The wheels installed in this Python environment."""
    import tvm_ffi

    import tvm

    platform = f"{sys.platform}-{_host.machine()}"
    if platform not in PLATFORMS:
        raise BundleError(f"bundles are made for {', '.join(PLATFORMS)}; this is {platform}")
    return Source(
        tvm_root=Path(tvm.__file__).resolve().parent.parent,
        ffi_root=Path(tvm_ffi.__file__).resolve().parent.parent,
        platform=platform,
        origin="the installed wheels",
    )


def _wheels_for(directory: Path, platform: str) -> dict[str, Path]:
    """distribution (normalized, e.g. tvm_runtime_opencl) -> its wheel for ``platform``."""
    arch_tag = PLATFORMS[platform]
    found: dict[str, Path] = {}
    # {dist}-{version}(-{build})?-{python}-{abi}-{platform tags, dot-separated}.whl
    for wheel in sorted(directory.glob("*.whl")):
        parts = wheel.stem.split("-")
        tags = parts[-1].split(".") if len(parts) >= 5 else []
        if any(tag.startswith(("manylinux", "linux")) and tag.endswith(arch_tag) for tag in tags):
            found[parts[0].lower()] = wheel  # in sorted order: the newest version wins
    return found


def from_wheels(directory: str | os.PathLike[str], platform: str, backends: list[str], into: Path) -> Source:
    """Unpack the core's, tvm-ffi's and the backends' wheels for ``platform`` from ``directory``
    into the (empty, temporary) directory ``into``."""
    if platform not in PLATFORMS:
        raise BundleError(f"--platform must be one of {', '.join(PLATFORMS)}, not {platform!r}")
    directory = Path(directory)
    if not directory.is_dir():
        raise BundleError(f"--wheels {directory}: no such directory")
    wheels = _wheels_for(directory, platform)
    arch = platform.split("-", 1)[1]
    wanted = {
        "tvm_runtime": (
            f"the core wheel tvm-runtime for {platform}: build it with "
            f"python ci/build_wheels.py --arch {arch} --out {directory}"
        ),
        "apache_tvm_ffi": (
            f"apache-tvm-ffi's wheel for {platform}: pip download --only-binary=:all: --no-deps "
            f"--platform manylinux_2_28_{arch} -d {directory} apache-tvm-ffi"
        ),
    }
    for name in backends:
        wanted[f"tvm_runtime_{name}"] = (
            f"backend {name!r}: the wheel tvm-runtime-{name} for {platform} "
            f"(python ci/build_wheels.py --arch {arch} --out {directory})"
        )
    missing = [why for dist, why in wanted.items() if dist not in wheels]
    if missing:
        raise BundleError(f"no wheel in {directory} for " + "; ".join(missing))
    for dist in wanted:
        with zipfile.ZipFile(wheels[dist]) as archive:
            archive.extractall(into)
    return Source(tvm_root=into, ffi_root=into, platform=platform, origin=f"wheels in {directory}")
