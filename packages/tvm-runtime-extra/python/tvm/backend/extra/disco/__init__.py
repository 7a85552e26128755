"""Disco, TVM's multi-worker runtime: the session API of apache-tvm 0.27's
``tvm.runtime.disco`` (ThreadedSession, ProcessSession, SocketSession, DRef, call_packed, copies
to and from worker 0, load_vm_module, collectives) and the worker side that compiled
tensor-parallel models call (``runtime.disco.allreduce`` & co., the shard loaders).

Collectives run between the workers through the session's collective library: ``cpu`` (shared
memory on one machine, TCP between machines; the default), or ``nccl`` / ``rccl`` for GPU
workers after ``session.init_ccl("nccl", *device_ids)`` (from tvm-runtime-cuda / -rocm).
"""

from __future__ import annotations

from . import _globals
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
]

_globals.register()
