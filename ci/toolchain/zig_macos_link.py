"""Link a macOS arm64 dylib with zig against the system's /usr/lib/libc++.1.dylib.

Called by ci/toolchain/zig-macos-c++ for every link (CMake's compile steps go to zig directly).

zig links its own static libc++/libc++abi by default; that would give each of our dylibs a private
copy of __cxa_throw, the personality routine and the typeinfo of std::exception, while
libtvm_ffi.dylib uses the system's libc++: exceptions crossing between the two would not be caught.
zig ships libc++'s headers (std::__1, as Apple's) but no stub of Apple's libc++.1.dylib, so the
stub is made here, per link, from what the objects actually need:

1. link once with -nostdlib++ and `-undefined dynamic_lookup` into a scratch file;
2. read its undefined symbols that no linked dylib provides (ci/toolchain/macho.py).  Each must
   be a C++ standard library or ABI runtime name: anything else is a real undefined symbol of
   ours, reported as an error exactly as `-Wl,--no-undefined` does on Linux;
3. write a text stub (.tbd) of /usr/lib/libc++.1.dylib exporting exactly those names and link
   again against it, so every C++ runtime symbol binds two-level to the system's libc++.

Both links drop the debug map (-Wl,-S): its stabs name every object file and source by its
absolute build path, which a wheel must not carry, and no one has those objects to debug with.

Generated per link rather than checked in: the set follows the sources by itself, and a symbol the
system libc++ of macOS 11 might lack is visible in the wheel (ci/check_wheels.py lists the imports
of every dylib from libc++) instead of hidden in a hand-kept list.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import macho  # noqa: E402

LIBCXX = "/usr/lib/libc++.1.dylib"
# Mangled-name prefixes of the C++ standard library (std::, std::__1::), operator new/delete, the
# typeinfo/vtables/VTTs and virtual thunks of std and fundamental types, and the Itanium ABI
# runtime (__cxa_*, the personality routine, __cxxabiv1 type_info classes).
_CXX_RUNTIME = re.compile(
    r"^(__ZN?K?St|__ZT[ISVT]N?K?St|__ZT[vhc][0-9n_]*N?K?St|__ZT[ISV]N10__cxxabiv1|__ZT[ISV]P*K?[a-z]$"
    r"|__Zn[wa]|__Zd[la]"
    r"|___cxa_|___gxx_personality_v0$|___dynamic_cast$)"
)


def stub_tbd(symbols: list[str], arch: str = "arm64") -> str:
    names = ", ".join(f"'{name}'" for name in sorted(symbols))
    return (
        "--- !tapi-tbd\n"
        "tbd-version: 4\n"
        f"targets: [ {arch}-macos ]\n"
        f"install-name: '{LIBCXX}'\n"
        "current-version: 1\n"
        "exports:\n"
        f"  - targets: [ {arch}-macos ]\n"
        f"    symbols: [ {names} ]\n"
        "...\n"
    )


def _output(args: list[str]) -> int:
    for i, arg in enumerate(args):
        if arg == "-o" and i + 1 < len(args):
            return i + 1
    raise SystemExit("zig_macos_link.py: no -o OUTPUT in the link command")


def _arch(args: list[str]) -> str:
    """The stub's architecture, from the -target/--target=<arch>-macos... of the command."""
    for i, arg in enumerate(args):
        target = args[i + 1] if arg == "-target" and i + 1 < len(args) else arg.partition("--target=")[2]
        if target:
            return "x86_64" if target.startswith("x86_64") else "arm64"
    return "arm64"


def link(zig: str, args: list[str]) -> int:
    out_index = _output(args)
    out = Path(args[out_index])
    scratch = out.with_name(out.name + ".unresolved")
    first = list(args)
    first[out_index] = str(scratch)
    cmd = [zig, "c++", *first, "-nostdlib++", "-Wl,-S", "-Wl,-undefined,dynamic_lookup"]
    if subprocess.run(cmd).returncode != 0:
        return 1
    unresolved = sorted(name for name, lib in macho.read(scratch).undefined.items() if lib is None)
    scratch.unlink()
    ours = [name for name in unresolved if not _CXX_RUNTIME.match(name)]
    # A caller asking for flat lookup itself keeps its own undefined symbols unbound (the link
    # succeeds, ci/check_macos_wheels.py then refuses the result); only C++ runtime names go to
    # the stub either way.
    if ours and not any(a.endswith("dynamic_lookup") for a in args):
        for name in ours:
            print(f"error: undefined symbol: {name[1:]} (in {out.name})", file=sys.stderr)
        return 1
    stub = out.with_name(out.name + ".libc++.tbd")
    runtime = [name for name in unresolved if _CXX_RUNTIME.match(name)]
    stub.write_text(stub_tbd(runtime, _arch(args)), encoding="utf-8")
    return subprocess.run([zig, "c++", *args, "-nostdlib++", "-Wl,-S", str(stub)]).returncode


if __name__ == "__main__":
    sys.exit(link(os.environ.get("TVMRT_ZIG", "zig"), sys.argv[1:]))
