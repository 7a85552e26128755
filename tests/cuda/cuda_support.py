"""Helpers for the CUDA backend tests: device/NVRTC availability (skip with the reason), the
fake CUDA driver, and a reader/writer of apache-tvm 0.27's ``cuda`` module payloads.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CUDA = 2
CUDA_HOST = 3
LIBRARY_BIN = b"__tvm_ffi__library_bin"
HANDLE = (3, 64, 1)  # DLDataType of buffer parameters
INT32 = (0, 32, 1)
INT64 = (0, 64, 1)
UINT32 = (1, 32, 1)
FLOAT32 = (2, 32, 1)
FLOAT64 = (2, 64, 1)
HERE = Path(__file__).resolve().parent
FAKE_DRIVER_SOURCE = HERE / "fake_driver" / "fake_cuda.c"

# Compiled kernels and NVRTC's unpacked headers go to a throwaway cache, never the user's
# ~/.cache (subprocesses inherit it); a test that needs a fresh cache overrides it again.
os.environ.setdefault("TVM_CUDA_CACHE_DIR", tempfile.mkdtemp(prefix="tvm-cuda-test-cache-"))


def cuda_device(tvm: Any, index: int = 0) -> Any:
    """tvm.cuda(index), or a skip with the driver's reason (a failure with TVM_TEST_REQUIRE_CUDA=1)."""
    dev = tvm.cuda(index)
    if not dev.exist:
        reason = tvm.get_global_func("runtime.DeviceDriverStatus")(CUDA) or f"no CUDA device {index}"
        if os.environ.get("TVM_TEST_REQUIRE_CUDA") == "1":
            pytest.fail(f"TVM_TEST_REQUIRE_CUDA=1 but no CUDA device: {reason}")
        pytest.skip(f"no CUDA device: {reason}")
    return dev


def nvrtc_or_skip(driver_major: int = 0) -> dict[str, Any]:
    """The NVRTC the runtime would use, or a skip naming what to install."""
    import tvm.backend.cuda as hook

    try:
        return hook.nvrtc_info(driver_major)
    except RuntimeError as err:
        if os.environ.get("TVM_TEST_REQUIRE_NVRTC") == "1":
            pytest.fail(f"TVM_TEST_REQUIRE_NVRTC=1 but NVRTC is unusable: {err}")
        pytest.skip(f'NVRTC not available (pip install "tvm-runtime-cuda[nvrtc]"): {err}')


# ---------------------------------------------------------------------------- fake driver


def build_fake_driver(out_dir: Path) -> Path:
    """Compile tests/cuda/fake_driver/fake_cuda.c into a shared library (skip without a C compiler)."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the fake CUDA driver")
    out = out_dir / "libcuda_fake.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(FAKE_DRIVER_SOURCE)],
        check=True,
        capture_output=True,
    )
    return out


def fake_driver(path: str | os.PathLike) -> ctypes.CDLL:
    """The fake driver as loaded by the backend (same file, so the same handle and log)."""
    lib = ctypes.CDLL(os.fspath(path))
    lib.fake_cuda_log.restype = ctypes.c_char_p
    lib.fake_cuda_live_allocations.restype = ctypes.c_long
    lib.fake_cuda_expect_params.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return lib


def parse_log(text: str, kind: str) -> list[dict[str, str]]:
    """Log lines of one kind (``launch``, ``alloc``, ...) as ``{key: value}`` dicts."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] != kind:
            continue
        out.append(dict(w.split("=", 1) for w in words[1:] if "=" in w))
    return out


def fnv1a(data: bytes) -> str:
    """The hash the fake driver logs for each loaded image."""
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# ---------------------------------------------------------------------------- ELF / payloads


