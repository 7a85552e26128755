"""TMA tensor maps: ``runtime.cuTensorMapEncodeTiled`` (src/backends/cuda/cuda_tensor_map.cc).

tests/artifacts/cuda_tma/tma_scale.so is a Hopper kernel compiled by apache-tvm 0.27 with its TMA
tile primitive: its host code encodes a CUtensorMap with the global on a 128-byte stack buffer and
passes that buffer to the kernel by value.  On the fake driver (CI) the encode must reach the
driver with the arguments the compiler lowered (manifest.json) and the launch must receive the
very map the driver wrote; bad arguments are ValueErrors naming the argument, raised before any
driver is touched; a driver without the entry point (older than CUDA 12) is a clear error.  On a
Hopper GPU the fixture must match numpy.
"""

from __future__ import annotations

import ctypes
import json
import textwrap

import fakes
import numpy as np
import pytest
import tvm_ffi
from cuda_support import (
    HERE,
    cuda_device,
    has_nvrtc,
    nvrtc_or_skip,
    parse_log,
)

import tvm
from conftest import ARTIFACTS, REPO, child_result, run_python

FIXTURE = ARTIFACTS / "cuda_tma"
MANIFEST = json.loads((FIXTURE / "manifest.json").read_text())
ENCODE = MANIFEST["encode"]
GLOBAL = "runtime.cuTensorMapEncodeTiled"
CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7
FAKE_MAP_MAGIC = "50414d54454b4146"  # word 0 of the fake driver's maps ("FAKETMAP")

PRELUDE = f"""
import sys
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
from children.on_fake_cuda import *
encode = tvm_ffi.get_global_func({GLOBAL!r})
tensor_map = (ctypes.c_uint64 * 24)()  # 192 bytes: room for a 64-byte aligned 128-byte map
map_ptr = (ctypes.addressof(tensor_map) + 63) // 64 * 64
def map_bytes():
    return ctypes.string_at(map_ptr, 128)
"""


def run_fake(fake: str, body: str, **env: str) -> dict:
    proc = run_python(PRELUDE + textwrap.dedent(body), env={"TVM_CUDA_DRIVER_LIBRARY": fake, **env})
    return child_result(proc)


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(fakes.build("cuda"))


@pytest.fixture(scope="module")
def fake_without_tma():
    """The fake driver built without cuTensorMapEncodeTiled, as a pre-CUDA-12 libcuda."""
    return str(fakes.build("cuda", defines=("FAKE_CUDA_NO_TENSOR_MAP",), filename="libcuda_old.so"))


# ------------------------------------------------------------------ the fixture on the fake driver

FIXTURE_SCRIPT = f"""
mod = tvm.runtime.load_module({str(FIXTURE / MANIFEST["file"])!r})
data = np.load({str(FIXTURE / MANIFEST["npz"])!r})
dev = tvm.cuda(0)
a = tvm.runtime.tensor(data["A"], dev)
b = tvm.runtime.empty(data["B"].shape, "float32", dev)
fake.fake_cuda_expect_params(b"{MANIFEST["kernel"]}", 2)
fake.clear_log()
try:
    mod["{MANIFEST["function"]}"](a, b)
    mod["{MANIFEST["function"]}"](a, b)
except Exception as err:
    result(error=f"{{type(err).__name__}}: {{err}}")
    raise SystemExit(0)
result(log=log(), a=a.data_ptr(), b=b.data_ptr())
"""


def test_fixture_is_what_apache_tvm_made():
    assert MANIFEST["tvm_version"].startswith("0.27")
    assert MANIFEST["target"] == {"kind": "cuda", "arch": "sm_90a"}
    assert "const __grid_constant__ CUtensorMap" in MANIFEST["kernel_declaration"]
    # The host code calls the global by name (the packed-call string of the llvm host module).
    assert GLOBAL.encode() in (FIXTURE / MANIFEST["file"]).read_bytes()
    assert tvm_ffi.get_global_func(GLOBAL, allow_missing=True) is not None


