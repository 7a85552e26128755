"""Every apache-tvm 0.27 `metal` fixture of tests/artifacts/metal/manifest.json on the fake
Objective-C runtime and fake Metal (tests/fakes/), checked against what the artifact itself says:
the kernels of its function table, the `[[buffer(k)]]` indices of its MSL, the scalar arguments
packed into the POD struct, the launch sizes that cover the outputs, and the results of the fake's
CPU references against the npz expected outputs.  Plus the backend's other entry points (timer,
streams, copies, workspaces, profile counters, diagnostics) and its error paths.  Each check runs
in a fresh interpreter: libobjc and Metal are opened once per process."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from backend_testing.no_driver import run_diagnostics
from backend_testing.payloads import Reader, embedded_module
from fakes import metal_environment

from conftest import ARTIFACTS, run_python

HERE = Path(__file__).resolve().parent
METAL_MANIFEST = json.loads((ARTIFACTS / "metal" / "manifest.json").read_text())
CASES = METAL_MANIFEST["cases"]
HANDLE = (3, 64, 1)


@pytest.fixture(scope="module")
def metal_env() -> dict[str, str]:
    """The env vars that point the backend at the fakes (tests/fakes)."""
    return metal_environment()


# ------------------------------------------------------------------------ the artifacts' own facts


def metal_payload(so: Path) -> tuple[str, dict[str, list[tuple[int, int, int]]], dict[str, str]]:
    """fmt, {kernel: argument dtypes} and {kernel: code} of an artifact's `metal` module."""
    r = Reader(embedded_module(so, "metal").payload)
    fmt = r.str_()
    arg_types = {}
    for _ in range(r.u64()):
        key = r.str_()
        r.str_()
        arg_types[key] = [(r.fmt("B"), r.fmt("B"), r.fmt("H")) for _ in range(r.u64())]
        [r.str_() for _ in range(r.u64())]
        [r.fmt("i") for _ in range(r.u64())]
    code = {}
    for _ in range(r.u64()):
        key = r.str_()
        code[key] = r.bytes_().decode("latin1")
    return fmt, arg_types, code


def msl_args_struct_index(source: str, kernel: str) -> int | None:
    """The [[buffer(k)]] of the kernel's POD argument struct in its MSL, None without one."""
    m = re.search(rf"kernel void {kernel}\((.*?)\)\s*\{{", source, re.S)
    assert m, kernel
    s = re.search(r"constant \w+_args_t& \w+ \[\[ buffer\((\d+)\) \]\]", m.group(1))
    return int(s.group(1)) if s else None


# ------------------------------------------------------------------------------ the child process

