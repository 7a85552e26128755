"""N child processes that hold a model at the same time, and what they cost the machine together.

A child's code is ``PRELUDE`` + the caller's body: ``spec`` (its JSON argument), ``memory()`` (this
process's Rss/Pss/Anonymous bytes from /proc/self/smaps_rollup), ``grown(since)`` and
``barrier(name)``, which returns once all ``spec["n"]`` children reached it (marker files in
``spec["sync"]``), so the N processes load together and are measured while all N hold the
weights: PSS then charges each shared page 1/N to each of them, and the N children's PSS summed is
what the machine pays.  The body prints one JSON line.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from typing import Any

from _harness import last_line

PRELUDE = """\
import gc, json, os, sys, time
spec = json.loads(sys.argv[1])

def memory():
    out = {}
    for line in open("/proc/self/smaps_rollup"):
        parts = line.split()
        if len(parts) >= 3 and parts[0] in ("Rss:", "Pss:", "Anonymous:"):
            out[parts[0][:-1].lower()] = int(parts[1]) * 1024
    return out

def grown(since):
    now_ = memory()
    return {k: now_[k] - since[k] for k in since}

def barrier(name, timeout_s=600):
    open(os.path.join(spec["sync"], name + "." + str(spec["index"])), "w").close()
    deadline = time.monotonic() + timeout_s
    while sum(f.startswith(name + ".") for f in os.listdir(spec["sync"])) < spec["n"]:
        if time.monotonic() > deadline:  # a sibling died: fail instead of waiting forever
            raise SystemExit("barrier " + name + ": not every sibling arrived")
        time.sleep(0.002)
"""


def run_together(
    python: str, body: str, spec: dict[str, Any], n: int, cwd: str, env: dict[str, str]
) -> list[dict[str, Any]]:
    """Start ``n`` children of ``python`` running ``PRELUDE + body`` at once; their reports."""
    sync = tempfile.mkdtemp(prefix="together_", dir=cwd)
    procs = [
        subprocess.Popen(
            [python, "-c", PRELUDE + body, json.dumps({**spec, "sync": sync, "n": n, "index": i})],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    reports = []
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"child of {python} failed (rc={p.returncode}):\n{err[-4000:]}")
        reports.append(json.loads(last_line(out)))
    return reports


def totals(runs: list[list[dict[str, Any]]], phase: str) -> dict[str, float]:
    """Per memory counter, the median over ``runs`` of the N children's sum at ``phase``."""
    from _stats import median

    keys = runs[0][0][phase]
    return {k: median(sum(child[phase][k] for child in run) for run in runs) for k in keys}
