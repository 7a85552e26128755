"""Disco: the cpu collective library's allreduce against torch.distributed's gloo, and decoding
with the 2-shard tensor-parallel decoder against the unsharded one.

    python benchmarks/disco_bench.py --ours-python PY --torch-python PY \\
        [--out results/disco_bench.json] [--markdown results/disco_bench.md] [--quick]

Allreduce (sum of float32, 1 KB to 64 MB, 2 and 4 workers): each worker times a loop of calls
to ``runtime.disco.allreduce`` (what compiled models call) in a ProcessSession (workers 1.. are
processes, worker 0 a thread of the controller's process; shared memory between them), and a
ThreadedSession; gloo is timed the same way, a loop of ``dist.all_reduce`` in each of the
processes torch.multiprocessing spawns (TCP on the loopback).  Children alternate (ours, gloo,
then gloo, ours); the median per-call time of all repeats is reported, bandwidth is
bytes / time.  Target: ours (ProcessSession) <= 1.0x gloo's time at every size.

Decode: ms per token of greedy decoding with tests/artifacts/disco's tiny decoder (apache-tvm
0.27 artifacts): unsharded on one VirtualMachine, and split over 2 workers of a ThreadedSession
and a ProcessSession (every step: broadcast the token, embed + decode on both workers with two
allreduces per layer, worker 0's logits back to the controller).  Reported, no target: the model
is tiny, so the step is mostly the session's command round trip.

This is a benchmark, not a test: exit status 0 unless ``--fail-on-target`` and a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from _harness import alternate, bench_parser, child_env, log, machine_info, publish, run_header
from _stats import summarize

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ARTIFACTS = REPO / "tests" / "artifacts" / "disco"
RATIO_LIMIT = 1.0
SIZES = [1 << k for k in range(10, 27, 2)]  # 1 KB .. 64 MB


def plan(sizes: list[int], quick: bool) -> list[list[int]]:
    """(bytes, calls per timed loop): about the same time per loop at every size."""
    out = []
    for n in sizes:
        iters = max(3, min(400, (8 << 20) // max(n, 1)))
        out.append([n, max(2, iters // 4) if quick else iters])
    return out


def human(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def run_allreduce(args: argparse.Namespace) -> dict[str, Any]:
    env = child_env({"PYTHONPATH": str(HERE)})
    sizes = SIZES[::2] if args.quick else SIZES
    p = json.dumps(plan(sizes, args.quick))
    repeats = "3" if args.quick else "5"
    rounds = 1 if args.quick else 2
    results: dict[str, Any] = {}
    for workers in (2, 4):
        log(f"allreduce: {workers} workers")
        variants = {
            "ours-process": [args.ours_python, str(HERE / "_disco_bench_child.py"), "allreduce", "process"],
            "gloo": [args.torch_python, str(HERE / "_gloo_allreduce_child.py")],
            "ours-threaded": [args.ours_python, str(HERE / "_disco_bench_child.py"), "allreduce", "threaded"],
        }
        variants = {key: [*argv, str(workers), p, repeats] for key, argv in variants.items()}
        samples: dict[str, dict[str, list[float]]] = {key: {} for key in variants}
        for key, runs in alternate(variants, rounds, str(HERE), env).items():
            for run in runs:
                for size, secs in run.items():
                    samples[key].setdefault(size, []).extend(secs)
        for size in map(str, sizes):
            row = {v: summarize([s * 1e6 for s in samples[v][size]]).to_dict() for v in samples}
            ratio = row["ours-process"]["median"] / row["gloo"]["median"]
            row["ratio_ours_process_vs_gloo"] = ratio
            row["ratio_ours_threaded_vs_gloo"] = row["ours-threaded"]["median"] / row["gloo"]["median"]
            results[f"{workers}:{size}"] = {"workers": workers, "bytes": int(size), **row}
    return results


def run_decode(args: argparse.Namespace) -> dict[str, Any]:
    env = child_env({"PYTHONPATH": str(HERE)})
    steps = "16" if args.quick else "48"
    argv = [args.ours_python, str(HERE / "_disco_bench_child.py"), "decode", str(ARTIFACTS), steps]
    merged: dict[str, list[float]] = {}
    for run in alternate({"decode": argv}, 1 if args.quick else 3, str(HERE), env)["decode"]:
        for name, ms in run.items():
            merged.setdefault(name, []).extend(ms)
    return {name: summarize(ms).to_dict() for name, ms in merged.items()}


def render(allreduce: dict[str, Any], decode: dict[str, Any], machine: dict[str, Any]) -> str:
    lines = [
        "CPU allreduce (sum, float32), per call: median µs (bandwidth = bytes / time)",
        "",
        "| workers | size | ours ProcessSession µs | ours ThreadedSession µs | gloo µs | ours GB/s "
        "| gloo GB/s | ours/gloo | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m in allreduce.values():
        ours, thr, gloo = m["ours-process"]["median"], m["ours-threaded"]["median"], m["gloo"]["median"]
        ratio = m["ratio_ours_process_vs_gloo"]
        verdict = "PASS" if ratio <= RATIO_LIMIT else "MISS"
        lines.append(
            f"| {m['workers']} | {human(m['bytes'])} | {ours:.1f} | {thr:.1f} | {gloo:.1f} | "
            f"{m['bytes'] / ours / 1e3:.2f} | {m['bytes'] / gloo / 1e3:.2f} | {ratio:.2f}x "
            f"| <= {RATIO_LIMIT}x {verdict} |"
        )
    lines += [
        "",
        "Greedy decoding with the tiny decoder (tests/artifacts/disco), ms per token:",
        "",
        "| variant | median ms/token | p10 | p90 |",
        "|---|---|---|---|",
    ]
    for name, s in decode.items():
        lines.append(f"| {name} | {s['median']:.3f} | {s['p10']:.3f} | {s['p90']:.3f} |")
    cpu = f"{machine.get('cpu_model', '?')}, {machine.get('nproc', '?')} CPUs"
    lines += ["", f"Machine: {cpu}; torch.distributed (gloo) in its own venv, the same run."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = bench_parser(__doc__, "disco_bench", {"ours": "tvm[extra]", "torch": "torch (CPU) for gloo"})
    p.add_argument("--fail-on-target", action="store_true")
    args = p.parse_args(argv)
    t_begin, load_before = time.perf_counter(), os.getloadavg()
    allreduce = run_allreduce(args)
    decode = run_decode(args)
    machine = machine_info()
    targets = [
        {
            "name": "allreduce time, ours (ProcessSession) / gloo",
            "case": label,
            "measured": m["ratio_ours_process_vs_gloo"],
            "limit": RATIO_LIMIT,
            "comparison": "<=",
            "unit": "x",
            "pass": m["ratio_ours_process_vs_gloo"] <= RATIO_LIMIT,
        }
        for label, m in allreduce.items()
    ]
    results = {
        **run_header("disco", t_begin, load_before, machine),
        "allreduce": allreduce,
        "decode_ms_per_token": decode,
        "targets": targets,
    }
    publish(results, args.out, args.markdown, render(allreduce, decode, machine))
    missed = [t for t in targets if not t["pass"]]
    return 1 if missed and args.fail_on_target else 0


if __name__ == "__main__":
    sys.exit(main())
