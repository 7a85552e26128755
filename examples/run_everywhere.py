"""Run apache-tvm 0.27 artifacts on every available device and check them against numpy.

This is the deploy path a user writes against apache-tvm's runtime API, unchanged:
`tvm.runtime.load_module` + `tvm.runtime.tensor` + `mod[func](...)`.
Usage: python examples/run_everywhere.py [--artifacts tests/artifacts]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import tvm

DEVICES = {"cpu": tvm.cpu, "opencl": tvm.opencl, "vulkan": tvm.vulkan, "cuda": tvm.cuda}


def supports_float16(dev: tvm.runtime.Device) -> bool:
    if dev.dlpack_device_type() == 1:
        return True
    prop = tvm.get_global_func("runtime.GetDeviceTargetProperty")
    return bool(prop(dev, "supports_float16"))


def run_case(case: dict, root: Path, dev: tvm.runtime.Device) -> tuple[bool, float]:
    mod = tvm.runtime.load_module(str(root / case["file"]))
    func = mod[case["function"]]
    ok = True
    elapsed = 0.0
    for call in case["calls"]:
        data = np.load(root / call["npz"])
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
        start = time.perf_counter()
        func(*args)
        dev.sync()
        elapsed += time.perf_counter() - start
        ok &= all(np.allclose(o.numpy(), e, rtol=case["rtol"], atol=case["atol"]) for o, e in outputs)
    return ok, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--artifacts", default=str(Path(__file__).resolve().parent.parent / "tests" / "artifacts")
    )
    args = parser.parse_args()
    root = Path(args.artifacts)
    manifest = json.loads((root / "manifest.json").read_text())
    failures = 0
    print(f"{'device':<10} {'artifact':<16} {'result':<8} time")
    for target, make_device in DEVICES.items():
        dev = make_device(0)
        if not dev.exist:
            print(
                f"{str(dev):<10} {'-':<16} {'skipped':<8} (no backend or driver: see python -m tvm.backend)"
            )
            continue
        for case in manifest["cases"]:
            if case["target"] != target or case["kind_of_case"] != "kernel":
                continue
            if "fp16" in case["name"] and not supports_float16(dev):
                print(f"{str(dev):<10} {case['name']:<16} {'skipped':<8} (device has no fp16 support)")
                continue
            try:
                ok, elapsed = run_case(case, root, dev)
                status = "ok" if ok else "MISMATCH"
            except Exception as err:  # noqa: BLE001 - report every device, then fail
                ok, elapsed, status = False, 0.0, f"ERROR {type(err).__name__}: {err}"
            failures += not ok
            print(f"{str(dev):<10} {case['name']:<16} {status:<8} {elapsed * 1e3:.3f} ms")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
