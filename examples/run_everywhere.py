"""Run the TVM-compiled artifacts on every available device and check them against numpy.

This is the deploy path a user writes against apache-tvm 0.27's runtime API, unchanged:
`tvm.runtime.load_module` + `tvm.runtime.tensor` + `mod[func](...)` for kernels and
`tvm.runtime.vm.VirtualMachine` for whole (Relax) models.
Usage: python examples/run_everywhere.py [--artifacts tests/artifacts]
"""

from __future__ import annotations

import argparse
import json
import statistics
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
    func = tvm.runtime.load_module(str(root / case["file"]))[case["function"]]
    ok, first, steady = True, 0.0, 0.0
    for call in case["calls"]:
        args, outputs = make_args(call, np.load(root / call["npz"]), dev)
        _, first, steady = timed(lambda args=args: func(*args), dev, repeat=20)
        ok &= all(np.allclose(o.numpy(), e, rtol=case["rtol"], atol=case["atol"]) for o, e in outputs)
    return ok, first, steady


def run_model(case: dict[str, Any], root: Path, dev: tvm.runtime.Device) -> tuple[bool, float, float]:
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(root / case["file"])), dev)
    ok, first, steady = True, 0.0, 0.0
    for call in case["calls"]:
        data = np.load(root / call["npz"])
        inputs = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
        result, first, steady = timed(lambda inputs=inputs: vm["main"](*inputs), dev, repeat=20)
        results = list(result) if case.get("output_is_tuple") else [result]
        expected = [data[key] for key in call["outputs"]]
        ok &= len(results) == len(expected) and all(
            np.allclose(r.numpy(), e, rtol=case["rtol"], atol=case["atol"]) for r, e in zip(results, expected)
        )
    return ok, first, steady


def load_cases(root: Path) -> list[dict[str, Any]]:
    cases = []
    for name in MANIFESTS:
        path = root / name
        if path.exists():
            cases.extend(json.loads(path.read_text())["cases"])
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--artifacts", default=str(Path(__file__).resolve().parent.parent / "tests" / "artifacts")
    )
    args = parser.parse_args()
    root = Path(args.artifacts)
    cases = load_cases(root)
    failures = 0
    print(f"{'device':<10} {'artifact':<18} {'kind':<7} {'result':<8} {'first call':>12} {'next calls':>12}")
    for target, make_device in DEVICES.items():
        dev = make_device(0)
        if not dev.exist:
            reason = "no backend or driver: see python -m tvm.backend"
            print(f"{str(dev):<10} {'-':<18} {'-':<7} skipped  ({reason})")
            continue
        for case in cases:
            if case["target"] != target:
                continue
            kind = "model" if case["kind_of_case"] == "vm" else "kernel"
            lacking = missing_capability(case, dev)
            if lacking:
                print(f"{str(dev):<10} {case['name']:<18} {kind:<7} skipped  (device lacks {lacking})")
                continue
            try:
                runner = run_model if kind == "model" else run_kernel
                ok, first, steady = runner(case, root, dev)
                status = "ok" if ok else "MISMATCH"
            except Exception as err:  # noqa: BLE001 - report every device, then fail
                ok, first, steady, status = False, 0.0, 0.0, f"ERROR {type(err).__name__}: {err}"
            failures += not ok
            print(
                f"{str(dev):<10} {case['name']:<18} {kind:<7} {status:<8} "
                f"{first * 1e3:>9.3f} ms {steady * 1e6:>9.1f} us"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
