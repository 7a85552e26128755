"""What an RPC session may do: the server's ``--allow`` options as one value.

The default allows what apache-tvm 0.27's server allows (any global function, any path).  The
restrictions limit what the *protocol* hands a client; they cannot limit what an artifact the
client uploads and loads does once loaded (its code is native code, constructors included), which
is why the threat model (docs/rpc.md) pairs them with authentication and a private network.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Global functions that take a path on the server (pattern -> which argument): a session that may
# load only its own uploads sees the path resolved inside its working directory.
PATH_FUNCTIONS = {
    "ffi.ModuleLoadFromFile": 0,
    "runtime.ModuleLoadFromFile": 0,
    "ffi.Module.load_from_file.*": 0,
    "runtime.module.loadfile_*": 0,
    "ffi.ModuleWriteToFile": 1,
    "runtime.LoadParamsFromFile": 0,
    "runtime.SaveParamsToFile": 1,
    "vm.builtin.tensor_cache.load": 0,
}

# What measuring on a device farm needs (apache-tvm's client, its tuners' RPC runners): the
# session's own file functions (always available), module functions, the time evaluator, random
# input fill, and reading the items of a returned tuple.
MEASURE_ONLY_GLOBALS = (
    "runtime.RPCTimeEvaluator",
    "tvm.contrib.random.random_fill",
    "tvm.contrib.random.random_fill_for_measure",
    "ffi.ArrayGetItem",
    "ffi.ArraySize",
    "ffi.MapGetItem",
    "ffi.MapSize",
)
MEASURE_ONLY_MAX_UPLOAD_BYTES = 1 << 30

PRESETS = ("all", "measure-only")


@dataclass(frozen=True)
class SessionPolicy:
    """``allowed_globals``: fnmatch patterns of the global functions a session may get (None:
    any); ``confine_loads``: path loaders see only the session's directory; ``max_upload_bytes``:
    bound on the bytes one session uploads (None: only the packet limit)."""

    allowed_globals: tuple[str, ...] | None = None
    confine_loads: bool = False
    max_upload_bytes: int | None = None
    preset: str = "all"

    @classmethod
    def from_options(
        cls,
        preset: str = "all",
        allow_globals: list[str] | tuple[str, ...] = (),
        confine_loads: bool = False,
        max_upload_bytes: int | None = None,
    ) -> SessionPolicy:
        if preset not in PRESETS:
            raise ValueError(f"unknown --allow preset {preset!r}; choose one of {', '.join(PRESETS)}")
        allowed: tuple[str, ...] | None = tuple(allow_globals) or None
        if preset == "measure-only":
            allowed = MEASURE_ONLY_GLOBALS + tuple(allow_globals)
            confine_loads = True
            if max_upload_bytes is None:
                max_upload_bytes = MEASURE_ONLY_MAX_UPLOAD_BYTES
        return cls(allowed, confine_loads, max_upload_bytes, preset)

    @property
    def restricted(self) -> bool:
        return self.allowed_globals is not None or self.confine_loads or self.max_upload_bytes is not None

    def describe(self) -> str:
        if not self.restricted:
            return "any global function, any path (as apache-tvm's server)"
        parts = [f"preset {self.preset}"] if self.preset != "all" else []
        if self.allowed_globals is not None:
            parts.append(f"globals {', '.join(self.allowed_globals)}")
        if self.confine_loads:
            parts.append("loads confined to the session's uploads")
        if self.max_upload_bytes is not None:
            parts.append(f"uploads up to {self.max_upload_bytes} bytes")
        return "; ".join(parts)

    def allows_global(self, name: str) -> bool:
        if self.allowed_globals is None:
            return True
        return any(fnmatch.fnmatchcase(name, p) for p in self.allowed_globals)

    def check_global(self, name: str) -> None:
        if not self.allows_global(name):
            raise PermissionError(
                f"this RPC server does not let a session call the global function {name!r} "
                f"(its sessions may use: {self.describe()})"
            )

    def wrap_global(self, name: str, func: Any, resolve: Callable[[str], str]) -> Any:
        """``func`` as the session may use it: functions that take a server path see it
        resolved with ``resolve`` (inside the session's directory); the time evaluator, which
        can call a global by name, applies the same rules to that name."""
        index = _path_argument(name)
        if self.confine_loads and index is not None:

            def confined(*args: Any) -> Any:
                call = list(args)
                if len(call) > index:
                    call[index] = resolve(str(call[index]))
                return func(*call)

            return confined
        if name == "runtime.RPCTimeEvaluator" and self.restricted:

            def evaluator(mod: Any, fname: Any, *args: Any) -> Any:
                if mod is None:  # times a global function by name: the same rules apply
                    self.check_global(str(fname))
                    if self.confine_loads and _path_argument(str(fname)) is not None:
                        raise PermissionError(
                            f"this RPC server confines path arguments to the session's uploads: "
                            f"the time evaluator cannot call {fname!r} by name"
                        )
                return func(mod, fname, *args)

            return evaluator
        return func


def _path_argument(name: str) -> int | None:
    for pattern, index in PATH_FUNCTIONS.items():
        if fnmatch.fnmatchcase(name, pattern):
            return index
    return None
