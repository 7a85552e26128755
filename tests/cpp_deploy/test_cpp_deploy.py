"""C++ programs with no Python (issue 35): the example of examples/cpp_deploy, built with CMake
against the installed wheels (the core, tvm-ffi, the OpenCL backend), runs a kernel library and
a Relax model with embedded weights on CPU and OpenCL; backends load on first use from each
place they may be installed, or are linked; and bad input reaches the C++ caller as an error
with Python's message.  One CMake configure and build for the module (tests/cpp_deploy)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from backend_testing.devices import device_or_skip
from cmake_build import cmake_build, package_config

import tvm
from conftest import ARTIFACTS, REPO, child_result, run_python

DATA = REPO / "examples" / "cpp_deploy" / "data"
OPENCL = 4
SITE = Path(tvm.__file__).resolve().parent  # site-packages/tvm of the wheels under test
OPENCL_DSO = SITE / "backend" / "opencl" / "libtvm_runtime_opencl.so"


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("cpp_deploy")
    defines = {"tvm_runtime_ROOT": package_config("tvm", "--cmakedir")}
    cmake_build(REPO / "tests" / "cpp_deploy", build, "Release", defines)
    return build


def _env(**extra: str) -> dict[str, str]:
    """A child's environment without the settings of this Python process's tools."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TVM_RUNTIME_BACKEND"))}
    env.update(extra)
    return env


