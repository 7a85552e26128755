"""A small reader of ELF shared libraries: sections, dynamic symbols, exported symbols and DT_NEEDED
entries, to take real artifacts and wheels' libraries apart without binutils."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ElfSection:
    name: int  # offset into the section-name string table
    type: int
    addr: int
    offset: int
    size: int
    link: int


SHT_DYNSYM = 11
SHT_DYNAMIC = 6
DT_NEEDED = 1


def elf_sections(data: bytes) -> list[ElfSection]:
    """Every section header of an ELF64 little-endian file (all our wheels are x86-64/aarch64)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        name, sh_type, _, addr, offset, size, link = struct.unpack_from(
            "<IIQQQQI", data, shoff + i * shentsize
        )
        out.append(ElfSection(name, sh_type, addr, offset, size, link))
    return out


def _c_string(data: bytes, at: int) -> bytes:
    return data[at : data.index(b"\0", at)]


def elf_section_names(data: bytes) -> list[str]:
    (shstrndx,) = struct.unpack_from("<H", data, 0x3E)
    sections = elf_sections(data)
    strtab = sections[shstrndx].offset
    return [_c_string(data, strtab + s.name).decode() for s in sections]


@dataclass
class DynamicSymbol:
    name: bytes
    binding: int  # 1 = GLOBAL, 2 = WEAK
    visibility: int  # 0 = DEFAULT
    section: int  # 0 = undefined (imported)
    value: int
    size: int


def _entries(data: bytes, section_type: int, entry_size: int) -> Iterator[tuple[int, int]]:
    """(offset of the linked string table, offset of the entry) of every fixed-size entry of the
    sections of ``section_type`` (SHT_DYNSYM, SHT_DYNAMIC)."""
    sections = elf_sections(data)
    for sec in sections:
        if sec.type == section_type:
            strtab = sections[sec.link].offset
            for pos in range(sec.offset, sec.offset + sec.size, entry_size):
                yield strtab, pos


def dynamic_symbols(data: bytes) -> list[DynamicSymbol]:
    out = []
    for strtab, pos in _entries(data, SHT_DYNSYM, 24):
        st_name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, pos)
        name = _c_string(data, strtab + st_name)
        out.append(DynamicSymbol(name, info >> 4, other & 3, shndx, value, size))
    return out


def find_symbol(data: bytes, name: bytes) -> tuple[int, int]:
    """(file offset, size) of the data of a dynamic symbol."""
    sections = elf_sections(data)
    for sym in dynamic_symbols(data):
        if sym.name == name:
            sec = sections[sym.section]
            return sec.offset + (sym.value - sec.addr), sym.size
    raise KeyError(name.decode())


def exported_symbols(path: str | os.PathLike) -> set[str]:
    """Names a shared library exports: defined, GLOBAL, default visibility (what `readelf
    --dyn-syms` lists as ``GLOBAL DEFAULT`` outside ``UND``)."""
    return {
        s.name.decode()
        for s in dynamic_symbols(Path(path).read_bytes())
        if s.binding == 1 and s.visibility == 0 and s.section != 0 and s.name.decode().isidentifier()
    }


def needed_libraries(path: str | os.PathLike) -> list[str]:
    """DT_NEEDED entries of a shared library."""
    data = Path(path).read_bytes()
    out = []
    for strtab, pos in _entries(data, SHT_DYNAMIC, 16):
        tag, val = struct.unpack_from("<qQ", data, pos)
        if tag == DT_NEEDED:
            out.append(_c_string(data, strtab + val).decode())
    return out
