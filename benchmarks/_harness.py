"""Measurement plumbing shared by the benchmark scripts (standard library only, like _stats).

* the command line every benchmark takes (`bench_parser`: its venvs, --out, --markdown, --quick);
* child processes: the environment they run in, the one child program (_child.py) and how its
  JSON line comes back, the venvs described (`probe_venvs`) and the machine (`machine_info`);
* alternation, one schedule for both kinds: variants in fresh children take turns round by round
  (`alternate`), in-process implementations take turns block by block (`interleaved`);
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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from _stats import median, ratio

now = time.perf_counter_ns
HERE = Path(__file__).resolve().parent
CHILD = HERE / "_child.py"
KB_TO_MB = 1024 / 1e6  # /proc reports "kB" meaning KiB; we report MB = 10**6 bytes


def log(msg: str) -> None:
    """Progress goes to stderr so that stdout stays the result."""
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- command line


def bench_parser(doc: str, name: str, venvs: dict[str, str] | None = None) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--<venv>-python`` for each venv it compares (name ->
    what that venv holds; none for a benchmark that runs in the venv under test), where results
    go (``--out``, ``--json`` its old spelling; ``--markdown``) and ``--quick`` (a smoke run)."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    for venv, needs in (venvs or {}).items():
        p.add_argument(f"--{venv}-python", required=True, help=f"python of a venv with {needs}")
    p.add_argument("--out", "--json", type=Path, default=Path(f"results/{name}.json"))
    p.add_argument("--markdown", type=Path, help="also write a markdown table here")
    p.add_argument("--quick", action="store_true", help="a few rounds and blocks only (a smoke run)")
    return p


def ours_vs_apache_parser(
    doc: str, name: str, ours_needs: str = "tvm-runtime", apache_needs: str = "apache-tvm==0.27.0.post1"
) -> argparse.ArgumentParser:
    """`bench_parser` with the two venvs of an ours-vs-apache-tvm benchmark."""
    return bench_parser(doc, name, {"ours": ours_needs, "apache": apache_needs})


def add_counts(p: argparse.ArgumentParser, unit: str = "calls", **defaults: int) -> None:
    """The counts of an alternating benchmark with their defaults (``rounds=8, blocks=15, ...``):
    children per variant, timed blocks per child, ``unit`` per block, untimed ``unit`` first."""
    helps = {
        "rounds": "children per variant and workload",
        "blocks": "timed blocks per child",
        "iters": f"{unit} per block",
        "reps": f"timed {unit} per child",
        "warmup": f"untimed {unit} per child",
    }
    for name, default in defaults.items():
        p.add_argument(f"--{name}", type=int, default=default, help=f"{helps[name]} (default {default})")
    p.add_argument("--fail-on-target", action="store_true", help="exit 1 if a target is missed")


def parse_counts(p: argparse.ArgumentParser, argv: Sequence[str] | None, **quick: int) -> argparse.Namespace:
    """Parse; with --quick lower the counts to ``quick``; every count >= 1, warm-up >= 0."""
    args = p.parse_args(argv)
    quick_counts(args, **quick)
    counts = [getattr(args, k) for k in ("rounds", "blocks", "iters", "reps") if hasattr(args, k)]
    if min(counts) < 1 or getattr(args, "warmup", 0) < 0:
        p.error("counts must be positive")
    return args


def quick_counts(args: argparse.Namespace, **small: int) -> None:
    """With --quick, lower the named counts (``rounds=1, blocks=2``) to at most those values."""
    if getattr(args, "quick", False):
        for key, value in small.items():
            setattr(args, key, min(getattr(args, key), value))


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


def child_argv(python: str, spec: dict[str, Any]) -> list[str]:
    """The command line of _child.py running ``spec`` in the venv of ``python``."""
    return [python, str(CHILD), json.dumps(spec)]


def run_task(python: str, spec: dict[str, Any], cwd: str, env: dict[str, str]) -> dict[str, Any]:
    """Run _child.py with ``spec`` in the venv of ``python``; return the JSON line it printed."""
    _, out = run_child(child_argv(python, spec), cwd, env)
    return json.loads(last_line(out))


def probe_venv(python: str, cwd: str, env: dict[str, str]) -> dict[str, Any]:
    """Python version, tvm/numpy package versions and module origins of a venv."""
    return run_task(python, {"task": "probe"}, cwd, env)


def probe_venvs(pythons: dict[str, str], cwd: str, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """`probe_venv` of every venv; ours (any key starting with "ours") must not hold apache-tvm."""
    venvs = {key: probe_venv(py, cwd, env) for key, py in pythons.items()}
    for key, info in venvs.items():
        if key.startswith("ours") and "apache-tvm" in {k.lower() for k in info["packages"]}:
            raise SystemExit(f"the {key} venv has apache-tvm installed; it must not")
    return venvs


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, Any]:
    """CPU model, CPU count, memory and platform of this machine."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    mem_total_mb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_total_mb = round(int(line.split()[1]) * KB_TO_MB, 1)
    except OSError:
        pass
    return {
        "cpu_model": _cpu_model(),
        "nproc": affinity,
        "cpu_count": os.cpu_count(),
        "mem_total_mb": mem_total_mb,
        "platform": platform.platform(),
        "orchestrator_python": platform.python_version(),
    }


