"""Generate the WebGPU test artifacts under ``tests/artifacts/webgpu``.

A fixture generator, not part of the runtime: run it with apache-tvm 0.27 (see ``generate.py``)::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_webgpu.py [--out DIR]

It compiles, for apache-tvm 0.27's ``webgpu`` target (WGSL device code, LLVM host code):

* the TIR kernels of ``generate.py`` that make sense on a GPU (add, add_fp16, matmul with shared
  memory, row_sum, dyn_muladd, workspace, multi_out, tiny_add) with the same GPU schedules, plus
  ``wide_grid``, one workgroup per element over more than 65535 workgroups (the WebGPU limit per
  grid dimension, which 0.27's codegen works around by folding blockIdx.x into blockIdx.z);
* the three Relax models of ``generate.py`` (mlp, mlp_dyn, convnet) with the default pipeline,
  which schedules them with dlight for the GPU.

Inputs and expected outputs come from numpy (the same arrays as ``generate.py``); as for the other
GPU targets, the unscheduled computation is also run on CPU by apache-tvm's runtime and checked
against numpy, since apache-tvm's runtime cannot run WebGPU modules.  The cases are described in
``webgpu/manifest.json`` (same schema as ``manifest.json``).  Deterministic: fixed seeds, and the
WGSL that apache-tvm emits does not depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g  # noqa: E402 - the shared case definitions and writers
import tvm_ffi  # noqa: E402

import tvm  # noqa: E402
from tvm import s_tir, te  # noqa: E402

TARGET = "webgpu"
DEVICE_TYPE = 15  # kDLWebGPU
KERNELS = ("add", "add_fp16", "matmul", "row_sum", "dyn_muladd", "workspace", "multi_out", "tiny_add")
WIDE_GRID = 66537  # workgroups: more than 65535, and odd, so the folded grid has one spare


def make_target() -> tvm.target.Target:
    return tvm.target.Target("webgpu", host="llvm")


def case_wide_grid() -> g.KernelCase:
    name, n = "wide_grid", WIDE_GRID
    a = te.placeholder((n,), "float32", name="A")
    b = te.compute(
        (n,), lambda i: a[i] * tvm.tirx.const(2.0, "float32") + tvm.tirx.const(1.0, "float32"), name="B"
    )
    rng = g.rng_for(name)
    # multiples of 1/16 are exact in fp32 and keep the arrays compressible
    x = (rng.integers(-64, 64, size=(n,)) / 16).astype("float32")
    call = g.Call({"a": x, "b": x * np.float32(2.0) + np.float32(1.0)}, [g.arg_input("a"), g.arg_output("b")])
    return g.KernelCase(
        name,
        f"B[{n}] = A * 2 + 1 with one thread per workgroup: a grid of {n} workgroups, more than "
        "WebGPU's 65535 per dimension (the runtime folds it into blockIdx.z, the kernel skips the "
        "spare workgroup through packGridDimX)",
        g.finalize(name, te.create_prim_func([a, b])),
        [call],
        0.0,
        0.0,
        targets=(TARGET,),
        schedule={TARGET: g.sched_elementwise("B", threads=1)},
    )


def kernel_cases() -> list[g.KernelCase]:
    cases = [c for c in g.kernel_cases() if c.name in KERNELS]
    for c in cases:
        # The OpenCL schedule (no warp shuffles: WebGPU's thread_warp_size is 1) fits WebGPU.
        c.schedule[TARGET] = c.schedule["opencl"]
        c.notes[TARGET] = c.notes.get("opencl", "")
    return [*cases, case_wide_grid()]


def wgsl_kernels(mod: Any) -> list[str]:
    names = []
    for m in g.walk_modules(mod):
        if m.kind == "webgpu":
            names += [
                line.split("Function: ", 1)[1].strip()
                for line in m.inspect_source().splitlines()
                if "// Function: " in line
            ]
    return sorted(set(names))


def entry_common(out: Path, rel_so: str, built: Any) -> dict[str, Any]:
    info = g.inspect_built(built.mod)
    info["device_module"] = "webgpu"
    info["device_kernels"] = wgsl_kernels(built.mod)
    return {**g.symbol_info(out.parent / rel_so), **info}


def build_kernels(out: Path, manifest: list[dict[str, Any]]) -> None:
    for case in kernel_cases():
        cpu_ref = tvm.compile(case.func, target=g.make_target("cpu"))
        for call in case.calls:
            got = g.run_kernel_cpu(cpu_ref[case.name], call)
            g.check(f"{case.name} (cpu reference)", got, call, case.rtol, case.atol)
        sch = s_tir.Schedule(case.func)
        case.schedule[TARGET](sch)
        built = tvm.compile(sch.mod, target=make_target())
        rel_so, rel_npz = f"webgpu/{case.name}.so", f"webgpu/{case.name}.npz"
        built.export_library(str(out.parent / rel_so))
        g.save_npz(out.parent / rel_npz, g.merged_arrays(case.calls))
        manifest.append(
            {
                "name": case.name,
                "target": TARGET,
                "kind_of_case": "kernel",
                "file": rel_so,
                "function": case.name,
                "calls": [g.call_json(rel_npz, c, vm=False) for c in case.calls],
                "rtol": case.rtol,
                "atol": case.atol,
                "description": case.description + case.notes.get(TARGET, ""),
                "verified": "cpu-equivalent",
                **entry_common(out, rel_so, built),
            }
        )
        print(f"  {rel_so:24s} {(out.parent / rel_so).stat().st_size:8d} bytes")


def build_models(out: Path, manifest: list[dict[str, Any]]) -> None:
    for case in g.model_cases():
        g.check_model_on_cpu(out, case)
        built = tvm.compile(case.mod, target=make_target())
        manifest.append(g.gpu_model_entry(out, case, built, TARGET, entry_common))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "webgpu",
        help="output directory, named webgpu (default: tests/artifacts/webgpu)",
    )
    ns = parser.parse_args(argv)
    out: Path = ns.out.resolve()
    if out.name != "webgpu":
        parser.error("--out must name a directory called webgpu (paths are recorded as webgpu/...)")
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.so"), *out.glob("*.npz")]:
        stale.unlink()
    print(f"apache-tvm {tvm.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, numpy {np.__version__}")
    manifest: list[dict[str, Any]] = []
    build_kernels(out, manifest)
    build_models(out, manifest)
    doc = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_webgpu.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        # The same paths as tests/artifacts/manifest.json's, so the shared test helpers take these cases.
        "paths_relative_to": "tests/artifacts, the parent of the directory holding manifest.json",
        "targets": {TARGET: {"device_type": DEVICE_TYPE, "tvm_target": json.loads(str(make_target()))}},
        "cases": manifest,
    }
    (out / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir() if p.suffix in (".so", ".npz"))
    print(f"wrote {len(manifest)} cases, {total} bytes of artifacts to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
