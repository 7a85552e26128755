"""tvm.runtime.threading.set_current_thread_affinity pins the calling thread (checked in a
fresh interpreter so the test process keeps its own affinity)."""

from __future__ import annotations

import os

import pytest

from conftest import run_python


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs Linux sched_getaffinity")
def test_pins_the_calling_thread_only():
    allowed = sorted(os.sched_getaffinity(0))
    target = allowed[-1]
    out = run_python(
        f"""
        import os, threading
        import tvm
        pin = tvm.get_global_func("tvm.runtime.threading.set_current_thread_affinity")
        seen = {{}}
        def worker():
            pin(tvm.runtime.ShapeTuple([{target}]) if hasattr(tvm.runtime, "ShapeTuple") else ({target},))
            seen["worker"] = sorted(os.sched_getaffinity(0))
        t = threading.Thread(target=worker); t.start(); t.join()
        print("worker", seen["worker"])
        print("main", sorted(os.sched_getaffinity(0)))
        """
    ).stdout
    assert f"worker [{target}]" in out
    assert f"main {allowed}" in out


def test_bad_cpu_ids_raise():
    out = run_python(
        """
        import tvm
        pin = tvm.get_global_func("tvm.runtime.threading.set_current_thread_affinity")
        for ids in ((-1,), (1 << 20,), ()):
            try:
                pin(ids)
            except ValueError as err:
                print("ValueError:", err)
        """
    ).stdout
    assert "CPU id -1 is outside" in out
    assert f"CPU id {1 << 20} is outside" in out
    assert "give at least one CPU id" in out
