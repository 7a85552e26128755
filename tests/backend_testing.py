"""What the backend tests (tests/cuda, tests/opencl, tests/vulkan, tests/vm) have in common.

* devices: a device, or a skip saying why it is missing (a failure where CI requires it);
* artifacts: a small ELF reader and the ``__tvm_ffi__library_bin`` module tree of an exported
  library, used to take real payloads apart and to make broken copies of them;
* function-table payloads (the ``cuda`` and ``opencl`` module formats of apache-tvm 0.27);
* manifest runners: checks every backend runs on its own copy of the shared artifact cases;
* packaging: a backend wheel ships only its namespace portion and links no vendor library;
* failure paths: fresh interpreters whose vendor library is hidden or replaced by ``env``.

Imported like ``conftest``: pytest puts tests/ (the directory of the root conftest.py) on
sys.path whatever the working directory, and subprocess scripts add it explicitly.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from conftest import ARTIFACTS, case, run_python

LIBRARY_BIN = b"__tvm_ffi__library_bin"

# DLDataType (code, bits, lanes) of kernel parameters, as function tables store them.
HANDLE = (3, 64, 1)  # buffer parameters
INT32 = (0, 32, 1)
INT64 = (0, 64, 1)
UINT32 = (1, 32, 1)
FLOAT32 = (2, 32, 1)
FLOAT64 = (2, 64, 1)


# ---------------------------------------------------------------------------------- devices


def device_or_skip(tvm: Any, dev: Any, device_type: int, api: str, fallback_reason: str = "") -> Any:
    """`dev`, or a skip with the driver's reason.

    CI sets TVM_TEST_REQUIRE_<API>=1 where the driver is installed on purpose, so a device that
    silently went missing there fails instead of skipping the whole backend.
    """
    if dev.exist:
        return dev
    reason = tvm.get_global_func("runtime.DeviceDriverStatus")(device_type) or fallback_reason
    require = f"TVM_TEST_REQUIRE_{api.upper()}"
    if os.environ.get(require) == "1":
        pytest.fail(f"{require}=1 but no {api} device: {reason}")
    pytest.skip(f"no {api} device: {reason}")


# -------------------------------------------------------------------------------------- ELF


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


def dynamic_symbols(data: bytes) -> list[DynamicSymbol]:
    sections = elf_sections(data)
    out = []
    for sec in sections:
        if sec.type != SHT_DYNSYM:
            continue
        strtab = sections[sec.link].offset
        for pos in range(sec.offset, sec.offset + sec.size, 24):
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
    sections = elf_sections(data)
    out = []
    for sec in sections:
        if sec.type != SHT_DYNAMIC:
            continue
        strtab = sections[sec.link].offset
        for pos in range(sec.offset, sec.offset + sec.size, 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == DT_NEEDED:
                out.append(_c_string(data, strtab + val).decode())
    return out


# ------------------------------------------------------------------ the library_bin module tree


class Reader:
    """Little-endian reader of the serializer's primitives (u64-length-prefixed strings)."""

    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def fmt(self, f: str) -> Any:
        (v,) = struct.unpack_from("<" + f, self.data, self.pos)
        self.pos += struct.calcsize(f)
        return v

    def u64(self) -> int:
        return self.fmt("Q")

    def bytes_(self) -> bytes:
        n = self.u64()
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


def read_embedded_modules(data: bytes) -> list[EmbeddedModule]:
    """The modules serialized in a library's ``__tvm_ffi__library_bin``, in tree order
    (``_lib``, the host library itself, has no payload and is left out)."""
    start, _ = find_symbol(data, LIBRARY_BIN)
    r = Reader(data, start)
    end = r.u64() + r.pos
    num_modules = r.u64() - 1
    r.pos += 8 * (num_modules + 1)  # indptr
    num_children = r.u64()
    r.pos += 8 * num_children  # child indices
    out = []
    while r.pos < end:
        kind = r.str_()
        if kind == "_lib":
            continue
        n = r.u64()
        out.append(EmbeddedModule(kind, data[r.pos : r.pos + n], r.pos))
        r.pos += n
    return out


