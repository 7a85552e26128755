"""Lazy access to the ``runtime.*`` global functions registered by libtvm_runtime.so.

Resolved on first use (not at import) to keep ``import tvm`` cheap.
"""

from __future__ import annotations

from typing import Any

import tvm_ffi


def __getattr__(name: str) -> Any:
    # Called only on the first access: the function is then stored as a module attribute, so
    # later accesses (e.g. every `dev.sync()`) are plain attribute lookups.
    if name.startswith("__"):
        raise AttributeError(name)
    func = tvm_ffi.get_global_func("runtime." + name, allow_missing=True)
    if func is None:
        raise AttributeError(f"global function runtime.{name} is not registered")
    globals()[name] = func
    return func
