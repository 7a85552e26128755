"""Lazy access to the ``runtime.*`` global functions registered by libtvm_runtime.so.

Resolved on first use (not at import) to keep ``import tvm`` cheap.
"""

from __future__ import annotations

from typing import Any

import tvm_ffi

_cache: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    func = _cache.get(name)
    if func is None:
        func = tvm_ffi.get_global_func("runtime." + name, allow_missing=True)
        if func is None:
            raise AttributeError(f"global function runtime.{name} is not registered")
        _cache[name] = func
    return func
