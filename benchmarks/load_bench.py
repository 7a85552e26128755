"""Model load path on real models: time and memory, tvm-runtime vs apache-tvm 0.27 vs the floor.

    python benchmarks/load_bench.py --ours-python PY --apache-python PY --models-dir DIR \\
        [--out results/load_bench.json] [--markdown results/load_bench.md]

DIR holds torchvision models compiled by apache-tvm 0.27 with their weights embedded
(benchmarks/make_torchvision_models.py writes them). Each child process, in one venv or the other,
does what a deploy script or a model server does, with the file in the page cache:

    vm = VirtualMachine(tvm.runtime.load_module(path), tvm.cpu()); vm["main"](x)

and reports, from /proc/self/smaps_rollup, how much its resident set (RSS), proportional set
(PSS) and anonymous memory grew after `load_module`, after `VirtualMachine`, after the first
inference and after releasing everything; the times of that first load + VM creation and of
`--loads` more (a warm process, the previous model released first, as a server that reloads
does); and the resident-set growth per cycle over `--rss-cycles` further load + VM + call cycles.
The output is checked against the npz (computed by apache-tvm's runtime) first.

The floor is what reading the file costs at all: `np.fromfile(path)` (read into fresh memory)
and `mmap` + touching every page, in children of their own. Weight bytes are the tensor
constants of the model's executable (ours counts them while loading).

Targets (issue 26), per model: growth after load <= 1.1x the weight bytes with anonymous memory
<= 0.1x; load + VM <= 2x the np.fromfile floor; reload RSS flat (<= 4 KB per cycle). Children
of the variants are interleaved so that machine drift hits all alike.

Processes sharing one model (issue 37): N = 1, 2, 4, 8 children of one variant load the model
at once (load + VM + one inference) and, while all N are alive, report how much their PSS,
anonymous memory and RSS grew; the sum over the N is what a server with N workers pays. Ours
runs with its weight store ($TVM_WEIGHT_CACHE_DIR, a fresh directory per round): the first load
into the empty store (one child) is timed apart from the later ones. Then each child goes idle
(`tvm.runtime.release_idle_memory()`; apache-tvm: its VM allocators' clear and malloc_trim) and
reports again: what N idle workers hold. Targets: total PSS of 4 processes <= 1.5x the weight
bytes (anonymous <= 0.3x), after one inference and idle; a later load + VM <= 2x np.fromfile, the
first <= 3x. Every child of the runs above gets a store of its own too, never ~/.cache.
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
    run_child,
    run_header,
)
from _stats import median, ratio, summarize
from _together import PRELUDE, run_together
from core_bench import machine_info, probe_venv

GROWTH_LIMIT = 1.1  # x weight bytes, after load_module
ANON_LIMIT = 0.1  # x weight bytes, after load_module
FLOOR_LIMIT = 2.0  # x np.fromfile, load + VM
RSS_CYCLE_LIMIT = 4096  # bytes per reload cycle
APACHE_RSS_CYCLES = 5  # its reloads keep every copy: enough to measure that, no more

SHARED_PSS_LIMIT = 1.5  # x weight bytes: total PSS growth of 4 processes
SHARED_ANON_LIMIT = 0.3  # x weight bytes: their total anonymous growth
LATER_LOAD_LIMIT = 2.0  # x np.fromfile: load + VM with the weight store filled
FIRST_LOAD_LIMIT = 3.0  # x np.fromfile: load + VM writing the weight store
SHARED_TARGET_N = 4

# What every child runs after _together.PRELUDE (spec, memory(), grown(), barrier()): the model's
# input and its check.
_MODEL = """
import numpy as np
import tvm
from tvm.runtime.vm import VirtualMachine

data = np.load(spec["npz"])
x = tvm.runtime.tensor(data["x"])
now = time.perf_counter_ns

def check(y):
    y = y[0] if not hasattr(y, "numpy") else y
    if not np.allclose(y.numpy(), data["y"], rtol=1e-4, atol=1e-4):
        raise SystemExit("WRONG RESULT")
"""

_CHILD = (
    PRELUDE
    + _MODEL
    + """

def load():
    return VirtualMachine(tvm.runtime.load_module(spec["artifact"]), tvm.cpu())

