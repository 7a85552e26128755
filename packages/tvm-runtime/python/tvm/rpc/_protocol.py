"""Wire format of apache-tvm's RPC endpoint (protocol "0.8.0"), shared by our server and client.

Everything is little-endian.  After the socket handshake (see ``base``) each message is a packet:
``uint64 nbytes`` followed by ``nbytes`` bytes that start with an ``int32`` code.  Argument lists
("packed sequences") are ``int32 count`` then, per value, an ``int32`` tvm-ffi type index and a
payload whose layout depends on that index.  Written from the published format and from
observing apache-tvm 0.27.0.post1's client and server.
"""

from __future__ import annotations

import enum
import struct
from typing import Any

PROTOCOL_VERSION = "0.8.0"


class Code(enum.IntEnum):
    """Packet codes (int32 after the packet length)."""

    NONE = 0
    SHUTDOWN = 1
    INIT_SERVER = 2
    CALL_FUNC = 3
    RETURN = 4
    EXCEPTION = 5
    COPY_FROM_REMOTE = 6
    COPY_TO_REMOTE = 7
    COPY_ACK = 8
    # "syscalls": codes from here on carry a packed sequence and answer with one value
    GET_GLOBAL_FUNC = 9
    FREE_HANDLE = 10
    DEV_SET_DEVICE = 11
    DEV_GET_ATTR = 12
    DEV_ALLOC_DATA = 13
    DEV_FREE_DATA = 14
    DEV_STREAM_SYNC = 15
    COPY_AMONG_REMOTE = 16
    DEV_ALLOC_DATA_WITH_SCOPE = 17
    DEV_CREATE_STREAM = 18
    DEV_FREE_STREAM = 19
    DEV_SET_STREAM = 20
    DEV_GET_CURRENT_STREAM = 21


class TypeIndex(enum.IntEnum):
    """tvm-ffi 0.1.x static type indices that appear on the wire."""

    NONE = 0
    INT = 1
    BOOL = 2
    FLOAT = 3
    OPAQUE_PTR = 4
    DATA_TYPE = 5
    DEVICE = 6
    DL_TENSOR_PTR = 7
    RAW_STR = 8
    BYTE_ARRAY_PTR = 9
    SMALL_STR = 11
    SMALL_BYTES = 12
    OBJECT_BEGIN = 64
    STR = 65
    BYTES = 66
    FUNCTION = 68
    SHAPE = 69
    TENSOR = 70
    ARRAY = 71
    MAP = 72
    MODULE = 73


# apache-tvm's runtime-level type index of RPCObjectRef (a remote object handle passed back).
RPC_OBJECT_REF_INDEX = 115  # kTVMFFIDynObjectBegin - 13 in apache-tvm 0.27

# Device types at or above this carry an RPC session mask (client side only).
RPC_SESS_MASK = 128


class ProtocolError(Exception):
    """The peer sent bytes that do not follow the protocol; the session cannot continue."""


