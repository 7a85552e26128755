"""``tvm.runtime.Module``, ``load_module`` and ``time_evaluator`` (apache-tvm 0.27 API)."""

from __future__ import annotations

import _ctypes
import ctypes
import os
import shutil
import struct
import tempfile
import threading
from collections.abc import Sequence
from typing import Any, Callable, cast

import numpy as np
import tvm_ffi

from . import _ffi_api


class BenchmarkResult:
    """Timing results of ``time_evaluator``: per-call seconds of each repeat."""

    def __init__(self, results: Sequence[float]):
        self.results = tuple(results)
        arr = np.array(self.results) if self.results else np.array([0.0])
        self.mean = float(arr.mean())
        self.median = float(np.median(arr))
        self.min = float(arr.min())
        self.max = float(arr.max())
        self.std = float(arr.std())

    def __repr__(self) -> str:
        return (
            f"BenchmarkResult(min={self.min}, mean={self.mean}, median={self.median}, "
            f"max={self.max}, std={self.std}, results={self.results})"
        )

    def __str__(self) -> str:
        ms = 1000.0
        return (
            "Execution time summary:\n"
            f"{'mean (ms)':^12} {'median (ms)':^12} {'max (ms)':^12} {'min (ms)':^12} {'std (ms)':^12}\n"
            f"{self.mean * ms:^12.4f} {self.median * ms:^12.4f} {self.max * ms:^12.4f} "
            f"{self.min * ms:^12.4f} {self.std * ms:^12.4f}"
        )


@tvm_ffi.register_object("ffi.Module")
class Module(tvm_ffi.Module):
    """A loaded artifact: ``mod["func"](*args)`` calls an exported function."""

    def time_evaluator(
        self,
        func_name: str,
        dev: Any,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: int = 0,
        limit_zero_time_iterations: int = 100,
        cooldown_interval_ms: int = 0,
        repeats_to_cooldown: int = 1,
        cache_flush_bytes: int = 0,
        f_preproc: str = "",
    ) -> Callable[..., BenchmarkResult]:
        """Return a function that times ``func_name`` on ``dev`` and returns a BenchmarkResult.

        One warm-up call, then ``repeat`` rounds of ``number`` calls; ``number`` grows until a
        round takes at least ``min_repeat_ms``.  The device is synchronised around each round.
        """
        feval = _ffi_api.RPCTimeEvaluator(
            self,
            func_name,
            dev.dlpack_device_type(),
            dev.index,
            number,
            repeat,
            min_repeat_ms,
            limit_zero_time_iterations,
            cooldown_interval_ms,
            repeats_to_cooldown,
            cache_flush_bytes,
            f_preproc,
        )

        def evaluator(*args: Any) -> BenchmarkResult:
            blob = bytes(feval(*args))
            return BenchmarkResult(struct.unpack(f"{len(blob) // 8}d", blob))

        return evaluator

    def export_library(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "export_library needs the TVM compiler; tvm-runtime only loads and runs artifacts. "
            "Export with apache-tvm, then load the .so here with tvm.runtime.load_module."
        )


def load_module(path: str | os.PathLike, keep_module_alive: bool | None = None) -> Module:
    """Load an artifact produced by apache-tvm's ``export_library`` (a ``.so``).

    ``keep_module_alive``: by default (None) the library is unloaded, with its constants (the
    model's weights), once nothing references it any more: the module, a function taken from it,
    a VirtualMachine over it.  So a long-running server that reloads models does not accumulate
    them (apache-tvm 0.27, through tvm_ffi.load_module's default, keeps every loaded library for
    the life of the process).  A library whose loading registered global functions (a tvm-ffi
    extension rather than a compiled artifact) is kept, since those functions' code lives in it.
    ``True`` keeps any library for good, as apache-tvm does; ``False`` never does.
    """
    # Absolute, as apache-tvm does: dlopen would search the library path for a bare "model.so".
    path = os.path.abspath(os.fspath(path))
    if path.endswith((".o", ".tar")):
        raise ValueError(
            f"{path}: object files and tar archives must be linked into a shared library first; "
            "export with `export_library('model.so')` (this needs the TVM compiler)."
        )
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such artifact: {path}")
    if keep_module_alive is not None:
        return _open_library(path, keep_module_alive)
    globals_before = _global_function_count()
    mod = _open_library(path, False)
    if _global_function_count() != globals_before:
        _keep_alive_for_process(mod)
    return mod


