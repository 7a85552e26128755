"""``tvm.contrib.tvmjs.load_tensor_cache``: read a tensor (weight) cache into tensors on a device.

A tensor cache is what apache-tvm's ``tvmjs.dump_tensor_cache`` (and MLC-LLM's weight
conversion) writes: ``tensor-cache.json`` plus raw shard files.  This reads it the way apache-tvm
0.27's function does: every record becomes a tensor of its dtype and shape on ``device``, a
``float32`` record stored narrowed (``"format": "f32-to-bf16"``) is widened back, and the result
is ``(dict name -> Tensor, the file's "metadata")``.  Unlike ``vm.builtin.tensor_cache.load`` it
leaves the runtime's process-wide cache alone.  Writing caches is part of apache-tvm's tooling.
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any

import numpy as np
import tvm_ffi

from ..runtime import Device, Tensor, _ffi_api, empty

__all__ = ["load_tensor_cache"]


def _fill(tensor: Tensor, data: bytes, record: dict[str, Any]) -> None:
    """Copy a record's bytes into its tensor: as they are (any dtype, bfloat16 and float8
    included, without ml_dtypes), or widened from bfloat16 for a narrowed float32 record."""
    if record["format"] == "f32-to-bf16" and record["dtype"] == "float32":
        # bfloat16 is the upper half of a float32: shift the stored bits back into place.
        widened = (np.frombuffer(data, dtype="<u2").astype("<u4") << 16).view("<f4")
        tensor.copyfrom(widened.reshape(record["shape"]))
        return
    dtype = tvm_ffi.dtype(record["dtype"])
    count = int(np.prod(record["shape"], dtype=np.int64))
    nbytes = (count * dtype.bits * dtype.lanes + 7) // 8
    if len(data) != nbytes:
        raise ValueError(
            f"record {record['name']!r} has {len(data)} bytes, a {record['dtype']}{record['shape']} "
            f"tensor needs {nbytes}"
        )
    if nbytes:
        raw = np.frombuffer(data, dtype=np.uint8)
        _ffi_api.TVMTensorCopyFromBytes(tensor, raw.ctypes.data_as(ctypes.c_void_p), nbytes)


def load_tensor_cache(cachepath: str, device: Device) -> tuple[dict[str, Tensor], Any]:
    """Load every record of the cache at ``cachepath`` (a directory holding
    ``tensor-cache.json``, or that file itself) onto ``device``."""
    path = str(cachepath)
    if not path.endswith(".json"):
        path = os.path.join(path, "tensor-cache.json")
    with open(path, encoding="utf-8") as f:
        index = json.load(f)
    directory = os.path.dirname(path)
    tensors: dict[str, Tensor] = {}
    for shard in index["records"]:
        shard_path = os.path.join(directory, shard["dataPath"])
        with open(shard_path, "rb") as f:
            blob = f.read()
        if shard.get("format") != "raw-shard":
            raise ValueError(
                f"{shard_path}: unknown shard format {shard.get('format')!r} (expected raw-shard)"
            )
        if shard["nbytes"] != len(blob):
            raise ValueError(f"{shard_path} has {len(blob)} bytes, tensor-cache.json says {shard['nbytes']}")
        for record in shard["records"]:
            start, nbytes = record["byteOffset"], record["nbytes"]
            if start < 0 or start + nbytes > len(blob):
                raise ValueError(
                    f"record {record['name']!r} spans bytes [{start}, {start + nbytes}) of {shard_path}, "
                    f"which has {len(blob)}"
                )
            tensor = empty(record["shape"], record["dtype"], device)
            _fill(tensor, blob[start : start + nbytes], record)
            tensors[record["name"]] = tensor
    return tensors, index["metadata"]