CHILD = r"""
import ctypes, json, struct, numpy as np, tvm
F = ctypes.CDLL(FAKE_METAL)
F.fake_metal_log.restype = ctypes.c_char_p
EX = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                      ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_ulong,
                      ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_ulong))
SEEN = []

def view(p, n, dt):
    return np.frombuffer((ctypes.c_char * n).from_address(p), dtype=dt)

# CPU references of the fixtures' kernels (what generate_metal.py's descriptions say they do),
# reading the bound buffers and the POD struct exactly as the MSL declares them.
def ew(dt, fn):
    def ref(b, pod, shapes):
        a, x, c = (view(*b[i], dt) for i in range(3))
        c[:] = fn(a, x)
    return ref

def matmul(b, pod, shapes):
    (m, k), (_, n) = shapes["a"], shapes["b"]
    a, x, c = (view(*b[i], "float32") for i in range(3))
    c[: m * n] = (a[: m * k].reshape(m, k) @ x[: k * n].reshape(k, n)).ravel()

def row_sum(b, pod, shapes):
    rows, cols = shapes["a"]
    a, out = view(*b[0], "float32"), view(*b[1], "float32")
    out[:rows] = a[: rows * cols].reshape(rows, cols).sum(axis=1)

def dyn_muladd(b, pod, shapes):
    (n,) = struct.unpack_from("<i", pod, 0)
    a, x, c = (view(*b[i], "float32") for i in range(3))
    c[:n] = a[:n] * x[:n] + np.float32(1)

def outer(b, pod, shapes):
    a, x, t = (view(*b[i], "float32") for i in range(3))
    t[: a.size * x.size] = np.outer(a, x).ravel()

def sum_squares(b, pod, shapes):
    c, t = view(*b[0], "float32"), view(*b[1], "float32")
    c[:] = (t[: shapes["a"][0] * c.size].reshape(-1, c.size) ** 2).sum(axis=0)

def multi_out(b, pod, shapes):
    alpha, beta = struct.unpack_from("<f4xi", pod, 0)
    a, x, o1, o2 = (view(*b[i], "float32") for i in range(4))
    o1[:] = a * np.float32(alpha) + x
    o2[:] = a - np.float32(beta)

def scale64(b, pod, shapes):
    alpha, shift = struct.unpack_from("<f4xq", pod, 0)
    a, out = view(*b[0], "float32"), view(*b[1], "float32")
    out[:] = a * np.float32(alpha) + np.float32(shift)

REFS = {
    "add_kernel": ew("float32", np.add), "tiny_add_kernel": ew("float32", np.add),
    "add_fp16_kernel": ew("float16", np.add), "matmul_kernel": matmul, "row_sum_kernel": row_sum,
    "dyn_muladd_kernel": dyn_muladd, "workspace_kernel": outer, "workspace_kernel_1": sum_squares,
    "multi_out_kernel": multi_out, "scale64_kernel": scale64,
}
SHAPES = {}

@EX
def execute(name, nb, bufs, lens, pod, plen, grid, block):
    name = name.decode()
    SEEN.append(name)
    ref = REFS.get(name)
    if ref is None:
        return 1
    ref([(bufs[i], lens[i]) for i in range(nb)], ctypes.string_at(pod, plen) if plen else b"", SHAPES)
    return 0

F.fake_metal_set_executor(execute)

def log():
    return F.fake_metal_log().decode().splitlines()

MODS = {}

def run_call(case, call, dev):
    if case["file"] not in MODS:  # one module per artifact: its pipelines are cached in it
        MODS[case["file"]] = tvm.runtime.load_module(ART + "/" + case["file"])
    mod = MODS[case["file"]]
    data = np.load(ART + "/" + call["npz"])
    SHAPES.clear()
    SHAPES.update({k: data[k].shape for k in data.files})
    args, outs = [], []
    for a in call["args"]:
        if a["kind"] == "input":
            args.append(tvm.runtime.tensor(data[a["key"]], dev))
        elif a["kind"] == "output":
            t = tvm.runtime.empty(a["shape"], a["dtype"], dev)
            args.append(t)
            outs.append((a["key"], t))
        else:
            args.append(a["value"])
    F.fake_metal_clear_log()
    mod[case["function"]](*args)
    got = {k: t.numpy() for k, t in outs}  # the copy back synchronizes the stream
    for k, v in got.items():
        np.testing.assert_allclose(v.astype("float64"), data[k].astype("float64"),
                                   rtol=case["rtol"], atol=case["atol"], err_msg=case["name"] + ": " + k)
    return {"log": log(), "outputs": {k: [list(v.shape), str(v.dtype)] for k, v in got.items()},
            "sizes": {k: int(data[k].size) for k in data.files}}

def case_named(name):
    return [c for c in json.loads(CASES) if c["name"] == name][0]

def run_first_call(name, dev):
    case = case_named(name)
    return run_call(case, case["calls"][0], dev)
"""


def run_child(env: dict[str, str], body: str, **extra: str) -> Any:
    code = (
        f"FAKE_METAL = {env['TVM_METAL_FRAMEWORK']!r}\nART = {str(ARTIFACTS)!r}\n"
        f"CASES = {json.dumps(CASES)!r}\n" + CHILD + body
    )
    proc = run_python(code, env={**env, **extra})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fields(line: str) -> dict[str, str]:
    return dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)


