"""The Metal backend on Linux, against the fake Objective-C runtime and fake Metal of
tests/fakes/: real apache-tvm 0.27 `metal` fixtures, the messages the backend sends, the
results of the fake's CPU references and the error paths.  Each check runs in a fresh
interpreter, since libobjc and Metal are opened once per process."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
from pathlib import Path

import pytest
from fakes import commands, metal_environment, run_commands

from conftest import ARTIFACTS, run_python

HERE = Path(__file__).resolve().parent

PRELUDE = r"""
import ctypes, json, numpy as np, tvm
F = ctypes.CDLL(FAKE_METAL); F.fake_metal_log.restype = ctypes.c_char_p
EX = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong),
    ctypes.POINTER(ctypes.c_ulong))
def arr(p, n, dt):
    ptr = ctypes.cast(p, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dt)))
    return np.ctypeslib.as_array(ptr, (n // np.dtype(dt).itemsize,))
def pod(p, n):
    return ctypes.string_at(p, n)
REFS = {}
@EX
def execute(name, nb, bufs, lens, p, plen, grid, block):
    ref = REFS.get(name.decode())
    if ref is None:
        return 1
    ref([bufs[i] for i in range(nb)], [lens[i] for i in range(nb)], pod(p, plen) if plen else b"")
    return 0
F.fake_metal_set_executor(execute)
def log():
    skip = ("release", "localizedDescription")
    return [l for l in F.fake_metal_log().decode().splitlines() if not l.startswith(skip)]
"""


@pytest.fixture(scope="module")
def fakes() -> dict[str, str]:
    return metal_environment()


def run_metal(fakes: dict[str, str], body: str, **extra: str) -> dict:
    code = f"FAKE_METAL = {fakes['TVM_METAL_FRAMEWORK']!r}\nART = {str(ARTIFACTS)!r}\n" + PRELUDE + body
    proc = run_python(code, env={**fakes, **extra})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_add_messages_and_result(fakes):
    r = run_metal(
        fakes,
        r"""
def add(b, n, _):
    a, x, c = (arr(b[i], n[i], "float32") for i in range(3)); c[:] = a + x
REFS["add_kernel"] = add
dev = tvm.metal(0)
m = tvm.runtime.load_module(ART + "/metal/add.so")
d = np.load(ART + "/metal/add.npz")
a, b = tvm.runtime.tensor(d["a"], dev), tvm.runtime.tensor(d["b"], dev)
c = tvm.runtime.empty((1024,), "float32", dev)
F.fake_metal_clear_log()
m["add"](a, b, c)
np.testing.assert_allclose(c.numpy(), d["c"], rtol=1e-6)
print(json.dumps({"log": log(), "name": dev.device_name, "threads": dev.max_threads_per_block,
                  "smem": dev.max_shared_memory_per_block}))
""",
    )
    sels = [line.split()[0] for line in r["log"]]
    first = sels.index("alloc")
    assert sels[first : first + 12] == [
        "alloc", "init", "setLanguageVersion:", "setFastMathEnabled:",
        "newLibraryWithSource:options:error:", "newFunctionWithName:",
        "newComputePipelineStateWithFunction:error:", "commandBuffer", "computeCommandEncoder",
        "setComputePipelineState:", "setBuffer:offset:atIndex:", "setBuffer:offset:atIndex:",
    ]  # fmt: skip
    assert "language=0x30000 fast_math=1" in r["log"][first + 4]
    assert [line.split("index=")[1] for line in r["log"] if line.startswith("setBuffer")] == ["0", "1", "2"]
    (dispatch,) = [line for line in r["log"] if line.startswith("dispatchThreadgroups")]
    assert dispatch.endswith("grid=16,1,1 block=64,1,1")
    assert not any(line.startswith("setBytes") for line in r["log"])
    assert (r["name"], r["threads"], r["smem"]) == ("Fake Apple M0 GPU 0", 1024, 32768)


def test_scalars_packed_after_buffers(fakes):
    r = run_metal(
        fakes,
        r"""
import struct
seen = []
def scale(b, n, p):
    seen.append(p.hex())
    alpha, shift = struct.unpack("<f4xq", p)
    a, out = arr(b[0], n[0], "float32"), arr(b[1], n[1], "float32")
    out[:] = a * np.float32(alpha) + np.float32(shift)
REFS["scale64_kernel"] = scale
dev = tvm.metal(0)
m = tvm.runtime.load_module(ART + "/metal/scale64.so")
d = np.load(ART + "/metal/scale64.npz")
a = tvm.runtime.tensor(d["a"], dev); out = tvm.runtime.empty((300,), "float32", dev)
F.fake_metal_clear_log()
m["scale64"](a, -2.5, 7, out)
np.testing.assert_allclose(out.numpy(), d["b"], rtol=1e-6)
print(json.dumps({"log": log(), "seen": seen}))
""",
    )
    (set_bytes,) = [line for line in r["log"] if line.startswith("setBytes")]
    # alpha (float32 -2.5) in an 8-byte slot, shift (int64 7): index = number of buffers (2)
    assert "length=16 index=2 bytes=000020c0000000000700000000000000" in set_bytes
    assert r["seen"] == ["000020c0000000000700000000000000"]


def test_compile_error_carries_metal_log(fakes):
    proc = run_python(
        f"import tvm, numpy as np\nm = tvm.runtime.load_module({str(ARTIFACTS / 'metal' / 'add.so')!r})\n"
        "dev = tvm.metal(0)\nx = tvm.runtime.empty((1024,), 'float32', dev)\n"
        "try:\n    m['add'](x, x, x)\nexcept RuntimeError as e:\n    print('ERR', e)\n",
        env={
            **fakes,
            "FAKE_METAL_COMPILE_ERROR": "program_source:7:3: error: use of undeclared identifier 'foo'",
        },
    )
    assert "undeclared identifier 'foo'" in proc.stdout and "add_kernel" in proc.stdout


def test_no_device_and_no_framework(fakes):
    proc = run_python("import tvm\nprint(tvm.metal(0).exist)\n", env={**fakes, "FAKE_METAL_NO_DEVICE": "1"})
    assert proc.stdout.strip() == "False"
    proc = run_python(
        "import tvm\nprint(tvm.metal(0).exist)\nprint(tvm.get_global_func('runtime.DeviceDriverStatus')(8))\n",  # noqa: E501
        env={**fakes, "TVM_METAL_FRAMEWORK": "/nonexistent/Metal"},
    )
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "False" and "Metal.framework" in proc.stdout


# ------------------------------------------------------------------------ the fakes themselves


def test_fakes_link_with_ld64_for_the_macos_job(tmp_path):
    """release.yml's macOS job runs tests/metal on a Mac: the fakes' link must not use GNU ld's
    -soname or -l:<file>, and the trampolines must assemble as Mach-O.  On a Mac the system's
    compiler and ld64 link them; elsewhere zig (ziglang, a test dependency) cross-links them for
    arm64 macOS with its ld64-compatible linker."""
    if platform.system() == "Darwin":
        cc = [os.environ.get("CC") or shutil.which("cc") or "cc"]
    else:
        spec = importlib.util.find_spec("ziglang")
        assert spec is not None and spec.origin is not None, "the tests need ziglang (ci/toolchain/pins.toml)"
        cc = [str(Path(spec.origin).parent / "zig"), "cc", "-target", "aarch64-macos"]
    cmds = commands("metal", cc, tmp_path, system="Darwin")
    flat = " ".join(" ".join(c) for c in cmds)
    assert "-soname" not in flat and "-l:" not in flat and "-rpath" not in flat, flat
    run_commands(cmds)
    objc, metal = tmp_path / "libfake_objc.so", tmp_path / "libfake_metal.so"
    for lib in (objc, metal):
        assert lib.read_bytes()[:4] == b"\xcf\xfa\xed\xfe", lib  # MH_MAGIC_64: a Mach-O dylib
    # The fake Metal names the fake runtime by its install name, the absolute path.
    assert str(objc).encode() + b"\0" in metal.read_bytes()


# c = a + a on tvm.metal(0) with the add fixture, queued but not run until the host waits; the
# fake's reference takes ADD_SECONDS[0] seconds, like a kernel that keeps the GPU busy.
ADD_ON_QUEUE = r"""
import time
ADD_SECONDS = [0.0]
def add(b, n, _):
    time.sleep(ADD_SECONDS[0])
    a, bb, c = (arr(b[i], n[i], "float32") for i in range(3))
    c[:] = a + bb
REFS["add_kernel"] = add
F.fake_metal_pending.restype = ctypes.c_int
dev = tvm.metal(0)
mod = tvm.runtime.load_module(ART + "/metal/add.so")
a = tvm.runtime.tensor(np.arange(1024, dtype="float32"), dev)
c = tvm.runtime.empty((1024,), "float32", dev)
dev.sync()
"""


def test_command_buffers_complete_only_when_waited_for(fakes):
    """The fake Metal runs a committed command buffer when the host waits for it, as a GPU would
    finish it: before the sync the work is pending, after it the result is there."""
    r = run_metal(
        fakes,
        ADD_ON_QUEUE
        + r"""
mod["add"](a, a, c)
pending = F.fake_metal_pending()
dev.sync()
print(json.dumps({"pending": pending, "after": F.fake_metal_pending(),
                  "ok": bool((c.numpy() == 2 * np.arange(1024, dtype="float32")).all())}))
""",
    )
    assert r["pending"] >= 1 and r["after"] == 0 and r["ok"], r


def test_timer_waits_for_the_queued_work_and_rejects_bad_use(fakes):
    """runtime.timer.metal times between two waits for the current stream: a kernel queued after
    "start" is finished by "stop" (the fake runs it, 30 ms long, only when the host waits) and
    its time is in elapsed_ns; an unknown action and a non-Metal device are clear errors."""
    r = run_metal(
        fakes,
        ADD_ON_QUEUE
        + r"""
ADD_SECONDS[0] = 0.03
timer = tvm.get_global_func("runtime.timer.metal")(dev)
timer("start")
mod["add"](a, a, c)
timer("stop")
pending, elapsed = F.fake_metal_pending(), timer("elapsed_ns")
errors = []
for bad in (lambda: timer("go"), lambda: tvm.get_global_func("runtime.timer.metal")(tvm.cpu(0))):
    try:
        bad()
        errors.append(None)
    except Exception as err:
        errors.append(f"{type(err).__name__}: {err}")
print(json.dumps({"pending": pending, "elapsed": elapsed, "errors": errors,
                  "ok": bool((c.numpy() == 2 * np.arange(1024, dtype="float32")).all())}))
""",
    )
    assert r["pending"] == 0 and r["ok"], r
    assert r["elapsed"] >= 30_000_000, r
    unknown, not_metal = r["errors"]
    assert unknown and unknown.startswith("ValueError") and "unknown action 'go'" in unknown, r
    assert not_metal and "Metal" in not_metal, r