class DLTensorMeta:
    """A DLTensor as it travels: a remote data handle plus the metadata to interpret it."""

    __slots__ = ("data", "device_type", "device_id", "dtype", "shape", "byte_offset")

    def __init__(
        self,
        data: int,
        device_type: int,
        device_id: int,
        dtype: tuple[int, int, int],
        shape: tuple[int, ...],
        byte_offset: int = 0,
    ) -> None:
        self.data = data
        self.device_type = device_type
        self.device_id = device_id
        self.dtype = dtype
        self.shape = shape
        self.byte_offset = byte_offset

    @property
    def nbytes(self) -> int:
        code, bits, lanes = self.dtype
        count = 1
        for dim in self.shape:
            count *= dim
        return count * ((bits * lanes + 7) // 8)

    def __repr__(self) -> str:
        return (
            f"DLTensorMeta(data=0x{self.data:x}, device=({self.device_type}, {self.device_id}), "
            f"dtype={self.dtype}, shape={self.shape}, byte_offset={self.byte_offset})"
        )


class Opaque(int):
    """An opaque 64-bit handle (type index OPAQUE_PTR), kept distinct from plain ints."""


class Handle(int):
    """A remote object handle with the type index it travels under (FUNCTION, MODULE, ...)."""

    type_index: int

    def __new__(cls, value: int, type_index: int) -> Handle:
        obj = super().__new__(cls, value)
        obj.type_index = type_index
        return obj


class DataType(tuple):
    """A DLDataType (code, bits, lanes) as a value, distinct from a plain tuple."""


class Device(tuple):
    """A DLDevice (device_type, device_id) as a value."""


class Reader:
    """Parses one packet held in memory; running past its end is a ProtocolError, not a crash."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        self.buf = memoryview(buf)
        self.pos = 0
        self.end = len(buf)

    def _take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > self.end:
            raise ProtocolError(
                f"packet truncated: needed {n} bytes at offset {self.pos} of a {self.end}-byte packet"
            )
        view = self.buf[self.pos : self.pos + n]
        self.pos += n
        return view

    def unpack(self, fmt: struct.Struct) -> tuple[Any, ...]:
        return fmt.unpack(self._take(fmt.size))

    def i32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def u32(self) -> int:
        return _U32.unpack(self._take(4))[0]

    def i64(self) -> int:
        return _I64.unpack(self._take(8))[0]

    def u64(self) -> int:
        return _U64.unpack(self._take(8))[0]

    def raw(self, n: int) -> bytes:
        return bytes(self._take(n))

    def view(self, n: int) -> memoryview:
        return self._take(n)

    def remaining(self) -> int:
        return self.end - self.pos

    def dltensor(self) -> DLTensorMeta:
        data, dev_type, dev_id, ndim, code, bits, lanes = self.unpack(_DLTENSOR_HEAD)
        if not 0 <= ndim <= 64:
            raise ProtocolError(f"DLTensor with ndim={ndim}")
        shape = struct.unpack_from(f"<{ndim}q", self._take(8 * ndim)) if ndim else ()
        byte_offset = self.u64()
        if any(d < 0 for d in shape):
            raise ProtocolError(f"DLTensor with negative shape {shape}")
        return DLTensorMeta(data, dev_type, dev_id, (code, bits, lanes), tuple(shape), byte_offset)

    def packed_seq(self) -> list[Any]:
        count = self.i32()
        if count < 0 or count > self.remaining() // 4:
            raise ProtocolError(f"argument count {count} does not fit the packet")
        return [self._value() for _ in range(count)]

    def _value(self) -> Any:
        tindex = self.i32()
        if tindex == TypeIndex.NONE:
            return None
        if tindex == TypeIndex.INT:
            return self.i64()
        if tindex == TypeIndex.BOOL:
            return bool(self.i64())
        if tindex == TypeIndex.FLOAT:
            return _F64.unpack(self._take(8))[0]
        if tindex == TypeIndex.OPAQUE_PTR:
            return Opaque(self.u64())
        if tindex == TypeIndex.DATA_TYPE:
            code, bits, lanes, _pad = self.unpack(_DTYPE_PADDED)
            return DataType((code, bits, lanes))
        if tindex == TypeIndex.DEVICE:
            return Device(self.unpack(_DEVICE))
        if tindex in (TypeIndex.FUNCTION, TypeIndex.MODULE):
            return Handle(self.u64(), tindex)
        if tindex == TypeIndex.RAW_STR:
            return self._text(self.u64())
        if tindex == TypeIndex.BYTE_ARRAY_PTR:
            return self.raw(self._length(self.u64()))
        if tindex == TypeIndex.DL_TENSOR_PTR:
            return self.dltensor()
        if tindex >= TypeIndex.OBJECT_BEGIN or tindex in (TypeIndex.SMALL_STR, TypeIndex.SMALL_BYTES):
            # objects repeat their type index (uint32) before the payload
            inner = self.u32()
            if inner == RPC_OBJECT_REF_INDEX:
                return Handle(self.u64(), RPC_OBJECT_REF_INDEX)
            if inner == TypeIndex.STR:
                return self._text(self.u64())
            if inner == TypeIndex.BYTES:
                return self.raw(self._length(self.u64()))
            raise ProtocolError(f"object type index {inner} cannot travel over RPC")
        raise ProtocolError(f"unknown type index {tindex}")

    def _length(self, n: int) -> int:
        if n > self.remaining():
            raise ProtocolError(f"length field {n} exceeds the {self.remaining()} bytes left in the packet")
        return n

    def _text(self, n: int) -> str:
        return bytes(self._take(self._length(n))).decode("utf-8", errors="replace")


class Writer:
    """Builds one packet body; ``packet()`` prefixes its length."""

    __slots__ = ("parts",)

    def __init__(self, code: int | None = None) -> None:
        self.parts: list[bytes | bytearray | memoryview] = []
        if code is not None:
            self.i32(code)

    def i32(self, v: int) -> None:
        self.parts.append(_I32.pack(v))

    def u32(self, v: int) -> None:
        self.parts.append(_U32.pack(v))

    def i64(self, v: int) -> None:
        self.parts.append(_I64.pack(v))

    def u64(self, v: int) -> None:
        self.parts.append(_U64.pack(v))

    def raw(self, b: bytes | bytearray | memoryview) -> None:
        self.parts.append(b)

    def dltensor(self, t: DLTensorMeta) -> None:
        code, bits, lanes = t.dtype
        ndim = len(t.shape)
        self.parts.append(_DLTENSOR_HEAD.pack(t.data, t.device_type, t.device_id, ndim, code, bits, lanes))
        if ndim:
            self.parts.append(struct.pack(f"<{ndim}q", *t.shape))
        self.u64(t.byte_offset)

    def packed_seq(self, values: list[Any] | tuple[Any, ...]) -> None:
        self.i32(len(values))
        for v in values:
            self._value(v)

    def _value(self, v: Any) -> None:
        if v is None:
            self.i32(TypeIndex.NONE)
        elif isinstance(v, bool):
            self.i32(TypeIndex.BOOL)
            self.i64(int(v))
        elif isinstance(v, Handle):
            if v.type_index == RPC_OBJECT_REF_INDEX:
                self.i32(RPC_OBJECT_REF_INDEX)
                self.u32(RPC_OBJECT_REF_INDEX)
            else:
                self.i32(v.type_index)
            self.u64(int(v))
        elif isinstance(v, Opaque):
            self.i32(TypeIndex.OPAQUE_PTR)
            self.u64(int(v))
        elif isinstance(v, int):
            self.i32(TypeIndex.INT)
            self.i64(v)
        elif isinstance(v, float):
            self.i32(TypeIndex.FLOAT)
            self.parts.append(_F64.pack(v))
        elif isinstance(v, DataType):
            self.i32(TypeIndex.DATA_TYPE)
            self.parts.append(_DTYPE_PADDED.pack(v[0], v[1], v[2], 0))
        elif isinstance(v, Device):
            self.i32(TypeIndex.DEVICE)
            self.parts.append(_DEVICE.pack(v[0], v[1]))
        elif isinstance(v, str):
            data = v.encode("utf-8")
            self.i32(TypeIndex.RAW_STR)
            self.u64(len(data))
            self.raw(data)
        elif isinstance(v, (bytes, bytearray, memoryview)):
            self.i32(TypeIndex.BYTE_ARRAY_PTR)
            self.u64(len(v))
            self.raw(v)
        elif isinstance(v, DLTensorMeta):
            self.i32(TypeIndex.DL_TENSOR_PTR)
            self.dltensor(v)
        else:
            raise TypeError(f"cannot send a value of type {type(v).__name__} over RPC")

    def packet(self) -> list[bytes | bytearray | memoryview]:
        """The wire chunks of this packet (length prefix first), ready for ``sendmsg``."""
        nbytes = sum(len(p) for p in self.parts)
        return [_U64.pack(nbytes), *self.parts]


def exception_packet(message: str) -> list[bytes | bytearray | memoryview]:
    w = Writer(Code.EXCEPTION)
    w.packed_seq([message])
    return w.packet()


_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")
_DEVICE = struct.Struct("<ii")
_DTYPE_PADDED = struct.Struct("<BBHi")
# data handle, device (type, id), ndim, dtype (code, bits, lanes)
_DLTENSOR_HEAD = struct.Struct("<QiiiBBH")
