"""The deploy bundle (python -m tvm.deploy bundle): made from the installed wheels or from wheel
files, it holds no path of this Python environment, its libraries find each other through
RUNPATH $ORIGIN, and a C++ application built against it with no Python around runs a kernel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import tvm_ffi
from cpp_app_testing import build_app, clean_env, readelf_dynamic, run_add, tool

import tvm
from conftest import REPO

WHEELHOUSE = Path(os.environ.get("TVM_WHEELHOUSE", REPO / "dist" / "wheelhouse"))


def _bundle(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tvm.deploy", "bundle", *args], capture_output=True, text=True
    )


def _check_layout(out: Path, backends: list[str]) -> None:
    libs = {p.name for p in (out / "lib").glob("*.so")}
    assert libs == {"libtvm_runtime.so", "libtvm_ffi.so", *(f"libtvm_runtime_{b}.so" for b in backends)}
    for header in ("tvm_runtime/c_api.h", "tvm/ffi/c_api.h", "tvm/ffi/extra/module.h", "dlpack/dlpack.h"):
        assert (out / "include" / header).is_file(), header
    assert (out / "lib" / "cmake" / "tvm_runtime" / "tvm_runtime-config.cmake").is_file()
    readme = (out / "README.md").read_text()
    assert "tvm_runtime::runtime" in readme and all(f"tvm_runtime::{b}" in readme for b in backends)
    for lib in (out / "lib").glob("*.so"):
        runpaths = [ln for ln in readelf_dynamic(lib).splitlines() if "RUNPATH" in ln or "RPATH" in ln]
        # Our libraries look beside themselves; libtvm_ffi needs none.
        assert all(ln.rstrip().endswith("[$ORIGIN]") for ln in runpaths), (lib, runpaths)
        if lib.name != "libtvm_ffi.so":
            assert runpaths, lib
    # Nothing refers to the environment it was made from (its site-packages, its venv). (The
    # libraries do hold the build machine's header paths, from __FILE__ in error messages.)
    here = {str(Path(tvm.__file__).resolve().parents[1]).encode(), sys.prefix.encode()}
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [p for p in here if p in data], path


def test_bundle_from_installed_wheels_builds_and_runs_an_application_without_python(tmp_path):
    out = tmp_path / "bundle"
    proc = _bundle("--backends", "opencl", str(out))
    assert proc.returncode == 0, proc.stderr
    _check_layout(out, ["opencl"])

    # Build with nothing of Python: no interpreter on PATH, none findable by CMake, no tvm_ffi
    # package to fall back on, only the compiler, binutils, cmake and ninja.
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("g++", "as", "ld"):
        (tools / name).symlink_to(shutil.which(name))
    for name in ("cmake", "ninja"):
        (tools / name).symlink_to(tool(name))
    no_python = [
        "-DCMAKE_DISABLE_FIND_PACKAGE_Python=TRUE",
        "-DCMAKE_DISABLE_FIND_PACKAGE_Python3=TRUE",
        "-DCMAKE_DISABLE_FIND_PACKAGE_tvm_ffi=TRUE",
        # The way the bundle's README says to ship: the executable beside lib/.
        "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
        "-DCMAKE_INSTALL_RPATH=$ORIGIN/lib",
    ]
    env = clean_env([str(tools)])
    exe = build_app(tmp_path / "build", out, ["opencl"], *no_python, env=env)

    # Shipped: the executable and the bundle's lib/ in a new folder, run with an empty PATH.
    shipped = tmp_path / "shipped"
    shutil.copytree(out / "lib", shipped / "lib", ignore=shutil.ignore_patterns("cmake"))
    shutil.copy2(exe, shipped / "run_kernel")
    report = run_add(shipped / "run_kernel", tmp_path / "run", env=clean_env())
    ours = [p for p in report["mapped"] if "libtvm_" in p]
    assert sorted(Path(p).name for p in ours) == [
        "libtvm_ffi.so",
        "libtvm_runtime.so",
        "libtvm_runtime_opencl.so",
    ], report
    assert all(Path(p).resolve().parent == (shipped / "lib").resolve() for p in ours), report


def test_a_missing_backend_names_the_wheel_to_install(tmp_path):
    proc = _bundle("--backends", "opencl,nosuchdev", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "backend nosuchdev not found in the installed wheels" in proc.stderr, proc.stderr
    assert "pip install tvm-runtime-nosuchdev" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_bad_arguments_are_refused_with_a_reason(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    assert "not an empty directory" in _bundle(str(tmp_path / "full")).stderr
    assert "is not a backend name" in _bundle("--backends", "../x", str(tmp_path / "a")).stderr
    proc = _bundle("--platform", "linux-aarch64", str(tmp_path / "b"))
    assert proc.returncode == 2 and "needs --wheels DIR" in proc.stderr, proc.stderr


def _ffi_wheel(into: Path) -> Path:
    """apache-tvm-ffi's installed files as a wheel file (what `pip download` gives, offline)."""
    root = Path(tvm_ffi.__file__).resolve().parent
    wheel = into / f"apache_tvm_ffi-{tvm_ffi.__version__}-py3-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in [root / "lib" / "libtvm_ffi.so", *(root / "include").rglob("*.h")]:
            archive.write(path, path.relative_to(root.parent))
    return wheel


def test_bundle_from_wheel_files(tmp_path):
    """--wheels DIR: the bundle of the wheel files (here the x86_64 wheelhouse; the aarch64 one is
    bundled the same way by nox -s aarch64), with a clear error while tvm-ffi's wheel is absent."""
    assert list(WHEELHOUSE.glob("tvm_runtime-*.whl")), f"no wheelhouse at {WHEELHOUSE} (TVM_WHEELHOUSE)"
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for pattern in ("tvm_runtime-*.whl", "tvm_runtime_opencl-*.whl"):
        for wheel in WHEELHOUSE.glob(pattern):
            (wheels / wheel.name).symlink_to(wheel)
    args = ("--backends", "opencl", "--wheels", str(wheels), "--platform", "linux-x86_64")
    proc = _bundle(*args, str(tmp_path / "missing-ffi"))
    assert proc.returncode == 2 and "apache-tvm-ffi's wheel for linux-x86_64" in proc.stderr, proc.stderr
    assert "pip download" in proc.stderr, proc.stderr
    _ffi_wheel(wheels)
    proc = _bundle(*args, str(tmp_path / "bundle"))
    assert proc.returncode == 0, proc.stderr
    _check_layout(tmp_path / "bundle", ["opencl"])
    # The bundle is for another machine: no path of this one, not even the wheels' directory.
    assert str(tmp_path) not in (tmp_path / "bundle" / "README.md").read_text()
