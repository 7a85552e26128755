"""The CMake package for applications, from the installed wheels: find_package(tvm_runtime)
gives tvm_runtime::runtime, tvm_runtime::tvm_ffi and one target per installed backend; a C++
program built with them runs a kernel library."""

from __future__ import annotations

from pathlib import Path

from cpp_app_testing import build_app, cmakedir, configure, readelf_dynamic, run_add

import tvm


def test_application_built_against_the_installed_wheels_runs_a_kernel(tmp_path):
    exe = build_app(tmp_path / "build", cmakedir(), ["opencl"])
    # Linked by target and kept although the program references none of their symbols: the core
    # and the backend are loaded at startup (the linker's --as-needed would have dropped them).
    needed = readelf_dynamic(exe)
    for lib in ("libtvm_runtime.so", "libtvm_runtime_opencl.so", "libtvm_ffi.so"):
        assert f"[{lib}]" in needed, needed
    report = run_add(exe, tmp_path / "run")
    package = Path(tvm.__file__).resolve().parent
    mapped = {Path(p).resolve() for p in report["mapped"]}
    assert package / "lib" / "libtvm_runtime.so" in mapped, report
    assert package / "backend" / "opencl" / "libtvm_runtime_opencl.so" in mapped, report


def test_a_backend_that_is_not_installed_fails_find_package_and_names_the_wheel(tmp_path):
    proc = configure(tmp_path / "build", cmakedir(), ["opencl", "nosuchdev"])
    assert proc.returncode != 0
    output = " ".join((proc.stdout + proc.stderr).split())
    assert "backend 'nosuchdev' is not installed" in output, output
    assert "pip install tvm-runtime-nosuchdev" in output, output
    # ... and lists what is installed.
    assert "opencl" in output.split("backend 'nosuchdev' is not installed", 1)[1], output
