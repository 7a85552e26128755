"""One RPC server session: decodes packets from a client and runs them on the local runtime.

A session owns every remote handle it hands out (functions, modules, tensors, objects) in
tables keyed by small synthetic integers, so a client can never make the server dereference an
address it did not issue: unknown handles are errors, not crashes.  Dropping the session drops
the tables, which frees everything the client left behind.

The hot path is native (src/core/rpc, the ``tvm_runtime.rpc.*`` globals): the tables, remote
calls, copies and FREE_HANDLE, and for a plain socket the whole read-answer-write loop.  This
module answers the rest (the handshake's INIT_SERVER and the syscalls, GetGlobalFunc with the
session's allow-list among them), which is where the policy is decided, and runs the loop
itself for a TLS socket, whose bytes only Python can decrypt.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import ssl
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
    Device,
    DLTensorMeta,
    Opaque,
    ProtocolError,
    Reader,
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
# How the native loop ended (ServeStatus in src/core/rpc/serve_loop.h).
_CLOSED, _STOPPED, _IDLE, _PROTOCOL_ERROR, _CONNECTION_ERROR = range(5)
# What the native answer to one packet is (tvm_runtime.rpc.session_answer).
_ANSWERED, _NOT_NATIVE = 0, 1


class SessionClosedError(Exception):
    """The client shut the session down or went away."""


class SessionIdleError(Exception):
    """The client sent nothing for longer than the server's idle timeout."""


def _global(name: str) -> Any:
    return tvm_ffi.get_global_func(name)


@tvm_ffi.register_error("RPCDescribedError")
class _DescribedError(RuntimeError):
    """A failure of the session's Python function, described in full ("KindError: message"):
    the native call path sends its message as is (remote_call.cc), so the client sees the
    Python kind (PermissionError, FileNotFoundError) that tvm-ffi has no name for."""


