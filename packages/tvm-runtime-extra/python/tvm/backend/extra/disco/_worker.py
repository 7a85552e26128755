"""A Disco worker: executes the controller's commands against its own register file.

The same loop serves thread workers (queues), process workers (pipes) and socket workers
(``python -m tvm.backend.extra.disco.worker``); see _protocol for the messages.
"""

from __future__ import annotations

import importlib
import threading
import traceback
from typing import Any, Protocol

import numpy as np

from ._protocol import DeviceSpec, Reg, encode_value

_LOCAL = threading.local()  # .worker_id / .num_workers on worker threads


class Channel(Protocol):
    def send(self, message: Any) -> None: ...
    def recv(self) -> Any: ...


def current_worker() -> tuple[int, int]:
    """(worker id, number of workers) of the calling worker thread; raises outside workers."""
    wid = getattr(_LOCAL, "worker_id", None)
    if wid is None:
        raise RuntimeError("not called from a Disco worker")
    return wid, _LOCAL.num_workers


def _device(spec: DeviceSpec | None) -> Any:
    import tvm

    return tvm.cpu(0) if spec is None else tvm.device(spec.device_type, spec.index)


class WorkerState:
    """One worker's registers and the command handlers."""

    def __init__(self, worker_id: int, num_workers: int) -> None:
        self.worker_id = worker_id
        self.num_workers = num_workers
        self.registers: dict[int, Any] = {}
        self.error: str | None = None

    def _arg(self, value: Any) -> Any:
        return self.registers[value.reg_id] if isinstance(value, Reg) else value

    def _tensor(self, reg: int) -> Any:
        value = self.registers.get(reg)
        if value is None or not hasattr(value, "copyfrom"):
            raise ValueError(f"register {reg} holds no tensor on worker {self.worker_id}")
        return value

    def execute(self, message: tuple) -> tuple[bool, Any]:
        """Run one command; returns (needs_reply, payload)."""
        import tvm_ffi

        import tvm

        op = message[0]
        regs = self.registers
        if op == "alloc":
            _, reg, shape, dtype, device, active = message
            regs[reg] = tvm.runtime.empty(tuple(shape), dtype, _device(device)) if active else None
        elif op == "get_func":
            regs[message[1]] = tvm_ffi.get_global_func(message[2])
        elif op == "call":
            _, out, func, args = message
            regs[out] = regs[func](*[self._arg(a) for a in args])
        elif op == "module_func":
            _, out, mod, name = message
            regs[out] = regs[mod][name]
        elif op == "load_vm":
            _, reg, path, device = message
            regs[reg] = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(path), _device(device))
        elif op in ("copy_in", "deliver"):
            _, reg, array = message
            if array is not None:
                self._tensor(reg).copyfrom(np.ascontiguousarray(array))
        elif op == "import":
            importlib.import_module(message[1])
        elif op == "free":
            regs.pop(message[1], None)
        elif op == "sync":
            return True, None
        elif op == "fetch":
            return True, encode_value(regs.get(message[1]))
        elif op == "contribute":
            return True, np.ascontiguousarray(self._tensor(message[1]).numpy())
        else:
            raise ValueError(f"unknown Disco command {op!r}")
        return False, None


REPLY_OPS = ("sync", "fetch", "contribute", "shutdown")


def serve(channel: Channel, worker_id: int, num_workers: int) -> None:
    """Execute commands from `channel` until "shutdown" (or the channel closes)."""
    _LOCAL.worker_id = worker_id
    _LOCAL.num_workers = num_workers
    state = WorkerState(worker_id, num_workers)
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
                channel.send(("error", state.error))
            continue
        try:
            needs_reply, payload = state.execute(message)
        except Exception as err:  # noqa: BLE001 - sent to the controller as text
            state.error = f"{type(err).__name__}: {err}"
            if op in REPLY_OPS:
                channel.send(("error", state.error))
            elif getattr(state, "debug", False):
                traceback.print_exc()
            continue
        if needs_reply:
            channel.send(("ok", payload))
