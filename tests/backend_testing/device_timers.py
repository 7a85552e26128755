"""The contract of a backend's `runtime.timer.<name>` (backend/gpu/device_timer.h), checked the
same way for every backend that measures device time (OpenCL event profiling, Vulkan timestamp
queries): device time is positive for real work, never more than the host time around it, leaves
out a host sleep between two launches, reads the same twice, and the time evaluator reports it.
`run` launches one kernel without waiting for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


# A fresh interpreter times two launches of a matmul kernel 50 ms apart, with the timer of its
# device, and leaves one more timer alive at exit.  argv: device, library, npz, a/b/c keys.
_TWO_LAUNCHES_APART = """
import json, sys, time
import numpy as np
import tvm

device, library, npz, a_key, b_key, c_key = sys.argv[1:]
dev = getattr(tvm, device)(0)
f = tvm.runtime.load_module(library)["matmul"]
data = np.load(npz)
a, b = tvm.runtime.tensor(data[a_key], dev), tvm.runtime.tensor(data[b_key], dev)
out = tvm.runtime.empty((64, 48), "float32", dev)
f(a, b, out)
dev.sync()
timer = tvm.get_global_func("runtime.timer." + device)(dev)
t0 = time.perf_counter_ns()
timer("start")
f(a, b, out)
time.sleep(0.05)
f(a, b, out)
timer("stop")
elapsed = timer("elapsed_ns")
wall = time.perf_counter_ns() - t0
np.testing.assert_allclose(out.numpy(), data[c_key], rtol=1e-4, atol=1e-4)
LEFT = tvm.get_global_func("runtime.timer." + device)(dev)  # alive at interpreter exit
print("RESULT:" + json.dumps({"elapsed": elapsed, "wall": wall}))
"""


def two_launches_apart_in_child(
    device: str, library: str, npz: str, keys: tuple[str, str, str], env: dict[str, str]
) -> dict[str, int]:
    """{"elapsed", "wall"} (ns) of two matmul launches 50 ms apart, timed by the device's timer in
    a fresh interpreter with ``env`` added (the switches that take a backend's timestamps away)."""
    proc = subprocess.run(
        [sys.executable, "-c", _TWO_LAUNCHES_APART, device, library, npz, *keys],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    return json.loads(line[len("RESULT:") :])