def _run(argv: list[str], **extra: str) -> dict:
    proc = subprocess.run(argv, capture_output=True, text=True, env=_env(**extra), timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # never a crash or an abort
    return child_result(proc)


def _deploy(program: Path, device: str, **extra: str) -> dict:
    return _run([str(program), device, str(ARTIFACTS), str(DATA)], **extra)


def _needed(program: Path) -> set[str]:
    out = subprocess.run(["readelf", "-d", str(program)], capture_output=True, text=True, check=True)
    return {line.split("[")[1].split("]")[0] for line in out.stdout.splitlines() if "(NEEDED)" in line}


@pytest.fixture(scope="module")
def opencl() -> None:
    device_or_skip(tvm, tvm.opencl(0), OPENCL, "OpenCL")


@pytest.fixture
def lone_core(tmp_path: Path) -> Path:
    """A directory holding only a copy of the core, put first on the library path: a core with no
    backend installed beside it (a bundle without backends)."""
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy2(SITE / "lib" / "libtvm_runtime.so", lib)
    return lib


def test_example_runs_kernels_and_a_model_with_embedded_weights_on_cpu(programs):
    program = programs / "example" / "cpp_deploy"
    # Linked only against the core and tvm-ffi (and the C/C++ runtime): no backend, no Python.
    needed = _needed(program)
    assert {"libtvm_runtime.so", "libtvm_ffi.so"} <= needed
    assert not any("python" in n or "tvm_runtime_" in n for n in needed), needed
    out = _deploy(program, "cpu")
    assert out == {"device": "cpu", "kernel_excess": 0, "model_excess": 0, "libpython_mapped": False}


def test_example_loads_the_installed_opencl_backend_on_first_use(programs, opencl):
    out = _deploy(programs / "example" / "cpp_deploy", "opencl")
    assert out == {"device": "opencl", "kernel_excess": 0, "model_excess": 0, "libpython_mapped": False}


def test_a_linked_backend_is_used(programs, opencl, lone_core):
    # Nothing to find beside the lone core: the OpenCL backend the program links is the one used.
    program = programs / "cpp_deploy_linked_opencl"
    assert "libtvm_runtime_opencl.so" in _needed(program)
    out = _deploy(program, "opencl", LD_LIBRARY_PATH=str(lone_core))
    assert out["kernel_excess"] == 0 and out["model_excess"] == 0 and not out["libpython_mapped"]


def test_backend_found_in_a_bundle_and_in_the_path_variable(programs, opencl, lone_core, tmp_path):
    program = programs / "example" / "cpp_deploy"
    # TVM_RUNTIME_BACKEND_PATH names the directory that holds the backend.
    out = _deploy(
        program, "opencl", LD_LIBRARY_PATH=str(lone_core), TVM_RUNTIME_BACKEND_PATH=str(OPENCL_DSO.parent)
    )
    assert out["kernel_excess"] == 0 and out["model_excess"] == 0
    # A deploy bundle: <prefix>/lib holds the core and the backends.
    shutil.copy2(OPENCL_DSO, lone_core)
    out = _deploy(program, "opencl", LD_LIBRARY_PATH=str(lone_core))
    assert out["kernel_excess"] == 0 and out["model_excess"] == 0


def _opencl_add_argv(programs: Path) -> list[str]:
    """error_cases running the OpenCL kernel `add` on float32[16] tensors of the OpenCL device."""
    artifact = str(ARTIFACTS / "opencl" / "add.so")
    return [str(programs / "error_cases"), "run-kernel", "opencl", artifact, "add", "16"]


def _python_error(call: str, **env: str) -> tuple[str, str]:
    """The exception type and the first line of the message of ``call`` in a fresh interpreter."""
    code = (
        "import json, tvm\n"
        "from tvm.backend import _dso\n"
        f"try:\n    {call}\n"
        "except Exception as err:\n"
        "    print(json.dumps([type(err).__name__, str(err).splitlines()[0]]))\n"
    )
    proc = run_python(code, env=env)
    return tuple(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_missing_backend_is_python_s_error(programs, lone_core):
    out = _run(
        _opencl_add_argv(programs),
        LD_LIBRARY_PATH=str(lone_core),
    )
    # What Python says when the OpenCL backend is not loaded.
    _, python = _python_error(
        'tvm.runtime.empty((16,), "float32", tvm.opencl(0))', TVM_DEVICE_BACKEND_AUTOLOAD="0"
    )
    assert not out["ok"] and out["kind"] == "RuntimeError"
    assert out["message"] == python
    assert "pip install tvm-runtime-opencl" in python
    # Asked for by name, it names what to install and where it looked.
    out = _run([str(programs / "error_cases"), "load-backend", "opencl"], LD_LIBRARY_PATH=str(lone_core))
    assert not out["ok"] and out["kind"] == "RuntimeError"
    assert out["message"].startswith(
        "Cannot load TVM backend 'opencl': it is not installed. Install it: pip install tvm-runtime-opencl. "
        f"Looked for libtvm_runtime_opencl.so in: {lone_core}"
    )


def test_a_contrib_function_loads_the_extra_wheel_on_first_use(programs):
    """A model whose host code calls tvm.contrib.sort.* (tvm-runtime-extra's functions): the C++
    program links only the core; the VM finds the function's wheel from the declarations and
    loads it, as a device's backend is loaded on first use."""
    sort_model = str(ARTIFACTS / "contrib" / "sort_ops_f32_cpu.so")
    argv = [str(programs / "error_cases"), "vm-sort-rows", sort_model, "16", "300"]
    assert _run(argv) == {"ok": True, "kind": "", "message": "", "rc": 0}
    # With on-demand loading off, the error names the wheel, as under Python.
    out = _run(argv, TVM_DEVICE_BACKEND_AUTOLOAD="0")
    assert not out["ok"] and out["kind"] == "RuntimeError", out
    assert "tvm.contrib.sort" in out["message"] and "tvm-runtime-extra" in out["message"], out


def test_backend_of_another_abi_is_python_s_error(programs, testdev_install, lone_core, tmp_path):
    dso = testdev_install("abi_mismatch") / "tvm" / "backend" / "testdev" / "libtvm_runtime_testdev.so"
    out = _run([str(programs / "error_cases"), "load-backend-path", "testdev", str(dso)])
    kind, python = _python_error(
        f'_dso.load_backend_dso("testdev", {str(dso)!r})', TVM_DEVICE_BACKEND_AUTOLOAD="0"
    )
    assert kind == "BackendABIError"
    assert not out["ok"] and out["rc"] == 2  # TVM_RUNTIME_BACKEND_ABI_MISMATCH
    assert out["message"] == python and "core ABI 99.0" in python
    # Found on first use instead, the failure is what later errors quote, with the fix.
    backends = tmp_path / "backends"
    backends.mkdir()
    shutil.copy2(dso, backends / "libtvm_runtime_opencl.so")
    out = _run(
        _opencl_add_argv(programs),
        LD_LIBRARY_PATH=str(lone_core),
        TVM_RUNTIME_BACKEND_PATH=str(backends),
    )
    assert not out["ok"] and out["kind"] == "RuntimeError"
    assert "The installed backend failed to load: BackendABIError: " in out["message"]
    assert "core ABI 99.0" in out["message"] and 'pip install "tvm[opencl]==' in out["message"]


def test_truncated_artifact_is_python_s_error(programs, tmp_path):
    whole = (ARTIFACTS / "constants" / "weights_cpu.so").read_bytes()
    truncated = tmp_path / "truncated.so"
    truncated.write_bytes(whole[: len(whole) // 2])
    out = _run([str(programs / "error_cases"), "load", str(truncated)])
    kind, message = _python_error(f"tvm.runtime.load_module({str(truncated)!r})")
    assert not out["ok"]
    assert out["message"].splitlines()[0] == message and str(truncated) in message
    assert kind == out["kind"] == "ValueError" and "the file is truncated" in message


def test_example_built_against_a_deploy_bundle_runs_on_cpu_and_opencl(tmp_path, opencl):
    # `python -m tvm.deploy bundle` with the OpenCL backend, the example configured against the
    # bundle's CMake package (nothing of the Python environment), and run: the core finds the
    # backend beside itself in the bundle's lib/.
    bundle = tmp_path / "bundle"
    proc = subprocess.run(
        [sys.executable, "-m", "tvm.deploy", "bundle", "--backends", "opencl", str(bundle)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    build = tmp_path / "build"
    cmake_build(
        REPO / "examples" / "cpp_deploy",
        build,
        "Release",
        {"tvm_runtime_ROOT": str(bundle / "lib" / "cmake" / "tvm_runtime")},
    )
    for device in ("cpu", "opencl"):
        proc = subprocess.run(
            [str(build / "cpp_deploy"), device, str(ARTIFACTS), str(DATA)],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            timeout=300,
        )
        out = child_result(proc)
        assert out == {"device": device, "kernel_excess": 0, "model_excess": 0, "libpython_mapped": False}
