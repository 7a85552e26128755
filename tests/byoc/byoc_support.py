"""Helpers for the external-codegen tests: 0.27's serialized forms of const_loader and JSON
runtime modules (written here to make bad and single-operator inputs), and the fixtures of
tests/artifacts/byoc (made by tests/artifacts/generate_byoc.py)."""

from __future__ import annotations

import json
import math
import os
import struct
from typing import Any

import numpy as np
import pytest

from conftest import ARTIFACTS

BYOC = ARTIFACTS / "byoc"


def fixture_set(name: str) -> tuple[Any, dict[str, Any], Any]:
    """(directory, manifest, expected.npz) of tests/artifacts/<name>: ``byoc`` (hand-assembled
    payloads, generate_byoc.py) or ``byoc_compiled`` (apache-tvm's own codegens,
    generate_byoc_compiled.py)."""
    directory = ARTIFACTS / name
    manifest = json.loads((directory / "manifest.json").read_text())
    return directory, manifest, np.load(directory / "expected.npz")


_, MANIFEST, EXPECTED = fixture_set("byoc")
TENSOR_MAGIC = 0xDD5E40F096B4A13F
DTYPE_CODES = {"float32": (2, 32), "int32": (0, 32), "float64": (2, 64)}


def put_str(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def put_strs(items: list[str]) -> bytes:
    return struct.pack("<Q", len(items)) + b"".join(put_str(s) for s in items)


def tensor_record(a: np.ndarray) -> bytes:
    code, bits = DTYPE_CODES[str(a.dtype)]
    head = struct.pack("<QQiii", TENSOR_MAGIC, 0, 1, 0, a.ndim) + struct.pack("<BBH", code, bits, 1)
    shape = b"".join(struct.pack("<q", d) for d in a.shape)
    data = np.ascontiguousarray(a).tobytes()
    return head + shape + struct.pack("<q", len(data)) + data


def const_loader_payload(consts: dict[str, np.ndarray], symbols: dict[str, list[str]]) -> bytes:
    """0.27's ConstLoaderModule::SaveToBytes."""
    out = put_strs(list(consts)) + struct.pack("<Q", len(consts))
    out += b"".join(tensor_record(v) for v in consts.values())
    out += put_strs(list(symbols)) + struct.pack("<Q", len(symbols))
    return out + b"".join(put_strs(v) for v in symbols.values())


def json_payload(symbol: str, graph: dict | str, const_names: list[str]) -> bytes:
    """0.27's JSONRuntimeBase::SaveToBytes."""
    text = graph if isinstance(graph, str) else json.dumps(graph, separators=(",", ":"))
    return put_str(symbol) + put_str(text) + put_strs(const_names)


class Graph:
    """A graph in the layout of 0.27's Relax JSON serializer (same as the generator's)."""

    def __init__(self) -> None:
        self.nodes: list[dict] = []
        self.consts: list[str] = []

    def _add(self, node: dict, shape, dtype: str) -> list[int]:
        node.setdefault("attrs", {}).update({"shape": [list(shape)], "dtype": [dtype]})
        self.nodes.append(node)
        return [len(self.nodes) - 1, 0, 0]

    def input(self, name: str, shape, dtype: str = "float32") -> list[int]:
        return self._add({"op": "input", "name": name}, shape, dtype)

    def const(self, name: str, shape, dtype: str = "float32") -> list[int]:
        self.consts.append(name)
        return self._add({"op": "const", "name": name}, shape, dtype)

    def kernel(self, name: str, inputs, shape, attrs=None, dtype: str = "float32") -> list[int]:
        node = {"op": "kernel", "name": name, "inputs": inputs, "attrs": dict(attrs or {})}
        ref = self._add(node, shape, dtype)
        node["attrs"].update({"num_inputs": len(inputs), "num_outputs": 1})
        return ref

    def to_json(self, heads) -> dict:
        return {
            "nodes": self.nodes,
            "arg_nodes": [i for i, n in enumerate(self.nodes) if "inputs" not in n],
            "heads": heads,
            "node_row_ptr": list(range(len(self.nodes) + 1)),
        }


def load_from_bytes(tvm: Any, kind: str, payload: bytes) -> Any:
    return tvm.get_global_func(f"ffi.Module.load_from_bytes.{kind}")(payload)


def with_constants(tvm: Any, symbol: str, graph: Graph, heads, consts: dict[str, np.ndarray]) -> Any:
    """const_loader -> dnnl_json, as an artifact's tree has them: the symbol looked up through
    the const_loader, which binds the constants first."""
    loader = load_from_bytes(tvm, "const_loader", const_loader_payload(consts, {symbol: graph.consts}))
    dnnl = load_from_bytes(tvm, "dnnl_json", json_payload(symbol, graph.to_json(heads), graph.consts))
    loader.import_module(dnnl)
    return loader


def onednn_or_skip(tvm: Any) -> None:
    """oneDNN is a system library: CI installs it (ci/install-system-deps.sh), so there the
    budget of this skip is 0; TVM_TEST_REQUIRE_DNNL=1 turns the skip into a failure."""
    status = tvm.backend.dnnl.library_status()
    if status:
        if os.environ.get("TVM_TEST_REQUIRE_DNNL") == "1":
            pytest.fail(status)
        pytest.skip(status)


# ---- numpy references -------------------------------------------------------------------------


def conv2d_nchw(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                hi, wj = i * dilation[0], j * dilation[1]
                win = xs[:, :, hi : hi + stride[0] * oh : stride[0], wj : wj + stride[1] * ow : stride[1]]
                out[:, g * og : (g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", win, w[g * og : (g + 1) * og, :, i, j]
                )
    return out


def gelu(v):
    return 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))
