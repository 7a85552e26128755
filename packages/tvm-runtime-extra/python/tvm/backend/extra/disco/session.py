"""The Disco controller: sessions and DRefs, with the API of apache-tvm 0.27's
``tvm.runtime.disco``.

Commands are queued to every worker and run there asynchronously, in order, exactly as in 0.27:
``call_packed``, ``empty``, the collectives and ``load_vm_module`` return at once, and only the
calls that return data (``debug_get_from_remote``, ``copy_from_worker_0``) and the syncs wait.
Collectives are worker-side calls (``runtime.disco.allreduce`` & co.), the same ones compiled
code makes: the workers exchange data among themselves through the session's collective
library (``cpu`` unless ``init_ccl`` chose ``nccl``/``rccl``), never through the controller.

The first failure of any worker (an error, or its process exiting) ends the session: the waiting
call raises :class:`DiscoError` naming the worker that failed first and why, the other workers are
stopped, and every later call raises the same error.
"""

from __future__ import annotations

import itertools
import os
import secrets
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any, Callable, Optional

import tvm_ffi

from . import _transport, _values
from ._transport import FdChannel, WorkerGoneError, WorkerHandle
from ._wire import DeviceSpec, DTypeValue, Reg, ShapeValue, TensorValue

REDUCE_OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}
# The GPU collective libraries and the device type whose wheel provides each.
_GPU_CCLS = {"nccl": tvm_ffi.DLDeviceType.kDLCUDA, "rccl": tvm_ffi.DLDeviceType.kDLROCM}


class DiscoError(RuntimeError):
    """A worker failed or exited (the message names it and why), or the session is shut down."""


