"""Writer and reader of apache-tvm 0.27's ``vulkan`` device-module payload, plus the SPIR-V edits
the fixtures need.  Standard library only: used by ``generate.py`` (fixture time) and by the
tests (to craft broken payloads).

Payload (``ffi.Module.load_from_bytes.vulkan``)::

    str fmt                                  "vulkan"
    map<str, FunctionInfo> fmap              u64 n; n x (str key; FunctionInfo)
    map<str, Bytes> smap                     u64 n; n x (str key; u64 len; SPIRVShader)
    FunctionInfo = str name; vec<DLDataType> arg_types; vec<str> launch_param_tags;
                   vec<i32> arg_extra_tags
    SPIRVShader  = u32 flag (bit 0: scalars in a uniform buffer); vec<u32> spirv_words

Strings and vectors are u64-length-prefixed, everything little-endian.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

HANDLE = (3, 64, 1)  # DLDataType (code, bits, lanes) of buffer parameters
INT32 = (0, 32, 1)
INT64 = (0, 64, 1)
UINT32 = (1, 32, 1)
FLOAT32 = (2, 32, 1)
FLOAT64 = (2, 64, 1)
DTYPES = {
    "handle": HANDLE,
    "int32": INT32,
    "int64": INT64,
    "uint32": UINT32,
    "float32": FLOAT32,
    "float64": FLOAT64,
}

FLAG_USE_UBO = 1
SPIRV_MAGIC = 0x07230203
OP_ENTRY_POINT = 15


@dataclass
class Kernel:
    name: str
    arg_types: list[tuple[int, int, int]]
    words: list[int]
    tags: list[str] = field(default_factory=lambda: ["blockIdx.x", "threadIdx.x"])
    flag: int = 0


def _str(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def shader_bytes(flag: int, words: list[int]) -> bytes:
    """One smap value: a serialized SPIRVShader."""
    return struct.pack("<IQ", flag, len(words)) + struct.pack(f"<{len(words)}I", *words)


def function_info(k: Kernel) -> bytes:
    out = _str(k.name.encode())
    out += struct.pack("<Q", len(k.arg_types)) + b"".join(struct.pack("<BBH", *t) for t in k.arg_types)
    out += struct.pack("<Q", len(k.tags)) + b"".join(_str(t.encode()) for t in k.tags)
    out += struct.pack("<Q", len(k.arg_types)) + b"\0\0\0\0" * len(k.arg_types)
    return out


def write_payload(
    kernels: list[Kernel], fmt: str = "vulkan", shaders: dict[str, bytes] | None = None
) -> bytes:
    """The payload of a module holding ``kernels``; ``shaders`` replaces the whole smap."""
    out = _str(fmt.encode()) + struct.pack("<Q", len(kernels))
    for k in kernels:
        out += _str(k.name.encode()) + function_info(k)
    smap = {k.name: shader_bytes(k.flag, k.words) for k in kernels} if shaders is None else shaders
    out += struct.pack("<Q", len(smap))
    for name, value in smap.items():
        out += _str(name.encode()) + _str(value)
    return out


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def u64(self) -> int:
        return self.take("<Q")[0]

    def bytes_(self) -> bytes:
        n = self.u64()
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def read_payload(data: bytes) -> tuple[str, list[Kernel]]:
    """(fmt, kernels) of a payload written by apache-tvm 0.27 or by :func:`write_payload`."""
    r = _Reader(data)
    fmt = r.bytes_().decode()
    infos = {}
    for _ in range(r.u64()):
        key = r.bytes_().decode()
        name = r.bytes_().decode()
        arg_types = [r.take("<BBH") for _ in range(r.u64())]
        tags = [r.bytes_().decode() for _ in range(r.u64())]
        num_extra_tags = r.u64()
        r.pos += 4 * num_extra_tags
        infos[key] = (name, arg_types, tags)
    kernels = []
    for _ in range(r.u64()):
        key = r.bytes_().decode()
        s = _Reader(r.bytes_())
        flag, n = s.take("<IQ")
        words = list(s.take(f"<{n}I"))
        name, arg_types, tags = infos[key]
        kernels.append(Kernel(name, arg_types, words, tags, flag))
    assert r.pos == len(data), "trailing bytes"
    return fmt, kernels


def spirv_words(blob: bytes) -> list[int]:
    if len(blob) % 4 or struct.unpack_from("<I", blob)[0] != SPIRV_MAGIC:
        raise ValueError("not a little-endian SPIR-V module")
    return list(struct.unpack(f"<{len(blob) // 4}I", blob))


def _literal(s: str) -> list[int]:
    raw = s.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def entry_points(words: list[int]) -> list[str]:
    names, i = [], 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if opcode == OP_ENTRY_POINT:
            raw = struct.pack(f"<{count - 3}I", *words[i + 3 : i + count])
            names.append(raw.split(b"\0", 1)[0].decode())
        i += max(count, 1)
    return names


def rename_entry_point(words: list[int], old: str, new: str) -> list[int]:
    """``words`` with the OpEntryPoint called ``old`` renamed to ``new`` (apache-tvm names every
    shader's entry point after its kernel; glslc always emits ``main``)."""
    out, i, found = list(words[:5]), 5, False
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        inst = words[i : i + count]
        if opcode == OP_ENTRY_POINT:
            raw = struct.pack(f"<{count - 3}I", *inst[3:])
            name, rest = raw.split(b"\0", 1)
            if name.decode() == old:
                found = True
                interface = list(inst[3 + len(_literal(old)) :])
                body = inst[1:3] + _literal(new) + interface
                inst = [((len(body) + 1) << 16) | OP_ENTRY_POINT] + body
        out += inst
        i += count
    if not found:
        raise ValueError(f"no entry point {old!r}")
    return out


def library_bin(payload: bytes) -> bytes:
    """``__tvm_ffi__library_bin`` of a host library importing one ``vulkan`` module:
    u64 nbytes; vec<u64> indptr; vec<u64> child_indices; "_lib"; "vulkan" + payload."""
    body = struct.pack("<Q3Q", 3, 0, 1, 1) + struct.pack("<QQ", 1, 1)
    body += _str(b"_lib") + _str(b"vulkan") + _str(payload)
    return struct.pack("<Q", len(body)) + body
