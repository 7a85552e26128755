"""Helpers for the WebGPU backend tests: the device fixture, the fixture manifest (written by
tests/artifacts/generate_webgpu.py with apache-tvm 0.27) and crafting `webgpu` module payloads.

The manifest's paths are relative to tests/artifacts, like the main manifest's, so the shared
runners (conftest.run_kernel_call, backend_testing.runners.check_relax_case) take its cases as they are.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import tvm_ffi
from backend_testing.devices import device_or_skip
from backend_testing.payloads import Reader, embedded_module, packed_str

from conftest import ARTIFACTS

WEBGPU = 15
WGPU_ARTIFACTS = ARTIFACTS / "webgpu"
MANIFEST = json.loads((WGPU_ARTIFACTS / "manifest.json").read_text())
LOADER = "ffi.Module.load_from_bytes.webgpu"


def webgpu_device(tvm):
    """tvm.webgpu(0), or a skip with the driver's reason (a failure where WebGPU is required)."""
    return device_or_skip(tvm, tvm.webgpu(0), WEBGPU, "WebGPU")


def wgpu_cases(kind: str = "kernel") -> list[dict]:
    return [c for c in MANIFEST["cases"] if c["kind_of_case"] == kind]


def wgpu_case(name: str) -> dict:
    (c,) = [c for c in MANIFEST["cases"] if c["name"] == name]
    return c


def artifact(name: str) -> str:
    return str(ARTIFACTS / wgpu_case(name)["file"])


@dataclass
class WgslKernel:
    """One entry of a `webgpu` payload: its FunctionInfo and WGSL source."""

    name: str
    arg_types: list[tuple[int, int, int]]
    tags: list[str]
    wgsl: str


def read_payload(payload: bytes) -> list[WgslKernel]:
    """Parse a 0.27 `webgpu` payload: ``map<str, FunctionInfo> fmap; map<str, bytes> smap``."""
    r = Reader(payload)
    infos = {}
    for _ in range(r.u64()):
        key = r.str_()
        name = r.str_()
        arg_types = [(r.fmt("B"), r.fmt("B"), r.fmt("H")) for _ in range(r.u64())]
        tags = [r.str_() for _ in range(r.u64())]
        assert r.u64() == 0  # arg_extra_tags: empty for WebGPU
        infos[key] = (name, arg_types, tags)
    sources = {}
    for _ in range(r.u64()):
        key = r.str_()
        sources[key] = r.str_()
    assert r.pos == len(payload), "trailing bytes"
    return [WgslKernel(*infos[k], sources[k]) for k in sorted(infos)]


def _raw(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


def write_payload(kernels: list[WgslKernel]) -> bytes:
    """The payload of ``kernels``; names, tags and WGSL may be bytes (e.g. not UTF-8)."""
    out = struct.pack("<Q", len(kernels))
    for k in kernels:
        out += packed_str(_raw(k.name)) + packed_str(_raw(k.name))
        out += struct.pack("<Q", len(k.arg_types)) + b"".join(struct.pack("<BBH", *t) for t in k.arg_types)
        out += struct.pack("<Q", len(k.tags)) + b"".join(packed_str(_raw(t)) for t in k.tags)
        out += struct.pack("<Q", 0)
    out += struct.pack("<Q", len(kernels))
    for k in kernels:
        out += packed_str(_raw(k.name)) + packed_str(_raw(k.wgsl))
    return out


def kernels_of(name: str) -> list[WgslKernel]:
    return read_payload(embedded_module(artifact(name), "webgpu").payload)


def load_payload(payload: bytes):
    """The module tvm-ffi's library loader would import for this payload."""
    return tvm_ffi.get_global_func(LOADER)(payload)
