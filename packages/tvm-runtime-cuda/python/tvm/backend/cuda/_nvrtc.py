"""Finding NVRTC and the CUDA headers of the same release, for the C++ side.

The C++ side calls :func:`locate_nvrtc` (registered as a global function) on the first compile
of CUDA source; it loads the candidates in order and uses the first one the driver can run.
cuda-pathfinder knows the pip-wheel, conda and toolkit layouts; it is imported only then.
"""

from __future__ import annotations

import os
import sys
from typing import Any

LOCATOR_GLOBAL = "tvm_runtime.cuda.locate_nvrtc"
# Opt-in to header directories found somewhere else than the NVRTC library itself (for example
# headers of a system toolkit with an NVRTC wheel): mixing releases can miscompile.
_FOREIGN_HEADERS_ENV = "TVM_CUDA_NVRTC_ALLOW_FOREIGN_HEADERS"


def _wheel_release(path: str) -> str | None:
    """Which family of NVIDIA wheels a file belongs to: "cu13" for site-packages/nvidia/cu13/...,
    "per-component" for the CUDA 12 layout (nvidia/cuda_nvrtc, nvidia/cuda_runtime, ...)."""
    parts = os.path.normpath(path).split(os.sep)
    if "nvidia" not in parts[:-1]:
        return None
    top = parts[parts.index("nvidia") + 1]
    return top if top.startswith("cu") and top[2:].isdigit() else "per-component"


def _header_dirs(pathfinder: Any, name: str, nvrtc_found_via: str, nvrtc_path: str) -> list[str]:
    """Headers of the same CUDA release as NVRTC, or nothing: mixing releases can miscompile."""
    try:
        located = pathfinder.locate_nvidia_header_directory(name)
    except Exception:  # noqa: BLE001 - an unknown name in an older pathfinder: just no headers
        return []
    if located is None:
        return []
    if os.environ.get(_FOREIGN_HEADERS_ENV) != "1":
        if located.found_via != nvrtc_found_via:
            return []
        if _wheel_release(located.abs_path) != _wheel_release(nvrtc_path):
            return []
    return [located.abs_path]


def _pathfinder_candidate() -> dict[str, Any] | None:
    try:
        import cuda.pathfinder as pathfinder
    except ImportError:
        return None
    try:
        loaded = pathfinder.load_nvidia_dynamic_lib("nvrtc")
    except Exception:  # noqa: BLE001 - DynamicLibNotFoundError and friends: not installed
        return None
    return {
        "path": loaded.abs_path,
        "found_via": loaded.found_via,
        "include_dirs": _header_dirs(pathfinder, "cudart", loaded.found_via, loaded.abs_path),
        "cccl_dirs": _header_dirs(pathfinder, "cccl", loaded.found_via, loaded.abs_path),
    }


def _cu12_wheel_candidates() -> list[dict[str, Any]]:
    """The CUDA 12 NVRTC wheel layout, which pathfinder passes over when a CUDA 13 one exists."""
    out = []
    for entry in sys.path:
        root = os.path.join(entry or os.getcwd(), "nvidia")
        lib = os.path.join(root, "cuda_nvrtc", "lib", "libnvrtc.so.12")
        if os.path.isfile(lib):
            include = os.path.join(root, "cuda_runtime", "include")
            cccl = os.path.join(root, "cuda_cccl", "include")
            out.append(
                {
                    "path": lib,
                    "found_via": "site-packages (nvidia-cuda-nvrtc-cu12)",
                    "include_dirs": [include] if os.path.isdir(include) else [],
                    "cccl_dirs": [cccl] if os.path.isdir(cccl) else [],
                }
            )
    return out


def locate_nvrtc(driver_major: int = 0) -> list[dict[str, Any]]:
    """NVRTC candidates, best first: ``{"path", "found_via", "include_dirs", "cccl_dirs"}``.

    ``driver_major`` is the CUDA major version of the installed driver (0: unknown); for a
    CUDA 12 driver the CUDA 12 wheel is offered too.
    """
    out = []
    found = _pathfinder_candidate()
    if found is not None:
        out.append(found)
    if 0 < int(driver_major) < 13:
        out.extend(c for c in _cu12_wheel_candidates() if c["path"] != (found or {}).get("path"))
    return out
