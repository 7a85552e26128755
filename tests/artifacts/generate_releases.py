"""Generate the same fixtures with each apache-tvm release on PyPI: ``tests/artifacts/releases``.

A fixture generator, never a runtime or CI dependency.  Run it once per release, each in its own
venv (0.25 imports only with apache-tvm-ffi <= 0.1.12)::

    python3 -m venv /work/venvs/tvm025 && /work/venvs/tvm025/bin/pip install \\
        apache-tvm==0.25.0.post1 apache-tvm-ffi==0.1.12 numpy
    python3 -m venv /work/venvs/tvm026 && /work/venvs/tvm026/bin/pip install \\
        apache-tvm==0.26.0 apache-tvm-ffi==0.1.15 numpy
    /work/venvs/tvm025/bin/python tests/artifacts/generate_releases.py
    /work/venvs/tvm026/bin/python tests/artifacts/generate_releases.py
    /work/venvs/tvm027/bin/python tests/artifacts/generate_releases.py

Each run writes ``releases/<apache-tvm version>/``: ``manifest.json`` (generate.py's schema, paths
relative to that directory, plus the compiler's versions), ``<case>.npz`` (inputs and numpy's
expected outputs, shared by the targets) and ``<target>/<case>.so.gz`` (the exported library,
gzip-compressed: a third of the size; the tests decompress it).  The cases are generate.py's
own, chosen to cover one of each convention a release may change:

* kernels: ``parallel_scale`` (CPU: ``__TVMBackendParallelLaunch``), ``workspace`` (a 2 MiB
  intermediate from ``__TVMBackendAllocWorkspace``, on the host and on the device),
  ``multi_out`` (two outputs, a float and an int scalar), ``dyn_muladd`` (a symbolic shape);
  GPU host code looks its kernels up through the context symbols (0.25:
  ``__TVMBackendGetFuncFromEnv``; 0.26+: ``__TVMFFIEnvModLookupFromImports``);
* Relax models: ``mlp`` (weights passed as parameters), ``mlp_dyn`` (symbolic batch, a tuple
  output), ``convnet`` (weights embedded as VM constants; a workspace on the CPU).

Targets: ``llvm`` (cpu), ``opencl``, ``cuda`` (sm_80, CUDA C++ source), ``webgpu`` (WGSL),
``rocm`` (gfx90a hsaco; needs the AMDGPU bitcode and ld.lld, see generate_rocm.py; skipped
without them) and ``metal`` (MSL source; kernels only: the models crash apache-tvm's Metal
compile on Linux, as generate_metal.py records).  The wheels cannot emit Vulkan (no
``target.build.vulkan``).  GPU schedules: generate.py's OpenCL ones for opencl/webgpu/metal, its
CUDA ones for cuda/rocm.  CPU artifacts run under the release's own runtime before they are
written; for GPU ones the unscheduled computation does ("cpu-equivalent").  Deterministic seeds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # noqa: E402 - the shared case definitions and writers
import tvm_ffi  # noqa: E402

import tvm  # noqa: E402
from tvm import relax, s_tir  # noqa: E402

KERNELS = {
    "cpu": ("parallel_scale", "workspace", "multi_out", "dyn_muladd"),
    "gpu": ("workspace", "multi_out", "dyn_muladd"),
}
MODELS = {"cpu": ("mlp", "mlp_dyn", "convnet"), "gpu": ("mlp_dyn", "convnet")}
DEVICE_TYPE = {"cpu": 1, "cuda": 2, "opencl": 4, "metal": 8, "rocm": 10, "webgpu": 15}
# Which of generate.py's schedules each GPU target takes.
SCHEDULE_OF = {"opencl": "opencl", "webgpu": "opencl", "metal": "opencl", "cuda": "cuda", "rocm": "cuda"}
MODEL_TARGETS = ("cpu", "opencl", "cuda", "webgpu", "rocm")


def make_target(target: str) -> tvm.target.Target:
    if target == "cpu":
        return tvm.target.Target("llvm")
    if target == "cuda":
        return tvm.target.Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")
    if target == "rocm":
        return tvm.target.Target({"kind": "rocm", "mcpu": "gfx90a"}, host="llvm")
    return tvm.target.Target(target, host="llvm")


def rocm_available() -> bool:
    """Whether this machine has what apache-tvm's rocm codegen links with (generate_rocm.py)."""
    import generate_rocm

    try:
        generate_rocm.ensure_rocm_prefix()
    except (OSError, RuntimeError, SystemExit) as err:
        print(f"  rocm skipped: {err}")
        return False
    return shutil.which("ld.lld") is not None


def release_compat() -> None:
    """0.25's relax.TensorType is the old DynTensorType(ndim, dtype): use TensorStructInfo."""
    try:
        relax.TensorType([1], "float32")
    except TypeError:
        g._f32 = lambda shape: relax.TensorStructInfo(shape, "float32")


