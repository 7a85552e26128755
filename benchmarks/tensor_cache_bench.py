"""Weight loading from a tensor cache: tvm-runtime vs apache-tvm 0.27 on the same files.

    python benchmarks/tensor_cache_bench.py --ours-python PY --apache-python PY \\
        [--out results/tensor_cache_bench.json] [--markdown results/tensor_cache_bench.md]

apache-tvm 0.27's own writer (``tvm.contrib.tvmjs.dump_tensor_cache``, run in the apache venv)
writes a model-sized cache into a temporary directory, once as float32 and once narrowed to
bfloat16 (``f32-to-bf16``, widened back to float32 on load): `--mb` MB of float32 weights in
matrices of 4 MB, 32 MB shards, as an LLM's weights ship. Each child process then times
``vm.builtin.tensor_cache.load(dir, cpu)`` `--loads` times (the cache cleared in between; files in
the page cache) and checks a checksum of every weight against the other runtime's. Children of
the two venvs are interleaved (ours, apache, then apache, ours, ...). Target: median load time
<= 1.0x apache-tvm for both encodings.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _harness as h
from _stats import median, ratio, summarize

RATIO_LIMIT = 1.0
MATRIX = (1024, 1024)  # 4 MB of float32 per weight


def write_cache(apache_python: str, directory: Path, count: int, fmt: str, cwd: str, env: dict) -> None:
    spec = {"task": "write_tensor_cache", "dir": str(directory), "count": count, "shape": list(MATRIX)}
    h.run_task(apache_python, {**spec, "format": fmt}, cwd, env)


def bench_cache(spec: dict[str, Any], pythons: dict[str, str], rounds: int, cwd: str, env: dict) -> dict:
    children = h.alternate_spec(pythons, spec, rounds, cwd, env)
    raw: dict[str, dict[str, list[float]]] = {}
    for key, runs in children.items():
        load_ms, child_medians_ms = h.pool(runs, "load_ms")
        raw[key] = {"load_ms": load_ms, "child_medians_ms": child_medians_ms}
    if children["ours"][-1]["checksum"] != children["apache"][-1]["checksum"]:
        raise SystemExit(f"WRONG RESULT: the two runtimes loaded different weights from {spec['dir']}")
    return raw


def summarize_cache(raw: dict[str, dict[str, list[float]]], megabytes: float) -> dict[str, Any]:
    ours, ref = raw["ours"], raw["apache"]
    out: dict[str, Any] = {key: {k: summarize(v).to_dict(3) for k, v in r.items()} for key, r in raw.items()}
    out["ratio_ours_vs_apache"] = {
        "per_load_median": round(ratio(median(ours["load_ms"]), median(ref["load_ms"])), 4),
        "paired_child_median": round(h.paired_median(ours["child_medians_ms"], ref["child_medians_ms"]), 4),
    }
    out["ours_gb_per_s"] = round(megabytes / 1e3 / (median(ours["load_ms"]) / 1e3), 3)
    out["apache_gb_per_s"] = round(megabytes / 1e3 / (median(ref["load_ms"]) / 1e3), 3)
    return out


def render_markdown(results: dict[str, Any]) -> str:
    header = ["encoding", "float32 weights", "load, ours (ms)", "apache-tvm 0.27 (ms)", "ratio", "target"]
    cfg = results["config"]
    rows = [
        [
            fmt,
            f"{cfg['megabytes']:.0f} MB",
            h.cell(c["ours"]["load_ms"], 1),
            h.cell(c["apache"]["load_ms"], 1),
            r,
        ]
        for fmt, c in results["caches"].items()
        for r in [h.ratio_verdict(c["ratio_ours_vs_apache"]["per_load_median"], RATIO_LIMIT)]
    ]
    note = (
        f"`vm.builtin.tensor_cache.load` onto the CPU, median (p10-p90) of {cfg['rounds']} children x "
        f"{cfg['loads']} loads per runtime, interleaved; cache written by apache-tvm 0.27's "
        f"dump_tensor_cache (32 MB shards), files in the page cache; {h.machine_note(results)}."
    )
    return h.markdown_table(header, rows, note)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = h.ours_vs_apache_parser(__doc__, "tensor_cache_bench")
    p.add_argument("--mb", type=int, default=256, help="float32 megabytes of weights (multiple of 4)")
    p.add_argument("--rounds", type=int, default=4, help="children per runtime and encoding")
    p.add_argument("--loads", type=int, default=5, help="timed loads per child")
    args = p.parse_args(argv)
    h.quick_counts(args, mb=16, rounds=1, loads=2)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    start = h.started()
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    env = h.child_env()
    count = max(1, args.mb // 4)
    megabytes = count * MATRIX[0] * MATRIX[1] * 4 / 1e6
    caches: dict[str, Any] = {}
    raw_all: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tensor_cache_bench_") as cwd:
        venvs = h.probe_venvs(pythons, cwd, env)
        for fmt in ("raw", "f32-to-bf16"):
            directory = Path(cwd) / fmt
            write_cache(args.apache_python, directory, count, fmt, cwd, env)
            spec = {
                "task": "tensor_cache_load",
                "dir": str(directory),
                "blocks": args.loads,
                "names": [f"layers.{i}.weight" for i in range(count)],
            }
            t0 = time.perf_counter()
            raw = bench_cache(spec, pythons, args.rounds, cwd, env)
            caches[fmt] = summarize_cache(raw, megabytes)
            raw_all[fmt] = raw
            h.log_pair(fmt, caches[fmt]["ours"]["load_ms"], caches[fmt]["apache"]["load_ms"], "ms", t0)
    targets = h.ratio_targets(
        caches,
        "tensor_cache_load",
        "encoding",
        "x apache-tvm (median ms of vm.builtin.tensor_cache.load)",
        RATIO_LIMIT,
        ratio_key="per_load_median",
    )
    body = {
        "venvs": venvs,
        "config": {"rounds": args.rounds, "loads": args.loads, "megabytes": megabytes},
        "caches": caches,
        "raw": raw_all,
    }
    return h.finish("tensor_cache_bench", args, start, body, targets, render_markdown)


if __name__ == "__main__":
    sys.exit(main())
