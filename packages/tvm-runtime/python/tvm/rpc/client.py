"""The RPC client in pure Python: talks to apache-tvm 0.27's RPC server or ours, directly
(``connect``) or through a tracker (``connect_tracker(...).request(key)``).

Remote values are Python proxies: ``RemoteFunction``, ``RemoteModule``, ``RemoteTensor`` (its
data stays on the server; ``numpy()`` and ``copyfrom`` move bytes), ``RemoteDevice`` and
``RemoteObject``.  Deploy scripts written for apache-tvm's client keep their shape:
``sess.upload`` / ``sess.load_module`` / ``mod[name](...)`` / ``mod.time_evaluator``; remote
tensors come from ``dev.tensor(array)`` and ``dev.empty(shape, dtype)``.
"""

from __future__ import annotations

import os
import socket
import ssl
import statistics
import struct
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..error import RPCError, RPCSessionTimeoutError  # what the remote side's failures raise
from . import base
from ._devices import DeviceShortcuts, upload_payload
from ._local import LocalSession  # noqa: F401  (apache-tvm's tvm.rpc.client.LocalSession)
from ._protocol import (
    PROTOCOL_VERSION,
    RPC_OBJECT_REF_INDEX,
    Code,
    DataType,
    Device,
    DLTensorMeta,
    Handle,
    Opaque,
    Reader,
    TypeIndex,
    Writer,
)

_DEVICE_TYPES = {
    "cpu": 1,
    "llvm": 1,
    "cuda": 2,
    "gpu": 2,
    "opencl": 4,
    "cl": 4,
    "vulkan": 7,
    "metal": 8,
    "rocm": 10,
}
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm"}
_DTYPE_CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4, "bool": 1}


def _parse_dtype(dtype: Any) -> tuple[int, int, int]:
    text = str(getattr(dtype, "name", dtype))
    if text == "bool":
        return (1, 1, 1)
    lanes = 1
    if "x" in text:
        text, lane_text = text.split("x", 1)
        lanes = int(lane_text)
    for prefix in ("bfloat", "float", "uint", "int"):
        if text.startswith(prefix) and text[len(prefix) :].isdigit():
            return (_DTYPE_CODES[prefix], int(text[len(prefix) :]), lanes)
    raise ValueError(f"unsupported dtype {dtype!r} for a remote tensor")


def _dtype_name(code: int, bits: int, lanes: int) -> str:
    if (code, bits) == (1, 1):
        return "bool"
    name = {0: "int", 1: "uint", 2: "float", 4: "bfloat"}.get(code, f"code{code}_") + str(bits)
    return name if lanes == 1 else f"{name}x{lanes}"


