"""The fake vendor libraries of the test suite (fake_*.c in this folder): one cached builder and
typed loaders.

Each fake stands in for a vendor library the backends open (libcuda, libamdhip64, libnccl, ...):
device memory is host memory, every call is checked and logged (fake_log.h), nothing runs on a
GPU.  ``build("cuda")`` compiles a fake once per test run and returns its path; the backends are
pointed at it through their ``TVM_*_LIBRARY`` variables.  ``FakeCuda(path)`` and its siblings load
a built fake in this process to read its log.

The build cache is one directory per test run (``TVM_TEST_FAKES_DIR``, inherited by pytest-xdist
workers and child processes); a build is keyed by the fake, its options and the text of every
source here, and made under a file lock so parallel workers compile each fake once.
"""

from __future__ import annotations

import atexit
import ctypes
import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

HERE = Path(__file__).resolve().parent

if "TVM_TEST_FAKES_DIR" not in os.environ:
    os.environ["TVM_TEST_FAKES_DIR"] = tempfile.mkdtemp(prefix="tvm-test-fakes-")
    atexit.register(shutil.rmtree, os.environ["TVM_TEST_FAKES_DIR"], ignore_errors=True)


@dataclass(frozen=True)
class Fake:
    """How one fake is built: its source, the file it becomes, the fakes it links against and
    whether it records its own name (a library others link against by name)."""

    source: str
    filename: str
    links: tuple[str, ...] = ()
    own_name: bool = False


FAKES: dict[str, Fake] = {
    "cuda": Fake("fake_cuda.c", "libcuda_fake.so"),
    "cudart": Fake("fake_cudart.c", "libcudart.so.12", own_name=True),
    "cublaslt": Fake("fake_cublaslt.c", "libcublasLt_fake.so"),
    "cudnn": Fake("fake_cudnn.c", "libcudnn_fake.so"),
    "hip": Fake("fake_hip.c", "libamdhip64_fake.so"),
    "nccl": Fake("fake_nccl.c", "libnccl_fake.so.2"),
    "opencl": Fake("fake_opencl.c", "libOpenCL_fake.so"),
    "objc": Fake("fake_objc.c", "libfake_objc.so", own_name=True),
    # Linked against the fake Objective-C runtime by its path, as the real framework is.
    "metal": Fake("fake_metal.c", "libfake_metal.so", links=("objc",)),
}


def c_compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def own_name_flag(library: Path, system: str) -> str:
    """The linker flag that records a shared library's own name: its absolute path on macOS
    (dyld loads dependents by their install name; Apple's ld64 knows neither GNU ld's ``-soname``
    nor ``-l:<file>``), its file name with an rpath on Linux."""
    if system == "Darwin":
        return f"-Wl,-install_name,{library}"
    return f"-Wl,-soname,{library.name}"


def commands(
    name: str,
    cc: list[str],
    out: Path,
    system: str | None = None,
    defines: tuple[str, ...] = (),
    filename: str | None = None,
) -> list[list[str]]:
    """The compiler commands that build fake ``name`` into ``out`` for ``system`` (default: this
    one's): the fakes it links against first, each into ``out`` too."""
    system = system or platform.system()
    fake = FAKES[name]
    cmds: list[list[str]] = []
    linked: list[str] = []
    for dep in fake.links:
        cmds += commands(dep, cc, out, system)
        linked.append(str(out / FAKES[dep].filename))
    target = out / (filename or fake.filename)
    cmd = [*cc, "-shared", "-fPIC", "-O1", *(f"-D{d}" for d in defines)]
    if fake.own_name:
        cmd.append(own_name_flag(target, system))
    cmd += ["-o", str(target), str(HERE / fake.source), *linked]
    if linked and system != "Darwin":
        cmd.append(f"-Wl,-rpath,{out}")
    return [*cmds, cmd]


def run_commands(cmds: list[list[str]]) -> None:
    for cmd in cmds:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")


