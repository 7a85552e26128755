"""Loading a backend DSO through the core's loader (TVMRuntimeLoadBackend): dlopen RTLD_LOCAL, the
core's ABI check, explicit registration."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field

from .. import _core


class BackendLoadError(RuntimeError):
    """A backend DSO could not be loaded or registered; the message says why."""


class BackendABIError(BackendLoadError):
    """A backend was built for an incompatible core ABI."""


@dataclass(frozen=True)
class LoadedDSO:
    """A backend DSO that loaded and registered: where it is, its ABI, its handle."""

    path: str
    abi_version: int
    handle: ctypes.CDLL = field(repr=False, compare=False)


# name given to load_backend_dso -> the library, referenced for the process lifetime (a backend
# DSO is never unloaded).  The loader copies path and ABI into the backend's record.
LOADED: dict[str, LoadedDSO] = {}


def load_backend_dso(name: str, path: str | os.PathLike[str]) -> ctypes.CDLL:
    """Load and register the backend DSO at ``path``; idempotent per backend name."""
    if name in LOADED:
        return LOADED[name].handle
    path = os.fspath(path)
    # The core finds nothing here (the hook's declaration gave the path), but checks and registers
    # the DSO exactly as for a C++ program: dlopen RTLD_LOCAL, the entry points, its ABI check.
    rc, why = _core.load_backend(name, path)
    if rc == _core.BACKEND_ABI_MISMATCH:
        # The core's message names both ABI versions; the warning adds the fix.
        raise BackendABIError(why)
    if rc != _core.BACKEND_LOADED:
        raise BackendLoadError(why)
    # The handle of the library the core loaded (RTLD_NOLOAD: never a second copy).
    lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOW | os.RTLD_NOLOAD)
    lib.TVMRuntimeBackendABIVersion.restype = ctypes.c_uint32
    backend_abi = int(lib.TVMRuntimeBackendABIVersion())
    LOADED[name] = LoadedDSO(path=path, abi_version=backend_abi, handle=lib)
    return lib
