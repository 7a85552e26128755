"""Measurement plumbing shared by the benchmark scripts (standard library only, like _stats).

* child processes: the environment they run in and how their output comes back
  (core_bench.py, vm_bench.py run each variant in a fresh interpreter of its venv);
* in-process timing: implementations interleaved in blocks (opencl_bench.py, vulkan_bench.py);
* reporting: the markdown rows every backend table uses and the JSON results file.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

now = time.perf_counter_ns


def log(msg: str) -> None:
    """Progress goes to stderr so that stdout stays the result."""
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- command line


def ours_vs_apache_parser(
    doc: str, name: str, ours_needs: str = "tvm-runtime", apache_needs: str = "apache-tvm==0.27.0.post1"
) -> argparse.ArgumentParser:
    """The options every ours-vs-apache-tvm benchmark takes: its two venvs and where results go."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--ours-python", required=True, help=f"python of a venv with {ours_needs}")
    p.add_argument("--apache-python", required=True, help=f"python of a venv with {apache_needs}")
    p.add_argument("--out", type=Path, default=Path(f"results/{name}.json"))
    p.add_argument("--markdown", type=Path, help="also write a markdown table here")
    return p


# ---------------------------------------------------------------------------- child processes


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for children: no PYTHON* overrides, no user site-packages, plus `extra`.

    Dropping ``PYTHONDONTWRITEBYTECODE`` matters: with it set and no ``.pyc``
    cached, every run would recompile the imported sources.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONNOUSERSITE"] = "1"
    env.update(extra or {})
    return env


def run_child(argv: Sequence[str], cwd: str, env: dict[str, str]) -> tuple[float, str]:
    """Run a child; return (wall seconds, stdout). Raise with its stderr on failure."""
    t0 = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout)[-4000:]
        raise RuntimeError(f"child failed (rc={proc.returncode}): {' '.join(argv[:2])} ...\n{tail}")
    return wall, proc.stdout


def last_line(text: str) -> str:
    """The child's result: the last non-empty line it printed (libraries may print before it)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise RuntimeError("child printed nothing")
    return lines[-1]


# ---------------------------------------------------------------------------- in-process timing


def interleaved(
    impls: dict[str, Callable[[], Any]], rounds: int, block: int, warmup: int, per_call: int = 1
) -> dict[str, list[float]]:
    """Microseconds per call (divided by ``per_call``) of every implementation.

    Implementations take turns in blocks of `block` calls, the order rotating every round, so
    that machine noise hits all of them alike; the collector is off so it does not land inside
    one side's samples.
    """
    for fn in impls.values():
        for _ in range(warmup):
            fn()
    names = list(impls)
    samples: dict[str, list[float]] = {n: [] for n in names}
    gc.disable()
    try:
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                fn, out = impls[name], samples[name]
                for _ in range(block):
                    t0 = now()
                    fn()
                    out.append((now() - t0) / 1e3 / per_call)
    finally:
        gc.enable()
    return samples


# ---------------------------------------------------------------------------------- reporting

SUMMARY_TABLE_HEADER = ["| measurement | median µs | p10 µs | p90 µs | n |", "|---|---|---|---|---|"]


def summary_row(label: str, s: dict[str, Any]) -> str:
    """One markdown row of a Summary.to_dict() in microseconds."""
    return f"| {label} | {s['median']:.2f} | {s['p10']:.2f} | {s['p90']:.2f} | {s['n']} |"


def host_info(numpy_version: str) -> dict[str, Any]:
    """Where the numbers come from (numpy's version is passed in: this module imports none)."""
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": numpy_version,
    }


def write_json(path: str | Path, results: dict[str, Any]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1) + "\n")


def ratio_targets(
    measured: dict[str, dict[str, Any]],
    name: str,
    key: str,
    unit: str,
    limit: float,
    ratio_key: str = "per_call_median",
) -> list[dict[str, Any]]:
    """One target per measured item: its median ours/apache-tvm ratio must be <= ``limit``."""
    targets = []
    for label, m in measured.items():
        value = m["ratio_ours_vs_apache"][ratio_key]
        targets.append(
            {
                "name": name,
                key: label,
                "measured": value,
                "limit": limit,
                "comparison": "<=",
                "unit": unit,
                "pass": value <= limit,
            }
        )
    return targets


def run_header(benchmark: str, t_begin: float, load_before: Sequence[float], machine: dict[str, Any]) -> dict:
    """The fields every interleaved ours-vs-apache results file starts with."""
    return {
        "schema_version": 1,
        "benchmark": benchmark,
        "created_unix": int(time.time()),
        "duration_s": round(time.perf_counter() - t_begin, 1),
        "machine": {
            **machine,
            "loadavg_1_5_15_before": [round(x, 2) for x in load_before],
            "loadavg_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        },
    }


def publish(results: dict[str, Any], out: Path, markdown: Path | None, rendered: str) -> None:
    """Write the JSON results and (optionally) the rendered markdown table, and print the table."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    log(f"wrote {out}")
    if markdown:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(rendered)
    print(rendered)
