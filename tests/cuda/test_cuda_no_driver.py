"""Machines without a usable NVIDIA driver: the backend imports, reports no device and says
why, loads artifacts lazily, and turns every device use into a clear error, never a crash.

Each case runs in a fresh interpreter with TVM_CUDA_DRIVER_LIBRARY pointing at what the driver
search should find, so it behaves the same on machines with a GPU.
"""

from __future__ import annotations

import fakes
import pytest
from backend_testing.no_driver import driver_status, no_driver_script, run_without_driver

import tvm
from conftest import ARTIFACTS

ADD_SO = str(ARTIFACTS / "cuda" / "add.so")

# What a process without CUDA must survive: import, attributes, diagnostics, loading an artifact
# (lazy) and then using the device, which must raise with the reason.
SCRIPT = no_driver_script("cuda", ADD_SO, ("empty", "pinned", "detect", "kernel", "stream"), host_device=3)


def run_without_cuda(env: dict[str, str]) -> tuple[str, str]:
    out = run_without_driver(SCRIPT, env)
    return driver_status(out), out


def test_missing_driver_library():
    # What every device backend says: tests/conformance/test_missing_driver.py; CUDA's own uses here.
    _, out = run_without_cuda({"TVM_CUDA_DRIVER_LIBRARY": "/nonexistent/libcuda.so.1"})
    assert "pinned RAISED RuntimeError CUDA is not available" in out
    assert "kernel RAISED RuntimeError CUDA is not available" in out
    assert "stream RAISED RuntimeError CUDA is not available" in out


def test_this_machine_without_driver():
    if tvm.cuda(0).exist:
        pytest.skip("this machine has a CUDA device")
    status = tvm.get_global_func("runtime.DeviceDriverStatus")(2)
    assert status, "a machine without a CUDA device must say why"


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("cuda"))


def test_driver_without_gpu(fake):
    # What the real driver answers in a container started without GPU access.
    env = {"TVM_CUDA_DRIVER_LIBRARY": fake, "FAKE_CUDA_INIT_ERROR": "100"}
    status, _ = run_without_cuda(env)
    assert "failed to initialise: cuInit returned CUDA_ERROR_NO_DEVICE" in status
    assert "nvidia-smi" in status and "CUDA 13.0" in status and fake in status


def test_gpus_hidden_by_cuda_visible_devices(fake):
    env = {"TVM_CUDA_DRIVER_LIBRARY": fake, "FAKE_CUDA_INIT_ERROR": "100", "CUDA_VISIBLE_DEVICES": ""}
    status, _ = run_without_cuda(env)
    assert 'CUDA_VISIBLE_DEVICES="" hides every GPU' in status


def test_driver_with_zero_devices(fake):
    status, _ = run_without_cuda({"TVM_CUDA_DRIVER_LIBRARY": fake, "FAKE_CUDA_DEVICES": "0"})
    assert "reports no CUDA device" in status
