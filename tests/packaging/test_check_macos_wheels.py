"""ci/check_wheels.py's macOS rules (ci/check_macos_wheels.py) on real Mach-O dylibs.

The fixtures are linked by zig (the pinned build toolchain) for aarch64-macos.11.0 the way
ci/build_wheels.py links the macOS wheels (ci/toolchain/zig_macos_link.py: the system libc++
through a generated stub), against stand-in stubs of libtvm_ffi.dylib and libtvm_runtime.dylib.
One good core and one good backend pass; each bad variant breaks one rule and is refused with a
message naming it.  Nothing here needs a Mac: the checks are static.
"""

from __future__ import annotations

import importlib.util
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "ci"))
sys.path.insert(0, str(REPO / "ci" / "toolchain"))
import check_macos_wheels  # noqa: E402
import check_wheels  # noqa: E402
import macho  # noqa: E402
import zig_macos_link  # noqa: E402

TARGET = "aarch64-macos.11.0"
CORE_MEMBER = "tvm/lib/libtvm_runtime.dylib"
BACKEND_MEMBER = "tvm/backend/fixture/libtvm_runtime_fixture.dylib"

CORE_SOURCE = r"""
#include <stdexcept>
#include <string>
extern "C" int TVMFFIFixture(int);
extern "C" __attribute__((visibility("default"))) int TVMRuntimeFixture(int n) {
  try {
    if (n < 0) throw std::runtime_error("negative: " + std::to_string(n));
    return TVMFFIFixture(n);
  } catch (const std::exception& e) {
    return -static_cast<int>(std::string(e.what()).size());
  }
}
"""
BACKEND_SOURCE = r"""
#include <vector>
extern "C" int TVMRuntimeFixture(int);
extern "C" int TVMFFIFixture(int);
extern "C" __attribute__((visibility("default"))) int TVMRuntimeBackendFixture(int n) {
  std::vector<int> v(static_cast<size_t>(n > 0 ? n : 1), 1);
  return TVMRuntimeFixture(static_cast<int>(v.size())) + TVMFFIFixture(n);
}
"""
# A private copy of the ABI runtime, as zig's static libc++abi would bring in.
PRIVATE_RUNTIME_SOURCE = r"""
extern "C" __attribute__((visibility("default"))) void __cxa_throw(void*, void*, void (*)(void*)) {}
"""
BUILD_PATH_SOURCE = r"""
extern "C" __attribute__((visibility("default"))) const char* TVMRuntimeFixtureWhere() {
  return "/work/build/src/core/fixture.cc";
}
"""
CORE_RPATH = "-Wl,-rpath,@loader_path/../../tvm_ffi/lib"
BACKEND_RPATHS = ("-Wl,-rpath,@loader_path/../../lib", "-Wl,-rpath,@loader_path/../../../tvm_ffi/lib")


def _zig() -> str:
    spec = importlib.util.find_spec("ziglang")
    assert spec is not None and spec.origin is not None, "the tests need ziglang (ci/toolchain/pins.toml)"
    return str(Path(spec.origin).parent / "zig")


def _stub(path: Path, install_name: str, *symbols: str) -> Path:
    names = ", ".join(f"'_{s}'" for s in symbols)
    path.write_text(
        "--- !tapi-tbd\ntbd-version: 4\ntargets: [ arm64-macos, x86_64-macos ]\n"
        f"install-name: '{install_name}'\ncurrent-version: 1\nexports:\n"
        f"  - targets: [ arm64-macos, x86_64-macos ]\n    symbols: [ {names} ]\n...\n"
    )
    return path