class _Endpoint:
    """The socket of one session; one request/response at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()
        self.closed = False

    def _exchange(self, writer: Writer) -> tuple[int, Reader]:
        with self.lock:
            if self.closed:
                raise RPCError("the RPC session is closed")
            try:
                self.sock.sendall(b"".join(writer.packet()))
                while True:
                    (n,) = struct.unpack("<Q", base.recvall(self.sock, 8))
                    if n:
                        break
                reader = Reader(base.recvall(self.sock, n))
            except OSError as err:
                self.closed = True
                raise RPCError(f"RPC connection lost: {err}") from err
        code = reader.i32()
        if code == Code.EXCEPTION:
            (msg,) = reader.packed_seq()
            if str(msg).startswith("RPCSessionTimeoutError"):
                self.closed = True
                raise RPCSessionTimeoutError(msg)
            raise RPCError(f"RPCError: Error caught from RPC call:\n{msg}")
        if code not in (Code.RETURN, Code.COPY_ACK):
            raise RPCError(f"unexpected RPC reply code {code}")
        return code, reader

    def syscall(self, code: int, *args: Any) -> Any:
        w = Writer(code)
        w.packed_seq(list(args))
        _, reader = self._exchange(w)
        values = reader.packed_seq()
        return values[0] if values else None

    def call(self, handle: int, args: Sequence[Any]) -> list[Any]:
        w = Writer(Code.CALL_FUNC)
        w.u64(handle)
        w.packed_seq(list(args))
        _, reader = self._exchange(w)
        return reader.packed_seq()

    def copy_to(self, meta: DLTensorMeta, data: bytes | bytearray | memoryview) -> None:
        w = Writer(Code.COPY_TO_REMOTE)
        w.dltensor(meta)
        w.u64(len(data))
        w.raw(data)
        self._exchange(w)

    def copy_from(self, meta: DLTensorMeta, nbytes: int) -> bytes:
        w = Writer(Code.COPY_FROM_REMOTE)
        w.dltensor(meta)
        w.u64(nbytes)
        _, reader = self._exchange(w)
        return reader.raw(nbytes)

    def init(self, args: Sequence[Any]) -> None:
        w = Writer(Code.INIT_SERVER)
        version = PROTOCOL_VERSION.encode()
        w.u64(len(version))
        w.raw(version)
        w.packed_seq(list(args))
        self._exchange(w)

    def free(self, handle: int) -> None:
        if self.closed:
            return
        try:
            self.syscall(Code.FREE_HANDLE, Opaque(handle))
        except RPCError:
            pass

    def shutdown(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            try:
                self.sock.sendall(b"".join(Writer(Code.SHUTDOWN).packet()))
            except OSError:
                pass
            self.sock.close()


class _Remote:
    """A value the server holds for us; freed on the server when the proxy goes away."""

    def __init__(self, sess: RPCSession, handle: int) -> None:
        self._sess = sess
        self._handle = handle

    def __del__(self) -> None:
        sess = getattr(self, "_sess", None)
        if sess is not None and self._handle:
            sess._endpoint.free(self._handle)


class RemoteObject(_Remote):
    """An object that stays on the server (a tuple, a shape, ...); pass it back to remote calls."""

    def __init__(self, sess: RPCSession, handle: int, type_index: int) -> None:
        super().__init__(sess, handle)
        self.type_index = type_index

    def __repr__(self) -> str:
        return f"RemoteObject(type_index={self.type_index}, handle=0x{self._handle:x})"


class RemoteFunction(_Remote):
    def __call__(self, *args: Any) -> Any:
        return self._sess._decode_return(
            self._sess._endpoint.call(self._handle, self._sess._encode_args(args))
        )


class RemoteDevice:
    """A device of the remote machine."""

    def __init__(self, sess: RPCSession, device_type: int, device_id: int = 0) -> None:
        self._sess = sess
        self.device_type = device_type
        self.device_id = device_id

    def __repr__(self) -> str:
        return f"remote:{_DEVICE_NAMES.get(self.device_type, self.device_type)}:{self.device_id}"

    @property
    def exist(self) -> bool:
        return bool(self._sess._endpoint.syscall(Code.DEV_GET_ATTR, self._wire(), 0))

    def sync(self) -> None:
        self._sess._endpoint.syscall(Code.DEV_STREAM_SYNC, self._wire(), None)

    def empty(self, shape: Sequence[int], dtype: Any = "float32") -> RemoteTensor:
        meta = DLTensorMeta(
            0, self.device_type, self.device_id, _parse_dtype(dtype), tuple(int(d) for d in shape)
        )
        data = self._sess._endpoint.syscall(Code.DEV_ALLOC_DATA_WITH_SCOPE, meta, None)
        meta.data = int(data)
        return RemoteTensor(self._sess, meta, owner_handle=None)

    def tensor(self, array: Any) -> RemoteTensor:
        import numpy as np

        arr = np.ascontiguousarray(array)
        out = self.empty(arr.shape, str(arr.dtype))
        out.copyfrom(arr)
        return out

    def _wire(self) -> Device:
        return Device((self.device_type, self.device_id))


class RemoteTensor:
    """A tensor whose memory lives on the server."""

    def __init__(self, sess: RPCSession, meta: DLTensorMeta, owner_handle: int | None) -> None:
        self._sess = sess
        self._meta = meta
        self._owner = owner_handle

    @property
    def shape(self) -> tuple[int, ...]:
        return self._meta.shape

    @property
    def dtype(self) -> str:
        return _dtype_name(*self._meta.dtype)

    @property
    def device(self) -> RemoteDevice:
        return RemoteDevice(self._sess, self._meta.device_type, self._meta.device_id)

    def numpy(self) -> Any:
        import numpy as np

        raw = self._sess._endpoint.copy_from(self._meta, self._meta.nbytes)
        return np.frombuffer(raw, dtype=self.dtype).reshape(self.shape).copy()

    def copyfrom(self, source: Any) -> RemoteTensor:
        if isinstance(source, RemoteTensor):
            self._sess._endpoint.syscall(Code.COPY_AMONG_REMOTE, source._meta, self._meta, None)
            return self
        import numpy as np

        arr = np.ascontiguousarray(source, dtype=self.dtype)
        if arr.shape != self.shape:
            raise ValueError(f"array shape {arr.shape} does not match the remote tensor's {self.shape}")
        self._sess._endpoint.copy_to(self._meta, arr.data.cast("B"))
        return self

    def copyto(self, target: RemoteTensor | RemoteDevice) -> RemoteTensor:
        if isinstance(target, RemoteDevice):
            target = target.empty(self.shape, self.dtype)
        target.copyfrom(self)
        return target

    def __repr__(self) -> str:
        return f"RemoteTensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    def __del__(self) -> None:
        sess = getattr(self, "_sess", None)
        if sess is None or sess._endpoint.closed:
            return
        try:
            if self._owner:
                sess._endpoint.free(self._owner)
            else:
                sess._endpoint.syscall(
                    Code.DEV_FREE_DATA,
                    Device((self._meta.device_type, self._meta.device_id)),
                    Opaque(self._meta.data),
                )
        except RPCError:
            pass


class BenchmarkResult:
    """Per-call seconds of each timing round, as apache-tvm's time_evaluator returns them."""

    def __init__(self, results: Sequence[float]) -> None:
        self.results = tuple(results)
        self.mean = statistics.fmean(self.results) if self.results else 0.0
        self.median = statistics.median(self.results) if self.results else 0.0
        self.min = min(self.results, default=0.0)
        self.max = max(self.results, default=0.0)
        self.std = statistics.pstdev(self.results) if self.results else 0.0

    def __repr__(self) -> str:
        return f"BenchmarkResult(mean={self.mean:.3e}s, median={self.median:.3e}s, n={len(self.results)})"


