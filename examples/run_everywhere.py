"""Run the TVM-compiled artifacts on every available device and check them against numpy.

This is the deploy path a user writes against apache-tvm 0.27's runtime API, unchanged:
`tvm.runtime.load_module` + `tvm.runtime.tensor` + `mod[func](...)` for kernels and
`tvm.runtime.vm.VirtualMachine` for whole (Relax) models.
Usage: python examples/run_everywhere.py [--artifacts tests/artifacts] [--cold-and-warm]

"first call" is the first call of each kernel or model in the process, compiles included; with
--cold-and-warm every case runs in two fresh processes over initially empty kernel caches (ours and
the drivers': PoCL's, Mesa's), showing what the persistent caches save the second process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import tvm

DEVICES = {"cpu": tvm.cpu, "opencl": tvm.opencl, "vulkan": tvm.vulkan, "cuda": tvm.cuda, "webgpu": tvm.webgpu}
# Extra manifests next to the main one (Vulkan fixtures are packed from GLSL, see their README).
MANIFESTS = ("manifest.json", "vulkan/manifest.json", "webgpu/manifest.json")


def missing_capability(case: dict[str, Any], dev: tvm.runtime.Device) -> str | None:
    """A device property the case needs but the device lacks (e.g. fp16 on PoCL)."""
    if dev.dlpack_device_type() == 1:
        return None
    needs = list(case.get("needs", []))
    if "fp16" in case["name"] and "supports_float16" not in needs:
        needs.append("supports_float16")
    prop = tvm.get_global_func("runtime.GetDeviceTargetProperty")
    for need in needs:
        if not prop(dev, need):
            return need
    return None


def make_args(call: dict[str, Any], data: Any, dev: tvm.runtime.Device) -> tuple[list, list]:
    args, outputs = [], []
    for arg in call["args"]:
        if arg["kind"] == "input":
            args.append(tvm.runtime.tensor(data[arg["key"]], dev))
        elif arg["kind"] == "output":
            out = tvm.runtime.empty(arg["shape"], arg["dtype"], dev)
            args.append(out)
            outputs.append((out, data[arg["key"]]))
        else:
            args.append(arg["value"])
    return args, outputs


def timed(fn: Any, dev: tvm.runtime.Device, repeat: int) -> tuple[Any, float, float]:
    """(result of the first call, first-call seconds incl. any JIT, median later-call seconds)."""
    start = time.perf_counter()
    result = fn()
    dev.sync()
    first = time.perf_counter() - start
    later = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        dev.sync()
        later.append(time.perf_counter() - start)
    return result, first, statistics.median(later)


def run_kernel(case: dict[str, Any], root: Path, dev: tvm.runtime.Device) -> tuple[bool, float, float]:
    """(outputs match, the process's first call of the kernel, its later calls)."""
    func = tvm.runtime.load_module(str(root / case["file"]))[case["function"]]
    ok, firsts, steady = True, [], 0.0
    for call in case["calls"]:
        args, outputs = make_args(call, np.load(root / call["npz"]), dev)
        _, first, steady = timed(lambda args=args: func(*args), dev, repeat=20)
        firsts.append(first)
        ok &= all(np.allclose(o.numpy(), e, rtol=case["rtol"], atol=case["atol"]) for o, e in outputs)
    return ok, firsts[0], steady


def run_model(case: dict[str, Any], root: Path, dev: tvm.runtime.Device) -> tuple[bool, float, float]:
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(root / case["file"])), dev)
    ok, firsts, steady = True, [], 0.0
    for call in case["calls"]:
        data = np.load(root / call["npz"])
        inputs = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
        result, first, steady = timed(lambda inputs=inputs: vm["main"](*inputs), dev, repeat=20)
        firsts.append(first)
        results = list(result) if case.get("output_is_tuple") else [result]
        expected = [data[key] for key in call["outputs"]]
        ok &= len(results) == len(expected) and all(
            np.allclose(r.numpy(), e, rtol=case["rtol"], atol=case["atol"]) for r, e in zip(results, expected)
        )
    return ok, firsts[0], steady


