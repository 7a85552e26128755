"""``tvm.runtime.Tensor`` and the device constructors of apache-tvm 0.27's runtime API."""

from __future__ import annotations

import ctypes
from typing import Any, cast

import numpy as np
import tvm_ffi

from . import _ffi_api
from .device import Device

try:
    import ml_dtypes
except ImportError:  # optional: only needed for bfloat16 / float8 / float4 conversion
    ml_dtypes = None

_ML_DTYPES = frozenset(
    {
        "bfloat16",
        "float8_e3m4",
        "float8_e4m3",
        "float8_e4m3b11fnuz",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float6_e2m3fn",
        "float6_e3m2fn",
        "float4_e2m1fn",
    }
)


def _numpy_dtype(dtype: str) -> Any:
    if dtype in _ML_DTYPES:
        if ml_dtypes is None:
            raise RuntimeError(f"converting {dtype} needs the ml_dtypes package: pip install ml_dtypes")
        return getattr(ml_dtypes, dtype)
    if dtype == "int4":
        return "int8"
    return dtype


@tvm_ffi.register_object("ffi.Tensor")
class Tensor(tvm_ffi.core.Tensor):
    """An n-dimensional buffer on a device; convert with ``numpy()`` / ``copyfrom()``."""

    # Same instance layout as tvm_ffi's Tensor: tvm-ffi rejects a larger wrapper class.
    __slots__ = ()

    def __setitem__(self, in_slice: Any, value: Any) -> None:
        if not isinstance(in_slice, slice) or in_slice.start is not None or in_slice.stop is not None:
            raise ValueError("Tensor only supports assigning a whole array: t[:] = value")
        if isinstance(value, Tensor):
            if not value.same_as(self):
                value.copyto(self)
        elif isinstance(value, (np.ndarray, np.generic)):
            self.copyfrom(value)
        else:
            raise TypeError(f"cannot assign a {type(value).__name__} to a Tensor")

    def _element_layout(self) -> tuple[tuple[int, ...], str]:
        """(numpy shape, scalar dtype): vector dtypes become a trailing lanes axis."""
        t = tvm_ffi.dtype(self.dtype)
        shape, dtype = tuple(self.shape), str(self.dtype)
        if t.lanes > 1:
            shape = shape + (t.lanes,)
            dtype = str(t.with_lanes(1))
        return shape, dtype

    def copyfrom(self, source_array: Any) -> Tensor:
        """Synchronously copy ``source_array`` (array-like or Tensor) into this tensor."""
        if isinstance(source_array, Tensor):
            source_array.copyto(self)
            return self
        shape, dtype = self._element_layout()
        if not isinstance(source_array, np.ndarray):
            try:
                source_array = np.asarray(source_array, dtype=_numpy_dtype(dtype))
            except Exception as err:
                raise TypeError(
                    f"array must be array_like data, type {type(source_array)} is not supported"
                ) from err
        if source_array.shape != shape:
            raise ValueError(f"array shape do not match the shape of Tensor {source_array.shape} vs {shape}")
        target = np.dtype(_numpy_dtype(dtype))
        if source_array.dtype != target or not source_array.flags["C_CONTIGUOUS"]:
            source_array = np.ascontiguousarray(source_array, dtype=target)
        nbytes = source_array.size * source_array.dtype.itemsize
        _ffi_api.TVMTensorCopyFromBytes(self, source_array.ctypes.data_as(ctypes.c_void_p), nbytes)
        return self

    def numpy(self) -> np.ndarray:
        """Copy the tensor into a new numpy array (synchronous)."""
        shape, dtype = self._element_layout()
        out = np.empty(shape, dtype=_numpy_dtype(dtype))
        if out.size:
            _ffi_api.TVMTensorCopyToBytes(
                self, out.ctypes.data_as(ctypes.c_void_p), out.size * out.dtype.itemsize
            )
        return out

    asnumpy = numpy

    def copyto(self, target: Any, mem_scope: str | None = None) -> Tensor:
        """Copy into ``target``: a Tensor of the same size, or a Device (allocates a new one)."""
        if isinstance(target, Tensor):
            return self._copyto(target)
        if isinstance(target, tvm_ffi.core.Device):
            return self._copyto(empty(self.shape, self.dtype, target, mem_scope))
        raise ValueError(f"Unsupported target type {type(target)}")

    def _copyto(self, target: Tensor) -> Tensor:
        _ffi_api.TVMTensorCopyFromTo(self, target)
        return target

    def _create_view(self, shape: Any, dtype: str | None = None, relative_byte_offset: int = 0) -> Tensor:
        """A tensor sharing this tensor's memory, with another shape/dtype and byte offset."""
        if dtype is None:
            dtype = self.dtype
        return _ffi_api.TVMTensorCreateView(
            self, tvm_ffi.Shape(tuple(shape)), tvm_ffi.dtype(str(dtype)), relative_byte_offset
        )

    def __repr__(self) -> str:
        if self.__chandle__() == 0:
            return type(self).__name__ + "(chandle=None)"
        return f"<tvm.runtime.Tensor shape={tuple(self.shape)}, {self.device}>\n{self.numpy()!r}"

    def __str__(self) -> str:
        return str(self.numpy())


