"""Generate the ``--system-lib`` fixture under ``tests/artifacts/system_lib``.

A fixture generator, not part of the runtime: run it with apache-tvm 0.27 (see ``generate.py``)::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_system_lib.py [--out DIR]

One TIR kernel, ``scale_add(A, B, C)``: ``C = 2 * A + B`` on 1024 float32, its outer loop
parallel (so the host code calls the core's ``TVMBackendParallelLaunch``), compiled as a system
library (0.27's ``--system-lib``, the IRModule attribute ``system_lib_prefix``) and written as a
relocatable object, ``scale_add_x86_64.o``.  Such an object registers its functions at startup
through a static constructor (``TVMFFIEnvModRegisterSystemLibSymbol``, tvm-ffi's C API), and a
program reaches them with ``ffi.SystemLib()``: what a static, no-dlopen deployment links
(tests/cpp_package).
Inputs and the numpy-computed expectation go to ``scale_add.npz``; the kernel is checked with
apache-tvm's own runtime (through a shared library of the same code) before anything is written.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import tvm
from tvm import te

HERE = Path(__file__).resolve().parent
N = 1024
LANES = 64  # outer loop of N // LANES parallel iterations


def build(system_lib: bool) -> tvm.runtime.Module:
    a = te.placeholder((N,), "float32", name="A")
    b = te.placeholder((N,), "float32", name="B")
    c = te.compute((N,), lambda i: a[i] * 2.0 + b[i], name="C")
    func = te.create_prim_func([a, b, c]).with_attr("global_symbol", "scale_add")
    sch = tvm.s_tir.Schedule(func)
    outer, _ = sch.split(sch.get_loops(sch.get_sblock("C"))[0], factors=[None, LANES])
    sch.parallel(outer)
    # 0.27 has no "llvm --system-lib" target string: the IRModule attribute system_lib_prefix
    # ("" here) makes the host code register its functions as a system library.
    mod = sch.mod.with_attr("system_lib_prefix", "") if system_lib else sch.mod
    return tvm.compile(mod, target=tvm.target.Target({"kind": "llvm"}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "system_lib")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(27)
    a = rng.standard_normal(N).astype("float32")
    b = rng.standard_normal(N).astype("float32")
    expected = (a * np.float32(2.0) + b).astype("float32")

    # The same kernel as a shared library, run by apache-tvm's runtime, against numpy.
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/scale_add.so"
        build(system_lib=False).export_library(path)
        kernel = tvm.runtime.load_module(path)["scale_add"]
        dev = tvm.cpu()
        c = tvm.runtime.tensor(np.zeros(N, "float32"), dev)
        kernel(tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
        np.testing.assert_allclose(c.numpy(), expected, rtol=1e-6, atol=1e-6)

    obj = out / "scale_add_x86_64.o"
    # What export_library writes as lib0.o: a CPU-only module has no imports (no devc.o) to add.
    build(system_lib=True).mod.write_to_file(str(obj))
    symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    assert "TVMFFIEnvModRegisterSystemLibSymbol" in symbols, symbols
    assert "TVMBackendParallelLaunch" in symbols, symbols
    np.savez(out / "scale_add.npz", a=a, b=b, c=expected)
    print(f"wrote {obj} ({obj.stat().st_size} bytes) and {out / 'scale_add.npz'}")


if __name__ == "__main__":
    main()
