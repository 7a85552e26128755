"""The backend's global functions (registered by libtvm_runtime_rocm.so)."""

from __future__ import annotations

from typing import Any


def rocm_global(name: str) -> Any:
    """``tvm_runtime.rocm.<name>``; looked up per call so the hook imports without the DSO."""
    import tvm_ffi

    return tvm_ffi.get_global_func(f"tvm_runtime.rocm.{name}")
