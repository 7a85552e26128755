"""tvm-runtime-extra: the contrib runtime of tvm-runtime.

Registers the global functions that apache-tvm 0.27 compiled code calls by name for sorting,
top-k and random numbers (``tvm.contrib.sort.*``, ``tvm.contrib.random.*``) and
``tvm.runtime.threading.set_current_thread_affinity``.  There is no device here: the functions
run on the host, in the core's thread pool.  The core's loader loads ``libtvm_runtime_extra.so``
(declared in ``BACKEND``) at ``import tvm``.

``tvm.backend.extra.disco`` is Disco (multi-worker sessions, tensor-parallel models): the DSO
registers the worker-side functions compiled code calls (``runtime.disco.allreduce`` & co.) and
the cpu collective library; the Python sessions are imported on demand.
"""

from __future__ import annotations

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err


# Serves no device type: a failure to load is reported by name, not on a device, and the driver
# status is always "" (the contrib functions need no driver).
def _worker_process(worker_id: int, num_workers: int, num_groups: int, read_fd: int, write_fd: int) -> None:
    from .disco._globals import worker_process

    worker_process(worker_id, num_workers, num_groups, read_fd, write_fd)


def _register_worker_process() -> None:
    import tvm_ffi

    # What a Disco worker entry point (tvm.exec.disco_worker, MLC-LLM's) calls after `import tvm`.
    tvm_ffi.register_global_func("runtime.disco.WorkerProcess", _worker_process, override=True)


BACKEND = hook_api.declare_backend("extra", after_load=_register_worker_process)
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

# What loading the DSO makes available (tests and `python -m tvm.backend` use it).
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

__all__ = ["BACKEND", "GLOBAL_FUNCTIONS", "driver_status", "register_backend"]
