"""``tvm.runtime.Module``, ``load_module`` and ``time_evaluator`` (apache-tvm 0.27 API)."""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from typing import Any, Callable

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


def load_module(path: str | os.PathLike) -> Module:
    """Load an artifact produced by apache-tvm's ``export_library`` (a ``.so``)."""
    # Absolute, as apache-tvm does: dlopen would search the library path for a bare "model.so".
    path = os.path.abspath(os.fspath(path))
    if path.endswith((".o", ".tar")):
        raise ValueError(
            f"{path}: object files and tar archives must be linked into a shared library first; "
            "export with `export_library('model.so')` (this needs the TVM compiler)."
        )
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such artifact: {path}")
    return tvm_ffi.load_module(path)


def enabled(target: Any) -> bool:
    """Whether a runtime backend for ``target`` (e.g. "cpu", "cuda", "opencl") is loaded."""
    return bool(_ffi_api.RuntimeEnabled(str(target).split()[0]))


def num_threads() -> int:
    """Number of threads of the CPU thread pool (``TVM_NUM_THREADS`` overrides)."""
    return int(_ffi_api.NumThreads())


def system_lib(symbol_prefix: str = "") -> Module:
    """The module of functions statically linked into the process (``--system-lib``)."""
    return tvm_ffi.system_lib(symbol_prefix)


def load_static_library(path: str, func_names: Sequence[str]) -> Module:
    raise NotImplementedError(
        "load_static_library needs the TVM compiler to link the library; use a shared library "
        "exported by apache-tvm instead."
    )
