"""Device helpers behind :mod:`tvm.backend.hook_api` (what every backend hook needs)."""

from __future__ import annotations

from typing import Any, Union

import tvm_ffi

DeviceTypeLike = Union[int, tvm_ffi.DLDeviceType]


def driver_status(device_type: DeviceTypeLike) -> str:
    """Why a device type is unusable (what is missing and how to fix it), or "" when it works."""
    return str(tvm_ffi.get_global_func("runtime.DeviceDriverStatus")(int(device_type)))


def require_device(dev: Any) -> None:
    """Raise ``ValueError`` saying why ``dev`` is unusable (driver missing, no such index)."""
    if dev.exist:
        return
    device_type = dev.dlpack_device_type()
    try:
        reason = driver_status(device_type)
    except Exception:  # noqa: BLE001 - no backend serves the type: exist=False says it all
        reason = ""
    name = tvm_ffi.get_global_func("runtime.DeviceTypeName")(int(device_type))
    reason = reason or f"this machine has no {name} device with index {dev.index}"
    raise ValueError(f"cannot detect the target of {dev}: {reason}")