def embedded_modules(so_path: str | os.PathLike) -> list[EmbeddedModule]:
    return read_embedded_modules(Path(so_path).read_bytes())


def embedded_module(so_path: str | os.PathLike, kind: str) -> EmbeddedModule:
    """The one module of `kind` in an artifact."""
    (mod,) = [m for m in embedded_modules(so_path) if m.kind == kind]
    return mod


# ------------------------------------------------------------------- function-table payloads


@dataclass
class Kernel:
    name: str
    arg_types: list[tuple[int, int, int]]
    tags: list[str] = field(default_factory=lambda: ["blockIdx.x", "threadIdx.x"])
    extra_tags: list[int] | None = None  # default: 0 per argument


def packed_str(s: bytes) -> bytes:
    """The serializer's encoding of a string: u64 length + bytes."""
    return struct.pack("<Q", len(s)) + s


def write_function_table_payload(kernels: list[Kernel], code: str | bytes, fmt: str) -> bytes:
    """A ``cuda``/``opencl`` module payload as apache-tvm 0.27 writes it:
    ``str fmt; map<str, FunctionInfo> fmap; bytes code``."""
    out = packed_str(fmt.encode()) + struct.pack("<Q", len(kernels))
    for k in kernels:
        out += packed_str(k.name.encode()) + packed_str(k.name.encode())
        out += struct.pack("<Q", len(k.arg_types)) + b"".join(struct.pack("<BBH", *t) for t in k.arg_types)
        out += struct.pack("<Q", len(k.tags)) + b"".join(packed_str(t.encode()) for t in k.tags)
        extra = k.extra_tags if k.extra_tags is not None else [0] * len(k.arg_types)
        out += struct.pack("<Q", len(extra)) + b"".join(struct.pack("<i", t) for t in extra)
    return out + packed_str(code.encode() if isinstance(code, str) else code)


@dataclass
class FunctionTablePayload:
    fmt: str
    kernels: dict[str, Kernel]
    code: bytes
    code_offset: int  # offset of the u64 length that precedes the code


def parse_function_table_payload(payload: bytes) -> FunctionTablePayload:
    """The inverse of write_function_table_payload (``cuda``, ``opencl``, ``hip`` modules)."""
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
        raise ValueError("trailing bytes after the module's code")
    return FunctionTablePayload(fmt, kernels, code, code_offset)


# ------------------------------------------------------------------------- manifest runners


def check_outputs(case_: dict[str, Any], outputs: list[tuple[str, Any, np.ndarray]]) -> None:
    """Compare run_kernel_call's outputs with the manifest's tolerances (in float64, so fp16
    cases compare at the case's tolerance rather than fp16's)."""
    assert outputs
    for key, out, expected in outputs:
        np.testing.assert_allclose(
            out.numpy().astype("float64"),
            expected.astype("float64"),
            rtol=case_["rtol"],
            atol=case_["atol"],
            err_msg=f"{case_['name']}: {key}",
        )


def run_in_threads(worker: Callable[[int], None], count: int = 4) -> list[BaseException]:
    """Run worker(0..count-1) on as many threads; the exceptions they raised (pytest only sees
    the main thread's)."""
    errors: list[BaseException] = []

    def guarded(seed: int) -> None:
        try:
            worker(seed)
        except Exception as err:  # noqa: BLE001 - collected and reported by the caller
            errors.append(err)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def check_concurrent_matmul(tvm: Any, target: str, dev: Any) -> None:
    """Four host threads launch the `matmul` case's kernel on one module and device."""
    c = case(target, "matmul")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    f = mod[c["function"]]

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        a_np = rng.standard_normal((64, 32)).astype("float32")
        b_np = rng.standard_normal((32, 48)).astype("float32")
        a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
        out = tvm.runtime.empty((64, 48), "float32", dev)
        for _ in range(20):
            f(a, b, out)
            np.testing.assert_allclose(out.numpy(), a_np @ b_np, rtol=1e-4, atol=1e-4)

    errors = run_in_threads(worker)
    assert not errors, errors


