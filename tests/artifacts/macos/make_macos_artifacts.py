"""Generate the macOS arm64 artifact of the Mach-O library-bin test (tests/cpp/macho_symbol_test.cc).

Run with apache-tvm 0.27's Python (never the runtime's environment):

    TVMRT_ZIG=$(python -c 'import ziglang, pathlib; print(pathlib.Path(ziglang.__file__).parent / "zig")') \\
        /work/venvs/apache/bin/python tests/artifacts/macos/make_macos_artifacts.py tests/artifacts/macos

Writes opencl_add.dylib: C = A + B on 1024 float32, host code for arm64 macOS 11 (LLVM, target
`llvm -mtriple=arm64-apple-macos`) plus an OpenCL kernel, which export_library packs into the
`__tvm_ffi__library_bin` symbol, linked by zig for aarch64-macos.11.0 the way apache-tvm links on a
Mac (the TVMBackend*/TVMFFI* symbols are left to the process: -undefined dynamic_lookup).  The
OpenCL kernel source is what the test finds inside the symbol's bytes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import tvm
from tvm import s_tir, te

N = 1024
THREADS = 64
HOST = {"kind": "llvm", "mtriple": "arm64-apple-macos"}


def _opencl_add() -> tvm.IRModule:
    a = te.placeholder((N,), "float32", name="A")
    b = te.placeholder((N,), "float32", name="B")
    c = te.compute((N,), lambda i: a[i] + b[i], name="C")
    sch = s_tir.Schedule(te.create_prim_func([a, b, c]).with_attr("global_symbol", "opencl_add"))
    (loop,) = sch.get_loops(sch.get_sblock("C"))
    bx, tx = sch.split(loop, [None, THREADS])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


def _zig_cc(output: str, objects: list[str], options: list[str] | None = None, cc: str | None = None) -> None:
    del cc  # always zig, for the Mac target
    import subprocess

    zig = os.environ["TVMRT_ZIG"]
    cmd = [zig, "cc", "-target", "aarch64-macos.11.0", "-shared", "-Wl,-undefined,dynamic_lookup"]
    cmd += ["-Wl,-install_name,@rpath/" + Path(output).name, "-o", output, *objects]
    subprocess.run(cmd, check=True)


_zig_cc.output_format = "dylib"


def main() -> int:
    if len(sys.argv) != 2 or not os.environ.get("TVMRT_ZIG"):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    lib = tvm.compile(_opencl_add(), target=tvm.target.Target("opencl", host=HOST))
    lib.export_library(str(out / "opencl_add.dylib"), fcompile=_zig_cc)
    print(f"wrote {out / 'opencl_add.dylib'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