def dispatches(log: list[str]) -> list[list[str]]:
    """The encoder messages of each compute dispatch, from computeCommandEncoder to endEncoding."""
    out, cur = [], None
    for line in log:
        sel = line.split()[0]
        if sel == "computeCommandEncoder":
            cur = []
        elif sel == "endEncoding" and cur is not None:
            out.append(cur)
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


@pytest.fixture(scope="module")
def fixture_runs(metal_env) -> dict[str, list[dict]]:
    """Every call of every manifest case, in one child (pipelines cached across calls)."""
    return run_child(
        metal_env,
        """
dev = tvm.metal(0)
res = {}
for case in json.loads(CASES):
    res[case["name"]] = [run_call(case, call, dev) for call in case["calls"]]
print(json.dumps(res))
""",
    )


def test_manifest_lists_every_fixture():
    on_disk = sorted(p.name for p in (ARTIFACTS / "metal").glob("*.so"))
    assert sorted(Path(c["file"]).name for c in CASES) == on_disk
    assert {c["module_format"] for c in CASES} == {"metal", "metallib"}


@pytest.mark.parametrize("case_", CASES, ids=[c["name"] for c in CASES])
def test_fixture_on_fake_metal(case_, fixture_runs):
    """Messages of each launch match the artifact; results match the npz (checked in the child)."""
    so = ARTIFACTS / case_["file"]
    fmt, arg_types, code = metal_payload(so)
    assert fmt == case_["module_format"]
    runs = fixture_runs[case_["name"]]
    assert len(runs) == len(case_["calls"]) >= 1
    for call, run in zip(case_["calls"], runs):
        encoded = dispatches(run["log"])
        kernels = [fields(d[0])["kernel"] for d in encoded]
        # every kernel of the function table ran, each once per call, in the host code's order
        assert sorted(kernels) == sorted(arg_types), (kernels, list(arg_types))
        scalars = [a["value"] for a in call["args"] if a["kind"] == "scalar"]
        for kernel, msgs in zip(kernels, encoded):
            types = arg_types[kernel]
            num_buffers = sum(t == HANDLE for t in types)
            num_scalars = len(types) - num_buffers
            sels = [m.split()[0] for m in msgs]
            assert sels[0] == "setComputePipelineState:"
            assert sels[-1] == "dispatchThreadgroups:threadsPerThreadgroup:"
            assert [fields(m)["index"] for m in msgs if m.startswith("setBuffer")] == [
                str(i) for i in range(num_buffers)
            ]
            pods = [fields(m) for m in msgs if m.startswith("setBytes")]
            if num_scalars == 0:
                assert pods == [] and (
                    fmt == "metallib" or msl_args_struct_index(code[kernel], kernel) is None
                )
                continue
            (pod,) = pods
            assert int(pod["length"]) == 8 * num_scalars
            if fmt == "metal":
                assert int(pod["index"]) == msl_args_struct_index(code[kernel], kernel) == num_buffers
            raw = bytes.fromhex(pod["bytes"])
            values = []
            for i, (code_, bits, _) in enumerate(t for t in types if t != HANDLE):
                f = {(0, 32): "<i", (0, 64): "<q", (2, 32): "<f", (2, 64): "<d", (1, 32): "<I"}[(code_, bits)]
                values.append(struct.unpack_from(f, raw, 8 * i)[0])
                # the unused high half of a 4-byte scalar's slot is zero
                if bits == 32:
                    assert raw[8 * i + 4 : 8 * i + 8] == b"\0\0\0\0"
            if scalars:  # explicit scalar arguments of the call, in order
                assert values == pytest.approx(scalars)
            else:  # a symbolic shape: the extent of the call's first input
                first = next(a["key"] for a in call["args"] if a["kind"] == "input")
                assert values == [run["sizes"][first]]
        # the launch covers the outputs: grid * threadgroup >= elements written by the last kernel
        last = fields(encoded[-1][-1])
        grid = [int(x) for x in last["grid"].split(",")]
        block = [int(x) for x in last["block"].split(",")]
        threads = (grid[0] * block[0]) * (grid[1] * block[1]) * (grid[2] * block[2])
        out_elems = max(run["sizes"][a["key"]] for a in call["args"] if a["kind"] == "output")
        assert threads >= out_elems
        assert (
            block[0] * block[1] * block[2]
            <= METAL_MANIFEST["targets"]["metal"]["tvm_target"]["max_threads_per_block"]
        )