def check_symbolic_shape_sizes(tvm: Any, target: str, dev: Any) -> list[int]:
    """One `dyn_muladd` module called with n = 17, 1000, 17; the sizes that matched numpy."""
    c = case(target, "dyn_muladd")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    f = mod[c["function"]]
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    sizes = []
    for n in (17, 1000, 17):
        a = tvm.runtime.tensor(data[f"a_n{n}"], dev)
        b = tvm.runtime.tensor(data[f"b_n{n}"], dev)
        out = tvm.runtime.empty((n,), "float32", dev)
        f(a, b, out)
        np.testing.assert_allclose(out.numpy(), data[f"c_n{n}"], rtol=c["rtol"], atol=c["atol"])
        sizes.append(n)
    return sizes


def check_scalar_arguments(tvm: Any, target: str, dev: Any, rtol: float, atol: float = 0.0) -> None:
    """The `multi_out` kernel with float and int scalars that change between launches;
    `rtol`/`atol` bound alpha * a + b, whose rounding depends on the device's FMA use."""
    c = case(target, "multi_out")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(256).astype("float32")
    b_np = rng.standard_normal(256).astype("float32")
    a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
    o1, o2 = tvm.runtime.empty((256,), "float32", dev), tvm.runtime.empty((256,), "float32", dev)
    for alpha, beta in ((1.5, 3), (-0.25, -7), (0.0, 0)):
        mod["multi_out"](a, b, alpha, beta, o1, o2)
        np.testing.assert_allclose(o1.numpy(), a_np * np.float32(alpha) + b_np, rtol=rtol, atol=atol)
        np.testing.assert_allclose(o2.numpy(), a_np - np.float32(beta), rtol=1e-6)


def check_time_evaluator(tvm: Any, target: str, dev: Any) -> None:
    c = case(target, "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((1024,), "float32", dev)
    res = mod.time_evaluator("add", dev, number=5, repeat=2)(a, b, out)
    assert len(res.results) == 2 and res.mean > 0
    np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)


def check_relax_case(tvm: Any, case_: dict[str, Any], mod: Any, dev: Any, root: Path = ARTIFACTS) -> None:
    """Every call of a Relax (`vm`) manifest case through vm["main"] on `dev` (npz paths
    relative to `root`)."""
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    for call in case_["calls"]:
        data = np.load(root / call["npz"])
        res = vm["main"](*[tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]])
        results = list(res) if case_["output_is_tuple"] else [res]
        # Every expected output, no more and no fewer: zip alone would stop at the shorter list.
        assert len(results) == len(call["outputs"]), (
            f"{case_['name']}: the model returned {len(results)} outputs, "
            f"the manifest expects {len(call['outputs'])} ({call['outputs']})"
        )
        for key, out in zip(call["outputs"], results, strict=True):
            np.testing.assert_allclose(out.numpy(), data[key], rtol=case_["rtol"], atol=case_["atol"])


def check_host_round_trip(tvm: Any, dev: Any, dtype: str) -> None:
    x = (np.arange(1000) % 7 - 3).astype(dtype)
    np.testing.assert_array_equal(tvm.runtime.tensor(x, dev).numpy(), x)


def check_device_to_device_copy(tvm: Any, dev: Any) -> None:
    x = np.random.default_rng(0).standard_normal((64, 33)).astype("float32")
    a = tvm.runtime.tensor(x, dev)
    b = a.copyto(dev)
    c = tvm.runtime.empty(x.shape, "float32", dev)
    b.copyto(c)
    np.testing.assert_array_equal(c.numpy(), x)
    np.testing.assert_array_equal(a.copyto(tvm.cpu(0)).numpy(), x)


