"""runtime.timer.opencl (src/backends/opencl/opencl_timer.*) on PoCL with apache-tvm 0.27's OpenCL
kernels: the device time of the commands enqueued between the timer's start and stop, from OpenCL
event profiling, which the time evaluator and the VM profiler use instead of clFinish around
every call.

What distinguishes device time from the host time the backend reported before: it is positive for
real work, never more than the host time around it, zero when nothing was enqueued, and it leaves
out the host's gaps between commands (a sleep between two launches is not counted).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


def test_registered_by_the_backend():
    assert tvm.get_global_func("runtime.timer.opencl", allow_missing=True) is not None


def test_kernel_device_time_is_positive_and_within_the_wall_time(dev, matmul):
    run, check = matmul
    timers.check_within_wall_time(tvm, "opencl", dev, run)
    check()


def test_host_gaps_between_launches_are_not_device_time(dev, matmul):
    run, check = matmul
    timers.check_host_gaps_not_counted(tvm, "opencl", dev, run)
    check()


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


def test_timer_is_reusable_and_elapsed_is_stable(dev, matmul):
    run, _ = matmul
    timers.check_reusable_and_stable(tvm, "opencl", dev, run)


def test_bad_use_says_what_is_wrong(dev):
    timers.check_bad_use(tvm, "opencl", dev, "OpenCL")


def test_time_evaluator_reports_device_time(dev):
    c = case("opencl", "matmul")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((64, 48), "float32", dev)
    timers.check_time_evaluator(mod, "matmul", dev, [a, b, out])
    np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-4, atol=1e-4)


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


HOST_TIMED = """
import json, sys, time
import numpy as np
import tvm

dev = tvm.opencl(0)
f = tvm.runtime.load_module(sys.argv[1])["matmul"]
data = np.load(sys.argv[2])
a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
out = tvm.runtime.empty((64, 48), "float32", dev)
f(a, b, out)
dev.sync()
timer = tvm.get_global_func("runtime.timer.opencl")(dev)
t0 = time.perf_counter_ns()
timer("start")
f(a, b, out)
time.sleep(0.05)
f(a, b, out)
timer("stop")
elapsed = timer("elapsed_ns")
wall = time.perf_counter_ns() - t0
np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-4, atol=1e-4)
print("RESULT:" + json.dumps({"elapsed": elapsed, "wall": wall}))
"""


def test_queues_without_profiling_are_timed_on_the_host():
    """TVM_OPENCL_QUEUE_PROFILING=0 makes queues without CL_QUEUE_PROFILING_ENABLE (the cheapest
    launches): the timer falls back to the host clock between two clFinish, so a host sleep
    between two launches is counted, and it still never exceeds the wall time around it."""
    c = case("opencl", "matmul")
    files = [str(ARTIFACTS / c["file"]), str(ARTIFACTS / c["calls"][0]["npz"])]
    proc = subprocess.run(
        [sys.executable, "-c", HOST_TIMED, *files],
        env={**os.environ, "TVM_OPENCL_QUEUE_PROFILING": "0"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    r = json.loads(line[len("RESULT:") :])
    assert 50_000_000 <= r["elapsed"] <= r["wall"], r
