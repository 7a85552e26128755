"""tvm-runtime-extra: the contrib runtime of tvm-runtime.

Registers the global functions that apache-tvm 0.27 compiled code calls by name for sorting,
top-k and random numbers (``tvm.contrib.sort.*``, ``tvm.contrib.random.*``) and
``tvm.runtime.threading.set_current_thread_affinity``.  There is no device here: the functions
run on the host, in the core's thread pool.  Discovery calls ``register()`` at ``import tvm``.

``tvm.backend.extra.disco`` is Disco (multi-worker sessions, tensor-parallel models): the DSO
registers the worker-side functions compiled code calls (``runtime.disco.allreduce`` & co.) and
the cpu collective library; the Python sessions are imported on demand.
"""

from __future__ import annotations

import os

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

_DSO = os.path.join(os.path.dirname(__file__), "libtvm_runtime_extra.so")

# Serves no device type: a failure to load is reported by name, not on a device.
DEVICE_TYPES: tuple[int, ...] = ()

# What register() makes available (tests and `python -m tvm.backend` use it).
GLOBAL_FUNCTIONS = (
    "tvm.contrib.sort.sort",
    "tvm.contrib.sort.argsort",
    "tvm.contrib.sort.argsort_nms",
    "tvm.contrib.sort.topk",
    "tvm.contrib.random.randint",
    "tvm.contrib.random.uniform",
    "tvm.contrib.random.normal",
    "tvm.contrib.random.random_fill",
    "tvm.contrib.random.random_fill_for_measure",
    "tvm.runtime.threading.set_current_thread_affinity",
    "runtime.disco.allreduce",
    "runtime.disco.allgather",
    "runtime.disco.broadcast_from_worker0",
    "runtime.disco.scatter_from_worker0",
    "runtime.disco.gather_to_worker0",
    "runtime.disco.recv_from_worker0",
    "runtime.disco.send_to_worker",
    "runtime.disco.recv_from_worker",
    "runtime.disco.send_to_next_group",
    "runtime.disco.recv_from_prev_group",
    "runtime.disco.worker_id",
    "runtime.disco.worker_rank",
    "runtime.disco.world_size",
    "runtime.disco.device",
    "runtime.disco.empty",
    "runtime.disco.bind_worker_to_cpu_core",
    "runtime.disco.cpu.init_ccl_per_worker",
    "runtime.disco.cpu.allreduce",
    "runtime.disco.WorkerProcess",
)


def _worker_process(worker_id: int, num_workers: int, num_groups: int, read_fd: int, write_fd: int) -> None:
    from .disco._globals import worker_process

    worker_process(worker_id, num_workers, num_groups, read_fd, write_fd)


def register_backend() -> None:
    """Load ``libtvm_runtime_extra.so`` and register its functions; raises with the reason."""
    import tvm_ffi

    hook_api.load_backend_dso("extra", _DSO)
    # What a Disco worker entry point (tvm.exec.disco_worker, MLC-LLM's) calls after `import tvm`.
    tvm_ffi.register_global_func("runtime.disco.WorkerProcess", _worker_process, override=True)


# The older name of the same hook.
register = register_backend


def driver_status() -> str:
    """Always "": the contrib functions need no driver."""
    return ""


__all__ = ["DEVICE_TYPES", "GLOBAL_FUNCTIONS", "driver_status", "register", "register_backend"]
