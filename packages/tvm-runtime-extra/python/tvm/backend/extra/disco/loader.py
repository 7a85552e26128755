"""``runtime.disco.ShardLoader`` and its functions: the weight loading of tensor-parallel models,
as apache-tvm 0.27 defines it, reading the tensor cache its tooling writes
(``tvm.contrib.tvmjs.dump_tensor_cache``, MLC-LLM's convert_weight).

    loader = ShardLoader(path_to_metadata, metadata_json, shard_info_json, module_or_None)
    ShardLoaderLoad(loader, Shape([i]))        record i: scattered or broadcast from worker 0
    ShardLoaderLoadAll(loader)                 param_0, param_1, ... in that order
    ShardLoaderLoadPresharded(loader, Shape([i])), ShardLoaderLoadAllPresharded(loader)
                                               each worker reads its own param_<i>_shard-<w>-of-<n>
    ShardLoaderLoadParamOnWorker0(loader, i)   param_<i> on worker 0, an empty tensor elsewhere

``shard_info`` maps a parameter name to the functions that shard it on worker 0:
``{"name": [[func, [[out shape], out dtype], extra int args...], ...]}``; the last function's
output has the number of workers as its first dimension, and slice i goes to worker i.  The
functions come from ``module`` (its ``get_shard_info`` supplies shard_info when it is empty) or
from the global registry.  These functions run on the workers, called through a session.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import tvm_ffi

from ._wire import TensorValue

_PRESHARDED = re.compile(r"_shard-(\d+)-of-(\d+)$")


@dataclass
class _Record:
    name: str
    shape: tuple[int, ...]
    dtype: str
    format: str
    nbytes: int
    byte_offset: int
    path: str
    shard_funcs: list[tuple[str, tuple[int, ...], str, list[int]]] = field(default_factory=list)


def _global(name: str) -> Any:
    return tvm_ffi.get_global_func(name)


def _module_function(module: Any, name: str) -> Any:
    """`name` from `module` or its imports (the model library of a VM), or None."""
    if module is None:
        return None
    try:
        return module.get_function(name, query_imports=True)
    except AttributeError:
        return None


def _worker() -> tuple[int, int, Any]:
    """(worker id, number of workers, default device) of the calling Disco worker."""
    return (
        int(_global("runtime.disco.worker_rank")()),
        int(_global("runtime.disco.world_size")()),
        _global("runtime.disco.device")(),
    )


class ShardLoader:
    def __init__(self, path_to_metadata: str, metadata: str, shard_info: str, module: Any) -> None:
        path = os.fspath(path_to_metadata)
        self.directory = path if os.path.isdir(path) else os.path.dirname(path) or "."
        if not shard_info:
            get = _module_function(module, "get_shard_info")
            if get is not None:
                shard_info = str(get())
        try:
            index = json.loads(metadata)
            shards = json.loads(shard_info) if shard_info else {}
        except json.JSONDecodeError as err:
            raise ValueError(f"ShardLoader: the metadata or shard info is not valid JSON: {err}") from None
        self.records: list[_Record] = []
        self.funcs: dict[str, Any] = {}
        for shard in index.get("records", []):
            file = os.path.join(self.directory, shard["dataPath"])
            for rec in shard["records"]:
                r = _Record(
                    rec["name"],
                    tuple(int(d) for d in rec["shape"]),
                    rec["dtype"],
                    rec.get("format", "raw"),
                    int(rec["nbytes"]),
                    int(rec["byteOffset"]),
                    file,
                )
                for entry in shards.get(r.name, []):
                    name, (shape, dtype), *params = entry
                    r.shard_funcs.append(
                        (name, tuple(int(d) for d in shape), dtype, [int(p) for p in params])
                    )
                    self.funcs.setdefault(name, self._shard_function(name, module))
                self.records.append(r)
        self.by_name = {r.name: i for i, r in enumerate(self.records)}

    @staticmethod
    def _shard_function(name: str, module: Any) -> Any:
        func = _module_function(module, name) or tvm_ffi.get_global_func(name, allow_missing=True)
        if func is None:
            raise ValueError(
                f"ShardLoader: undefined shard function {name!r} (neither in the module nor global)"
            )
        return func

    # ---------------------------------------------------------------------- reading

    def _read(self, index: int, device: Any) -> Any:
        """Record `index` as a new tensor on `device`."""
        import tvm

        from . import _values

        r = self.records[index]
        with open(r.path, "rb") as f:
            raw = os.pread(f.fileno(), r.nbytes, r.byte_offset)
        if len(raw) != r.nbytes:
            raise ValueError(
                f"ShardLoader: {r.path} ends before record {r.name!r} (bytes {r.byte_offset}.."
                f"{r.byte_offset + r.nbytes}); the tensor cache is incomplete"
            )
        if r.format == "f32-to-bf16" and r.dtype == "float32":
            raw = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).tobytes()
        elif r.format not in ("raw", "f32-to-bf16"):
            raise ValueError(f"ShardLoader: record {r.name!r} has unsupported format {r.format!r}")
        out = tvm.runtime.empty(r.shape, r.dtype, device)
        _values.copy_into(out, TensorValue(r.dtype, r.shape, raw))
        return out

    def _apply_shard_funcs(self, r: _Record, weight: Any) -> Any:
        import tvm

        for name, shape, dtype, params in r.shard_funcs:
            out = tvm.runtime.empty(shape, dtype, weight.device)
            self.funcs[name](weight, *params, out)
            weight = out
        return weight

    # ------------------------------------------------------------------------ loading

    def load(self, index: int) -> Any:
        """Record `index`: sharded (scatter from worker 0) or whole (broadcast from worker 0)."""
        import tvm

        worker_id, num_workers, device = _worker()
        r = self.records[index]
        if r.shard_funcs:
            _, shape, dtype, _ = r.shard_funcs[-1]
            if not shape or shape[0] != num_workers:
                raise ValueError(
                    f"ShardLoader: the sharded shape of {r.name!r} is {shape}, whose first dimension "
                    f"must be the number of workers ({num_workers})"
                )
            recv = tvm.runtime.empty(shape[1:], dtype, device)
            send = self._apply_shard_funcs(r, self._read(index, device)) if worker_id == 0 else None
            _global("runtime.disco.scatter_from_worker0")(send, False, recv)
            return recv
        w = self._read(index, device) if worker_id == 0 else tvm.runtime.empty(r.shape, r.dtype, device)
        _global("runtime.disco.broadcast_from_worker0")(w, False, w)
        return w

    def _index_of(self, name: str) -> int:
        if name not in self.by_name:
            raise ValueError(f"ShardLoader: parameter {name!r} is not in the tensor cache")
        return self.by_name[name]

    def load_all(self) -> list[Any]:
        return [self.load(self._index_of(f"param_{i}")) for i in range(len(self.records))]

    def load_presharded(self, index: int) -> Any:
        worker_id, num_workers, device = _worker()
        per_worker = len(self.records) // num_workers
        position = worker_id * per_worker + index
        if index < 0 or position >= len(self.records):
            raise ValueError(
                f"ShardLoader: parameter {index} of worker {worker_id} is out of range "
                f"({len(self.records)} records for {num_workers} workers)"
            )
        self._check_presharded(self.records[position], worker_id, num_workers)
        return self._read(position, device)

    def load_all_presharded(self) -> list[Any]:
        worker_id, num_workers, device = _worker()
        out = []
        for i in range(len(self.records) // num_workers):
            name = f"param_{i}_shard-{worker_id + 1}-of-{num_workers}"
            out.append(self._read(self._index_of(name), device))
        return out

    def load_param_on_worker0(self, index: int) -> Any:
        import tvm

        worker_id, _, device = _worker()
        position = self._index_of(f"param_{index}")
        if worker_id == 0:
            return self._read(position, device)
        r = self.records[position]
        return tvm.runtime.empty(r.shape, r.dtype, device)

    @staticmethod
    def _check_presharded(r: _Record, worker_id: int, num_workers: int) -> None:
        m = _PRESHARDED.search(r.name)
        if m is None:
            raise ValueError(f"ShardLoader: {r.name!r} is not a presharded parameter (name_shard-K-of-N)")
        k, n = int(m.group(1)), int(m.group(2))
        if n != num_workers or k - 1 != worker_id:
            raise ValueError(
                f"ShardLoader: {r.name!r} is shard {k} of {n}, but worker {worker_id} of {num_workers} "
                "loads it (the session's worker count must match the number of shards)"
            )


def _index(shape_or_int: Any) -> int:
    return (
        int(shape_or_int[0]) if isinstance(shape_or_int, (tuple, list, tvm_ffi.Shape)) else int(shape_or_int)
    )


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "runtime.disco.ShardLoader": ShardLoader,
    "runtime.disco.ShardLoaderLoad": lambda loader, i: loader.load(_index(i)),
    "runtime.disco.ShardLoaderLoadAll": lambda loader: loader.load_all(),
    "runtime.disco.ShardLoaderLoadPresharded": lambda loader, i: loader.load_presharded(_index(i)),
    "runtime.disco.ShardLoaderLoadAllPresharded": lambda loader: loader.load_all_presharded(),
    "runtime.disco.ShardLoaderLoadParamOnWorker0": lambda loader, i: loader.load_param_on_worker0(_index(i)),
}
