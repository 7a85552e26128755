"""The ROCm backend on a real AMD GPU: attributes and the target config, memory and copies,
pinned memory, streams, every apache-tvm 0.27 ROCm artifact against numpy, the Relax MLP on the
VM, the device timer.  The artifacts are built for gfx90a (MI200), gfx942 (MI300) and gfx1100
(RDNA3): the GPU runs those of its own architecture; on any other GPU the gfx90a kernels raise
the architecture error, which is checked instead.  Skipped without a GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest
from backend_testing.runners import check_outputs, check_relax_case
from rocm_support import ARCHS, rocm_cases, rocm_device

import tvm
import tvm.backend.rocm as hook
from conftest import ARTIFACTS, run_kernel_call

KERNELS = rocm_cases()


@pytest.fixture(scope="module")
def dev():
    return rocm_device(tvm)


def device_arch(dev) -> str:
    """The GPU's processor (gcnArchName without its feature flags), e.g. gfx942."""
    return str(dev._GetDeviceAttr(10, dev.index, 10)).split(":")[0]


def runs_fixtures(dev) -> bool:
    return device_arch(dev) in ARCHS


def test_attributes_and_target(dev):
    assert dev.exist is True and hook.driver_status() == ""
    assert dev.warp_size in (32, 64)
    assert dev.max_threads_per_block >= 256 and dev.max_shared_memory_per_block >= 32 * 1024
    assert re.fullmatch(r"\d+\.\d+", dev.compute_version)
    target = hook.detect_target(dev)
    assert re.fullmatch(r"gfx[0-9a-f]+", target["mcpu"]) and target["thread_warp_size"] == dev.warp_size
    assert dev.total_global_memory >= dev.available_global_memory > 0


def test_pinned_memory(dev):
    # The copy matrix of every device: tests/conformance/test_device.py.
    x = np.arange(4096, dtype="float32")
    pinned = tvm.runtime.tensor(x, tvm.device(11, 0))
    on_dev = tvm.runtime.empty((4096,), "float32", dev)
    on_dev.copyfrom(pinned)
    np.testing.assert_array_equal(on_dev.numpy(), x)


def test_streams(dev):
    s = dev.create_raw_stream()
    dev.set_raw_stream(s)
    try:
        x = np.arange(100, dtype="float32")
        np.testing.assert_array_equal(tvm.runtime.tensor(x, dev).numpy(), x)
        dev.sync()
    finally:
        dev.set_raw_stream(0)
        dev.free_raw_stream(s)


@pytest.mark.parametrize("case_", KERNELS, ids=[c["name"] for c in KERNELS])
def test_kernel_artifacts_match_numpy(dev, case_):
    """Each kernel (named by its gfx90a fixture), in the build for the GPU's architecture."""
    if not runs_fixtures(dev):
        with pytest.raises(RuntimeError, match="it was built for gfx90a"):
            run_kernel_call(tvm, case_, case_["calls"][0], dev)
        return
    (own,) = [c for c in rocm_cases(arch=device_arch(dev)) if c["function"] == case_["function"]]
    for call in own["calls"]:
        check_outputs(own, run_kernel_call(tvm, own, call, dev))


def test_relax_mlp(dev):
    if not runs_fixtures(dev):
        pytest.skip(f"no ROCm device with one of the fixtures' architectures ({', '.join(ARCHS)})")
    (case_,) = rocm_cases("vm", arch=device_arch(dev))
    check_relax_case(tvm, case_, tvm.runtime.load_module(str(ARTIFACTS / case_["file"])), dev)


def test_time_evaluator(dev):
    if not runs_fixtures(dev):
        pytest.skip(f"no ROCm device with one of the fixtures' architectures ({', '.join(ARCHS)})")
    (add,) = [c for c in rocm_cases(arch=device_arch(dev)) if c["function"] == "add"]
    mod = tvm.runtime.load_module(str(ARTIFACTS / add["file"]))
    a = tvm.runtime.tensor(np.ones(1024, "float32"), dev)
    c = tvm.runtime.empty((1024,), "float32", dev)
    assert mod.time_evaluator("add", dev, number=10)(a, a, c).mean > 0
