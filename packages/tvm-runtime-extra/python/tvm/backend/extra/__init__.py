"""tvm-runtime-extra: the contrib runtime of tvm-runtime.

Registers the global functions that apache-tvm 0.27 compiled code calls by name for sorting,
top-k and random numbers (``tvm.contrib.sort.*``, ``tvm.contrib.random.*``) and
``tvm.runtime.threading.set_current_thread_affinity``.  There is no device here: the functions
run on the host, in the core's thread pool.  The core's loader loads ``libtvm_runtime_extra.so``
(declared in ``BACKEND``) at ``import tvm``.

``tvm.backend.extra.disco`` is Disco (multi-worker sessions on CPU workers), imported on demand.
"""

from __future__ import annotations

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err

# Serves no device type: a failure to load is reported by name, not on a device, and the driver
# status is always "" (the contrib functions need no driver).
BACKEND = hook_api.declare_backend("extra")
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
)

__all__ = ["BACKEND", "GLOBAL_FUNCTIONS", "driver_status", "register_backend"]
