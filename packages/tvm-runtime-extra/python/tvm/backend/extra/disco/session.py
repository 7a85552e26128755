"""The Disco controller: sessions, DRefs and collectives (API of apache-tvm 0.27's
``tvm.runtime.disco``).

Commands are queued to the workers and run asynchronously, in order; the calls that return data
(``debug_get_from_remote``, ``copy_from_worker_0``), ``sync_worker_0`` and every collective wait
for the workers.  Collectives run through the controller: it collects the inputs over the
session's own channel, combines them with numpy and sends each worker its result.  CPU workers
need no communication library that way, and the same code serves threads, processes and
sockets.  The first failure of any worker (an error, or its process exiting) ends the session:
the waiting call raises :class:`DiscoError` naming the worker and the reason, the other workers
are stopped, and every later call raises the same error.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Sequence
from typing import Any, Callable, Optional

import numpy as np

import tvm

from . import _transport
from ._protocol import DeviceSpec, Reg, TensorValue
from ._transport import WorkerHandle

REDUCE_OPS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sum": lambda a: a.sum(axis=0),
    "prod": lambda a: a.prod(axis=0),
    "min": lambda a: a.min(axis=0),
    "max": lambda a: a.max(axis=0),
    "avg": lambda a: a.mean(axis=0),
}


class DiscoError(RuntimeError):
    """A worker failed or exited (the message names it and why), or the session is shut down."""


class DRef:
    """An object that exists on every worker: register ``reg_id`` of each worker."""

    __slots__ = ("__weakref__", "_session", "reg_id")

    def __init__(self, session: Session, reg_id: int) -> None:
        self._session = session
        self.reg_id = reg_id

    def debug_get_from_remote(self, worker_id: int) -> Any:
        """This DRef's value on `worker_id` (a tensor comes back as a CPU Tensor)."""
        return self._session._fetch(worker_id, self.reg_id)

    def debug_copy_from(self, worker_id: int, value: Any) -> None:
        """Copy a numpy array or Tensor into this DRef's tensor on `worker_id`."""
        self._session._send(worker_id, ("copy_in", self.reg_id, _host_array(value)))

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
        return self._session.call_packed(self, *args)


class DModule(DRef):
    """A module (a Relax VM) on every worker; ``mod["main"]`` is a :class:`DPackedFunc`."""

    __slots__ = ()

    def __getitem__(self, name: str) -> DPackedFunc:
        out = self._session._new_ref(DPackedFunc)
        self._session._send_all(("module_func", out.reg_id, self.reg_id, name))
        return out


def _host_array(value: Any) -> np.ndarray:
    return np.ascontiguousarray(value.numpy() if hasattr(value, "numpy") else np.asarray(value))


def _decode(value: Any) -> Any:
    if isinstance(value, TensorValue):
        return tvm.runtime.tensor(value.array, tvm.cpu(0))
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