def load_cases(root: Path) -> list[dict[str, Any]]:
    cases = []
    for name in MANIFESTS:
        path = root / name
        if path.exists():
            cases.extend(json.loads(path.read_text())["cases"])
    return cases


def run_all(root: Path) -> list[dict[str, Any]]:
    """Every case on every available device, in this process: one row each."""
    rows = []
    cases = load_cases(root)
    for target, make_device in DEVICES.items():
        dev = make_device(0)
        if not dev.exist:
            rows.append({"device": str(dev), "skipped": "no backend or driver: see python -m tvm.backend"})
            continue
        for case in cases:
            if case["target"] != target:
                continue
            row = {
                "device": str(dev),
                "name": case["name"],
                "kind": "model" if case["kind_of_case"] == "vm" else "kernel",
            }
            lacking = missing_capability(case, dev)
            if lacking:
                rows.append({**row, "skipped": f"device lacks {lacking}"})
                continue
            try:
                runner = run_model if row["kind"] == "model" else run_kernel
                ok, first, steady = runner(case, root, dev)
                status = "ok" if ok else "MISMATCH"
            except Exception as err:  # noqa: BLE001 - report every device, then fail
                ok, first, steady, status = False, 0.0, 0.0, f"ERROR {type(err).__name__}: {err}"
            rows.append(
                {**row, "ok": ok, "status": status, "first_ms": first * 1e3, "steady_us": steady * 1e6}
            )
    return rows


def fresh_cache_env(root: str) -> dict[str, str]:
    """Empty kernel caches for a process: ours (TVM_*_CACHE_DIR) and the drivers' own."""
    env = {f"TVM_{b}_CACHE_DIR": f"{root}/tvm-{b.lower()}" for b in ("OPENCL", "VULKAN", "CUDA")}
    env.update(POCL_CACHE_DIR=f"{root}/pocl", MESA_SHADER_CACHE_DIR=f"{root}/mesa")
    return env


def cold_and_warm(root: Path) -> list[dict[str, Any]]:
    """Runs every case in a fresh process twice over the same, initially empty, caches: the first
    call of the first process compiles every kernel, the second process's finds them cached."""
    passes = []
    with tempfile.TemporaryDirectory(prefix="tvm-demo-caches-") as caches:
        env = {**os.environ, **fresh_cache_env(caches)}
        for _ in ("cold", "warm"):
            cmd = [sys.executable, __file__, "--artifacts", str(root), "--json-rows"]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            passes.append(json.loads(proc.stdout.splitlines()[-1]))
    cold, warm = passes
    for row, again in zip(cold, warm):
        if "skipped" not in row:
            row["warm_first_ms"] = again["first_ms"]
            row["ok"] &= again["ok"]
            row["status"] = row["status"] if row["status"] != "ok" else again["status"]
    return cold


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--artifacts", default=str(Path(__file__).resolve().parent.parent / "tests" / "artifacts")
    )
    parser.add_argument(
        "--cold-and-warm",
        action="store_true",
        help="run each case in two fresh processes over initially empty kernel caches: cold and warm",
    )
    parser.add_argument("--json-rows", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.artifacts)
    if args.json_rows:
        print(json.dumps(run_all(root)))
        return 0
    rows = cold_and_warm(root) if args.cold_and_warm else run_all(root)
    first = "cold first" if args.cold_and_warm else "first call"
    warm = f" {'warm first':>12}" if args.cold_and_warm else ""
    print(f"{'device':<10} {'artifact':<18} {'kind':<7} {'result':<8} {first:>12}{warm} {'next calls':>12}")
    for row in rows:
        if "skipped" in row:
            name, kind = row.get("name", "-"), row.get("kind", "-")
            print(f"{row['device']:<10} {name:<18} {kind:<7} skipped  ({row['skipped']})")
            continue
        warm = f" {row['warm_first_ms']:>9.3f} ms" if "warm_first_ms" in row else ""
        print(
            f"{row['device']:<10} {row['name']:<18} {row['kind']:<7} {row['status']:<8} "
            f"{row['first_ms']:>9.3f} ms{warm} {row['steady_us']:>9.1f} us"
        )
    return 1 if any(not row.get("ok", True) for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
