"""Building and running the C++ test application (tests/cpp_package/app) against a CMake package
of tvm-runtime: the installed wheels' or a deploy bundle's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from cmake_build import configure_command, tool

from conftest import ARTIFACTS, REPO, child_result

APP_SOURCE = REPO / "tests" / "cpp_package" / "app"


def configure(
    build: Path, package_root: str | Path, backends: list[str], *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """cmake -S tests/cpp_package/app: find_package(tvm_runtime COMPONENTS <backends>)."""
    argv = configure_command(
        APP_SOURCE,
        build,
        f"-Dtvm_runtime_ROOT={package_root}",
        f"-DAPP_BACKENDS={';'.join(backends)}",
        *extra,
    )
    return subprocess.run(argv, capture_output=True, text=True, env=env)


def build_app(
    build: Path, package_root: str | Path, backends: list[str], *extra: str, env: dict[str, str] | None = None
) -> Path:
    """Configure and build the application; returns the executable (run_kernel, or
    run_system_lib with -DAPP_SYSTEM_LIB=...)."""
    proc = configure(build, package_root, backends, *extra, env=env)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    proc = subprocess.run([tool("cmake"), "--build", str(build)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    name = "run_system_lib" if any(a.startswith("-DAPP_SYSTEM_LIB=") for a in extra) else "run_kernel"
    return build / name


def run_add(exe: Path, work: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run tests/artifacts/cpu/add.so (C = A + B) through ``exe``; see run_elementwise."""
    return run_elementwise(
        exe, work, str(ARTIFACTS / "cpu" / "add.so"), "add", ARTIFACTS / "cpu" / "add.npz", env
    )


def run_elementwise(
    exe: Path, work: Path, library: str, function: str, npz: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``function(a, b, c)`` of ``library`` through ``exe`` on the inputs a, b of ``npz``,
    check c against the npz's numpy-computed expectation; returns the application's report (the
    libraries it mapped), after checking that no libpython was among them."""
    data = np.load(npz)
    work.mkdir(parents=True, exist_ok=True)
    inputs = []
    for key in ("a", "b"):
        path = work / f"{key}.f32"
        data[key].astype("<f4").tofile(path)
        inputs.append(str(path))
    out = work / "c.f32"
    argv = [str(exe), library, function, str(out), *inputs]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    np.testing.assert_allclose(np.fromfile(out, dtype="<f4"), data["c"], rtol=1e-6, atol=1e-6)
    report = child_result(proc)
    assert not [lib for lib in report["mapped"] if "libpython" in lib], report
    return report


def readelf_dynamic(path: Path) -> str:
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout


def cmakedir() -> str:
    argv = [sys.executable, "-m", "tvm.config", "--cmakedir"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def clean_env(path_dirs: list[str] = ()) -> dict[str, str]:
    """An environment with no Python, no site-packages and no library path: only PATH (the
    given directories) and HOME."""
    return {"PATH": os.pathsep.join(path_dirs) or "/nonexistent", "HOME": os.environ.get("HOME", "/tmp")}
