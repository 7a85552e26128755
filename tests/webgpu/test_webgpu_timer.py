"""runtime.timer.webgpu (src/backends/webgpu/webgpu_timer.*) beyond the contract every device
timer meets (tests/conformance/test_device_timers.py): the VM profiler's kernel rows on a model
apache-tvm 0.27 compiled for WebGPU take their device time from it, a device made without
timestamps falls back to the host clock, and a timer alive at interpreter exit is harmless."""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing import device_timers as timers
from webgpu_support import artifact, webgpu_device, wgpu_case

import tvm
from conftest import ARTIFACTS


@pytest.fixture(scope="module")
def dev():
    return webgpu_device(tvm)


def test_vm_profiler_reports_the_timer_device_time(dev):
    c = wgpu_case("convnet")
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(artifact("convnet")), dev)
    call = c["calls"][0]
    data = np.load(ARTIFACTS / call["npz"])
    x = tvm.runtime.tensor(data["x"], dev)
    report = vm.profile("main", x)
    kernels = [k for k in report.calls if k.category == "kernel" and k.device == str(dev)]
    assert kernels, report.calls
    for k in kernels:
        assert 0 < k.device_us < k.duration_us, k
    assert report.kernel_us == pytest.approx(sum(k.device_us for k in kernels))
    np.testing.assert_allclose(vm["main"](x).numpy(), data["y"], rtol=c["rtol"], atol=c["atol"])


@pytest.mark.parametrize("disabled", ["timestamp-query", ""])
def test_fallback_without_timestamps_and_timers_alive_at_exit(dev, disabled):
    """With TVM_WEBGPU_DISABLE_FEATURES=timestamp-query the device has no timestamps and the timer
    falls back to the host clock between two device waits (the 50 ms sleep is counted); either
    way a timer still alive at interpreter exit is harmless."""
    files = (artifact("matmul"), str(ARTIFACTS / wgpu_case("matmul")["calls"][0]["npz"]))
    r = timers.two_launches_apart_in_child(
        "webgpu", *files, ("a", "b", "c"), {"TVM_WEBGPU_DISABLE_FEATURES": disabled}
    )
    if disabled:
        assert 50_000_000 <= r["elapsed"] <= r["wall"], r
    else:
        assert 0 < r["elapsed"] < 25_000_000, r