def check_copies_honour_byte_offsets(tvm: Any, dev: Any) -> tuple[Any, np.ndarray]:
    """Host <-> device and device -> device copies of views at byte offsets; returns the
    tensor and the host copy of what it must now hold, for backend-specific follow-ups."""
    x = np.arange(100, dtype="float32")
    t = tvm.runtime.tensor(x, dev)
    view = t._create_view((10,), "float32", 40 * 4)
    np.testing.assert_array_equal(view.numpy(), x[40:50])
    view.copyfrom(np.full(10, -1.0, dtype="float32"))
    expected = x.copy()
    expected[40:50] = -1.0
    np.testing.assert_array_equal(t.numpy(), expected)
    # device -> device between views at different offsets
    dst = tvm.runtime.empty((100,), "float32", dev)
    dst.copyfrom(np.zeros(100, dtype="float32"))
    t._create_view((10,), "float32", 0).copyto(dst._create_view((10,), "float32", 90 * 4))
    got = dst.numpy()
    np.testing.assert_array_equal(got[90:], x[:10])
    assert not got[:90].any()
    return t, expected


# -------------------------------------------------------------------------------- packaging


def check_ships_only_its_namespace_portion(backend: str) -> None:
    """tvm-runtime-<backend> installs tvm/backend/<backend>/ and nothing else (the core owns
    the rest of the namespace), and pins the core's ABI series."""
    dist = md.distribution(f"tvm-runtime-{backend}")
    files = [str(f) for f in dist.files or []]
    payload = [f for f in files if ".dist-info/" not in f]
    assert f"tvm/backend/{backend}/__init__.py" in payload
    assert f"tvm/backend/{backend}/libtvm_runtime_{backend}.so" in payload
    assert all(f.startswith(f"tvm/backend/{backend}/") for f in payload), payload
    assert any(r.startswith("tvm-runtime") and "<0.2" in r for r in dist.requires or [])


def check_entry_point(backend: str) -> None:
    """The core discovers the backend through its `tvm.backends` entry point, whose hook declares
    the backend (hook API 1.1): its name and the DSO shipped next to it."""
    (ep,) = [e for e in md.entry_points(group="tvm.backends") if e.name == backend]
    assert ep.value == f"tvm.backend.{backend}"
    hook = ep.load()
    assert hook.BACKEND.name == backend
    assert Path(hook.BACKEND.library) == Path(hook.__file__).parent / f"libtvm_runtime_{backend}.so"


def check_links_no_vendor_library(so: str | os.PathLike, vendor_markers: tuple[str, ...]) -> None:
    """The backend DSO links the core only: the vendor library is opened at first device use,
    so a machine without the driver can still import the wheel."""
    needed = needed_libraries(so)
    assert "libtvm_runtime.so" in needed
    assert not [n for n in needed if any(m in n for m in vendor_markers)], needed


# ---------------------------------------------------------------------------- failure paths


def no_driver_script(backend: str, device_type: int, artifact: str, probes: str, checks: str = "") -> str:
    """A script for an interpreter whose driver is hidden: it imports the backend, runs
    `checks` on ``dev`` (``tvm.<backend>(0)``), prints the driver status, loads `artifact`
    (lazily, so that must work) as ``mod``, then runs every ``(name, lambda)`` of `probes`,
    each of which must raise RuntimeError or ValueError with the reason, never crash."""
    return f"""
import numpy as np, tvm
from tvm.backend.{backend} import detect_target
dev = tvm.{backend}(0)
assert dev.exist is False
assert dev.device_name is None
{checks}print("STATUS:", tvm.get_global_func("runtime.DeviceDriverStatus")({device_type}))
mod = tvm.runtime.load_module({artifact!r})
for what, fn in [
{probes}]:
    try:
        fn()
        print(what, "NO ERROR")
    except (RuntimeError, ValueError) as err:
        print(what, "RAISED", type(err).__name__, str(err).replace(chr(10), " "))
print("DONE")
"""


