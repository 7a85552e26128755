"""Helpers for the tvm-runtime-extra tests: the contrib artifact manifest, numpy references with
0.27's stable order, and a fresh-interpreter runner for "wheel not loaded" checks."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from conftest import ARTIFACTS

CONTRIB = ARTIFACTS / "contrib"
MANIFEST: dict[str, Any] = json.loads((CONTRIB / "manifest.json").read_text())

SORT = "tvm.contrib.sort.sort"
ARGSORT = "tvm.contrib.sort.argsort"
ARGSORT_NMS = "tvm.contrib.sort.argsort_nms"
TOPK = "tvm.contrib.sort.topk"


def model_cases(target: str) -> list[dict[str, Any]]:
    return [c for c in MANIFEST["cases"] if c["target"] == target]


def bench(name: str) -> dict[str, Any]:
    (spec,) = [b for b in MANIFEST["benchmarks"] if b["name"] == name]
    return spec


def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """0.27's order: ascending or descending, equal keys by ascending index.

    Keys are negated in a wider type for descending, which keeps ties in index order (reversing
    an ascending order would not)."""
    keys = x.astype("float64") if x.dtype.kind == "f" else x.astype("int64")
    if x.dtype == np.uint64:
        keys = x.astype("float64")  # tests use small uint64 values: exact
    return np.argsort(-keys if descending else keys, axis=axis, kind="stable")


def sorted_along(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    return np.take_along_axis(x, stable_order(x, axis, descending), axis=axis)


def topk_reference(x: np.ndarray, k: int, axis: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    n = x.shape[axis]
    k = n if k < 1 else min(k, n)
    order = np.take(stable_order(x, axis, descending=largest), np.arange(k), axis=axis)
    return np.take_along_axis(x, order, axis=axis), order


def with_ties(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, levels: int = 8) -> np.ndarray:
    """Values from a small set (many equal keys); floats include both signed zeros."""
    if np.dtype(dtype).kind == "f":
        v = rng.integers(-levels, levels, size=shape).astype("float64") / 2.0
        zeros = v == 0
        v[zeros] = np.where(rng.random(size=int(zeros.sum())) < 0.5, -0.0, 0.0)
        return v.astype(dtype)
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, 2 * levels, size=shape).astype(dtype)
    return rng.integers(-levels, levels, size=shape).astype(dtype)
