"""The `cuda` module loader on real apache-tvm 0.27 artifacts and on crafted payloads, without
a GPU: function tables, formats, lazy loading and clear errors for broken blobs."""

from __future__ import annotations

import pytest
from backend_testing.payloads import (
    FLOAT32,
    HANDLE,
    INT32,
    Kernel,
    assert_huge_length_rejected,
    assert_truncations_rejected,
    copy_with_length,
)
from cuda_support import (
    cuda_payload_of,
    dtype_str,
    load_payload,
    parse_cuda_payload,
    write_cuda_payload,
)

import tvm
import tvm.backend.cuda as hook
from conftest import ARTIFACTS, MANIFEST

CUDA_CASES = [c for c in MANIFEST["cases"] if c["target"] == "cuda"]
ADD_SO = str(ARTIFACTS / "cuda" / "add.so")


@pytest.mark.parametrize("case_", CUDA_CASES, ids=[f"{c['kind_of_case']}-{c['name']}" for c in CUDA_CASES])
def test_real_artifact_function_table(case_):
    emb = cuda_payload_of(ARTIFACTS / case_["file"])
    parsed = parse_cuda_payload(emb.payload)
    mod = load_payload(emb.payload)
    assert mod.kind == "cuda"
    info = hook.describe_module(mod)
    assert info["fmt"] == parsed.fmt == "cuda"  # apache-tvm stored source: no toolkit at export
    assert set(case_["device_kernels"]) <= set(info["kernels"])
    for key, k in parsed.kernels.items():
        got = info["kernels"][key]
        assert got["name"] == k.name == key
        assert got["arg_types"] == [dtype_str(t) for t in k.arg_types]
        assert got["launch_param_tags"] == k.tags
        assert got["arg_extra_tags"] == k.extra_tags
        assert "blockIdx.x" in k.tags and "threadIdx.x" in k.tags
        assert mod.implements_function(key)
    assert 'extern "C" __global__' in mod.inspect_source()
    assert not mod.implements_function("nope")


def test_scalar_arguments_of_real_artifacts():
    k = hook.describe_module(load_payload(cuda_payload_of(ARTIFACTS / "cuda" / "multi_out.so").payload))
    assert k["kernels"]["multi_out_kernel"]["arg_types"] == ["handle"] * 4 + ["float32", "int32"]
    k = hook.describe_module(load_payload(cuda_payload_of(ARTIFACTS / "cuda" / "dyn_muladd.so").payload))
    assert k["kernels"]["dyn_muladd_kernel"]["arg_types"] == ["handle"] * 3 + ["int32"]
    k = hook.describe_module(load_payload(cuda_payload_of(ARTIFACTS / "cuda" / "workspace.so").payload))
    assert set(k["kernels"]) == {"workspace_kernel", "workspace_kernel_1"}


def test_whole_artifact_imports_the_cuda_module():
    mod = tvm.runtime.load_module(ADD_SO)
    (dev_mod,) = mod.imports
    assert dev_mod.kind == "cuda"
    assert dev_mod.implements_function("add_kernel")
    assert hook.describe_module(dev_mod)["kernels"]["add_kernel"]["arg_types"] == ["handle"] * 3


def test_describe_rejects_other_modules():
    with pytest.raises(TypeError, match="expected a module loaded by tvm-runtime-cuda"):
        hook.describe_module(tvm.runtime.load_module(ADD_SO))


@pytest.mark.parametrize("fmt", ["cubin", "ptx", "fatbin"])
def test_binary_formats_load_lazily(fmt):
    # Nothing is checked against the driver until a kernel runs.
    mod = load_payload(write_cuda_payload([Kernel("k", [HANDLE])], b"\x7fELF not really", fmt=fmt))
    assert hook.describe_module(mod)["fmt"] == fmt
    assert mod.implements_function("k")


def test_arity_is_checked_before_the_driver():
    mod = load_payload(write_cuda_payload([Kernel("k", [HANDLE, FLOAT32, INT32])], "// src"))
    with pytest.raises(TypeError, match="expects 5 packed arguments"):
        mod["k"](None, 1.0, 3)


# ------------------------------------------------------------------------ corrupted blobs


def test_truncated_payload():
    assert_truncations_rejected(load_payload, cuda_payload_of(ADD_SO).payload, "Corrupted cuda module blob")


def test_huge_length_field():
    payload = cuda_payload_of(ADD_SO).payload
    assert_huge_length_rejected(load_payload, payload, parse_cuda_payload(payload).code_offset)


def test_trailing_bytes():
    with pytest.raises(ValueError, match="unexpected trailing bytes"):
        load_payload(cuda_payload_of(ADD_SO).payload + b"\0")


def test_corrupted_artifact_file(tmp_path):
    # Patch the code length inside a copy of a real artifact: loading fails cleanly.
    emb = cuda_payload_of(ADD_SO)
    at = emb.offset + parse_cuda_payload(emb.payload).code_offset
    bad = copy_with_length(ADD_SO, tmp_path, at, lambda n: n + 1000)
    with pytest.raises(ValueError, match="Corrupted cuda module blob"):
        tvm.runtime.load_module(bad)


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown CUDA module format 'spirv'"):
        load_payload(write_cuda_payload([Kernel("k", [HANDLE])], "x", fmt="spirv"))


def test_empty_code():
    with pytest.raises(ValueError, match="holds no code"):
        load_payload(write_cuda_payload([Kernel("k", [HANDLE])], ""))


def test_extra_tags_must_match_arguments():
    payload = write_cuda_payload([Kernel("k", [HANDLE, HANDLE], extra_tags=[0])], "x")
    with pytest.raises(ValueError, match="1 extra tags for 2 arguments"):
        load_payload(payload)


def test_unknown_launch_tag():
    mod = load_payload(write_cuda_payload([Kernel("k", [HANDLE], ["warpIdx.w"])], "x"))
    with pytest.raises(ValueError, match="unknown launch tag 'warpIdx.w'"):
        mod["k"]


def test_unsupported_scalar_type():
    mod = load_payload(write_cuda_payload([Kernel("k", [HANDLE, (2, 16, 1)])], "x"))
    with pytest.raises(TypeError, match="argument 1 has unsupported type"):
        mod["k"]
