"""Loading a backend DSO: dlopen RTLD_LOCAL, the core's ABI check, explicit registration."""

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
    if not os.path.exists(path):
        raise BackendLoadError(f"backend library {path} is missing (incomplete install)")
    try:
        # RTLD_LOCAL: backends never interpose each other; they reach the core by SONAME.
        lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOW)
    except OSError as err:
        raise BackendLoadError(f"cannot load {path}: {err}") from err
    try:
        version_fn = lib.TVMRuntimeBackendABIVersion
        register_fn = lib.TVMRuntimeBackendRegister
    except AttributeError as err:
        raise BackendLoadError(f"{path} is not a tvm-runtime backend (entry points missing)") from err
    version_fn.restype = ctypes.c_uint32
    version_fn.argtypes = []
    backend_abi = int(version_fn())
    try:
        why = _core.check_backend_abi(backend_abi)
    except _core.MissingCoreSymbolError as err:
        raise BackendABIError(str(err)) from err
    if why:
        # The core's message names both ABI versions; the warning adds the fix.
        raise BackendABIError(why)
    register_fn.restype = ctypes.c_int
    register_fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    buf = ctypes.create_string_buffer(4096)
    if register_fn(buf, len(buf)) != 0:
        raise BackendLoadError(f"registration failed: {buf.value.decode(errors='replace')}")
    LOADED[name] = LoadedDSO(path=path, abi_version=backend_abi, handle=lib)
    return lib
