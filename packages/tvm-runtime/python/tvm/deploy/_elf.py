"""The run path of an ELF shared library: read it, and shorten it in place.

A deploy bundle keeps the core and the backends beside libtvm_ffi in one ``lib/`` folder, so
their wheel run paths (``$ORIGIN/../../tvm_ffi/lib``, ...) become ``$ORIGIN``.  A shorter string
fits where the old one was in ``.dynstr`` (the rest is NUL-padded): no section moves, so no
patchelf is needed and any architecture's file (an aarch64 bundle made on x86_64) is edited the
same way.
"""

from __future__ import annotations

import struct
from pathlib import Path

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_STRTAB, DT_RPATH, DT_RUNPATH = 0, 5, 15, 29


class ELFError(ValueError):
    """Not an ELF file this module can read, or a run path it cannot write."""


def _layout(data: bytes, path: Path) -> tuple[str, bool]:
    if data[:4] != b"\x7fELF":
        raise ELFError(f"{path} is not an ELF file")
    is64 = data[4] == 2
    endian = "<" if data[5] == 1 else ">"
    return endian, is64


def _segments(data: bytes, endian: str, is64: bool) -> list[tuple[int, int, int, int]]:
    """(type, offset, vaddr, filesz) of each program header."""
    if is64:
        (phoff,) = struct.unpack_from(endian + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(endian + "HH", data, 54)
        fmt, fields = endian + "IIQQQQ", (0, 2, 3, 5)
    else:
        (phoff,) = struct.unpack_from(endian + "I", data, 28)
        phentsize, phnum = struct.unpack_from(endian + "HH", data, 42)
        fmt, fields = endian + "IIIII", (0, 1, 2, 4)
    out = []
    for i in range(phnum):
        values = struct.unpack_from(fmt, data, phoff + i * phentsize)
        out.append(tuple(values[f] for f in fields))
    return out


def _runpath_location(data: bytes, path: Path) -> tuple[int, int] | None:
    """File offset and length of the DT_RUNPATH (or DT_RPATH) string, None when there is none."""
    endian, is64 = _layout(data, path)
    segments = _segments(data, endian, is64)
    dynamic = [s for s in segments if s[0] == PT_DYNAMIC]
    if not dynamic:
        raise ELFError(f"{path} has no dynamic section (not a shared library)")
    _, offset, _, size = dynamic[0]
    entry = struct.Struct(endian + ("qQ" if is64 else "iI"))
    strtab_addr = string_offset = None
    for pos in range(offset, offset + size, entry.size):
        tag, value = entry.unpack_from(data, pos)
        if tag == DT_NULL:
            break
        if tag == DT_STRTAB:
            strtab_addr = value
        elif tag in (DT_RUNPATH, DT_RPATH):
            string_offset = value
    if string_offset is None:
        return None
    if strtab_addr is None:
        raise ELFError(f"{path} has a run path but no string table")
    for kind, seg_offset, vaddr, filesz in segments:
        if kind == PT_LOAD and vaddr <= strtab_addr < vaddr + filesz:
            start = seg_offset + strtab_addr - vaddr + string_offset
            return start, data.index(b"\0", start) - start
    raise ELFError(f"{path}: the string table is outside every loaded segment")


def runpath(path: str | Path) -> str | None:
    """The DT_RUNPATH (or DT_RPATH) of the shared library at ``path``, None when it has none."""
    data = Path(path).read_bytes()
    where = _runpath_location(data, Path(path))
    if where is None:
        return None
    start, length = where
    return data[start : start + length].decode()


def set_runpath(path: str | Path, new: str) -> None:
    """Replace the run path of ``path`` with ``new``, which must not be longer than the old one."""
    path = Path(path)
    data = bytearray(path.read_bytes())
    where = _runpath_location(bytes(data), path)
    encoded = new.encode()
    if where is None:
        raise ELFError(f"{path} has no run path to replace with {new!r}")
    start, length = where
    if len(encoded) > length:
        raise ELFError(f"{path}: run path {new!r} is longer than the one in the file")
    data[start : start + length] = encoded + b"\0" * (length - len(encoded))
    path.write_bytes(bytes(data))
