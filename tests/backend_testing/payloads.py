"""The module payloads inside an exported library: the ``__tvm_ffi__library_bin`` module tree and
the function-table payloads (the ``cuda``, ``opencl``, ``hip`` ... module formats of apache-tvm
0.27), read to take real payloads apart and written to make broken copies; and the check that
garbage payloads are refused with an error."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from backend_testing.elf import find_symbol

LIBRARY_BIN = b"__tvm_ffi__library_bin"

# DLDataType (code, bits, lanes) of kernel parameters, as function tables store them.
HANDLE = (3, 64, 1)  # buffer parameters
INT32 = (0, 32, 1)
INT64 = (0, 64, 1)
UINT32 = (1, 32, 1)
FLOAT32 = (2, 32, 1)
FLOAT64 = (2, 64, 1)

# The launch tags of a kernel on a 3-D grid of 3-D blocks with dynamic shared memory: its launch
# arguments are grid x, y, z, block x, y, z, then the shared memory size.
GRID3_DYN_SHMEM_TAGS = [
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "tirx.use_dyn_shared_memory",
]


class Reader:
    """Little-endian reader of the serializer's primitives (u64-length-prefixed strings)."""

    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def fmt(self, f: str) -> Any:
        (v,) = struct.unpack_from("<" + f, self.data, self.pos)
        self.pos += struct.calcsize(f)
        return v

    def u64(self) -> int:
        return self.fmt("Q")

    def bytes_(self) -> bytes:
        n = self.u64()
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def str_(self) -> str:
        return self.bytes_().decode()


@dataclass
class EmbeddedModule:
    kind: str
    payload: bytes
    offset: int  # file offset of the payload bytes (after their u64 length)


def read_embedded_modules(data: bytes) -> list[EmbeddedModule]:
    """The modules serialized in a library's ``__tvm_ffi__library_bin``, in tree order
    (``_lib``, the host library itself, has no payload and is left out)."""
    start, _ = find_symbol(data, LIBRARY_BIN)
    r = Reader(data, start)
    end = r.u64() + r.pos
    num_modules = r.u64() - 1
    r.pos += 8 * (num_modules + 1)  # indptr
    num_children = r.u64()
    r.pos += 8 * num_children  # child indices
    out = []
    while r.pos < end:
        kind = r.str_()
        if kind == "_lib":
            continue
        n = r.u64()
        out.append(EmbeddedModule(kind, data[r.pos : r.pos + n], r.pos))
        r.pos += n
    return out


def embedded_modules(so_path: str | os.PathLike) -> list[EmbeddedModule]:
    return read_embedded_modules(Path(so_path).read_bytes())


def embedded_module(so_path: str | os.PathLike, kind: str) -> EmbeddedModule:
    """The one module of `kind` in an artifact."""
    (mod,) = [m for m in embedded_modules(so_path) if m.kind == kind]
    return mod


# ------------------------------------------------------------------- function-table payloads


@dataclass
class Kernel:
    name: str
    arg_types: list[tuple[int, int, int]]
    tags: list[str] = field(default_factory=lambda: ["blockIdx.x", "threadIdx.x"])
    extra_tags: list[int] | None = None  # default: 0 per argument


def packed_str(s: bytes) -> bytes:
    """The serializer's encoding of a string: u64 length + bytes."""
    return struct.pack("<Q", len(s)) + s


def write_function_table_payload(kernels: list[Kernel], code: str | bytes, fmt: str) -> bytes:
    """A ``cuda``/``opencl`` module payload as apache-tvm 0.27 writes it:
    ``str fmt; map<str, FunctionInfo> fmap; bytes code``."""
    out = packed_str(fmt.encode()) + struct.pack("<Q", len(kernels))
    for k in kernels:
        out += packed_str(k.name.encode()) + packed_str(k.name.encode())
        out += struct.pack("<Q", len(k.arg_types)) + b"".join(struct.pack("<BBH", *t) for t in k.arg_types)
        out += struct.pack("<Q", len(k.tags)) + b"".join(packed_str(t.encode()) for t in k.tags)
        extra = k.extra_tags if k.extra_tags is not None else [0] * len(k.arg_types)
        out += struct.pack("<Q", len(extra)) + b"".join(struct.pack("<i", t) for t in extra)
    return out + packed_str(code.encode() if isinstance(code, str) else code)


