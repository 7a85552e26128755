"""Helpers for backend hook modules (``tvm.backend.<name>``), so each hook stays a few lines."""

from __future__ import annotations

from typing import Any

import tvm_ffi


def driver_status(device_type: int) -> str:
    """Why a device type is unusable (what is missing and how to fix it), or "" when it works."""
    return str(tvm_ffi.get_global_func("runtime.DeviceDriverStatus")(device_type))


def require_device(dev: Any) -> None:
    """Raise ``ValueError`` saying why ``dev`` is unusable (driver missing, no such index)."""
    if dev.exist:
        return
    device_type = dev.dlpack_device_type()
    try:
        reason = driver_status(device_type)
    except Exception:  # noqa: BLE001 - no backend serves the type: exist=False says it all
        reason = ""
    name = tvm_ffi.get_global_func("runtime.DeviceTypeName")(device_type)
    reason = reason or f"this machine has no {name} device with index {dev.index}"
    raise ValueError(f"cannot detect the target of {dev}: {reason}")