# ---------------------------------------------------------------------------------- alternation


def round_orders(names: Sequence[Any], rounds: int, rotate: bool = False) -> list[list[Any]]:
    """The order of every round: reversed every other round (A B C, C B A, ...), or with
    ``rotate`` shifted by one each round (A B C, B C A, ...).  For two variants both are A B, B A."""
    names = list(names)
    if rotate:
        return [names[r % len(names) :] + names[: r % len(names)] for r in range(rounds)]
    return [names if r % 2 == 0 else names[::-1] for r in range(rounds)]


def alternate(
    variants: dict[str, list[str]], rounds: int, cwd: str, env: dict[str, str]
) -> dict[str, list[Any]]:
    """Fresh children of every variant (key -> its command line, `child_argv` for _child.py)
    taking turns for ``rounds`` rounds, so that machine drift hits all alike; the JSON line every
    child printed, by variant."""
    results: dict[str, list[Any]] = {key: [] for key in variants}
    for r, order in enumerate(round_orders(list(variants), rounds)):
        for key in order:
            log(f"  round {r + 1}/{rounds}: {key}")
            _, out = run_child(variants[key], cwd, env)
            results[key].append(json.loads(last_line(out)))
    return results


def pool(children: Sequence[dict[str, Any]], key: str, scale: float = 1.0) -> tuple[list[float], list[float]]:
    """Every child's ``key`` series scaled and pooled, and each child's median: the samples and
    the per-round values that paired ratios compare."""
    samples: list[float] = []
    medians: list[float] = []
    for child in children:
        values = [v * scale for v in child[key]]
        samples.extend(values)
        medians.append(median(values))
    return samples, medians


def per_call(children: Sequence[dict[str, Any]], unit: str) -> dict[str, list[float]]:
    """The children's ``per_call_ns`` pooled in ``unit`` (ns, us or ms): ``per_call_<unit>`` and
    each child's median, ``child_medians_<unit>``."""
    samples, medians = pool(children, "per_call_ns", {"ns": 1.0, "us": 1e-3, "ms": 1e-6}[unit])
    return {f"per_call_{unit}": samples, f"child_medians_{unit}": medians}


def alternate_spec(
    pythons: dict[str, str], spec: dict[str, Any], rounds: int, cwd: str, env: dict[str, str]
) -> dict[str, list[Any]]:
    """`alternate` of _child.py running the same ``spec`` in every venv (key -> its python)."""
    return alternate({key: child_argv(py, spec) for key, py in pythons.items()}, rounds, cwd, env)


def paired_median(xs: Sequence[float], refs: Sequence[float]) -> float:
    """Median of per-round ratios ``xs[i] / refs[i]`` (the same alternation round)."""
    if len(xs) != len(refs):
        raise ValueError("paired series differ in length")
    return median(ratio(x, r) for x, r in zip(xs, refs))


# ---------------------------------------------------------------------------- in-process timing


def report(
    args: argparse.Namespace, benchmark: str, numpy_version: str, body: dict[str, Any], text: str
) -> int:
    """Results of a benchmark run in the venv under test: what it is, the host, ``body``."""
    publish({"benchmark": benchmark, "env": host_info(numpy_version), **body}, args.out, args.markdown, text)
    return 0


