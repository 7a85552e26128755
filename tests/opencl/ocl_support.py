"""Helpers for the OpenCL backend tests: the OpenCL device fixture and a small reader/writer of
the apache-tvm 0.27 artifact formats (``__tvm_ffi__library_bin`` and the ``opencl`` payload),
used to take real payloads apart and to craft broken ones.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

import pytest

OPENCL = 4
LIBRARY_BIN = b"__tvm_ffi__library_bin"
HANDLE = (3, 64, 1)  # DLDataType of buffer parameters
INT32 = (0, 32, 1)
FLOAT32 = (2, 32, 1)


def opencl_device(tvm):
    """tvm.opencl(0), or a skip with the driver's reason (a failure when OpenCL is required)."""
    dev = tvm.opencl(0)
    if not dev.exist:
        reason = tvm.get_global_func("runtime.DeviceDriverStatus")(OPENCL)
        if os.environ.get("TVM_TEST_REQUIRE_OPENCL") == "1":
            pytest.fail(f"TVM_TEST_REQUIRE_OPENCL=1 but no OpenCL device: {reason}")
        pytest.skip(f"no OpenCL device: {reason}")
    return dev


def device_has_fp16(tvm, dev) -> bool:
    prop = tvm.get_global_func("runtime.GetDeviceTargetProperty")
    return bool(prop(dev, "supports_float16"))


# ------------------------------------------------------------------------------------ ELF


def _elf_sections(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """(type, addr, offset, size, link) of every section of an ELF64 little-endian file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        _, sh_type, _, addr, offset, size, link = struct.unpack_from("<IIQQQQI", data, shoff + i * shentsize)
        out.append((sh_type, addr, offset, size, link))
    return out


def find_symbol(data: bytes, name: bytes) -> tuple[int, int]:
    """(file offset, size) of a dynamic symbol's data."""
    sections = _elf_sections(data)
    for sh_type, _, offset, size, link in sections:
        if sh_type != 11:  # SHT_DYNSYM
            continue
        strtab_off = sections[link][2]
        for pos in range(offset, offset + size, 24):
            st_name, _, _, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", data, pos)
            end = data.index(b"\0", strtab_off + st_name)
            if data[strtab_off + st_name : end] == name:
                _, sec_addr, sec_off, _, _ = sections[shndx]
                return sec_off + (value - sec_addr), sym_size
    raise KeyError(name.decode())


def needed_libraries(so_path: str) -> list[str]:
    """DT_NEEDED entries of a shared library."""
    data = open(so_path, "rb").read()
    sections = _elf_sections(data)
    out = []
    for sh_type, _, offset, size, link in sections:
        if sh_type != 6:  # SHT_DYNAMIC
            continue
        strtab_off = sections[link][2]
        for pos in range(offset, offset + size, 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == 1:  # DT_NEEDED
                end = data.index(b"\0", strtab_off + val)
                out.append(data[strtab_off + val : end].decode())
    return out


# ------------------------------------------------------------------------ payload formats


class Reader:
    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def u64(self) -> int:
        (v,) = struct.unpack_from("<Q", self.data, self.pos)
        self.pos += 8
        return v

    def bytes_(self) -> bytes:
        n = self.u64()
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


@dataclass
class EmbeddedModule:
    kind: str
    payload: bytes
    offset: int  # file offset of the payload bytes (after their u64 length)


def embedded_modules(so_path: str) -> list[EmbeddedModule]:
    """The modules serialized in an artifact's ``__tvm_ffi__library_bin``, in tree order."""
    data = open(so_path, "rb").read()
    start, _ = find_symbol(data, LIBRARY_BIN)
    r = Reader(data, start)
    r.u64()  # total size
    num_modules = r.u64() - 1
    r.pos += 8 * (num_modules + 1)  # indptr
    num_children = r.u64()
    r.pos += 8 * num_children  # child indices
    out = []
    for _ in range(num_modules):
        kind = r.bytes_().decode()
        if kind == "_lib":
            continue
        n = r.u64()
        out.append(EmbeddedModule(kind, data[r.pos : r.pos + n], r.pos))
        r.pos += n
    return out


def opencl_payload_of(so_path: str) -> EmbeddedModule:
    (mod,) = [m for m in embedded_modules(so_path) if m.kind == "opencl"]
    return mod


@dataclass
class Kernel:
    name: str
    arg_types: list[tuple[int, int, int]]
    tags: list[str] = field(default_factory=lambda: ["blockIdx.x", "threadIdx.x"])


def _str(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def write_opencl_payload(kernels: list[Kernel], code: str, fmt: str = "cl") -> bytes:
    """An ``opencl`` module payload as apache-tvm 0.27 writes it:
    ``str fmt; map<str, FunctionInfo> fmap; str code``."""
    out = _str(fmt.encode()) + struct.pack("<Q", len(kernels))
    for k in kernels:
        out += _str(k.name.encode()) + _str(k.name.encode())
        out += struct.pack("<Q", len(k.arg_types))
        out += b"".join(struct.pack("<BBH", *t) for t in k.arg_types)
        out += struct.pack("<Q", len(k.tags)) + b"".join(_str(t.encode()) for t in k.tags)
        out += struct.pack("<Q", len(k.arg_types)) + b"\0\0\0\0" * len(k.arg_types)
    return out + _str(code.encode())


def code_offset(payload: bytes) -> int:
    """Offset of the u64 length that precedes the OpenCL source in an ``opencl`` payload."""
    i = payload.index(b"// Function: ")
    return i - 8