class RemoteModule(_Remote):
    """A module loaded on the server."""

    def get_function(self, name: str, query_imports: bool = False) -> RemoteFunction:
        getter = self._sess._server_func("tvm.rpc.server.ModuleGetFunction")
        func = getter(self, name, bool(query_imports))
        if func is None:
            raise AttributeError(f"remote module has no function {name!r}")
        return func

    def __getitem__(self, name: str) -> RemoteFunction:
        return self.get_function(name, query_imports=True)

    def time_evaluator(
        self,
        func_name: str,
        dev: RemoteDevice,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: int = 0,
        limit_zero_time_iterations: int = 100,
        cooldown_interval_ms: int = 0,
        repeats_to_cooldown: int = 1,
        cache_flush_bytes: int = 0,
        f_preproc: str = "",
    ) -> Any:
        """Time ``func_name`` on the server (the timing loop runs there, not over the wire)."""
        make = self._sess._server_func("runtime.RPCTimeEvaluator")
        config = (
            *(number, repeat, min_repeat_ms, limit_zero_time_iterations, cooldown_interval_ms),
            *(repeats_to_cooldown, cache_flush_bytes, f_preproc),
        )
        timer = make(self, func_name, dev.device_type, dev.device_id, *config)

        def evaluate(*args: Any) -> BenchmarkResult:
            blob = timer(*args)
            return BenchmarkResult(struct.unpack(f"<{len(blob) // 8}d", blob))

        return evaluate


