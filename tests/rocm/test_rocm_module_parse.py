"""The apache-tvm 0.27 ROCm artifacts (tests/artifacts/rocm, generate_rocm.py) load without a
HIP runtime or GPU: the `hip` payload is parsed, its function table matches what the artifact
holds, its code object is recognised as what it was built for, and malformed payloads are
refused with a clear error.  Loading never touches HIP (that happens on first launch).
"""

from __future__ import annotations

import struct

import pytest
import tvm_ffi
from backend_testing.payloads import (
    FLOAT32,
    HANDLE,
    INT32,
    Kernel,
    embedded_module,
    write_function_table_payload,
)
from rocm_support import ROCM_MANIFEST, artifact, hip_payload_of, rocm_case

import tvm
import tvm.backend.rocm as hook
from conftest import ARTIFACTS

KERNEL_CASES = [c for c in ROCM_MANIFEST["cases"] if c["kind_of_case"] == "kernel"]


def hip_module(mod):
    (dev_mod,) = [m for m in mod.imports if m.kind == "hip"]
    return dev_mod


def load_payload(payload: bytes, kind: str = "hip"):
    return tvm_ffi.get_global_func(f"ffi.Module.load_from_bytes.{kind}")(payload)


@pytest.mark.parametrize("case_", KERNEL_CASES, ids=[c["name"] for c in KERNEL_CASES])
def test_kernel_artifact_loads_and_describes_its_kernels(case_):
    path = ARTIFACTS / case_["file"]
    payload = hip_payload_of(path)
    info = hook.describe_module(hip_module(tvm.runtime.load_module(str(path))))
    assert info["fmt"] == payload.fmt == "hsaco"
    assert sorted(info["kernels"]) == sorted(payload.kernels) == sorted(case_["device_kernels"])
    for key, k in payload.kernels.items():
        got = info["kernels"][key]
        assert got["launch_param_tags"] == k.tags
        assert len(got["arg_types"]) == len(k.arg_types)
    code = info["code_object"]
    assert code["processor"] == case_["arch"]
    assert code["bytes"] == len(payload.code)
    assert code["code_object_version"] >= 4
    # LLVM leaves xnack "any" unless the target asks (runs in either mode); RDNA has no xnack.
    assert code["target_id"] == case_["arch"]
    rdna = case_["arch"].startswith("gfx1")  # gfx10xx/gfx11xx: no xnack feature at all
    assert code["xnack"] == ("" if rdna else "any")


def test_relax_model_loads_with_its_hip_module():
    path = artifact("mlp")
    mod = tvm.runtime.load_module(path)
    assert mod.kind == "relax.VMExecutable"
    found = [m for m in _walk(mod) if m.kind == "hip"]
    assert len(found) == 1
    info = hook.describe_module(found[0])
    assert info["code_object"]["processor"] == "gfx90a"
    assert len(info["kernels"]) >= 2  # matmul+bias+relu, matmul+bias (fused as TVM chose)


def _walk(mod):
    out = [mod]
    for m in mod.imports:
        out += _walk(m)
    return out


def test_code_object_description_without_a_driver():
    mi200 = hook.describe_code_object(hip_payload_of(artifact("add")).code)
    rdna3 = hook.describe_code_object(hip_payload_of(artifact("add_gfx1100")).code)
    assert mi200["processor"] == "gfx90a" and mi200["sramecc"] == "any"
    assert rdna3["processor"] == "gfx1100" and rdna3["sramecc"] == ""  # RDNA has no SRAM ECC


def test_kernel_argument_types_match_the_computation():
    # dyn_muladd takes n as an int32; multi_out a float32 and an int32 scalar.
    dyn = hip_payload_of(artifact("dyn_muladd")).kernels["dyn_muladd_kernel"]
    assert dyn.arg_types.count(HANDLE) == 3 and dyn.arg_types.count(INT32) == 1
    multi = hip_payload_of(artifact("multi_out")).kernels["multi_out_kernel"]
    assert multi.arg_types.count(FLOAT32) == 1 and multi.arg_types.count(INT32) == 1
    assert rocm_case("matmul")["device_kernels"] == ["matmul_kernel"]


def embedded_payload(name: str) -> bytes:
    return embedded_module(artifact(name), "hip").payload


def test_both_loader_names_are_served():
    # apache-tvm writes kind "hip"; its runtime also registers the payload as "hsaco".
    for kind in ("hip", "hsaco"):
        mod = load_payload(embedded_payload("add"), kind)
        assert mod.kind == "hip"
        assert list(hook.describe_module(mod)["kernels"]) == ["add_kernel"]


def _code() -> bytes:
    return hip_payload_of(artifact("add")).code


def _kernel() -> Kernel:
    return Kernel("add_kernel", [HANDLE, HANDLE, HANDLE])


def test_unknown_format_is_rejected():
    with pytest.raises(ValueError, match="unknown ROCm module format 'cubin'"):
        load_payload(write_function_table_payload([_kernel()], _code(), "cubin"))


def test_code_that_is_not_an_amdgpu_code_object_is_rejected():
    with pytest.raises(ValueError, match="not an AMDGPU code object \\(no ELF header\\)"):
        load_payload(write_function_table_payload([_kernel()], b"not elf" * 20, "hsaco"))
    x86 = bytearray(_code())
    struct.pack_into("<H", x86, 18, 62)  # EM_X86_64
    with pytest.raises(ValueError, match="ELF machine 62, not EM_AMDGPU"):
        load_payload(write_function_table_payload([_kernel()], bytes(x86), "hsaco"))


def test_truncated_payload_is_rejected():
    payload = embedded_payload("add")
    with pytest.raises(ValueError):
        load_payload(payload[: len(payload) // 2])
    with pytest.raises(ValueError, match="holds no code"):
        load_payload(write_function_table_payload([_kernel()], b"", "hsaco"))
