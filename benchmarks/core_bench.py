"""Core benchmark of the split ``tvm-runtime`` wheel (run by ``nox -s bench``).

Measures, each in fresh child processes of separate virtual environments:

* ``import tvm`` wall time (subprocess, and in-process ``perf_counter`` delta)
  and resident memory right after the import, for our core wheel, our core
  wheel plus backend wheels (optional), the ``import tvm_ffi`` floor and
  apache-tvm 0.27.0.post1. ``python -c pass`` is measured in every venv as the
  interpreter start-up baseline.
* Per-call overhead of a tiny CPU kernel (``tests/artifacts/cpu/tiny_add.so``)
  called from Python, ours vs apache-tvm on the same artifact (plus the bare
  ``tvm_ffi`` call path as the floor, for reference).

Variants are interleaved (A B C D, then D C B A, ...) to cancel the drift of a
noisy shared machine. The results go to a JSON file (machine info, package
versions, every series summarised as median / p10 / p90, and a ``targets``
section) and optionally to a markdown table. This is a benchmark, not a test:
the exit status is 0 whether or not the targets are met, unless
``--fail-on-target`` is given.

Targets (from the issue): in-process ``import tvm`` median <= 1.15x the
``import tvm_ffi`` floor; RSS after import <= floor + 10 MB (10**6 bytes);
tiny-kernel call median <= 1.05x apache-tvm.

The orchestrating process uses the standard library only; the children need
numpy (call benchmark) and the package under test.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _harness import (
    HERE,
    KB_TO_MB,
    alternate,
    bench_parser,
    cell,
    child_argv,
    child_env,
    last_line,
    log,
    machine_info,
    markdown_table,
    paired_median,
    per_call,
    probe_venv,
    publish,
    quick_counts,
    round_orders,
    run_child,
    run_header,
)
from _stats import median, ratio, summarize

# machine_info and probe_venv are imported from here by load_bench.py, rpc_bench.py and
# rpc_proxy_bench.py (they keep their own command line until they move to _harness).
__all__ = ["machine_info", "probe_venv"]

IMPORT_TIME_LIMIT = 1.15  # x the tvm_ffi floor (in-process medians)
RSS_DELTA_LIMIT_MB = 10.0  # MB above the tvm_ffi floor
CALL_RATIO_LIMIT = 1.05  # x apache-tvm (medians)

IMPORT_CHILD = HERE / "_import_child.py"


@dataclass(frozen=True)
class Variant:
    """One venv under test."""

    key: str  # JSON key: floor / ours / ours_backends / apache
    label: str  # column title
    python: str  # interpreter of the venv
    import_stmt: str  # statement whose cost is measured
    call_api: str  # "tvm" or "tvm_ffi": how the call child drives the artifact


# --------------------------------------------------------------- instruction counts


def _callgrind_instructions(argv: Sequence[str], cwd: str, env: dict[str, str]) -> int | None:
    """Instructions executed by a child under valgrind's callgrind (None if valgrind is absent).

    Wall time on a shared 2-core VM moves by +-10% between runs; instruction counts are
    repeatable for the same binaries and inputs, so they show the real import-cost ratio.
    """
    if shutil.which("valgrind") is None:
        return None
    with tempfile.NamedTemporaryFile(prefix="cg.", dir=cwd) as out:
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"valgrind failed: {proc.stderr[-2000:]}")
    match = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    return int(match.group(1)) if match else None


def bench_instructions(variants: Sequence[Variant], cwd: str, env: dict[str, str]) -> dict[str, Any]:
    """Instructions of `import` per variant, minus the interpreter start-up (`python -c pass`)."""
    out: dict[str, Any] = {}
    for v in variants:
        startup = _callgrind_instructions([v.python, "-c", "pass"], cwd, env)
        total = _callgrind_instructions([v.python, "-c", v.import_stmt], cwd, env)
        if startup is None or total is None:
            return {}
        out[v.key] = {"startup": startup, "total": total, "import": total - startup}
    floor = out["floor"]["import"]
    for entry in out.values():
        entry["ratio_vs_floor"] = round(entry["import"] / floor, 4)
    return out


# --------------------------------------------------------------- import / RSS


def bench_import(
    variants: Sequence[Variant], runs: int, warmup: int, cwd: str, env: dict[str, str]
) -> dict[str, dict[str, list[float]]]:
    """Run ``pass`` and the import statement of each variant in fresh processes.

    Returns raw series per variant: ``subprocess_ms``, ``inprocess_ms``, ``rss_mb``,
    ``hwm_mb`` for the import, and ``startup_ms`` / ``startup_rss_mb`` for ``pass``.
    """
    jobs = [(v, mode) for v in variants for mode in ("pass", "import")]
    raw: dict[str, dict[str, list[float]]] = {
        v.key: {
            k: []
            for k in (
                "subprocess_ms",
                "inprocess_ms",
                "rss_mb",
                "hwm_mb",
                "startup_ms",
                "startup_rss_mb",
            )
        }
        for v in variants
    }
    schedule = [(r, job) for r, order in enumerate(round_orders(jobs, warmup + runs)) for job in order]
    t_start = time.perf_counter()
    for i, (rnd, (v, mode)) in enumerate(schedule):
        stmt = "pass" if mode == "pass" else v.import_stmt
        wall, out = run_child([v.python, str(IMPORT_CHILD), stmt], cwd, env)
        rec = ast.literal_eval(last_line(out))
        if rnd < warmup:
            continue
        series = raw[v.key]
        if mode == "pass":
            series["startup_ms"].append(wall * 1e3)
            series["startup_rss_mb"].append(rec["rss_kb"] * KB_TO_MB)
        else:
            series["subprocess_ms"].append(wall * 1e3)
            series["inprocess_ms"].append(rec["import_s"] * 1e3)
            series["rss_mb"].append(rec["rss_kb"] * KB_TO_MB)
            series["hwm_mb"].append(rec["hwm_kb"] * KB_TO_MB)
        if (i + 1) % (len(jobs) * 5) == 0:
            log(f"  import: {i + 1}/{len(schedule)} children, {time.perf_counter() - t_start:.0f}s")
    return raw


def summarize_import(raw: dict[str, dict[str, list[float]]], floor_key: str) -> dict[str, Any]:
    """Summaries, ratios vs the floor and per-round paired ratios."""
    out: dict[str, Any] = {}
    floor = raw[floor_key]
    for key, series in raw.items():
        summ = {name: summarize(vals).to_dict(4) for name, vals in series.items()}
        entry: dict[str, Any] = {"series": summ}
        entry["import_above_startup_ms"] = round(
            median(series["subprocess_ms"]) - median(series["startup_ms"]), 4
        )
        entry["ratio_vs_floor"] = {
            "inprocess_median": round(
                ratio(median(series["inprocess_ms"]), median(floor["inprocess_ms"])), 4
            ),
            "inprocess_paired_median": round(
                paired_median(series["inprocess_ms"], floor["inprocess_ms"]),
                4,
            ),
            "inprocess_p10": round(
                ratio(
                    summarize(series["inprocess_ms"]).p10,
                    summarize(floor["inprocess_ms"]).p10,
                ),
                4,
            ),
            "subprocess_median": round(
                ratio(median(series["subprocess_ms"]), median(floor["subprocess_ms"])),
                4,
            ),
            "above_startup_median": round(
                ratio(
                    median(series["subprocess_ms"]) - median(series["startup_ms"]),
                    median(floor["subprocess_ms"]) - median(floor["startup_ms"]),
                ),
                4,
            ),
        }
        entry["rss_delta_vs_floor_mb"] = round(median(series["rss_mb"]) - median(floor["rss_mb"]), 4)
        entry["hwm_delta_vs_floor_mb"] = round(median(series["hwm_mb"]) - median(floor["hwm_mb"]), 4)
        out[key] = entry
    return out


# --------------------------------------------------------------- call overhead


def _call_spec(artifact: Path, npz: Path, manifest: Path | None) -> dict[str, Any]:
    """Return function name, argument order and tolerances of the artifact.

    Taken from the manifest when it lists the artifact, else tiny_add's layout.
    """
    spec: dict[str, Any] = {
        "task": "kernel_call",
        "artifact": str(artifact.resolve()),
        "npz": str(npz.resolve()),
        "function": artifact.stem,
        "args": [
            {"kind": "input", "key": "a"},
            {"kind": "input", "key": "b"},
            {"kind": "output", "key": "c", "shape": [4], "dtype": "float32"},
        ],
        "rtol": 1e-6,
        "atol": 1e-6,
    }
    if manifest is None or not manifest.is_file():
        log(f"  note: no manifest at {manifest}; assuming inputs a, b and output c")
        return spec
    doc = json.loads(manifest.read_text())
    base = manifest.parent.resolve()
    for case in doc.get("cases", []):
        if (base / case["file"]).resolve() != artifact.resolve():
            continue
        call = next(
            (c for c in case["calls"] if (base / c["npz"]).resolve() == npz.resolve()),
            case["calls"][0],
        )
        spec.update(
            function=case["function"],
            args=call["args"],
            rtol=case.get("rtol", spec["rtol"]),
            atol=case.get("atol", spec["atol"]),
        )
        spec["manifest_case"] = case["name"]
        return spec
    log(f"  note: {artifact} not in {manifest}; assuming inputs a, b and output c")
    return spec


def bench_call(
    variants: Sequence[Variant],
    spec: dict[str, Any],
    rounds: int,
    cwd: str,
    env: dict[str, str],
) -> dict[str, dict[str, Any]]:
    """Run interleaved call-benchmark children; pool per-call ns of every block."""
    t_start = time.perf_counter()
    children = alternate(
        {v.key: child_argv(v.python, dict(spec, api=v.call_api)) for v in variants}, rounds, cwd, env
    )
    log(f"  call: {rounds} rounds, {time.perf_counter() - t_start:.0f}s")
    raw: dict[str, dict[str, Any]] = {}
    for key, runs in children.items():
        raw[key] = {
            **per_call(runs, "ns"),
            "loop_ns": [run["loop_ns"] for run in runs],
        }
    return raw


def summarize_call(raw: dict[str, dict[str, Any]], ref_key: str) -> dict[str, Any]:
    """Summaries of the per-call times and ratios vs the ``ref_key`` variant."""
    out: dict[str, Any] = {}
    ref = raw[ref_key]
    for key, r in raw.items():
        out[key] = {
            "per_call_ns": summarize(r["per_call_ns"]).to_dict(3),
            "child_medians_ns": summarize(r["child_medians_ns"]).to_dict(3),
            "python_loop_ns": round(median(r["loop_ns"]), 3),
            "ratio_vs_apache_median": round(ratio(median(r["per_call_ns"]), median(ref["per_call_ns"])), 4),
            "ratio_vs_apache_p10": round(
                ratio(
                    summarize(r["per_call_ns"]).p10,
                    summarize(ref["per_call_ns"]).p10,
                ),
                4,
            ),
            "ratio_vs_apache_paired_median": round(
                paired_median(r["child_medians_ns"], ref["child_medians_ns"]),
                4,
            ),
        }
    return out


# --------------------------------------------------------------- machine info


# --------------------------------------------------------------- targets / report


def _target(
    *,
    name: str,
    variant: str,
    measured: float,
    limit: float,
    unit: str,
    description: str,
) -> dict[str, Any]:
    return {
        "name": name,
        "variant": variant,
        "description": description,
        "measured": round(measured, 4),
        "limit": limit,
        "comparison": "<=",
        "unit": unit,
        "pass": bool(measured <= limit) and not math.isnan(measured),
    }


# The three targets: (name, where the value is, limit, unit, what it measures).
TARGETS = (
    (
        "import_time",
        ("import", "ratio_vs_floor", "inprocess_median"),
        IMPORT_TIME_LIMIT,
        "x floor",
        "in-process `import tvm` median / `import tvm_ffi` median",
    ),
    (
        "rss",
        ("import", "rss_delta_vs_floor_mb"),
        RSS_DELTA_LIMIT_MB,
        "MB above floor",
        "median VmRSS after `import tvm` minus that of the floor",
    ),
    (
        "call_overhead",
        ("call", "ratio_vs_apache_median"),
        CALL_RATIO_LIMIT,
        "x apache-tvm",
        "median ns per tiny-kernel call / apache-tvm median",
    ),
)


def compute_targets(
    imp: dict[str, Any], call: dict[str, Any], ours_keys: Sequence[str]
) -> list[dict[str, Any]]:
    """Return the issue's three targets for each of our variants."""
    targets: list[dict[str, Any]] = []
    for key in ours_keys:
        for name, (source, *path), limit, unit, description in TARGETS:
            value = {"import": imp, "call": call}[source][key]
            for part in path:
                value = value[part]
            targets.append(
                _target(
                    name=name, variant=key, measured=value, limit=limit, unit=unit, description=description
                )
            )
    return targets


