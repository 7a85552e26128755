"""The macOS arm64 rules of ci/check_wheels.py: what every Mach-O file of a macOS wheel must be.

A wheel is `py3-none-macosx_11_0_arm64`; each Mach-O file in it is:
- an arm64 dylib for macOS with minimum OS 11.0 (LC_BUILD_VERSION), the oldest macOS
  apache-tvm-ffi's wheels support;
- named `@rpath/<its file name>` (LC_ID_DYLIB);
- linked to exactly: /usr/lib/libSystem.B.dylib, /usr/lib/libc++.1.dylib (the C++ runtime
  libtvm_ffi.dylib uses), @rpath/libtvm_ffi.dylib, and for a backend @rpath/libtvm_runtime.dylib;
  /usr/lib/libobjc.A.dylib is allowed where symbols are taken from it;
- given rpaths relative to itself (@loader_path) that reach tvm_ffi/lib and tvm/lib from where
  the wheel installs it, and no other kind of rpath;
- signed (LC_CODE_SIGNATURE; arm64 macOS refuses to map unsigned code), the signature inside the
  file;
- without a private C++ ABI runtime (no defined __cxa_throw, personality routine, std::exception
  typeinfo...), every undefined symbol bound to one of its dylibs (no flat lookup);
- free of absolute build paths (/tmp, /root, /work, /home and the like).

Nothing here runs the code: these are the static properties that can be verified on Linux.
"""

from __future__ import annotations

import posixpath
import re
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "toolchain"))
import macho  # noqa: E402

MACOS_TAG = "py3-none-macosx_11_0_arm64"
MIN_MACOS = (11, 0, 0)
LIBSYSTEM = "/usr/lib/libSystem.B.dylib"
LIBCXX = "/usr/lib/libc++.1.dylib"
LIBOBJC = "/usr/lib/libobjc.A.dylib"
TVM_FFI = "@rpath/libtvm_ffi.dylib"
CORE = "@rpath/libtvm_runtime.dylib"
# Where each @rpath dependency lives, relative to site-packages.
RPATH_HOMES = {TVM_FFI: "tvm_ffi/lib", CORE: "tvm/lib"}
# Defined symbols that mean a private copy of the C++ ABI runtime (libc++abi) was linked in.
_PRIVATE_CXX_RUNTIME = re.compile(
    r"^(___cxa_(throw|begin_catch|allocate_exception|rethrow)$|___gxx_personality_v0$"
    r"|__ZTISt9exception$|__ZTVN10__cxxabiv1|___dynamic_cast$|__Unwind_RaiseException$)"
)
# Absolute paths of a build machine; none may be baked into a shipped file.
BUILD_PATHS = (b"/tmp/", b"/root/", b"/work/", b"/home/", b"/build/", b"/private/var/")


def expected_dylibs(role: str) -> set[str]:
    required = {LIBSYSTEM, LIBCXX, TVM_FFI}
    return required | {CORE} if role == "backend" else required


def _rpath_dir(member: str, rpath: str) -> str | None:
    """The site-packages-relative directory an @loader_path rpath of ``member`` names."""
    if not rpath.startswith("@loader_path"):
        return None
    return posixpath.normpath(
        posixpath.join(posixpath.dirname(member), rpath[len("@loader_path") :].lstrip("/"))
    )


def check_macho(
    member: str, data: bytes, role: str, build_paths: tuple[bytes, ...] = BUILD_PATHS
) -> list[str]:
    """The rule violations of one Mach-O file, installed at site-packages/``member``."""
    try:
        m = macho.parse(data, member)
    except macho.MachOError as err:
        return [str(err)]
    errors = []
    if m.cpu != "arm64":
        errors.append(f"{member} is built for {m.cpu}, not arm64")
    if m.filetype != macho.MH_DYLIB:
        errors.append(f"{member} is not a dylib (Mach-O file type {m.filetype})")
    if m.platform != macho.PLATFORM_MACOS or m.minos != MIN_MACOS:
        errors.append(f"{member} targets macOS {m.minos_text} (platform {m.platform}); must be 11.0")
    name = posixpath.basename(member)
    if m.install_name != f"@rpath/{name}":
        errors.append(f"{member} has install name {m.install_name!r}, not '@rpath/{name}'")
    used = {lib for lib in m.undefined.values() if lib}
    wanted = expected_dylibs(role)
    linked = set(m.dylibs)
    for lib in sorted(wanted - linked):
        errors.append(f"{member} does not link {lib}")
    for lib in sorted(linked - wanted):
        if lib == LIBOBJC and lib in used:
            continue  # the Objective-C runtime, where the code calls it (Metal)
        errors.append(f"{member} links {lib}, which the macOS wheels must not")
    if len(m.dylibs) != len(linked):
        errors.append(f"{member} links a dylib twice: {m.dylibs}")
    unbound = sorted(name for name, lib in m.undefined.items() if lib is None)
    if unbound:
        errors.append(f"{member} leaves symbols to flat lookup (bound to no dylib): {unbound[:5]}")
    private = sorted(s for s in m.defined | m.local if _PRIVATE_CXX_RUNTIME.match(s))
    if private:
        errors.append(f"{member} carries a private C++ ABI runtime (defines {private[:3]})")
    for rpath in m.rpaths:
        if _rpath_dir(member, rpath) is None:
            errors.append(f"{member} has rpath {rpath!r}: only @loader_path-relative rpaths")
    reached = {_rpath_dir(member, r) for r in m.rpaths}
    for lib, home in RPATH_HOMES.items():
        if lib in linked and home not in reached:
            errors.append(f"{member}: no rpath reaches site-packages/{home} for {lib} (rpaths {m.rpaths})")
    if m.code_signature is None:
        errors.append(f"{member} is not code-signed (no LC_CODE_SIGNATURE): arm64 macOS will not load it")
    elif sum(m.code_signature) > len(data) or m.code_signature[1] == 0:
        errors.append(f"{member}: its code signature lies outside the file")
    for path in build_paths:
        at = data.find(path)
        if at >= 0:
            end = data.find(b"\0", at)
            text = data[at : end if 0 <= end - at < 200 else at + 80].decode("utf-8", "replace")
            errors.append(f"{member} contains the build path {text!r}")
    return errors


def check_macos_wheel(wheel: Path, role: str) -> list[str]:
    """The violations of the macOS rules in ``wheel`` (native wheels only)."""
    tags = "-".join(wheel.stem.split("-")[-3:])
    errors = []
    if tags != MACOS_TAG:
        errors.append(f"{wheel.name}: a macOS wheel must be {MACOS_TAG}, is {tags}")
    found = 0
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            if member.endswith("/") or ".dist-info/" in member:
                continue
            data = zf.read(member)
            if macho.is_macho(data):
                found += 1
                errors += [f"{wheel.name}: {e}" for e in check_macho(member, data, role)]
            elif member.endswith((".dylib", ".so")):
                errors.append(f"{wheel.name}: {member} is not a 64-bit Mach-O file")
    if found == 0:
        errors.append(f"{wheel.name}: no Mach-O file in a native macOS wheel")
    return errors