def device_module_kind(mod: Any) -> str | None:
    for m in g.walk_modules(mod):
        if m.kind not in ("llvm", "relax.VMExecutable", "library"):
            return m.kind
    return None


def export(
    out: Path, target: str, case: Any, built: Any, kind: str, run_cpu: Any, manifest: list[dict[str, Any]]
) -> None:
    """Export `built`, run it under this release's runtime when it is a CPU artifact
    (`run_cpu(loaded, call)` gives its outputs), and record it in the manifest."""
    rel_so, rel_npz = f"{target}/{case.name}.so", f"{case.name}.npz"
    built.export_library(str(out / rel_so))
    verified = "cpu-equivalent"
    if target == "cpu":
        loaded = tvm.runtime.load_module(str(out / rel_so))
        for call in case.calls:
            g.check(rel_so, run_cpu(loaded, call), call, case.rtol, case.atol)
        verified = "artifact"
    e: dict[str, Any] = {
        "name": case.name,
        "kind_of_case": kind,
        "function": "main" if kind == "vm" else case.name,
    }
    if kind == "vm":
        e["output_is_tuple"] = case.output_is_tuple
    e.update(
        calls=[g.call_json(rel_npz, c, vm=kind == "vm") for c in case.calls],
        rtol=case.rtol,
        atol=case.atol,
        description=case.description,
        target=target,
        # Stored gzip-compressed (a third of the size); the tests decompress them.
        file=rel_so + ".gz",
        verified=verified,
        **g.symbol_info(out / rel_so),
        **g.inspect_built(built.mod),
    )
    device_kind = device_module_kind(built.mod)
    if device_kind is not None:
        e["device_module"] = device_kind
    manifest.append(e)
    print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes  {verified}")


def build_kernels(out: Path, targets: list[str], manifest: list[dict[str, Any]]) -> None:
    cases = {c.name: c for c in g.kernel_cases()}
    for name in KERNELS["cpu"]:
        case = cases[name]
        cpu_ref = tvm.compile(case.func, target=make_target("cpu"))
        for call in case.calls:
            g.check(
                f"{name} (cpu reference)", g.run_kernel_cpu(cpu_ref[name], call), call, case.rtol, case.atol
            )
        g.save_npz(out / f"{name}.npz", g.merged_arrays(case.calls))
        for target in targets:
            if name not in KERNELS["cpu" if target == "cpu" else "gpu"]:
                continue
            sch = s_tir.Schedule(case.func)
            schedule = case.schedule.get("cpu" if target == "cpu" else SCHEDULE_OF[target])
            if schedule is not None:
                schedule(sch)
            built = tvm.compile(sch.mod, target=make_target(target))
            export(
                out, target, case, built, "kernel", lambda m, c, n=name: g.run_kernel_cpu(m[n], c), manifest
            )


def build_models(out: Path, targets: list[str], manifest: list[dict[str, Any]]) -> None:
    for case in g.model_cases():
        g.save_npz(out / f"{case.name}.npz", g.merged_arrays(case.calls))
        for target in targets:
            if target not in MODEL_TARGETS or case.name not in MODELS["cpu" if target == "cpu" else "gpu"]:
                continue
            built = tvm.compile(case.mod, target=make_target(target))
            run = lambda m, c, t=case.output_is_tuple: g.run_vm_cpu(m, c, t)  # noqa: E731
            export(out, target, case, built, "vm", run, manifest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "releases")
    ns = parser.parse_args(argv)
    out = ns.out.resolve() / tvm.__version__
    if shutil.which("g++") is None or shutil.which("nm") is None:
        print("error: g++ and nm are required", file=sys.stderr)
        return 2
    shutil.rmtree(out, ignore_errors=True)
    release_compat()
    targets = ["cpu", "opencl", "cuda", "webgpu", "metal"]
    if rocm_available():
        targets.append("rocm")
    for t in targets:
        (out / t).mkdir(parents=True)
    print(f"apache-tvm {tvm.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, numpy {np.__version__}")
    manifest: list[dict[str, Any]] = []
    build_kernels(out, targets, manifest)
    build_models(out, targets, manifest)
    doc = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_releases.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "paths_relative_to": "the directory holding manifest.json",
        "targets": {
            t: {"device_type": DEVICE_TYPE[t], "tvm_target": json.loads(str(make_target(t)))} for t in targets
        },
        "cases": manifest,
    }
    (out / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
    for so in sorted(out.glob("*/*.so")):
        # mtime 0 and the bare name: the same library compresses to the same bytes.
        with (so.parent / (so.name + ".gz")).open("wb") as raw:
            with gzip.GzipFile(so.name, "wb", 9, raw, mtime=0) as dst:
                dst.write(so.read_bytes())
        so.unlink()
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {len(manifest)} cases, {total} bytes to {out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TVM_LOG_DEBUG", "0")
    sys.exit(main())