gc.collect()
base = memory()
t0 = now(); mod = tvm.runtime.load_module(spec["artifact"]); t1 = now()
after_load = grown(base)
vm = VirtualMachine(mod, tvm.cpu()); t2 = now()
after_vm = grown(base)
y = vm["main"](x)
after_call = grown(base)
check(y)
stats = mod["constant_stats"]() if mod.implements_function("constant_stats") else None
weights = (
    int(stats["copied_bytes"] + stats["aliased_bytes"] + stats["stored_bytes"])
    if stats is not None else None
)
del vm, y, mod
gc.collect()
after_release = grown(base)
load_ms = []
for _ in range(spec["loads"]):
    t = now(); vm = load(); load_ms.append((now() - t) / 1e6)
    del vm
    gc.collect()
cycles = spec["rss_cycles"]
for _ in range(min(10, max(1, cycles // 10))):  # warm-up: allocator pools, first-use caches
    vm = load(); vm["main"](x); del vm
gc.collect()
start = memory()["rss"]
for _ in range(cycles):
    vm = load(); vm["main"](x); del vm
gc.collect()
print(json.dumps({
    "first_load_ms": (t1 - t0) / 1e6, "first_vm_ms": (t2 - t1) / 1e6,
    "first_ms": (t2 - t0) / 1e6, "load_ms": load_ms, "weights": weights,
    "after_load": after_load, "after_vm": after_vm, "after_call": after_call,
    "after_release": after_release,
    "rss_per_cycle": (memory()["rss"] - start) / max(1, cycles),
}))
"""
)

# One of N processes loading the model at once; the barriers (files in spec["sync"]) make all N
# start loading together and measure while all N hold the model.
_SHARED_BODY = (
    _MODEL
    + """
gc.collect()
barrier("ready")
base = memory()
t0 = now()
vm = VirtualMachine(tvm.runtime.load_module(spec["artifact"]), tvm.cpu())
t1 = now()
barrier("loaded")
after_vm = grown(base)  # the weights alone: no inference has run yet
barrier("measured_vm")
check(vm["main"](x))
barrier("called")
grew = grown(base)
barrier("measured")
# Idle between requests: each process gives back the working memory it keeps for the next call
# (ours: release_idle_memory; apache-tvm 0.27 has the VM allocators' clear, and the C library's
# trim is applied to both), so what is left is the weights and the runtime itself.
if hasattr(tvm.runtime, "release_idle_memory"):
    tvm.runtime.release_idle_memory()
else:
    tvm.get_global_func("vm.builtin.memory_manager.clear")()
    import ctypes
    ctypes.CDLL(None).malloc_trim(0)
barrier("released")
idle = grown(base)
barrier("measured_idle")
print(json.dumps({"load_vm_ms": (t1 - t0) / 1e6, **grew, "after_vm": after_vm, "idle": idle}))
"""
)

_FLOOR = """\
import json, mmap, os, sys, time
import numpy as np
spec = json.loads(sys.argv[1])
now = time.perf_counter_ns
fromfile, touch = [], []
for _ in range(spec["loads"]):
    t = now(); a = np.fromfile(spec["artifact"], dtype=np.uint8); fromfile.append((now() - t) / 1e6)
    del a
    t = now()
    with open(spec["artifact"], "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        view = np.frombuffer(m, dtype=np.uint8)
        int(view[:: mmap.PAGESIZE].sum())  # one read per page
        del view
        m.close()
    touch.append((now() - t) / 1e6)
print(json.dumps({"fromfile_ms": fromfile, "mmap_touch_ms": touch}))
"""

PHASES = ("after_load", "after_vm", "after_call", "after_release")


def _scale(size: int, small: int, floor: int) -> int:
    """Repetitions for a model of `size` bytes: `small` for ~50 MB, fewer for larger ones."""
    return max(floor, int(small * 50e6 / max(size, 50e6)))


def bench_model(
    spec: dict[str, Any], pythons: dict[str, str], floor_python: str, rounds: int, cwd: str, env: dict
) -> dict[str, Any]:
    raw: dict[str, Any] = {key: [] for key in pythons}
    raw["floor"] = []
    order = [*pythons, "floor"]
    for r in range(rounds):
        for key in order if r % 2 == 0 else reversed(order):
            if key == "floor":
                _, out = run_child([floor_python, "-c", _FLOOR, json.dumps(spec)], cwd, env)
            else:
                child_spec = dict(spec)
                child_env_ = env
                if key == "apache":
                    # apache-tvm keeps every model it loaded (tvm_ffi.load_module's default): a
                    # thousand cycles of a large one would not fit in memory.
                    child_spec["rss_cycles"] = min(spec["rss_cycles"], APACHE_RSS_CYCLES)
                else:  # a store of the model's own, filled by the first round
                    child_env_ = {
                        **env,
                        "TVM_WEIGHT_CACHE_DIR": str(Path(cwd) / "store" / Path(spec["artifact"]).stem),
                    }
                _, out = run_child([pythons[key], "-c", _CHILD, json.dumps(child_spec)], cwd, child_env_)
            raw[key].append(json.loads(last_line(out)))
    return raw


def bench_shared(
    spec: dict[str, Any], pythons: dict[str, str], rounds: int, counts: Sequence[int], cwd: str, env: dict
) -> dict[str, Any]:
    """Per variant and N, the children's reports; ours also `first`: the load into an empty store."""
    raw: dict[str, Any] = {key: {str(n): [] for n in counts} for key in pythons}
    raw["ours"]["first"] = []
    for r in range(rounds):
        store = tempfile.mkdtemp(prefix="weights_", dir=cwd)  # empty: the first load writes it
        ours_env = {**env, "TVM_WEIGHT_CACHE_DIR": store}
        raw["ours"]["first"] += run_together(pythons["ours"], _SHARED_BODY, spec, 1, cwd, ours_env)
        for n in counts:
            for key in pythons if r % 2 == 0 else reversed(list(pythons)):
                child_env_ = ours_env if key == "ours" else env
                raw[key][str(n)].append(run_together(pythons[key], _SHARED_BODY, spec, n, cwd, child_env_))
    return raw


def summarize_shared(raw: dict[str, Any], weights: int, floor_ms: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("ours", "apache"):
        by_n = {}
        for n, runs in raw[key].items():
            if n == "first":
                continue
            by_n[n] = {
                f"total_{m}": median(sum(c[m] for c in run) for run in runs)
                for m in ("pss", "anonymous", "rss")
            }
            by_n[n]["load_ms"] = summarize(c["load_vm_ms"] for run in runs for c in run).to_dict(3)
            # Before any inference: what the weights alone cost the N processes.
            by_n[n]["total_pss_after_vm"] = median(sum(c["after_vm"]["pss"] for c in run) for run in runs)
            by_n[n]["total_anonymous_after_vm"] = median(
                sum(c["after_vm"]["anonymous"] for c in run) for run in runs
            )
            # Idle: after each process gave back its working memory (release_idle_memory).
            for m in ("pss", "anonymous"):
                by_n[n][f"total_{m}_idle"] = median(sum(c["idle"][m] for c in run) for run in runs)
                by_n[n][f"{m}_idle_vs_weights"] = round(by_n[n][f"total_{m}_idle"] / weights, 4)
            by_n[n]["pss_vs_weights"] = round(by_n[n]["total_pss"] / weights, 4)
            by_n[n]["anonymous_vs_weights"] = round(by_n[n]["total_anonymous"] / weights, 4)
        out[key] = {"by_n": by_n}
    ours = out["ours"]
    ours["first_ms"] = summarize(c["load_vm_ms"] for c in raw["ours"]["first"]).to_dict(3)
    later = ours["by_n"]["1"]["load_ms"]["median"] if "1" in ours["by_n"] else float("nan")
    out["ratios"] = {
        "ours_first_vs_fromfile": round(ratio(ours["first_ms"]["median"], floor_ms), 4),
        "ours_later_vs_fromfile": round(ratio(later, floor_ms), 4),
    }
    return out


def shared_targets(name: str, shared: dict[str, Any]) -> list[dict[str, Any]]:
    at = shared["ours"]["by_n"].get(str(SHARED_TARGET_N))
    checks = [
        (
            "first_load_vs_fromfile",
            shared["ratios"]["ours_first_vs_fromfile"],
            FIRST_LOAD_LIMIT,
            "x np.fromfile",
        ),
        (
            "later_load_vs_fromfile",
            shared["ratios"]["ours_later_vs_fromfile"],
            LATER_LOAD_LIMIT,
            "x np.fromfile",
        ),
    ]
    if at is not None:
        checks += [
            (f"pss_{SHARED_TARGET_N}_processes", at["pss_vs_weights"], SHARED_PSS_LIMIT, "x weight bytes"),
            (
                f"anonymous_{SHARED_TARGET_N}_processes",
                at["anonymous_vs_weights"],
                SHARED_ANON_LIMIT,
                "x weight bytes",
            ),
            (
                f"pss_{SHARED_TARGET_N}_processes_idle",
                at["pss_idle_vs_weights"],
                SHARED_PSS_LIMIT,
                "x weight bytes, after release_idle_memory",
            ),
            (
                f"anonymous_{SHARED_TARGET_N}_processes_idle",
                at["anonymous_idle_vs_weights"],
                SHARED_ANON_LIMIT,
                "x weight bytes, after release_idle_memory",
            ),
        ]
    return [
        {"name": f"{name}.{key}", "value": value, "limit": limit, "unit": unit, "pass": value <= limit}
        for key, value, limit, unit in checks
    ]


def summarize_model(raw: dict[str, Any], size: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    weights = next(r["weights"] for r in raw["ours"] if r["weights"] is not None)
    for key in ("ours", "apache"):
        runs = raw[key]
        entry: dict[str, Any] = {
            "first_ms": summarize(r["first_ms"] for r in runs).to_dict(3),
            "first_load_ms": summarize(r["first_load_ms"] for r in runs).to_dict(3),
            "first_vm_ms": summarize(r["first_vm_ms"] for r in runs).to_dict(3),
            "load_ms": summarize(ms for r in runs for ms in r["load_ms"]).to_dict(3),
            "rss_per_cycle": summarize(r["rss_per_cycle"] for r in runs).to_dict(1),
        }
        for phase in PHASES:
            entry[phase] = {m: median(r[phase][m] for r in runs) for m in ("rss", "pss", "anonymous")}
        out[key] = entry
    floor = {
        "fromfile_ms": summarize(ms for r in raw["floor"] for ms in r["fromfile_ms"]).to_dict(3),
        "mmap_touch_ms": summarize(ms for r in raw["floor"] for ms in r["mmap_touch_ms"]).to_dict(3),
    }
    ours, apache = out["ours"], out["apache"]
    out["floor"] = floor
    out["weights"] = weights
    out["file_bytes"] = size
    out["ratios"] = {
        "ours_load_vm_vs_apache": round(ratio(ours["load_ms"]["median"], apache["load_ms"]["median"]), 4),
        "ours_load_vm_vs_fromfile": round(
            ratio(ours["load_ms"]["median"], floor["fromfile_ms"]["median"]), 4
        ),
        "apache_load_vm_vs_fromfile": round(
            ratio(apache["load_ms"]["median"], floor["fromfile_ms"]["median"]), 4
        ),
        "ours_growth_after_load_vs_weights": round(ours["after_load"]["rss"] / weights, 4),
        "ours_anon_after_load_vs_weights": round(ours["after_load"]["anonymous"] / weights, 4),
        "ours_growth_after_vm_vs_weights": round(ours["after_vm"]["rss"] / weights, 4),
        "apache_growth_after_load_vs_weights": round(apache["after_load"]["rss"] / weights, 4),
    }
    return out


def model_targets(name: str, m: dict[str, Any]) -> list[dict[str, Any]]:
    r = m["ratios"]
    cycle = m["ours"]["rss_per_cycle"]["median"]
    checks = [
        ("growth_after_load", r["ours_growth_after_load_vs_weights"], GROWTH_LIMIT, "x weight bytes (RSS)"),
        ("anonymous_after_load", r["ours_anon_after_load_vs_weights"], ANON_LIMIT, "x weight bytes"),
        ("load_vm_vs_fromfile", r["ours_load_vm_vs_fromfile"], FLOOR_LIMIT, "x np.fromfile (median ms)"),
        ("reload_rss_per_cycle", cycle, RSS_CYCLE_LIMIT, "bytes per load + VM + call cycle"),
    ]
    return [
        {"name": f"{name}.{key}", "value": value, "limit": limit, "unit": unit, "pass": value <= limit}
        for key, value, limit, unit in checks
    ]


def _x(by_n: dict[str, Any], what: str, weights: int) -> str:
    return f"{by_n[f'total_{what}_after_vm'] / weights:.2f}x"


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def render_markdown(results: dict[str, Any]) -> str:
    lines = [
        "| model | weights (MB) | load + VM: ours / apache-tvm 0.27 (ms) | np.fromfile / mmap+touch (ms) "
        "| ours / floor | ours / apache |",
        "|---|---|---|---|---|---|",
    ]
    for name, m in results["models"].items():
        o, a, f, r = m["ours"], m["apache"], m["floor"], m["ratios"]
        lines.append(
            f"| {name} | {_mb(m['weights'])} | {o['load_ms']['median']:.1f} / {a['load_ms']['median']:.1f} "
            f"| {f['fromfile_ms']['median']:.1f} / {f['mmap_touch_ms']['median']:.1f} "
            f"| {r['ours_load_vm_vs_fromfile']:.2f}x | {r['ours_load_vm_vs_apache']:.2f}x |"
        )
    lines += [
        "",
        "Memory growth over the process before loading, MB (RSS / anonymous), ours vs apache-tvm 0.27:",
        "",
        "| model | after load_module | after VirtualMachine | after first inference | after release "
        "| RSS per reload cycle (KB) |",
        "|---|---|---|---|---|---|",
    ]
    for name, m in results["models"].items():
        cells = []
        for phase in PHASES:
            o, a = m["ours"][phase], m["apache"][phase]
            cells.append(
                f"{_mb(o['rss'])} / {_mb(o['anonymous'])} vs {_mb(a['rss'])} / {_mb(a['anonymous'])}"
            )
        ours_kb = m["ours"]["rss_per_cycle"]["median"] / 1e3
        cycle = f"{ours_kb:.2f} vs {m['apache']['rss_per_cycle']['median'] / 1e3:.1f}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {cycle} |")
    shared = {name: m["shared"] for name, m in results["models"].items() if "shared" in m}
    if shared:
        lines += [
            "",
            "N processes serving one model (load + VM + one inference, measured while all N live): "
            "total growth over the N, x the weight bytes, ours vs apache-tvm 0.27; idle: after each "
            "gave its working memory back (ours `tvm.runtime.release_idle_memory()`, apache-tvm "
            "`vm.builtin.memory_manager.clear` + `malloc_trim`):",
            "",
            "| model | N | PSS | anonymous | PSS / anonymous idle "
            "| PSS / anonymous after VM, before inference | load + VM per process (ms, median) |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, sh in shared.items():
            weights = results["models"][name]["weights"]
            for n, o in sh["ours"]["by_n"].items():
                a = sh["apache"]["by_n"][n]
                lines.append(
                    f"| {name} | {n} | {o['pss_vs_weights']:.2f}x vs {a['pss_vs_weights']:.2f}x "
                    f"| {o['anonymous_vs_weights']:.2f}x vs {a['anonymous_vs_weights']:.2f}x "
                    f"| {o['pss_idle_vs_weights']:.2f}x / {o['anonymous_idle_vs_weights']:.2f}x vs "
                    f"{a['pss_idle_vs_weights']:.2f}x / {a['anonymous_idle_vs_weights']:.2f}x "
                    f"| {_x(o, 'pss', weights)} / {_x(o, 'anonymous', weights)} vs "
                    f"{_x(a, 'pss', weights)} / {_x(a, 'anonymous', weights)} "
                    f"| {o['load_ms']['median']:.1f} vs {a['load_ms']['median']:.1f} |"
                )
        lines += [
            "",
            "| model | first load + VM, empty store (ms) | later, N = 1 (ms) | np.fromfile (ms) "
            "| first / floor | later / floor |",
            "|---|---|---|---|---|---|",
        ]
        for name, sh in shared.items():
            m = results["models"][name]
            lines.append(
                f"| {name} | {sh['ours']['first_ms']['median']:.1f} "
                f"| {sh['ours']['by_n']['1']['load_ms']['median']:.1f} "
                f"| {m['floor']['fromfile_ms']['median']:.1f} "
                f"| {sh['ratios']['ours_first_vs_fromfile']:.2f}x "
                f"| {sh['ratios']['ours_later_vs_fromfile']:.2f}x |"
            )
    cfg, mach = results["config"], results["machine"]
    verdicts = ", ".join(f"{t['name']} {'PASS' if t['pass'] else 'FAIL'}" for t in results["targets"])
    lines += [
        "",
        f"Medians of {cfg['rounds']} fresh children per variant and model, interleaved; warm loads and "
        "reload cycles scaled down for the larger models (see the JSON). Files in the page cache; "
        f"{mach.get('cpu_model', '?')}, {mach.get('nproc', '?')} CPUs. Targets: {verdicts}.",
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = ours_vs_apache_parser(__doc__, "load_bench")
    p.add_argument("--models-dir", type=Path, required=True, help="make_torchvision_models.py output")
    p.add_argument("--floor-python", help="python with numpy for the floor (default: --ours-python)")
    p.add_argument("--rounds", type=int, default=4, help="children per variant and model")
    p.add_argument("--loads", type=int, default=10, help="timed warm loads per child (~50 MB model)")
    p.add_argument("--rss-cycles", type=int, default=1000, help="reload cycles per child (~50 MB model)")
    p.add_argument("--models", nargs="*", help="only these (file stems)")
    p.add_argument(
        "--processes",
        type=lambda text: [int(n) for n in text.split(",") if n],
        default=[1, 2, 4, 8],
        help="process counts of the shared-load runs (comma-separated; empty: skip them)",
    )
    p.add_argument("--shared-rounds", type=int, default=2, help="rounds of the shared-load runs")
    p.add_argument(
        "--min-rss-cycles",
        type=int,
        default=20,
        help="fewest reload cycles for a large model (each runs an inference; ViT-B/16: ~1 min here)",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    t_begin = time.perf_counter()
    load_before = os.getloadavg()
    models_dir = args.models_dir.resolve()
    sos = sorted(models_dir.glob("*.so"))
    if args.models:
        sos = [so for so in sos if so.stem in args.models]
    if not sos:
        raise SystemExit(f"no models in {models_dir}: run benchmarks/make_torchvision_models.py first")
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    env = child_env()
    models: dict[str, Any] = {}
    raw_all: dict[str, Any] = {}
    plans: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="load_bench_") as cwd:
        venvs = {key: probe_venv(py, cwd, env) for key, py in pythons.items()}
        for so in sos:
            size = so.stat().st_size
            spec = {
                "artifact": str(so),
                "npz": str(so.with_suffix(".npz")),
                "loads": _scale(size, args.loads, 3),
                "rss_cycles": _scale(size, args.rss_cycles, args.min_rss_cycles),
            }
            plans[so.stem] = {"loads": spec["loads"], "rss_cycles": spec["rss_cycles"]}
            t0 = time.perf_counter()
            raw = bench_model(spec, pythons, args.floor_python or args.ours_python, args.rounds, cwd, env)
            models[so.stem] = summarize_model(raw, size)
            raw_all[so.stem] = raw
            m = models[so.stem]
            if args.processes:
                shared_raw = bench_shared(spec, pythons, args.shared_rounds, args.processes, cwd, env)
                m["shared"] = summarize_shared(shared_raw, m["weights"], m["floor"]["fromfile_ms"]["median"])
                raw["shared"] = shared_raw
                pss = m["shared"]["ours"]["by_n"].get(str(SHARED_TARGET_N), {}).get("pss_vs_weights")
                first = m["shared"]["ours"]["first_ms"]["median"]
                log(
                    f"  {so.stem:20s} shared: first load {first:.1f} ms, "
                    f"PSS of {SHARED_TARGET_N}: {pss}x weights"
                )
            log(
                f"  {so.stem:20s} ours {m['ours']['load_ms']['median']:7.2f} ms"
                f"  apache {m['apache']['load_ms']['median']:7.2f} ms"
                f"  fromfile {m['floor']['fromfile_ms']['median']:7.2f} ms"
                f"  growth after load {m['ratios']['ours_growth_after_load_vs_weights']:.3f}x weights"
                f"  ({time.perf_counter() - t0:.0f}s)"
            )
    targets = [t for name, m in models.items() for t in model_targets(name, m)]
    targets += [t for name, m in models.items() if "shared" in m for t in shared_targets(name, m["shared"])]
    results: dict[str, Any] = {
        **run_header("load_bench", t_begin, load_before, machine_info()),
        "venvs": venvs,
        "config": {
            "rounds": args.rounds,
            "per_model": plans,
            "processes": args.processes,
            "shared_rounds": args.shared_rounds,
        },
        "models": models,
        "targets": targets,
        "all_targets_pass": all(t["pass"] for t in targets),
        "raw": raw_all,
    }
    publish(results, args.out, args.markdown, render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
