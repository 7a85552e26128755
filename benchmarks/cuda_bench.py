"""tvm-runtime-cuda vs apache-tvm 0.27's own CUDA runtime, same artifacts, same GPU, same run.

    python benchmarks/cuda_bench.py [--json out.json] [--quick] [--artifacts DIR]
                                    [--apache-python /path/to/venv-tvm027/bin/python]

The orchestrating interpreter must have the tvm-runtime wheels (with tvm-runtime-cuda[nvrtc]).
apache-tvm runs in its own venv (it ships its own `tvm` package), which needs:

    pip install apache-tvm==0.27.0.post1 cuda-bindings nvidia-cuda-nvrtc nvidia-cuda-runtime \
        nvidia-cuda-cccl numpy

(its libtvm_runtime_cuda.so needs libcudart.so.13, and its `tvm_callback_cuda_compile` compiles the
artifacts' CUDA source with NVRTC through cuda-bindings).  Default: $APACHE_TVM_PYTHON, else
/work/venv-tvm027/bin/python when it exists.  Without a GPU the script prints a
`{"skipped": ...}` JSON and exits 0.

Both runtimes execute the identical apache-tvm 0.27 artifacts through the same Python API
(`tvm.runtime.load_module`, `tvm.runtime.tensor`, `Device.sync`), each in worker processes of its
own interpreter; workers alternate (ours, apache, ours, ...) so drift hits both alike.  Measured,
per call, in microseconds (median, p10, p90; ratio ours / apache-tvm of the medians, target <= 1):

* launch: `cuda/tiny_add.so` (4 elements) called back to back, one sync per batch of 100 calls:
  host-side cost of host code -> __tvm_set_device -> kernel packed function -> cuLaunchKernel;
* launch+sync: one call then `dev.sync()`: the latency of a tiny kernel round trip;
* matmul: `cuda/matmul.so` (64x32 @ 32x48, shared-memory tiles), batches of 100 then a sync.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _stats import ratio, summarize  # noqa: E402

DEFAULT_ARTIFACTS = HERE.parent / "tests" / "artifacts"
DEFAULT_APACHE_PYTHON = "/work/venv-tvm027/bin/python"
BATCH = 100
SERIES = ("launch", "launch+sync", "matmul")


# ----------------------------------------------------------------------------- worker


def _worker(impl: str, artifacts: Path, samples: int) -> dict:
    """Runs inside either interpreter; only uses the API both runtimes share."""
    import numpy as np

    import tvm

    if impl == "apache-tvm":
        import tvm.support.nvcc  # noqa: F401 - registers tvm_callback_cuda_compile (source artifacts)
    dev = tvm.cuda(0)
    if not dev.exist:
        return {"error": "no CUDA device"}
    now = time.perf_counter_ns
    rng = np.random.default_rng(0)

    tiny = tvm.runtime.load_module(str(artifacts / "cuda" / "tiny_add.so"))["tiny_add"]
    x, y = rng.standard_normal(4).astype("float32"), rng.standard_normal(4).astype("float32")
    a, b = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)
    c = tvm.runtime.empty((4,), "float32", dev)
    mm = tvm.runtime.load_module(str(artifacts / "cuda" / "matmul.so"))["matmul"]
    am = rng.standard_normal((64, 32)).astype("float32")
    bm = rng.standard_normal((32, 48)).astype("float32")
    ta, tb = tvm.runtime.tensor(am, dev), tvm.runtime.tensor(bm, dev)
    tc = tvm.runtime.empty((64, 48), "float32", dev)

    # Correctness first (this also compiles the source and loads the modules).
    tiny(a, b, c)
    mm(ta, tb, tc)
    dev.sync()
    assert np.allclose(c.numpy(), x + y, atol=1e-5), "tiny_add is wrong"
    assert np.allclose(tc.numpy(), am @ bm, rtol=1e-4, atol=1e-4), "matmul is wrong"

    def batched(fn) -> list[float]:
        out = []
        for _ in range(samples):
            t0 = now()
            for _ in range(BATCH):
                fn()
            dev.sync()
            out.append((now() - t0) / 1e3 / BATCH)
        return out

    def single(fn) -> list[float]:
        out = []
        for _ in range(samples * 10):
            t0 = now()
            fn()
            dev.sync()
            out.append((now() - t0) / 1e3)
        return out

    for _ in range(3):  # warm caches and clocks
        batched(lambda: tiny(a, b, c))
    result = {
        "launch": batched(lambda: tiny(a, b, c)),
        "launch+sync": single(lambda: tiny(a, b, c)),
        "matmul": batched(lambda: mm(ta, tb, tc)),
    }
    result["runtime"] = getattr(tvm, "__version__", "?")
    result["device"] = str(dev.device_name)
    return result


def _run_worker(python: str, impl: str, artifacts: Path, samples: int) -> dict:
    cmd = [python, str(Path(__file__).resolve()), "--worker", impl, "--artifacts", str(artifacts)]
    cmd += ["--samples", str(samples)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip()[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- orchestration


def _no_gpu_reason() -> str | None:
    try:
        import tvm
    except Exception as err:  # noqa: BLE001 - reported, never raised
        return f"tvm-runtime is not importable: {err}"
    if tvm.cuda(0).exist:
        return None
    status = tvm.get_global_func("runtime.DeviceDriverStatus")(2)
    return f"no GPU: {status}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (smoke test)")
    parser.add_argument("--artifacts", type=Path, default=DEFAULT_ARTIFACTS)
    parser.add_argument("--apache-python", default=os.environ.get("APACHE_TVM_PYTHON", DEFAULT_APACHE_PYTHON))
    parser.add_argument("--worker", choices=["tvm-runtime", "apache-tvm"], help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, default=30, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        print(json.dumps(_worker(args.worker, args.artifacts, args.samples)))
        return 0

    reason = _no_gpu_reason()
    if reason is not None:
        report = {"benchmark": "cuda", "skipped": reason}
        print(json.dumps(report, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        return 0

    impls = {"tvm-runtime": sys.executable}
    notes = {}
    if os.path.exists(args.apache_python):
        impls["apache-tvm"] = args.apache_python
    else:
        notes["apache-tvm"] = f"skipped: no interpreter at {args.apache_python} (see --apache-python)"

    rounds, samples = (2, 10) if args.quick else (6, 30)
    raw: dict[str, dict[str, list[float]]] = {name: {s: [] for s in SERIES} for name in impls}
    meta: dict[str, dict] = {}
    for r in range(rounds):
        order = list(impls)[r % len(impls) :] + list(impls)[: r % len(impls)]
        for name in order:
            out = _run_worker(impls[name], name, args.artifacts, samples)
            if "error" in out:
                notes[name] = f"failed: {out['error']}"
                continue
            meta[name] = {"runtime": out["runtime"], "device": out["device"]}
            for s in SERIES:
                raw[name][s].extend(out[s])

    results = {}
    for name, series in raw.items():
        if all(series[s] for s in SERIES):
            results[name] = {s: summarize(series[s]).to_dict(3) for s in SERIES}
    ratios = {}
    if "tvm-runtime" in results and "apache-tvm" in results:
        for s in SERIES:
            ratios[s] = round(
                ratio(results["tvm-runtime"][s]["median"], results["apache-tvm"][s]["median"]), 3
            )
    report = {
        "benchmark": "cuda",
        "unit": "microseconds per call",
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "runtimes": meta,
        "results": results,
        "ratio_ours_over_apache_tvm": ratios,
        "target": "<= 1.0",
        "notes": notes,
    }
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
