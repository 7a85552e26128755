"""tvm-runtime-rocm: the ROCm backend hook of tvm-runtime.

Importing this module is cheap and touches no ROCm library: it only declares the backend
(``BACKEND``), and the core's loader (at ``import tvm``, or ``tvm.backend.loader.load("rocm")``)
loads ``libtvm_runtime_rocm.so`` and registers the target detector.  The HIP runtime
(``libamdhip64.so`` of ROCm 6.0+) is opened when a device is first used.

Environment:
  ``TVM_ROCM_LIBRARY``  HIP runtime library to open instead of searching ``$ROCM_PATH/lib``,
                        ``$CONDA_PREFIX/lib``, the system and ``/opt/rocm/lib``;
  ``TVM_RCCL_LIBRARY``  RCCL for Disco's rccl collectives (``session.init_ccl("rccl", ...)``),
                        instead of searching the same places for ``librccl.so.1``.
"""

from __future__ import annotations

from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

from ._ffi import rocm_global as _global

_ROCM = hook_api.DeviceType.kDLROCM


def driver_info() -> dict[str, Any]:
    """HIP library and versions, where it was looked for, devices (gfx archs) and status."""
    info = dict(_global("driver_info")())
    info["candidates"] = [str(c) for c in info["candidates"]]
    info["gcn_archs"] = [str(a) for a in info["gcn_archs"]]
    return info


def detect_target(dev: Any) -> dict[str, Any]:
    """The target config to pass to the TVM compiler (``tvm.target.Target(cfg)``) for ``dev``."""
    if dev.dlpack_device_type() != _ROCM:
        raise ValueError(f"cannot detect a ROCm target for {dev}: not a ROCm device")
    hook_api.require_device(dev)
    import tvm_ffi

    prop = tvm_ffi.get_global_func("runtime.GetDeviceTargetProperty")
    threads = int(dev.max_threads_per_block)
    return {
        "kind": "rocm",
        "mcpu": str(prop(dev, "mcpu")),
        "max_shared_memory_per_block": int(dev.max_shared_memory_per_block),
        "max_threads_per_block": threads,
        "max_num_threads": threads,
        "thread_warp_size": int(dev.warp_size),
    }


def _code_object(info: Any) -> dict[str, Any]:
    out = dict(info)
    for key in ("processor", "target_id", "xnack", "sramecc"):
        out[key] = str(out[key])
    for key in ("code_object_version", "bytes"):
        out[key] = int(out[key])
    out["generic"] = bool(out["generic"])
    return out


def describe_code_object(image: bytes) -> dict[str, Any]:
    """Processor (e.g. "gfx90a"), target id, xnack/sramecc and version of an AMDGPU code object.

    Reads the ELF header only: works without ROCm.  Raises ``ValueError`` for anything else.
    """
    return _code_object(_global("describe_code_object")(bytes(image)))


def describe_module(mod: Any) -> dict[str, Any]:
    """Format, function table (arg types, launch tags) and code object of a loaded ``hip`` module."""
    info = _global("describe_module")(mod)
    return {**hook_api.kernel_module_description(info), "code_object": _code_object(info["code_object"])}


BACKEND = hook_api.declare_backend(
    "rocm",
    device_types=[_ROCM],
    host_device_types=[hook_api.DeviceType.kDLROCMHost],  # page-locked host memory: no target
    detect_target=detect_target,
    diagnostics=driver_info,
)

# apache-tvm's names.
detect_target_from_device = detect_target
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

__all__ = [
    "BACKEND",
    "describe_code_object",
    "describe_module",
    "detect_target",
    "detect_target_from_device",
    "driver_info",
    "driver_status",
    "register_backend",
]