class DRef:
    """An object that exists on every worker: register ``reg_id`` of each worker."""

    __slots__ = ("__weakref__", "_session", "reg_id")

    def __init__(self, session: Session, reg_id: int) -> None:
        # None once the register was handed to the DPackedFunc or DModule made from this handle.
        self._session: Session | None = session
        self.reg_id = reg_id

    def _owner(self) -> Session:
        if self._session is None:
            raise RuntimeError(
                "this DRef gave its register to the DPackedFunc or DModule made from it: use that object"
            )
        return self._session

    def debug_get_from_remote(self, worker_id: int) -> Any:
        """This DRef's value on `worker_id` (a tensor comes back as a CPU Tensor)."""
        return _values.from_wire(self._owner()._request(worker_id, ("fetch", self.reg_id)))

    def debug_copy_from(self, worker_id: int, value: Any) -> None:
        """Copy a numpy array or Tensor into this DRef's tensor on `worker_id`."""
        self._owner()._send(worker_id, ("copy_in", self.reg_id, _values.host_value(value)))

    def __del__(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None:
            session._garbage.append(self.reg_id)  # freed with the next command sent

    def __repr__(self) -> str:
        return f"{type(self).__name__}(reg_id={self.reg_id})"


class DPackedFunc(DRef):
    """A function on every worker; calling it is ``session.call_packed(self, *args)``."""

    __slots__ = ()

    def __call__(self, *args: Any) -> DRef:
        return self._owner().call_packed(self, *args)


class DModule(DRef):
    """A module on every worker (a Relax VM from load_vm_module); ``mod["main"]`` is a
    :class:`DPackedFunc`."""

    __slots__ = ()

    def __getitem__(self, name: str) -> DPackedFunc:
        get = self._owner()._cached_func("ffi.ModuleGetFunction")
        return self._owner()._as(get(self, name, False), DPackedFunc)


def _check_counts(num_workers: int, num_groups: int) -> None:
    if num_workers < 1:
        raise ValueError(f"a Disco session needs at least one worker, got {num_workers}")
    if num_groups < 1 or num_workers % num_groups != 0:
        raise ValueError(f"num_groups={num_groups} must divide num_workers={num_workers}")


class Session:
    """A Disco session; create one with ThreadedSession, ProcessSession or SocketSession."""

    def __init__(self, workers: list[WorkerHandle], num_groups: int = 1, on_close: Any = None) -> None:
        self._workers = sorted(workers, key=lambda w: w.worker_id)
        self._num_groups = num_groups
        self._on_close = on_close
        self._reg_ids = itertools.count(1)
        self._garbage: list[int] = []
        self._lock = threading.RLock()
        self._failure: Optional[str] = None
        self._closed = False
        self._funcs: dict[str, DPackedFunc] = {}
        self._ccl = "cpu"
        self._ccl_token = secrets.token_hex(16)
        try:
            self._start_workers()
        except BaseException:
            self._closed = True
            self._stop_workers(graceful=False)
            raise

    # ------------------------------------------------------------------------- plumbing

    @property
    def num_workers(self) -> int:
        return len(self._workers)

    def _start_workers(self) -> None:
        first_of_node: dict[int, int] = {}
        for w in self._workers:
            first_of_node.setdefault(w.node, w.worker_id)
        for w in self._workers:
            local_id = w.worker_id - first_of_node[w.node]
            self._send(w.worker_id, ("identity", w.worker_id, self.num_workers, self._num_groups, local_id))
        self._init_cpu_ccl()

    def _init_cpu_ccl(self) -> None:
        """Connect the workers' cpu collectives: shared memory on one machine, a TCP mesh
        between the workers of several."""
        self._ccl_token = secrets.token_hex(16)
        init = self._cached_func("runtime.disco.cpu.init_ccl_per_worker")
        if len({w.node for w in self._workers}) == 1:
            init(self._ccl_token, "")
        else:
            prepare = self._cached_func("runtime.disco.cpu.prepare")
            ports = []
            for w in self._workers:
                port = self._new_ref()
                self._send(w.worker_id, ("call", port.reg_id, prepare.reg_id, [w.host]))
                ports.append((w, port))
            addresses = []
            for w, port in ports:
                host = w.host if ":" not in w.host else f"[{w.host}]"
                addresses.append(f"{host}:{self._request(w.worker_id, ('fetch', port.reg_id))}")
            init(self._ccl_token, ",".join(addresses))
        self._sync_all()
        self._ccl = "cpu"

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise DiscoError(self._failure)
        if self._closed:
            raise DiscoError("the Disco session is shut down")

    def _send(self, worker_id: int, message: tuple) -> None:
        """Queue `message` to worker `worker_id` (-1: every worker), after freeing the registers
        of DRefs that were garbage collected."""
        with self._lock:
            self._check_usable()
            if self._garbage:
                garbage, self._garbage = self._garbage, []
                for wid in range(self.num_workers):
                    self._send_raw(wid, ("free", garbage))
            for wid in range(self.num_workers) if worker_id < 0 else (worker_id,):
                self._send_raw(wid, message)

    def _send_raw(self, wid: int, message: tuple) -> None:
        try:
            self._workers[wid].send(message)
        except WorkerGoneError as gone:
            raise self._fail(wid, str(gone), False) from None

    def _send_all(self, message: tuple) -> None:
        self._send(-1, message)

    def _reply(self, wid: int) -> Any:
        """The next reply of worker `wid` (its payload), or the failure that ended the session."""
        try:
            _, message = self._workers[wid].recv()
        except WorkerGoneError as gone:
            raise self._fail(wid, str(gone), False) from None
        if message[0] == "ok":
            return message[1]
        raise self._fail(wid, message[1], bool(message[2]))

    def _request(self, wid: int, message: tuple) -> Any:
        with self._lock:
            self._send(wid, message)
            return self._reply(wid)

    def _fail(self, wid: int, why: str, peer_caused: bool) -> DiscoError:
        """Ends the session after worker `wid` failed; returns the error to raise."""
        if self._failure is None:
            root, root_why = wid, why
            if peer_caused:
                root, root_why = self._first_failure(wid, why)
            self._failure = f"Disco worker {root} failed: {root_why}"
            if root != wid:
                self._failure += f" (worker {wid} then failed with: {why})"
            self._stop_workers(graceful=False)
        return DiscoError(self._failure)

    def _first_failure(self, wid: int, why: str, grace_s: float = 2.0) -> tuple[int, str]:
        """The worker whose own failure (not one caused by another worker) started it all: one
        that exited, or one that reported an error of its own, within a short grace period."""
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            for w in self._workers:
                if w.worker_id == wid or w.gone:
                    continue
                try:
                    ok, message = w.recv(timeout=0)
                except WorkerGoneError as gone:
                    return w.worker_id, str(gone)
                if ok and message[0] in ("failed", "error") and not message[2]:
                    return w.worker_id, message[1]
            time.sleep(0.02)
        return wid, why

    def _new_ref(self, cls: type = DRef) -> Any:
        return cls(self, next(self._reg_ids))

    def _as(self, ref: DRef, cls: type) -> Any:
        """The same register as `ref`, as a DPackedFunc or DModule."""
        out = cls(self, ref.reg_id)
        ref._session = None  # the register now belongs to `out`
        return out

    def _cached_func(self, name: str) -> DPackedFunc:
        func = self._funcs.get(name)
        if func is None:
            func = self._funcs[name] = self.get_global_func(name)
        return func

    def _arg(self, value: Any) -> Any:
        """A call_packed argument as it crosses to the workers."""
        if isinstance(value, DRef):
            if value._session is not self:
                raise ValueError(f"{value} belongs to another Disco session")
            return Reg(value.reg_id)
        if value is None or isinstance(value, (bool, int, float, bytes)):
            return value
        if isinstance(value, tvm_ffi.Shape):
            return ShapeValue(tuple(int(d) for d in value))
        if isinstance(value, tvm_ffi.dtype):
            return DTypeValue(str(value))
        if isinstance(value, str):
            return str(value)
        if isinstance(value, tvm_ffi.core.Device):
            return DeviceSpec.of(value)
        if isinstance(value, (list, tuple)):
            return [self._arg(v) for v in value]
        raise TypeError(
            f"a {type(value).__name__} cannot be passed to Disco workers: pass ints, floats, "
            "strings, bytes, dtypes, devices, Shapes or DRefs (copy arrays to the workers with "
            "copy_to_worker_0, broadcast or scatter and pass the DRef)"
        )

    # ----------------------------------------------------------------------- public API

    def empty(
        self,
        shape: Sequence[int],
        dtype: str,
        device: Any = None,
        worker0_only: bool = False,
        in_group: bool = True,
    ) -> DRef:
        """An uninitialised tensor on every worker (with `worker0_only`, only on worker 0: of
        each group when `in_group`, of the session otherwise)."""
        func = self._cached_func("runtime.disco.empty")
        return func(tvm_ffi.Shape(tuple(int(s) for s in shape)), str(dtype), device, worker0_only, in_group)

    def get_global_func(self, name: str) -> DPackedFunc:
        """The global function `name` on every worker (a missing one fails at the next wait)."""
        out = self._new_ref(DPackedFunc)
        self._send_all(("get_func", out.reg_id, name))
        return out

    def import_python_module(self, module_name: str) -> None:
        """Import a Python module on every worker (e.g. one that registers global functions)."""
        self._cached_func("runtime.disco._import_python_module")(module_name)

    def call_packed(self, func: DRef, *args: Any) -> DRef:
        """Call `func` on every worker; DRef arguments become each worker's own value."""
        out = self._new_ref()
        wire = [self._arg(a) for a in args]
        self._send_all(("call", out.reg_id, func.reg_id, wire))
        return out

    def _sync_worker(self, worker_id: int) -> None:
        self._request(worker_id, ("sync",))

    def _sync_all(self) -> None:
        """Wait until every worker ran every command queued so far."""
        with self._lock:
            self._send_all(("sync",))
            for wid in range(self.num_workers):
                self._reply(wid)

    def sync_worker_0(self) -> None:
        """Wait until worker 0 ran every command queued so far."""
        self._sync_worker(0)

    def copy_from_worker_0(self, host_array: Any, remote_array: DRef) -> None:
        """Copy worker 0's tensor `remote_array` into the controller's Tensor `host_array`."""
        value = self._request(0, ("fetch", remote_array.reg_id))
        if not isinstance(value, TensorValue):
            raise ValueError(f"{remote_array} holds no tensor on worker 0 (it holds {value!r})")
        _values.copy_into(host_array, value)

    def copy_to_worker_0(self, host_array: Any, remote_array: Optional[DRef] = None) -> DRef:
        """Copy a controller-side Tensor (or numpy array) to worker 0; returns its DRef (a new
        tensor, allocated on worker 0 only, unless `remote_array` is given)."""
        value = _values.host_value(host_array)
        if remote_array is None:
            remote_array = self.empty(value.shape, value.dtype, worker0_only=True)
        self._send(0, ("copy_in", remote_array.reg_id, value))
        return remote_array

    def load_vm_module(self, path: str, device: Any = None) -> DModule:
        """Load a Relax VM executable on every worker (a VirtualMachine on `device`, default
        each worker's default device: the CPU, or its GPU after init_ccl("nccl", ...))."""
        func = self._cached_func("runtime.disco.load_vm_module")
        return self._as(func(os.path.abspath(os.fspath(path)), device), DModule)

    def init_ccl(self, ccl: str, *device_ids: int) -> None:
        """Choose the collective library: "cpu" (the default, set up when the session starts),
        "nccl" (CUDA workers, tvm-runtime-cuda) or "rccl" (ROCm workers, tvm-runtime-rocm); worker
        i of each node uses device device_ids[i]."""
        if ccl == "cpu":
            self._init_cpu_ccl()
            return
        if ccl not in _GPU_CCLS:
            raise ValueError(f"unknown collective library {ccl!r}: use 'cpu', 'nccl' or 'rccl'")
        per_node = max(
            sum(1 for w in self._workers if w.node == node) for node in {w.node for w in self._workers}
        )
        if len(device_ids) < per_node:
            raise ValueError(
                f"init_ccl({ccl!r}, ...) needs a device id for each of the {per_node} workers of a node, "
                f"got {list(device_ids)}"
            )
        unique_id = tvm_ffi.get_global_func(f"runtime.disco.{ccl}.get_unique_id", allow_missing=True)
        if unique_id is None:
            from tvm.runtime import _ffi_api

            dist = str(_ffi_api.DistributionForDevice(int(_GPU_CCLS[ccl]))) or "the GPU backend wheel"
            raise RuntimeError(
                f"the {ccl} collective library comes with {dist}, which is not installed or failed "
                f"to load: pip install {dist} (`python -m tvm.backend` shows its status)"
            )
        init = self._cached_func(f"runtime.disco.{ccl}.init_ccl_per_worker")
        init(tvm_ffi.Shape(tuple(int(d) for d in device_ids)), bytes(unique_id()))
        self._sync_all()
        self._ccl = ccl

    def broadcast(self, src: Any, dst: Optional[DRef] = None, in_group: bool = True) -> DRef:
        """A controller-side array copied to every worker (into `dst`, or a new tensor)."""
        value = _values.host_value(src)
        if dst is None:
            dst = self.empty(value.shape, value.dtype)
        self.broadcast_from_worker0(self.copy_to_worker_0(src), dst, in_group)
        return dst

    def broadcast_from_worker0(self, src: DRef, dst: DRef, in_group: bool = True) -> None:
        """dst = worker 0's src (each group's first worker's when `in_group`), on every worker."""
        self._cached_func("runtime.disco.broadcast_from_worker0")(src, in_group, dst)

    def scatter(self, src: Any, dst: Optional[DRef] = None, in_group: bool = True) -> DRef:
        """A controller-side array whose first axis has one entry per worker: entry i goes to
        worker i (into `dst`, or a new tensor of shape src.shape[1:])."""
        value = _values.host_value(src)
        if not value.shape or value.shape[0] != self.num_workers:
            raise ValueError(
                f"scatter: the first dimension of the array must be the number of workers "
                f"({self.num_workers}); got shape {value.shape}"
            )
        if dst is None:
            dst = self.empty(value.shape[1:], value.dtype)
        self.scatter_from_worker0(self.copy_to_worker_0(src), dst, in_group)
        return dst

    def scatter_from_worker0(self, from_array: DRef, to_array: DRef, in_group: bool = True) -> None:
        """Worker 0's from_array split evenly (row-major), part i to worker i."""
        self._cached_func("runtime.disco.scatter_from_worker0")(from_array, in_group, to_array)

    def gather_to_worker0(self, from_array: DRef, to_array: DRef, in_group: bool = True) -> None:
        """Worker 0's to_array = every worker's from_array, concatenated in worker order."""
        self._cached_func("runtime.disco.gather_to_worker0")(from_array, in_group, to_array)

    def allreduce(self, src: DRef, dst: DRef, op: str = "sum", in_group: bool = True) -> DRef:
        """dst = `op` (sum, prod, min, max, avg) over every worker's src, on every worker."""
        if op not in REDUCE_OPS:
            raise ValueError(f"allreduce: op must be one of {sorted(REDUCE_OPS)}, not {op!r}")
        kind = tvm_ffi.Shape((REDUCE_OPS[op],))
        self._cached_func("runtime.disco.allreduce")(src, kind, in_group, dst)
        return dst

    def allgather(self, src: DRef, dst: DRef, in_group: bool = True) -> DRef:
        """dst = every worker's src concatenated in worker order, on every worker."""
        self._cached_func("runtime.disco.allgather")(src, in_group, dst)
        return dst

    def _clear_ipc_memory_pool(self) -> None:
        """apache-tvm 0.27 API: there is no CUDA IPC memory pool here; nothing to clear."""

    # ------------------------------------------------------------------------- lifetime

    def _stop_workers(self, graceful: bool) -> None:
        for w in self._workers:
            try:
                w.send(("shutdown",))
            except WorkerGoneError:
                pass
        if graceful:
            for w in self._workers:
                try:
                    w.recv(timeout=30)
                except WorkerGoneError:
                    pass
        else:
            # Workers blocked in the cpu collectives of this machine wake up with an error.
            abort = tvm_ffi.get_global_func("tvm_runtime.disco.abort_shm", allow_missing=True)
            if abort is not None:
                abort(self._ccl_token, self._num_groups, self._failure or "the session ended")
        for w in self._workers:
            w.stop(10 if graceful else 2)
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    def shutdown(self) -> None:
        """Stop the workers (commands already queued run first)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._failure is None:
                self._stop_workers(graceful=True)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            try:
                self.shutdown()
            except Exception:  # noqa: BLE001 - interpreter teardown
                pass


class ThreadedSession(Session):
    """Workers are threads of this process."""

    def __init__(self, num_workers: int, num_groups: int = 1) -> None:
        _check_counts(num_workers, num_groups)
        super().__init__(
            [_transport.thread_worker(i, num_workers, num_groups) for i in range(num_workers)], num_groups
        )


def _process_pool(num_workers: int, num_groups: int, entrypoint: str) -> Callable[[int], Any]:
    """The process pool `runtime.disco.create_process_pool` makes (ours, or MLC-LLM's)."""
    registered = tvm_ffi.get_global_func("runtime.disco.create_process_pool", allow_missing=True)
    factory: Callable[..., Any] = registered if registered is not None else _transport.create_process_pool
    return factory(num_workers, num_groups, entrypoint)


def _local_workers(
    num_workers: int, num_groups: int, entrypoint: str
) -> tuple[list[WorkerHandle], Callable[[int], Any]]:
    """Worker 0 on a thread of this process (as in apache-tvm 0.27) and workers 1.. in the
    processes of the process pool."""
    pool = _process_pool(num_workers, num_groups, entrypoint)
    workers = [_transport.thread_worker(0, num_workers, num_groups)]
    try:
        for i in range(1, num_workers):
            workers.append(_transport.pool_worker(i, pool(i)))
    except BaseException:
        for w in workers:
            try:
                w.send(("shutdown",))
            except WorkerGoneError:
                pass
            w.stop(2)
        pool(0)
        raise
    return workers, pool


class ProcessSession(Session):
    """Workers 1.. are processes of this machine (``python -m <entrypoint>``, started by
    ``runtime.disco.create_process_pool``); worker 0 runs on a thread of this process.  No
    ``if __name__ == "__main__"`` guard is needed: the workers never import the caller's script."""

    def __init__(
        self, num_workers: int, num_groups: int = 1, entrypoint: str = "tvm.exec.disco_worker"
    ) -> None:
        _check_counts(num_workers, num_groups)
        workers, pool = _local_workers(num_workers, num_groups, entrypoint)
        super().__init__(workers, num_groups, on_close=lambda: pool(0))


class SocketSession(Session):
    """Workers on several machines ("nodes") connected over TCP.

    Node 0 is this machine (its workers are started here, like a ProcessSession's); every other
    node runs ``python -m tvm.exec.disco_remote_socket_session HOST PORT NUM_WORKERS`` and
    connects to HOST:PORT, where this session listens; nodes get ids in the order they connect.
    With ``TVM_DISCO_AUTHKEY`` (hex) set on every machine, connections must prove they know it.
    ``launch_local_nodes`` starts the other nodes on this machine (for tests).
    """

    def __init__(
        self,
        num_nodes: int,
        num_workers_per_node: int,
        num_groups: int = 1,
        host: str = "127.0.0.1",
        port: int = 0,
        connect_timeout_s: float = 120.0,
        launch_local_nodes: bool = False,
    ) -> None:
        total = num_nodes * num_workers_per_node
        _check_counts(total, num_groups)
        listener = socket.create_server((host, port), family=_family(host), backlog=max(16, total))
        self.address = listener.getsockname()[:2]
        nodes: list[Any] = []
        if launch_local_nodes:
            nodes = [
                _transport.launch_local_node(self.address[0], self.address[1], num_workers_per_node)
                for _ in range(num_nodes - 1)
            ]
        local: list[WorkerHandle] = []
        pool = None
        try:
            local, pool = _local_workers(num_workers_per_node, num_groups, "tvm.exec.disco_worker")
            remote, controls, my_host = _accept_nodes(
                listener, num_nodes, num_workers_per_node, num_groups, connect_timeout_s
            )
        except BaseException:
            for w in local:
                try:
                    w.send(("shutdown",))
                except WorkerGoneError:
                    pass
                w.stop(2)
            if pool is not None:
                pool(0)
            for p in nodes:
                p.kill()
            listener.close()
            raise
        for w in local:
            w.host = my_host

        def close() -> None:
            listener.close()
            for c in controls:
                try:
                    c.send(("shutdown",))
                except (OSError, ValueError):
                    pass
                c.close()
            pool(0)
            for p in nodes:
                try:
                    p.wait(timeout=10)
                except Exception:  # noqa: BLE001
                    p.kill()

        super().__init__(local + remote, num_groups, on_close=close)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _accept_nodes(
    listener: socket.socket, num_nodes: int, per_node: int, num_groups: int, timeout_s: float
) -> tuple[list[WorkerHandle], list[FdChannel], str]:
    """Accepts the remote nodes, then their workers; returns the workers' handles, the nodes'
    control channels and this machine's address as the nodes see it."""
    authkey = _transport.authkey_from_env()
    total = num_nodes * per_node
    token = secrets.token_hex(16)
    deadline = time.monotonic() + timeout_s
    workers: dict[int, WorkerHandle] = {}
    controls: list[FdChannel] = []
    my_host = listener.getsockname()[0]
    expected = total - per_node
    try:
        while len(workers) < expected:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DiscoError(
                    f"SocketSession: {expected - len(workers)} of {expected} remote workers did not "
                    f"connect to {listener.getsockname()[:2]} within {timeout_s:.0f}s (start the other "
                    "nodes with: python -m tvm.exec.disco_remote_socket_session HOST PORT NUM_WORKERS)"
                )
            listener.settimeout(min(left, 1.0))
            try:
                conn, peer = listener.accept()
            except socket.timeout:
                continue
            conn.settimeout(None)
            local_addr = conn.getsockname()[0]
            channel = FdChannel(conn.detach())
            try:
                if authkey is not None:
                    channel.authenticate(authkey, server=True)
                ok, hello = channel.recv_within(10)
            except Exception:  # noqa: BLE001 - a stranger or a broken peer: turn it away
                channel.close()
                continue
            if ok and hello[0] == "node" and len(controls) < num_nodes - 1:
                node_id = len(controls) + 1
                if int(hello[1]) < per_node:
                    channel.send(
                        (
                            "refused",
                            f"the session needs {per_node} workers per node, this node offers {hello[1]}",
                        )
                    )
                    channel.close()
                    continue
                channel.send(("node", node_id, node_id * per_node, per_node, total, num_groups, token))
                controls.append(channel)
                my_host = local_addr
            elif ok and hello[0] == "worker" and hello[2] == token and hello[1] not in workers:
                wid = int(hello[1])
                workers[wid] = WorkerHandle(
                    wid,
                    channel,
                    f"Disco worker {wid} (node {wid // per_node} at {peer[0]})",
                    node=wid // per_node,
                    host=peer[0],
                )
            else:
                channel.close()
    except BaseException:
        for w in workers.values():
            w.channel.close()
        for c in controls:
            c.close()
        raise
    return [workers[w] for w in sorted(workers)], controls, my_host
