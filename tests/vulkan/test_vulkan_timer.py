"""runtime.timer.vulkan (src/backends/vulkan/vulkan_timer.*) beyond the contract every device
timer meets (tests/conformance/test_device_timers.py): its queries live in the batched command
stream, so a round restarted before it was read and a timer still recording when the interpreter
exits (after the backend's exit hook) must both be harmless."""

from __future__ import annotations

import pytest
from vk_support import vk_case, vulkan_device

import tvm
from conftest import ARTIFACTS, run_python


@pytest.fixture(scope="module")
def dev():
    return vulkan_device(tvm)


def test_timers_alive_at_exit_and_restarted_without_reading_are_harmless(dev):
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