def render_markdown(results: dict[str, Any], variants: Sequence[Variant]) -> str:
    """README-ready table: one row per metric, one column per variant."""
    imp = results["import"]
    call = results["call"]
    targets = {(t["name"], t["variant"]): t for t in results["targets"]}
    ours_keys = [v.key for v in variants if v.key.startswith("ours")]

    def verdict(name: str, fmt: Callable[[float], str], limit: str) -> str:
        parts = []
        for key in ours_keys:
            t = targets[(name, key)]
            who = "" if key == "ours" else "+backends: "
            parts.append(f"{who}{fmt(t['measured'])} {'PASS' if t['pass'] else 'FAIL'}")
        return f"<= {limit}: " + "; ".join(parts)

    header = ["", *(v.label for v in variants), "target (ours)"]
    rows: list[list[str]] = []
    rows.append(
        [
            "import time (in-process, ms)",
            *(cell(imp[v.key]["series"]["inprocess_ms"], 1) for v in variants),
            verdict("import_time", lambda x: f"{x:.2f}x", f"{IMPORT_TIME_LIMIT}x floor"),
        ]
    )
    rows.append(
        [
            "import time (subprocess, ms)",
            *(cell(imp[v.key]["series"]["subprocess_ms"], 1) for v in variants),
            "info: "
            + "; ".join(
                f"{v.label} {imp[v.key]['ratio_vs_floor']['subprocess_median']:.2f}x" for v in variants[1:]
            ),
        ]
    )
    instr = results.get("import_instructions") or {}
    if instr:
        rows.append(
            [
                "import cost (instructions, M; callgrind)",
                *(
                    f"{instr[v.key]['import'] / 1e6:.0f} ({instr[v.key]['ratio_vs_floor']:.3f}x)"
                    for v in variants
                ),
                "info: deterministic, start-up excluded",
            ]
        )
    rows.append(
        [
            "`python -c pass` (subprocess, ms)",
            *(cell(imp[v.key]["series"]["startup_ms"], 1) for v in variants),
            "info: interpreter start-up",
        ]
    )
    rows.append(
        [
            "RSS (MB)",
            *(cell(imp[v.key]["series"]["rss_mb"], 1) for v in variants),
            verdict("rss", lambda x: f"{x:+.1f} MB", f"floor + {RSS_DELTA_LIMIT_MB:g} MB"),
        ]
    )
    rows.append(
        [
            "tiny kernel call (ns)",
            *(cell(call[v.key]["per_call_ns"], 0) if v.key in call else "-" for v in variants),
            verdict(
                "call_overhead",
                lambda x: f"{x:.3f}x",
                f"{CALL_RATIO_LIMIT}x apache-tvm",
            ),
        ]
    )
    m = results["machine"]
    cfg = results["config"]
    py = results["venvs"][variants[0].key]["python_version"]
    note = (
        f"median (p10-p90). {m['cpu_model']}, {m['nproc']} CPUs, Python {py}; "
        f"{cfg['import_runs']} import runs per variant, "
        f"{cfg['call_rounds']}x{cfg['call_blocks']} blocks of {cfg['call_iters']} "
        "calls. Floor call = bare `tvm_ffi` on the same artifact."
    )
    return markdown_table(header, rows, note)


