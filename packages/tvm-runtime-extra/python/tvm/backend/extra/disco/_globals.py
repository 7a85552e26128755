"""The global functions of apache-tvm 0.27's Disco that are written in Python here, registered
when ``tvm.backend.extra.disco`` (or ``tvm.runtime.disco``) is imported, as 0.27 does:

    runtime.disco.create_process_pool(num_workers, num_groups, entrypoint)   (unless registered)
    runtime.disco.load_vm_module(path, device)      a Relax VM on the calling worker
    runtime.disco._import_python_module(name)
    runtime.disco.ShardLoader*                      (loader.py)

``runtime.disco.WorkerProcess`` is registered earlier, when ``import tvm`` loads this wheel's
hook, because a worker entry point (``tvm.exec.disco_worker``, MLC-LLM's) looks it up right after
``import tvm``.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

import tvm_ffi

from . import _transport, loader
from ._worker import import_python_module

# Libraries loaded by this process, by path: every worker thread of the process builds its own
# VirtualMachine over the same library (apache-tvm 0.27 keeps the same cache).
_LIBRARIES: dict[str, Any] = {}
_LIBRARIES_LOCK = threading.Lock()
_POOLED_ALLOCATOR = 2
_CPU = 1


def load_vm_module(path: str, device: Any = None) -> Any:
    import tvm

    path = os.path.abspath(path)
    with _LIBRARIES_LOCK:
        lib = _LIBRARIES.get(path)
        if lib is None:
            lib = _LIBRARIES[path] = tvm.runtime.load_module(path)
    if device is None:
        device = tvm_ffi.get_global_func("runtime.disco.device")()
    if not lib.implements_function("vm_load_executable", False):
        return lib  # not a Relax VM executable: the library itself, as 0.27 returns it
    make_vm = lib["vm_load_executable"]
    vm = make_vm()
    args = [int(device.dlpack_device_type()), int(device.index), _POOLED_ALLOCATOR]
    if args[0] != _CPU:
        args += [_CPU, 0, _POOLED_ALLOCATOR]  # the host, for shape computations
    vm["vm_initialization"](*args)
    return vm


def worker_process(worker_id: int, num_workers: int, num_groups: int, read_fd: int, write_fd: int) -> None:
    """``runtime.disco.WorkerProcess``: serve the controller over the two pipe ends (or one
    socket, when both are the same fd) until it shuts the session down."""
    from ._worker import serve

    serve(
        _transport.FdChannel(int(read_fd), int(write_fd)), int(worker_id), int(num_workers), int(num_groups)
    )


def register() -> None:
    functions: dict[str, Callable[..., Any]] = {
        "runtime.disco.load_vm_module": load_vm_module,
        "runtime.disco._import_python_module": import_python_module,
        **loader.FUNCTIONS,
    }
    for name, func in functions.items():
        tvm_ffi.register_global_func(name, func, override=True)
    # A launcher registered before us (MLC-LLM's) stays: sessions use whatever is registered.
    if tvm_ffi.get_global_func("runtime.disco.create_process_pool", allow_missing=True) is None:
        tvm_ffi.register_global_func("runtime.disco.create_process_pool", _transport.create_process_pool)
