"""Finding NVIDIA libraries from pip wheels (cuBLASLt, cuDNN, the CUDA runtime) for the C++ side.

The C++ side calls :func:`locate_library` (registered as a global function) the first time a
module needs the library -- a ``cublas_json`` or ``cudnn_json`` module, or a host library that
links the CUDA runtime -- and tries the paths in order, then the system's sonames.
cuda-pathfinder knows the layout of the nvidia-* wheels (CUDA 13's ``nvidia/cu13/lib``, CUDA 12's
``nvidia/<name>/lib``) and conda; without it those directories are searched on ``sys.path``.
"""

from __future__ import annotations

import glob
import os
import sys

LOCATOR_GLOBAL = "tvm_runtime.cuda.locate_library"

# cuda-pathfinder's name -> (file name patterns, wheel directories under site-packages).
_WHEEL_FILES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cublasLt": (("libcublasLt.so.13", "libcublasLt.so.12"), ("nvidia/cu13/lib", "nvidia/cublas/lib")),
    "cudnn": (("libcudnn.so.9",), ("nvidia/cudnn/lib", "nvidia/cu13/lib")),
    "cudart": (("libcudart.so.13", "libcudart.so.12"), ("nvidia/cu13/lib", "nvidia/cuda_runtime/lib")),
}


def _pathfinder_path(name: str) -> str | None:
    try:
        import cuda.pathfinder as pathfinder
    except ImportError:
        return None
    try:
        return str(pathfinder.load_nvidia_dynamic_lib(name).abs_path)
    except Exception:  # noqa: BLE001 - DynamicLibNotFoundError and friends: not installed
        return None


def _wheel_paths(name: str) -> list[str]:
    files, dirs = _WHEEL_FILES[name]
    out = []
    for entry in sys.path:
        for d in dirs:
            for f in files:
                out.extend(sorted(glob.glob(os.path.join(entry or os.getcwd(), d, f))))
    return out


def locate_library(name: str) -> list[str]:
    """Paths of the NVIDIA library ``name`` ("cublasLt", "cudnn", "cudart") from pip wheels or
    conda, best first; [] for a name this hook does not know.

    The wheels' own directories come first and cuda-pathfinder is asked only when they hold
    nothing: pathfinder *loads* what it finds into the process (globally), which must not
    happen to, say, a CUDA 13 runtime while an artifact needs the CUDA 12 one.
    """
    if name not in _WHEEL_FILES:
        return []
    out = _wheel_paths(name)
    if not out:
        found = _pathfinder_path(name)
        if found:
            out.append(found)
    return list(dict.fromkeys(out))
