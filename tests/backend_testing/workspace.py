"""The device workspace pool, checked on a fake driver: the calls compiled host code makes and
what the pool must have done."""

from __future__ import annotations


def workspace_pool_script(api: str, device_type: int) -> str:
    """A fake-driver script doing what compiled host code does for a device workspace (artifact
    `workspace`): three TVMBackendAllocWorkspace/FreeWorkspace rounds of 2 MiB through the core.
    Its result: the pointers the core returned and the driver allocations it logged."""
    return f"""
core = ctypes.CDLL(None)
alloc, free = core.TVMBackendAllocWorkspace, core.TVMBackendFreeWorkspace
alloc.restype = ctypes.c_void_p
alloc.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_int, ctypes.c_int]
free.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
tvm.{api}(0).exist
clear()
ptrs = []
for _ in range(3):
    p = alloc({device_type}, 0, 2097152, 2, 32)
    ptrs.append(p)
    assert free({device_type}, 0, p) == 0
result(ptrs=ptrs, allocs=parse_log(log(), "alloc"))
"""


def assert_workspace_pool_reused(r: dict) -> None:
    """The pool handed out one 256-byte aligned block three times and asked the driver once."""
    assert len(set(r["ptrs"])) == 1 and r["ptrs"][0] % 256 == 0
    assert [a["bytes"] for a in r["allocs"]] == ["2097152"]
