"""Hook of the test-only backend `testdev` (device type ext_dev = 12)."""

from __future__ import annotations

import ctypes
import os
from typing import Any

from tvm.backend._dso import load_backend_dso

_DSO = os.path.join(os.path.dirname(__file__), "libtvm_runtime_testdev.so")
DEVICE_TYPES = (12,)
_LIB: ctypes.CDLL | None = None


def register() -> None:
    global _LIB
    _LIB = load_backend_dso("testdev", _DSO)


def detect_target(dev: Any) -> dict[str, Any]:
    return {"kind": "testdev", "max_num_threads": dev.max_threads_per_block}


def barrier_check(num_task: int, rounds: int) -> int:
    """Runs a barrier-heavy parallel lambda in C; returns the number of violations seen."""
    assert _LIB is not None
    fn = _LIB.TVMRuntimeBackendTestdevBarrierCheck
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_int]
    return int(fn(num_task, rounds))
