"""Global functions for the Disco tests, imported on every worker (import_python_module)."""

from __future__ import annotations

import os

import numpy as np
import tvm_ffi

import tvm
from tvm.backend.extra import disco


def _scaled(t, factor):
    return tvm.runtime.tensor(t.numpy() * np.float32(factor))


def _fail_on_1(t):
    if disco.worker_id() == 1:
        raise ValueError("worker 1 is broken on purpose")
    return t


def _exit_on_1(t):
    if disco.worker_id() == 1:
        os._exit(3)
    return t


for _name, _fn in (
    ("testing.extra.disco_scaled", _scaled),
    ("testing.extra.disco_fail_on_1", _fail_on_1),
    ("testing.extra.disco_exit_on_1", _exit_on_1),
):
    tvm_ffi.register_global_func(_name, _fn, override=True)
