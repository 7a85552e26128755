"""runtime.timer.vulkan (src/backends/vulkan/vulkan_timer.*) on lavapipe with apache-tvm 0.27's
SPIR-V kernels: the device time between the timer's start and stop, from two timestamp queries
written into the command stream, which the time evaluator and the VM profiler use instead of
waiting for the queue around every call.

What distinguishes device time from host time: it is positive for real work, never more than the
host time around it, and a host sleep between two launches recorded in one batch is not counted.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from vk_support import vk_case, vulkan_device

import tvm
from conftest import ARTIFACTS


@pytest.fixture(scope="module")
def dev():
    return vulkan_device(tvm)


@pytest.fixture(scope="module")
def matmul(dev):
    """The matmul kernel bound to its inputs, its module, inputs, and a check of its output."""
    c = vk_case("matmul")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a_0"], dev), tvm.runtime.tensor(data["b_0"], dev)
    out = tvm.runtime.empty((64, 48), "float32", dev)
    f = mod["matmul"]
    f(a, b, out)  # pipeline built outside every timing
    dev.sync()

    def check():
        np.testing.assert_allclose(out.numpy(), data["c_0"], rtol=1e-4, atol=1e-4)

    return (lambda: f(a, b, out)), mod, (a, b, out), check


def _timed(dev, work) -> tuple[int, int]:
    """(the timer's elapsed_ns, the host's ns from before start to after elapsed_ns) of work()."""
    timer = tvm.get_global_func("runtime.timer.vulkan")(dev)
    t0 = time.perf_counter_ns()
    timer("start")
    work()
    timer("stop")
    elapsed = timer("elapsed_ns")
    return elapsed, time.perf_counter_ns() - t0


def test_kernel_device_time_is_positive_and_within_the_wall_time(dev, matmul):
    run, _, _, check = matmul
    for launches in (1, 20):
        elapsed, wall = _timed(dev, lambda n=launches: [run() for _ in range(n)])
        assert 0 < elapsed <= wall, (launches, elapsed, wall)
    check()


def test_host_gaps_between_launches_are_not_device_time(dev, matmul):
    run, _, _, check = matmul

    def two_launches_apart():
        run()
        time.sleep(0.05)
        run()

    elapsed, wall = _timed(dev, two_launches_apart)
    # Host-synchronised timing would count the 50 ms sleep; the device ran two small kernels.
    assert wall >= 50_000_000
    assert 0 < elapsed < 25_000_000, elapsed
    check()


def test_timer_is_reusable_and_elapsed_is_stable(dev, matmul):
    run, _, _, _ = matmul
    timer = tvm.get_global_func("runtime.timer.vulkan")(dev)
    assert timer("elapsed_ns") == 0  # nothing timed yet
    for _ in range(3):
        timer("start")
        run()
        timer("stop")
        first = timer("elapsed_ns")
        assert first > 0 and timer("elapsed_ns") == first


def test_bad_use_says_what_is_wrong(dev):
    timer = tvm.get_global_func("runtime.timer.vulkan")(dev)
    with pytest.raises(ValueError, match="unknown action 'go'.*start, stop, elapsed_ns"):
        timer("go")
    with pytest.raises(Exception, match="Vulkan"):
        tvm.get_global_func("runtime.timer.vulkan")(tvm.cpu(0))


def test_time_evaluator_reports_device_time(dev, matmul):
    _, mod, args, check = matmul
    evaluator = mod.time_evaluator("matmul", dev, number=10, repeat=3)
    t0 = time.perf_counter()
    res = evaluator(*args)
    wall = time.perf_counter() - t0  # the warm-up call, then 3 repeats of 10 calls
    assert len(res.results) == 3
    assert all(r > 0 for r in res.results) and sum(res.results) * 10 <= wall, (res.results, wall)
    check()
