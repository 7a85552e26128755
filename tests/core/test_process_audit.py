"""The audit behind conftest's ``no_process_left_behind``: it finds what a run leaves alive (a
child of pytest, or an orphan carrying the run's mark, the way apache-tvm's popen workers were
left behind by RPC tests) and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import process_audit
import pytest

SLEEP = "import time; time.sleep(120)"
# Starts a sleeper in a session of its own, prints its pid and exits: the sleeper is orphaned
# (and holds none of our pipes, so reading the starter's output does not wait for it).
ORPHAN = (
    "import subprocess, sys; "
    f"p = subprocess.Popen([sys.executable, '-c', {SLEEP!r}], start_new_session=True, "
    "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"
)


def _orphan(env: dict[str, str]) -> int:
    out = subprocess.run([sys.executable, "-c", ORPHAN], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.fixture
def started() -> Iterator[list[int]]:
    """Pids the test starts, killed when it ends (whatever happened)."""
    pids: list[int] = []
    yield pids
    process_audit.kill([process_audit.Leftover(pid, "") for pid in pids])


def _alive(token: str, pids: set[int]) -> set[int]:
    """Which of ``pids`` the audit still finds, once SIGKILL had up to 10 s to take effect."""
    deadline = time.monotonic() + 10
    while True:
        alive = pids & {leftover.pid for leftover in process_audit.leftovers(os.getpid(), token)}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def test_audit_finds_children_and_marked_orphans_only(started):
    token = os.environ[process_audit.MARK]  # set for this run by conftest
    child = subprocess.Popen([sys.executable, "-c", SLEEP], env={"PATH": os.environ.get("PATH", "")})
    started.append(child.pid)
    marked = _orphan(dict(os.environ))
    started.append(marked)
    foreign = _orphan({**os.environ, process_audit.MARK: "another-run"})
    started.append(foreign)

    found = {leftover.pid: leftover.command for leftover in process_audit.leftovers(os.getpid(), token)}
    assert child.pid in found, "a child of pytest is found by descent, mark or not"
    assert marked in found and "time.sleep(120)" in found[marked], "an orphan is found by the mark"
    assert foreign not in found, "another run's processes are not ours"

    process_audit.kill([process_audit.Leftover(pid, "") for pid in (child.pid, marked)])
    child.wait(10)
    assert _alive(token, {child.pid, marked}) == set()
