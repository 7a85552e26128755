"""``tvm.runtime.Device``: tvm_ffi's device with apache-tvm's attribute properties."""

from __future__ import annotations

import enum
import json
from typing import Any

import tvm_ffi

from . import _ffi_api

RPC_SESS_MASK = 128


class DeviceAttrKind(enum.IntEnum):
    """Device attribute kinds, numbered as apache-tvm's ``DeviceAttrKind`` (``kExist``, ...) and
    our C header's ``TVMRuntimeDeviceAttrKind``: the id passed to ``runtime.GetDeviceAttr``."""

    EXIST = 0
    MAX_THREADS_PER_BLOCK = 1
    WARP_SIZE = 2
    MAX_SHARED_MEMORY_PER_BLOCK = 3
    COMPUTE_VERSION = 4
    DEVICE_NAME = 5
    MAX_CLOCK_RATE = 6
    MULTI_PROCESSOR_COUNT = 7
    MAX_THREAD_DIMENSIONS = 8
    MAX_REGISTERS_PER_BLOCK = 9
    GCN_ARCH = 10
    API_VERSION = 11
    DRIVER_VERSION = 12
    L2_CACHE_SIZE_BYTES = 13
    TOTAL_GLOBAL_MEMORY = 14
    AVAILABLE_GLOBAL_MEMORY = 15
    IMAGE_PITCH_ALIGNMENT = 16


# Device type -> kind name ("cpu", "cuda", "ext_dev", ...): tvm-ffi's own table, which its type
# stubs do not declare.
_DEVICE_TYPE_TO_NAME: dict[int, str] = tvm_ffi.core.Device._DEVICE_TYPE_TO_NAME  # type: ignore[attr-defined]


class Device(tvm_ffi.core.Device):
    """A device (type + index), e.g. ``tvm.opencl(0)``.

    Attribute properties query the backend serving the device type.  ``exist`` is ``False``
    (never an error) when no backend is installed or its driver is missing.
    """

    def _GetDeviceAttr(self, device_type: int, device_id: int, attr_id: int) -> Any:  # noqa: N802
        return _ffi_api.GetDeviceAttr(device_type, device_id, attr_id)

    def _attr(self, kind: DeviceAttrKind) -> Any:
        return self._GetDeviceAttr(self.dlpack_device_type(), self.index, kind)

    @property
    def exist(self) -> bool:
        """True if a backend serves this device type and the physical device is usable."""
        return self._attr(DeviceAttrKind.EXIST) != 0

    @property
    def max_threads_per_block(self) -> Any:
        return self._attr(DeviceAttrKind.MAX_THREADS_PER_BLOCK)

    @property
    def warp_size(self) -> Any:
        return self._attr(DeviceAttrKind.WARP_SIZE)

    @property
    def max_shared_memory_per_block(self) -> Any:
        return self._attr(DeviceAttrKind.MAX_SHARED_MEMORY_PER_BLOCK)

    @property
    def compute_version(self) -> Any:
        return self._attr(DeviceAttrKind.COMPUTE_VERSION)

    @property
    def device_name(self) -> Any:
        return self._attr(DeviceAttrKind.DEVICE_NAME)

    @property
    def max_clock_rate(self) -> Any:
        return self._attr(DeviceAttrKind.MAX_CLOCK_RATE)

    @property
    def multi_processor_count(self) -> Any:
        return self._attr(DeviceAttrKind.MULTI_PROCESSOR_COUNT)

    @property
    def max_thread_dimensions(self) -> Any:
        value = self._attr(DeviceAttrKind.MAX_THREAD_DIMENSIONS)
        return json.loads(value) if isinstance(value, str) else value

    @property
    def api_version(self) -> Any:
        return self._attr(DeviceAttrKind.API_VERSION)

    @property
    def driver_version(self) -> Any:
        return self._attr(DeviceAttrKind.DRIVER_VERSION)

    @property
    def l2_cache_size_bytes(self) -> Any:
        return self._attr(DeviceAttrKind.L2_CACHE_SIZE_BYTES)

    @property
    def total_global_memory(self) -> Any:
        return self._attr(DeviceAttrKind.TOTAL_GLOBAL_MEMORY)

    @property
    def available_global_memory(self) -> Any:
        return self._attr(DeviceAttrKind.AVAILABLE_GLOBAL_MEMORY)

    def texture_spatial_limit(self) -> Any:
        # apache-tvm 0.27 reads the driver-version attribute here as well; kept for script
        # compatibility.
        return self._attr(DeviceAttrKind.DRIVER_VERSION)

    def create_raw_stream(self) -> int:
        """Create a new stream on this device (free it with ``free_raw_stream``)."""
        return _ffi_api.Device_StreamCreate(self)

    def free_raw_stream(self, stream: int) -> None:
        _ffi_api.Device_StreamFree(self, stream)

    def set_raw_stream(self, stream: int) -> None:
        """Make ``stream`` the current stream of this device for this thread."""
        _ffi_api.Device_SetStream(self, stream)

    def sync(self, stream: int | None = None) -> None:
        """Wait until all work queued on ``stream`` (default: the device's default) finished."""
        _ffi_api.Device_StreamSync(self, stream or 0)

    def __device_type_name__(self) -> str:
        device_type = self.dlpack_device_type()
        if device_type >= RPC_SESS_MASK:
            session = device_type // RPC_SESS_MASK - 1
            name = _DEVICE_TYPE_TO_NAME[device_type % RPC_SESS_MASK]
            return f"remote[{session}]:{name}"
        return _DEVICE_TYPE_TO_NAME[device_type]


tvm_ffi.core._set_class_device(Device)
