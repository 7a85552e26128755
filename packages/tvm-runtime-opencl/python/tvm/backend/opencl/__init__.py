"""tvm-runtime-opencl: the OpenCL backend hook of tvm-runtime.

Importing this module is cheap and touches no OpenCL driver: the core's discovery (or
``tvm.backend.loader.load("opencl")``) calls ``register_backend()``, which loads
``libtvm_runtime_opencl.so`` and registers the target detector; the ICD loader
(``libOpenCL.so.1``, or ``$TVM_OPENCL_LIBRARY``) is opened only when a device is first used.
"""

from __future__ import annotations

import os
from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

_DSO = os.path.join(os.path.dirname(__file__), "libtvm_runtime_opencl.so")

DEVICE_TYPES = (hook_api.DeviceType.kDLOpenCL,)

# Substrings of device names that select TVM's device-specific OpenCL schedules ("device" key).
_DEVICE_KEYS = (("adreno", "adreno"), ("mali", "mali"))


def register_backend() -> None:
    """Load and register the OpenCL backend and its target detector; raises the reason on failure."""
    hook_api.load_backend_dso("opencl", _DSO)
    hook_api.register_device_target_detector("opencl", detect_target)


# The hook API 1.0 name discovery looked for before apache-tvm's register_backend().
register = register_backend


def driver_status() -> str:
    """Why OpenCL is unusable (what is missing and how to fix it), or "" when it works."""
    return hook_api.driver_status(hook_api.DeviceType.kDLOpenCL)


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


# apache-tvm's name for the same thing.
detect_target_from_device = detect_target

__all__ = [
    "DEVICE_TYPES",
    "detect_target",
    "detect_target_from_device",
    "driver_status",
    "register",
    "register_backend",
]