def test_compile_once_per_kernel_newest_msl_fast_math(fixture_runs):
    """MSL compiled at first use with the device's newest MSL and fast math; cached afterwards."""
    (first, second) = fixture_runs["dyn_muladd"]
    compiles = [fields(m) for m in first["log"] if m.startswith("newLibraryWithSource")]
    assert len(compiles) == 1
    versions = [fields(m) for m in first["log"] if m.startswith("setLanguageVersion")]
    assert [v["version"] for v in versions] == ["0x30000"]  # the fake is MTLGPUFamilyMetal3
    assert [fields(m)["enabled"] for m in first["log"] if m.startswith("setFastMathEnabled")] == ["1"]
    assert not [m for m in second["log"] if m.startswith(("newLibraryWith", "newComputePipeline"))]
    lib = [fields(m) for m in fixture_runs["add_metallib"][0]["log"] if m.startswith("newLibraryWithData")]
    assert len(lib) == 1 and int(lib[0]["size"]) > 0


def test_metal4_device_gets_msl4(metal_env):
    r = run_child(
        metal_env,
        """
dev = tvm.metal(0)
r = run_first_call("add", dev)
print(json.dumps({"log": r["log"], "version": dev.compute_version}))
""",
        FAKE_METAL_FAMILY="5002",
    )
    assert [fields(m)["version"] for m in r["log"] if m.startswith("setLanguageVersion")] == ["0x40000"]
    assert r["version"] == "4.0"


def test_time_evaluator_streams_copies_counters(metal_env):
    r = run_child(
        metal_env,
        """
dev = tvm.metal(0)
case = case_named("add")
mod = tvm.runtime.load_module(ART + "/" + case["file"])
d = np.load(ART + "/" + case["calls"][0]["npz"])
a, b = tvm.runtime.tensor(d["a"], dev), tvm.runtime.tensor(d["b"], dev)
c = tvm.runtime.empty((1024,), "float32", dev)
reset = tvm.get_global_func("metal.ResetProfileCounters")
get = tvm.get_global_func("metal.GetProfileCounters")
reset(0)
F.fake_metal_clear_log()
t = mod.time_evaluator("add", dev, number=3, repeat=2)(a, b, c)
timed = len([l for l in log() if l.startswith("dispatchThreadgroups")])
counters = {k: int(v) for k, v in get(0).items()}
np.testing.assert_allclose(c.numpy(), d["c"], rtol=1e-6)
# a device-to-device copy is a blit on the stream, ordered after the kernels
F.fake_metal_clear_log()
e = tvm.runtime.empty((1024,), "float32", dev)
c.copyto(e)
blit = [l for l in log() if l.startswith("copyFromBuffer")]
np.testing.assert_array_equal(e.numpy(), d["c"])
# a second stream (command queue) set as current: the launch is committed to its queue
default_queues = {l.split("queue=")[1].split()[0] for l in log() if l.startswith("commandBuffer")}
F.fake_metal_clear_log()
s = dev.create_raw_stream()
new_queue = [l.split("queue=")[1].split()[0] for l in log() if l.startswith("newCommandQueue")]
dev.set_raw_stream(s)
try:
    mod["add"](a, b, c)
    dev.sync()
finally:
    dev.set_raw_stream(0)
stream_queues = {l.split("queue=")[1].split()[0] for l in log() if l.startswith("commandBuffer")}
dev.free_raw_stream(s)
timer = tvm.get_global_func("runtime.timer.metal", allow_missing=True) is not None
tvm.get_global_func("metal.ResetGlobalState")()
np.testing.assert_allclose(c.numpy(), d["c"], rtol=1e-6)
print(json.dumps({"results": list(t.results), "timed": timed, "counters": counters, "blit": blit,
                  "timer": timer, "default_queues": sorted(default_queues),
                  "new_queue": new_queue, "stream_queues": sorted(stream_queues)}))
""",
    )
    assert r["timer"]
    assert len(r["results"]) == 2 and all(x > 0 for x in r["results"])
    assert r["timed"] >= 1 + 3 * 2  # the warm-up call and number * repeat
    assert r["counters"]["dispatches"] == r["timed"] and r["counters"]["syncs"] >= 4
    assert len(r["new_queue"]) == 1 and r["stream_queues"] == r["new_queue"]
    assert r["new_queue"][0] not in r["default_queues"] and len(r["default_queues"]) == 1
    (blit,) = r["blit"]
    assert fields(blit)["size"] == "4096" and fields(blit)["source_offset"] == "0"