tvm_ffi.core._set_class_tensor(Tensor)


def device(device_type: Any, index: int | None = None) -> Device:
    """Construct a device, e.g. ``tvm.device("cuda", 1)`` or ``tvm.device("opencl:0")``."""
    # tvm-ffi builds the Device class registered by tvm.runtime.device.
    return cast(Device, tvm_ffi.device(device_type, index))


def empty(shape: Any, dtype: Any = "float32", device: Any = None, mem_scope: str | None = None) -> Tensor:
    """Allocate an uninitialised tensor on ``device`` (default: CPU)."""
    device = device or cpu(0)
    if not isinstance(shape, tvm_ffi.Shape):
        shape = tvm_ffi.Shape(tuple(int(x) for x in shape))
    return _ffi_api.TVMTensorAllocWithScope(shape, tvm_ffi.dtype(str(dtype)), device, mem_scope)


def tensor(arr: Any, device: Any = None, mem_scope: str | None = None) -> Tensor:
    """Create a tensor on ``device`` (default: CPU) holding a copy of ``arr``."""
    if isinstance(arr, Tensor):
        arr = arr.numpy()
    elif not isinstance(arr, (np.ndarray, np.generic)):
        arr = np.array(arr)
    device = device or cpu(0)
    return empty(arr.shape, str(arr.dtype) if arr.dtype != np.bool_ else "bool", device, mem_scope).copyfrom(
        arr
    )


def from_dlpack(ext_tensor: Any) -> Tensor:
    """Zero-copy import of a DLPack-capable tensor (numpy, torch, ...)."""
    # The class set with _set_class_tensor above.
    return cast(Tensor, tvm_ffi.from_dlpack(ext_tensor, require_alignment=64, require_contiguous=True))


def device_from_target(target: Any, index: int | None = None) -> Device:
    """The device for a target string such as ``"cuda"`` or ``"llvm"``."""
    kind = str(target).split()[0].split("-")[0]
    aliases = {"llvm": "cpu", "c": "cpu", "nvptx": "cuda", "cl": "opencl", "mtl": "metal"}
    return device(aliases.get(kind, kind), index or 0)


_DL = tvm_ffi.DLDeviceType
# Plain ints: the constructors below are on hot paths, and tvm_ffi.device() takes an int faster
# than an enum member.
_CPU, _CUDA, _OPENCL, _VULKAN = int(_DL.kDLCPU), int(_DL.kDLCUDA), int(_DL.kDLOpenCL), int(_DL.kDLVulkan)
_METAL, _VPI, _ROCM, _EXT_DEV = int(_DL.kDLMetal), int(_DL.kDLVPI), int(_DL.kDLROCM), int(_DL.kDLExtDev)
_WEBGPU, _HEXAGON = int(_DL.kDLWebGPU), int(_DL.kDLHexagon)


def cpu(dev_id: int = 0) -> Device:
    return device(_CPU, dev_id)


def cuda(dev_id: int = 0) -> Device:
    return device(_CUDA, dev_id)


def opencl(dev_id: int = 0) -> Device:
    return device(_OPENCL, dev_id)


def vulkan(dev_id: int = 0) -> Device:
    return device(_VULKAN, dev_id)


def metal(dev_id: int = 0) -> Device:
    return device(_METAL, dev_id)


def vpi(dev_id: int = 0) -> Device:
    return device(_VPI, dev_id)


def rocm(dev_id: int = 0) -> Device:
    return device(_ROCM, dev_id)


def ext_dev(dev_id: int = 0) -> Device:
    return device(_EXT_DEV, dev_id)


def webgpu(dev_id: int = 0) -> Device:
    return device(_WEBGPU, dev_id)


def hexagon(dev_id: int = 0) -> Device:
    return device(_HEXAGON, dev_id)
