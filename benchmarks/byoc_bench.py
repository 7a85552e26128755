"""dnnl_json (tvm-runtime-dnnl on oneDNN) vs the same model compiled for llvm, ours and apache-tvm 0.27.

    python benchmarks/byoc_bench.py --ours-python PY --apache-python PY --models-dir DIR \\
        [--out results/byoc_bench.json] [--markdown results/byoc_bench.md]

DIR comes from benchmarks/make_byoc_models.py (apache-tvm 0.27 builds both variants of every
workload with the same weights: ``<name>_llvm.so`` compiled for ``llvm`` by its default pipeline,
``<name>_dnnl.so`` with the computation in one ``dnnl_json`` module).  Three variants per
workload, each in fresh child processes, interleaved:

* ``ours/dnnl``: our runtime (needs ``tvm-runtime[dnnl]`` and the system's oneDNN 2.x);
* ``ours/llvm`` and ``apache/llvm``: the llvm artifact on our runtime and on apache-tvm's
  (apache-tvm's PyPI runtime has no DNNL, so it cannot run the dnnl artifact at all).

Every child checks its first result against apache-tvm's output of the llvm model (max abs error
below 1e-3), then times blocks of ``vm["main"](x)`` calls, input already on the CPU.
Target (issue 28): ``ours/dnnl`` <= 1.0x ``apache/llvm`` (the offload pays).  ``ours/llvm`` vs
``apache/llvm`` is reported beside it: both runtimes run the same single-threaded machine code
there, so that ratio shows the VM's and allocator's overhead plus this machine's noise.  This is a
benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _harness import (
    add_counts,
    alternate,
    cell,
    child_argv,
    child_env,
    finish,
    log,
    ours_vs_apache_parser,
    parse_counts,
    pool,
    probe_venvs,
)
from _stats import median, ratio, summarize

RATIO_LIMIT = 1.0
VARIANTS = (("ours", "dnnl"), ("ours", "llvm"), ("apache", "llvm"))


def bench_workload(
    model: dict[str, Any], models_dir: Path, pythons: dict[str, str], args: argparse.Namespace, cwd: str
) -> dict[str, Any]:
    variants = {
        f"{runtime}/{kind}": child_argv(
            pythons[runtime],
            {
                "task": "model_x",
                "artifact": str(models_dir / model[kind]),
                "npz": str(models_dir / model["npz"]),
                "blocks": args.blocks,
                "iters": args.iters,
                "warmup": args.warmup,
            },
        )
        for runtime, kind in VARIANTS
    }
    raw = {}
    for key, runs in alternate(variants, args.rounds, cwd, child_env()).items():
        per_call_ms, child_medians_ms = pool(runs, "per_call_ns", 1e-6)
        raw[key] = {
            "per_call_ms": per_call_ms,
            "child_medians_ms": child_medians_ms,
            "max_abs_error": max(run["max_abs_error"] for run in runs),
        }
    summary: dict[str, Any] = {
        key: {"per_call_ms": summarize(r["per_call_ms"]).to_dict(4), "max_abs_error": r["max_abs_error"]}
        for key, r in raw.items()
    }
    ref = median(raw["apache/llvm"]["per_call_ms"])
    summary["ratios"] = {
        "ours_dnnl_vs_apache_llvm": round(ratio(median(raw["ours/dnnl"]["per_call_ms"]), ref), 4),
        "ours_llvm_vs_apache_llvm": round(ratio(median(raw["ours/llvm"]["per_call_ms"]), ref), 4),
        "ours_dnnl_vs_ours_llvm": round(
            ratio(median(raw["ours/dnnl"]["per_call_ms"]), median(raw["ours/llvm"]["per_call_ms"])), 4
        ),
    }
    return {"description": model["description"], **summary, "raw": raw}


def targets_of(workloads: dict[str, Any]) -> list[dict[str, Any]]:
    targets = []
    for name, w in workloads.items():
        for key in ("ours_dnnl_vs_apache_llvm",):
            value = w["ratios"][key]
            targets.append(
                {
                    "name": key,
                    "workload": name,
                    "measured": value,
                    "limit": RATIO_LIMIT,
                    "comparison": "<=",
                    "unit": "x apache-tvm 0.27 on the llvm artifact (median ms per vm['main'] call)",
                    "pass": value <= RATIO_LIMIT,
                }
            )
    return targets


def render_markdown(results: dict[str, Any]) -> str:
    lines = [
        "| workload | ours, dnnl_json (ms) | ours, llvm (ms) | apache-tvm 0.27, llvm (ms) "
        "| dnnl vs apache llvm | ours llvm vs apache llvm |",
        "|---|---|---|---|---|---|",
    ]

    for w in results["workloads"].values():
        r = w["ratios"]
        lines.append(
            f"| {w['description']} | {cell(w['ours/dnnl']['per_call_ms'])} | "
            f"{cell(w['ours/llvm']['per_call_ms'])} | {cell(w['apache/llvm']['per_call_ms'])} | "
            f"{r['ours_dnnl_vs_apache_llvm']:.3f}x | {r['ours_llvm_vs_apache_llvm']:.3f}x |"
        )
    cfg, mach = results["config"], results["machine"]
    lines += [
        "",
        f"median (p10-p90) of {cfg['rounds']} children x {cfg['blocks']} blocks of {cfg['iters']} calls per "
        f"variant, interleaved; {mach.get('cpu_model', '?')}, {mach.get('nproc', '?')} CPUs; "
        "apache-tvm's PyPI runtime cannot run the dnnl_json artifact (no DNNL in its build). "
        f"All targets pass: {results['all_targets_pass']}.",
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = ours_vs_apache_parser(__doc__, "byoc_bench", ours_needs="tvm-runtime[dnnl]")
    p.add_argument("--models-dir", type=Path, required=True, help="output of make_byoc_models.py")
    add_counts(p, rounds=4, blocks=5, iters=5, warmup=2)
    return parse_counts(p, argv, rounds=1, blocks=2, iters=2, warmup=1)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    t_begin = time.perf_counter()
    load_before = os.getloadavg()
    models = json.loads((args.models_dir / "models.json").read_text())["models"]
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    workloads: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="byoc_bench_") as cwd:  # keep the repo off sys.path
        venvs = probe_venvs(pythons, cwd, child_env())
        for model in models:
            t0 = time.perf_counter()
            w = bench_workload(model, args.models_dir.resolve(), pythons, args, cwd)
            workloads[model["name"]] = w
            log(
                f"  {model['name']:10s} dnnl {w['ours/dnnl']['per_call_ms']['median']:9.3f} ms"
                f"  ours llvm {w['ours/llvm']['per_call_ms']['median']:9.3f} ms"
                f"  apache llvm {w['apache/llvm']['per_call_ms']['median']:9.3f} ms"
                f"  ({time.perf_counter() - t0:.0f}s)"
            )
    targets = targets_of(workloads)
    body = {
        "venvs": venvs,
        "config": {
            "rounds": args.rounds,
            "blocks": args.blocks,
            "iters": args.iters,
            "warmup": args.warmup,
            "models_dir": str(args.models_dir),
            "units": {"per_call": "milliseconds"},
            "schedule": "children of the three variants interleaved, order reversed every other round",
        },
        "workloads": workloads,
    }
    return finish("byoc_bench", args, t_begin, load_before, body, targets, render_markdown)


if __name__ == "__main__":
    sys.exit(main())