def run_without_driver(script: str, env: dict[str, str]) -> str:
    """Run a no_driver_script under `env`; its stdout, once every probe raised."""
    proc = run_python(script, env=env)
    assert "DONE" in proc.stdout, proc.stdout + proc.stderr
    assert "NO ERROR" not in proc.stdout, proc.stdout
    return proc.stdout


def driver_status(out: str) -> str:
    """The runtime.DeviceDriverStatus line a no_driver_script printed."""
    return out.split("STATUS:", 1)[1].splitlines()[0]


def run_diagnostics(env: dict[str, str]) -> str:
    """stdout of ``python -m tvm.backend`` (the diagnostics command) under `env`."""
    proc = run_python("import runpy; runpy.run_module('tvm.backend', run_name='__main__')", env=env)
    return proc.stdout


def vendor_library_mapping(backend: str, library: str, first_use: str) -> str:
    """Whether `library` is mapped after importing the backend and after `first_use` (one line
    of Python), printed as ``after import: <bool>`` / ``after first use: <bool>``."""
    proc = run_python(
        f"""
        def mapped():
            return {library!r} in open("/proc/self/maps").read()
        import tvm, tvm.backend.{backend}
        from tvm.backend import _dso
        assert {backend!r} in _dso.LOADED, "backend registered at import"
        print("after import:", mapped())
        {first_use}
        print("after first use:", mapped())
        """
    )
    return proc.stdout


# ---------------------------------------------------------------------------- fake drivers


def build_fake_library(source: Path, out: Path) -> Path:
    """Compile one fake vendor driver (C, tests/*/fake_driver/*.c) into ``out`` (a .so).

    Skips without a C compiler."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip(f"no C compiler to build {source.name}")
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    return out


def parse_log(text: str, kind: str) -> list[dict[str, str]]:
    """Lines of a fake driver's log of one kind (``launch``, ``alloc``, ...) as ``{key: value}``."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] != kind:
            continue
        out.append(dict(w.split("=", 1) for w in words[1:] if "=" in w))
    return out


def assert_garbage_payloads_rejected(
    load_payload: Callable[[bytes], Any], seed: int = 1, count: int = 100, max_size: int = 300
) -> None:
    """Random byte strings given to a module loader: each one a clear error, never a crash."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        junk = rng.integers(0, 256, size=int(rng.integers(0, max_size)), dtype=np.uint8).tobytes()
        with pytest.raises((ValueError, RuntimeError)):
            load_payload(junk)


def workspace_pool_script(api: str, device_type: int) -> str:
    """A fake-driver script doing what compiled host code does for a device workspace (artifact
    `workspace`): three TVMBackendAllocWorkspace/FreeWorkspace rounds of 2 MiB through the core.
    Its result: the pointers the core returned and the driver allocations it logged."""
    return f"""
core = ctypes.CDLL(None)
alloc, free = core.TVMBackendAllocWorkspace, core.TVMBackendFreeWorkspace
alloc.restype = ctypes.c_void_p
alloc.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_int, ctypes.c_int]
free.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
tvm.{api}(0).exist
clear()
ptrs = []
for _ in range(3):
    p = alloc({device_type}, 0, 2097152, 2, 32)
    ptrs.append(p)
    assert free({device_type}, 0, p) == 0
result(ptrs=ptrs, allocs=parse_log(log(), "alloc"))
"""


def assert_workspace_pool_reused(r: dict) -> None:
    """The pool handed out one 256-byte aligned block three times and asked the driver once."""
    assert len(set(r["ptrs"])) == 1 and r["ptrs"][0] % 256 == 0
    assert [a["bytes"] for a in r["allocs"]] == ["2097152"]


def fnv1a(data: bytes) -> str:
    """The hash a fake driver logs for each loaded image (fake_drivers/fake_log.h)."""
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"
