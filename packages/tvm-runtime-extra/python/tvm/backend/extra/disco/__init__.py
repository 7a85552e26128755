"""Disco, TVM's multi-worker runtime, for CPU workers: the session API of apache-tvm 0.27's
``tvm.runtime.disco`` (ThreadedSession, ProcessSession, SocketSession, DRef, call_packed,
copies to and from worker 0, load_vm_module, collectives).

Collectives run over the session's own channel (see session.py): no communication library is
needed for CPU devices.  NCCL for CUDA workers is not implemented yet.
"""

from __future__ import annotations

import tvm_ffi

from ._worker import current_worker
from .session import (
    DiscoError,
    DModule,
    DPackedFunc,
    DRef,
    ProcessSession,
    Session,
    SocketSession,
    ThreadedSession,
)

__all__ = [
    "DModule",
    "DPackedFunc",
    "DRef",
    "DiscoError",
    "ProcessSession",
    "Session",
    "SocketSession",
    "ThreadedSession",
    "worker_id",
]


def worker_id() -> int:
    """The id of the Disco worker running the caller (e.g. a function called via call_packed)."""
    return current_worker()[0]


def _register_worker_functions() -> None:
    # What worker-side code may call by name (apache-tvm registers the same names in C++).
    for name, fn in (
        ("runtime.disco.worker_id", worker_id),
        ("runtime.disco.num_workers", lambda: current_worker()[1]),
    ):
        if tvm_ffi.get_global_func(name, allow_missing=True) is None:
            tvm_ffi.register_global_func(name, fn)


_register_worker_functions()