class RPCSession(DeviceShortcuts):
    """A session with one RPC server (opened by ``connect`` or a tracker's ``request``)."""

    def __init__(self, sock: socket.socket, server_key: str) -> None:
        self._endpoint = _Endpoint(sock)
        self.server_key = server_key
        self._funcs: dict[str, RemoteFunction] = {}

    # ---- context management
    def __enter__(self) -> RPCSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._funcs.clear()
        self._endpoint.shutdown()

    # ---- functions and files
    def get_function(self, name: str) -> RemoteFunction:
        handle = self._endpoint.syscall(Code.GET_GLOBAL_FUNC, name)
        if not handle:
            raise AttributeError(f"the RPC server has no global function {name!r}")
        return RemoteFunction(self, int(handle))

    def _server_func(self, name: str) -> RemoteFunction:
        if name not in self._funcs:
            self._funcs[name] = self.get_function(name)
        return self._funcs[name]

    def upload(self, data: str | os.PathLike | bytes | bytearray, target: str | None = None) -> None:
        self._server_func("tvm.rpc.server.upload")(*upload_payload(data, target))

    def download(self, path: str) -> bytes:
        return self._server_func("tvm.rpc.server.download")(path)

    def remove(self, path: str) -> None:
        self._server_func("tvm.rpc.server.remove")(path)

    def listdir(self, path: str = ".") -> list[str]:
        text = self._server_func("tvm.rpc.server.listdir")(path)
        return [name for name in str(text).split(",") if name]

    def load_module(self, path: str) -> RemoteModule:
        return self._server_func("tvm.rpc.server.load_module")(path)

    # ---- devices
    def device(self, dev_type: int | str, dev_id: int = 0) -> RemoteDevice:
        if isinstance(dev_type, str):
            name = dev_type.split()[0]
            if name not in _DEVICE_TYPES:
                raise ValueError(f"unknown device type {dev_type!r}")
            dev_type = _DEVICE_TYPES[name]
        return RemoteDevice(self, int(dev_type), dev_id)

    def system_lib(self) -> RemoteModule:
        """The server's system library (the functions linked into its process)."""
        return self.get_function("ffi.SystemLib")()

    # ---- value conversion
    def _encode_args(self, args: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for a in args:
            if isinstance(a, RemoteTensor):
                out.append(a._meta)
            elif isinstance(a, RemoteModule):
                out.append(Handle(a._handle, TypeIndex.MODULE))
            elif isinstance(a, RemoteFunction):
                out.append(Handle(a._handle, TypeIndex.FUNCTION))
            elif isinstance(a, RemoteObject):
                out.append(Handle(a._handle, RPC_OBJECT_REF_INDEX))
            elif isinstance(a, RemoteDevice):
                out.append(a._wire())
            elif a is None or isinstance(a, (bool, int, float, str, bytes, bytearray)):
                out.append(a)
            elif hasattr(a, "item") and getattr(a, "shape", None) == ():  # numpy scalar
                out.append(a.item())
            else:
                raise TypeError(f"cannot pass {type(a).__name__} to a remote function")
        return out

    def _decode_return(self, values: list[Any]) -> Any:
        if not values:
            return None
        tindex = int(values[0])
        if tindex == TypeIndex.NONE:
            return None
        if tindex in (TypeIndex.TENSOR, TypeIndex.DL_TENSOR_PTR):
            return RemoteTensor(self, values[1], owner_handle=int(values[2]))
        if tindex == TypeIndex.FUNCTION:
            return RemoteFunction(self, int(values[1])) if values[1] else None
        if tindex == TypeIndex.MODULE:
            return RemoteModule(self, int(values[1]))
        if tindex in (TypeIndex.STR, TypeIndex.SMALL_STR):
            return str(values[1])
        if tindex in (TypeIndex.BYTES, TypeIndex.SMALL_BYTES):
            return bytes(values[1])
        if tindex >= TypeIndex.OBJECT_BEGIN:
            return RemoteObject(self, int(values[1]), tindex)
        value = values[1]
        if isinstance(value, Device):
            return RemoteDevice(self, value[0], value[1])
        if isinstance(value, DataType):
            return _dtype_name(*value)
        return int(value) if isinstance(value, Opaque) else value


def connect(
    url: str,
    port: int,
    key: str = "",
    session_timeout: float = 0,
    session_constructor_args: Sequence[Any] | None = None,
    enable_logging: bool = False,
    timeout: float | None = 60,
    *,
    auth: str | None = None,
    tls: bool | ssl.SSLContext = False,
) -> RPCSession:
    """Open a session with the RPC server at ``url:port`` (``key`` must match the server's).

    ``url:port`` may be an RPC proxy: it pairs us with the server that connected to it under
    ``key``, waiting up to ``timeout`` seconds for one.  ``auth`` is the server's shared secret
    (``--auth-secret-file``); ``tls`` connects over TLS to a server started with ``--tls-cert``
    (True: verify its certificate against the system's CAs; or an ``ssl.SSLContext``, e.g.
    ``ssl.create_default_context(cafile="board-ca.pem")``).
    """
    del enable_logging  # accepted for apache-tvm compatibility
    full_key = "client:" + key
    if session_timeout:
        full_key += f" -timeout={session_timeout}"
    if auth is not None:
        if session_constructor_args:
            raise ValueError("auth= and session_constructor_args cannot be combined")
        session_constructor_args = [base.AUTH_CONSTRUCTOR, auth]
    sock = socket.create_connection((url, port), timeout=timeout)
    try:
        if tls:
            context = tls if isinstance(tls, ssl.SSLContext) else ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=url)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        base.send_i32(sock, base.RPC_MAGIC)
        base.send_key(sock, full_key)
        try:
            code = base.recv_i32(sock)
        except socket.timeout:
            raise RPCError(
                f"{url}:{port} did not answer the RPC handshake within {timeout}s "
                f"(if it is an RPC proxy: no server with key={key!r} connected to it)"
            ) from None
        if code == base.RPC_CODE_MISMATCH:
            raise RPCError(f"{url}:{port} has no server that matches key={key!r}")
        if code == base.RPC_CODE_DUPLICATE:
            raise RPCError(f"{url}:{port} already has a server with key={key!r}")
        if code != base.RPC_CODE_SUCCESS:
            raise RPCError(f"{url}:{port} is not a TVM RPC server")
        server_key = base.recv_key(sock)
        sock.settimeout(None)
        sess = RPCSession(sock, server_key)
        sess._endpoint.init(list(session_constructor_args or []))
        return sess
    except BaseException:
        sock.close()
        raise


