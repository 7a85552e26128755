"""Processes a test run leaves behind (conftest's ``no_process_left_behind`` fails the run on any).

A process belongs to the run when it descends from pytest or carries the run's mark in its
environment (``TVM_TEST_RUN``, inherited by every child; an orphan reparented to init keeps it,
such as a worker process whose parent was killed).  Matching by the run's own mark rather than by
command line keeps a concurrent run in the same checkout from being taken for a leak.
Linux only (``/proc``).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

MARK = "TVM_TEST_RUN"
PROC = Path("/proc")


@dataclass(frozen=True)
class Leftover:
    pid: int
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid}: {self.command}"


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of a live process, None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0]


def _has_mark(pid: int, token: str) -> bool:
    try:
        environ = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return f"{MARK}={token}".encode() in environ.split(b"\0")


def _command(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"


def leftovers(root: int, token: str) -> list[Leftover]:
    """Live processes (zombies excluded) that descend from ``root`` or carry the run's mark."""
    parents: dict[int, int] = {}
    candidates = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == root:
            continue
        pid = int(entry.name)
        stat = _stat(pid)
        if stat is None or stat[1] == "Z":
            continue
        parents[pid] = stat[0]
        candidates.append(pid)

    def descends(pid: int) -> bool:
        seen = set()
        while pid in parents and pid not in seen:
            seen.add(pid)
            pid = parents[pid]
            if pid == root:
                return True
        return False

    found = [pid for pid in candidates if descends(pid) or _has_mark(pid, token)]
    return [Leftover(pid, _command(pid)) for pid in sorted(found)]


def wait_for_leftovers(root: int, token: str, grace: float) -> list[Leftover]:
    """Leftovers still alive after ``grace`` seconds (processes that are exiting get the time)."""
    deadline = time.monotonic() + grace
    while True:
        found = leftovers(root, token)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.2)


def kill(found: list[Leftover]) -> None:
    """SIGKILL each leftover (after the run reported them), so the machine is clean again."""
    for leftover in found:
        try:
            os.kill(leftover.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
