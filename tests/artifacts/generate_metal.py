"""Generate the Metal test artifacts under ``tests/artifacts/metal``.

A fixture generator, not part of the runtime: run it with apache-tvm 0.27 (see ``generate.py``)::

    /work/venvs/apache/bin/python tests/artifacts/generate_metal.py [--out DIR]

It compiles, for apache-tvm 0.27's ``metal`` target (MSL device code, LLVM host code for the
build machine, exported on Linux):

* the TIR kernels of ``generate.py`` that make sense on a GPU (add, add_fp16, matmul with shared
  memory, row_sum, dyn_muladd with a symbolic shape, workspace (an intermediate allocated with
  TVMBackendAllocWorkspace), multi_out (two outputs, a float32 and an int32 scalar), tiny_add)
  with the OpenCL GPU schedules, plus ``scale64``, whose scalars are a float32 and an int64
  (the 8-byte slots of the packed POD struct);
* ``add_metallib``: the add kernel in the ``metallib`` format.  apache-tvm writes that format only
  when a ``tvm_callback_metal_compile`` callback (xcrun on a Mac) compiles the MSL; none exists
  here, so this generator registers one that returns a stand-in library: the magic ``MTLB`` then
  the kernel names, NUL-separated (what tests/fakes/fake_metal.c accepts as a
  metallib).  The module around it (fmt, function table, code map) is apache-tvm's own;
* no Relax model: apache-tvm 0.27.0.post1 segfaults compiling generate.py's models (mlp,
  mlp_dyn, convnet) for Metal on Linux (in Tensorize, from the dlight GPU schedules); the
  manifest's ``not_built`` records that.

Inputs and expected outputs come from numpy (the same arrays as ``generate.py``); the
unscheduled computation is also run on CPU by apache-tvm's runtime and checked against numpy.
apache-tvm's Linux runtime cannot run Metal modules, so the MSL itself is only checked on a Mac;
the tests run these artifacts against a fake Metal with CPU references.  Deterministic.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # noqa: E402 - the shared case definitions and writers
import tvm_ffi  # noqa: E402

import tvm  # noqa: E402
from tvm import s_tir, te  # noqa: E402

TARGET = "metal"
DEVICE_TYPE = 8  # kDLMetal
KERNELS = ("add", "add_fp16", "matmul", "row_sum", "dyn_muladd", "workspace", "multi_out", "tiny_add")
# apache-tvm 0.27.0.post1 segfaults building every Relax model of generate.py for target metal
# on Linux (SIGSEGV inside s_tir Tensorize, reached from the default pipeline's dlight GPU
# schedules); a crash cannot be caught, so the models are recorded in `not_built` instead.
MODELS: tuple[str, ...] = ()
MODEL_CRASH = (
    "apache-tvm 0.27.0.post1 crashes (SIGSEGV in tvm::s_tir::Tensorize, from the default "
    "pipeline's dlight GPU schedules) compiling this model for target metal on Linux"
)
METALLIB_MAGIC = b"MTLB"


def make_target() -> tvm.target.Target:
    return tvm.target.Target("metal", host="llvm")


def case_scale64() -> g.KernelCase:
    name, n = "scale64", 300
    a = te.placeholder((n,), "float32", name="A")
    alpha = te.var("alpha", "float32")
    shift = te.var("shift", "int64")
    b = te.compute((n,), lambda i: a[i] * alpha + shift.astype("float32"), name="B")
    rng = g.rng_for(name)
    x = g.uniform(rng, (n,))
    alpha_v, shift_v = -2.5, 7
    call = g.Call(
        {"a": x, "b": x * np.float32(alpha_v) + np.float32(shift_v)},
        [
            g.arg_input("a"),
            g.arg_scalar(alpha_v, "float32"),
            g.arg_scalar(shift_v, "int64"),
            g.arg_output("b"),
        ],
    )
    return g.KernelCase(
        name,
        f"B[{n}] = A * alpha + float(shift) (alpha: float32, shift: int64): the POD struct holds "
        "a 4-byte and an 8-byte scalar, each in an 8-byte slot",
        g.finalize(name, te.create_prim_func([a, alpha, shift, b])),
        [call],
        1e-6,
        1e-6,
        targets=(TARGET,),
        schedule={TARGET: g.sched_elementwise("B")},
    )


def kernel_cases() -> list[g.KernelCase]:
    cases = [c for c in g.kernel_cases() if c.name in KERNELS]
    for c in cases:
        # The OpenCL schedules (shared memory, 64-thread row reductions) fit Metal as well.
        c.schedule[TARGET] = c.schedule["opencl"]
        c.notes[TARGET] = c.notes.get("opencl", "")
    return [*cases, case_scale64()]


def metal_kernels(mod: Any) -> list[str]:
    names = []
    for m in g.walk_modules(mod):
        if m.kind == "metal":
            names += re.findall(r"kernel void (\w+)\(", m.inspect_source())
    return sorted(set(names))


def entry_common(out: Path, rel_so: str, built: Any, kernels: list[str]) -> dict[str, Any]:
    info = g.inspect_built(built.mod)
    info["device_module"] = "metal"
    info["device_kernels"] = kernels
    return {**g.symbol_info(out.parent / rel_so), **info}


def fake_metallib(source: str, _target: Any = None) -> bytes:
    """tvm_callback_metal_compile: the stand-in metallib of one kernel's MSL (see the docstring)."""
    names = re.findall(r"kernel void (\w+)\(", source)
    return METALLIB_MAGIC + b"".join(n.encode() + b"\0" for n in names)


