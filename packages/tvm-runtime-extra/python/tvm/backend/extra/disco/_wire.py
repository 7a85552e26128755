"""How Disco messages cross a pipe or a socket: a small self-describing binary encoding.

Only plain values can cross, never pickled objects, so a peer on the network can at worst send
a malformed message (a ValueError here), not code to run.  What a message may hold:

    None, bool, int, float, str, bytes, tuple, list,
    Reg (a register), DeviceSpec (a device), TensorValue (a tensor's dtype, shape and bytes),
    tvm_ffi.Shape, and dtypes (sent as DTypeValue).

Thread workers skip the encoding: their messages are the tuples themselves.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")
_DEV = struct.Struct("<ii")


@dataclass(frozen=True)
class Reg:
    """A register reference inside call arguments."""

    reg_id: int


@dataclass(frozen=True)
class DeviceSpec:
    """A device as (DLPack device type, index)."""

    device_type: int
    index: int

    @staticmethod
    def of(device: Any) -> DeviceSpec | None:
        if device is None:
            return None
        return DeviceSpec(int(device.dlpack_device_type()), int(device.index))


@dataclass(frozen=True)
class DTypeValue:
    """A dtype argument (``"float32"``), kept apart from plain strings."""

    name: str


@dataclass(frozen=True)
class ShapeValue:
    """A ``tvm_ffi.Shape`` argument or result."""

    dims: tuple[int, ...]


@dataclass(frozen=True)
class TensorValue:
    """A tensor's content: its dtype, shape and raw bytes (row-major)."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes | bytearray | memoryview


def encode(value: Any) -> bytes:
    out: list[bytes | memoryview] = []
    _encode(value, out)
    return b"".join(out)


def decode(data: bytes | bytearray | memoryview) -> Any:
    view = memoryview(data)
    value, end = _decode(view, 0)
    if end != len(view):
        raise ValueError(f"malformed Disco message: {len(view) - end} trailing bytes")
    return value


def _encode(value: Any, out: list) -> None:
    if value is None:
        out.append(b"N")
    elif value is True or value is False:
        out.append(b"T" if value else b"F")
    elif isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            out += [b"i", _I64.pack(value)]
        else:
            _encode_text(b"I", str(value), out)
    elif isinstance(value, float):
        out += [b"f", _F64.pack(value)]
    elif isinstance(value, str):
        _encode_text(b"s", value, out)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        out += [b"b", _U64.pack(len(value)), value]
    elif isinstance(value, (tuple, list)):
        out += [b"t" if isinstance(value, tuple) else b"l", _U32.pack(len(value))]
        for item in value:
            _encode(item, out)
    elif isinstance(value, Reg):
        out += [b"r", _I64.pack(value.reg_id)]
    elif isinstance(value, DeviceSpec):
        out += [b"d", _DEV.pack(value.device_type, value.index)]
    elif isinstance(value, DTypeValue):
        _encode_text(b"y", value.name, out)
    elif isinstance(value, ShapeValue):
        out += [b"S", _U32.pack(len(value.dims))] + [_I64.pack(int(d)) for d in value.dims]
    elif isinstance(value, TensorValue):
        _encode_text(b"v", value.dtype, out)
        out += [_U32.pack(len(value.shape))] + [_I64.pack(int(d)) for d in value.shape]
        out += [_U64.pack(len(value.data)), value.data]
    else:
        raise TypeError(f"a {type(value).__name__} cannot be sent to or from a Disco worker")


def _encode_text(tag: bytes, text: str, out: list) -> None:
    raw = text.encode("utf-8")
    out += [tag, _U32.pack(len(raw)), raw]


def _need(view: memoryview, pos: int, n: int) -> None:
    if pos + n > len(view):
        raise ValueError("malformed Disco message: truncated")


def _text(view: memoryview, pos: int) -> tuple[str, int]:
    _need(view, pos, 4)
    (n,) = _U32.unpack_from(view, pos)
    _need(view, pos + 4, n)
    return bytes(view[pos + 4 : pos + 4 + n]).decode("utf-8"), pos + 4 + n


def _dims(view: memoryview, pos: int) -> tuple[tuple[int, ...], int]:
    _need(view, pos, 4)
    (n,) = _U32.unpack_from(view, pos)
    _need(view, pos + 4, 8 * n)
    dims = struct.unpack_from(f"<{n}q", view, pos + 4)
    return tuple(dims), pos + 4 + 8 * n


def _decode(view: memoryview, pos: int) -> tuple[Any, int]:
    _need(view, pos, 1)
    tag = view[pos]  # an int: comparing ints is what keeps decoding cheap
    pos += 1
    if tag == _TAG_INT:
        _need(view, pos, 8)
        return _I64.unpack_from(view, pos)[0], pos + 8
    if tag == _TAG_STR:
        return _text(view, pos)
    if tag == _TAG_REG:
        _need(view, pos, 8)
        return Reg(_I64.unpack_from(view, pos)[0]), pos + 8
    if tag in (_TAG_TUPLE, _TAG_LIST):
        _need(view, pos, 4)
        (n,) = _U32.unpack_from(view, pos)
        pos += 4
        items = []
        for _ in range(n):
            item, pos = _decode(view, pos)
            items.append(item)
        return (tuple(items) if tag == _TAG_TUPLE else items), pos
    if tag == _TAG_NONE:
        return None, pos
    if tag in (_TAG_TRUE, _TAG_FALSE):
        return tag == _TAG_TRUE, pos
    if tag == _TAG_BIGINT:
        text, pos = _text(view, pos)
        return int(text), pos
    if tag == _TAG_FLOAT:
        _need(view, pos, 8)
        return _F64.unpack_from(view, pos)[0], pos + 8
    if tag == _TAG_BYTES:
        _need(view, pos, 8)
        (n,) = _U64.unpack_from(view, pos)
        _need(view, pos + 8, n)
        return bytes(view[pos + 8 : pos + 8 + n]), pos + 8 + n
    if tag == _TAG_DEVICE:
        _need(view, pos, 8)
        return DeviceSpec(*_DEV.unpack_from(view, pos)), pos + 8
    if tag == _TAG_DTYPE:
        name, pos = _text(view, pos)
        return DTypeValue(name), pos
    if tag == _TAG_SHAPE:
        dims, pos = _dims(view, pos)
        return ShapeValue(dims), pos
    if tag == _TAG_TENSOR:
        dtype, pos = _text(view, pos)
        shape, pos = _dims(view, pos)
        _need(view, pos, 8)
        (n,) = _U64.unpack_from(view, pos)
        _need(view, pos + 8, n)
        return TensorValue(dtype, shape, view[pos + 8 : pos + 8 + n]), pos + 8 + n
    raise ValueError(f"malformed Disco message: unknown tag {tag}")


_TAG_NONE, _TAG_TRUE, _TAG_FALSE, _TAG_INT, _TAG_BIGINT, _TAG_FLOAT = b"NTFiIf"
_TAG_STR, _TAG_BYTES, _TAG_TUPLE, _TAG_LIST, _TAG_REG, _TAG_DEVICE = b"sbtlrd"
_TAG_DTYPE, _TAG_SHAPE, _TAG_TENSOR = b"ySv"
