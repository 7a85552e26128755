"""What the core's "cannot find function" errors say about the wheel that provides the function:
whether it is installed and whether its backend loaded (the C++ side only knows the name)."""

from __future__ import annotations

from importlib import metadata

from . import _registry

GLOBAL = "tvm_runtime.backend.distribution_status"


def distribution_status(distribution: str) -> str:
    """ "not installed", "loaded <version>", or why the installed wheel is not loaded."""
    try:
        version = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"
    wanted = distribution.lower().replace("_", "-")
    for record in _registry.list_backends().values():
        if (record.distribution or "").lower().replace("_", "-") != wanted:
            continue
        if record.status == "loaded":
            return f"loaded {version}"
        return f"{distribution} {version}: {record.status}" + (f", {record.reason}" if record.reason else "")
    return f"{distribution} {version} registered no backend"


def register() -> None:
    import tvm_ffi

    tvm_ffi.register_global_func(GLOBAL, distribution_status, override=True)