class TrackerSession:
    """A connection to an RPC tracker."""

    def __init__(self, addr: tuple[str, int]) -> None:
        self._addr = addr
        self._sock: socket.socket | None = None
        self._connect()

    def _connect(self) -> None:
        self._sock = base.connect_with_retry(self._addr, timeout=60)
        base.send_i32(self._sock, base.RPC_TRACKER_MAGIC)
        if base.recv_i32(self._sock) != base.RPC_TRACKER_MAGIC:
            raise RPCError(f"{self._addr} is not an RPC tracker")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __del__(self) -> None:
        self.close()

    def summary(self) -> dict[str, Any]:
        assert self._sock is not None
        base.sendjson(self._sock, [base.TrackerCode.SUMMARY])
        value = base.recvjson(self._sock)
        if value[0] != base.TrackerCode.SUCCESS:
            raise RPCError(f"tracker summary failed: {value!r}")
        return value[1]

    def text_summary(self) -> str:
        data = self.summary()
        lines = ["Queue Status", f"{'key':<20}{'free':>8}{'pending':>10}"]
        for key, info in sorted(data["queue_info"].items()):
            lines.append(f"{key:<20}{info['free']:>8}{info['pending']:>10}")
        return "\n".join(lines)

    def request(
        self,
        key: str,
        priority: int = 1,
        session_timeout: float = 0,
        max_retry: int = 5,
        session_constructor_args: Sequence[Any] | None = None,
        *,
        auth: str | None = None,
        tls: bool | ssl.SSLContext = False,
    ) -> RPCSession:
        """A session with a free server registered under ``key`` (waits until one is free);
        ``auth`` and ``tls`` as for ``connect``."""
        last: Exception | None = None
        for _ in range(max_retry):
            try:
                if self._sock is None:
                    self._connect()
                assert self._sock is not None
                base.sendjson(self._sock, [base.TrackerCode.REQUEST, key, "", priority])
                value = base.recvjson(self._sock)
                if value[0] != base.TrackerCode.SUCCESS:
                    raise RPCError(f"tracker refused the request for {key!r}: {value!r}")
                host, port, matchkey = value[1]
                return connect(
                    host, port, matchkey, session_timeout, session_constructor_args, auth=auth, tls=tls
                )
            except OSError as err:
                self.close()
                last = err
                time.sleep(0.5)
        raise RPCError(f"cannot get a {key!r} device from the tracker {self._addr}: {last}")

    def request_and_run(
        self, key: str, func: Any, priority: int = 1, session_timeout: float = 0, max_retry: int = 2
    ):
        """``func(session)`` on a device of ``key``, retrying on connection errors."""
        last: Exception | None = None
        for _ in range(max_retry):
            sess = self.request(key, priority=priority, session_timeout=session_timeout)
            try:
                return func(sess)
            except RPCError as err:
                last = err
        raise RPCError(f"failed to run on {key!r} after {max_retry} attempts: {last}")


def connect_tracker(url: str, port: int) -> TrackerSession:
    return TrackerSession((url, port))
