"""Compile the aarch64 smoke-test artifacts with apache-tvm 0.27 on an x86_64 host.

Run with a Python that has apache-tvm==0.27.0.post1 (never the runtime's environment):

    python ci/toolchain/make_aarch64_artifacts.py OUT_DIR

Writes OUT_DIR/cpu_add.so (LLVM host code for aarch64) and OUT_DIR/opencl_add.so (aarch64 host
code + an OpenCL kernel), both computing C = A + B on 1024 float32.  tvm's LLVM backend emits
aarch64 objects (target attribute `mtriple`); export_library links them with zig
(ci/toolchain/zig-cc, glibc 2.28), the cross linker the wheels are built with.  TVMRT_ZIG must
name the zig executable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import tvm
from tvm import s_tir, te

N = 1024
THREADS = 64
HOST = {"kind": "llvm", "mtriple": "aarch64-linux-gnu"}
ZIG_CC = Path(__file__).resolve().parent / "zig-cc"
LINK_OPTIONS = ["--target=aarch64-linux-gnu.2.28"]


def _add(name: str) -> tvm.tirx.PrimFunc:
    a = te.placeholder((N,), "float32", name="A")
    b = te.placeholder((N,), "float32", name="B")
    c = te.compute((N,), lambda i: a[i] + b[i], name="C")
    return te.create_prim_func([a, b, c]).with_attr("global_symbol", name)


def _bind_gpu(func: tvm.tirx.PrimFunc) -> tvm.IRModule:
    sch = s_tir.Schedule(func)
    (loop,) = sch.get_loops(sch.get_sblock("C"))
    bx, tx = sch.split(loop, [None, THREADS])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not os.environ.get("TVMRT_ZIG"):
        print("set TVMRT_ZIG to the zig executable (python -m ziglang env shows it)", file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cpu = tvm.compile(_add("cpu_add"), target=tvm.target.Target(HOST))
    cpu.export_library(str(out / "cpu_add.so"), cc=str(ZIG_CC), options=LINK_OPTIONS)
    opencl_target = tvm.target.Target("opencl", host=HOST)
    opencl = tvm.compile(_bind_gpu(_add("opencl_add")), target=opencl_target)
    opencl.export_library(str(out / "opencl_add.so"), cc=str(ZIG_CC), options=LINK_OPTIONS)
    print(f"wrote {out / 'cpu_add.so'} and {out / 'opencl_add.so'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
