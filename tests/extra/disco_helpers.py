"""Global functions for the Disco tests, imported on every worker (import_python_module)."""

from __future__ import annotations

import ctypes
import os
import time

import numpy as np
import tvm_ffi

import tvm


def _rank() -> int:
    return int(tvm_ffi.get_global_func("runtime.disco.worker_rank")())


def _scaled(t, factor):
    return tvm.runtime.tensor(t.numpy() * np.float32(factor))


def _fail_on_1(t):
    if _rank() == 1:
        raise ValueError("worker 1 is broken on purpose")
    return t


def _delayed_allreduce(x, y, late_worker, seconds):
    """allreduce(x) into y, worker `late_worker` entering it `seconds` late."""
    if _rank() == late_worker:
        time.sleep(seconds)
    tvm_ffi.get_global_func("runtime.disco.allreduce")(x, tvm_ffi.Shape([0]), True, y)


def _ramp(n):
    return tvm.runtime.tensor(np.arange(n, dtype="float32") * np.float32(_rank() + 1))


def _to_bfloat16(t):
    """A float32 tensor's values as bfloat16 (truncated: tests use values that are exact)."""
    bits = (t.numpy().view(np.uint32) >> 16).astype(np.uint16)
    out = tvm.runtime.empty(t.shape, "bfloat16")
    tvm.runtime._ffi_api.TVMTensorCopyFromBytes(out, bits.ctypes.data_as(ctypes.c_void_p), bits.nbytes)
    return out


def _from_bfloat16(t):
    bits = np.empty(tuple(t.shape), np.uint16)
    tvm.runtime._ffi_api.TVMTensorCopyToBytes(t, bits.ctypes.data_as(ctypes.c_void_p), bits.nbytes)
    return tvm.runtime.tensor((bits.astype(np.uint32) << 16).view(np.float32))


def _exchange(x, y):
    """Point to point: the first worker sends x to the last, which receives it into y."""
    last = int(tvm_ffi.get_global_func("runtime.disco.world_size")()) - 1
    if _rank() == 0:
        tvm_ffi.get_global_func("runtime.disco.send_to_worker")(x, last)
    elif _rank() == last:
        tvm_ffi.get_global_func("runtime.disco.recv_from_worker")(y, 0)


for _name, _fn in (
    ("testing.disco.scaled", _scaled),
    ("testing.disco.fail_on_1", _fail_on_1),
    ("testing.disco.pid", os.getpid),
    ("testing.disco.affinity", lambda: tvm_ffi.Shape(sorted(os.sched_getaffinity(0)))),
    ("testing.disco.delayed_allreduce", _delayed_allreduce),
    ("testing.disco.exchange", _exchange),
    ("testing.disco.ramp", _ramp),
    ("testing.disco.to_bfloat16", _to_bfloat16),
    ("testing.disco.from_bfloat16", _from_bfloat16),
):
    tvm_ffi.register_global_func(_name, _fn, override=True)
