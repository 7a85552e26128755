"""runtime.timer.vulkan (src/backends/vulkan/vulkan_timer.*) on lavapipe with apache-tvm 0.27's
SPIR-V kernels: the device time between the timer's start and stop, from two timestamp queries
written into the command stream, which the time evaluator and the VM profiler use instead of
waiting for the queue around every call.

What distinguishes device time from host time: it is positive for real work, never more than the
host time around it, and a host sleep between two launches recorded in one batch is not counted.
"""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing import device_timers as timers
from vk_support import vk_case, vulkan_device

import tvm
from conftest import ARTIFACTS, run_python


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


def test_kernel_device_time_is_positive_and_within_the_wall_time(dev, matmul):
    run, _, _, check = matmul
    timers.check_within_wall_time(tvm, "vulkan", dev, run)
    check()


def test_host_gaps_between_launches_are_not_device_time(dev, matmul):
    # Launches are recorded, not submitted, until the host needs results: the two kernels run
    # back to back on the device whatever the host did between them.
    run, _, _, check = matmul
    timers.check_host_gaps_not_counted(tvm, "vulkan", dev, run)
    check()


def test_timer_is_reusable_and_elapsed_is_stable(dev, matmul):
    run, _, _, _ = matmul
    fresh = timers.timer_of(tvm, "vulkan", dev)
    fresh("stop")  # a stop without a start writes no timestamp
    assert fresh("elapsed_ns") == 0  # nothing timed yet
    timers.check_reusable_and_stable(tvm, "vulkan", dev, run)


def test_bad_use_says_what_is_wrong(dev):
    timers.check_bad_use(tvm, "vulkan", dev, "Vulkan")


def test_time_evaluator_reports_device_time(dev, matmul):
    _, mod, args, check = matmul
    timers.check_time_evaluator(mod, "matmul", dev, list(args))
    check()


def test_timers_alive_at_exit_and_restarted_without_reading_are_harmless():
    """A timer restarted before its round was read, and one still holding unsubmitted queries
    when the interpreter exits (collected after the backend's exit hook): a clean exit."""
    c = vk_case("matmul")
    proc = run_python(
        f"""
        import numpy as np, tvm
        dev = tvm.vulkan(0)
        f = tvm.runtime.load_module({str(ARTIFACTS / c["file"])!r})["matmul"]
        data = np.load({str(ARTIFACTS / c["calls"][0]["npz"])!r})
        a, b = tvm.runtime.tensor(data["a_0"], dev), tvm.runtime.tensor(data["b_0"], dev)
        out = tvm.runtime.empty((64, 48), "float32", dev)
        timer = tvm.get_global_func("runtime.timer.vulkan")(dev)
        timer("start"); f(a, b, out); timer("stop")
        timer("start"); f(a, b, out); timer("stop")  # the first round never read
        assert timer("elapsed_ns") > 0
        LEFT = tvm.get_global_func("runtime.timer.vulkan")(dev)
        LEFT("start"); f(a, b, out); LEFT("stop")  # recorded, never submitted nor read
        print("OK")
        """
    )
    assert proc.stdout.strip().endswith("OK"), proc.stdout
