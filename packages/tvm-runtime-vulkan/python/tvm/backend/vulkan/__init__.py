"""tvm-runtime-vulkan: the Vulkan backend hook of tvm-runtime.

Importing this module is cheap and touches no Vulkan driver: it only declares the backend
(``BACKEND``), and the core's loader (at ``import tvm``, or ``tvm.backend.loader.load("vulkan")``)
loads ``libtvm_runtime_vulkan.so`` and registers the target detector; the Vulkan loader
(``libvulkan.so.1``, or ``$TVM_VULKAN_LIBRARY``) is opened only when a device is first used.
"""

from __future__ import annotations

from typing import Any

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

# Target properties apache-tvm's Vulkan target kind accepts, as reported by the device
# (the keys a target built with `-from_device` gets), in the order the target kind lists them.
TARGET_PROPERTIES = (
    "supports_float16",
    "supports_float32",
    "supports_float64",
    "supports_int8",
    "supports_int16",
    "supports_int32",
    "supports_int64",
    "supports_8bit_buffer",
    "supports_16bit_buffer",
    "supports_storage_buffer_storage_class",
    "supports_push_descriptor",
    "supports_dedicated_allocation",
    "supports_integer_dot_product",
    "supports_cooperative_matrix",
    "supported_subgroup_operations",
    "max_num_threads",
    "max_threads_per_block",
    "thread_warp_size",
    "max_block_size_x",
    "max_block_size_y",
    "max_block_size_z",
    "max_push_constants_size",
    "max_uniform_buffer_range",
    "max_storage_buffer_range",
    "max_per_stage_descriptor_storage_buffer",
    "max_shared_memory_per_block",
    "device_type",
    "device_name",
    "driver_name",
    "driver_version",
    "vulkan_api_version",
    "max_spirv_version",
)


def get_target_property(dev: Any, key: str) -> Any:
    """apache-tvm's ``device_api.vulkan.get_target_property(dev, key)``."""
    import tvm_ffi

    return tvm_ffi.get_global_func("device_api.vulkan.get_target_property")(dev, key)


def detect_target(dev: Any) -> dict[str, Any]:
    """The target config to pass to the TVM compiler (``tvm.target.Target(cfg)``) for ``dev``.

    Holds every device property apache-tvm's Vulkan target kind knows (feature support such as
    ``supports_float16`` and ``supports_16bit_buffer``, limits such as ``max_num_threads`` and
    ``max_push_constants_size``, and the device identity), i.e. what ``-from_device`` would fill in.
    """
    hook_api.require_device(dev)
    target: dict[str, Any] = {"kind": "vulkan"}
    for key in TARGET_PROPERTIES:
        value = get_target_property(dev, key)
        if value is not None:
            target[key] = value
    return target


def device_stats(dev: Any) -> dict[str, int]:
    """Counters of a device: its tensor sub-allocator (``blocks``, ``block_bytes``,
    ``live_allocations``, ``live_bytes``, ``device_allocations`` = vkAllocateMemory calls) and its
    command stream (``commands`` recorded, ``submits``, ``fence_waits``)."""
    import tvm_ffi

    return dict(tvm_ffi.get_global_func("tvm_runtime.vulkan.device_stats")(dev))


def validation_messages(clear: bool = False) -> list[str]:
    """Warnings and errors of the Khronos validation layer (enabled by TVM_VULKAN_VALIDATION=1)."""
    import tvm_ffi

    return [str(m) for m in tvm_ffi.get_global_func("tvm_runtime.vulkan.validation_messages")(clear)]


BACKEND = hook_api.declare_backend(
    "vulkan", device_types=[hook_api.DeviceType.kDLVulkan], detect_target=detect_target
)

# apache-tvm's names.
detect_target_from_device = detect_target
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

__all__ = [
    "BACKEND",
    "TARGET_PROPERTIES",
    "detect_target",
    "detect_target_from_device",
    "driver_status",
    "device_stats",
    "get_target_property",
    "register_backend",
    "validation_messages",
]
