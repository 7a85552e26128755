"""Errors raised deep in the OpenCL backend reach Python whole: the exact message users have
always seen, and the C++ frame that raised it (tvm-ffi backtraces, carried across the backend's
device-API table and through the core).  Runs on a real OpenCL driver (PoCL in CI)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi
from backend_testing.payloads import FLOAT32, HANDLE, INT32, Kernel
from backend_testing.tracebacks import cxx_frames
from ocl_support import opencl_device, write_opencl_payload

import tvm

BROKEN = """// Function: broken
__kernel void broken(__global float* restrict x) {
  x[get_global_id(0)] = undeclared_thing + 1.0f;
}
"""
GOOD = """// Function: scale
__kernel void scale(__global float* restrict x, float s, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = x[i] * s;
}
"""


@pytest.fixture()
def dev():
    return opencl_device(tvm)


def test_missing_device_error_crosses_the_device_table(dev):
    # Allocation goes core -> the backend's alloc_data table entry -> LazyDevices::Get, which
    # throws; the backend's GuardCall hands the error object to the core, which rethrows it.
    count = sum(1 for i in range(64) if tvm.opencl(i).exist)
    with pytest.raises(ValueError) as info:
        tvm.runtime.empty((4,), "float32", tvm.opencl(63))
    assert str(info.value) == (f"OpenCL device 63 does not exist; this machine has {count} OpenCL device(s)")
    assert ("device_info_util.h", "ThrowMissingDevice") in cxx_frames(info.value)
    assert info.value.__tvm_ffi_error__.kind == "ValueError"


def test_kernel_build_failure_names_the_backend_source_line(dev):
    load = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.opencl")
    mod = load(write_opencl_payload([Kernel("broken", [HANDLE])], BROKEN))
    x = tvm.runtime.tensor(np.ones(64, dtype="float32"), dev)
    with pytest.raises(RuntimeError) as info:
        mod["broken"](x, 1, 64)
    msg = str(info.value)
    assert msg.startswith("OpenCL kernel 'broken' failed to build")
    assert "CL_BUILD_PROGRAM_FAILURE" in msg and "undeclared_thing" in msg
    assert [f for f in cxx_frames(info.value) if f[0] == "opencl_kernel.cc"], cxx_frames(info.value)


def test_vendor_status_error_names_the_call_site(dev):
    # A failing OpenCL call goes through the shared status helper (backend/status_codes.h); the
    # frame Python shows is the backend line that made the call, not the helper.
    load = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.opencl")
    mod = load(write_opencl_payload([Kernel("scale", [HANDLE, FLOAT32, INT32])], GOOD))
    x = tvm.runtime.tensor(np.ones(8, dtype="float32"), dev)
    too_big = dev.max_threads_per_block * 2
    with pytest.raises(RuntimeError) as info:
        mod["scale"](x, 2.0, 8, 1, too_big)
    msg = str(info.value)
    assert msg.startswith("OpenCL error CL_INVALID_")
    assert "in clEnqueueNDRangeKernel of kernel 'scale'" in msg
    files = [f for f, _ in cxx_frames(info.value)]
    assert files and files[0] == "opencl_kernel.cc", files