def build_kernel(
    out: Path, manifest: list[dict[str, Any]], case: g.KernelCase, name: str, metallib: bool
) -> None:
    sch = s_tir.Schedule(case.func)
    case.schedule[TARGET](sch)
    if metallib:
        tvm.register_global_func("tvm_callback_metal_compile", fake_metallib, override=True)
    try:
        built = tvm.compile(sch.mod, target=make_target())
    finally:
        if metallib:
            tvm_ffi.registry.remove_global_func("tvm_callback_metal_compile")
    rel_so, rel_npz = f"metal/{name}.so", f"metal/{name}.npz"
    built.export_library(str(out.parent / rel_so))
    g.save_npz(out.parent / rel_npz, g.merged_arrays(case.calls))
    kernels = metal_kernels(built.mod) if not metallib else [f"{case.name}_kernel"]
    description = case.description + case.notes.get(TARGET, "")
    if metallib:
        description += "; the metal module has fmt 'metallib' (a stand-in library per kernel)"
    manifest.append(
        {
            "name": name,
            "target": TARGET,
            "kind_of_case": "kernel",
            "file": rel_so,
            "function": case.name,
            "module_format": "metallib" if metallib else "metal",
            "calls": [g.call_json(rel_npz, c, vm=False) for c in case.calls],
            "rtol": case.rtol,
            "atol": case.atol,
            "description": description,
            "verified": "cpu-equivalent",
            **entry_common(out, rel_so, built, kernels),
        }
    )
    print(f"  {rel_so:24s} {(out.parent / rel_so).stat().st_size:8d} bytes")


def build_kernels(out: Path, manifest: list[dict[str, Any]]) -> None:
    for case in kernel_cases():
        cpu_ref = tvm.compile(case.func, target=g.make_target("cpu"))
        for call in case.calls:
            got = g.run_kernel_cpu(cpu_ref[case.name], call)
            g.check(f"{case.name} (cpu reference)", got, call, case.rtol, case.atol)
        build_kernel(out, manifest, case, case.name, metallib=False)
        if case.name == "add":
            build_kernel(out, manifest, case, "add_metallib", metallib=True)


def build_models(out: Path, manifest: list[dict[str, Any]], not_built: list[dict[str, str]]) -> None:
    for case in g.model_cases():
        if case.name not in MODELS:
            not_built.append(
                {
                    "name": case.name,
                    "why": MODEL_CRASH
                    if case.name in ("mlp", "mlp_dyn")
                    else "not tried (the MLPs crash the compiler already)",
                }
            )
            continue
        g.check_model_on_cpu(out, case)
        try:
            built = tvm.compile(case.mod, target=make_target())
        except Exception as err:  # noqa: BLE001 - recorded in the manifest, not fatal
            not_built.append({"name": case.name, "why": f"{type(err).__name__}: {str(err).splitlines()[0]}"})
            continue
        kernels = metal_kernels(built.mod)
        details = functools.partial(entry_common, kernels=kernels)
        entry = g.gpu_model_entry(out, case, built, TARGET, details)
        manifest.append(entry)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "metal",
        help="output directory, named metal (default: tests/artifacts/metal)",
    )
    ns = parser.parse_args(argv)
    out: Path = ns.out.resolve()
    if out.name != "metal":
        parser.error("--out must name a directory called metal (paths are recorded as metal/...)")
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.so"), *out.glob("*.npz")]:
        stale.unlink()
    print(f"apache-tvm {tvm.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, numpy {np.__version__}")
    manifest: list[dict[str, Any]] = []
    not_built: list[dict[str, str]] = []
    build_kernels(out, manifest)
    build_models(out, manifest, not_built)
    doc = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_metal.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        # The same paths as tests/artifacts/manifest.json's, so the shared test helpers take these cases.
        "paths_relative_to": "tests/artifacts, the parent of the directory holding manifest.json",
        "targets": {TARGET: {"device_type": DEVICE_TYPE, "tvm_target": json.loads(str(make_target()))}},
        "cases": manifest,
        "not_built": not_built,
    }
    (out / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir() if p.suffix in (".so", ".npz"))
    print(f"wrote {len(manifest)} cases, {total} bytes of artifacts to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