def _described(func: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        try:
            return func(*args)
        except Exception as err:  # noqa: BLE001 - every error goes back to the client
            raise _DescribedError(_describe(err)) from None

    return call


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
        # The handle tables (functions, modules, objects, tensors) and the busy flag, shared with
        # the native packet handlers.
        self.state = _global("tvm_runtime.rpc.session_new")()
        self._native = {
            name: _global(f"tvm_runtime.rpc.session_{name}")
            for name in ("serve", "answer", "put", "get", "put_tensor", "tensor", "free_data")
            + ("clear", "busy")
        }
        # Why the Python side ended a natively served session (re-raised once the loop returns).
        self._stopped_by: BaseException | None = None
        self.local_funcs: dict[str, Callable[..., Any]] = workspace.functions()
        self._alloc = _global("runtime.TVMTensorAllocWithScope")
        self._view = _global("runtime.TVMTensorCreateView")
        self._from_bytes = _global("runtime.TVMTensorCopyFromBytes")
        self._to_bytes = _global("runtime.TVMTensorCopyToBytes")
        self._copy = _global("runtime.TVMTensorCopyFromTo")
        self._sync = _global("runtime.Device_StreamSync")
        self._attr = _global("runtime.GetDeviceAttr")
        # FREE_HANDLE, CALL_FUNC and the copies are answered natively.
        self._syscalls: dict[int, Callable[[list[Any]], Any]] = {
            Code.GET_GLOBAL_FUNC: self._sys_get_global_func,
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
            raise SessionIdleError(self._idle_message(between_calls))

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
            if self.initialized and self._native_loop_possible():
                self._serve_natively()
                return
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

    def _native_loop_possible(self) -> bool:
        """The native loop reads the socket's file descriptor itself: a plain, blocking socket."""
        return not isinstance(self.sock, ssl.SSLSocket) and self.sock.gettimeout() is None

    def _serve_natively(self) -> None:
        timeout = self.idle_timeout if self.idle_timeout is not None else 0.0
        status, message = self._native["serve"](
            self.state, self.sock.fileno(), self.max_packet_bytes, timeout, self._fallback
        )
        if self._stopped_by is not None:
            raise self._stopped_by
        if status == _IDLE:
            raise SessionIdleError(self._idle_message(str(message) == "sent nothing"))
        if status == _PROTOCOL_ERROR:
            raise ProtocolError(str(message))
        if status == _CONNECTION_ERROR:
            raise OSError(f"connection error: {message}")

    def _fallback(self, body: bytes) -> bool:
        """A packet the native loop leaves to Python; False ends the session."""
        try:
            return self._handle(body)
        except BaseException as err:  # noqa: BLE001 - re-raised when the native loop returns
            self._stopped_by = err
            return False

    def _idle_message(self, between_calls: bool) -> str:
        what = "sent nothing" if between_calls else "stopped in the middle of a packet"
        return (
            f"the client {what} for {self.idle_timeout:g}s, the server's idle timeout "
            "(--idle-timeout); connect again"
        )

    def watch_for_hangup(self, on_hangup: Callable[[], None], period: float = 0.2) -> None:
        """Call ``on_hangup`` (from a daemon thread) if the client disconnects during a call.

        The client sends nothing while it waits for a result, so end-of-stream seen then means
        it is gone: there is no one to return the result to, and a long call (a timing run)
        would otherwise keep the server from its next client.
        """

        busy = self._native["busy"]

        def watch() -> None:
            while True:
                if not busy(self.state):
                    time.sleep(period)
                    continue
                readable, _, _ = select.select([self.sock], [], [], period)
                if not readable or not busy(self.state):
                    continue
                try:
                    peeked = self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                except BlockingIOError:
                    continue
                except OSError:
                    peeked = b""
                if not peeked and busy(self.state):
                    on_hangup()
                    return
                time.sleep(period)  # data is waiting (unusual mid-call): look again later

        threading.Thread(target=watch, name="tvm-rpc-hangup-watch", daemon=True).start()

    def close(self) -> None:
        """Release everything the client still holds (modules, tensors, functions)."""
        self._native["clear"](self.state)

    def _handle(self, packet: bytes | bytearray) -> bool:
        reader = Reader(packet)
        code = reader.i32()
        if code == Code.SHUTDOWN:
            return False
        if code == Code.INIT_SERVER:
            self._init_server(reader)
        elif not self.initialized:
            raise ProtocolError(f"packet code {code} before the session was initialised")
        elif code in self._syscalls:
            args = reader.packed_seq()
            self._guarded(lambda: [self._syscalls[code](args)])
        else:
            status, reply = self._native["answer"](self.state, bytes(packet), self.max_packet_bytes)
            if status == _NOT_NATIVE:
                raise ProtocolError(f"unexpected packet code {code} from a client")
            if status != _ANSWERED:
                raise ProtocolError(str(reply))
            self.sock.sendall(reply)
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

    # ------------------------------------------------------------------ values

    def _new_handle(self, obj: Any) -> int:
        if callable(obj) and not isinstance(obj, (tvm_ffi.Function, tvm_ffi.Object)):
            obj = _described(obj)  # called from the native path: keep its error kinds
        return int(self._native["put"](self.state, obj))

    def _tensor(self, meta: DLTensorMeta) -> Any:
        """A tensor viewing the memory ``meta`` names (its data handle must be one we issued)."""
        base = self._native["tensor"](self.state, meta.data)
        dtype = tvm_ffi.dtype.from_dlpack_data_type(meta.dtype)
        if meta.byte_offset == 0 and tuple(base.shape) == meta.shape and base.dtype == dtype:
            return base
        return self._view(base, tvm_ffi.Shape(meta.shape), dtype, meta.byte_offset)

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
        return Opaque(self._native["put_tensor"](self.state, tensor))

    def _sys_alloc_data(self, args: list[Any]) -> Any:
        dev, nbytes = args[0], int(args[1])
        return self._allocate((nbytes,), tvm_ffi.dtype("uint8"), dev, None)

    def _sys_alloc_with_scope(self, args: list[Any]) -> Any:
        meta: DLTensorMeta = args[0]
        scope = args[1] if len(args) > 1 else None
        dtype = tvm_ffi.dtype.from_dlpack_data_type(meta.dtype)
        return self._allocate(meta.shape, dtype, Device((meta.device_type, meta.device_id)), scope)

    def _sys_free_data(self, args: list[Any]) -> None:
        self._native["free_data"](self.state, int(args[1]))

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


def _describe(err: BaseException) -> str:
    """An error as the client will show it: the kind and message, plus where it happened."""
    text = f"{type(err).__name__}: {err}"
    if os.environ.get("TVM_RPC_SERVER_TRACEBACK"):
        text += "\n" + "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return text


__all__ = ["DEFAULT_MAX_PACKET_BYTES", "ProtocolError", "RPC_OBJECT_REF_INDEX", "ServerSession"]
