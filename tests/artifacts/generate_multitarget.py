"""Generate ``tests/artifacts/multitarget``: ONE exported library with CPU, OpenCL and CUDA functions.

A fixture generator like ``generate.py`` (run it with a Python that has
``apache-tvm==0.27.0.post1``; never a runtime dependency)::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_multitarget.py [--out DIR]

It builds a single IRModule whose three PrimFuncs carry different ``target`` attributes and
compiles it in one ``tvm.tirx.build`` call (apache-tvm 0.27's multi-target build: each function's
``target`` attribute decides its device; the host code of all three is one llvm module). The
exported ``mixed.so`` therefore holds the host code plus two device modules, ``opencl`` and
``cuda`` (CUDA C++ source, compiled by NVRTC at load time), imported by the library module:

* ``add_one_cpu``   (llvm):   B = A + 1
* ``scale_opencl``  (opencl): B = A * 2
* ``square_cuda``   (cuda):   B = A * A

Inputs and the numpy-computed expected outputs go to ``mixed.npz``; ``manifest.json`` names the
function, its device type and the wheel that serves it.  The CPU function is also run here with
apache-tvm's own runtime and checked against numpy before anything is written; the GPU kernels
cannot run here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import tvm_ffi

import tvm
from tvm import s_tir, te

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import _CL_KERNEL, _CU_KERNEL, save_npz, walk_modules  # noqa: E402

N = 1024
THREADS = 64
# name -> (target, device type, wheel, numpy reference)
FUNCTIONS = {
    "add_one_cpu": ("llvm", 1, "tvm-runtime", lambda a: a + np.float32(1)),
    "scale_opencl": ("opencl", 4, "tvm-runtime-opencl", lambda a: a * np.float32(2)),
    "square_cuda": ("cuda", 2, "tvm-runtime-cuda", lambda a: a * a),
}


def make_target(kind: str) -> tvm.target.Target:
    if kind == "llvm":
        return tvm.target.Target("llvm")
    if kind == "cuda":
        return tvm.target.Target({"kind": "cuda", "arch": "sm_75"}, host="llvm")
    return tvm.target.Target(kind, host="llvm")


def prim_func(name: str) -> tvm.tirx.PrimFunc:
    """The element-wise function of ``name``, scheduled for its target, with its target attr."""
    kind = FUNCTIONS[name][0]
    a = te.placeholder((N,), "float32", name="A")
    if name == "add_one_cpu":
        b = te.compute((N,), lambda i: a[i] + tvm.tirx.const(1.0, "float32"), name="B")
    elif name == "scale_opencl":
        b = te.compute((N,), lambda i: a[i] * tvm.tirx.const(2.0, "float32"), name="B")
    else:
        b = te.compute((N,), lambda i: a[i] * a[i], name="B")
    func = te.create_prim_func([a, b])
    if kind != "llvm":
        sch = s_tir.Schedule(func)
        (loop,) = sch.get_loops(sch.get_sblock("B"))
        bx, tx = sch.split(loop, [None, THREADS])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
        func = sch.mod["main"]
    return func.with_attr("global_symbol", name).with_attr("target", make_target(kind))


def kernels_by_kind(built: tvm.runtime.Module) -> dict[str, list[str]]:
    """The kernel names each device module holds (what its function table answers)."""
    patterns = {"opencl": _CL_KERNEL, "cuda": _CU_KERNEL}
    return {
        m.kind: sorted(set(patterns[m.kind].findall(m.inspect_source())))
        for m in walk_modules(built)
        if m.kind in patterns
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "multitarget")
    out: Path = parser.parse_args(argv).out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    mod = tvm.IRModule({name: prim_func(name) for name in FUNCTIONS})
    built = tvm.tirx.build(mod)  # no target: each function's own `target` attribute decides
    kinds = sorted(m.kind for m in walk_modules(built))
    if kinds != ["cuda", "llvm", "opencl"]:
        raise SystemExit(f"expected one llvm host module importing opencl and cuda, got {kinds}")

    rng = np.random.default_rng(20270)
    a = rng.uniform(-1.0, 1.0, size=(N,)).astype("float32")
    arrays = {"A": a}
    for name, (_, _, _, ref) in FUNCTIONS.items():
        arrays[f"{name}.B"] = ref(a)

    # Check the CPU function with apache-tvm's own runtime before writing anything.
    got = tvm.runtime.empty((N,), "float32", tvm.cpu())
    built["add_one_cpu"](tvm.runtime.tensor(a, tvm.cpu()), got)
    np.testing.assert_allclose(got.numpy(), arrays["add_one_cpu.B"], rtol=1e-6)

    built.export_library(str(out / "mixed.so"))
    save_npz(out / "mixed.npz", arrays)
    manifest = {
        "generator": "tests/artifacts/generate_multitarget.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "file": "mixed.so",
        "npz": "mixed.npz",
        "input": "A",
        "shape": [N],
        "dtype": "float32",
        "device_modules": [k for k in kinds if k != "llvm"],
        "kernels": kernels_by_kind(built),
        "functions": [
            {"name": name, "target": kind, "device_type": dev, "distribution": dist, "output": f"{name}.B"}
            for name, (kind, dev, dist, _) in FUNCTIONS.items()
        ],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {out / 'mixed.so'} ({(out / 'mixed.so').stat().st_size} bytes), modules {kinds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
