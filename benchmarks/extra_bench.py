"""Sorting speed: tvm-runtime-extra's contrib functions vs apache-tvm 0.27's, on the same artifacts.

    python benchmarks/extra_bench.py --ours-python PY --apache-python PY \\
        [--out results/extra_bench.json] [--markdown results/extra_bench.md]

The artifacts are the benchmark models of ``tests/artifacts/contrib/manifest.json``, compiled
once by apache-tvm 0.27 for ``llvm``: ``bench_sort_1m`` (``R.sort`` of 1e6 float32) and
``bench_topk_10k`` (``R.topk`` k=10 of 10000 rows x 100 float32, values and indices).  Their
host code calls ``tvm.contrib.sort.sort`` / ``tvm.contrib.sort.topk``, so the time of
``vm["main"](x)`` is the contrib function's time plus a small, equal VM overhead.  Each child
process, in one venv or the other, loads the artifact, checks the first result against numpy,
then times blocks of calls.  Children h.alternate (ours, apache, then apache, ours, ...).

Every model is measured with the runtime's default thread count and with ``TVM_NUM_THREADS=1``:
apache-tvm sorts rows serially, ours spreads rows over the core's thread pool, so the single-
thread line shows the algorithmic difference alone.  Target (issue 11): ours <= 1.0x apache-tvm.
This is a benchmark, not a test: exit status 0 unless ``--fail-on-target`` and a target is missed.
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
REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "tests" / "artifacts" / "contrib" / "manifest.json"
CALL_NOTE = (
    'Call = `vm["main"](x)` of the same apache-tvm 0.27 llvm artifact, whose host code calls '
    "`tvm.contrib.sort.*`; input already on the CPU."
)


def bench_specs(manifest: Path) -> list[dict[str, Any]]:
    doc = json.loads(manifest.read_text())
    return [{**b, "artifact": str((manifest.parent / b["file"]).resolve())} for b in doc["benchmarks"]]


def bench_one(
    spec: dict[str, Any], pythons: dict[str, str], rounds: int, cwd: str, env: dict[str, str]
) -> dict[str, dict[str, list[float]]]:
    children = h.alternate_spec(pythons, spec, rounds, cwd, env)
    return {key: h.per_call(runs, "ms") for key, runs in children.items()}


def summarize_one(raw: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    ours, ref = raw["ours"], raw["apache"]
    out: dict[str, Any] = {
        key: {"per_call_ms": summarize(r["per_call_ms"]).to_dict(4)} for key, r in raw.items()
    }
    out["ratio_ours_vs_apache"] = {
        "per_call_median": round(ratio(median(ours["per_call_ms"]), median(ref["per_call_ms"])), 4),
        "per_call_paired_median": round(
            h.paired_median(ours["child_medians_ms"], ref["child_medians_ms"]), 4
        ),
    }
    return out


def render_markdown(results: dict[str, Any]) -> str:
    header = "workload | threads | ours (ms/call) | apache-tvm 0.27 (ms/call) | ratio | target"
    rows = [
        [
            m["description"],
            m["threads"],
            h.cell(m["ours"]["per_call_ms"]),
            h.cell(m["apache"]["per_call_ms"]),
            r,
        ]
        for m in results["workloads"].values()
        for r in [h.ratio_verdict(m["ratio_ours_vs_apache"]["per_call_median"], RATIO_LIMIT)]
    ]
    return h.markdown_table(header, rows, f"{h.blocks_note(results)}. {CALL_NOTE}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = h.ours_vs_apache_parser(__doc__, "extra_bench", ours_needs="tvm-runtime[extra]")
    p.add_argument("--manifest", type=Path, default=MANIFEST)
    p.add_argument(
        "--threads",
        default="default,1",
        help="comma-separated TVM_NUM_THREADS settings ('default' = unset); default 'default,1'",
    )
    h.add_counts(p, rounds=4, blocks=5, iters=5, warmup=2)
    return h.parse_counts(p, argv, rounds=1, blocks=2, iters=2, warmup=1)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    start = h.started()
    specs = bench_specs(args.manifest)
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    workloads: dict[str, Any] = {}
    raw_all: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="extra_bench_") as cwd:  # keep the repo off sys.path
        venvs = h.probe_venvs(pythons, cwd, h.child_env())
        for threads in args.threads.split(","):
            env = h.child_env({} if threads == "default" else {"TVM_NUM_THREADS": threads})
            for spec in specs:
                spec = dict(
                    spec, task="contrib_sort", blocks=args.blocks, iters=args.iters, warmup=args.warmup
                )
                label = f"{spec['name']}@{threads}"
                t0 = time.perf_counter()
                raw = bench_one(spec, pythons, args.rounds, cwd, env)
                workloads[label] = {
                    "description": spec["description"],
                    "threads": threads,
                    **summarize_one(raw),
                }
                raw_all[label] = raw
                h.log_pair(
                    label,
                    workloads[label]["ours"]["per_call_ms"],
                    workloads[label]["apache"]["per_call_ms"],
                    "ms",
                    t0,
                )
    targets = h.ratio_targets(
        workloads, "sort_time", "workload", "x apache-tvm (median ms per vm['main'] call)", RATIO_LIMIT
    )
    body = {
        "venvs": venvs,
        "config": h.counts_config(
            args, threads=args.threads, manifest=str(args.manifest), units={"per_call": "milliseconds"}
        ),
        "workloads": workloads,
        "raw": raw_all,
    }
    return h.finish("extra_bench", args, start, body, targets, render_markdown)


if __name__ == "__main__":
    sys.exit(main())