def test_fixture_encodes_and_launches_on_the_fake_driver(fake):
    r = run_fake(fake, FIXTURE_SCRIPT, FAKE_CUDA_CC="9.0")
    if "error" in r:
        if has_nvrtc():
            pytest.fail(r["error"])
        assert "NVRTC" in r["error"]
        pytest.skip(f"NVRTC not installed; the fixture holds CUDA source: {r['error'][:200]}")
    encodes = parse_log(r["log"], "tensor_map_encode")
    launches = parse_log(r["log"], "launch")
    received = parse_log(r["log"], "launch_tensor_map")
    assert len(encodes) == len(launches) == len(received) == 2  # one encode per call

    rank = ENCODE["rank"]
    assert ENCODE["dtype"] == "float32" and rank == 2
    for enc in encodes:
        assert int(enc["dtype"]) == CU_TENSOR_MAP_DATA_TYPE_FLOAT32
        assert int(enc["rank"]) == rank
        assert int(enc["address"], 16) == r["a"]  # the map describes A in device memory
        assert enc["dims"] == ",".join(map(str, ENCODE["global_dims"]))
        assert enc["strides"] == ",".join(map(str, ENCODE["global_strides"]))
        assert enc["box"] == ",".join(map(str, ENCODE["box_dims"]))
        assert enc["element_strides"] == ",".join(map(str, ENCODE["element_strides"]))
        assert int(enc["interleave"]) == ENCODE["interleave"]
        assert int(enc["swizzle"]) == ENCODE["swizzle"]
        assert int(enc["l2_promotion"]) == ENCODE["l2_promotion"]
        assert int(enc["oob_fill"]) == ENCODE["oob_fill"]
    # The compiler's view of the same tensor: innermost dimension first, strides in bytes.
    rows, cols = MANIFEST["shape"]
    assert ENCODE["global_dims"] == [cols, rows] and ENCODE["global_strides"] == [cols * 4]

    for enc, launch, got in zip(encodes, launches, received):
        assert launch["kernel"] == MANIFEST["kernel"]
        assert launch["grid"] == ",".join(map(str, MANIFEST["grid"]))
        assert launch["block"] == ",".join(map(str, MANIFEST["block"]))
        assert int(launch["smem"]) == MANIFEST["dyn_smem_bytes"]
        params = launch["params"].split(",")
        assert params[0] == FAKE_MAP_MAGIC  # the map itself, not a pointer to it
        assert int(params[1], 16) == r["b"]
        # All 128 bytes the driver wrote arrived as the kernel's first parameter.
        assert got["param"] == "0" and got["intact"] == "1" and got["fnv"] == enc["fnv"]
    assert encodes[0]["fnv"] != encodes[1]["fnv"]  # each call encodes afresh (a counter word)


def test_fixture_source_compiles_with_nvrtc():
    import tvm.backend.cuda as hook

    nvrtc_or_skip()
    mod = tvm.runtime.load_module(str(FIXTURE / MANIFEST["file"]))
    (cuda,) = [m for m in mod.imports if m.kind == "cuda"]
    # sm_90a, as the compiler targeted it and as the runtime compiles it on a Hopper GPU.
    out = hook.compile_source(cuda.inspect_source(), "sm_90a", use_cache=False)
    assert out["format"] == "cubin" and out["image"][:4] == b"\x7fELF"


# ------------------------------------------------------------------ calling the global directly

VALID = [None, "float32", 2, None, 96, 64, 384, 32, 32, 1, 1, 0, 0, 2, 0]


def test_direct_encode_fills_the_callers_map(fake):
    r = run_fake(
        fake,
        """
        a = np.zeros((64, 96), "float32")
        addr = a.ctypes.data
        assert addr % 16 == 0
        encode(ctypes.c_void_p(map_ptr), "float32", 2, ctypes.c_void_p(addr), 96, 64, 384, 32, 32,
               1, 1, 0, 0, 2, 0)
        first = map_bytes().hex()
        # dtype as a DataType, plus the optional force_cu_dtype (11: TFLOAT32 for a tf32 MMA).
        encode(ctypes.c_void_p(map_ptr), tvm_ffi.dtype("float32"), 2, ctypes.c_void_p(addr), 96,
               64, 384, 32, 32, 1, 1, 0, 3, 1, 1, 11)
        result(log=log(), first=first, second=map_bytes().hex(), addr=addr)
        """,
    )
    first, second = parse_log(r["log"], "tensor_map_encode")
    assert r["first"].startswith(bytes.fromhex(FAKE_MAP_MAGIC)[::-1].hex())
    assert (first["dtype"], first["rank"], first["dims"], first["strides"]) == ("7", "2", "96,64", "384")
    assert (first["box"], first["element_strides"]) == ("32,32", "1,1")
    assert int(first["address"], 16) == r["addr"]
    second_modes = (second["dtype"], second["swizzle"], second["l2_promotion"], second["oob_fill"])
    assert second_modes == ("11", "3", "1", "1")
    assert r["first"] != r["second"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({2: 0}, "rank must be 1..5"),
        ({2: 6}, "rank must be 1..5"),
        ({1: "float32x4"}, "dtype must be a scalar type"),
        ({1: "int16"}, "dtype int16 has no TMA element type"),
        ({1: 7}, r"dtype \(argument 1\) must be a data type"),
        ({0: "misaligned map"}, "tensor_map must be 64-byte aligned"),
        ({0: "null"}, r"tensor_map \(argument 0\) must be a non-null pointer"),
        ({3: "misaligned"}, "global_address must be 16-byte aligned"),
        ({4: 0}, r"globalDim\[0\] must be in 1..2\^32, got 0"),
        ({5: 2**32 + 1}, r"globalDim\[1\] must be in 1..2\^32"),
        ({5: "64"}, r"globalDim\[1\] \(argument 5\) must be an integer"),
        ({6: 100}, r"globalStrides\[0\] \(bytes\) must be a multiple of 16 and less than 2\^40, got 100"),
        ({6: 2**40}, r"globalStrides\[0\] \(bytes\) must be a multiple of 16 and less than 2\^40"),
        ({7: 257}, r"boxDim\[0\] must be in 1..256, got 257"),
        ({8: 0}, r"boxDim\[1\] must be in 1..256"),
        ({10: 9}, r"elementStrides\[1\] must be in 1..8, got 9"),
        ({9: 2}, r"elementStrides\[0\] must be 1"),
        ({11: 3}, "interleave must be one of"),
        ({12: 7}, "swizzle must be one of"),
        ({13: 4}, "l2Promotion must be one of"),
        ({14: 2}, "oobFill must be one of"),
        ({11: 1}, r"interleave 1 needs rank >= 3, got rank 2"),
        ({7: 2}, r"boxDim\[0\] \* element size must be a multiple of 16 bytes, got 2 \* 4 = 8"),
        ({12: 1}, r"swizzle 1 \(32B\) needs boxDim\[0\] \* element size <= 32 bytes, got 128"),
        ({12: 2}, r"swizzle 2 \(64B\) needs boxDim\[0\] \* element size <= 64 bytes, got 128"),
        ({1: "int32", 14: 1}, "oobFill 1 .* needs a floating-point dtype"),
        ({15: 11, 1: "float16"}, "force_cu_dtype=11 .* needs a float32 dtype"),
        ({15: 7}, "force_cu_dtype must be -1"),
        ({16: 0}, "rank 2 needs 15 arguments"),
    ],
)
def test_invalid_arguments_are_value_errors_naming_the_argument(change, message):
    """Checked on the host before the driver is opened: no driver or GPU is needed."""
    encode = tvm_ffi.get_global_func(GLOBAL)
    storage = (ctypes.c_uint64 * 24)()
    map_ptr = (ctypes.addressof(storage) + 63) // 64 * 64
    tensor = np.zeros(64 * 96 + 16, "float32")
    addr = (tensor.ctypes.data + 15) // 16 * 16
    args = list(VALID)
    args[0], args[3] = ctypes.c_void_p(map_ptr), ctypes.c_void_p(addr)
    for index, value in change.items():
        while len(args) <= index:
            args.append(-1)
        if value == "misaligned map":
            value = ctypes.c_void_p(map_ptr + 8)
        elif value == "misaligned":
            value = ctypes.c_void_p(addr + 4)
        elif value == "null":
            value = None
        args[index] = value
    with pytest.raises(ValueError, match=f"{GLOBAL}: {message}"):
        encode(*args)


