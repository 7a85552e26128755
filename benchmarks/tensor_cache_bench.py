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

Shared row (the float32 cache): N = 1, 2, 4 processes of each runtime load it at once and read
every weight (one value per page, no copy), then their PSS and anonymous growth are summed while
all N hold it (_together.py). Target: ours, 4 processes, total PSS <= 1.5x the weight bytes (the
shards are mapped, so the 4 share one page-cache copy; apache-tvm 0.27 copies the weights into
each process).
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
import _together
from _stats import median, ratio, summarize

RATIO_LIMIT = 1.0
MATRIX = (1024, 1024)  # 4 MB of float32 per weight
SHARED_PSS_LIMIT = 1.5  # x weight bytes: total PSS growth of SHARED_TARGET_N processes
SHARED_TARGET_N = 4
SHARED_COUNTS = (1, 2, 4)

# One of N processes: loads the cache with the others, then reads every weight as serving would
# (one float per 4 KB page, through a zero-copy numpy view).
_SHARED_BODY = """
import numpy as np
import tvm
load = tvm.get_global_func("vm.builtin.tensor_cache.load")
get = tvm.get_global_func("vm.builtin.tensor_cache.get")
gc.collect()
barrier("ready")
base = memory()
t0 = time.perf_counter_ns()
load(spec["dir"], 1, 0)
load_ms = (time.perf_counter_ns() - t0) / 1e6
after_load = grown(base)
checksum = 0.0
for name in spec["names"]:
    checksum += float(np.from_dlpack(get(name)).reshape(-1)[::1024].sum(dtype=np.float64))
load_read_ms = (time.perf_counter_ns() - t0) / 1e6
barrier("read")
after_read = grown(base)
barrier("measured")
print(json.dumps({"load_ms": load_ms, "load_read_ms": load_read_ms, "after_load": after_load,
                  "after_read": after_read,
                  "checksum": checksum}))
"""


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


def bench_shared(
    spec: dict[str, Any], pythons: dict[str, str], rounds: int, cwd: str, env: dict
) -> dict[str, Any]:
    """Per runtime and N, each round's N reports (runtimes alternating, order reversed every
    other round)."""
    raw: dict[str, Any] = {key: {str(n): [] for n in SHARED_COUNTS} for key in pythons}
    store = {**env, "TVM_WEIGHT_CACHE_DIR": str(Path(cwd) / "weights")}
    for r in range(rounds):
        for n in SHARED_COUNTS:
            for key in pythons if r % 2 == 0 else reversed(list(pythons)):
                run = _together.run_together(pythons[key], _SHARED_BODY, spec, n, cwd, store)
                if len({round(c["checksum"], 3) for c in run}) != 1:
                    raise SystemExit(f"WRONG RESULT: {key}'s processes read different weights")
                raw[key][str(n)].append(run)
    if raw["ours"]["1"][-1][0]["checksum"] != raw["apache"]["1"][-1][0]["checksum"]:
        raise SystemExit("WRONG RESULT: the two runtimes read different weights")
    return raw


