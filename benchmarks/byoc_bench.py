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
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _harness as h
from _stats import median, ratio, summarize

RATIO_LIMIT = 1.0
VARIANTS = (("ours", "dnnl"), ("ours", "llvm"), ("apache", "llvm"))


def bench_workload(
    model: dict[str, Any], models_dir: Path, pythons: dict[str, str], args: argparse.Namespace, cwd: str
) -> dict[str, Any]:
    variants = {
        f"{runtime}/{kind}": h.child_argv(
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
    for key, runs in h.alternate(variants, args.rounds, cwd, h.child_env()).items():
        raw[key] = {
            **h.per_call(runs, "ms"),
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


def render_markdown(results: dict[str, Any]) -> str:
    header = (
        "workload | ours, dnnl_json (ms) | ours, llvm (ms) | apache-tvm 0.27, llvm (ms) "
        "| dnnl vs apache llvm | ours llvm vs apache llvm"
    )
    rows = [
        [
            w["description"],
            *(h.cell(w[key]["per_call_ms"]) for key in ("ours/dnnl", "ours/llvm", "apache/llvm")),
            f"{w['ratios']['ours_dnnl_vs_apache_llvm']:.3f}x",
            f"{w['ratios']['ours_llvm_vs_apache_llvm']:.3f}x",
        ]
        for w in results["workloads"].values()
    ]
    note = (
        f"{h.blocks_note(results)}; "
        "apache-tvm's PyPI runtime cannot run the dnnl_json artifact (no DNNL in its build). "
        f"All targets pass: {results['all_targets_pass']}."
    )
    return h.markdown_table(header, rows, note)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = h.ours_vs_apache_parser(__doc__, "byoc_bench", ours_needs="tvm-runtime[dnnl]")
    p.add_argument("--models-dir", type=Path, required=True, help="output of make_byoc_models.py")
    h.add_counts(p, rounds=4, blocks=5, iters=5, warmup=2)
    return h.parse_counts(p, argv, rounds=1, blocks=2, iters=2, warmup=1)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    start = h.started()
    models = json.loads((args.models_dir / "models.json").read_text())["models"]
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    workloads: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="byoc_bench_") as cwd:  # keep the repo off sys.path
        venvs = h.probe_venvs(pythons, cwd, h.child_env())
        for model in models:
            t0 = time.perf_counter()
            w = bench_workload(model, args.models_dir.resolve(), pythons, args, cwd)
            workloads[model["name"]] = w
            h.log_pair(
                model["name"], w["ours/dnnl"]["per_call_ms"], w["apache/llvm"]["per_call_ms"], "ms", t0
            )
    key = "ours_dnnl_vs_apache_llvm"
    unit = "x apache-tvm 0.27 on the llvm artifact (median ms per vm['main'] call)"
    targets = h.ratio_targets(workloads, key, "workload", unit, RATIO_LIMIT, ratio_key=key, ratios="ratios")
    body = {
        "venvs": venvs,
        "config": h.counts_config(
            args,
            models_dir=str(args.models_dir),
            units={"per_call": "milliseconds"},
            schedule="children of the three variants interleaved, order reversed every other round",
        ),
        "workloads": workloads,
    }
    return h.finish("byoc_bench", args, start, body, targets, render_markdown)


if __name__ == "__main__":
    sys.exit(main())
