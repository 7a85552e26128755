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
* matmul: `cuda/matmul.so` (64x32 @ 32x48, shared-memory tiles), batches of 100 then a sync;
* mlp: the Relax VM model `relax/mlp_cuda.so` called through `vm["main"]`, then a sync;
* first call cold / warm: a fresh process from `import tvm` to the first MLP result, with an empty
  kernel cache and again with the cache the cold process left (apache-tvm keeps no cache: both
  of its first calls compile);
* CuPy (where importable): `cupy.add` of 4096 floats then a synchronize, the launch+sync row.

`--apache-pythonpath DIR` runs apache-tvm from a `--target` install (runtime-only, as the prepared
GPU check carries it: `TVM_USE_RUNTIME_LIB=1`, its `libtvm_runtime_cuda.so` and the pip
`libcudart.so.13` loaded by the worker).  `--fake-driver LIB` measures only our runtime's host path
into the fake CUDA driver (tests/fakes/fake_cuda.c), without result checks: used by
`ci/gpu_check/run.py --fake` to prove the benchmark before a GPU is spent on it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _stats import ratio, summarize  # noqa: E402

DEFAULT_ARTIFACTS = HERE.parent / "tests" / "artifacts"
DEFAULT_APACHE_PYTHON = "/work/venv-tvm027/bin/python"
BATCH = 100
SERIES = ("launch", "launch+sync", "matmul", "mlp")
FIRST_CALL = ("first call cold", "first call warm")


# ----------------------------------------------------------------------------- worker


def _load_apache_cuda(tvm) -> None:
    """apache-tvm run runtime-only registers no CUDA device API: load its sidecar by hand, after
    the pip wheel's libcudart.so.13 that it links."""
    import ctypes

    import tvm_ffi

    import tvm.support.nvcc  # noqa: F401 - registers tvm_callback_cuda_compile (source artifacts)

    if tvm_ffi.get_global_func("device_api.cuda", allow_missing=True) is not None:
        return
    for entry in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_runtime/lib"):
            cudart = Path(entry) / sub / "libcudart.so.13"
            if cudart.exists():
                ctypes.CDLL(str(cudart), mode=ctypes.RTLD_GLOBAL)
                break
    ctypes.CDLL(str(Path(tvm.__file__).parent / "lib" / "libtvm_runtime_cuda.so"), mode=ctypes.RTLD_GLOBAL)
    # Its compile callback asks the compiler's current Target for the architecture, which a
    # runtime-only install lacks: name the device's, as 0.27's target detection would
    # (arch-specific sm_XXa from compute capability 9.0 on).
    from tvm.support import nvcc

    major, minor = tvm.cuda(0).compute_version.split(".")
    arch = f"sm_{major}{minor}" + ("a" if int(major) >= 9 else "")

    def compile_for_this_device(code, *_):
        return nvcc.compile_cuda(code, target_format="cubin", arch=arch, compiler="nvrtc")

    tvm_ffi.register_global_func("tvm_callback_cuda_compile", compile_for_this_device, override=True)


def _worker(impl: str, artifacts: Path, samples: int, check: bool) -> dict:
    """Runs inside either interpreter; only uses the API both runtimes share."""
    import numpy as np

    import tvm

    if impl == "apache-tvm":
        _load_apache_cuda(tvm)
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
    vm, mlp_args, mlp_expected = _mlp(tvm, artifacts, dev)

    # Correctness first (this also compiles the source and loads the modules).
    tiny(a, b, c)
    mm(ta, tb, tc)
    out = vm["main"](*mlp_args)
    dev.sync()
    if check:
        assert np.allclose(c.numpy(), x + y, atol=1e-5), "tiny_add is wrong"
        assert np.allclose(tc.numpy(), am @ bm, rtol=1e-4, atol=1e-4), "matmul is wrong"
        assert np.allclose(out.numpy(), mlp_expected, rtol=1e-3, atol=1e-3), "the MLP is wrong"

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
        "mlp": single(lambda: vm["main"](*mlp_args)),
    }
    result["runtime"] = getattr(tvm, "__version__", "?")
    result["device"] = str(dev.device_name)
    return result


def _mlp(tvm, artifacts: Path, dev):
    """The Relax MLP of the shared manifest: its VM, inputs on ``dev`` and numpy's answer."""
    import numpy as np

    manifest = json.loads((artifacts / "manifest.json").read_text())
    (case,) = [c for c in manifest["cases"] if c["target"] == "cuda" and c["name"] == "mlp"]
    call = case["calls"][0]
    data = np.load(artifacts / call["npz"])
    vm_module = importlib.import_module("tvm.runtime.vm")  # apache-tvm does not import it eagerly
    vm = vm_module.VirtualMachine(tvm.runtime.load_module(str(artifacts / case["file"])), dev)
    args = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
    return vm, args, data[call["outputs"][0]]


def _first_call(impl: str, artifacts: Path, check: bool) -> dict:
    """In a fresh process: from `import tvm` to the first MLP result on the GPU, in ms."""
    t0 = time.perf_counter()
    import tvm

    if impl == "apache-tvm":
        _load_apache_cuda(tvm)
    dev = tvm.cuda(0)
    vm, args, expected = _mlp(tvm, artifacts, dev)
    out = vm["main"](*args)
    dev.sync()
    result = out.numpy()
    ms = (time.perf_counter() - t0) * 1e3
    if check:
        import numpy as np

        assert np.allclose(result, expected, rtol=1e-3, atol=1e-3), "the MLP is wrong"
    return {"ms": ms}


