"""A Disco worker: runs the controller's commands against its own register file.

The same loop serves a thread (ThreadedSession, and worker 0 of a ProcessSession, which lives in
the controller's process as in apache-tvm 0.27), a process started by a process pool
(``python -m tvm.exec.disco_worker``, over two pipes) and a process of a remote node (over a
socket).  Its identity (worker id, world size, groups) lives in the extra DSO's worker context,
where the collective builtins compiled code calls (``runtime.disco.allreduce`` & co.) find it.

Commands, controller -> worker (no reply):
    ("identity", worker_id, num_workers, num_groups, local_worker_id)
    ("get_func", reg, name)                 reg = the global function `name`
    ("call", out_reg, func_reg, args)       out = func(*args); Reg(n) in args = register n
    ("copy_in", reg, TensorValue)           copy into the tensor held by reg
    ("free", [reg, ...])
and with one reply each, in order:
    ("sync",)          -> ("ok", None)      after the CCL finished its pending work
    ("fetch", reg)     -> ("ok", value)     the register's value (tensors as TensorValue)
    ("shutdown",)      -> ("ok", None), then the worker stops
Replies are ("ok", value) or ("error", text, peer_caused).  A command that fails makes the worker
send ("failed", text, peer_caused) at once, abort its collectives (so peers waiting for it fail
too instead of waiting forever), skip every later command and answer each request with the error.
`peer_caused` says the failure came from another worker (a collective it aborted, or it died):
the cpu collectives raise it as :class:`DiscoPeerFailureError`.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

import tvm_ffi

from . import _values
from ._wire import Reg

REPLY_OPS = ("sync", "fetch", "shutdown")


class Channel(Protocol):
    def send(self, message: Any) -> None: ...
    def recv(self) -> Any: ...


@tvm_ffi.register_error("DiscoPeerFailure")
class DiscoPeerFailureError(RuntimeError):
    """A collective failed because another worker died, closed its end or aborted (the error kind
    ``DiscoPeerFailure`` of src/extra/disco/peer_failure.h).  Reported as a RuntimeError, like
    every other collective failure; the session then looks for the worker that failed first."""


def _describe(err: Exception) -> str:
    """The error as the controller reports it: ``<kind>: <message>``."""
    kind = "RuntimeError" if isinstance(err, DiscoPeerFailureError) else type(err).__name__
    return f"{kind}: {err}"


def _global(name: str) -> Any:
    return tvm_ffi.get_global_func(name)


class WorkerState:
    """One worker's registers and the command handlers."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id
        self.registers: dict[int, Any] = {}
        self.error: tuple[str, bool] | None = None

    def _arg(self, value: Any) -> Any:
        if isinstance(value, Reg):
            return self.registers.get(value.reg_id)
        if isinstance(value, list):
            return [self._arg(v) for v in value]
        return _values.from_wire(value)

    def execute(self, message: tuple) -> tuple[bool, Any]:
        """Run one command; returns (needs_reply, payload)."""
        op = message[0]
        regs = self.registers
        if op == "call":
            _, out, func, args = message
            regs[out] = regs[func](*[self._arg(a) for a in args])
        elif op == "get_func":
            regs[message[1]] = _global(message[2])
        elif op == "copy_in":
            _, reg, value = message
            target = regs.get(reg)
            if target is None:
                raise ValueError(f"register {reg} holds no tensor on worker {self.worker_id}")
            _values.copy_into(target, value)
        elif op == "free":
            for reg in message[1]:
                regs.pop(reg, None)
        elif op == "identity":
            _, wid, num_workers, num_groups, local_id = message
            self.worker_id = wid
            _global("tvm_runtime.disco.enter_worker")(wid, num_workers, num_groups, local_id)
        elif op == "sync":
            _global("tvm_runtime.disco.sync_worker")()
            return True, None
        elif op == "fetch":
            return True, _values.to_wire(regs.get(message[1]))
        else:
            raise ValueError(f"unknown Disco command {op!r}")
        return False, None


def serve(channel: Channel, worker_id: int, num_workers: int, num_groups: int = 1) -> None:
    """Execute commands from `channel` until "shutdown" (or until the channel closes)."""
    _global("tvm_runtime.disco.enter_worker")(worker_id, num_workers, num_groups, worker_id)
    state = WorkerState(worker_id)
    try:
        _loop(channel, state)
    finally:
        state.registers.clear()
        _global("tvm_runtime.disco.leave_worker")()


def _loop(channel: Channel, state: WorkerState) -> None:
    while True:
        try:
            message = channel.recv()
        except (EOFError, OSError):
            return  # the controller went away
        op = message[0]
        if op == "shutdown":
            state.registers.clear()
            channel.send(("ok", None))
            return
        if state.error is not None:
            if op in REPLY_OPS:
                channel.send(("error", *state.error))
            continue
        try:
            needs_reply, payload = state.execute(message)
        except Exception as err:  # noqa: BLE001 - sent to the controller as text
            state.error = (_describe(err), isinstance(err, DiscoPeerFailureError))
            # Peers blocked in a collective with this worker must not wait for it.
            _global("tvm_runtime.disco.worker_failed")(f"Disco worker {state.worker_id} failed: {err}")
            channel.send(("error", *state.error) if op in REPLY_OPS else ("failed", *state.error))
            continue
        if needs_reply:
            channel.send(("ok", payload))


def import_python_module(module_name: str) -> None:
    """``runtime.disco._import_python_module``: what Session.import_python_module runs."""
    importlib.import_module(module_name)