def summarize_shared(raw: dict[str, Any], weight_bytes: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, by_n in raw.items():
        out[key] = {}
        for n, runs in by_n.items():
            read = _together.totals(runs, "after_read")
            loaded = _together.totals(runs, "after_load")
            out[key][n] = {
                "total_pss": read["pss"],
                "total_anonymous": read["anonymous"],
                "total_anonymous_after_load": loaded["anonymous"],
                "pss_vs_weights": round(read["pss"] / weight_bytes, 4),
                "anonymous_vs_weights": round(read["anonymous"] / weight_bytes, 4),
                "load_ms": summarize(c["load_ms"] for run in runs for c in run).to_dict(3),
                "load_read_ms": summarize(c["load_read_ms"] for run in runs for c in run).to_dict(3),
            }
    return out


def shared_target(shared: dict[str, Any]) -> dict[str, Any]:
    value = shared["ours"][str(SHARED_TARGET_N)]["pss_vs_weights"]
    return {
        "name": "tensor_cache_shared_pss",
        "processes": SHARED_TARGET_N,
        "measured": value,
        "limit": SHARED_PSS_LIMIT,
        "comparison": "<=",
        "unit": "x weight bytes (total PSS growth of the processes, after reading every weight)",
        "pass": value <= SHARED_PSS_LIMIT,
    }


def render_shared(results: dict[str, Any]) -> str:
    shared, cfg = results["shared"], results["config"]
    header = [
        "processes",
        "total PSS, ours",
        "apache-tvm 0.27",
        "anonymous, ours",
        "apache-tvm 0.27",
        "load + first read, ours (ms)",
        "apache-tvm 0.27 (ms)",
    ]
    rows = [
        [
            n,
            f"{shared['ours'][n]['pss_vs_weights']:.2f}x",
            f"{shared['apache'][n]['pss_vs_weights']:.2f}x",
            f"{shared['ours'][n]['anonymous_vs_weights']:.2f}x",
            f"{shared['apache'][n]['anonymous_vs_weights']:.2f}x",
            h.cell(shared["ours"][n]["load_read_ms"], 1),
            h.cell(shared["apache"][n]["load_read_ms"], 1),
        ]
        for n in shared["ours"]
    ]
    target = next(t for t in results["targets"] if t["name"] == "tensor_cache_shared_pss")
    note = (
        f"N processes load the float32 cache ({cfg['megabytes']:.0f} MB) at once and read every "
        f"weight (one value per page; ours maps the shards, so a load reads nothing and the "
        f"first read faults the pages in from the page cache); growth of their PSS and anonymous "
        f"memory summed, in weight bytes, and the time to load + read, per process, median of "
        f"{cfg['shared_rounds']} rounds. Target: {SHARED_TARGET_N} processes of ours <= "
        f"{SHARED_PSS_LIMIT}x: {'met' if target['pass'] else 'MISSED'}."
    )
    return h.markdown_table(header, rows, note)


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
        f"dump_tensor_cache (32 MB shards), files in the page cache; ours maps the raw shards on "
        f"the CPU, so its raw load reads nothing (the N-process table has load + first read); "
        f"{h.machine_note(results)}."
    )
    table = h.markdown_table(header, rows, note)
    return table + ("\n" + render_shared(results) if "shared" in results else "")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = h.ours_vs_apache_parser(__doc__, "tensor_cache_bench")
    p.add_argument("--mb", type=int, default=256, help="float32 megabytes of weights (multiple of 4)")
    p.add_argument("--rounds", type=int, default=4, help="children per runtime and encoding")
    p.add_argument("--loads", type=int, default=5, help="timed loads per child")
    p.add_argument("--shared-rounds", type=int, default=2, help="rounds of the N-process row")
    args = p.parse_args(argv)
    h.quick_counts(args, mb=16, rounds=1, loads=2, shared_rounds=1)
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
            if fmt == "raw":
                t0 = time.perf_counter()
                raw_all["shared"] = bench_shared(spec, pythons, args.shared_rounds, cwd, env)
                shared = summarize_shared(raw_all["shared"], megabytes * 1e6)
                for n, ours in shared["ours"].items():
                    peer = shared["apache"][n]["pss_vs_weights"]
                    h.log(f"  {n} processes: PSS {ours['pss_vs_weights']:.2f}x weights, apache {peer:.2f}x")
                h.log(f"  shared row ({time.perf_counter() - t0:.0f}s)")
    targets = h.ratio_targets(
        caches,
        "tensor_cache_load",
        "encoding",
        "x apache-tvm (median ms of vm.builtin.tensor_cache.load)",
        RATIO_LIMIT,
        ratio_key="per_load_median",
    )
    targets.append(shared_target(shared))
    body = {
        "venvs": venvs,
        "config": {
            "rounds": args.rounds,
            "loads": args.loads,
            "megabytes": megabytes,
            "shared_rounds": args.shared_rounds,
        },
        "caches": caches,
        "shared": shared,
        "raw": raw_all,
    }
    return h.finish("tensor_cache_bench", args, start, body, targets, render_markdown)


if __name__ == "__main__":
    sys.exit(main())
