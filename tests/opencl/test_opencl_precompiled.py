"""apache-tvm's `opencl.GetPreCompiledPrograms` / `opencl.SetPreCompiledPrograms` on OpenCL modules:
upstream's names and byte format (u64 count, then per kernel a u64-length name and a u64-length
program binary), looked up the way MLC-LLM does (through the host library's imports), and the round
trip that apps rely on: get in one process, set in another, run."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import tvm_ffi
from backend_testing.payloads import parse_function_table_payload
from ocl_support import opencl_device, opencl_payload_of

import tvm
from conftest import ARTIFACTS, run_python

MODEL = ARTIFACTS / "relax" / "mlp_opencl.so"


@pytest.fixture(scope="module")
def dev():
    return opencl_device(tvm)


def decode(blob: bytes) -> list[tuple[str, bytes]]:
    """apache-tvm 0.27's serializer: u64 count, then (u64 length + bytes) name and binary."""
    (count,), at, out = struct.unpack_from("<Q", blob), 8, []
    for _ in range(count):
        fields = []
        for _ in range(2):
            (n,) = struct.unpack_from("<Q", blob, at)
            fields.append(blob[at + 8 : at + 8 + n])
            at += 8 + n
        out.append((fields[0].decode(), fields[1]))
    assert at == len(blob)
    return out


def encode(programs: list[tuple[str, bytes]]) -> bytes:
    out = struct.pack("<Q", len(programs))
    for name, binary in programs:
        out += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<Q", len(binary)) + binary
    return out


def kernel_names(so) -> set[str]:
    payload = opencl_payload_of(so).payload
    return set(parse_function_table_payload(payload).kernels)


GET = """
import tvm
lib = tvm.runtime.load_module({model!r})
# What MLC-LLM does: ask the host library, which finds the function in its OpenCL import.
get = lib.get_function("opencl.GetPreCompiledPrograms", query_imports=True)
open({out!r}, "wb").write(get(True))
"""

SET_AND_RUN = """
import json, numpy as np, tvm
lib = tvm.runtime.load_module({model!r})
lib.get_function("opencl.SetPreCompiledPrograms", query_imports=True)(open({blob!r}, "rb").read())
dev = tvm.opencl(0)
data = np.load({npz!r})
vm = tvm.runtime.vm.VirtualMachine(lib, dev)
out = vm["main"](*[tvm.runtime.tensor(data[k], dev) for k in {inputs!r}])
ok = bool(np.allclose(out.numpy(), data[{output!r}], rtol=1e-4, atol=1e-4))
info = tvm.get_global_func("tvm_runtime.opencl.cache_info")()
print("RESULT", json.dumps({{"ok": ok, "misses": int(info["misses"]), "hits": int(info["hits"])}}))
"""


def test_get_in_one_process_set_in_another(dev, tmp_path):
    from conftest import MANIFEST

    (case,) = [c for c in MANIFEST["cases"] if c["target"] == "opencl" and c["name"] == "mlp"]
    call = case["calls"][0]
    blob_path = tmp_path / "programs.bin"
    run_python(GET.format(model=str(MODEL), out=str(blob_path)))
    programs = decode(blob_path.read_bytes())
    assert {name for name, _ in programs} == kernel_names(MODEL)
    assert all(len(binary) > 1000 for _, binary in programs)

    # The second process has neither our cache nor PoCL's to fall back on: only the blob.
    env = {"TVM_OPENCL_CACHE_DISABLE": "1", "POCL_CACHE_DIR": str(tmp_path / "empty-pocl-cache")}
    code = SET_AND_RUN.format(
        model=str(MODEL),
        blob=str(blob_path),
        npz=str(ARTIFACTS / call["npz"]),
        inputs=[a["key"] for a in call["args"]],
        output=call["outputs"][0],
    )
    out = run_python(code, env=env).stdout
    assert 'RESULT {"ok": true, "misses": 0, "hits": 0}' in out


def test_without_argument_it_returns_str_as_upstream(dev):
    # apache-tvm returns the bytes as a str, which C++ callers cast to; the test kernel's binary
    # is not UTF-8, so tvm-ffi's conversion to a Python str fails exactly as it does upstream.
    mod = tvm.runtime.load_module(str(ARTIFACTS / "opencl" / "add.so")).imports[0]
    assert isinstance(mod["opencl.GetPreCompiledPrograms"](True), bytes)
    with pytest.raises(UnicodeDecodeError):
        mod["opencl.GetPreCompiledPrograms"]()


def test_set_keeps_kernels_already_built_and_ignores_unknown_names(dev):
    mod = tvm.runtime.load_module(str(ARTIFACTS / "opencl" / "add.so"))
    device_module = mod.imports[0]
    blob = device_module["opencl.GetPreCompiledPrograms"](True)
    ((name, binary),) = decode(blob)
    device_module["opencl.SetPreCompiledPrograms"](encode([("no_such_kernel", b"junk"), (name, b"junk")]))
    a = np.arange(1024, dtype="float32")
    args = [
        tvm.runtime.tensor(a, dev),
        tvm.runtime.tensor(a, dev),
        tvm.runtime.empty((1024,), "float32", dev),
    ]
    mod["add"](*args)
    np.testing.assert_allclose(args[2].numpy(), 2 * a)


@pytest.mark.parametrize(
    "blob, message",
    [
        (b"\x01", r"truncated kernel count \(needs 8 bytes, 1 left\)"),
        (struct.pack("<Q", 1 << 40), r"a kernel count of 1099511627776 does not fit"),
        (struct.pack("<QQ", 1, 100) + b"x" * 8, r"truncated kernel name \(needs 100 bytes, 8 left\)"),
        (encode([]) + b"tail", r"4 trailing bytes"),
    ],
)
def test_set_rejects_malformed_bytes(dev, blob, message):
    device_module = tvm.runtime.load_module(str(ARTIFACTS / "opencl" / "add.so")).imports[0]
    with pytest.raises(ValueError, match="opencl.SetPreCompiledPrograms: " + message):
        device_module["opencl.SetPreCompiledPrograms"](blob)


def test_binary_the_driver_rejects_is_a_clear_error(dev):
    mod = tvm.runtime.load_module(str(ARTIFACTS / "opencl" / "row_sum.so")).imports[0]
    (name,) = kernel_names(ARTIFACTS / "opencl" / "row_sum.so")
    with pytest.raises(RuntimeError, match=f"the binary of kernel '{name}' does not load on device"):
        mod["opencl.SetPreCompiledPrograms"](encode([(name, b"\x7fELF not a program binary")]))


def test_only_opencl_modules_answer(dev):
    mod = tvm.runtime.load_module(str(ARTIFACTS / "cpu" / "add.so"))
    with pytest.raises(AttributeError):
        mod.get_function("opencl.GetPreCompiledPrograms", query_imports=True)
    assert tvm_ffi.Module is not None
