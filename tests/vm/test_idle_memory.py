"""tvm.runtime.release_idle_memory: the working memory a process keeps between calls goes back.

Fixture: tests/vm/artifacts/working_memory_cpu.so (make_working_memory_fixture.py), two 3x3
max-pools over a 4 MB input: one 4 MB VM storage between them and a 4.2 MB padded-input workspace
per pool, all parked for the next call once the first call returns.  Each check runs in a fresh
interpreter (tests/children/idle_memory.py), since it measures the process's memory.
"""

from __future__ import annotations

from conftest import child_result, run_module

STORAGE_BYTES = 16 * 256 * 256 * 4  # the first pool's result, the VM's only storage
WORKSPACE_BYTES = 16 * 258 * 258 * 4  # a pool's padded input


def test_release_gives_the_working_memory_back_and_the_model_still_runs():
    got = child_result(run_module("children.idle_memory", "release"))
    assert got["first_ok"] and got["second_ok"], got
    # The storage and at least one workspace were parked; nothing is left the second time.
    assert got["released"] >= STORAGE_BYTES + WORKSPACE_BYTES, got
    assert got["released_again"] == 0, got
    # And the process's anonymous memory shrank by about that much (it is not merely freed
    # into the C library's heap).
    assert got["anonymous_drop_kb"] * 1024 >= 0.9 * (STORAGE_BYTES + WORKSPACE_BYTES), got


def test_release_while_another_thread_runs_the_model():
    got = child_result(run_module("children.idle_memory", "concurrent"))
    assert got["errors"] == [], got
    assert got["calls"] >= 6 and got["releases"] >= 1, got
