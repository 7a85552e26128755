"""Locate and load ``libtvm_runtime.so`` (the core DSO of tvm-runtime).

The core is loaded ``RTLD_GLOBAL`` because TVM-compiled libraries have no ``DT_NEEDED``
entries: they resolve ``TVMBackend*`` and ``TVMFFI*`` symbols from the global scope.
"""

from __future__ import annotations

import ctypes
import os

import tvm_ffi  # noqa: F401  (loads libtvm_ffi.so RTLD_GLOBAL first)

LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
LIB_PATH = os.path.join(LIB_DIR, "libtvm_runtime.so")


class CoreLoadError(ImportError):
    """The core runtime library could not be loaded or initialised."""


def _load() -> ctypes.CDLL:
    if not os.path.exists(LIB_PATH):
        raise CoreLoadError(
            f"tvm-runtime's core library is missing ({LIB_PATH}). The `tvm` package on sys.path "
            "is incomplete or belongs to another distribution; reinstall with "
            "`pip install --force-reinstall tvm-runtime` (see `python -m tvm.backend`)."
        )
    try:
        lib = ctypes.CDLL(LIB_PATH, mode=ctypes.RTLD_GLOBAL)
    except OSError as err:
        raise CoreLoadError(f"cannot load {LIB_PATH}: {err}") from err
    lib.TVMRuntimeInitialize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    lib.TVMRuntimeInitialize.restype = ctypes.c_int
    lib.TVMRuntimeGetABIVersion.restype = ctypes.c_uint32
    lib.TVMRuntimeVersion.restype = ctypes.c_char_p
    buf = ctypes.create_string_buffer(4096)
    if lib.TVMRuntimeInitialize(buf, len(buf)) != 0:
        raise CoreLoadError(
            f"tvm-runtime failed to initialise: {buf.value.decode(errors='replace')}. If another "
            "TVM runtime (e.g. apache-tvm) is loaded in this process, use only one of them."
        )
    return lib


LIB = _load()
ABI_VERSION: int = LIB.TVMRuntimeGetABIVersion()
VERSION: str = LIB.TVMRuntimeVersion().decode()


def abi_version_str(version: int) -> str:
    """Render an encoded ABI version (major << 16 | minor) as ``major.minor``."""
    return f"{version >> 16}.{version & 0xFFFF}"