def test_workspace_allocations_are_shared_buffers(metal_env):
    r = run_child(
        metal_env,
        """
dev = tvm.metal(0)
r = run_first_call("workspace", dev)
print(json.dumps(r))
""",
    )
    allocs = [fields(m) for m in r["log"] if m.startswith("newBufferWithLength")]
    # the 2 MiB intermediate comes from the workspace pool as one shared-storage MTLBuffer
    assert any(int(a["length"]) >= 512 * 1024 * 4 for a in allocs), allocs
    assert all(a["options"] == "0" for a in allocs)


def test_error_paths(metal_env, tmp_path):
    add = str(ARTIFACTS / "metal" / "add.so")
    script = f"""
import tvm, numpy as np
dev = tvm.metal(0)
m = tvm.runtime.load_module({add!r})
x = tvm.runtime.empty((1024,), "float32", dev)
try:
    m["add"](x, x, x); dev.sync()
    print("NO ERROR")
except (RuntimeError, ValueError) as e:
    print("ERR", type(e).__name__, str(e).replace(chr(10), " "))
"""

    def err(**extra: str) -> str:
        out = run_python(script, env={**metal_env, **extra}).stdout
        assert out.startswith("ERR"), out
        return out

    out = err(FAKE_METAL_MISSING_FUNCTION="add_kernel")
    assert "no kernel function named 'add_kernel'" in out and "re-export" in out
    out = err(FAKE_METAL_PIPELINE_ERROR="Compiler encountered an internal error")
    assert "Compiler encountered an internal error" in out and "add_kernel" in out
    out = err(FAKE_METAL_MAX_THREADS="32")
    assert "at most 32" in out and "max_threads_per_block" in out
    out = err(FAKE_METAL_GPU_ERROR="Caused GPU Address Fault Error")
    assert "Caused GPU Address Fault Error" in out and "failed on the GPU" in out
    metallib = str(ARTIFACTS / "metal" / "add_metallib.so")
    out = run_python(
        script.replace(add, metallib), env={**metal_env, "FAKE_METAL_LIBRARY_ERROR": "Invalid library file"}
    ).stdout
    assert "Invalid library file" in out and "metallib" in out

    # a damaged payload is rejected at load with the reason
    payload = embedded_module(ARTIFACTS / "metal" / "add.so", "metal").payload
    bad_fmt = b"\x03" + payload[1:]
    proc = run_python(
        f"""
import tvm
load = tvm.get_global_func("ffi.Module.load_from_bytes.metal")
for what, blob in [("truncated", {payload[: len(payload) // 2]!r}), ("fmt", {bad_fmt!r}),
                   ("empty", b"")]:
    try:
        load(blob); print(what, "NO ERROR")
    except (RuntimeError, ValueError) as e:
        print(what, "ERR", str(e).replace(chr(10), " "))
m = load({payload!r})
print("OK", "kernel void add_kernel" in m.inspect_source())
""",
        env=metal_env,
    )
    assert "NO ERROR" not in proc.stdout, proc.stdout
    assert proc.stdout.count("ERR") == 3 and "OK True" in proc.stdout


