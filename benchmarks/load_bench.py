"""Model load path on real models: tvm-runtime vs apache-tvm 0.27, and memory over reload cycles.

    python benchmarks/load_bench.py --ours-python PY --apache-python PY --models-dir DIR \\
        [--out results/load_bench.json] [--markdown results/load_bench.md]

DIR holds torchvision models compiled by apache-tvm 0.27 with their weights embedded
(benchmarks/make_torchvision_models.py writes them). Each child process, in one venv or the other,
runs what a deploy script or a model server does, with the file in the page cache:

    vm = VirtualMachine(tvm.runtime.load_module(path), tvm.cpu()); vm["main"](x)

checks the output against the npz (computed by apache-tvm's runtime), then times `--loads`
more load_module + VirtualMachine cycles (the previous model released first, as a server that
reloads does), and reports the resident-set growth per cycle over `--rss-cycles` further cycles.
The first load of a process is reported apart (it also pays for the first dlopen of the
runtime's own dependencies). Children of the two venvs are interleaved (ours, apache, then
apache, ours, ...) so that machine drift hits both alike. Target from issue 17: load +
VirtualMachine median <= 1.0x apache-tvm for every model.
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
    child_env,
    last_line,
    log,
    ours_vs_apache_parser,
    publish,
    ratio_targets,
    run_child,
    run_header,
)
from _stats import median, ratio, summarize
from core_bench import machine_info, probe_venv

RATIO_LIMIT = 1.0

_CHILD = """\
import gc, json, os, sys, time
import numpy as np
import tvm
from tvm.runtime.vm import VirtualMachine

spec = json.loads(sys.argv[1])
data = np.load(spec["npz"])
x = tvm.runtime.tensor(data["x"])
now = time.perf_counter_ns

def load():
    return VirtualMachine(tvm.runtime.load_module(spec["artifact"]), tvm.cpu())

def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

t = now(); vm = load(); first_ms = (now() - t) / 1e6
t = now(); y = vm["main"](x); call_ms = (now() - t) / 1e6
y = y[0] if not hasattr(y, "numpy") else y
if not np.allclose(y.numpy(), data["y"], rtol=1e-4, atol=1e-4):
    raise SystemExit("WRONG RESULT")
del vm, y
gc.collect()
load_ms = []
for _ in range(spec["loads"]):
    t = now(); vm = load(); load_ms.append((now() - t) / 1e6)
    del vm
    gc.collect()
base = rss()
for _ in range(spec["rss_cycles"]):
    vm = load(); vm["main"](x); del vm
gc.collect()
print(json.dumps({"first_ms": first_ms, "call_ms": call_ms, "load_ms": load_ms,
                  "rss_per_cycle": (rss() - base) / max(1, spec["rss_cycles"])}))