def _cupy_worker(samples: int) -> dict:
    """CuPy's elementwise add of 4096 floats then a synchronize (the launch+sync row)."""
    import cupy

    a = cupy.arange(4096, dtype=cupy.float32)
    b, c = a + 1, cupy.empty_like(a)
    cupy.add(a, b, out=c)
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(samples * 10):
        t0 = time.perf_counter_ns()
        cupy.add(a, b, out=c)
        cupy.cuda.Device().synchronize()
        times.append((time.perf_counter_ns() - t0) / 1e3)
    return {"launch+sync": times, "runtime": f"cupy {cupy.__version__}", "device": "cuda:0"}


def _run_worker(
    python: str, impl: str, artifacts: Path, samples: int, env: dict | None = None, mode: str = "worker"
) -> dict:
    cmd = [python, str(Path(__file__).resolve()), f"--{mode}", impl, "--artifacts", str(artifacts)]
    cmd += ["--samples", str(samples)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
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
    parser.add_argument("--apache-pythonpath", help="PYTHONPATH of a runtime-only apache-tvm install")
    parser.add_argument("--fake-driver", help="measure our host path into this fake CUDA driver")
    parser.add_argument("--worker", choices=["tvm-runtime", "apache-tvm", "cupy"], help=argparse.SUPPRESS)
    parser.add_argument("--first-call", choices=["tvm-runtime", "apache-tvm"], help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, default=30, help=argparse.SUPPRESS)
    args = parser.parse_args()

    check = os.environ.get("TVM_BENCH_NO_CHECK") != "1"
    if args.worker == "cupy":
        print(json.dumps(_cupy_worker(args.samples)))
        return 0
    if args.worker:
        print(json.dumps(_worker(args.worker, args.artifacts, args.samples, check)))
        return 0
    if args.first_call:
        print(json.dumps(_first_call(args.first_call, args.artifacts, check)))
        return 0

    if args.fake_driver:
        os.environ["TVM_CUDA_DRIVER_LIBRARY"] = args.fake_driver
        os.environ["TVM_BENCH_NO_CHECK"] = "1"  # the fake runs no kernel: nothing to compare
    reason = _no_gpu_reason()
    if reason is not None:
        report = {"benchmark": "cuda", "skipped": reason}
        print(json.dumps(report, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        return 0

    impls = {"tvm-runtime": sys.executable}
    envs: dict[str, dict | None] = {"tvm-runtime": None}
    notes = {}
    if args.fake_driver:
        notes["mode"] = f"fake driver {args.fake_driver}: host path only, results not checked"
    elif os.path.exists(args.apache_python):
        impls["apache-tvm"] = args.apache_python
        if args.apache_pythonpath:
            envs["apache-tvm"] = {
                **os.environ,
                "PYTHONPATH": args.apache_pythonpath,
                "TVM_USE_RUNTIME_LIB": "1",
            }
    else:
        notes["apache-tvm"] = f"skipped: no interpreter at {args.apache_python} (see --apache-python)"

    rounds, samples = (2, 10) if args.quick else (6, 30)
    raw: dict[str, dict[str, list[float]]] = {name: {s: [] for s in (*SERIES, *FIRST_CALL)} for name in impls}
    meta: dict[str, dict] = {}
    caches = Path(tempfile.mkdtemp(prefix="cuda-bench-caches-"))
    for r in range(rounds):
        order = list(impls)[r % len(impls) :] + list(impls)[: r % len(impls)]
        for name in order:
            out = _run_worker(impls[name], name, args.artifacts, samples, envs.get(name))
            if "error" in out:
                notes[name] = f"failed: {out['error']}"
                continue
            meta[name] = {"runtime": out["runtime"], "device": out["device"]}
            for s in SERIES:
                raw[name][s].extend(out[s])
            # First calls: a fresh, empty kernel cache, then the one that process filled.
            env = dict(envs.get(name) or os.environ)
            env["TVM_CUDA_CACHE_DIR"] = str(caches / f"{name}-{r}")
            for s in FIRST_CALL:
                first = _run_worker(impls[name], name, args.artifacts, 1, env, mode="first-call")
                if "error" in first:
                    notes[f"{name} {s}"] = f"failed: {first['error']}"
                else:
                    raw[name][s].append(first["ms"] * 1e3)
    shutil.rmtree(caches, ignore_errors=True)
    if not args.fake_driver:
        try:
            out = _run_worker(sys.executable, "cupy", args.artifacts, samples)
        except subprocess.TimeoutExpired:
            out = {"error": "timed out"}
        if "error" in out:
            notes["cupy"] = f"not measured: {out['error'].splitlines()[-1]}"
        else:
            raw["cupy"] = {"launch+sync": out["launch+sync"]}
            meta["cupy"] = {"runtime": out["runtime"], "device": out["device"]}

    results = {}
    for name, series in raw.items():
        results[name] = {s: summarize(v).to_dict(3) for s, v in series.items() if v}
    results = {k: v for k, v in results.items() if v}
    ratios = {}
    for peer in ("apache-tvm", "cupy"):
        if "tvm-runtime" in results and peer in results:
            key = "" if peer == "apache-tvm" else f" vs {peer}"
            for s, per in results[peer].items():
                if s in results["tvm-runtime"]:
                    ratios[s + key] = round(ratio(results["tvm-runtime"][s]["median"], per["median"]), 3)
    report = {
        "benchmark": "cuda",
        "unit": "microseconds per call (first calls: microseconds from import to the first result)",
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
