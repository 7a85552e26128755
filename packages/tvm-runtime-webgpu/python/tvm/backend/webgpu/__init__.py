"""tvm-runtime-webgpu: the WebGPU backend hook of tvm-runtime.

Importing this module is cheap and touches no GPU: it only declares the backend (``BACKEND``),
and the core's loader (at ``import tvm``, or ``tvm.backend.loader.load("webgpu")``) loads
``libtvm_runtime_webgpu.so``, tells it where the ``wgpu`` package keeps wgpu-native (found
without importing ``wgpu``, :func:`library_candidates`) and registers the target detector.
wgpu-native itself is opened only when a WebGPU device is first used.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

# The attributes of apache-tvm 0.27's `webgpu` target kind, as the device reports them.
TARGET_PROPERTIES = (
    "max_num_threads",
    "max_shared_memory_per_block",
    "thread_warp_size",
    "supports_subgroups",
)


def _library_names() -> list[str]:
    """wgpu-native's file names in the `wgpu` package, release build first (as wgpu does)."""
    if sys.platform.startswith("win"):
        return ["wgpu_native-release.dll", "wgpu_native.dll"]
    if sys.platform == "darwin":
        return ["libwgpu_native-release.dylib", "libwgpu_native.dylib"]
    return ["libwgpu_native-release.so", "libwgpu_native.so"]


def library_candidates() -> list[str]:
    """Where to look for wgpu-native before the system's search, in order.

    ``TVM_WEBGPU_LIBRARY`` (read by the DSO) overrides all of these.  Then ``WGPU_LIB_PATH``,
    the variable the ``wgpu`` package documents, then the library that package ships in
    ``wgpu/resources/``.
    """
    out = []
    override = os.environ.get("WGPU_LIB_PATH", "").strip()
    if override:
        out.append(override)
    try:
        spec = importlib.util.find_spec("wgpu")  # locates the package without importing it
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        for name in _library_names():
            path = os.path.join(location, "resources", name)
            if os.path.exists(path):
                out.append(path)
    return out


def _tell_library_candidates() -> None:
    import tvm_ffi

    tvm_ffi.get_global_func("tvm_runtime.webgpu.set_library_candidates")(library_candidates())


def adapter_info(dev: Any) -> dict[str, Any]:
    """The adapter behind ``dev``: name, vendor, graphics API (``backend``: Vulkan, Metal,
    D3D12), adapter type, wgpu-native version and path, features and compute limits."""
    import tvm_ffi

    hook_api.require_device(dev)
    return dict(tvm_ffi.get_global_func("tvm_runtime.webgpu.adapter_info")(dev))


def detect_target(dev: Any) -> dict[str, Any]:
    """The target config to pass to the TVM compiler (``tvm.target.Target(cfg, host="llvm")``)
    for ``dev``: apache-tvm's ``webgpu`` target kind with the device's workgroup limits."""
    import tvm_ffi

    hook_api.require_device(dev)
    prop = tvm_ffi.get_global_func("runtime.GetDeviceTargetProperty")
    target: dict[str, Any] = {"kind": "webgpu"}
    for key in TARGET_PROPERTIES:
        value = prop(dev, key)
        if value is not None:
            target[key] = value
    return target


def device_stats(dev: Any) -> dict[str, int]:
    """Counters of a device: ``submits``, ``dispatches``, ``live_buffers``, ``live_bytes``."""
    import tvm_ffi

    return dict(tvm_ffi.get_global_func("tvm_runtime.webgpu.device_stats")(dev))


BACKEND = hook_api.declare_backend(
    "webgpu",
    device_types=[hook_api.DeviceType.kDLWebGPU],
    detect_target=detect_target,
    after_load=_tell_library_candidates,
)

# apache-tvm's names.
detect_target_from_device = detect_target
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

__all__ = [
    "BACKEND",
    "TARGET_PROPERTIES",
    "adapter_info",
    "detect_target",
    "detect_target_from_device",
    "device_stats",
    "driver_status",
    "library_candidates",
    "register_backend",
]
