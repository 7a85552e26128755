"""Machines without a usable HIP runtime or AMD GPU: the backend imports, reports no device and
says why, loads artifacts lazily, and turns every device use into a clear error, never a crash.

Each case runs in a fresh interpreter with TVM_ROCM_LIBRARY pointing at what the search should
find, so it behaves the same on machines with a GPU.
"""

from __future__ import annotations

import fakes
import pytest
from backend_testing.no_driver import driver_status, no_driver_script, run_without_driver
from rocm_support import ROCM, ROCM_HOST, artifact

import tvm
from conftest import run_python

SCRIPT = no_driver_script(
    "rocm", artifact("add"), ("empty", "pinned", "detect", "kernel", "stream"), host_device=ROCM_HOST
)


def run_without_rocm(env: dict[str, str]) -> tuple[str, str]:
    out = run_without_driver(SCRIPT, env)
    return driver_status(out), out


def test_missing_hip_library():
    # What every device backend says: tests/conformance/test_missing_driver.py; ROCm's own uses here.
    _, out = run_without_rocm({"TVM_ROCM_LIBRARY": "/nonexistent/libamdhip64.so"})
    for probe in ("pinned", "kernel", "stream"):
        assert f"{probe} RAISED RuntimeError ROCm is not available" in out, out


def test_search_order_without_override(tmp_path):
    # ROCM_PATH first, then the conda environment, the system, and ROCm's default prefix.
    env = {"ROCM_PATH": str(tmp_path / "rocm"), "TVM_ROCM_LIBRARY": ""}
    status, _ = run_without_rocm(env)
    tried = status.split("could not be opened (", 1)[1]
    first = tried.index(str(tmp_path / "rocm" / "lib" / "libamdhip64.so"))
    assert first < tried.index("libamdhip64.so.6") < tried.index("/opt/rocm/lib/libamdhip64.so")


def test_this_machine_without_rocm():
    if tvm.rocm(0).exist:
        pytest.skip("this machine has a ROCm device")
    status = tvm.get_global_func("runtime.DeviceDriverStatus")(ROCM)
    assert status, "a machine without a ROCm device must say why"


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("hip"))


def test_runtime_without_gpu(fake):
    # What libamdhip64 answers where /dev/kfd is missing (a container without the device).
    status, _ = run_without_rocm({"TVM_ROCM_LIBRARY": fake, "FAKE_HIP_INIT_ERROR": "100"})
    assert "reports no AMD GPU" in status and "ROCm 6.3" in status and fake in status
    assert "/dev/kfd" in status


def test_gpus_hidden_by_hip_visible_devices(fake):
    env = {"TVM_ROCM_LIBRARY": fake, "FAKE_HIP_DEVICES": "0", "HIP_VISIBLE_DEVICES": ""}
    status, _ = run_without_rocm(env)
    assert 'HIP_VISIBLE_DEVICES="" hides every GPU' in status


def test_artifact_without_the_backend_names_the_wheel():
    # TVM_BACKENDS leaves the ROCm backend out, as if tvm-runtime-rocm were not installed: the
    # core's placeholder (from this wheel's declaration) loads the artifact, and the kernel
    # fails when called, naming the wheel.
    proc = run_python(
        f"""
        import numpy as np, tvm
        mod = tvm.runtime.load_module({artifact("add")!r})
        try:
            mod.imports[0]["add_kernel"](None, None, None, 16, 64)
        except RuntimeError as err:
            print("RAISED", err)
        """,
        env={"TVM_BACKENDS": "opencl"},
    )
    assert "Cannot run kernel 'add_kernel' of this artifact's 'hip' device module" in proc.stdout
    assert "tvm-runtime-rocm" in proc.stdout, proc.stdout
