"""Hook of the template backend `testdev` (device type ext_dev = 12).

It uses only the public, versioned hook API (``tvm.backend.hook_api``, 1.1): the module declares
what the backend is in ``BACKEND`` (its DSO, the device types it serves, its target detector) and
the core's loader does the rest: it loads the DSO after the ABI check and registers the detector
at ``import tvm``, or on ``tvm.backend.loader.load("testdev")``.
"""

from __future__ import annotations

import ctypes
from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err


def detect_target(dev: Any) -> dict[str, Any]:
    return {"kind": "testdev", "max_num_threads": dev.max_threads_per_block}


def barrier_check(num_task: int, rounds: int) -> int:
    """Runs a barrier-heavy parallel lambda in C; returns the number of violations seen."""
    fn = BACKEND.library_handle().TVMRuntimeBackendTestdevBarrierCheck
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_int]
    return int(fn(num_task, rounds))


BACKEND = hook_api.declare_backend(
    "testdev", device_types=[hook_api.DeviceType.kDLExtDev], detect_target=detect_target
)
