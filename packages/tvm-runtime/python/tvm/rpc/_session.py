"""One RPC server session: decodes packets from a client and runs them on the local runtime.

A session owns every remote handle it hands out (functions, modules, tensors, objects) in
tables keyed by small synthetic integers, so a client can never make the server dereference an
address it did not issue: unknown handles are errors, not crashes.  Dropping the session drops
the tables, which frees everything the client left behind.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import os
import select
import socket
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import tvm_ffi

from ._policy import SessionPolicy
from ._protocol import (
    PROTOCOL_VERSION,
    RPC_OBJECT_REF_INDEX,
    Code,
    DataType,
    Device,
    DLTensorMeta,
    Handle,
    Opaque,
    ProtocolError,
    Reader,
    TypeIndex,
    Writer,
    exception_packet,
)
from ._workspace import Workspace

logger = logging.getLogger("tvm.rpc.server")

# Default bound on one packet; a 10 MB artifact upload is one packet, a corrupt length is not.
DEFAULT_MAX_PACKET_BYTES = 1 << 30

_ATTR_EXIST = 0
# The session's own functions (the workspace's); other names there do not exist on this server.
_SERVER_NAMESPACE = "tvm.rpc.server."
# Replies up to this size are joined into one buffer before sending.
_COALESCE_BYTES = 1 << 16


class SessionClosedError(Exception):
    """The client shut the session down or went away."""


class SessionIdleError(Exception):
    """The client sent nothing for longer than the server's idle timeout."""


def _global(name: str) -> Any:
    return tvm_ffi.get_global_func(name)


