"""Worker side of benchmarks/disco_bench.py: timing loops that run on every Disco worker
(imported into the workers with session.import_python_module)."""

from __future__ import annotations

import time

import tvm_ffi


def _allreduce_loop(x, y, iters):
    """Seconds for `iters` allreduce(sum) of x into y, after one that lines the workers up."""
    allreduce = tvm_ffi.get_global_func("runtime.disco.allreduce")
    kind = tvm_ffi.Shape([0])
    allreduce(x, kind, True, y)
    t0 = time.perf_counter()
    for _ in range(int(iters)):
        allreduce(x, kind, True, y)
    return time.perf_counter() - t0


tvm_ffi.register_global_func("bench.disco.allreduce_loop", _allreduce_loop, override=True)