class Fixtures:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.zig = _zig()
        self.ffi = _stub(work / "libtvm_ffi.tbd", "@rpath/libtvm_ffi.dylib", "TVMFFIFixture")
        self.core = _stub(work / "libtvm_runtime.tbd", "@rpath/libtvm_runtime.dylib", "TVMRuntimeFixture")

    def compile(self, name: str, source: str, target: str = TARGET) -> Path:
        src = self.work / f"{name}.cc"
        src.write_text(source)
        obj = self.work / f"{name}-{target}.o"
        cmd = [self.zig, "c++", "-target", target, "-O2", "-fPIC", "-fvisibility=hidden"]
        proc = subprocess.run(
            [*cmd, "-c", str(src), "-o", str(obj)], capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stderr
        return obj

    def link(self, out: str, *args: str, target: str = TARGET, system_libcxx: bool = True) -> Path:
        path = self.work / out
        path.parent.mkdir(parents=True, exist_ok=True)
        argv = ["-target", target, "-shared", *args, "-o", str(path)]
        if system_libcxx:
            assert zig_macos_link.link(self.zig, argv) == 0
        else:
            subprocess.run([self.zig, "c++", *argv], check=True, timeout=600)
        return path


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixtures:
    return Fixtures(tmp_path_factory.mktemp("macho"))


def _core(fx: Fixtures, out: str, *extra: str, name: str = "@rpath/libtvm_runtime.dylib", **kw) -> bytes:
    obj = fx.compile("core", CORE_SOURCE, kw.get("target", TARGET))
    args = [str(obj), str(fx.ffi), f"-Wl,-install_name,{name}", CORE_RPATH, *extra]
    return fx.link(out, *args, **kw).read_bytes()


def _core_with(fx: Fixtures, out: str, name: str, source: str) -> bytes:
    """The good core linked with one more object compiled from ``source``."""
    obj = fx.compile(name, source)
    core_obj = fx.compile("core", CORE_SOURCE)
    args = [str(core_obj), str(obj), str(fx.ffi), "-Wl,-install_name,@rpath/libtvm_runtime.dylib", CORE_RPATH]
    return fx.link(out, *args).read_bytes()


def _backend(fx: Fixtures, out: str, *extra: str, link_core: bool = True) -> bytes:
    obj = fx.compile("backend", BACKEND_SOURCE)
    libs = [str(fx.ffi), *([str(fx.core)] if link_core else [])]
    args = [str(obj), *libs, "-Wl,-install_name,@rpath/libtvm_runtime_fixture.dylib", *BACKEND_RPATHS, *extra]
    return fx.link(out, *args).read_bytes()


def test_good_core_and_backend_pass(fx):
    core = _core(fx, "good/libtvm_runtime.dylib")
    assert check_macos_wheels.check_macho(CORE_MEMBER, core, "core") == []
    backend = _backend(fx, "good/libtvm_runtime_fixture.dylib")
    assert check_macos_wheels.check_macho(BACKEND_MEMBER, backend, "backend") == []
    # What the rules rest on, read back from the files.
    info = macho.parse(backend)
    assert info.cpu == "arm64" and info.minos == (11, 0, 0) and info.code_signature is not None
    assert set(info.dylibs) == check_macos_wheels.expected_dylibs("backend")
    assert info.undefined["__Znwm"] == "/usr/lib/libc++.1.dylib"  # operator new, system libc++
    assert info.undefined["_TVMRuntimeFixture"] == "@rpath/libtvm_runtime.dylib"


def test_static_cxx_runtime_is_refused(fx):
    data = _core_with(fx, "bad/private.dylib", "private", PRIVATE_RUNTIME_SOURCE)
    errors = check_macos_wheels.check_macho(CORE_MEMBER, data, "core")
    assert any("private C++ ABI runtime" in e and "___cxa_throw" in e for e in errors), errors


def test_newer_minimum_macos_is_refused(fx):
    data = _core(fx, "bad/minos.dylib", target="aarch64-macos")  # zig's default: its newest macOS
    errors = check_macos_wheels.check_macho(CORE_MEMBER, data, "core")
    assert any("must be 11.0" in e for e in errors), errors


def test_x86_64_dylib_is_refused(fx):
    data = _core(fx, "bad/x86.dylib", target="x86_64-macos.11.0")
    errors = check_macos_wheels.check_macho(CORE_MEMBER, data, "core")
    assert any("built for x86_64, not arm64" in e for e in errors), errors


def test_absolute_rpath_and_wrong_install_name_are_refused(fx):
    data = _core(
        fx, "bad/rpath.dylib", "-Wl,-rpath,/tmp/build/site-packages/tvm_ffi/lib", name="libtvm_runtime.dylib"
    )
    errors = check_macos_wheels.check_macho(CORE_MEMBER, data, "core")
    assert any("only @loader_path-relative rpaths" in e for e in errors), errors
    assert any("install name 'libtvm_runtime.dylib'" in e for e in errors), errors
    assert any("build path '/tmp/build/site-packages/tvm_ffi/lib'" in e for e in errors), errors


def test_rpath_not_reaching_tvm_ffi_is_refused(fx):
    data = _core(fx, "bad/reach.dylib")
    # The same file installed one level deeper: its rpath no longer reaches site-packages/tvm_ffi.
    errors = check_macos_wheels.check_macho("tvm/lib/extra/libtvm_runtime.dylib", data, "core")
    assert any("no rpath reaches site-packages/tvm_ffi/lib" in e for e in errors), errors


def test_backend_not_linking_the_core_is_refused(fx):
    data = _backend(fx, "bad/nocore.dylib", "-Wl,-undefined,dynamic_lookup", link_core=False)
    errors = check_macos_wheels.check_macho(BACKEND_MEMBER, data, "backend")
    assert any("does not link @rpath/libtvm_runtime.dylib" in e for e in errors), errors
    assert any("flat lookup" in e and "_TVMRuntimeFixture" in e for e in errors), errors


def test_build_path_in_the_data_is_refused(fx):
    data = _core_with(fx, "bad/where.dylib", "where", BUILD_PATH_SOURCE)
    errors = check_macos_wheels.check_macho(CORE_MEMBER, data, "core")
    assert any("build path '/work/build/src/core/fixture.cc'" in e for e in errors), errors


def _without_signature(data: bytes) -> bytes:
    """The same file with its LC_CODE_SIGNATURE command renamed to a command dyld ignores."""
    out = bytearray(data)
    ncmds = struct.unpack_from("<I", out, 16)[0]
    offset = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", out, offset)
        if cmd == macho.LC_CODE_SIGNATURE:
            struct.pack_into("<I", out, offset, 0x2B)  # LC_DYLIB_CODE_SIGN_DRS
            return bytes(out)
        offset += size
    raise AssertionError("zig's linker emitted no code signature")


def test_unsigned_dylib_is_refused(fx):
    data = _core(fx, "bad/unsigned.dylib")
    assert macho.parse(data).code_signature is not None  # zig signs ad hoc by itself
    errors = check_macos_wheels.check_macho(CORE_MEMBER, _without_signature(data), "core")
    assert any("not code-signed" in e for e in errors), errors


def test_linker_reports_undefined_symbols_of_our_own(fx):
    obj = fx.compile("core", CORE_SOURCE)
    # Without the libtvm_ffi stub, TVMFFIFixture is ours to define: the link must fail, as
    # -Wl,--no-undefined makes it fail on Linux, instead of binding it to libc++.
    argv = ["-target", TARGET, "-shared", str(obj), "-o", str(fx.work / "bad" / "undefined.dylib")]
    assert zig_macos_link.link(fx.zig, argv) == 1


def _wheel(directory: Path, name: str, tag: str, members: dict[str, bytes]) -> Path:
    wheel = directory / f"{name}-0.1.0-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return wheel


def test_wheel_level_rules(fx, tmp_path):
    core = _core(fx, "good/libtvm_runtime.dylib")
    good = _wheel(tmp_path, "tvm_runtime", "py3-none-macosx_11_0_arm64", {CORE_MEMBER: core})
    assert check_macos_wheels.check_macos_wheel(good, "core") == []
    badtag = _wheel(tmp_path, "tvm_runtime", "py3-none-macosx_14_0_arm64", {CORE_MEMBER: core})
    assert any(
        "must be py3-none-macosx_11_0_arm64" in e
        for e in check_macos_wheels.check_macos_wheel(badtag, "core")
    )
    (tmp_path / "x").mkdir()
    elf = _wheel(
        tmp_path / "x", "tvm_runtime", "py3-none-macosx_11_0_arm64", {CORE_MEMBER: b"\x7fELF" + bytes(60)}
    )
    assert any("not a 64-bit Mach-O" in e for e in check_macos_wheels.check_macos_wheel(elf, "core"))
    # check_wheels routes macOS wheels here and never to the manylinux rules.
    assert check_wheels.check_platform_tags([good]) == []
    assert check_wheels.wheelhouse_platform([good]) == "macos-arm64"