class ServerSession:
    """Serves one connected client until it sends SHUTDOWN or disconnects."""

    def __init__(
        self,
        sock: socket.socket,
        workspace: Workspace,
        max_packet_bytes: int = DEFAULT_MAX_PACKET_BYTES,
        *,
        policy: SessionPolicy | None = None,
        idle_timeout: float | None = None,
        initialized: bool = False,
    ) -> None:
        self.sock = sock
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.workspace = workspace
        self.max_packet_bytes = max_packet_bytes
        self.policy = policy or SessionPolicy()
        self.idle_timeout = idle_timeout
        # The listener answers INIT_SERVER itself once it admits a client (server.py).
        self.initialized = initialized
        # True while a client call runs (read by the hang-up watcher; a plain flag is cheapest)
        self._busy = False
        self._ids = itertools.count(0x1000, 0x10)
        # handle -> function / module / object handed to the client
        self.objects: dict[int, Any] = {}
        # data handle -> the tensor whose memory it names
        self.buffers: dict[int, Any] = {}
        # object handle of a returned tensor -> its data handle (freed together)
        self.tensor_data: dict[int, int] = {}
        self.local_funcs: dict[str, Callable[..., Any]] = workspace.functions()
        self._alloc = _global("runtime.TVMTensorAllocWithScope")
        self._view = _global("runtime.TVMTensorCreateView")
        self._from_bytes = _global("runtime.TVMTensorCopyFromBytes")
        self._to_bytes = _global("runtime.TVMTensorCopyToBytes")
        self._copy = _global("runtime.TVMTensorCopyFromTo")
        self._sync = _global("runtime.Device_StreamSync")
        self._attr = _global("runtime.GetDeviceAttr")
        self._syscalls: dict[int, Callable[[list[Any]], Any]] = {
            Code.GET_GLOBAL_FUNC: self._sys_get_global_func,
            Code.FREE_HANDLE: self._sys_free_handle,
            Code.DEV_SET_DEVICE: self._sys_set_device,
            Code.DEV_GET_ATTR: self._sys_get_attr,
            Code.DEV_ALLOC_DATA: self._sys_alloc_data,
            Code.DEV_ALLOC_DATA_WITH_SCOPE: self._sys_alloc_with_scope,
            Code.DEV_FREE_DATA: self._sys_free_data,
            Code.DEV_STREAM_SYNC: self._sys_stream_sync,
            Code.COPY_AMONG_REMOTE: self._sys_copy_among,
            Code.DEV_CREATE_STREAM: self._sys_create_stream,
            Code.DEV_FREE_STREAM: self._sys_free_stream,
            Code.DEV_SET_STREAM: self._sys_set_stream,
            Code.DEV_GET_CURRENT_STREAM: lambda args: None,
        }

    # ------------------------------------------------------------------ socket I/O

    def _recv_exact(self, n: int, buf: bytearray | None = None) -> bytearray:
        out = buf if buf is not None else bytearray(n)
        view = memoryview(out)
        got = 0
        while got < n:
            if self.idle_timeout is not None:
                self._wait_readable(got == 0 and buf is None and n == 8)
            k = self.sock.recv_into(view[got:], n - got)
            if k == 0:
                if got == 0 and buf is None and n == 8:
                    raise SessionClosedError("client closed the connection")
                raise ProtocolError(f"connection closed in the middle of a packet ({got}/{n} bytes)")
            got += k
        return out

    def _wait_readable(self, between_calls: bool) -> None:
        """Wait up to the idle timeout for the client's next bytes (a TLS socket may hold some
        already decrypted)."""
        pending = getattr(self.sock, "pending", None)
        if pending is not None and pending():
            return
        readable, _, _ = select.select([self.sock], [], [], self.idle_timeout)
        if not readable:
            what = "sent nothing" if between_calls else "stopped in the middle of a packet"
            raise SessionIdleError(
                f"the client {what} for {self.idle_timeout:g}s, the server's idle timeout "
                "(--idle-timeout); connect again"
            )

    def _send(self, chunks: list[bytes | bytearray | memoryview]) -> None:
        # One write per packet: split writes of a small reply stall on Nagle + delayed ACK.
        if sum(len(c) for c in chunks) <= _COALESCE_BYTES:
            self.sock.sendall(b"".join(chunks))
            return
        for chunk in chunks:
            if len(chunk):
                self.sock.sendall(chunk)

    def _send_exception(self, message: str) -> None:
        self._send(exception_packet(message))

    def _return(self, values: list[Any]) -> None:
        w = Writer(Code.RETURN)
        w.packed_seq(values)
        self._send(w.packet())

    # ------------------------------------------------------------------ main loop

    def serve(self) -> None:
        """Handle packets until shutdown; protocol violations raise ProtocolError."""
        try:
            while True:
                nbytes = int.from_bytes(self._recv_exact(8), "little")
                if nbytes == 0:
                    continue
                if nbytes > self.max_packet_bytes:
                    raise ProtocolError(
                        f"packet length {nbytes} exceeds the server limit of {self.max_packet_bytes} bytes"
                    )
                if nbytes < 4:
                    raise ProtocolError(f"packet of {nbytes} bytes has no room for its code")
                packet = self._recv_exact(nbytes)
                if not self._handle(packet):
                    return
        except SessionClosedError:
            return
        finally:
            self.close()

    def watch_for_hangup(self, on_hangup: Callable[[], None], period: float = 0.2) -> None:
        """Call ``on_hangup`` (from a daemon thread) if the client disconnects during a call.

        The client sends nothing while it waits for a result, so end-of-stream seen then means
        it is gone: there is no one to return the result to, and a long call (a timing run)
        would otherwise keep the server from its next client.
        """

        def watch() -> None:
            while True:
                if not self._busy:
                    time.sleep(period)
                    continue
                readable, _, _ = select.select([self.sock], [], [], period)
                if not readable or not self._busy:
                    continue
                try:
                    peeked = self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                except BlockingIOError:
                    continue
                except OSError:
                    peeked = b""
                if not peeked and self._busy:
                    on_hangup()
                    return
                time.sleep(period)  # data is waiting (unusual mid-call): look again later

        threading.Thread(target=watch, name="tvm-rpc-hangup-watch", daemon=True).start()

    def close(self) -> None:
        """Release everything the client still holds (modules, tensors, functions)."""
        self.objects.clear()
        self.buffers.clear()
        self.tensor_data.clear()

    def _handle(self, packet: bytearray) -> bool:
        reader = Reader(packet)
        code = reader.i32()
        if code == Code.SHUTDOWN:
            return False
        if code == Code.INIT_SERVER:
            self._init_server(reader)
        elif not self.initialized:
            raise ProtocolError(f"packet code {code} before the session was initialised")
        elif code == Code.CALL_FUNC:
            self._call_func(reader)
        elif code == Code.COPY_TO_REMOTE:
            self._copy_to_remote(reader, packet)
        elif code == Code.COPY_FROM_REMOTE:
            self._copy_from_remote(reader)
        elif code in self._syscalls:
            args = reader.packed_seq()
            self._guarded(lambda: [self._syscalls[code](args)])
        else:
            raise ProtocolError(f"unexpected packet code {code} from a client")
        return True

    def _guarded(self, action: Callable[[], list[Any] | None]) -> None:
        """Run ``action``; send its values back, or its error as an EXCEPTION packet."""
        try:
            values = action()
        except ProtocolError:
            raise
        except Exception as err:  # noqa: BLE001 - every error goes back to the client
            message = _describe(err)
            logger.debug("call failed: %s", message)
            self._send_exception(message)
            return
        if values is not None:
            self._return(values)

    # ------------------------------------------------------------------ packet handlers

    def _init_server(self, reader: Reader) -> None:
        version = reader.raw(reader.u64() if reader.remaining() >= 8 else 0).decode("utf-8", "replace")
        args = reader.packed_seq()

        def init() -> list[Any]:
            if self.initialized:
                raise RuntimeError("the RPC session has already been initialised")
            if version != PROTOCOL_VERSION:
                raise RuntimeError(
                    f"client protocol version {version!r} does not match the server's "
                    f"{PROTOCOL_VERSION!r}; use an apache-tvm 0.27-compatible client"
                )
            if args and args[0] != "rpc.LocalSession":
                raise RuntimeError(
                    f"session constructor {args[0]!r} is not supported by the tvm-runtime RPC server "
                    "(only the default local session)"
                )
            self.initialized = True
            return [None]

        self._guarded(init)

    def _call_func(self, reader: Reader) -> None:
        handle = reader.u64()
        raw_args = reader.packed_seq()

        def call() -> list[Any]:
            func = self._lookup(handle, "function")
            if not callable(func):
                raise TypeError(f"remote handle 0x{handle:x} is not a function")
            args = [self._decode(a) for a in raw_args]
            self._busy = True
            try:
                rv = func(*args)
            finally:
                self._busy = False
            return self._encode_return(rv)

        self._guarded(call)

    def _copy_to_remote(self, reader: Reader, packet: bytearray) -> None:
        meta = reader.dltensor()
        nbytes = reader.u64()
        if nbytes > reader.remaining():
            raise ProtocolError(f"copy of {nbytes} bytes but only {reader.remaining()} follow")
        offset = reader.pos
        reader.view(nbytes)

        def copy() -> list[Any]:
            view = self._flat_view(meta, nbytes)
            if nbytes:
                src = (ctypes.c_char * nbytes).from_buffer(packet, offset)
                self._from_bytes(view, ctypes.c_void_p(ctypes.addressof(src)), nbytes)
            return [None]

        self._guarded(copy)

    def _copy_from_remote(self, reader: Reader) -> None:
        meta = reader.dltensor()
        nbytes = reader.u64()
        if nbytes > self.max_packet_bytes:
            raise ProtocolError(f"copy of {nbytes} bytes exceeds the server limit")
        try:
            view = self._flat_view(meta, nbytes)
            out = bytearray(nbytes)
            if nbytes:
                dst = (ctypes.c_char * nbytes).from_buffer(out)
                self._to_bytes(view, ctypes.c_void_p(ctypes.addressof(dst)), nbytes)
                del dst
        except Exception as err:  # noqa: BLE001 - the error goes back to the client
            self._send_exception(_describe(err))
            return
        w = Writer(Code.COPY_ACK)
        w.raw(out)
        self._send(w.packet())

    # ------------------------------------------------------------------ values

    def _new_handle(self, obj: Any) -> int:
        handle = next(self._ids)
        self.objects[handle] = obj
        return handle

    def _lookup(self, handle: int, what: str) -> Any:
        try:
            return self.objects[handle]
        except KeyError:
            raise ValueError(f"unknown remote {what} handle 0x{handle:x} (already freed?)") from None

    def _tensor(self, meta: DLTensorMeta) -> Any:
        """A tensor viewing the memory ``meta`` names (its data handle must be one we issued)."""
        base = self.buffers.get(meta.data)
        if base is None:
            raise ValueError(f"unknown remote data handle 0x{meta.data:x} (freed or never allocated)")
        dtype = tvm_ffi.dtype.from_dlpack_data_type(meta.dtype)
        if meta.byte_offset == 0 and tuple(base.shape) == meta.shape and base.dtype == dtype:
            return base
        return self._view(base, tvm_ffi.Shape(meta.shape), dtype, meta.byte_offset)

    def _flat_view(self, meta: DLTensorMeta, nbytes: int) -> Any:
        base = self.buffers.get(meta.data)
        if base is None:
            raise ValueError(f"unknown remote data handle 0x{meta.data:x} (freed or never allocated)")
        return self._view(base, tvm_ffi.Shape((nbytes,)), tvm_ffi.dtype("uint8"), meta.byte_offset)

    def _decode(self, value: Any) -> Any:
        if isinstance(value, DLTensorMeta):
            return self._tensor(value)
        if isinstance(value, Handle):
            return self._lookup(int(value), "object")
        if isinstance(value, Opaque):
            return ctypes.c_void_p(int(value)) if value else None
        if isinstance(value, DataType):
            return tvm_ffi.dtype.from_dlpack_data_type(tuple(value))
        if isinstance(value, Device):
            return tvm_ffi.Device(value[0], value[1])
        return value

    def _register_tensor(self, tensor: Any) -> DLTensorMeta:
        data = next(self._ids)
        self.buffers[data] = tensor
        dev = tensor.device
        dtype = tensor.dtype
        return DLTensorMeta(
            data,
            dev.dlpack_device_type(),
            dev.index,
            (dtype.type_code, dtype.bits, dtype.lanes),
            tuple(tensor.shape),
            0,
        )

    def _encode_return(self, rv: Any) -> list[Any]:
        """A function result as (type index, value[, extra]) like apache-tvm's local session."""
        if rv is None:
            return [int(TypeIndex.NONE), None]
        if isinstance(rv, tvm_ffi.Tensor):
            meta = self._register_tensor(rv)
            handle = self._new_handle(rv)
            self.tensor_data[handle] = meta.data
            return [int(TypeIndex.TENSOR), meta, Opaque(handle)]
        if isinstance(rv, tvm_ffi.Module):
            return [int(TypeIndex.MODULE), Opaque(self._new_handle(rv))]
        if isinstance(rv, tvm_ffi.Function) or (callable(rv) and not isinstance(rv, tvm_ffi.Object)):
            return [int(TypeIndex.FUNCTION), Opaque(self._new_handle(rv))]
        if isinstance(rv, tvm_ffi.Object):
            return [_type_index(rv), Opaque(self._new_handle(rv))]
        if isinstance(rv, bool):
            return [int(TypeIndex.BOOL), rv]
        if isinstance(rv, int):
            return [int(TypeIndex.INT), int(rv)]
        if isinstance(rv, float):
            return [int(TypeIndex.FLOAT), float(rv)]
        if isinstance(rv, str):
            if isinstance(rv, tvm_ffi.dtype):
                return [int(TypeIndex.DATA_TYPE), DataType((rv.type_code, rv.bits, rv.lanes))]
            return [int(TypeIndex.STR), str(rv)]
        if isinstance(rv, (bytes, bytearray)):
            return [int(TypeIndex.BYTES), bytes(rv)]
        if isinstance(rv, tvm_ffi.Device):
            return [int(TypeIndex.DEVICE), Device((rv.dlpack_device_type(), rv.index))]
        if isinstance(rv, ctypes.c_void_p):
            return [int(TypeIndex.OPAQUE_PTR), Opaque(rv.value or 0)]
        raise TypeError(f"cannot return a value of type {type(rv).__name__} over RPC")

    # ------------------------------------------------------------------ syscalls

    def _sys_get_global_func(self, args: list[Any]) -> Any:
        name = str(args[0])
        func = self.local_funcs.get(name)
        if func is None and name.startswith(_SERVER_NAMESPACE):
            return None  # clients probe for optional server functions (GetCRTMaxPacketSize)
        if func is None:
            self.policy.check_global(name)
            func = tvm_ffi.get_global_func(name, allow_missing=True)
            if func is not None:
                func = self.policy.wrap_global(name, func, self._confined_path)
        return None if func is None else Opaque(self._new_handle(func))

    def _confined_path(self, path: str) -> str:
        """``path`` inside the session's directory, for a loader the policy confines there."""
        return str(self.workspace.resolve(path))

    def _sys_free_handle(self, args: list[Any]) -> None:
        handle = int(args[0])
        self.objects.pop(handle, None)
        data = self.tensor_data.pop(handle, None)
        if data is not None:
            self.buffers.pop(data, None)

    def _sys_set_device(self, args: list[Any]) -> None:
        dev = args[0]
        _global("__tvm_set_device")(dev[0], dev[1])

    def _sys_get_attr(self, args: list[Any]) -> Any:
        dev, kind = args[0], int(args[1])
        try:
            return self._attr(dev[0], dev[1], kind)
        except Exception:
            if kind == _ATTR_EXIST:
                return 0
            raise

    def _allocate(self, shape: tuple[int, ...], dtype: Any, dev: Device, scope: Any) -> Opaque:
        tensor = self._alloc(tvm_ffi.Shape(shape), dtype, tvm_ffi.Device(dev[0], dev[1]), scope)
        return Opaque(self._register_tensor(tensor).data)

    def _sys_alloc_data(self, args: list[Any]) -> Any:
        dev, nbytes = args[0], int(args[1])
        return self._allocate((nbytes,), tvm_ffi.dtype("uint8"), dev, None)

    def _sys_alloc_with_scope(self, args: list[Any]) -> Any:
        meta: DLTensorMeta = args[0]
        scope = args[1] if len(args) > 1 else None
        dtype = tvm_ffi.dtype.from_dlpack_data_type(meta.dtype)
        return self._allocate(meta.shape, dtype, Device((meta.device_type, meta.device_id)), scope)

    def _sys_free_data(self, args: list[Any]) -> None:
        self.buffers.pop(int(args[1]), None)

    def _sys_stream_sync(self, args: list[Any]) -> None:
        dev = args[0]
        self._sync(tvm_ffi.Device(dev[0], dev[1]), None)

    def _sys_copy_among(self, args: list[Any]) -> None:
        src, dst = self._tensor(args[0]), self._tensor(args[1])
        self._copy(src, dst)
        for meta in (args[0], args[1]):
            self._sync(tvm_ffi.Device(meta.device_type, meta.device_id), None)

    def _sys_create_stream(self, args: list[Any]) -> Any:
        dev = args[0]
        stream = _global("runtime.Device_StreamCreate")(tvm_ffi.Device(dev[0], dev[1]))
        return Opaque(stream)

    def _sys_free_stream(self, args: list[Any]) -> None:
        dev = args[0]
        _global("runtime.Device_StreamFree")(tvm_ffi.Device(dev[0], dev[1]), int(args[1] or 0))

    def _sys_set_stream(self, args: list[Any]) -> None:
        dev = args[0]
        _global("runtime.Device_SetStream")(tvm_ffi.Device(dev[0], dev[1]), int(args[1] or 0))


def _type_index(obj: Any) -> int:
    """The tvm-ffi type index of a Python-side FFI object (the client keys its wrappers on it)."""
    if isinstance(obj, tvm_ffi.Shape):
        return int(TypeIndex.SHAPE)
    if isinstance(obj, tvm_ffi.Array):
        return int(TypeIndex.ARRAY)
    if isinstance(obj, tvm_ffi.Map):
        return int(TypeIndex.MAP)
    info = getattr(type(obj), "__tvm_ffi_type_info__", None)
    index = getattr(info, "type_index", None)
    return int(index) if index is not None else int(TypeIndex.OBJECT_BEGIN)


def _describe(err: BaseException) -> str:
    """An error as the client will show it: the kind and message, plus where it happened."""
    text = f"{type(err).__name__}: {err}"
    if os.environ.get("TVM_RPC_SERVER_TRACEBACK"):
        text += "\n" + "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return text


__all__ = ["DEFAULT_MAX_PACKET_BYTES", "ProtocolError", "RPC_OBJECT_REF_INDEX", "ServerSession"]
