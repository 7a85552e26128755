"""Finding NCCL (libnccl.so.2) in pip wheels, for the C++ side's runtime.disco.nccl.*.

The C++ side calls :func:`locate_nccl` (registered as a global function) when a Disco session
first initialises NCCL; it tries the paths in order, then the system's libnccl.so.2.
cuda-pathfinder knows the layout of the nvidia-nccl-cu13 / -cu12 wheels and conda; without it
the wheels' own directory (site-packages/nvidia/nccl/lib) is searched.
"""

from __future__ import annotations

import os
import sys

LOCATOR_GLOBAL = "tvm_runtime.cuda.locate_nccl"


def _pathfinder_path() -> str | None:
    try:
        import cuda.pathfinder as pathfinder
    except ImportError:
        return None
    try:
        return str(pathfinder.load_nvidia_dynamic_lib("nccl").abs_path)
    except Exception:  # noqa: BLE001 - DynamicLibNotFoundError and friends: not installed
        return None


def _wheel_paths() -> list[str]:
    out = []
    for entry in sys.path:
        lib = os.path.join(entry or os.getcwd(), "nvidia", "nccl", "lib", "libnccl.so.2")
        if os.path.isfile(lib):
            out.append(lib)
    return out


def locate_nccl() -> list[str]:
    """libnccl.so.2 candidates from pip wheels or conda, best first."""
    out = []
    found = _pathfinder_path()
    if found:
        out.append(found)
    out.extend(p for p in _wheel_paths() if p not in out)
    return out
