"""Hook of the template backend `testdev` (device type ext_dev = 12).

It uses only the public, versioned hook API (``tvm.backend.hook_api``) and keeps the hook API
1.0 form: ``register()`` plus a ``detect_target`` attribute, which discovery registers as the
target detector of every kind in ``DEVICE_TYPES``.  A new backend may instead define
``register_backend()`` and call ``hook_api.register_device_target_detector`` itself.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

_DSO = os.path.join(os.path.dirname(__file__), "libtvm_runtime_testdev.so")
DEVICE_TYPES = (hook_api.DeviceType.kDLExtDev,)
_LIB: ctypes.CDLL | None = None


def register() -> None:
    global _LIB
    _LIB = hook_api.load_backend_dso("testdev", _DSO)


def detect_target(dev: Any) -> dict[str, Any]:
    return {"kind": "testdev", "max_num_threads": dev.max_threads_per_block}


def barrier_check(num_task: int, rounds: int) -> int:
    """Runs a barrier-heavy parallel lambda in C; returns the number of violations seen."""
    assert _LIB is not None
    fn = _LIB.TVMRuntimeBackendTestdevBarrierCheck
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_int]
    return int(fn(num_task, rounds))