# One valid 2-D encode through the driver; its error (if any) and whether the devices still work.
ENCODE_ONCE = """
a = np.zeros((64, 96), "float32")
try:
    encode(ctypes.c_void_p(map_ptr), "float32", 2, ctypes.c_void_p(a.ctypes.data), 96, 64,
           384, 32, 32, 1, 1, 0, 0, 2, 0)
    result(error=None)
except Exception as err:
    result(kind=type(err).__name__, error=str(err), devices=tvm.cuda(0).exist)
"""


def test_driver_error_names_the_encoded_arguments(fake):
    r = run_fake(fake, ENCODE_ONCE, FAKE_CUDA_TENSOR_MAP_ERROR="1")
    assert r["kind"] == "RuntimeError"
    assert "cuTensorMapEncodeTiled(dtype=float32 (CUtensorMapDataType 7), rank=2" in r["error"]
    assert "globalDim=[96,64], globalStrides=[384], boxDim=[32,32]" in r["error"]
    assert "CUDA_ERROR_INVALID_VALUE" in r["error"]


def test_driver_without_the_entry_point_needs_cuda_12(fake_without_tma):
    r = run_fake(fake_without_tma, ENCODE_ONCE, FAKE_CUDA_DRIVER_VERSION="11080")
    assert r["devices"] is True  # the backend itself still works on that driver
    assert r["kind"] == "RuntimeError"
    assert f"{GLOBAL} needs a CUDA 12+ driver" in r["error"]
    assert "CUDA 11.8" in r["error"] and "does not export cuTensorMapEncodeTiled" in r["error"]


# ------------------------------------------------------------------ on a Hopper GPU


def test_fixture_matches_numpy_on_hopper():
    dev = cuda_device(tvm)
    sm = int(str(dev.compute_version).replace(".", ""))
    if sm < 90:
        pytest.skip(f"this GPU allows only sm_{sm}; the TMA fixture needs sm_90 (Hopper) or newer")
    nvrtc_or_skip(int(dev.driver_version) // 1000)
    mod = tvm.runtime.load_module(str(FIXTURE / MANIFEST["file"]))
    data = np.load(FIXTURE / MANIFEST["npz"])
    a = tvm.runtime.tensor(data["A"], dev)
    b = tvm.runtime.empty(data["B"].shape, "float32", dev)
    for _ in range(3):  # each call encodes its map afresh on the host stack
        mod[MANIFEST["function"]](a, b)
        dev.sync()
        np.testing.assert_allclose(b.numpy(), data["B"], rtol=0, atol=0)
