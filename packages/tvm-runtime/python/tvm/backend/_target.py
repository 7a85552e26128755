"""Target detection: the target config a user passes to the TVM compiler for a device."""

from __future__ import annotations

import platform
from typing import Any

from ._discovery import list_backends
from ._hook import require_device


def _cpu_target() -> dict[str, Any]:
    machine = platform.machine()
    triple = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}.get(
        machine, f"{machine}-linux-gnu"
    )
    from ..runtime import num_threads

    return {"kind": "llvm", "mtriple": triple, "num-cores": num_threads()}


def detect_target_from_device(dev: Any) -> dict[str, Any]:
    """Target config (as a dict) for ``dev``, e.g. ``{"kind": "opencl", ...}``.

    Dispatches to the hook of the backend serving the device type (its ``detect_target``).
    Raises ``ValueError`` when the device does not exist or no backend can describe it.
    """
    require_device(dev)
    device_type = dev.dlpack_device_type()
    if device_type == 1:
        return _cpu_target()
    for record in list_backends().values():
        hook = record.hook
        if record.status == "loaded" and device_type in getattr(hook, "DEVICE_TYPES", ()):
            detect = getattr(hook, "detect_target", None)
            if detect is not None:
                return dict(detect(dev))
    raise ValueError(f"no loaded backend can detect a target for {dev}")


__all__ = ["detect_target_from_device"]