class Session:
    """A Disco session over `workers`; create one with ThreadedSession, ProcessSession or
    SocketSession."""

    def __init__(self, workers: list[WorkerHandle], num_groups: int = 1, on_close: Any = None) -> None:
        self._workers = workers
        self._num_groups = num_groups
        self._on_close = on_close
        self._reg_ids = itertools.count(1)
        self._garbage: list[int] = []
        self._lock = threading.RLock()
        self._failure: Optional[str] = None
        self._closed = False

    # ------------------------------------------------------------------------- plumbing

    @property
    def num_workers(self) -> int:
        return len(self._workers)

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise DiscoError(self._failure)
        if self._closed:
            raise DiscoError("the Disco session is shut down")

    def _fail(self, worker_id: int, reason: str) -> DiscoError:
        """Record the first failure, stop every worker; returns the error to raise."""
        if self._failure is None:
            self._failure = f"Disco worker {worker_id} failed: {reason}"
            self._stop_workers(graceful=False)
        return DiscoError(self._failure)

    def _flush_garbage(self) -> list[tuple]:
        freed, self._garbage[:] = list(self._garbage), []
        return [("free", reg) for reg in freed]

    def _send(self, worker_id: int, message: tuple) -> None:
        with self._lock:
            self._check_usable()
            garbage = self._flush_garbage()
            for wid, w in enumerate(self._workers):
                try:
                    for g in garbage:
                        w.send(g)
                    if wid == worker_id:
                        w.send(message)
                except (OSError, EOFError, ValueError) as err:
                    raise self._fail(wid, f"its channel broke ({err})") from None

    def _send_all(self, message: tuple) -> None:
        with self._lock:
            self._check_usable()
            garbage = self._flush_garbage()
            for wid, w in enumerate(self._workers):
                try:
                    for g in garbage:
                        w.send(g)
                    w.send(message)
                except (OSError, EOFError, ValueError) as err:
                    raise self._fail(wid, f"its channel broke ({err})") from None

    def _reply(self, worker_id: int) -> Any:
        try:
            status, payload = self._workers[worker_id].recv()
        except (EOFError, OSError) as err:
            raise self._fail(worker_id, f"it exited ({err})") from None
        if status != "ok":
            raise self._fail(worker_id, str(payload))
        return payload

    def _request(self, worker_id: int, message: tuple) -> Any:
        with self._lock:
            self._send(worker_id, message)
            return self._reply(worker_id)

    def _fetch(self, worker_id: int, reg_id: int) -> Any:
        return _decode(self._request(worker_id, ("fetch", reg_id)))

    def _sync_worker(self, worker_id: int) -> None:
        self._request(worker_id, ("sync",))

    def _sync_all(self) -> None:
        for i in range(self.num_workers):
            self._sync_worker(i)

    def _new_ref(self, cls: type = DRef) -> Any:
        return cls(self, next(self._reg_ids))

    def _group_size(self, in_group: bool) -> int:
        return self.num_workers // (self._num_groups if in_group else 1)

    # ----------------------------------------------------------------------- public API

    def sync_worker_0(self) -> None:
        """Wait until worker 0 ran every command queued so far."""
        self._sync_worker(0)

    def empty(
        self,
        shape: Sequence[int],
        dtype: str,
        device: Any = None,
        worker0_only: bool = False,
        in_group: bool = True,
    ) -> DRef:
        """An uninitialised tensor on every worker (with `worker0_only`, only on worker 0, or on
        the first worker of each group when `in_group`)."""
        out = self._new_ref()
        shape = tuple(int(s) for s in shape)
        size = self._group_size(in_group)
        with self._lock:
            self._check_usable()
            for wid in range(self.num_workers):
                active = not worker0_only or wid % size == 0
                self._send(wid, ("alloc", out.reg_id, shape, str(dtype), DeviceSpec.of(device), active))
        return out

    def get_global_func(self, name: str) -> DPackedFunc:
        """The global function `name` on every worker (a missing one fails at the next wait)."""
        out = self._new_ref(DPackedFunc)
        self._send_all(("get_func", out.reg_id, name))
        return out

    def call_packed(self, func: DRef, *args: Any) -> DRef:
        """Call `func` on every worker; DRef arguments become each worker's own value."""
        out = self._new_ref()
        wire = [Reg(a.reg_id) if isinstance(a, DRef) else a for a in args]
        self._send_all(("call", out.reg_id, func.reg_id, wire))
        return out

    def import_python_module(self, module_name: str) -> None:
        """Import a Python module on every worker (e.g. one that registers global functions)."""
        self._send_all(("import", module_name))

    def copy_from_worker_0(self, host_array: Any, remote_array: DRef) -> None:
        """Copy worker 0's tensor `remote_array` into the controller's Tensor `host_array`."""
        value = self._request(0, ("fetch", remote_array.reg_id))
        if not isinstance(value, TensorValue):
            raise DiscoError(f"{remote_array} holds no tensor on worker 0 (it holds {value!r})")
        host_array.copyfrom(value.array)

    def copy_to_worker_0(self, host_array: Any, remote_array: Optional[DRef] = None) -> DRef:
        """Copy a controller-side Tensor (or numpy array) to worker 0; returns its DRef."""
        host = _host_array(host_array)
        if remote_array is None:
            remote_array = self.empty(host.shape, str(host.dtype), worker0_only=True)
        self._send(0, ("copy_in", remote_array.reg_id, host))
        return remote_array

    def load_vm_module(self, path: str, device: Any = None) -> DModule:
        """Load a Relax VM executable on every worker (a VirtualMachine on `device`, default
        tvm.cpu(0))."""
        out = self._new_ref(DModule)
        self._send_all(("load_vm", out.reg_id, os.fspath(path), DeviceSpec.of(device)))
        return out

    def init_ccl(self, ccl: str, *device_ids: int) -> None:
        """Nothing to do for CPU workers: collectives go through the session (no library)."""
        if ccl not in ("cpu", "session"):
            raise NotImplementedError(
                f"CCL {ccl!r} is not available: this Disco runs CPU workers, whose collectives go "
                "through the session's own channel (init_ccl is not needed). NCCL/RCCL for GPU "
                "workers are not implemented yet"
            )

    # ---------------------------------------------------------------------- collectives

    def _collective(
        self,
        in_group: bool,
        src: Optional[DRef],
        contributors: str,
        combine: Callable[[list[np.ndarray]], list[Optional[np.ndarray]]],
        dst: DRef,
    ) -> None:
        """Inputs of `src` from each group's `contributors` ("all" or "first") go to
        combine(inputs) -> one output per group member, delivered into `dst`."""
        size = self._group_size(in_group)
        with self._lock:
            self._check_usable()
            for start in range(0, self.num_workers, size):
                members = list(range(start, start + size))
                senders = members if contributors == "all" else members[:1]
                for wid in senders:
                    self._send(wid, ("contribute", src.reg_id))
                inputs = [self._reply(wid) for wid in senders]
                try:
                    outputs = combine(inputs)
                except Exception as err:  # noqa: BLE001 - a shape mismatch etc. ends the session
                    raise self._fail(senders[0], f"collective failed: {type(err).__name__}: {err}") from None
                for wid, out in zip(members, outputs):
                    if out is not None:
                        self._send(wid, ("deliver", dst.reg_id, out))

    def allreduce(self, src: DRef, dst: DRef, op: str = "sum", in_group: bool = True) -> DRef:
        """dst = `op` (sum, prod, min, max, avg) over every worker's src, on every worker."""
        if op not in REDUCE_OPS:
            raise ValueError(f"allreduce: op must be one of {sorted(REDUCE_OPS)}, not {op!r}")

        def combine(inputs: list[np.ndarray]) -> list[Optional[np.ndarray]]:
            result = REDUCE_OPS[op](np.stack(inputs)).astype(inputs[0].dtype)
            return [result] * len(inputs)

        self._collective(in_group, src, "all", combine, dst)
        return dst

    def allgather(self, src: DRef, dst: DRef, in_group: bool = True) -> DRef:
        """dst = every worker's src concatenated along axis 0 in worker order, on every worker."""
        self._collective(in_group, src, "all", lambda xs: [np.concatenate(xs)] * len(xs), dst)
        return dst

    def broadcast_from_worker0(self, src: DRef, dst: DRef, in_group: bool = True) -> DRef:
        """dst = worker 0's src (each group's first worker's, `in_group`), on every worker."""
        size = self._group_size(in_group)
        self._collective(in_group, src, "first", lambda xs: [xs[0]] * size, dst)
        return dst

    def scatter_from_worker0(self, from_array: DRef, to_array: DRef, in_group: bool = True) -> None:
        """Worker 0's from_array split along axis 0 into equal parts, part i to worker i."""
        size = self._group_size(in_group)

        def combine(xs: list[np.ndarray]) -> list[Optional[np.ndarray]]:
            if xs[0].shape[0] % size != 0:
                raise ValueError(f"axis 0 of shape {xs[0].shape} does not split into {size} parts")
            return list(np.split(xs[0], size))

        self._collective(in_group, from_array, "first", combine, to_array)

    def gather_to_worker0(self, from_array: DRef, to_array: DRef, in_group: bool = True) -> None:
        """Worker 0's to_array = every worker's from_array concatenated along axis 0."""

        def combine(xs: list[np.ndarray]) -> list[Optional[np.ndarray]]:
            return [np.concatenate(xs)] + [None] * (len(xs) - 1)

        self._collective(in_group, from_array, "all", combine, to_array)

    def broadcast(self, src: Any, dst: Optional[DRef] = None, in_group: bool = True) -> DRef:
        """A controller-side array copied to every worker."""
        host = _host_array(src)
        if dst is None:
            dst = self.empty(host.shape, str(host.dtype))
        return self.broadcast_from_worker0(self.copy_to_worker_0(host), dst, in_group)

    def scatter(self, src: Any, dst: Optional[DRef] = None, in_group: bool = True) -> DRef:
        """A controller-side array split along axis 0, one part per worker."""
        host = _host_array(src)
        if dst is None:
            parts = self._group_size(in_group)
            dst = self.empty((host.shape[0] // parts, *host.shape[1:]), str(host.dtype))
        self.scatter_from_worker0(self.copy_to_worker_0(host), dst, in_group)
        return dst

    # ------------------------------------------------------------------------- lifetime

    def _stop_workers(self, graceful: bool) -> None:
        for w in self._workers:
            try:
                w.send(("shutdown",))
            except (OSError, EOFError, ValueError):
                pass
        if graceful:
            for w in self._workers:
                try:
                    w.recv()
                except (OSError, EOFError, ValueError):
                    pass
        for w in self._workers:
            w.stop()
        if self._on_close is not None:
            self._on_close()
            self._on_close = None

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


def _check_counts(num_workers: int, num_groups: int) -> None:
    if num_workers < 1:
        raise ValueError(f"a Disco session needs at least one worker, got {num_workers}")
    if num_groups < 1 or num_workers % num_groups != 0:
        raise ValueError(f"num_groups={num_groups} must divide num_workers={num_workers}")


class ThreadedSession(Session):
    """Workers are threads of this process (CPU devices)."""

    def __init__(self, num_workers: int, num_groups: int = 1) -> None:
        _check_counts(num_workers, num_groups)
        super().__init__(_transport.thread_workers(num_workers), num_groups)


class ProcessSession(Session):
    """Workers are processes of this machine, each with its own interpreter and runtime."""

    def __init__(self, num_workers: int, num_groups: int = 1, entrypoint: str = "") -> None:
        # `entrypoint` (apache-tvm's worker module) is accepted for compatibility; ours is fixed.
        _check_counts(num_workers, num_groups)
        super().__init__(_transport.process_workers(num_workers), num_groups)


class SocketSession(Session):
    """Workers on several machines ("nodes"), connected over TCP.

    Node 0 is this machine: its `num_workers_per_node` workers are started here.  Every other
    node runs ``TVM_DISCO_AUTHKEY=<session.authkey_hex> python -m tvm.backend.extra.disco.worker
    HOST PORT NUM_WORKERS_PER_NODE``; worker ids follow the order of connection.  With
    `launch_local_nodes` those node processes are started on this machine (for tests).
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
        listener = _transport.SocketListener(host, port)
        self.address = listener.address
        self.authkey_hex = listener.authkey.hex()
        nodes = []
        if launch_local_nodes:
            for _ in range(num_nodes - 1):
                nodes.append(
                    _transport.launch_socket_node(*self.address, num_workers_per_node, listener.authkey)
                )
        workers = _transport.process_workers(num_workers_per_node, first_id=0, total=total)
        try:
            workers += _accept_all(listener, num_workers_per_node, total, connect_timeout_s)
        except BaseException:
            for w in workers:
                w.stop()
            for p in nodes:
                p.kill()
            listener.close()
            raise

        def close() -> None:
            listener.close()
            for p in nodes:
                try:
                    p.wait(timeout=10)
                except Exception:  # noqa: BLE001
                    p.kill()

        super().__init__(workers, num_groups, on_close=close)


def _accept_all(
    listener: _transport.SocketListener, first_id: int, total: int, timeout_s: float
) -> list[WorkerHandle]:
    accepted: list[WorkerHandle] = []
    errors: list[BaseException] = []

    def accept() -> None:
        try:
            for wid in range(first_id, total):
                accepted.append(listener.accept(wid, total))
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive() or errors:
        listener.close()
        for w in accepted:
            w.stop()
        missing = total - first_id - len(accepted)
        reason = f": {errors[0]}" if errors else ""
        raise DiscoError(
            f"SocketSession: {missing} of {total - first_id} remote workers did not connect to "
            f"{listener.address} within {timeout_s:.0f}s{reason}"
        )
    return accepted
