"""End-to-end latency of Relax models: tvm-runtime's VM vs apache-tvm 0.27's VM on the CPU.

    python benchmarks/vm_bench.py --ours-python PY --apache-python PY \\
        [--out results/vm_bench.json] [--markdown results/vm_bench.md]

For every CPU ``vm`` case of ``tests/artifacts/manifest.json`` (mlp, mlp_dyn with batch 3 and
50, convnet) each child process, in one venv or the other, runs the deploy-script path

    mod = tvm.runtime.load_module(so); vm = VirtualMachine(mod, tvm.cpu()); vm["main"](*inputs)

checks the result against the npz, then times blocks of calls to ``vm["main"](*inputs)``
(inputs already on the device; per-call time includes the Python call, the interpreter, the
builtins, the allocations and the TIR kernels). It also reports the "cold" time of one child:
``load_module`` + ``VirtualMachine`` + first call.

The two venvs run in interleaved child processes (ours, apache, then apache, ours, ...) so that
machine drift hits both alike. Results (median, p10, p90 per series; ratio ours/apache of the
medians and the median of per-round ratios) go to a JSON file. Target from the issue: call
latency median <= 1.05x apache-tvm for every model. This is a benchmark, not a test: the exit
status is 0 unless ``--fail-on-target`` is given and a target is missed.
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

RATIO_LIMIT = 1.05
REPO = Path(__file__).resolve().parent.parent
CALL_NOTE = (
    'Call = `vm["main"](*inputs)` from Python with inputs on the CPU; cold = load_module + '
    "VirtualMachine + first call."
)


def model_specs(manifest: Path, names: Sequence[str]) -> list[dict[str, Any]]:
    """One spec per (CPU vm case, call) of the manifest, e.g. mlp_dyn@x_n3."""
    doc = json.loads(manifest.read_text())
    base = manifest.parent
    specs = []
    for case in doc["cases"]:
        if case["kind_of_case"] != "vm" or case["target"] != "cpu" or case["name"] not in names:
            continue
        for call in case["calls"]:
            inputs = [a["key"] for a in call["args"]]
            label = case["name"] if len(case["calls"]) == 1 else f"{case['name']}@{inputs[0]}"
            specs.append(
                {
                    "label": label,
                    "artifact": str((base / case["file"]).resolve()),
                    "npz": str((base / call["npz"]).resolve()),
                    "inputs": inputs,
                    "outputs": call["outputs"],
                    "rtol": case["rtol"],
                    "atol": case["atol"],
                }
            )
    return specs


def bench_model(
    spec: dict[str, Any], pythons: dict[str, str], rounds: int, cwd: str, env: dict[str, str]
) -> dict[str, dict[str, list[float]]]:
    children = h.alternate_spec(pythons, spec, rounds, cwd, env)
    raw = {}
    for key, runs in children.items():
        raw[key] = {
            **h.per_call(runs, "us"),
            "cold_ms": [run["cold_ms"] for run in runs],
        }
    return raw


def summarize_model(raw: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    ours, ref = raw["ours"], raw["apache"]
    out: dict[str, Any] = {
        key: {
            "per_call_us": summarize(r["per_call_us"]).to_dict(3),
            "child_medians_us": summarize(r["child_medians_us"]).to_dict(3),
            "cold_ms": summarize(r["cold_ms"]).to_dict(3),
        }
        for key, r in raw.items()
    }
    out["ratio_ours_vs_apache"] = {
        "per_call_median": round(ratio(median(ours["per_call_us"]), median(ref["per_call_us"])), 4),
        "per_call_p10": round(
            ratio(summarize(ours["per_call_us"]).p10, summarize(ref["per_call_us"]).p10), 4
        ),
        "per_call_paired_median": round(
            h.paired_median(ours["child_medians_us"], ref["child_medians_us"]), 4
        ),
        "cold_median": round(ratio(median(ours["cold_ms"]), median(ref["cold_ms"])), 4),
    }
    return out


def render_markdown(results: dict[str, Any]) -> str:
    header = "model | ours (us/call) | apache-tvm 0.27 (us/call) | ratio | target | cold: ours / apache (ms)"
    rows = [
        f"| {label} | {h.cell(m['ours']['per_call_us'], 2)} | {h.cell(m['apache']['per_call_us'], 2)} | "
        f"{h.ratio_verdict(m['ratio_ours_vs_apache']['per_call_median'], RATIO_LIMIT)} | "
        f"{m['ours']['cold_ms']['median']:.1f} / {m['apache']['cold_ms']['median']:.1f} |"
        for label, m in results["models"].items()
    ]
    return h.markdown_table(header, rows, f"{h.blocks_note(results)}. {CALL_NOTE}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = h.ours_vs_apache_parser(__doc__, "vm_bench")
    p.add_argument("--manifest", type=Path, default=REPO / "tests" / "artifacts" / "manifest.json")
    p.add_argument("--models", default="mlp,mlp_dyn,convnet", help="comma-separated case names")
    p.add_argument("--num-threads", type=int, help="TVM_NUM_THREADS for the children")
    h.add_counts(p, rounds=8, blocks=15, iters=2000, warmup=2000)
    return h.parse_counts(p, argv, rounds=1, blocks=3, iters=200, warmup=50)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    start = h.started()
    specs = model_specs(args.manifest, args.models.split(","))
    if not specs:
        raise SystemExit(f"no CPU vm cases named {args.models} in {args.manifest}")
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    env = h.child_env({} if args.num_threads is None else {"TVM_NUM_THREADS": str(args.num_threads)})
    models: dict[str, Any] = {}
    raw_all: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="vm_bench_") as cwd:  # keep the repo off sys.path
        venvs = h.probe_venvs(pythons, cwd, env)
        for spec in specs:
            spec = dict(spec, task="vm_call", blocks=args.blocks, iters=args.iters, warmup=args.warmup)
            t0 = time.perf_counter()
            raw = bench_model(spec, pythons, args.rounds, cwd, env)
            models[spec["label"]] = summarize_model(raw)
            raw_all[spec["label"]] = raw
            m = models[spec["label"]]
            h.log_pair(spec["label"], m["ours"]["per_call_us"], m["apache"]["per_call_us"], "us", t0)
    targets = h.ratio_targets(
        models, "call_latency", "model", "x apache-tvm (median us per vm['main'] call)", RATIO_LIMIT
    )
    body = {
        "venvs": venvs,
        "config": h.counts_config(
            args,
            num_threads=args.num_threads,
            manifest=str(args.manifest),
            units={"per_call": "microseconds", "cold": "milliseconds"},
        ),
        "models": models,
        "raw": raw_all,
    }
    return h.finish("vm_bench", args, start, body, targets, render_markdown)


if __name__ == "__main__":
    sys.exit(main())
