"""Quick versions of the concurrency stress scenarios (tests/faults/stress.py; the long run is
``nox -s stress``): each runs in a child interpreter with a deadline, so a deadlock fails the
test with every thread's stack instead of hanging the suite, and every result is checked
against numpy.  About a second of work per scenario.
"""

from __future__ import annotations

import sys

import pytest
import stress
from fault_support import device

THREADS = 8
SECONDS = 1.0


def device_kind(kind: str) -> str:
    device(kind)  # skips (or fails where CI requires the device) when it is missing
    return kind


def check(report: dict, at_least: int) -> None:
    assert report["error_count"] == 0, "\n".join(report["errors"])
    assert report["calls"] >= at_least, report


@pytest.mark.parametrize(
    "kind, mode, env",
    [
        ("opencl", "exist", {}),
        ("opencl", "loader", {"TVM_DEVICE_BACKEND_AUTOLOAD": "0"}),
        ("vulkan", "exist", {}),
        ("vulkan", "import", {}),
    ],
    ids=["opencl", "opencl-loader", "vulkan", "vulkan-import"],
)
def test_first_use_from_many_threads(kind, mode, env):
    """A fresh interpreter whose threads all make the backend's first use at the same moment."""
    r = stress.run_child(sys.executable, "first-use", device_kind(kind), THREADS, 30, mode=mode, env=env)
    check(r, THREADS)


@pytest.mark.parametrize("kind", ["cpu", "opencl", "vulkan"])
def test_concurrent_loads_and_kernel_calls(kind):
    r = stress.run_child(sys.executable, "loads-and-calls", device_kind(kind), THREADS, SECONDS)
    check(r, THREADS)


@pytest.mark.parametrize("kind", ["cpu", "opencl"])
def test_one_vm_shared_by_threads(kind):
    r = stress.run_child(sys.executable, "shared-vm", device_kind(kind), THREADS, SECONDS)
    check(r, THREADS)


def test_parallel_loop_kernel_from_many_threads():
    r = stress.run_child(
        sys.executable, "parallel-cpu", "cpu", THREADS, SECONDS, env={"TVM_NUM_THREADS": "4"}
    )
    check(r, THREADS)