def _elf_sections(data: bytes) -> list[tuple[int, int, int, int, int, int]]:
    """(name offset, type, addr, offset, size, link) of every section of an ELF64 LE file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        name, sh_type, _, addr, offset, size, link = struct.unpack_from(
            "<IIQQQQI", data, shoff + i * shentsize
        )
        out.append((name, sh_type, addr, offset, size, link))
    return out


def elf_section_names(data: bytes) -> list[str]:
    (shstrndx,) = struct.unpack_from("<H", data, 0x3E)
    sections = _elf_sections(data)
    strtab = sections[shstrndx][3]
    return [data[strtab + s[0] : data.index(b"\0", strtab + s[0])].decode() for s in sections]


def elf_dynamic_needed(path: str | os.PathLike) -> list[str]:
    """DT_NEEDED entries of a shared library."""
    data = Path(path).read_bytes()
    sections = _elf_sections(data)
    out = []
    for _, sh_type, _, offset, size, link in sections:
        if sh_type != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[link][3]
        for pos in range(offset, offset + size, 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == 1:  # DT_NEEDED
                out.append(data[strtab + val : data.index(b"\0", strtab + val)].decode())
    return out


def _library_bin_offset(data: bytes) -> int:
    sections = _elf_sections(data)
    for _, sh_type, _, offset, size, link in sections:
        if sh_type != 11:  # SHT_DYNSYM
            continue
        strtab = sections[link][3]
        for pos in range(offset, offset + size, 24):
            st_name, _, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", data, pos)
            if data[strtab + st_name : data.index(b"\0", strtab + st_name)] == LIBRARY_BIN:
                _, _, sec_addr, sec_off, _, _ = sections[shndx]
                return sec_off + value - sec_addr
    raise KeyError(LIBRARY_BIN.decode())


class Reader:
    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def fmt(self, f: str) -> Any:
        (v,) = struct.unpack_from("<" + f, self.data, self.pos)
        self.pos += struct.calcsize(f)
        return v

    def bytes_(self) -> bytes:
        n = self.fmt("Q")
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


def embedded_modules(so_path: str | os.PathLike) -> list[EmbeddedModule]:
    """The device modules serialized in an artifact's ``__tvm_ffi__library_bin``."""
    data = Path(so_path).read_bytes()
    r = Reader(data, _library_bin_offset(data))
    end = r.fmt("Q") + r.pos
    num_modules = r.fmt("Q") - 1
    r.pos += 8 * (num_modules + 1)  # indptr
    num_children = r.fmt("Q")
    r.pos += 8 * num_children  # child indices
    out = []
    while r.pos < end:
        kind = r.str_()
        if kind == "_lib":
            continue
        n = r.fmt("Q")
        out.append(EmbeddedModule(kind, data[r.pos : r.pos + n], r.pos))
        r.pos += n
    return out


def cuda_payload_of(so_path: str | os.PathLike) -> EmbeddedModule:
    (mod,) = [m for m in embedded_modules(so_path) if m.kind == "cuda"]
    return mod


@dataclass
class Kernel:
    name: str
    arg_types: list[tuple[int, int, int]]
    tags: list[str] = field(default_factory=lambda: ["blockIdx.x", "threadIdx.x"])
    extra_tags: list[int] | None = None  # default: 0 per argument


@dataclass
class CudaPayload:
    fmt: str
    kernels: dict[str, Kernel]
    code: bytes
    code_offset: int  # offset of the u64 length that precedes the code


def parse_cuda_payload(payload: bytes) -> CudaPayload:
    """``str fmt; map<str, FunctionInfo> fmap; bytes code`` (apache-tvm 0.27)."""
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
        raise ValueError("trailing bytes in cuda payload")
    return CudaPayload(fmt, kernels, code, code_offset)


def _str(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def write_cuda_payload(kernels: list[Kernel], code: str | bytes, fmt: str = "cuda") -> bytes:
    """A ``cuda`` module payload as apache-tvm 0.27 writes it."""
    out = _str(fmt.encode()) + struct.pack("<Q", len(kernels))
    for k in kernels:
        out += _str(k.name.encode()) + _str(k.name.encode())
        out += struct.pack("<Q", len(k.arg_types)) + b"".join(struct.pack("<BBH", *t) for t in k.arg_types)
        out += struct.pack("<Q", len(k.tags)) + b"".join(_str(t.encode()) for t in k.tags)
        extra = k.extra_tags if k.extra_tags is not None else [0] * len(k.arg_types)
        out += struct.pack("<Q", len(extra)) + b"".join(struct.pack("<i", t) for t in extra)
    return out + _str(code.encode() if isinstance(code, str) else code)


def load_payload(payload: bytes) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("ffi.Module.load_from_bytes.cuda")(payload)


def dtype_str(t: tuple[int, int, int]) -> str:
    """DLDataType -> the string tvm-ffi prints for it."""
    code, bits, lanes = t
    base = {0: "int", 1: "uint", 2: "float", 3: "handle", 4: "bfloat", 6: "bool"}[code]
    name = "handle" if code == 3 and bits == 64 else f"{base}{bits}"
    return name if lanes == 1 else f"{name}x{lanes}"


def fake_ptx(kernel_names: list[str]) -> str:
    """Enough PTX text for the fake driver: one ``.entry`` per kernel (never run)."""
    entries = "".join(f".visible .entry {n}(\n)\n{{\n  ret;\n}}\n" for n in kernel_names)
    return f"//\n.version 8.0\n.target sm_80\n.address_size 64\n{entries}"