"""


def bench_model(spec: dict[str, Any], pythons: dict[str, str], rounds: int, cwd: str, env: dict) -> dict:
    raw = {
        key: {"first_ms": [], "call_ms": [], "load_ms": [], "child_medians_ms": [], "rss_per_cycle": []}
        for key in pythons
    }
    order = list(pythons)
    for r in range(rounds):
        for key in order if r % 2 == 0 else reversed(order):
            _, out = run_child([pythons[key], "-c", _CHILD, json.dumps(spec)], cwd, env)
            rec = json.loads(last_line(out))
            raw[key]["first_ms"].append(rec["first_ms"])
            raw[key]["call_ms"].append(rec["call_ms"])
            raw[key]["load_ms"].extend(rec["load_ms"])
            raw[key]["child_medians_ms"].append(median(rec["load_ms"]))
            raw[key]["rss_per_cycle"].append(rec["rss_per_cycle"])
    return raw


def summarize_model(raw: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    ours, ref = raw["ours"], raw["apache"]
    paired = [ratio(a, b) for a, b in zip(ours["child_medians_ms"], ref["child_medians_ms"])]
    out: dict[str, Any] = {key: {k: summarize(v).to_dict(3) for k, v in r.items()} for key, r in raw.items()}
    out["ratio_ours_vs_apache"] = {
        "per_call_median": round(ratio(median(ours["load_ms"]), median(ref["load_ms"])), 4),
        "paired_child_median": round(median(paired), 4),
        "first_load_median": round(ratio(median(ours["first_ms"]), median(ref["first_ms"])), 4),
    }
    return out


def render_markdown(results: dict[str, Any]) -> str:
    lines = [
        "| model | weights | load + VM, ours (ms) | apache-tvm 0.27 (ms) | ratio | target "
        "| first load in a process: ours / apache (ms) | RSS per reload cycle: ours / apache |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def cell(s: dict[str, float]) -> str:
        return f"{s['median']:.2f} ({s['p10']:.2f}-{s['p90']:.2f})"

    for label, m in results["models"].items():
        r = m["ratio_ours_vs_apache"]["per_call_median"]
        verdict = "PASS" if r <= RATIO_LIMIT else "FAIL"
        mb = results["sizes"][label] / 1e6
        lines.append(
            f"| {label} | {mb:.1f} MB | {cell(m['ours']['load_ms'])} | {cell(m['apache']['load_ms'])} | "
            f"{r:.3f}x | <= {RATIO_LIMIT}x {verdict} | "
            f"{m['ours']['first_ms']['median']:.1f} / {m['apache']['first_ms']['median']:.1f} | "
            f"{m['ours']['rss_per_cycle']['median'] / 1e3:.1f} KB / "
            f"{m['apache']['rss_per_cycle']['median'] / 1e3:.1f} KB |"
        )
    cfg, mach = results["config"], results["machine"]
    lines += [
        "",
        f"median (p10-p90) of {cfg['rounds']} children x {cfg['loads']} loads per variant, interleaved; "
        f"RSS growth over {cfg['rss_cycles']} load + VM + call cycles per child; "
        f"{mach.get('cpu_model', '?')}, {mach.get('nproc', '?')} CPUs. Files in the page cache.",
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = ours_vs_apache_parser(__doc__, "load_bench")
    p.add_argument("--models-dir", type=Path, required=True, help="make_torchvision_models.py output")
    p.add_argument("--rounds", type=int, default=6, help="children per variant and model")
    p.add_argument("--loads", type=int, default=20, help="timed loads per child")
    p.add_argument("--rss-cycles", type=int, default=200, help="reload cycles for the RSS growth")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    t_begin = time.perf_counter()
    load_before = os.getloadavg()
    models_dir = args.models_dir.resolve()
    sos = sorted(models_dir.glob("*.so"))
    if not sos:
        raise SystemExit(f"no models in {models_dir}: run benchmarks/make_torchvision_models.py first")
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    env = child_env()
    models: dict[str, Any] = {}
    raw_all: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="load_bench_") as cwd:
        venvs = {key: probe_venv(py, cwd, env) for key, py in pythons.items()}
        for so in sos:
            spec = {
                "artifact": str(so),
                "npz": str(so.with_suffix(".npz")),
                "loads": args.loads,
                "rss_cycles": args.rss_cycles,
            }
            t0 = time.perf_counter()
            raw = bench_model(spec, pythons, args.rounds, cwd, env)
            models[so.stem] = summarize_model(raw)
            raw_all[so.stem] = raw
            m = models[so.stem]
            log(
                f"  {so.stem:20s} ours {m['ours']['load_ms']['median']:7.2f} ms"
                f"  apache {m['apache']['load_ms']['median']:7.2f} ms"
                f"  ratio {m['ratio_ours_vs_apache']['per_call_median']:.3f}"
                f"  ({time.perf_counter() - t0:.0f}s)"
            )
    targets = ratio_targets(
        models,
        "load_and_vm_creation",
        "model",
        "x apache-tvm (median ms of load_module + VirtualMachine)",
        RATIO_LIMIT,
    )
    results: dict[str, Any] = {
        **run_header("load_bench", t_begin, load_before, machine_info()),
        "venvs": venvs,
        "config": {"rounds": args.rounds, "loads": args.loads, "rss_cycles": args.rss_cycles},
        "sizes": {so.stem: so.stat().st_size for so in sos},
        "models": models,
        "targets": targets,
        "all_targets_pass": all(t["pass"] for t in targets),
        "raw": raw_all,
    }
    publish(results, args.out, args.markdown, render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
