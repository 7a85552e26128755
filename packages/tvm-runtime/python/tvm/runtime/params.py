"""Parameter dictionaries in apache-tvm's binary format (``runtime.SaveParams``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _ffi_api
from ._tensor import Tensor, tensor


def _to_tensors(params: Mapping[str, Any]) -> dict[str, Tensor]:
    out = {}
    for name, value in params.items():
        out[name] = value if isinstance(value, Tensor) else tensor(np.asarray(value))
    return out


def save_param_dict(params: Mapping[str, Any]) -> bytes:
    """Serialize ``{name: Tensor or numpy array}`` to bytes."""
    return bytes(_ffi_api.SaveParams(_to_tensors(params)))


def save_param_dict_to_file(params: Mapping[str, Any], path: str | os.PathLike) -> None:
    _ffi_api.SaveParamsToFile(_to_tensors(params), os.fspath(path))


def load_param_dict(param_bytes: bytes | bytearray) -> dict[str, Tensor]:
    """Deserialize bytes written by ``save_param_dict`` (ours or apache-tvm's)."""
    if isinstance(param_bytes, (bytearray, memoryview)):
        param_bytes = bytes(param_bytes)
    return dict(_ffi_api.LoadParams(param_bytes))


def load_param_dict_from_file(path: str | os.PathLike) -> dict[str, Tensor]:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such params file: {path}")
    return dict(_ffi_api.LoadParamsFromFile(path))
