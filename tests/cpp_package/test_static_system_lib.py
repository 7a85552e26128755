"""Static linking: the core's static archive (libtvm_runtime_static.a, in the core wheel) and an
apache-tvm 0.27 --system-lib object (tests/artifacts/system_lib) linked into one executable,
which runs the kernel through ffi.SystemLib() with no libtvm_runtime.so and no dlopen of it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cpp_app_testing import build_app, cmakedir, readelf_dynamic, run_elementwise

import tvm
from conftest import ARTIFACTS

SYSTEM_LIB = ARTIFACTS / "system_lib"


def test_the_core_wheel_ships_one_prelinked_object_exporting_only_the_c_boundary():
    archive = Path(tvm.__file__).resolve().parent / "lib" / "libtvm_runtime_static.a"
    members = subprocess.run(["ar", "t", str(archive)], capture_output=True, text=True, check=True)
    assert members.stdout.split() == ["tvm_runtime_prelinked.o"], members.stdout
    symbols = subprocess.run(["nm", "-g", "--defined-only", str(archive)], capture_output=True, text=True)
    names = [line.split()[-1] for line in symbols.stdout.splitlines() if line.count(" ") >= 2]
    assert "TVMBackendParallelLaunch" in names and "TVMBackendAllocWorkspace" in names, names
    # No C++ symbol (mangled _Z...) of the core or of its C++ library reaches the application.
    assert all(n.startswith(("TVMBackend", "TVMRuntime")) for n in names), names


def test_system_lib_object_and_static_core_in_one_executable(tmp_path):
    obj = SYSTEM_LIB / "scale_add_x86_64.o"
    exe = build_app(tmp_path / "build", cmakedir(), [], f"-DAPP_SYSTEM_LIB={obj}")
    dynamic = readelf_dynamic(exe)
    assert "libtvm_runtime" not in dynamic, dynamic
    assert "[libtvm_ffi.so]" in dynamic, dynamic  # tvm-ffi stays one shared copy per process
    defined = subprocess.run(["nm", "--defined-only", str(exe)], capture_output=True, text=True).stdout
    assert " T TVMBackendParallelLaunch" in defined  # the kernel's parallel loop: the static core
    report = run_elementwise(exe, tmp_path / "run", "--system-lib", "scale_add", SYSTEM_LIB / "scale_add.npz")
    assert not [p for p in report["mapped"] if "libtvm_runtime" in p], report
