"""tvm values <-> what crosses the wire (see _wire): tensors as bytes, shapes, devices, dtypes."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import tvm_ffi

from ._wire import DeviceSpec, DTypeValue, ShapeValue, TensorValue


def _runtime_api() -> Any:
    from tvm.runtime import _ffi_api

    return _ffi_api


def tensor_nbytes(dtype: str, shape: tuple[int, ...]) -> int:
    t = tvm_ffi.dtype(dtype)
    numel = 1
    for d in shape:
        numel *= int(d)
    return numel * ((t.bits * t.lanes + 7) // 8)


def tensor_value(tensor: Any) -> TensorValue:
    """The bytes of a tvm Tensor (any device: copied to the host)."""
    shape = tuple(int(d) for d in tensor.shape)
    dtype = str(tensor.dtype)
    data = bytearray(tensor_nbytes(dtype, shape))
    if data:
        ptr = (ctypes.c_char * len(data)).from_buffer(data)
        _runtime_api().TVMTensorCopyToBytes(tensor, ctypes.c_void_p(ctypes.addressof(ptr)), len(data))
    return TensorValue(dtype, shape, data)


def host_value(array: Any) -> TensorValue:
    """A numpy array or tvm Tensor on the controller, as a TensorValue."""
    if hasattr(array, "dtype") and hasattr(array, "shape") and not isinstance(array, np.ndarray):
        return tensor_value(array)
    arr = np.ascontiguousarray(array)
    dtype = "bool" if arr.dtype == np.bool_ else str(arr.dtype)
    return TensorValue(dtype, tuple(int(d) for d in arr.shape), arr.tobytes())


def copy_into(tensor: Any, value: TensorValue) -> None:
    """Copy a TensorValue's bytes into an existing tvm Tensor of the same size."""
    want = tensor_nbytes(str(tensor.dtype), tuple(int(d) for d in tensor.shape))
    if len(value.data) != want or value.dtype != str(tensor.dtype):
        raise ValueError(
            f"cannot copy a {value.dtype} array of shape {value.shape} into a {tensor.dtype} tensor "
            f"of shape {tuple(tensor.shape)}"
        )
    if want:
        buf = np.frombuffer(value.data, dtype=np.uint8)
        _runtime_api().TVMTensorCopyFromBytes(tensor, buf.ctypes.data_as(ctypes.c_void_p), want)


def new_tensor(value: TensorValue, device: Any = None) -> Any:
    """A new tvm Tensor (CPU unless `device`) holding a TensorValue."""
    import tvm

    out = tvm.runtime.empty(value.shape, value.dtype, device or tvm.cpu(0))
    copy_into(out, value)
    return out


def to_wire(value: Any) -> Any:
    """A worker's register value as it is sent back to the controller."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if isinstance(value, tvm_ffi.Shape):
        return ShapeValue(tuple(int(d) for d in value))
    if isinstance(value, tvm_ffi.core.Tensor):
        return tensor_value(value)
    if isinstance(value, tvm_ffi.core.Device):
        return DeviceSpec.of(value)
    if isinstance(value, tvm_ffi.dtype):
        return DTypeValue(str(value))
    if isinstance(value, (list, tuple, tvm_ffi.Array)):
        return [to_wire(v) for v in value]
    return repr(value)


def from_wire(value: Any, device_for_tensors: Any = None) -> Any:
    """A value received from the wire, as tvm objects (tensors on `device_for_tensors`)."""
    import tvm

    if isinstance(value, TensorValue):
        return new_tensor(value, device_for_tensors)
    if isinstance(value, ShapeValue):
        return tvm_ffi.Shape(value.dims)
    if isinstance(value, DeviceSpec):
        return tvm.device(value.device_type, value.index)
    if isinstance(value, DTypeValue):
        return tvm_ffi.dtype(value.name)
    if isinstance(value, list):
        return [from_wire(v, device_for_tensors) for v in value]
    if isinstance(value, tuple):
        return tuple(from_wire(v, device_for_tensors) for v in value)
    return value