def rerun_self(script: str, flags: Sequence[str], env: dict[str, str]) -> Any:
    """Run ``script`` again in a fresh interpreter with ``--child`` and ``flags`` (a device
    configuration that a driver reads once per process) and return the JSON it prints; its
    stderr and exit status are passed on when it fails."""
    proc = subprocess.run(
        [sys.executable, script, "--child", *flags], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(proc.returncode)
    return json.loads(proc.stdout)


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
    samples: dict[str, list[float]] = {n: [] for n in impls}
    gc.disable()
    try:
        for order in round_orders(list(impls), rounds, rotate=True):
            for name in order:
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


def ratio_targets(
    measured: dict[str, dict[str, Any]],
    name: str,
    key: str,
    unit: str,
    limit: float,
    ratio_key: str = "per_call_median",
    ratios: str = "ratio_ours_vs_apache",
) -> list[dict[str, Any]]:
    """One target per measured item: its ratio ``m[ratios][ratio_key]`` (ours / the peer's
    median) must be <= ``limit``."""
    targets = []
    for label, m in measured.items():
        value = m[ratios][ratio_key]
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


def cell(s: dict[str, Any], nd: int = 3) -> str:
    """A summary as the tables show it: median (p10-p90)."""
    return f"{s['median']:.{nd}f} ({s['p10']:.{nd}f}-{s['p90']:.{nd}f})"


def ratio_verdict(r: float, limit: float) -> str:
    """The ratio and target cells of a row: ``0.950x | <= 1.0x PASS``."""
    return f"{r:.3f}x | <= {limit}x {'PASS' if r <= limit else 'FAIL'}"


def machine_note(results: dict[str, Any]) -> str:
    """Where the numbers come from, for a table's note: ``<cpu>, <n> CPUs``."""
    mach = results["machine"]
    return f"{mach.get('cpu_model', '?')}, {mach.get('nproc', '?')} CPUs"


def blocks_note(results: dict[str, Any]) -> str:
    """The start of a table's note: how many children, blocks and calls each median is, and where."""
    cfg = results["config"]
    return (
        f"median (p10-p90) of {cfg['rounds']} children x {cfg['blocks']} blocks of {cfg['iters']} calls per "
        f"variant, interleaved; {machine_note(results)}"
    )


def markdown_table(header: str | Sequence[str], rows: Iterable[str | Sequence[str]], note: str) -> str:
    """A markdown table (``header`` its cells or "a | b | c"; a row its cells or a string of ready
    cells) and a note under it."""
    if isinstance(header, str):
        header = header.split(" | ")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [row if isinstance(row, str) else "| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([*lines, "", note]) + "\n"


ALTERNATION = "ours/apache children interleaved, order reversed every other round"


def started() -> tuple[float, tuple[float, ...]]:
    """When a run began and the machine's load then (what `finish` stamps the results with)."""
    return time.perf_counter(), tuple(os.getloadavg())


def counts_config(args: argparse.Namespace, **more: Any) -> dict[str, Any]:
    """The ``config`` of a results file: the counts the run used, how the variants took turns
    (``schedule``, unless ``more`` says otherwise) and ``more``."""
    counts = {
        k: getattr(args, k) for k in ("rounds", "blocks", "iters", "reps", "warmup") if hasattr(args, k)
    }
    return {**counts, "schedule": ALTERNATION, **more}


def log_pair(label: str, ours: dict[str, Any], peer: dict[str, Any], unit: str, since: float) -> None:
    """One progress line: the medians of two summaries, their ratio and the seconds it took."""
    took = time.perf_counter() - since
    medians = f"ours {ours['median']:9.3f} {unit}  peer {peer['median']:9.3f} {unit}"
    log(f"  {label:22s} {medians}  ratio {ratio(ours['median'], peer['median']):.3f}  ({took:.0f}s)")


def finish(
    name: str,
    args: argparse.Namespace,
    start: tuple[float, Sequence[float]],
    body: dict[str, Any],
    targets: list[dict[str, Any]],
    render: Callable[[dict[str, Any]], str],
) -> int:
    """Results of an ours-vs-peer run (header, ``body``, targets and their verdict) written and
    rendered; the exit status: 1 only with --fail-on-target and a missed target."""
    results: dict[str, Any] = {
        **run_header(name, start[0], start[1], machine_info()),
        **body,
        "targets": targets,
        "all_targets_pass": all(t["pass"] for t in targets),
    }
    publish(results, args.out, args.markdown, render(results))
    return 1 if getattr(args, "fail_on_target", False) and not results["all_targets_pass"] else 0


def publish(results: dict[str, Any], out: Path, markdown: Path | None, rendered: str) -> None:
    """Write the JSON results and (optionally) the rendered markdown table, and print the table."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    log(f"wrote {out}")
    if markdown:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(rendered)
    print(rendered)
