"""Failure paths: no ICD loader, no platform, corrupted module blobs, kernels that fail to build.
Each must be a clear Python exception (or Device.exist == False), never a crash."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi
from backend_testing.no_driver import driver_status, no_driver_script, run_without_driver
from backend_testing.payloads import (
    FLOAT32,
    HANDLE,
    INT32,
    Kernel,
    assert_huge_length_rejected,
    assert_loaded_add_kernel,
    assert_truncations_rejected,
    copy_with_length,
)
from ocl_support import code_offset, opencl_device, opencl_payload_of, write_opencl_payload

import tvm
from conftest import ARTIFACTS

ADD_SO = str(ARTIFACTS / "opencl" / "add.so")

# What a process without OpenCL must survive: import, attributes, the diagnostics, loading an
# artifact (lazy) and then using the device, which must raise with the reason.
NO_OPENCL_SCRIPT = no_driver_script("opencl", ADD_SO, ("empty", "detect"))


def run_without_opencl(env):
    return run_without_driver(NO_OPENCL_SCRIPT, env)


def test_library_that_is_not_an_icd_loader():
    # The rest of the missing-library cases: tests/conformance/test_missing_driver.py.
    out = run_without_opencl({"TVM_OPENCL_LIBRARY": "libm.so.6"})
    assert "needs an OpenCL 1.2 ICD loader" in out


def test_no_platform():
    out = run_without_opencl({"OCL_ICD_VENDORS": "/nonexistent"})
    status = driver_status(out)
    if "no OpenCL ICD loader" in status:
        pytest.skip("no ICD loader installed: the no-platform case cannot be shown")
    assert "found no platform" in status
    assert "OCL_ICD_VENDORS=/nonexistent" in status


# ------------------------------------------------------------------------ corrupted blobs

LOAD = "ffi.Module.load_from_bytes.opencl"


def load_payload(payload: bytes):
    return tvm_ffi.get_global_func(LOAD)(payload)


def test_real_payload_loads():
    mod = load_payload(opencl_payload_of(ADD_SO).payload)
    assert_loaded_add_kernel(mod, "opencl")
    assert "__kernel void add_kernel" in mod.inspect_source()


def test_truncated_payload():
    assert_truncations_rejected(
        load_payload, opencl_payload_of(ADD_SO).payload, "Corrupted opencl module blob"
    )


def test_huge_length_field():
    payload = opencl_payload_of(ADD_SO).payload
    assert_huge_length_rejected(load_payload, payload, code_offset(payload))


def test_corrupted_artifact_file(tmp_path):
    # Patch the source length inside a copy of a real artifact: loading fails cleanly.
    emb = opencl_payload_of(ADD_SO)
    bad = copy_with_length(ADD_SO, tmp_path, emb.offset + code_offset(emb.payload), lambda n: n + 1000)
    with pytest.raises(ValueError, match="Corrupted opencl module blob"):
        tvm.runtime.load_module(bad)


def test_binary_format_rejected():
    payload = write_opencl_payload([Kernel("k", [HANDLE])], "\x7fELF...", fmt="xclbin")
    with pytest.raises(ValueError, match="'xclbin'.*only OpenCL C source"):
        load_payload(payload)
    with pytest.raises(ValueError, match="unknown OpenCL module format 'spirv'"):
        load_payload(write_opencl_payload([Kernel("k", [HANDLE])], "x", fmt="spirv"))


def test_kernel_without_source_section():
    code = "// Function: other\n__kernel void other(__global float* a) {}\n"
    payload = write_opencl_payload([Kernel("k", [HANDLE]), Kernel("other", [HANDLE])], code)
    with pytest.raises(ValueError, match="kernel 'k' .*no '// Function: k' section"):
        load_payload(payload)


def test_unknown_launch_tag():
    code = "// Function: k\n__kernel void k(__global float* a) {}\n"
    mod = load_payload(write_opencl_payload([Kernel("k", [HANDLE], ["warpIdx.w"])], code))
    with pytest.raises(ValueError, match="unknown launch tag 'warpIdx.w'"):
        mod["k"]


# ------------------------------------------------------------------------ build failures

GOOD = """// Function: scale
__kernel void scale(__global float* restrict x, float s, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = x[i] * s;
}
"""

BROKEN = """// Function: broken
__kernel void broken(__global float* restrict x) {
  x[get_global_id(0)] = undeclared_thing + 1.0f;
}
"""


@pytest.fixture()
def dev():
    return opencl_device(tvm)


def two_kernel_module():
    return load_payload(
        write_opencl_payload(
            [Kernel("scale", [HANDLE, FLOAT32, INT32]), Kernel("broken", [HANDLE])],
            GOOD + BROKEN,
        )
    )


def test_kernel_that_fails_to_build(dev):
    mod = two_kernel_module()  # loading builds nothing
    x = tvm.runtime.tensor(np.ones(64, dtype="float32"), dev)
    for _ in range(2):  # the failure is reported again, not cached as a crash
        with pytest.raises(RuntimeError) as info:
            mod["broken"](x, 1, 64)
        msg = str(info.value)
        assert "OpenCL kernel 'broken' failed to build" in msg
        assert "CL_BUILD_PROGRAM_FAILURE" in msg
        assert "Build log:" in msg and "undeclared_thing" in msg
    # The module's other kernel is unaffected.
    mod["scale"](x, 2.5, 64, 1, 64)
    np.testing.assert_array_equal(x.numpy(), np.full(64, 2.5, dtype="float32"))


def test_direct_kernel_call_checks_arity_and_types(dev):
    mod = two_kernel_module()
    x = tvm.runtime.tensor(np.ones(8, dtype="float32"), dev)
    with pytest.raises(TypeError, match="expects 5 packed arguments"):
        mod["scale"](x, 2.0, 8)
    with pytest.raises(TypeError, match="integer"):
        mod["scale"](x, 2.0, "eight", 1, 8)


def test_invalid_work_group_size(dev):
    mod = two_kernel_module()
    x = tvm.runtime.tensor(np.ones(8, dtype="float32"), dev)
    too_big = dev.max_threads_per_block * 2
    with pytest.raises(RuntimeError, match="clEnqueueNDRangeKernel of kernel 'scale'.*local size"):
        mod["scale"](x, 2.0, 8, 1, too_big)
