"""Locate and load ``libtvm_runtime.so`` (``.dylib`` on macOS: the core DSO of tvm-runtime).

The core is loaded ``RTLD_GLOBAL`` because TVM-compiled libraries have no ``DT_NEEDED``
entries: they resolve ``TVMBackend*`` and ``TVMFFI*`` symbols from the global scope.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import tvm_ffi  # (loads libtvm_ffi.so RTLD_GLOBAL first)

from ._platform import DSO_SUFFIX

LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
LIB_PATH = os.path.join(LIB_DIR, f"libtvm_runtime{DSO_SUFFIX}")


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
    if not hasattr(lib, "TVMRuntimeInitialize"):
        # apache-tvm ships a library of the same name; installed over ours, it replaces it.
        raise CoreLoadError(
            f"{LIB_PATH} is not tvm-runtime's core library (it has no TVMRuntimeInitialize): "
            "another distribution that ships a `tvm` package, such as apache-tvm, has "
            "overwritten it. Use separate environments, or remove both and reinstall one: "
            "`pip uninstall -y apache-tvm tvm-runtime && pip install tvm-runtime`."
        )
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
    # Python's tvm.backend loader decides which backends load (entry points, TVM_BACKENDS,
    # TVM_DEVICE_BACKEND_AUTOLOAD) and reports their failures: the core's own on-demand loading,
    # for programs without Python, stays off here.
    lib.TVMRuntimeSetBackendOnDemand.argtypes = [ctypes.c_int]
    lib.TVMRuntimeSetBackendOnDemand.restype = None
    lib.TVMRuntimeSetBackendOnDemand(0)
    lib.TVMRuntimeLoadBackend.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.TVMRuntimeLoadBackend.restype = ctypes.c_int
    return lib


LIB = _load()
# The core raises kind "NotImplementedError" for apache-tvm runtime features it does not provide
# (e.g. token-tree attention in the KV cache): Python's NotImplementedError, a RuntimeError.
tvm_ffi.register_error("NotImplementedError", NotImplementedError)
ABI_VERSION: int = LIB.TVMRuntimeGetABIVersion()
VERSION: str = LIB.TVMRuntimeVersion().decode()


def check_backend_abi(backend_abi_version: int) -> str:
    """Why a backend built for ``backend_abi_version`` cannot load into this core ("" if it can).

    The rule lives in the core (``TVMRuntimeCheckBackendABI``), so Python, C++ hosts and the core
    itself agree on it.
    """
    check = _abi_checker()
    err = ctypes.create_string_buffer(1024)
    if check(backend_abi_version, err, len(err)) == 0:
        return ""
    return err.value.decode(errors="replace") or (
        f"backend ABI {abi_version_str(backend_abi_version)} is incompatible with core ABI "
        f"{abi_version_str(ABI_VERSION)}"
    )


# TVMRuntimeLoadBackend's return codes (tvm_runtime/c_api.h).
BACKEND_LOADED, BACKEND_LOAD_FAILED, BACKEND_ABI_MISMATCH, BACKEND_NOT_FOUND = 0, 1, 2, 3


def load_backend(name: str, path: str) -> tuple[int, str]:
    """Load and register the backend DSO at ``path`` with the core's loader (the one C++ hosts
    use): its return code and, on failure, the reason."""
    err = ctypes.create_string_buffer(4096)
    rc = LIB.TVMRuntimeLoadBackend(name.encode(), os.fsencode(path), err, len(err))
    return rc, err.value.decode(errors="replace")


class MissingCoreSymbolError(CoreLoadError):
    """The loaded core predates a C function this Python package needs."""


_CHECKER: Any = None  # the ctypes function, bound on first use


def _abi_checker() -> Any:
    global _CHECKER
    if _CHECKER is None:
        check = getattr(LIB, "TVMRuntimeCheckBackendABI", None)
        if check is None:
            raise MissingCoreSymbolError(
                f"the tvm-runtime core at {LIB_PATH} does not export TVMRuntimeCheckBackendABI, "
                f"so it cannot check a backend's ABI: its library and its Python files come from "
                f"different builds. Reinstall it: pip install --force-reinstall tvm-runtime=={VERSION}"
            )
        check.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
        check.restype = ctypes.c_int
        _CHECKER = check
    return _CHECKER


def abi_version_str(version: int) -> str:
    """Render an encoded ABI version (major << 16 | minor) as ``major.minor``."""
    return f"{version >> 16}.{version & 0xFFFF}"
