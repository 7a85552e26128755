"""tvm-runtime-opencl: the OpenCL backend hook of tvm-runtime.

Importing this module is cheap and touches no OpenCL driver: it only declares the backend
(``BACKEND``), and the core's loader (at ``import tvm``, or ``tvm.backend.loader.load("opencl")``)
loads ``libtvm_runtime_opencl.so`` and registers the target detector; the ICD loader
(``libOpenCL.so.1``, or ``$TVM_OPENCL_LIBRARY``) is opened only when a device is first used.
"""

from __future__ import annotations

from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

# Substrings of device names that select TVM's device-specific OpenCL schedules ("device" key).
_DEVICE_KEYS = (("adreno", "adreno"), ("mali", "mali"))


def _device_key(name: str) -> str | None:
    lowered = name.lower()
    for needle, key in _DEVICE_KEYS:
        if needle in lowered:
            return key
    if "intel" in lowered and "graphics" in lowered:
        return "intel_graphics"
    return None


def detect_target(dev: Any) -> dict[str, Any]:
    """The target config to pass to the TVM compiler (``tvm.target.Target(cfg)``) for ``dev``."""
    hook_api.require_device(dev)
    threads = int(dev.max_threads_per_block)
    target: dict[str, Any] = {
        "kind": "opencl",
        "max_threads_per_block": threads,
        "max_num_threads": threads,
        "max_shared_memory_per_block": int(dev.max_shared_memory_per_block),
        "thread_warp_size": int(dev.warp_size),
    }
    key = _device_key(str(dev.device_name))
    if key is not None:
        target["device"] = key
    return target


BACKEND = hook_api.declare_backend(
    "opencl", device_types=[hook_api.DeviceType.kDLOpenCL], detect_target=detect_target
)

# apache-tvm's names.
detect_target_from_device = detect_target
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

__all__ = ["BACKEND", "detect_target", "detect_target_from_device", "driver_status", "register_backend"]