# What tvm-ffi also loads as a shared library.
_SHARED_LIBRARY_SUFFIXES = (".so", ".dylib", ".dll", ".dso")
_LOAD_LIBRARY: Any = None  # runtime.LoadLibraryModule, bound on first use


def _load_file(path: str, keep_module_alive: bool) -> Module:
    """The core's loader for exported libraries, tvm-ffi's for anything else.

    The core checks the file's embedded module container first (a ValueError naming the file
    and what is wrong, where tvm-ffi's parser would read a corrupted one out of bounds) and
    leaves the model's weights in the file until a VM needs them, where tvm-ffi copies them out
    twice while loading.
    """
    global _LOAD_LIBRARY
    if not path.endswith(_SHARED_LIBRARY_SUFFIXES):
        # tvm-ffi builds the class registered for "ffi.Module": this Module.
        return cast(Module, tvm_ffi.load_module(path, keep_module_alive=keep_module_alive))
    if _LOAD_LIBRARY is None:
        _LOAD_LIBRARY = tvm_ffi.get_global_func("runtime.LoadLibraryModule")
    mod = _LOAD_LIBRARY(path)
    if keep_module_alive:
        _keep_alive_for_process(mod)
    return mod


_LOCKS_GUARD = threading.Lock()
_PATH_LOCKS: dict[str, threading.Lock] = {}  # one per artifact path: other files load in parallel
_LOADED_BEFORE: set[str] = set()
_KEPT_MAPPINGS: set[str] = set()  # paths whose current mapping is used by kept modules only


def _path_lock(path: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(path, threading.Lock())


def _open_library(path: str, keep_module_alive: bool) -> Module:
    """Loads the file, from a private copy when this file is already loaded.

    The dynamic loader maps a file once per process, and compiled host code caches the functions
    it looks up (kernels, `__tvm_set_device`) in statics of that one mapping, owned by whichever
    module filled them.  A second module over the same mapping would call functions freed with
    the first one (a crash once either is released), so it gets a mapping of its own.
    """
    with _path_lock(path):  # two threads loading one file at once must not share a mapping either
        # Asking the loader costs tens of microseconds: only for files this process loaded before.
        # A mapping that only modules kept for the process have used can be shared by another
        # kept one (nothing it caches is ever freed): apache-tvm's reload-forever pattern keeps
        # one mapping instead of a copy per load.
        if (
            path not in _LOADED_BEFORE
            or (keep_module_alive and path in _KEPT_MAPPINGS)
            or not _is_mapped(path)
        ):
            _LOADED_BEFORE.add(path)
            if keep_module_alive:
                _KEPT_MAPPINGS.add(path)
            else:
                _KEPT_MAPPINGS.discard(path)
            return _load_file(path, keep_module_alive)
        with tempfile.TemporaryDirectory(prefix="tvm-module-") as private:
            copy = os.path.join(private, os.path.basename(path))
            shutil.copyfile(path, copy)
            return _load_file(copy, keep_module_alive)


def _is_mapped(path: str) -> bool:
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    _ctypes.dlclose(lib._handle)  # RTLD_NOLOAD took a reference
    return True


def _global_function_count() -> int:
    # The count alone: listing the names would cost more than loading a small artifact.
    return tvm_ffi.get_global_func("ffi.FunctionListGlobalNamesFunctor")()(-1)


def _keep_alive_for_process(mod: Module) -> None:
    tvm_ffi.get_global_func("ffi.ModuleGlobalsAdd")(mod)


def enabled(target: Any) -> bool:
    """Whether a runtime backend for ``target`` (e.g. "cpu", "cuda", "opencl") is loaded."""
    return bool(_ffi_api.RuntimeEnabled(str(target).split()[0]))


def num_threads() -> int:
    """Number of threads of the CPU thread pool (``TVM_NUM_THREADS`` overrides)."""
    return int(_ffi_api.NumThreads())


def system_lib(symbol_prefix: str = "") -> Module:
    """The module of functions statically linked into the process (``--system-lib``)."""
    return cast(Module, tvm_ffi.system_lib(symbol_prefix))


def load_static_library(path: str, func_names: Sequence[str]) -> Module:
    raise NotImplementedError(
        "load_static_library needs the TVM compiler to link the library; use a shared library "
        "exported by apache-tvm instead."
    )
