"""Builds the fake Objective-C runtime and fake Metal (fake_driver/) for the Metal tests, on Linux
and on macOS alike: the hosted macOS job runs tests/metal too, and Apple's ld64 knows neither
GNU ld's ``-soname`` nor ``-l:<file>``.  The fake Metal is linked against the fake runtime by the
runtime's path; the runtime carries its own name (``-soname`` on ELF, ``-install_name`` on
Mach-O), so the fake Metal finds it wherever the test put it."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parent / "fake_driver"


def own_name_flag(library: Path, system: str) -> str:
    """The linker flag that records a shared library's own name: its absolute path on macOS
    (dyld loads dependents by their install name), its file name with an rpath on Linux."""
    if system == "Darwin":
        return f"-Wl,-install_name,{library}"
    return f"-Wl,-soname,{library.name}"


def link_commands(cc: list[str], out: Path, system: str | None = None) -> list[list[str]]:
    """The two compiler commands for ``system`` (default: this one's, platform.system()): the
    fake runtime, then the fake Metal linked against it."""
    system = system or platform.system()
    objc, metal = out / "libfake_objc.so", out / "libfake_metal.so"
    shared = [*cc, "-shared", "-fPIC", "-O1"]
    runtime = [*shared, own_name_flag(objc, system), "-o", str(objc), str(FAKES / "fake_objc.c")]
    framework = [*shared, "-o", str(metal), str(FAKES / "fake_metal.c"), str(objc)]
    if system != "Darwin":
        framework.append(f"-Wl,-rpath,{out}")
    return [runtime, framework]


def run_commands(commands: list[list[str]]) -> None:
    for cmd in commands:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")


def build_metal_fakes(out: Path) -> dict[str, str]:
    """Compile both fakes into ``out``; the environment that points the backend at them."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.fail("the Metal tests need a C compiler to build the fake Metal")
    run_commands(link_commands([cc], out))
    metal = str(out / "libfake_metal.so")
    return {
        "TVM_METAL_OBJC_LIBRARY": str(out / "libfake_objc.so"),
        "TVM_METAL_FRAMEWORK": metal,
        "TVM_METAL_FOUNDATION": metal,
        "TVM_METAL_COREGRAPHICS": metal,
    }