@dataclass
class FunctionTablePayload:
    fmt: str
    kernels: dict[str, Kernel]
    code: bytes
    code_offset: int  # offset of the u64 length that precedes the code


def parse_function_table_payload(payload: bytes) -> FunctionTablePayload:
    """The inverse of write_function_table_payload (``cuda``, ``opencl``, ``hip`` modules)."""
    r = Reader(payload)
    fmt = r.str_()
    kernels = {}
    for _ in range(r.fmt("Q")):
        key = r.str_()
        name = r.str_()
        arg_types = [(r.fmt("B"), r.fmt("B"), r.fmt("H")) for _ in range(r.fmt("Q"))]
        tags = [r.str_() for _ in range(r.fmt("Q"))]
        extra = [r.fmt("i") for _ in range(r.fmt("Q"))]
        kernels[key] = Kernel(name, arg_types, tags, extra)
    code_offset = r.pos
    code = r.bytes_()
    if r.pos != len(payload):
        raise ValueError("trailing bytes after the module's code")
    return FunctionTablePayload(fmt, kernels, code, code_offset)


def assert_garbage_payloads_rejected(
    load_payload: Callable[[bytes], Any], seed: int = 1, count: int = 100, max_size: int = 300
) -> None:
    """Random byte strings given to a module loader: each one a clear error, never a crash."""
    import pytest  # here only: benchmarks/webgpu_bench.py reads payloads in a venv without pytest

    rng = np.random.default_rng(seed)
    for _ in range(count):
        junk = rng.integers(0, 256, size=int(rng.integers(0, max_size)), dtype=np.uint8).tobytes()
        with pytest.raises((ValueError, RuntimeError)):
            load_payload(junk)


# Where a real payload is cut: inside the first length field, just past it, and short of the end.
TRUNCATION_CUTS = (0, 1, 7, 12, 40, 200, -1, -5, -100)


def assert_truncations_rejected(load_payload: Callable[[bytes], Any], payload: bytes, match: str) -> None:
    """A real payload cut at each of TRUNCATION_CUTS: a ValueError matching ``match`` each time."""
    import pytest

    for cut in TRUNCATION_CUTS:
        with pytest.raises(ValueError, match=match):
            load_payload(payload[:cut])


def assert_huge_length_rejected(load_payload: Callable[[bytes], Any], payload: bytes, at: int) -> None:
    """A real payload whose u64 length field at offset ``at`` claims 2**62 bytes: refused, saying
    the length exceeds what remains (no allocation of that size, no read past the end)."""
    import pytest

    huge = bytearray(payload)
    struct.pack_into("<Q", huge, at, 1 << 62)
    with pytest.raises(ValueError, match="exceeds the remaining"):
        load_payload(bytes(huge))


def assert_loaded_add_kernel(mod: Any, kind: str) -> None:
    """A module loaded from the ``add`` artifact's payload: of ``kind``, with add_kernel only."""
    assert mod.kind == kind
    assert mod.implements_function("add_kernel")
    assert not mod.implements_function("nope")


def copy_with_length(library: str | Path, out_dir: Path, at: int, length: Callable[[int], int]) -> str:
    """A copy of an exported library (``out_dir/add_corrupted.so``) whose u64 length field at file
    offset ``at`` is rewritten to ``length(old)``; returns its path."""
    data = bytearray(Path(library).read_bytes())
    (old,) = struct.unpack_from("<Q", data, at)
    struct.pack_into("<Q", data, at, length(old))
    bad = out_dir / "add_corrupted.so"
    bad.write_bytes(bytes(data))
    return str(bad)