def test_no_libobjc_no_device_and_import_still_works(metal_env):
    for extra, wanted in [
        ({"TVM_METAL_OBJC_LIBRARY": "/nonexistent/libobjc.A.dylib"}, "Objective-C runtime"),
        ({"TVM_METAL_FRAMEWORK": "/nonexistent/Metal"}, "Metal.framework"),
        ({"FAKE_METAL_NO_DEVICE": "1"}, "no Metal device"),
    ]:
        proc = run_python(
            """
import tvm
dev = tvm.metal(0)
print("EXIST", dev.exist)
print("STATUS", tvm.get_global_func("runtime.DeviceDriverStatus")(8).replace(chr(10), " "))
try:
    tvm.runtime.empty((4,), "float32", dev)
    print("NO ERROR")
except (RuntimeError, ValueError) as e:
    print("ERR", str(e).replace(chr(10), " "))
print("CPU", tvm.runtime.tensor([1.0, 2.0], tvm.cpu(0)).numpy().sum())
""",
            env={**metal_env, **extra},
        )
        out = proc.stdout
        assert "EXIST False" in out and "NO ERROR" not in out and "CPU 3.0" in out, out
        status = out.split("STATUS", 1)[1].splitlines()[0]
        assert wanted in status, status
        assert "macOS" in status or "Mac" in status


def test_backend_diagnostics_show_the_metal_row(metal_env):
    out = run_diagnostics(metal_env)
    rows = [line for line in out.splitlines() if "metal" in line.lower()]
    assert rows, out
    assert any("Fake Apple M0 GPU 0" in line for line in out.splitlines()), out


def test_module_create_runs_the_kernels_it_is_given(metal_env):
    """ffi.Module.create.metal(smap, fmt, fmap): the function table and MSL of the `add`
    fixture, split apart, make a module that compiles and runs like the loaded one."""
    payload = embedded_module(ARTIFACTS / "metal" / "add.so", "metal").payload
    fmt, arg_types, code = metal_payload(ARTIFACTS / "metal" / "add.so")
    r = Reader(payload)
    r.str_()
    start = r.pos
    metal_payload_end = len(payload) - sum(16 + len(k) + len(v) for k, v in code.items()) - 8
    fmap = payload[start:metal_payload_end]
    r = run_child(
        metal_env,
        f"""
dev = tvm.metal(0)
create = tvm.get_global_func("ffi.Module.create.metal")
m = create({{k: v.encode("latin1") for k, v in {code!r}.items()}}, {fmt!r}, {fmap!r})
d = np.load(ART + "/metal/add.npz")
a, b = tvm.runtime.tensor(d["a"], dev), tvm.runtime.tensor(d["b"], dev)
c = tvm.runtime.empty((1024,), "float32", dev)
F.fake_metal_clear_log()
m["add_kernel"](a, b, c, 16, 64)
np.testing.assert_allclose(c.numpy(), d["c"], rtol=1e-6)
print(json.dumps({{"log": log(), "source": "kernel void add_kernel" in m.inspect_source()}}))
""",
    )
    assert r["source"] and list(arg_types) == ["add_kernel"]
    (d,) = [fields(m) for m in r["log"] if m.startswith("dispatchThreadgroups")]
    assert (d["kernel"], d["grid"], d["block"]) == ("add_kernel", "16,1,1", "64,1,1")
