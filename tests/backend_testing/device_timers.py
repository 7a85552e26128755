"""The contract of a backend's `runtime.timer.<name>` (backend/gpu/device_timer.h), checked the
same way for every backend that measures device time (OpenCL event profiling, Vulkan timestamp
queries): device time is positive for real work, never more than the host time around it, leaves
out a host sleep between two launches, reads the same twice, and the time evaluator reports it.
`run` launches one kernel without waiting for it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


def timer_of(tvm: Any, name: str, dev: Any) -> Any:
    return tvm.get_global_func(f"runtime.timer.{name}")(dev)


def timed(tvm: Any, name: str, dev: Any, work: Callable[[], Any]) -> tuple[int, int]:
    """(the timer's elapsed_ns, the host's ns from before start to after elapsed_ns) of work()."""
    timer = timer_of(tvm, name, dev)
    t0 = time.perf_counter_ns()
    timer("start")
    work()
    timer("stop")
    elapsed = timer("elapsed_ns")
    return elapsed, time.perf_counter_ns() - t0


def check_within_wall_time(tvm: Any, name: str, dev: Any, run: Callable[[], None]) -> None:
    for launches in (1, 20):
        elapsed, wall = timed(tvm, name, dev, lambda n=launches: [run() for _ in range(n)])
        assert 0 < elapsed <= wall, (launches, elapsed, wall)


def check_host_gaps_not_counted(tvm: Any, name: str, dev: Any, run: Callable[[], None]) -> None:
    def two_launches_apart() -> None:
        run()
        time.sleep(0.05)
        run()

    elapsed, wall = timed(tvm, name, dev, two_launches_apart)
    # Host-synchronised timing would count the 50 ms sleep; the device ran two small kernels.
    assert wall >= 50_000_000
    assert 0 < elapsed < 25_000_000, elapsed


def check_reusable_and_stable(tvm: Any, name: str, dev: Any, run: Callable[[], None]) -> None:
    timer = timer_of(tvm, name, dev)
    for _ in range(3):
        timer("start")
        run()
        timer("stop")
        first = timer("elapsed_ns")
        assert first > 0 and timer("elapsed_ns") == first


def check_bad_use(tvm: Any, name: str, dev: Any, api: str) -> None:
    with pytest.raises(ValueError, match="unknown action 'go'.*start, stop, elapsed_ns"):
        timer_of(tvm, name, dev)("go")
    with pytest.raises(Exception, match=api):
        timer_of(tvm, name, tvm.cpu(0))


def check_time_evaluator(mod: Any, function: str, dev: Any, args: list[Any]) -> None:
    evaluator = mod.time_evaluator(function, dev, number=10, repeat=3)
    t0 = time.perf_counter()
    res = evaluator(*args)
    wall = time.perf_counter() - t0  # the warm-up call, then 3 repeats of 10 calls
    assert len(res.results) == 3
    # Device time never exceeds the wall time that covers it; one repeat alone may exceed the
    # average wall per call on a loaded machine, so the bound is on all 30 timed calls together.
    assert all(r > 0 for r in res.results) and sum(res.results) * 10 <= wall, (res.results, wall)
