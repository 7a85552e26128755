"""A small reader of 64-bit Mach-O files: what the macOS wheel build and checks need to know.

Read on Linux, where no otool/nm exists: the CPU type, the load commands (linked dylibs, install
name, rpaths, minimum macOS, code signature) and the symbol table (defined and undefined names,
with the dylib each undefined one binds to).  Used by ci/toolchain/zig-macos-link.py (which
symbols the system libc++ must provide) and ci/check_wheels.py (the macOS wheel rules).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

MH_MAGIC_64 = 0xFEEDFACF
CPU_TYPE_ARM64 = 0x0100000C
CPU_TYPE_X86_64 = 0x01000007
CPU_NAMES = {CPU_TYPE_ARM64: "arm64", CPU_TYPE_X86_64: "x86_64"}
MH_DYLIB = 6

LC_REQ_DYLD = 0x80000000
LC_SYMTAB = 0x2
LC_LOAD_DYLIB = 0xC
LC_ID_DYLIB = 0xD
LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD
LC_RPATH = 0x1C | LC_REQ_DYLD
LC_CODE_SIGNATURE = 0x1D
LC_REEXPORT_DYLIB = 0x1F | LC_REQ_DYLD
LC_BUILD_VERSION = 0x32
LC_VERSION_MIN_MACOSX = 0x24
_DYLIB_COMMANDS = (LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB)
PLATFORM_MACOS = 1

N_STAB = 0xE0
N_PEXT = 0x10
N_TYPE = 0x0E
N_EXT = 0x01
N_UNDF = 0x0
# Library ordinals of an undefined symbol (two-level namespace, in n_desc's high byte).
SELF_LIBRARY_ORDINAL = 0x0
DYNAMIC_LOOKUP_ORDINAL = 0xFE
EXECUTABLE_ORDINAL = 0xFF


class MachOError(ValueError):
    """The bytes are not a 64-bit little-endian Mach-O file this reader understands."""


@dataclass
class MachO:
    path: str
    cpu: str
    filetype: int
    dylibs: list[str] = field(default_factory=list)  # LC_LOAD_DYLIB & co, in order
    install_name: str | None = None
    rpaths: list[str] = field(default_factory=list)
    platform: int | None = None  # LC_BUILD_VERSION platform (1 = macOS)
    minos: tuple[int, int, int] | None = None
    code_signature: tuple[int, int] | None = None  # (offset, size) of LC_CODE_SIGNATURE
    defined: set[str] = field(default_factory=set)  # external, not private-extern
    local: set[str] = field(default_factory=set)  # defined but not exported (hidden, static)
    undefined: dict[str, str | None] = field(default_factory=dict)  # name -> dylib it binds to
    strings: bytes = b""  # every load command's raw bytes, for path checks

    @property
    def minos_text(self) -> str:
        return ".".join(map(str, self.minos)) if self.minos else "?"


def _version(packed: int) -> tuple[int, int, int]:
    return (packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF)


def _cstring(data: bytes, offset: int) -> str:
    end = data.index(b"\0", offset)
    return data[offset:end].decode("utf-8", "replace")


def parse(data: bytes, path: str = "<bytes>") -> MachO:
    if len(data) < 32 or struct.unpack_from("<I", data)[0] != MH_MAGIC_64:
        raise MachOError(f"{path}: not a 64-bit little-endian Mach-O file")
    _, cputype, _, filetype, ncmds, sizeofcmds, _, _ = struct.unpack_from("<IiIIIIII", data)
    info = MachO(path=path, cpu=CPU_NAMES.get(cputype & 0xFFFFFFFF, hex(cputype)), filetype=filetype)
    info.strings = data[32 : 32 + sizeofcmds]
    offset = 32
    symtab = None
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, offset)
        if size < 8 or offset + size > len(data):
            raise MachOError(f"{path}: load command {cmd:#x} runs past the file")
        if cmd in _DYLIB_COMMANDS or cmd == LC_ID_DYLIB:
            (name_offset,) = struct.unpack_from("<I", data, offset + 8)
            name = _cstring(data, offset + name_offset)
            if cmd == LC_ID_DYLIB:
                info.install_name = name
            else:
                info.dylibs.append(name)
        elif cmd == LC_RPATH:
            (path_offset,) = struct.unpack_from("<I", data, offset + 8)
            info.rpaths.append(_cstring(data, offset + path_offset))
        elif cmd == LC_BUILD_VERSION:
            platform, minos, _sdk = struct.unpack_from("<III", data, offset + 8)
            info.platform, info.minos = platform, _version(minos)
        elif cmd == LC_VERSION_MIN_MACOSX and info.minos is None:
            (minos,) = struct.unpack_from("<I", data, offset + 8)
            info.platform, info.minos = PLATFORM_MACOS, _version(minos)
        elif cmd == LC_CODE_SIGNATURE:
            info.code_signature = struct.unpack_from("<II", data, offset + 8)
        elif cmd == LC_SYMTAB:
            symtab = struct.unpack_from("<IIII", data, offset + 8)
        offset += size
    if symtab:
        _read_symbols(info, data, *symtab)
    return info


def _read_symbols(info: MachO, data: bytes, symoff: int, nsyms: int, stroff: int, strsize: int) -> None:
    for index in range(nsyms):
        n_strx, n_type, _n_sect, n_desc, _n_value = struct.unpack_from("<IBBHQ", data, symoff + 16 * index)
        if n_type & N_STAB:
            continue
        name = _cstring(data, stroff + n_strx) if n_strx < strsize else ""
        if not n_type & N_EXT:
            if n_type & N_TYPE != N_UNDF:
                info.local.add(name)
            continue
        if n_type & N_TYPE == N_UNDF:
            ordinal = (n_desc >> 8) & 0xFF
            if ordinal in (SELF_LIBRARY_ORDINAL, DYNAMIC_LOOKUP_ORDINAL, EXECUTABLE_ORDINAL):
                info.undefined[name] = None  # found at run time, in no particular dylib
            else:
                dylibs = info.dylibs
                info.undefined[name] = dylibs[ordinal - 1] if ordinal <= len(dylibs) else None
        elif n_type & N_PEXT:
            info.local.add(name)
        else:
            info.defined.add(name)


def read(path: Path | str) -> MachO:
    return parse(Path(path).read_bytes(), str(path))


def is_macho(data: bytes) -> bool:
    return len(data) >= 4 and struct.unpack_from("<I", data)[0] == MH_MAGIC_64


if __name__ == "__main__":  # a debugging aid: python ci/toolchain/macho.py FILE...
    import sys

    for arg in sys.argv[1:]:
        m = read(arg)
        print(f"{arg}: {m.cpu} filetype={m.filetype} minos={m.minos_text} id={m.install_name}")
        print(f"  dylibs={m.dylibs}\n  rpaths={m.rpaths}\n  signature={m.code_signature}")
        print(f"  {len(m.defined)} defined, {len(m.undefined)} undefined")
        for name, lib in sorted(m.undefined.items()):
            print(f"    U {name}  ({lib})")
