"""Process-wide memory controls of the runtime."""

from __future__ import annotations

import tvm_ffi


def release_idle_memory() -> int:
    """Give back the working memory the runtime keeps between calls; return its bytes.

    After a call, a process keeps the VM's storages and the kernels' workspaces parked for the
    next call, and the C library keeps freed blocks; for a small model that is as much memory as
    its weights, private to each process. A model server whose workers go idle between requests
    calls this then: the memory goes back to the system (their resident and proportional set
    sizes drop), and the next call faults it in again, which costs a little time and nothing
    else. Tensors that are still referenced (inputs, outputs, weights) are not touched.
    """
    return int(tvm_ffi.get_global_func("tvm_runtime.memory.release_idle")())
