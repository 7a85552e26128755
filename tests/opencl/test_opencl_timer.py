"""runtime.timer.opencl (src/backends/opencl/opencl_timer.*) beyond the contract every device
timer meets (tests/conformance/test_device_timers.py): OpenCL sums the events of each command, so
nothing enqueued is zero, copies count, thousands of launches fold into a bounded number of
events, queues made without profiling fall back to the host clock, and the VM profiler's kernel
rows take their device time from it.
"""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing import device_timers as timers
from ocl_support import opencl_device

import tvm
from conftest import ARTIFACTS, case


@pytest.fixture(scope="module")
def dev():
    return opencl_device(tvm)


@pytest.fixture(scope="module")
def matmul(dev):
    """The matmul artifact's function, bound to its inputs, and a check of its output."""
    c = case("opencl", "matmul")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((64, 48), "float32", dev)
    f = mod["matmul"]
    f(a, b, out)  # builds the program (or loads it from the cache) outside every timing
    dev.sync()

    def run():
        f(a, b, out)

    def check():
        np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-4, atol=1e-4)

    return run, check


def _timed(dev, work) -> tuple[int, int]:
    return timers.timed(tvm, "opencl", dev, work)


def test_nothing_enqueued_is_zero(dev, matmul):
    run, _ = matmul
    run()  # queued before start: not the timer's
    elapsed, _ = _timed(dev, lambda: None)
    assert elapsed == 0
    dev.sync()


def test_copies_are_device_time(dev):
    x = np.random.default_rng(0).standard_normal(1 << 20).astype("float32")  # 4 MiB
    t = tvm.runtime.empty(x.shape, "float32", dev)
    elapsed, wall = _timed(dev, lambda: t.copyfrom(x))
    assert 0 < elapsed <= wall, (elapsed, wall)
    np.testing.assert_array_equal(t.numpy(), x)


def test_thousands_of_launches_in_one_span(dev, matmul):
    # More launches than a timer keeps events for (4096): the older ones are folded into its sum
    # along the way, and the total still covers every launch.
    run, check = matmul
    single, _ = _timed(dev, run)
    elapsed, wall = _timed(dev, lambda: [run() for _ in range(5000)])
    assert 0 < elapsed <= wall, (elapsed, wall)
    assert elapsed > single, (elapsed, single)
    check()


def test_vm_profiler_reports_the_timer_device_time(dev):
    c = case("opencl", "convnet")
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / c["file"])), dev)
    call = c["calls"][0]
    data = np.load(ARTIFACTS / call["npz"])
    args = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
    report = vm.profile("main", *args)
    kernels = [k for k in report.calls if k.category == "kernel" and k.device == str(dev)]
    assert kernels, report.calls
    # Host time covers the launch and the wait; the device time is the kernel's alone.
    for k in kernels:
        assert 0 < k.device_us < k.duration_us, k
    assert report.kernel_us == pytest.approx(sum(k.device_us for k in kernels))
    out = vm["main"](*args)
    np.testing.assert_allclose(out.numpy(), data[call["outputs"][0]], rtol=c["rtol"], atol=c["atol"])


def test_queues_without_profiling_are_timed_on_the_host(dev):
    """TVM_OPENCL_QUEUE_PROFILING=0 makes queues without CL_QUEUE_PROFILING_ENABLE (the cheapest
    launches): the timer falls back to the host clock between two clFinish, so a host sleep
    between two launches is counted, and it still never exceeds the wall time around it."""
    c = case("opencl", "matmul")
    files = (str(ARTIFACTS / c["file"]), str(ARTIFACTS / c["calls"][0]["npz"]))
    r = timers.two_launches_apart_in_child(
        "opencl", *files, ("a", "b", "c"), {"TVM_OPENCL_QUEUE_PROFILING": "0"}
    )
    assert 50_000_000 <= r["elapsed"] <= r["wall"], r
