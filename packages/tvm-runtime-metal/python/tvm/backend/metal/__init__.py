"""tvm-runtime-metal: the Metal backend hook of tvm-runtime.

Importing this module is cheap and touches no Metal: it only declares the backend
(``BACKEND``), and the core's loader (at ``import tvm``, or ``tvm.backend.loader.load("metal")``)
loads ``libtvm_runtime_metal`` and registers the target detector.  The Objective-C runtime and
Metal.framework are opened with ``dlopen`` only when a device is first used (overridable with
``TVM_METAL_OBJC_LIBRARY`` and ``TVM_METAL_FRAMEWORK``, which is how the Linux tests point the
backend at a fake Metal).
"""

from __future__ import annotations

from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err


def detect_target(dev: Any) -> dict[str, Any]:
    """The target config to pass to the TVM compiler (``tvm.target.Target(cfg)``) for ``dev``."""
    hook_api.require_device(dev)
    threads = int(dev.max_threads_per_block)
    return {
        "kind": "metal",
        "max_threads_per_block": threads,
        "max_num_threads": threads,
        "max_shared_memory_per_block": int(dev.max_shared_memory_per_block),
        "thread_warp_size": int(dev.warp_size),
    }


BACKEND = hook_api.declare_backend(
    "metal", device_types=[hook_api.DeviceType.kDLMetal], detect_target=detect_target
)

# apache-tvm's names.
detect_target_from_device = detect_target
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

__all__ = ["BACKEND", "detect_target", "detect_target_from_device", "driver_status", "register_backend"]