def _sources_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(HERE.glob("fake_*.[ch]")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def build(name: str, *, defines: tuple[str, ...] = (), filename: str | None = None) -> Path:
    """Fake ``name`` (a key of FAKES) compiled with ``-D`` ``defines``, as ``filename`` (default:
    its usual file name); built once per test run.  Skips without a C compiler."""
    cc = c_compiler()
    if cc is None:
        pytest.skip(f"no C compiler to build tests/fakes/{FAKES[name].source}")
    key = hashlib.sha256(
        repr((name, defines, filename, cc, platform.system(), _sources_digest())).encode()
    ).hexdigest()[:20]
    root = Path(os.environ["TVM_TEST_FAKES_DIR"])
    out = root / f"{name}-{key}"
    target = out / (filename or FAKES[name].filename)
    with open(root / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            out.mkdir(exist_ok=True)
            run_commands(commands(name, [cc], out, defines=defines, filename=filename))
    return target


def metal_environment() -> dict[str, str]:
    """The environment that points the Metal backend at the fake Objective-C runtime and Metal."""
    metal = build("metal")
    return {
        "TVM_METAL_OBJC_LIBRARY": str(metal.parent / FAKES["objc"].filename),
        "TVM_METAL_FRAMEWORK": str(metal),
        "TVM_METAL_FOUNDATION": str(metal),
        "TVM_METAL_COREGRAPHICS": str(metal),
    }


# ---------------------------------------------------------------------------- logs


def parse_log(text: str, kind: str) -> list[dict[str, str]]:
    """Lines of a fake's log of one kind (``launch``, ``alloc``, ...) as ``{key: value}``."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] != kind:
            continue
        out.append(dict(w.split("=", 1) for w in words[1:] if "=" in w))
    return out


def fnv1a(data: bytes) -> str:
    """The hash a fake logs for each loaded image (fake_log.h's Fnv1a)."""
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# ---------------------------------------------------------------------------- typed loaders


class FakeLibrary:
    """A built fake loaded into this process (the same file a backend opens, so the same handle
    and log in one process).  ``log()``, ``clear_log()`` and ``live_allocations()`` are
    fake_log.h's; any other attribute is the library's own entry point."""

    prefix: ClassVar[str]

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self.lib = ctypes.CDLL(self.path)
        getattr(self.lib, f"{self.prefix}_log").restype = ctypes.c_char_p
        getattr(self.lib, f"{self.prefix}_live_allocations").restype = ctypes.c_long

    def __getattr__(self, name: str):
        return getattr(self.lib, name)

    def log(self) -> str:
        return getattr(self.lib, f"{self.prefix}_log")().decode()

    def clear_log(self) -> None:
        getattr(self.lib, f"{self.prefix}_clear_log")()

    def live_allocations(self) -> int:
        return int(getattr(self.lib, f"{self.prefix}_live_allocations")())


class FakeCuda(FakeLibrary):
    prefix = "fake_cuda"

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path)
        self.lib.fake_cuda_expect_params.argtypes = [ctypes.c_char_p, ctypes.c_int]

    def expect_params(self, kernel: str, count: int) -> None:
        """The next launch of ``kernel`` must pass ``count`` parameters."""
        self.lib.fake_cuda_expect_params(kernel.encode(), count)


class FakeHip(FakeLibrary):
    prefix = "fake_hip"


class FakeCublasLt(FakeLibrary):
    prefix = "fake_cublaslt"


class FakeCudnn(FakeLibrary):
    prefix = "fake_cudnn"


class FakeNccl(FakeLibrary):
    prefix = "fake_nccl"

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path)
        self.lib.fake_nccl_live_comms.restype = ctypes.c_long

    def live_comms(self) -> int:
        return int(self.lib.fake_nccl_live_comms())


class FakeMetal(FakeLibrary):
    prefix = "fake_metal"

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path)
        self.lib.fake_metal_live.restype = ctypes.c_int64
        self.lib.fake_metal_live.argtypes = [ctypes.c_char_p]
        self.lib.fake_metal_pending.restype = ctypes.c_int

    def live(self, cls: str) -> int:
        """How many objects of Objective-C class ``cls`` are alive."""
        return int(self.lib.fake_metal_live(cls.encode()))
