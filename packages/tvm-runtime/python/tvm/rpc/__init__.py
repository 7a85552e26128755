"""Remote procedure calls compatible with apache-tvm 0.27's RPC (server, client, tracker, proxy).

Nothing here is imported by ``import tvm``; the submodules load on first use.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "RPCServer": "server",
    "Server": "server",
    "connect": "client",
    "connect_tracker": "client",
    "RPCSession": "client",
    "LocalSession": "client",
    "TrackerSession": "client",
    "Tracker": "tracker",
    "Proxy": "proxy",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_LAZY)