# --------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    venvs = {
        "ours": "the tvm-runtime wheel (no backends)",
        "floor": "only apache-tvm-ffi (+numpy)",
        "apache": "apache-tvm==0.27.0.post1",
    }
    p = bench_parser(__doc__, "core_bench", venvs)
    p.add_argument("--ours-backends-python", help="python of a venv with tvm-runtime plus backend wheels")
    p.add_argument("--artifact", type=Path, default=Path("tests/artifacts/cpu/tiny_add.so"))
    p.add_argument("--npz", type=Path, default=Path("tests/artifacts/cpu/tiny_add.npz"))
    p.add_argument(
        "--manifest", type=Path, help="artifact manifest (default: manifest.json beside its folder)"
    )
    p.add_argument("--runs", type=int, default=30, help="import runs per variant (default 30)")
    p.add_argument("--warmup-runs", type=int, default=2, help="discarded import rounds (default 2)")
    p.add_argument(
        "--call-rounds", type=int, default=8, help="call-benchmark children per variant (default 8)"
    )
    p.add_argument("--call-blocks", type=int, default=20, help="timed blocks per child (default 20)")
    p.add_argument("--call-iters", type=int, default=20000, help="calls per block (default 20000)")
    p.add_argument(
        "--call-warmup", type=int, default=20000, help="untimed calls before timing (default 20000)"
    )
    p.add_argument("--fail-on-target", action="store_true", help="exit 1 if a target is missed")
    args = p.parse_args(argv)
    quick_counts(args, runs=2, warmup_runs=0, call_rounds=1, call_blocks=2, call_iters=2000, call_warmup=200)
    if min(args.runs, args.call_rounds, args.call_blocks, args.call_iters) < 1 or args.warmup_runs < 0:
        p.error("counts must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every benchmark, write the results; return the exit status."""
    args = parse_args(argv)
    t_begin = time.perf_counter()
    load_before = os.getloadavg()
    for path in (args.artifact, args.npz):
        if not path.is_file():
            raise SystemExit(f"missing: {path}")
    manifest = args.manifest or args.artifact.resolve().parent.parent / "manifest.json"

    variants = [
        Variant("floor", "floor (tvm_ffi)", args.floor_python, "import tvm_ffi", "tvm_ffi"),
        Variant("ours", "ours", args.ours_python, "import tvm", "tvm"),
    ]
    if args.ours_backends_python:
        variants.append(
            Variant(
                "ours_backends",
                "ours+backends",
                args.ours_backends_python,
                "import tvm",
                "tvm",
            )
        )
    variants.append(Variant("apache", "apache-tvm 0.27", args.apache_python, "import tvm", "tvm"))
    ours_keys = [v.key for v in variants if v.key.startswith("ours")]

    env = child_env()
    with tempfile.TemporaryDirectory(prefix="core_bench_") as cwd:  # keep the repo off sys.path
        log("probing venvs")
        venvs = {v.key: probe_venv(v.python, cwd, env) for v in variants}
        for v in variants:
            pk = venvs[v.key]["packages"]
            log(f"  {v.key}: {v.python} {pk}")
            if v.key.startswith("ours") and "apache-tvm" in {k.lower() for k in pk}:
                raise SystemExit(f"{v.key} venv has apache-tvm installed; it must not")

        log(f"import benchmark: {args.runs} runs x {len(variants)} variants (+ `pass` baselines)")
        imp_raw = bench_import(variants, args.runs, args.warmup_runs, cwd, env)

        log("instruction counts of `import` under callgrind (deterministic)")
        instructions = {} if args.quick else bench_instructions(variants, cwd, env)

        spec = _call_spec(args.artifact, args.npz, manifest)
        spec.update(blocks=args.call_blocks, iters=args.call_iters, warmup=args.call_warmup)
        log(f"call benchmark: {spec['function']} x {args.call_rounds} rounds")
        call_raw = bench_call(variants, spec, args.call_rounds, cwd, env)

    imp = summarize_import(imp_raw, "floor")
    call = summarize_call(call_raw, "apache")
    targets = compute_targets(imp, call, ours_keys)
    results: dict[str, Any] = {
        **run_header("core_bench", t_begin, load_before, machine_info()),
        "venvs": venvs,
        "config": {
            "import_runs": args.runs,
            "import_warmup_rounds": args.warmup_runs,
            "call_rounds": args.call_rounds,
            "call_blocks": args.call_blocks,
            "call_iters": args.call_iters,
            "call_warmup": args.call_warmup,
            "artifact": str(args.artifact),
            "npz": str(args.npz),
            "function": spec["function"],
            "units": {"time": "ms unless suffixed _ns", "memory": "MB = 10**6 bytes"},
            "schedule": "variants interleaved, order reversed every other round",
        },
        "import": imp,
        "import_instructions": instructions,
        "call": call,
        "targets": targets,
        "all_targets_pass": all(t["pass"] for t in targets),
        "raw": {"import": imp_raw, "call": call_raw},
    }
    publish(results, args.out, args.markdown, render_markdown(results, variants))
    for t in targets:
        print(
            f"{t['name']:>14} [{t['variant']}]: {t['measured']} {t['unit']} "
            f"(limit {t['limit']}) {'PASS' if t['pass'] else 'FAIL'}"
        )
    return 1 if args.fail_on_target and not results["all_targets_pass"] else 0


if __name__ == "__main__":
    sys.exit(main())
